"""Proposition H.10 (remember): ``[x; r; 0] ↦ [f ⊙ (h ⊛ x); r; 0]`` in O(1) layers, proved.

Constant (docs/theory.md §4 **Choice**): at most 2 layers; 1 when ``h`` has taps at lag 0 only (the
Theorem H.21 use, ``h = e_0``) or when ``r`` is empty; the two-layer form uses ``a + b`` zero rows
of workspace (``N' = 2(a + b)``). Instances use symbolic ``h`` and symbolic constant ``f`` (so they
hold for all filters and all constants) or ``f`` delivered from the state through the projection
branch (``ChannelF``), and also the channel-block form the dense compiler uses.
"""

from __future__ import annotations

from symverify.gadgets.remember import REMEMBER_MAX_LAYERS, ChannelF, ConstF, remember_channels, remember_rows
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import sym
from symverify.parametric import library as forall_library
from symverify.scripts.instances import forall_instance, fragment_instance
from symverify.scripts.protocol import ProofResult, script_main

TITLE = "Proposition H.10 (remember): f ⊙ (h ⊛ x) on one block, r kept, in ≤ 2 layers"
COST = 0.7  # CPU seconds of the full tier, measured (orders and splits a parallel run)



def _e0(rows: int, cols: int) -> Grid:
    return Grid.from_cells(rows, cols, {(0, t): 1 for t in range(cols)})


def run(quick: bool = False) -> ProofResult:
    res = ProofResult("prop_h10_remember", TITLE)
    blocks = [(1, 1), (2, 1)] if quick else [(1, 1), (2, 1), (2, 2), (3, 2)]
    for a, b in blocks:
        n1 = a + b + 1
        n2 = 2 * (a + b)
        cases = [
            (f"rows a={a} b={b}: h=e_0, f const (all F)", remember_rows(n1, 1, a, b, _e0(a, 1), ConstF(Grid.symbolic("F", a, 1))), {"layers": 1}),
            (f"rows a={a} b={b}: H.21 use x=v2, f=v1 (channel), h=e_0", remember_rows(n1, 2, a, b, _e0(a, 1), ChannelF((1,))), {"layers": 1}),
            (f"rows a={a} b={b}: h=g·e_0 (all g), f channel", remember_rows(n1, 2, a, b, Grid.from_cells(a, 1, {(0, 0): sym("g")}), ChannelF((1,))), {"layers": 1}),
            (f"rows a={a} b={b}: all h, f const (all F)", remember_rows(n2, 1, a, b, Grid.symbolic("h", a, 1), ConstF(Grid.symbolic("F", a, 1))), {"inner_n": n2}),
            (f"rows a={a} b={b}: all h, f channel, 2 channels", remember_rows(n2, 4, a, b, Grid.symbolic("h", a, 2), ChannelF((3, 0)), cols=(1, 2)), {"inner_n": n2}),
            (f"rows a={a} b=0: all h, f channel", remember_rows(a + 1, 2, a, 0, Grid.symbolic("h", a, 1), ChannelF((1,))), {"layers": 1}),
            (f"channels a={a} b={b}: H.21 multiply [v2|v3|v1] ↦ [v1⊙v2|v3|0]", remember_channels(1, 2 * a + b, a, b, _e0(1, a), ChannelF(tuple(range(a + b, 2 * a + b)))), {"layers": 1}),
            (f"channels a={a} b={b}: all h over 3 rows, f const", remember_channels(3, a + b, a, b, Grid.symbolic("h", 3, a), ConstF(Grid.symbolic("F", 3, a)), m=3), {"layers": 1}),
        ]
        for name, frag, extra in cases:
            res.instances.append(fragment_instance(frag, name, {"layers": REMEMBER_MAX_LAYERS, **extra}))
    res.instances.append(forall_instance(forall_library.remember_rows()))  # one-layer rows form, every size
    # the two-layer rows form and the channels form, every size, every filter with two taps at any lags
    res.instances.append(forall_instance(forall_library.remember_rows_two()))
    res.instances.append(forall_instance(forall_library.remember_channels()))
    return res


if __name__ == "__main__":
    raise SystemExit(script_main(run))

"""The BaseConv primitives of docs/appendix-h.md §2.3 (``lmm:primitives``, ``prim-shift``, ``prim-add``), proved.

Each primitive is a fragment with a clean interface; it is proved for symbolic inputs (the whole
state is variables) and, where the statement is "for all W / h / B / R", with every such weight a
distinct symbol. Two independent exact checks per instance: the stage certificate (compositional,
including "every other cell is 0") and the expanded output polynomials.
Errata followed: shift_down uses ``X^s``; shift_up is the one-layer cyclic construction.
"""

from __future__ import annotations

from symverify.gadgets.layout import channels_to_rows, rows_to_channels
from symverify.gadgets.primitives import (
    affine_map,
    constant,
    convolution,
    cyclic_shift,
    fixed_gate,
    identity,
    linear_map,
    move_cols,
    move_rows,
    running_add,
    shift_down,
    shift_up,
)
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import sym
from symverify.parametric import library as forall_library
from symverify.scripts.instances import forall_instance, fragment_instance
from symverify.scripts.protocol import ProofResult, script_main

TITLE = "BaseConv primitives (docs/appendix-h.md §2.3: lmm:primitives, prim-shift, prim-add)"
COST = 0.8  # CPU seconds of the full tier, measured (orders and splits a parallel run)



def _row0_bias(rows: int, cols: int) -> Grid:
    return Grid.from_cells(rows, cols, {(0, j): sym(f"c[{j}]") for j in range(cols)})


def run(quick: bool = False) -> ProofResult:
    res = ProofResult("primitives", TITLE)
    sizes = [(3, 2)] if quick else [(2, 1), (3, 2), (4, 3)]
    for nn, dd in sizes:
        tag = f"{nn}x{dd}"
        frags = [
            (f"linear map u·W, all W ({tag})", linear_map(Grid.symbolic("W", dd, dd), nn)),
            (f"identity ({tag})", identity(nn, dd)),
            (f"affine map on row 0, all W, c ({tag})", affine_map(Grid.symbolic("W", dd, dd), nn, _row0_bias(nn, dd), rows=[0])),
            (f"convolution causal, all h ({tag})", convolution(Grid.symbolic("h", nn, dd), "causal")),
            (f"convolution cyclic, all h ({tag})", convolution(Grid.symbolic("h", nn, dd), "cyclic")),
            (f"fixed gate B⊙u, all B ({tag})", fixed_gate(Grid.symbolic("B", nn, dd))),
            (f"constant R, all R ({tag})", constant(Grid.symbolic("R", nn, dd))),
        ]
        for s in range(nn):
            frags.append((f"shift_down({s}) causal ({tag})", shift_down(nn, dd, s)))
            frags.append((f"shift_up({s}) cyclic, 1 layer ({tag})", shift_up(nn, dd, s)))
            frags.append((f"cyclic_shift({-s}) ({tag})", cyclic_shift(nn, dd, -s)))
        for name, frag in frags:
            res.instances.append(fragment_instance(frag, name))
    adds = [(1, 2, 1), (2, 5, 2)] if quick else [(1, 2, 1), (2, 4, 1), (2, 5, 2), (3, 7, 2)]
    for n, nn, dd in adds:
        res.instances.append(fragment_instance(running_add(n, nn, dd), f"add (running sum) n={n} on {nn}x{dd}"))
    moves = [
        ("move rows down 0→2 (causal)", move_rows(5, 2, 0, 2, 2)),
        ("move rows up 3→0 (cyclic)", move_rows(5, 2, 3, 0, 2)),
        ("move rows, one channel", move_rows(4, 3, 1, 2, 2, cols=[1])),
        ("move channels 0→2 on row 1", move_cols(2, 4, 0, 2, 2, rows=[1])),
        ("move channels 2→0", move_cols(3, 4, 2, 0, 2)),
    ]
    for name, frag in moves:
        res.instances.append(fragment_instance(frag, name))
    layouts = [(2, 2, 2, 4), (3, 1, 3, 3)] if quick else [(2, 2, 2, 4), (3, 1, 3, 3), (3, 2, 3, 7), (4, 2, 5, 8)]
    for n, d, nn, dd in layouts:
        res.instances.append(fragment_instance(rows_to_channels(n, d, nn, dd), f"layout rows→channels {n}x{d} in {nn}x{dd}"))
        res.instances.append(fragment_instance(channels_to_rows(n * d, d, nn, dd), f"layout channels→rows m={n * d}, d={d} in {nn}x{dd}"))
    # the definitions, for every size (symverify.prove_forall): the shifts and the running sum above are
    # instantiated from them; fixed_gate, constant and move_cols (all rows) have the same layers; move_rows
    # (all channels) the same weights, but causal when moving down where the definition is cyclic
    # (tests/test_forall_link.py); the row and channel subsets are proved per instance only
    for make in forall_library.PRIMITIVES:
        res.instances.append(forall_instance(make()))
    return res


if __name__ == "__main__":
    raise SystemExit(script_main(run))

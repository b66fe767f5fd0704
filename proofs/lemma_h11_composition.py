"""Lemma H.11 (stacking layers) with clean interfaces, padding to a larger state, and why both rules exist.

* Clean stacks of proved fragments compute the composition of their specs (layer counts add).
* Padding (zero rows/columns of W, b1, h, b2; cyclic taps also copied to their wrapped position)
  keeps a layer's function on the live block: proved for *generic* layers whose every weight is a
  distinct symbol, so for all weights; stacks of different inner sizes are padded to the larger.
* A cyclic layer on N rows padded to fewer than 2N − 1 rows is refused when it would read other
  rows, and a stack whose interfaces do not match is refused naming the cells; for the latter the
  unchecked stack is *refuted* exactly (its polynomials differ from ``g∘f``), which is why the
  interface rule is needed (docs/theory.md §4 **Choice**).
"""

from __future__ import annotations

import time

from symverify.errors import IRError
from symverify.gadgets.compose import compose, pad
from symverify.gadgets.primitives import (
    convolution,
    fixed_gate,
    generic_layer,
    identity,
    move_rows,
    running_add,
    shift_down,
    shift_up,
)
from symverify.gadgets.remember import ChannelF, ConstF, remember_rows
from symverify.kernel.ir.grid import Grid
from symverify.kernel.provers.fragment import prove_fragment
from symverify.scripts.instances import fragment_instance
from symverify.scripts.protocol import Instance, ProofResult, script_main

REFUSAL = "the construction run, and its IRError's message read"

TITLE = "Lemma H.11 (composition with clean interfaces; padding to a larger inner size)"
COST = 0.7  # CPU seconds of the full tier, measured (orders and splits a parallel run)



def _refused(name: str, build, expect: str) -> Instance:
    """The claim "``build()`` is refused with a message naming ``expect``"."""
    start = time.perf_counter()
    try:
        build()
    except IRError as e:
        ok = expect in str(e)
        return Instance.computed(name, True if ok else None, REFUSAL, "validation", seconds=time.perf_counter() - start,
                                 detail=str(e)[:200])
    return Instance.computed(name, False, REFUSAL, "validation", seconds=time.perf_counter() - start, detail="accepted")


def _unclean_refuted(name: str, first, second) -> Instance:
    """The unchecked stack ``first; second`` is refuted exactly against ``g∘f``."""
    frag = compose(first, second, check_interfaces=False)
    p = prove_fragment(frag)
    ok = p.exact is False and not p.compositional
    return Instance.computed(name, True if ok else None, "exact comparison of the expanded polynomials of the unchecked "
                             "stack and g∘f, and its stage certificate (prove_fragment)", "exact",
                             resources=frag.resources(), seconds=p.seconds, detail=p.failure[:200])


def _clean_stacks(quick: bool) -> list[tuple[str, object]]:
    stacks = [
        ("shift_down ; gate (all B) ; convolution (all h)", compose(shift_down(3, 2, 1), fixed_gate(Grid.symbolic("B", 3, 2)), convolution(Grid.symbolic("h", 3, 2)))),
        ("mask ; remember (all h, all F, 2 layers)", compose(fixed_gate(Grid.from_cells(6, 1, {(i, 0): 1 for i in range(3)})), remember_rows(6, 1, 2, 1, Grid.symbolic("h", 2, 1), ConstF(Grid.symbolic("F", 2, 1))))),
        ("add ; shift_up ; identity", compose(running_add(1, 3, 1), shift_up(3, 1, 1), identity(3, 1))),
        ("mask ; remember (channel f) ; move block down ; move it back up", compose(fixed_gate(Grid.from_cells(5, 2, {(0, 0): 1, (0, 1): 1, (1, 0): 1})), remember_rows(5, 2, 1, 1, Grid.from_cells(1, 1, {(0, 0): 1}), ChannelF((1,))), move_rows(5, 2, 0, 3, 2, cols=[0]), move_rows(5, 2, 3, 0, 2, cols=[0]))),
    ]
    if not quick:
        stacks.append(("gate ; remember (all h) ; remember (all h)", compose(fixed_gate(Grid.from_cells(8, 1, {(i, 0): 1 for i in range(3)})), remember_rows(8, 1, 2, 1, Grid.symbolic("h", 2, 1), ConstF(Grid.from_cells(2, 1, {(0, 0): 1, (1, 0): 1}))), remember_rows(8, 1, 2, 1, Grid.symbolic("g", 2, 1), ConstF(Grid.symbolic("F", 2, 1))))))
    return stacks


def run(quick: bool = False) -> ProofResult:
    res = ProofResult("lemma_h11_composition", TITLE)
    for name, frag in _clean_stacks(quick):
        res.instances.append(fragment_instance(frag, f"clean stack: {name}"))  # type: ignore[arg-type]
    pads = [((2, 1), (3, 2), "causal"), ((2, 1), (3, 1), "cyclic"), ((2, 2), (3, 3), "cyclic")]
    if not quick:
        pads += [((2, 2), (4, 3), "causal"), ((3, 1), (5, 2), "cyclic"), ((3, 2), (6, 3), "cyclic"), ((3, 1), (7, 1), "cyclic")]
    for (n0, d0), (n1, d1), mode in pads:
        frag = pad(generic_layer(n0, d0, mode), n1, d1)
        res.instances.append(fragment_instance(frag, f"pad generic {mode} layer {n0}x{d0} → {n1}x{d1} (all weights)", {"inner_n": n1, "inner_d": d1}))
    mixed = compose(generic_layer(2, 1, "causal", prefix="A"), generic_layer(3, 2, "causal", prefix="B"))
    res.instances.append(fragment_instance(mixed, "stack generic 2x1 ; generic 3x2 (padded, all weights)", {"inner_n": 3, "inner_d": 2}))
    if not quick:
        mixed2 = compose(generic_layer(2, 1, "cyclic", prefix="A"), generic_layer(3, 1, "cyclic", prefix="B"), generic_layer(3, 2, "causal", prefix="C"))
        res.instances.append(fragment_instance(mixed2, "stack cyclic 2x1 ; cyclic 3x1 ; causal 3x2 (all weights)", {"inner_n": 3, "inner_d": 2}))
    res.instances.append(_refused("cyclic 3-row layer padded to 4 rows is refused", lambda: pad(generic_layer(3, 1, "cyclic"), 4, 1), "wraps modulo N = 3"))
    garbage_f = remember_rows(3, 2, 1, 1, Grid.from_cells(1, 1, {(0, 0): 1}), ChannelF((1,)))
    res.instances.append(_refused("stack leaving the f channel of r's rows dirty is refused", lambda: compose(identity(3, 2), garbage_f), "(1, 1)"))
    res.instances.append(_unclean_refuted("… and that unchecked stack is refuted (f channel garbage leaks into r)", identity(3, 2), garbage_f))
    workspace = remember_rows(6, 1, 2, 1, Grid.symbolic("h", 2, 1), ConstF(Grid.symbolic("F", 2, 1)))
    res.instances.append(_refused("stack leaving remember's workspace dirty is refused", lambda: compose(identity(6, 1), workspace), "(3, 0)"))
    res.instances.append(_unclean_refuted("… and that unchecked stack is refuted (workspace garbage leaks)", identity(6, 1), workspace))
    return res


if __name__ == "__main__":
    raise SystemExit(script_main(run))

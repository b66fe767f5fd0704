"""Theorem H.21 compiler, ``d`` not a power of two: only the input cells the circuit reads are
gathered onto the track.

The gather's ∀-definition (:func:`symverify.parametric.library.gather`) holds for every input state
and zeroes the cells outside ``IN``, so the compiler passes ``IN`` = the cells its first stage reads
(:func:`symverify.compiler.h21.emit._read_cells`). An unread input is then not moved, and no weight
of the gather layers is dead: each one, perturbed, changes the model's polynomials.
"""

from __future__ import annotations

from symverify.compiler import compile
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.verification import verify
from symverify.library import wired_circuit
from symverify.mutate import mutate_weight, weight_sites


def _read_inputs(c: Circuit) -> set[int]:
    return {a for g in c.gates for a in g.args if a < c.num_inputs} | {o for o in c.outputs if o < c.num_inputs}


def test_unread_inputs_are_not_gathered_and_no_gather_weight_is_dead() -> None:
    c = wired_circuit(28, 1, "hubs", seed=1, shuffle_outputs=True, d=7)
    read = _read_inputs(c)
    assert len(read) < c.num_inputs  # the hubs leave inputs unread
    out = compile(c, method="kaleidoscope")
    m, cert = out.model, out.certificate
    assert verify(c, m, certificate=cert, method="compositional").proved
    after = next(b for b in cert.boundaries if b.layer == 2)
    assert len(after.cells) == len(read)  # the state after the gather: the read inputs only
    sites = [s for s in weight_sites(m) if s.layer in (0, 1)]
    assert sites
    for s in sites:
        res = verify(c, mutate_weight(m, s, "inc"), method="randomized")
        assert res.refuted, (str(s), res.verdict)


def test_every_input_read_keeps_every_cell() -> None:
    c = wired_circuit(7, 1, "below", seed=0, d=7)
    assert _read_inputs(c) == set(range(c.num_inputs))
    out = compile(c, method="kaleidoscope")
    after = next(b for b in out.certificate.boundaries if b.layer == 2)
    assert len(after.cells) == c.num_inputs
    assert verify(c, out.model, certificate=out.certificate, method="compositional").proved

"""symverify.mutate: each operator makes exactly one valid change, deterministically."""

from fractions import Fraction

import pytest

import symverify as sv
from symverify import library, mutate
from symverify.errors import UsageError
from symverify.kernel.ir.baseconv import Mode
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.ir.scalar import sym


@pytest.fixture(scope="module")
def compiled():
    c = library.determinant(2)
    return c, sv.compile(c, method="dense")


def changed_cells(a, b):
    out = []
    for k, (la, lb) in enumerate(zip(a.layers, b.layers)):
        for (name, ga), (_, gb) in zip(la.grids(), lb.grids()):
            ra, rb = ga.to_rows(), gb.to_rows()
            out += [(k, name, i, j) for i in range(ga.rows) for j in range(ga.cols) if ra[i][j] != rb[i][j]]
    return out


@pytest.mark.parametrize("op, expect", [
    ("inc", lambda v: v + 1), ("neg", lambda v: -v), ("zero", lambda v: 0), ("sym", lambda v: sym("m")),
    ("add_p", lambda v: v + mutate.M61), ("frac_p", lambda v: v + Fraction(1, mutate.M61)),
])
def test_weight_operators_change_one_nonzero_cell(compiled, op, expect):
    _, comp = compiled
    site = mutate.weight_sites(comp.model)[3]
    before = mutate.get_weight(comp.model, site)
    m = mutate.mutate_weight(comp.model, site, op)
    assert changed_cells(comp.model, m) == [(site.layer, site.grid, site.row, site.col)]
    assert mutate.get_weight(m, site) == expect(before)
    assert m.signature == comp.model.signature


def test_one_sets_a_zero_cell_and_refuses_a_nonzero_one(compiled):
    _, comp = compiled
    zero = mutate.weight_sites(comp.model, nonzero=False)[0]
    assert mutate.get_weight(mutate.mutate_weight(comp.model, zero, "one"), zero) == 1
    with pytest.raises(UsageError, match="needs a zero cell"):
        mutate.mutate_weight(comp.model, mutate.weight_sites(comp.model)[0], "one")
    for op in ("neg", "zero"):
        with pytest.raises(UsageError, match="needs a nonzero cell"):
            mutate.mutate_weight(comp.model, zero, op)


def test_flip_mode_changes_one_layer(compiled):
    _, comp = compiled
    m = mutate.flip_mode(comp.model, 1)
    assert m.layers[1].mode is not comp.model.layers[1].mode
    assert {m.layers[1].mode, comp.model.layers[1].mode} == {Mode.CAUSAL, Mode.CYCLIC}
    assert all(a == b for k, (a, b) in enumerate(zip(m.layers, comp.model.layers)) if k != 1)


def test_weight_mutants_are_deterministic_and_single(compiled):
    _, comp = compiled
    ops = tuple(op for op in mutate.WEIGHT_OPERATORS if op != "mode")
    first = mutate.mutants(lambda s: mutate.weight_mutant(comp.model, s, ops), 60)
    again = mutate.mutants(lambda s: mutate.weight_mutant(comp.model, s, ops), 60)
    assert [str(m) for m in first] == [str(m) for m in again] and len(first) == 60
    assert {m.operator for m in first} == set(ops)
    for m in first:
        assert len(changed_cells(comp.model, m.obj)) == 1, str(m)


def test_gate_operators(compiled):
    c, _ = compiled
    k = next(k for k, g in enumerate(c.gates) if g.op is Op.MUL)
    lin = mutate.mutate_gate(c, k, "op").gates[k]
    assert lin.op is Op.LIN and lin.args == c.gates[k].args and lin.coeffs == (1, 1)
    j = next(k for k, g in enumerate(c.gates) if g.op is Op.LIN)
    assert mutate.mutate_gate(c, j, "op").gates[j] == Gate.mul(*c.gates[j].args)
    assert mutate.mutate_gate(c, j, "coeff", which=1).gates[j].coeffs[1] == c.gates[j].coeffs[1] + 1
    assert mutate.mutate_gate(c, j, "coeff_sym").gates[j].coeffs[0] == sym("m")
    assert mutate.mutate_gate(c, j, "rewire", which=0, to=0).gates[j].args[0] == 0
    with pytest.raises(UsageError, match="coefficients"):
        mutate.mutate_gate(c, k, "coeff")
    swapped = mutate.swap_outputs(Circuit(1, 2, (Gate.mul(0, 1),), (2, 0)), 0, 1)
    assert swapped.outputs == (0, 2)


def test_gate_mutants_change_one_gate_or_the_outputs():
    c = library.random_circuit(2, 2, 10, 3, seed=7)
    muts = mutate.mutants(lambda s: mutate.gate_mutant(c, s, tuple(mutate.GATE_OPERATORS)), 30)
    assert {m.operator for m in muts} == set(mutate.GATE_OPERATORS)
    for m in muts:
        diff = [k for k, (a, b) in enumerate(zip(c.gates, m.obj.gates)) if a != b]
        assert len(diff) == (0 if m.operator == "outputs" else 1), str(m)
        assert (m.obj.outputs != c.outputs) == (m.operator == "outputs")


def test_rewire_needs_an_earlier_node():
    c = Circuit(1, 1, (Gate.mul(0, 0),), (1,))
    with pytest.raises(UsageError, match="none of the operators"):
        mutate.gate_mutant(c, 0, ("rewire",))


def test_certificate_mutants_touch_one_interior_cell(compiled):
    c, comp = compiled
    cert = comp.certificate
    muts = mutate.mutants(lambda s: mutate.certificate_mutant(cert, c.num_nodes, s), 20)
    assert {m.operator for m in muts} == set(mutate.CERTIFICATE_OPERATORS)
    for m in muts:
        new = m.obj
        assert new.boundaries[0] == cert.boundaries[0] and new.boundaries[-1] == cert.boundaries[-1]
        diff = [k for k, (a, b) in enumerate(zip(cert.boundaries, new.boundaries)) if a != b]
        assert len(diff) == 1, str(m)
    with pytest.raises(UsageError):
        mutate.mutate_cell(cert, 1, 0, "node", to=None)

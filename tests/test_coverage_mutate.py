"""symverify.mutate: the error paths and the rare fallbacks of the mutation operators.

Each test names the function of ``symverify/mutate.py`` it is for; an operator that silently did
something else on these inputs (mutated a different cell, returned the input unchanged, raised the
wrong error class) fails the assertion.
"""

import pytest

import symverify as sv
from symverify import library, mutate
from symverify.errors import UsageError
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.certificate import Boundary, Cell, Certificate
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import sym


@pytest.fixture(scope="module")
def compiled():
    c = library.determinant(2)
    return c, sv.compile(c, method="dense")


def dense_model():
    """A 1-layer (1, 1, 1, 1, 1) model whose four 1×1 grids all hold 1: no zero cell anywhere."""
    one = Grid.full(1, 1, 1)
    return Model(1, 1, 1, 1, (Layer(one, one, one, one),))


def test_sym_refuses_a_cell_that_already_holds_the_symbol(compiled):
    """_new_value, 'sym' on a cell holding sym(symbol): a no-op mutant would be a useless mutant."""
    _, comp = compiled
    site = mutate.weight_sites(comp.model)[0]
    m = mutate.mutate_weight(comp.model, site, "sym", symbol="q")
    assert mutate.get_weight(m, site) == sym("q")
    with pytest.raises(UsageError, match="already holds q"):
        mutate.mutate_weight(m, site, "sym", symbol="q")


def test_weight_sites_none_lists_every_cell(compiled):
    """weight_sites(nonzero=None): every cell, the union of the zero and nonzero ones."""
    _, comp = compiled
    every = mutate.weight_sites(comp.model, nonzero=None)
    nz, z = mutate.weight_sites(comp.model), mutate.weight_sites(comp.model, nonzero=False)
    assert set(every) == set(nz) | set(z) and len(every) == len(nz) + len(z)
    L, (_, _, _, n2, d2) = len(comp.model.layers), comp.model.signature
    assert len(every) == L * (d2 * d2 + 3 * n2 * d2)


@pytest.mark.parametrize("site, match", [
    (mutate.WeightSite(5, "W", 0, 0), "the model has 1 layers"),
    (mutate.WeightSite(0, "Q", 0, 0), "expected a grid among W, b1, h, b2, found 'Q'"),
    (mutate.WeightSite(0, "h", 1, 0), "outside the 1×1 grid"),
    (mutate.WeightSite(0, "b2", 0, -1), "outside the 1×1 grid"),
])
def test_bad_weight_sites_are_usage_errors(site, match):
    """_check_site: a layer, grid name or cell outside the model."""
    with pytest.raises(UsageError, match=match):
        mutate.get_weight(dense_model(), site)
    with pytest.raises(UsageError, match=match):
        mutate.mutate_weight(dense_model(), site, "inc")


def test_operator_one_finds_no_zero_cell_in_a_dense_model():
    """_random_zero_site returns None (no zero cell is hit) and weight_mutant falls back or gives up."""
    m = dense_model()
    with pytest.raises(UsageError, match="none of the operators"):
        mutate.weight_mutant(m, 0, ("one",))
    mut = mutate.weight_mutant(m, 0, ("one", "inc"))
    assert mut.operator == "inc"
    assert sum(mutate.get_weight(mut.obj, s) for s in mutate.weight_sites(mut.obj)) == 5


def test_weight_mutant_skips_sym_where_the_cell_already_holds_it():
    """weight_mutant, 'sym' drawn on a cell already holding sym(symbol): no mutant from that operator."""
    s = Grid.full(1, 1, sym("m"))
    m = Model(1, 1, 1, 1, (Layer(s, s, s, s),))
    with pytest.raises(UsageError, match="none of the operators"):
        mutate.weight_mutant(m, 3, ("sym",))


def circuit():
    """%0 = u, %1 = 3 (CONST), %2 = u·%1, %3 = 2·u + 5·%2."""
    return Circuit(1, 1, (Gate.const(3), Gate.mul(0, 1), Gate.lin(0, 2, 2, 5)), (3,))


@pytest.mark.parametrize("k, op, kw, match", [
    (3, "op", {}, "the circuit has 3 gates, found gate 3"),
    (-1, "op", {}, "found gate -1"),
    (1, "coeff", {"to": 0}, "to=0 is the new node of operator 'rewire' only"),
    (0, "op", {}, "'op' needs a LIN or MUL gate, found a CONST"),
    (0, "rewire", {"to": 0}, "'rewire' needs a LIN or MUL gate, found a CONST"),
    (2, "rewire", {"which": 2, "to": 0}, r"expected which ∈ \{0, 1\}"),
    (2, "rewire", {"which": 0}, "found which=0, to=None"),
    (2, "rewire", {"which": 0, "to": 0}, "found which=0, to=0"),
    (2, "swap", {}, "expected an operator among op, coeff, coeff_sym, coeff_p, rewire, found 'swap'"),
])
def test_mutate_gate_refuses(k, op, kw, match):
    """mutate_gate's refusals: gate index, `to` with another operator, CONST gates, a rewire that
    changes nothing, an unknown operator."""
    with pytest.raises(UsageError, match=match):
        mutate.mutate_gate(circuit(), k, op, **kw)


def test_coeff_sym_refuses_a_coefficient_that_already_is_the_symbol():
    """mutate_gate, coeff_sym on a coefficient equal to sym(symbol): the new == old check."""
    c = mutate.mutate_gate(circuit(), 2, "coeff_sym", which=1)
    assert c.gates[2].coeffs == (2, sym("m"))
    with pytest.raises(UsageError, match="coefficient 1 of gate 2 already is m"):
        mutate.mutate_gate(c, 2, "coeff_sym", which=1)
    assert mutate.mutate_gate(circuit(), 0, "coeff_p").gates[0].coeffs == (3 + mutate.M61,)


def cert():
    """Three boundaries; the interior one has a constant-only cell and a one-term cell."""
    return Certificate((
        Boundary(0, (Cell(0, 0, ((0, 1),)),)),
        Boundary(1, (Cell(0, 0, (), 7), Cell(1, 0, ((0, 2),), 1))),
        Boundary(2, (Cell(0, 0, ((0, 1),)),)),
    ))


@pytest.mark.parametrize("args, kw, match", [
    ((3, 0, "const"), {}, "the certificate has 3 boundaries, found 3"),
    ((1, 2, "const"), {}, "boundary 1 lists 2 cells, found cell 2"),
    ((1, 0, "coeff"), {}, "the cell has 0 terms, found term 0"),
    ((1, 1, "node"), {"term": 1, "to": 3}, "the cell has 1 terms, found term 1"),
    ((1, 1, "const"), {"to": 3}, "to=3 is the new node of operator 'node' only"),
    ((1, 1, "flip"), {}, "expected an operator among node, coeff, const, drop, found 'flip'"),
])
def test_mutate_cell_refuses(args, kw, match):
    """mutate_cell's refusals: boundary, cell and term indices, `to` with another operator, an
    unknown operator."""
    with pytest.raises(UsageError, match=match):
        mutate.mutate_cell(cert(), *args, **kw)


def test_certificate_mutant_falls_back_to_const_only_when_asked_for():
    """certificate_mutant: 'node'/'coeff' on a constant-only cell, and 'node' in a one-node circuit
    (no other node to point at), become 'const' when 'const' is among the operators: the constant
    grows by 1 and nothing else changes. Without 'const' only cells with terms are drawn, and 'node'
    in a one-node circuit is refused (an operator not asked for is never used)."""
    c = cert()
    seen = set()
    for seed in range(40):
        for ops, nodes in ((("node", "coeff", "const"), 5), (("node", "const"), 1), (("node", "coeff"), 5)):
            m = mutate.certificate_mutant(c, nodes, seed, ops)
            assert m.operator in ops
            b_old, b_new = c.boundaries[1], m.obj.boundaries[1]
            changed = [t for t, (x, y) in enumerate(zip(b_old.cells, b_new.cells)) if x != y]
            assert len(changed) == 1
            x, y = b_old.cells[changed[0]], b_new.cells[changed[0]]
            if m.operator == "const":
                assert y.terms == x.terms and y.const == x.const + 1
                seen.add((ops, changed[0]))
            else:
                assert nodes == 5 and x.terms
    assert (("node", "coeff", "const"), 0) in seen and (("node", "const"), 1) in seen
    assert not any(ops == ("node", "coeff") for ops, _ in seen)
    with pytest.raises(UsageError, match=r"operator 'node' needs a circuit of at least 2 nodes, found num_nodes=1"):
        mutate.certificate_mutant(c, 1, 0, ("node",))

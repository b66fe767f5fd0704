"""The certificate checker's structural rules (each one breakable) and its soundness on small cases."""

import pytest

from symverify import Circuit, Gate, Grid, IRError, Layer, Model, sym
from symverify.kernel.ir.certificate import Boundary, Cell, Certificate
from symverify.kernel.provers.compositional import check_certificate

MUL = Circuit(1, 2, (Gate.mul(0, 1),), (2,))
LAYER = Layer.make(1, 2, W=Grid.from_cells(2, 2, {(1, 0): 1}), h=Grid.from_cells(1, 2, {(0, 0): 1}))
MODEL = Model(1, 2, 1, 2, (LAYER,))
IN = Boundary(0, (Cell.node(0, 0, 0), Cell.node(0, 1, 1)))
OUT = Boundary(1, (Cell.node(0, 0, 2),))


def test_good_certificate_proves():
    assert check_certificate(MUL, MODEL, Certificate((IN, OUT))).ok


@pytest.mark.parametrize(
    "circuit, model, cert, match",
    [
        (MUL, MODEL, Certificate((IN,)), r"at least 2 boundaries"),
        (MUL, MODEL, Certificate((IN, Boundary(2, OUT.cells))), r"from layer 0 to layer L = 1"),
        (MUL, MODEL, Certificate((IN, Boundary(0, OUT.cells), Boundary(1, OUT.cells), Boundary(1, OUT.cells))), None),
        (MUL, MODEL, Certificate((IN, Boundary(1, (Cell.node(0, 5, 2),)))), r"cell \(0, 5\) is outside the 1×2 state"),
        (MUL, MODEL, Certificate((IN, Boundary(1, (Cell.node(0, 0, 2), Cell.node(0, 0, 2))))), r"cell \(0, 0\) is listed twice"),
        (MUL, MODEL, Certificate((IN, Boundary(1, (Cell.node(0, 0, 9),)))), r"names node %9, which the circuit lacks"),
        (MUL, MODEL, Certificate((Boundary(0, (Cell.node(0, 0, 0),)), OUT)), r"boundary 0: must list exactly the embedded input"),
        (MUL, MODEL, Certificate((IN, Boundary(1, (Cell.node(0, 0, 1),)))), r"output 0 \(node %2\) must sit alone at cell \(0, 0\)"),
        (MUL, MODEL, Certificate((IN, Boundary(1, (Cell.node(0, 0, 2), Cell.node(0, 1, 0))))), r"read-out cell \(0, 1\) is past the outputs"),
        (MUL, MODEL, Certificate((IN, Boundary(1, (Cell(0, 0, ((2, 1),), sym("zz")),)))), r"uses the parameter\(s\) \['zz'\]"),
        (Circuit(1, 2, (), (1, 0)), Model(2, 1, 2, 2, ()), Certificate((IN,)), r"the model reads 2×1 inputs but the circuit reads 1×2"),
    ],
)
def test_structural_rules(circuit, model, cert, match):
    if match is None:  # a boundary that goes back in layers
        cert = Certificate((IN, Boundary(1, OUT.cells), Boundary(0, OUT.cells), Boundary(1, OUT.cells)))
        match = r"boundary 2: layer 0 comes before boundary 1's layer 1"
    with pytest.raises(IRError, match=match):
        check_certificate(circuit, model, cert)


def test_cell_and_boundary_fields_are_checked():
    with pytest.raises(IRError, match="expected int row and column"):
        Cell(0.0, 0, ((0, 1),))
    with pytest.raises(IRError, match="expected int node ids"):
        Cell(0, 0, (("a", 1),))
    with pytest.raises(IRError, match="coefficient: expected an exact value"):
        Cell(0, 0, ((0, 0.5),))
    with pytest.raises(IRError, match="expected an int layer index"):
        Boundary("0", ())
    with pytest.raises(IRError, match="expected Cell objects"):
        Boundary(0, ((0, 0, 1),))


def test_a_stage_claim_that_does_not_hold_fails():
    wrong = Certificate((IN, Boundary(1, (Cell(0, 0, ((2, 2),)),))))  # claims 2·x0·x1 ... as node 2 with coeff 2
    res = check_certificate(MUL, Model(1, 2, 1, 2, (LAYER,)), Certificate((IN, OUT)))
    assert res.ok
    with pytest.raises(IRError, match="must sit alone"):
        check_certificate(MUL, MODEL, wrong)
    mid = Certificate((IN, Boundary(0, (Cell.node(0, 0, 1), Cell.node(0, 1, 0))), OUT))  # a zero-layer stage that lies
    res = check_certificate(MUL, MODEL, mid)
    assert not res.ok and res.failure.stage == 0 and res.failure.cell == (0, 0)


def test_unlisted_nonzero_cell_fails():
    keep = Layer.make(1, 2, W=Grid.identity(2), b2=Grid.full(1, 2, 1))
    m = Model(1, 2, 1, 2, (keep, LAYER))
    cert = Certificate((IN, Boundary(1, (Cell.node(0, 0, 0),)), Boundary(2, OUT.cells)))  # forgets x1 in (0, 1)
    res = check_certificate(MUL, m, cert)
    assert not res.ok and "leaves out is not 0" in res.failure.reason and res.failure.cell == (0, 1)

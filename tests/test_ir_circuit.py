"""Circuit IR: construction, every validation rule, and normalisation of coefficients."""

from fractions import Fraction

import pytest

from symverify import Circuit, Gate, IRError, Op, sym
from symverify.kernel.ir.scalar import as_scalar


def test_valid_circuit_and_properties():
    c = Circuit(1, 2, (Gate.mul(0, 1), Gate.const(3), Gate.lin(2, 2, 3, -1)), (4, 0))
    assert c.num_inputs == 2 and c.num_nodes == 5
    assert c.size == 2  # the constant is not counted
    assert c.gate(0) is None and c.gate(2).op is Op.MUL
    assert not c.is_linear()
    assert "gate 2" in c.pretty()


def test_coefficients_are_normalised_from_strings():
    c = Circuit(1, 1, (Gate(Op.LIN, (0, 0), ("2/4", "3")),), (1,))
    assert c.gates[0].coeffs == (Fraction(1, 2), 3)


def test_symbolic_coefficients_are_params():
    c = Circuit(1, 1, (Gate.lin(0, sym("a"), 0, sym("b") * 2),), (1,))
    assert c.params() == {"a", "b"}


@pytest.mark.parametrize(
    "gates, outputs, n, d, match",
    [
        ((Gate.add(0, 2),), (2,), 1, 2, r"gate 0 .* reads node %2, which is defined later at gate 0"),
        ((Gate.add(0, 7),), (2,), 1, 2, r"reads node %7, which is never defined"),
        ((Gate(Op.MUL, (0,), ()),), (2,), 1, 2, r"expected 2 args and 0 coefficients, found 1 args"),
        ((Gate(Op.LIN, (0, 1), (1,)),), (2,), 1, 2, r"expected 2 args and 2 coefficients, found 2 args and 1"),
        ((Gate(Op.CONST, (0,), (1,)),), (2,), 1, 2, r"expected 0 args and 1 coefficients"),
        ((Gate(Op.MUL, (0, -1), ()),), (2,), 1, 2, r"argument -1 is not a node id"),
        ((Gate("pow", (0, 1), ()),), (2,), 1, 2, r"unknown op 'pow'"),
        ((), (0, 1, 0), 1, 2, r"at most n·d = 2 outputs fit in y, found 3"),
        ((), (5,), 1, 2, r"output 0: expected an int node id in \[0, 2\), found 5"),
        ((), (), 0, 2, r"circuit n: expected a positive int, found 0"),
        (("mul",), (), 1, 2, r"expected a Gate, found str"),
    ],
)
def test_every_validation_rule(gates, outputs, n, d, match):
    with pytest.raises(IRError, match=match):
        Circuit(n, d, gates, outputs)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: Gate(Op.LIN, (0, 1), (0.5, 1)), r"lin coefficient alpha: .*found the float 0.5; pass Fraction\(1, 2\)"),
        (lambda: Gate(Op.LIN, (0, 1), (True, 1)), r"lin coefficient alpha: expected an exact number, found the bool True"),
        (lambda: Gate(Op.CONST, (), ("x",)), r"const coefficient value: expected a rational"),
        (lambda: Gate(Op.MUL, 3, ()), r"mul args: expected a sequence of node ids, found int"),
        (lambda: Gate(Op.LIN, (0, 1), "12"), r"lin coefficients: expected a sequence, found str"),
    ],
)
def test_gates_check_their_coefficients(make, match):
    with pytest.raises(IRError, match=match):
        make()


def test_gates_normalise_themselves_and_circuits_never_mutate_them():
    g = Gate(Op.LIN, [0, 0], ["2/4", Fraction(3)])
    assert g.args == (0, 0) and g.coeffs == (Fraction(1, 2), 3) and type(g.coeffs[1]) is int
    assert g == Gate.lin(0, Fraction(1, 2), 0, 3) and len({g, Gate.lin(0, Fraction(1, 2), 0, 3)}) == 1
    before = (g.args, g.coeffs)
    Circuit(1, 1, (g,), (1,))
    assert (g.args, g.coeffs) == before


def test_float_scalar_hint_and_exact_strings():
    with pytest.raises(IRError, match=r"pass Fraction\(1, 3\)"):
        as_scalar(1 / 3, "x")
    with pytest.raises(IRError, match=r"expected a rational such as"):
        as_scalar("0.5", "x")
    assert as_scalar("-6/4") == Fraction(-3, 2)


def test_sym_arithmetic_is_canonical():
    a, b = sym("a"), sym("b")
    assert (a + b) * (a - b) == a * a - b * b
    assert (a + 1) - a == 1 and isinstance((a + 1) - a, int)
    assert str(2 * a * b - Fraction(1, 3)) == "2*a*b - 1/3"
    with pytest.raises(IRError, match="parameter name must be an identifier"):
        sym("1x")


def test_helpful_errors_for_common_mistakes():
    import numpy as np

    from symverify import Model, ShapeError, layered_form, polynomials, stats
    from symverify.semantics.exact import evaluate

    with pytest.raises(IRError, match="stats: expected a Circuit, found Model"):
        stats(Model(1, 1, 1, 1, ()))
    with pytest.raises(IRError, match="layered_form: expected a Circuit, found Model"):
        layered_form(Model(1, 1, 1, 1, ()))
    with pytest.raises(IRError, match="polynomials: expected a Circuit, Model or compiled object, found int"):
        polynomials(42)
    with pytest.raises(ShapeError, match=r"input: expected shape 1×2, a nested list \(rows of values\), found list \[1, 2\]"):
        evaluate(Circuit(1, 2, (), (0,)), [1, 2])
    with pytest.raises(IRError, match="circuit outputs: expected a sequence, found int 2"):
        Circuit(1, 2, (), 2)
    with pytest.raises(IRError, match="no division gate"):
        Circuit.trace(lambda u: [u[0][0] / u[0][1]], n=1, d=2)
    with pytest.raises(IRError, match="divisor: expected a nonzero rational constant"):
        Circuit.trace(lambda u: [u[0][0] / 0], n=1, d=2)
    with pytest.raises(IRError, match=r"traced output 0: expected a wire or an exact scalar, found Gate"):
        Circuit.trace(lambda u: [Gate.mul(0, 1)], n=1, d=2)
    plus = Circuit.trace(lambda u: [+u[0][0] - +u[0][1]], n=1, d=2)  # unary plus is the wire (it raised TypeError)
    assert len(plus.gates) == 1 and evaluate(plus, [[5, 3]])[0][0] == 2
    halves = Circuit.trace(lambda u: [u[0][0] / 2], n=1, d=2)
    assert evaluate(halves, [[3, 0]])[0][0] == Fraction(3, 2)
    square = Circuit.trace(lambda u: np.array(u) @ np.array(u), n=2, d=2)  # arrays of wires are flattened
    assert evaluate(square, [[1, 2], [3, 4]]) == [[7, 10], [15, 22]]


def test_a_numpy_output_id_is_read_as_its_value_and_a_float_one_is_named_as_the_type_it_is():
    """``outputs=np.array([1])`` said "expected a node id in [0, 2), found np.int64(1)", though 1 is in range;
    a node id given as a numpy integer is read by its value (as a gate's arguments are); a float or bool
    is still refused, its type named."""
    import numpy as np

    from symverify.errors import IRError
    from symverify.kernel.ir.circuit import Circuit
    from symverify.kernel.ir.gate import Gate

    c = Circuit(1, 1, (Gate.mul(0, 0),), np.array([1]))
    assert c.outputs == (1,) and type(c.outputs[0]) is int
    with pytest.raises(IRError, match=r"output 0: expected an int node id in \[0, 2\), found 1\.0 \(a float, not an int\)"):
        Circuit(1, 1, (Gate.mul(0, 0),), (1.0,))
    with pytest.raises(IRError, match=r"output 0: expected an int node id in \[0, 2\), found np\.True_ \(a bool, not an int\)"):
        Circuit(1, 1, (Gate.mul(0, 0),), (np.True_,))
    with pytest.raises(IRError, match=r"output 0: expected an int node id in \[0, 2\), found True \(a bool, not an int\)"):
        Circuit(1, 1, (Gate.mul(0, 0),), (True,))

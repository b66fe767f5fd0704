"""Adversarial inputs to the trusted kernel: values that look like exact rationals but compute
otherwise, placed where a verdict reads them.

``Fraction(IntSub(5), 3)`` is a plain ``Fraction`` whose numerator is an instance of an ``int``
subclass (Python's constructor keeps what the numerator's own ``numerator``, ``*`` and ``//``
return). Its value is the stored integer ``5/3``, which flint, sympy and the encoding read, but
Python's Fraction arithmetic and the residues mod ``p`` go through the subclass's ``*``: a
subclass that answers ``*`` otherwise made the randomized method see ``7/3`` where the exact
method saw ``5/3``, so one pair was proved by one method and refuted by another. Every exact
scalar the IR stores must therefore be built of plain ints.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.errors import IRError
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.butterfly import ButterflyFactor
from symverify.kernel.ir.certificate import Cell
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Sym, as_scalar, is_canonical, sym
from symverify.kernel.parametric.expr import Lit, Num
from symverify.kernel.provers.options import Options


class Liar(int):
    """An int whose ``numerator`` is itself and whose ``*`` by anything but ``1`` answers ``7·other``
    (so ``Fraction(Liar(5), 3)`` keeps the Liar as its numerator and reads as ``7/3`` in arithmetic)."""

    @property
    def numerator(self) -> int:
        return self

    @property
    def denominator(self) -> int:
        return 1

    def __mul__(self, other: object) -> int:  # type: ignore[override]
        if type(other) is int and other == 1:
            return Liar(int(self))
        return 7 * other  # type: ignore[operator, no-any-return]

    __rmul__ = __mul__

    def __floordiv__(self, other: object) -> int:  # type: ignore[override]
        return Liar(int(self) // other)  # type: ignore[operator]

    def __add__(self, other: object) -> int:  # type: ignore[override]
        return int(self) + 1 + other  # type: ignore[operator, no-any-return]

    __radd__ = __add__


def _liar(num: int = 5, den: int = 3) -> Fraction:
    f = Fraction(Liar(num), den)
    assert type(f) is Fraction and type(f.numerator) is Liar  # what Python builds
    return f


def _plain(x: object) -> bool:
    return type(x) is int or (type(x) is Fraction and type(x.numerator) is int and type(x.denominator) is int)


def _plain_sym(x: Sym) -> bool:
    return all(_plain(c) for _, c in x.terms)


def _model(w: object) -> Model:
    """``y = w·u`` for ``1×1`` input: ``W = [[w]]``, the convolution branch the constant 1."""
    return Model(1, 1, 1, 1, (Layer.make(1, 1, W=Grid(1, 1, 0, ((0, 1, 0, 1, w),)), b2=Grid.full(1, 1, 1)),))


def _scale(c: Fraction) -> Circuit:
    return Circuit(1, 1, (Gate.scale(0, c),), (1,))


def test_a_fraction_with_an_int_subclass_numerator_is_not_canonical_and_is_rebuilt():
    f = _liar()
    assert not is_canonical(f)
    for x in (as_scalar(f), as_scalar(Fraction(5, Liar(3)))):
        assert _plain(x) and x == Fraction(5, 3)


def test_every_ir_field_stores_the_plain_value_of_a_lying_fraction():
    f = _liar()
    g = Grid(1, 1, 0, ((0, 1, 0, 1, f),))
    assert _plain(g.rects[0][4]) and g.rects[0][4] == Fraction(5, 3)
    assert _plain(Grid(1, 1, f, ()).fill)
    assert _plain(Gate.scale(0, f).coeffs[0])
    assert _plain(Gate(Gate.add(0, 0).op, (0, 0), (f, 1)).coeffs[0])
    assert _plain(Gate.const(f).coeffs[0])
    assert _plain(ButterflyFactor(2, 1, (f,), (0,), (0,), (1,)).d1[0])
    cell = Cell(0, 0, ((0, f),), f)
    assert _plain(cell.terms[0][1]) and _plain(cell.const)
    assert _plain(Options.from_call("randomized", error_bound=Fraction(Liar(1), 2**80)).error_bound)


def test_sym_arithmetic_with_a_lying_fraction_keeps_plain_coefficients():
    a = sym("a")
    for x in (a * _liar(), _liar() * a, a + _liar(), _liar() - a, (a + _liar()) ** 2):
        assert isinstance(x, Sym) and _plain_sym(x), x
    assert (a * _liar()).terms == (a * Fraction(5, 3)).terms


def test_a_sym_built_with_a_lying_coefficient_is_refused():
    with pytest.raises(IRError, match="Fraction coefficient in lowest terms"):
        Sym((((("a", 1),), _liar()),))


def test_a_lying_weight_is_decided_by_its_value_by_every_method():
    m = _model(_liar())
    assert sv.evaluate(m, [[3]]) == [[5]]
    methods = [("randomized", {"backend": "python"}), ("exact", {}), ("exact-sympy", {}), ("auto", {}), ("z3", {})]
    try:
        import torch  # noqa: F401

        methods.append(("randomized", {"backend": "torch"}))
    except ImportError:
        pass
    for method, kw in methods:
        right = sv.verify(m, _scale(Fraction(5, 3)), method=method, **kw)  # type: ignore[arg-type]
        wrong = sv.verify(m, _scale(Fraction(7, 3)), method=method, **kw)  # type: ignore[arg-type]
        assert right.proved, (method, kw, right)
        assert not wrong.proved, (method, kw, wrong)


def test_a_lying_coefficient_in_a_circuit_is_decided_by_its_value():
    c = _scale(_liar())
    for method in ("randomized", "exact", "auto"):
        assert sv.verify(c, _scale(Fraction(5, 3)), method=method).proved
        assert not sv.verify(c, _scale(Fraction(7, 3)), method=method).proved


def test_a_lying_error_bound_is_read_at_its_value():
    opts = Options.from_call("randomized", error_bound=Fraction(Liar(1), 2**80))
    assert opts.error_bound == Fraction(1, 2**80) and type(opts.error_bound.numerator) is int


def test_parametric_constants_store_plain_values():
    assert type(Lit(Liar(3)).value) is int and Lit(Liar(3)).value == 3
    v = Num(_liar()).value
    assert _plain(v) and v == Fraction(5, 3)
    assert type(Num(Liar(4)).value) is int


@settings(max_examples=40, deadline=None)
@given(st.integers(-(2**70), 2**70), st.integers(1, 2**70))
def test_any_int_subclass_numerator_or_denominator_gives_the_plain_fraction(num, den):
    want = Fraction(num, den)
    for f in (Fraction(Liar(num), den), Fraction(num, Liar(den)) if den > 0 else want):
        x = as_scalar(f)
        assert _plain(x) and x == want
        g = Grid(1, 1, 0, ((0, 1, 0, 1, f),)) if want != 0 else Grid(1, 1, 0, ())
        assert all(_plain(r[4]) for r in g.rects)


def test_a_lying_index_literal_is_proved_for_all_only_where_every_instance_holds():
    from symverify.kernel.parametric.concrete import instance_model
    from symverify.parametric import Gadget, Param, PLayer, inp, lt, tap, var

    i, q, n, d, s = (var(x) for x in "iqNds")
    ranges = (Param("N", 1, 2**40), Param("d", 1, 2**20), Param("s", 0, 2**40 - 1))
    # the lag s + 0, with a 0 whose ``+`` adds 1: read by its value, the gadget is the cyclic shift by s
    g = Gadget("shift", ranges, n, d, (PLayer(b1=1, h=(tap(s + Lit(Liar(0))),), mode="cyclic"),),
               inp((i + n - s) % n, q), where=lt(s, n))
    assert sv.prove_forall(g).proved
    for size, lag in ((4, 1), (5, 3), (3, 0)):
        m = instance_model(g, {"N": size, "d": 1, "s": lag})
        u = [[k + 1] for k in range(size)]
        assert sv.evaluate(m, u) == [u[(k - lag) % size] for k in range(size)]


def test_recheck_refuses_a_fraction_holding_an_int_subclass():
    from symverify.errors import ProverError
    from symverify.kernel.provers.counterexample import recheck
    from symverify.kernel.provers.outcome import Counterexample
    from symverify.kernel.provers.sides import as_side

    square, ident = Circuit(1, 1, (Gate.mul(0, 0),), (1,)), Circuit(1, 1, (), (0,))
    for inputs, value in ((((_liar(),),), Fraction(5, 3)), (((Fraction(5, 3),),), _liar())):
        cex = Counterexample(inputs, (), (0, 0), Fraction(25, 9), value, found_by="forged")
        with pytest.raises(ProverError, match=r"(inputs\[0\]\[0\]|rhs_value) = .*expected an exact rational"):
            recheck(as_side(square), as_side(ident), cex)


class Sly(int):
    """An int equal to every int (and unequal to none): as a layer index it passes any check of
    equality while slicing, which reads the stored value, sees its own number."""

    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False

    __hash__ = int.__hash__


def _doubling() -> tuple[Circuit, Model]:
    """``u ↦ u`` and a model of two layers computing ``u ↦ 2u`` (its first layer alone is ``u ↦ u``)."""
    one = Layer.make(1, 1, W=Grid.full(1, 1, 1), b2=Grid.full(1, 1, 1))
    two = Layer.make(1, 1, W=Grid.full(1, 1, 2), b2=Grid.full(1, 1, 1))
    return Circuit(1, 1, (), (0,)), Model(1, 1, 1, 1, (one, two))


def test_a_certificate_whose_last_boundary_claims_to_be_every_layer_is_refused():
    from symverify.kernel.ir.certificate import Boundary, Certificate

    ident, m = _doubling()
    assert sv.evaluate(m, [[3]]) == [[6]]
    cert = Certificate((Boundary(0, (Cell.node(0, 0, 0),)), Boundary(Sly(1), (Cell.node(0, 0, 0),))))
    assert type(cert.boundaries[1].layer) is int
    with pytest.raises(IRError, match="boundaries must run from layer 0 to layer L = 2"):
        sv.verify(ident, m, certificate=cert, method="compositional")
    assert not sv.verify(ident, m, certificate=cert).proved


def test_certificate_cells_store_plain_rows_columns_and_nodes():
    for c in (Cell(Sly(0), Sly(0), ((Sly(0), 1),)), Cell(Liar(0), 0, ((Liar(0), Fraction(1, 2)),), 1)):
        assert type(c.row) is int and type(c.col) is int and all(type(v) is int for v, _ in c.terms)


class Wide(int):
    """An int that says it lies within every range (``<=``, ``<``, ``>=``, ``>`` all true)."""

    def __le__(self, other: object) -> bool:
        return True

    __lt__ = __ge__ = __gt__ = __le__


def test_an_instance_is_built_only_at_sizes_in_the_proved_ranges():
    from symverify.kernel.parametric.concrete import instantiate
    from symverify.kernel.parametric.expr import ParametricError
    from symverify.parametric.library import user_cyclic_shift

    g = user_cyclic_shift()
    hi = next(p.hi for p in g.params if p.name == "N")
    with pytest.raises(ParametricError, match=r"parameter N = .* outside its range"):
        instantiate(g, {"N": Wide(hi + 1), "d": 1, "s": 0})


class Ratio(float):
    """A float whose own ``as_integer_ratio`` says ``1/2``, as a ratio of Liar ints, whatever it holds."""

    def as_integer_ratio(self) -> tuple[int, int]:
        return Liar(1), 2


def test_an_error_bound_whose_ratio_holds_int_subclasses_is_read_at_its_value():
    """A float subclass is read at the double it stores (``float.as_integer_ratio``), never through its
    own ``as_integer_ratio`` (which could name a bound other than the one given)."""
    eb = Options.from_call("randomized", error_bound=Ratio(2.0**-80)).error_bound
    assert eb == Fraction(1, 2**80) and type(eb) is Fraction and type(eb.numerator) is int
    rep = sv.verify(_scale(Fraction(5, 3)), _scale(Fraction(5, 3)), method="randomized", error_bound=Ratio(2.0**-80))
    assert rep.proved and rep.evidence["k"] >= 2


class Alias(str):
    """The name ``'a'`` that compares and hashes as ``'b'``."""

    def __eq__(self, other: object) -> bool:
        return other == "b" or str.__eq__(self, other)

    def __hash__(self) -> int:
        return hash("b")


def test_a_parameter_name_that_compares_as_another_is_its_own_parameter():
    a, b = sym(Alias("a")), sym("b")
    assert all(type(name) is str for mono, _ in a.terms for name, _ in mono)
    lhs, rhs = Circuit(1, 1, (Gate.scale(0, a),), (1,)), Circuit(1, 1, (Gate.scale(0, b),), (1,))
    assert lhs.params() == {"a"} and len(lhs.params() | rhs.params()) == 2
    for method in ("exact", "randomized", "z3", "auto"):
        assert sv.verify(lhs, rhs, method=method).refuted, method
    assert sv.verify(lhs, Circuit(1, 1, (Gate.scale(0, sym("a")),), (1,)), method="exact").proved


def test_parametric_names_are_plain_strs():
    from symverify.kernel.parametric.expr import Fam, Pred, Var
    from symverify.parametric import Gadget, Param, PLayer, fam, inp, tap, var

    assert type(Var(Alias("N")).name) is str and type(Param(Alias("N"), 1, 4).name) is str
    assert type(Fam(Alias("B"), (Lit(0),)).name) is str and type(Pred(Alias("V"), (Lit(0),)).name) is str
    i, q, n = var("i"), var("q"), var("N")
    g = Gadget("scale", (Param("N", 1, 8),), n, 1, (PLayer(W=(tap(0),), b2=fam("B", 0)),),
               fam("B", 0) * inp(i, q), families={Alias("B"): (1,)})
    assert all(type(k) is str for k in g.families) and sv.prove_forall(g).proved


@pytest.mark.parametrize("rows", [3, 20])  # biases of few blocks cell by cell, of many in bulk
def test_family_values_of_an_instance_are_stored_canonical(rows):
    from symverify.kernel.parametric.concrete import instantiate
    from symverify.parametric import Gadget, Param, PLayer, fam, inp, tap, var

    i, q, n = var("i"), var("q"), var("N")
    g = Gadget("scale", (Param("N", 1, 64),), n, 1, (PLayer(W=(tap(0),), b2=fam("B", i)),),
               fam("B", i) * inp(i, q), families={"B": (n,)})
    odd = [_liar(), Fraction(6), Fraction(2, 4, _normalize=False), Fraction(5, Liar(3))]
    layers = instantiate(g, {"N": rows}, families={"B": lambda k: odd[k % len(odd)]})
    values = [r[4] for r in layers[0].b2.rects] + [layers[0].b2.fill]
    assert all(is_canonical(v) for v in values), values
    m = Model(rows, 1, rows, 1, tuple(layers))
    want = [Fraction(5, 3), 6, Fraction(1, 2), Fraction(5, 3)]
    u = [[k + 1] for k in range(rows)]
    assert sv.evaluate(m, u) == [[want[k % 4] * (k + 1)] for k in range(rows)]
    c = Circuit(rows, 1, tuple(Gate.scale(k, want[k % 4]) for k in range(rows)), tuple(range(rows, 2 * rows)))
    assert sv.verify(m, c, method="randomized").proved and sv.verify(m, c, method="exact").proved


def test_a_boundary_that_validates_at_one_layer_and_is_cut_at_another_is_refused():
    import sys

    from symverify.kernel.ir.certificate import Boundary, Certificate

    class Shifty(Boundary):
        """At layer 2 (the last) when the rules read it, at layer 1 when the stages are cut."""

        __slots__ = ()

        @property  # type: ignore[override]
        def layer(self) -> int:
            return 2 if sys._getframe(1).f_code.co_name == "validate_certificate" else 1

        @layer.setter
        def layer(self, value: int) -> None:
            pass

    with pytest.raises(IRError, match="expected a Boundary, found Shifty \\(a subclass is not accepted\\)"):
        Certificate((Boundary(0, (Cell.node(0, 0, 0),)), Shifty(2, (Cell.node(0, 0, 0),))))

    class Shown(Certificate):
        """A certificate whose boundaries end at layer 2 when the rules read them, at layer 1 otherwise."""

        __slots__ = ()

        @property  # type: ignore[override]
        def boundaries(self) -> tuple[Boundary, ...]:
            end = 2 if sys._getframe(1).f_code.co_name == "validate_certificate" else 1
            return (Boundary(0, (Cell.node(0, 0, 0),)), Boundary(end, (Cell.node(0, 0, 0),)))

        @boundaries.setter
        def boundaries(self, value: object) -> None:
            pass

    ident, m = _doubling()
    cert = Shown((Boundary(0, (Cell.node(0, 0, 0),)), Boundary(2, (Cell.node(0, 0, 0),))))
    for method in ("compositional", "auto"):  # auto takes no such certificate either (check_form)
        with pytest.raises(IRError, match="expected a Certificate, found Shown \\(a subclass is not accepted\\)"):
            sv.verify(ident, m, certificate=cert, method=method)

    class Late(Cell):
        __slots__ = ()

    with pytest.raises(IRError, match="expected Cell objects, found Late \\(a subclass is not accepted\\)"):
        Boundary(0, (Late(0, 0, ((0, 1),)),))


# ---- subclasses of the IR's classes as sides --------------------------------------------------
def _subclass_sides():
    from symverify.kernel.ir.baseconv import Layer, Model
    from symverify.kernel.ir.butterfly import Kaleidoscope
    from symverify.kernel.ir.circuit import Circuit, Gate
    from symverify.kernel.ir.grid import Grid

    class SubCircuit(Circuit):
        pass

    class SubGate(Gate):
        pass

    class SubModel(Model):
        pass

    class SubLayer(Layer):
        pass

    class SubGrid(Grid):
        pass

    class Compiled:
        def __init__(self, model):
            self.model, self.certificate = model, None

    one = Grid.from_rows([[1]])
    layer = Layer(one, Grid.from_rows([[0]]), one, Grid.from_rows([[0]]))
    plain = Model(1, 1, 1, 1, (layer,))
    k = Kaleidoscope.identity(2)
    return {
        "circuit": (Circuit(1, 1, (Gate.mul(0, 0),), (1,)), SubCircuit(1, 1, (Gate.mul(0, 0),), (1,))),
        "gate": (Circuit(1, 1, (Gate.mul(0, 0),), (1,)), Circuit(1, 1, (SubGate(Gate.mul(0, 0).op, (0, 0)),), (1,))),
        "model": (plain, SubModel(1, 1, 1, 1, (layer,))),
        "layer": (plain, Model(1, 1, 1, 1, (SubLayer(one, Grid.from_rows([[0]]), one, Grid.from_rows([[0]])),))),
        "grid": (plain, Model(1, 1, 1, 1, (Layer(SubGrid(1, 1, 0, ((0, 1, 0, 1, 1),)), Grid.from_rows([[0]]), one,
                                                  Grid.from_rows([[0]])),))),
        "compiled": (plain, Compiled(SubModel(1, 1, 1, 1, (layer,)))),
        "kaleidoscope": (k, type("SubK", (Kaleidoscope,), {})(k.n, k.size, k.groups)),
    }


_CASES = ["circuit", "gate", "model", "layer", "grid", "compiled", "kaleidoscope"]


@pytest.mark.parametrize(("case", "method"), [(c, m) for c in _CASES for m in ("exact", "auto", "z3")]
                         + [("compiled", "compositional")])  # compositional needs a compiled side
def test_no_method_reads_a_side_holding_a_subclass_of_the_ir(case, method):
    """Only the randomized method refused a side that is or holds an instance of a subclass of the
    IR's classes (its encoding has none); the exact, z3 and compositional methods read such a side
    through its own properties, which may answer each reader differently. ``verify`` refuses it for
    every method, naming the part."""
    from symverify.kernel.provers.fingerprint import EncodingError

    plain, sub = _subclass_sides()[case]
    with pytest.raises(EncodingError, match=r"^rhs(\.model)?: expected (a Circuit, Model or Kaleidoscope|every \w[\w' ]* of type \w+) exactly, "
                                            r"found an instance of .*\(a subclass may evaluate otherwise than its fields say\)"):
        sv.verify(plain, sub, method=method)
    assert sv.verify(plain, plain, method="exact" if method == "compositional" else method).proved

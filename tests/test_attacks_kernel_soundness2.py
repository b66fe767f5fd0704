"""Adversarial inputs to the trusted kernel, second round: pairs built to be proved though they differ.

**Weights of degree 2^51 or more in a model.** The numpy layer pass of the structural bounds
(:mod:`symverify.kernel.provers.bounds_layers`) writes a weight's degree as ``+∞`` from
``EXACT_LIMIT = 2^51`` on (:func:`~symverify.kernel.provers.bound_rules.scalar_rows`), meaning "give up:
the exact pass answers". It also told zero weights from nonzero ones by ``isfinite(degree)``, so a
weight ``a^(2^61 − 1)`` was read as a structural zero, dropped from the live cells, and the pass
answered with the other side's degree. With ``D = 3`` the randomized method used the fixed prime
``p = 2^61 − 1``, where Fermat's little theorem makes ``a^p`` and ``a`` agree at every point, and
said ``proved`` (bound ``2^-118``) for ``u·a^p·u`` against ``u·a·u``. A zero weight is the one
whose degree is ``−∞``; a weight the numpy rows cannot hold now sends the whole model to the exact
pass, whose degree ``2^61 + 1`` leaves every method ``unknown``.

**A certificate cell of huge degree.** A stage whose coarse size estimate is large is re-estimated
cell by cell with the numpy rows; :func:`~symverify.kernel.provers.bound_rules.from_exact` wrote a
cell's exact degree into a float row as is, so a cell coefficient ``a^(2^1100)`` raised
``OverflowError`` (no :class:`~symverify.errors.SymverifyError`) out of ``verify``. Such a degree is
``+∞`` in a row, as in ``scalar_rows``.

Further attacks kept as regression tests (each already answered correctly): the same exponents
in circuits (exact and numpy circuit passes), rationals whose denominator is the fixed prime
``2^61 − 1`` in every grid position and in a symbolic coefficient, and multiples of that prime;
random models and circuits of ``tests/test_attacks_bounds.py`` (adversarial weights, both layer
modes, cell arrays) with one grid or every coefficient times ``a^(p − 1)``, under the exact and the
numpy bound passes, never proved unless the pair is equal.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_attacks_bounds import circuits, models

import symverify as sv
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.cellarray import CellArray
from symverify.kernel.ir.certificate import Boundary, Cell, Certificate
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Scalar, sym
from symverify.kernel.provers.bound_rules import EXACT_LIMIT, from_exact, scalar_rows
from symverify.kernel.provers.bounds import BoundRing, BoundValue, bound_rows, structure_bounds
from symverify.kernel.provers.bounds_layers import model_rows, read_rects
from symverify.kernel.provers.sides import pair_sides

M61 = 2**61 - 1
A = sym("a")
IMPULSE = Grid.zeros(2, 1).paint(0, 1, 0, 1, 1)  # h: the tap 1 at lag 0
ONE = Grid.identity(1)


def _model(where: str, w: Scalar) -> Model:
    """A one-layer ``2×1`` model whose output is ``u·w·u`` (``where`` = ``W``, or ``h``: the tap ``w``
    at lag 0), ``u·w`` (``b2``, with ``W = 1``) or ``w·u`` (``b1``, with the tap 1): ``w`` is read in
    that position."""
    full = Grid.full(2, 1, w)
    layer = {
        "W": Layer.make(2, 1, W=Grid.full(1, 1, w), h=IMPULSE),
        "h": Layer.make(2, 1, W=ONE, h=Grid.zeros(2, 1).paint(0, 1, 0, 1, w)),  # the tap w at lag 0
        "b1": Layer.make(2, 1, b1=full, h=IMPULSE),
        "b2": Layer.make(2, 1, W=ONE, b2=full),
    }[where]
    return Model(2, 1, 2, 1, (layer,))


def _bounds(lhs: object, rhs: object):  # type: ignore[no-untyped-def]
    return structure_bounds(*pair_sides(lhs, rhs))


# ---- the defect: a weight of huge degree read as zero by the numpy layer pass ---------------------


@pytest.mark.parametrize("where", ["W", "h", "b1", "b2"])
@pytest.mark.parametrize("method", ["randomized", "auto"])
def test_a_fermat_weight_in_a_model_is_never_proved(where: str, method: str) -> None:
    """``a^p`` against ``a`` with ``p = 2^61 − 1``: equal at every point mod ``p``, different
    polynomials. Was ``proved`` (degree bound 3, the fixed prime ``p``)."""
    lhs, rhs = _model(where, A**M61), _model(where, A)
    report = sv.verify(lhs, rhs, method=method, timeout=60)
    assert report.verdict is sv.Verdict.UNKNOWN, report


@pytest.mark.parametrize("where", ["W", "h", "b1", "b2"])
def test_a_fermat_weight_in_a_model_against_a_circuit_is_never_proved(where: str) -> None:
    """The same difference between a model and the circuit it does not compute."""
    u0, u1 = 0, 1  # inputs %0, %1; %2 = a
    if where in ("W", "h"):  # u·a·u
        circuit = Circuit(2, 1, (Gate.const(A), Gate.mul(u0, 2), Gate.mul(3, u0), Gate.mul(u1, 2), Gate.mul(5, u1)), (4, 6))
    else:  # a·u
        circuit = Circuit(2, 1, (Gate.const(A), Gate.mul(u0, 2), Gate.mul(u1, 2)), (3, 4))
    assert sv.verify(_model(where, A), circuit, method="exact").verdict is sv.Verdict.PROVED  # the circuit is right for a
    report = sv.verify(_model(where, A**M61), circuit, method="randomized", timeout=60)
    assert report.verdict is sv.Verdict.UNKNOWN, report


@pytest.mark.parametrize("where", ["W", "h", "b1", "b2"])
@pytest.mark.parametrize("exponent", [2**51 - 1, 2**51, M61, 2**64 + 1, 2**200])
def test_the_degree_bound_covers_a_weight_of_any_degree(where: str, exponent: int) -> None:
    """``D`` is at least the weight's degree, below, at and beyond the numpy pass's limit ``2^51``."""
    b = _bounds(_model(where, A**exponent), _model(where, A))
    assert b.degree >= exponent
    assert b.peak_degree >= exponent


@settings(max_examples=40, deadline=None)
@given(st.integers(2**50, 2**70), st.sampled_from(["W", "h", "b1", "b2"]))
def test_the_degree_bound_covers_random_huge_exponents(exponent: int, where: str) -> None:
    assert _bounds(_model(where, A**exponent), _model(where, 1)).degree >= exponent


def test_the_numpy_layer_pass_gives_up_on_a_weight_it_cannot_hold() -> None:
    """A weight of degree ``≥ 2^51`` has the degree ``+∞`` in its row (not zero's ``−∞``); the numpy
    pass returns None (the exact pass answers) instead of dropping it as a zero."""
    assert scalar_rows([A**M61])[0, 0] == float("inf") and A**M61 != 0
    m = _model("W", A**M61)
    rows = model_rows(m.layers, read_rects(m.layers), 2, 1, 2, 1, scalar_rows, 3, 1, None)
    assert rows is None
    small = _model("W", A**5)
    rows = model_rows(small.layers, read_rects(small.layers), 2, 1, 2, 1, scalar_rows, 3, 1, None)
    assert rows is not None and rows[0][0, 0] == 7  # u·a^5·u: still answered by the numpy pass
    assert scalar_rows([A ** (int(EXACT_LIMIT) - 1)])[0, 0] == EXACT_LIMIT - 1  # a finite degree below the limit


def test_a_fermat_weight_deep_in_a_model_is_never_proved() -> None:
    """The weight in the first of many layers (the numpy pass's windows): ``unknown``."""
    rest = (Layer.make(2, 1, W=ONE, b2=Grid.full(2, 1, 1)),) * 50

    def deep(w: Scalar) -> Model:
        return Model(2, 1, 2, 1, (Layer.make(2, 1, W=Grid.full(1, 1, w), h=IMPULSE), *rest))

    assert _bounds(deep(A**M61), deep(A)).degree >= M61
    assert sv.verify(deep(A**M61), deep(A), method="randomized", timeout=60).verdict is sv.Verdict.UNKNOWN


# ---- regression: attacks already answered ----------------------------------------------------------


def _chain(c: Scalar, length: int) -> Circuit:
    """``((u·c) + u + … + u)·u``: ``length`` additions, so the circuit has ``length + 3`` gates."""
    gates = [Gate.const(c), Gate.mul(0, 1)]
    gates += [Gate.add(2 + i, 0) for i in range(length)]
    gates.append(Gate.mul(2 + length, 0))
    return Circuit(1, 1, tuple(gates), (len(gates),))


@pytest.mark.parametrize("length", [0, 2200])  # the exact circuit pass, then the numpy one (≥ 2048 gates)
def test_a_fermat_constant_in_a_circuit_is_never_proved(length: int) -> None:
    lhs, rhs = _chain(A**M61, length), _chain(A, length)
    assert _bounds(lhs, rhs).degree >= M61
    for method in ("randomized", "auto"):
        assert sv.verify(lhs, rhs, method=method, timeout=60).verdict is sv.Verdict.UNKNOWN


@pytest.mark.parametrize("where", ["W", "h", "b1", "b2"])
@pytest.mark.parametrize("pair", ["inverse", "inverse_sym", "multiple", "multiple_sym"])
def test_the_fixed_prime_in_a_weight_is_refuted(where: str, pair: str) -> None:
    """``1/p``, ``a/p``, ``p`` and ``p·a`` for ``p = 2^61 − 1`` against the weight 0 (``h``: the
    tap 1 plus the weight, against the tap 1): a denominator divisible by the fixed prime excludes
    it, a multiple of it is no zero. Refuted, with a counterexample that re-checks."""
    w = {"inverse": Fraction(1, M61), "inverse_sym": Fraction(1, M61) * A, "multiple": M61, "multiple_sym": M61 * A}[pair]
    lhs, rhs = _model(where, w), _model(where, 0)
    for method in ("randomized", "auto", "exact"):
        report = sv.verify(lhs, rhs, method=method, timeout=60)
        assert report.verdict is sv.Verdict.REFUTED, (method, report)


# ---- a certificate cell of huge degree: the stage size estimate -------------------------------------


@pytest.mark.parametrize("degree", [2**51, 2**53 + 1, 2**1100])
def test_from_exact_gives_a_degree_it_cannot_hold_as_infinity(degree: int) -> None:
    """``from_exact`` wrote the degree as given: a float rounds ``2^53 + 1`` down and ``2^1100``
    raised ``OverflowError`` in :func:`bound_rows`; from ``2^51`` on the row's degree is ``+∞``, on
    which a numpy pass gives up, as in :func:`scalar_rows`."""
    row = from_exact((degree, 0, 1, 0, 1))
    assert row[0] == float("inf")
    assert bound_rows([[BoundValue((degree, 0, 1, 0, 1), BoundRing(1))]])[0, 0] == float("inf")
    assert from_exact((int(EXACT_LIMIT) - 1, 0, 1, 0, 1))[0] == EXACT_LIMIT - 1  # exact below the limit


def test_a_certificate_cell_of_huge_degree_is_checked_not_crashed() -> None:
    """A boundary at layer 0 whose cell claims ``a^E·u + u + Σ(u − u) − a^E·u`` (that is ``u``, with
    ``E = 2^1100`` and 250 000 terms, so the stage's coarse size estimate asks for the refined one):
    the refined estimate converted the cell's degree to a float and raised ``OverflowError`` out
    of ``verify``. The certificate is right, so the pair is proved."""
    circuit = Circuit(1, 1, (Gate.const(A), Gate.mul(0, 1)), (2,))
    compiled = sv.compile(circuit)
    cert = compiled.certificate
    huge = A ** (2**1100)
    terms = ((0, huge), (0, 1)) + ((0, 1), (0, -1)) * 125_000 + ((0, -huge),)
    forged = Certificate((cert.boundaries[0], Boundary(0, (Cell(0, 0, terms, 0),), "huge"), *cert.boundaries[1:]))
    report = sv.verify(circuit, compiled.model, certificate=forged, method="compositional", timeout=120)
    assert report.verdict is sv.Verdict.PROVED, report


# ---- random models and circuits with a Fermat factor ------------------------------------------------

Z = sym("z")
FERMAT = A ** (M61 - 1)  # a^(p−1) ≡ 1 mod p = 2^61 − 1 wherever a ≢ 0


def _times(w: Scalar, f: Scalar) -> Scalar:
    return w * f if not (type(w) is int and w == 0) else w


def _scaled_grid(g: Grid, f: Scalar) -> Grid:
    """``g`` with its fill and every rectangle's value times ``f`` (a cell array: its exact cells)."""
    if isinstance(g.rects, CellArray):
        arr = g.rects
        extra = [(i, j, _times(v, f)) for i, j, v in arr.extra]
        return Grid(g.rows, g.cols, 0, CellArray.from_parts(arr.rows.tolist(), arr.cols.tolist(), arr.vals.tolist(), extra))
    return Grid(g.rows, g.cols, _times(g.fill, f), tuple((r0, r1, c0, c1, _times(v, f)) for r0, r1, c0, c1, v in g.rects))


def _scaled_model(m: Model, f: Scalar, at: int) -> Model:
    """``m`` with the grid number ``at`` (layer-major, in the order W, b1, h, b2) scaled by ``f``."""
    layers = list(m.layers)
    k, which = divmod(at % (4 * len(layers)), 4)
    grids = [layers[k].W, layers[k].b1, layers[k].h, layers[k].b2]
    grids[which] = _scaled_grid(grids[which], f)
    layers[k] = Layer(*grids, layers[k].mode)
    return Model(m.n, m.d, m.inner_n, m.inner_d, tuple(layers), m.name)


def _scaled_circuit(c: Circuit, f: Scalar) -> Circuit:
    """``c`` with every coefficient times ``f``."""
    gates = tuple(g if g.op is Op.MUL else Gate(g.op, g.args, tuple(_times(x, f) for x in g.coeffs)) for g in c.gates)
    return Circuit(c.n, c.d, gates, c.outputs, c.name)


def _never_proved_unless_equal(lhs: Circuit | Model, rhs: Circuit | Model, symbolic: Circuit | Model) -> None:
    """``lhs`` is ``symbolic`` at ``z = a^(p−1)``: the randomized method may prove ``lhs ≡ rhs`` only
    when ``symbolic ≡ rhs`` (``symbolic − rhs`` has a-degree below ``p − 1``, so distinct powers of
    ``z`` stay apart after the substitution: the difference vanishes only where it is 0)."""
    report = sv.verify(lhs, rhs, method="randomized", timeout=60)
    if report.verdict is sv.Verdict.PROVED:
        assert sv.verify(symbolic, rhs, method="exact", timeout=60).verdict is sv.Verdict.PROVED, report


_SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@_SETTINGS
@given(models(), st.integers(0, 11))
def test_random_models_with_a_fermat_factor_are_never_proved(forced: str, m: Model, at: int) -> None:
    _never_proved_unless_equal(_scaled_model(m, FERMAT, at), m, _scaled_model(m, Z, at))


@_SETTINGS
@given(circuits())
def test_random_circuits_with_a_fermat_factor_are_never_proved(forced: str, c: Circuit) -> None:
    _never_proved_unless_equal(_scaled_circuit(c, FERMAT), c, _scaled_circuit(c, Z))


@pytest.mark.parametrize("flags", [[], ["-O"]])
def test_the_engine_prime_limit_and_trial_count_checks_survive_python_O(tmp_path, flags):
    """The randomized prover checked that the plan's primes fit the engine (a torch trial with a
    prime ≥ 2^31 overflows int64 products) and that a trial count exists with ``assert``, which
    ``python -O`` (and ``PYTHONOPTIMIZE``, passed on to script processes) removes. A plan beyond the
    torch engine's limit is a ProverError with and without -O, never trials run under it."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import dataclasses
        import symverify as sv
        from symverify.errors import ProverError
        from symverify.kernel.provers import randomized as R
        from symverify.kernel.ir.circuit import Circuit, Gate
        c = Circuit(1, 1, (Gate.mul(0, 0),), (1,))
        m = sv.compile(c, method="dense").model
        real = R.choose_engine
        def beyond(*a, **k):
            name, why, plan = real(*a, **k)
            return "torch", why, dataclasses.replace(plan, bits=40, fixed=None)
        R.choose_engine = beyond
        try:
            r = sv.verify(c, m, method="randomized", backend="torch")
        except ProverError as e:
            print("refused" if "beyond the torch engine" in str(e) else f"other: {e}")
        else:
            print("ran", r.verdict)
    """)
    (tmp_path / "attack.py").write_text(code, encoding="utf-8")
    out = subprocess.run([sys.executable, *flags, str(tmp_path / "attack.py")], capture_output=True, text=True, cwd=tmp_path,
                         timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "refused", (out.stdout, out.stderr[-2000:])

"""Attacks on the randomized and modular provers and their engines, third round.

Each test builds a pair and tries to get ``proved`` for one that does not hold, a stated failure
bound below the documented one, a ``refuted`` whose difference is not real, or an error where a
verdict is due.

**A sparse ``W`` larger than a dense grid may be.** The python engine's tensor form of a model
(:func:`~symverify.kernel.provers.modular.model_mod_batch`) converted every ``W`` to a dense
``d'×d'`` array before reading it, even for the few column updates of a sparse ``W``. A model whose
state ``N'·d'`` is within ``MAX_CELLS`` but whose ``d'²`` is not (``N' = 1``, ``d' = 4096``,
``W = I``) made ``verify`` with the default method, and ``method="randomized"`` on the python
engine, raise :class:`~symverify.errors.LimitError` (``Grid.to_rows``) for a pair that ``exact``
proves in a fraction of a second. A sparse ``W`` is now read by its nonzero cells only, and a
dense-looking one too large to materialise runs as column updates as well.

**The torch engine made every ``W`` dense.** Its plans (:mod:`symverify.kernel.engines.plan`) hold
each ``W`` as a dense ``d'×d'`` int64 tensor, whatever its sparsity and with no limit: with
``N' = 16``, ``d' = 2^15`` and ``W = I`` (a state of ``2^19`` cells) the default method chose torch
by its cost model and asked for 8 GiB (a :class:`~symverify.errors.LimitError` telling to run
"in smaller batches", or the machine's memory); at ``d' = 2^16``, 32 GiB. The torch engine now
does not run a model whose ``d'²`` exceeds ``MAX_CELLS`` (the largest dense grid symverify
materialises): ``auto`` takes the python engine and says why, ``backend="torch"`` is a
:class:`~symverify.errors.UsageError`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.errors import UsageError
from symverify.ir import limits
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import sym
from symverify.kernel.provers import randomized as rz
from symverify.kernel.provers.bounds import structure_bounds
from symverify.kernel.provers.modular import BatchModRing, eval_mod_batch
from symverify.kernel.provers.sides import as_side
from symverify.kernel.semantics.evaluate import eval_model
from symverify.kernel.semantics.rings import FractionRing

M61 = 2**61 - 1


# ---- the defect: a sparse W beyond MAX_CELLS ------------------------------------------------------


def _wide(d: int, W: Grid) -> Model:
    """``N' = 1``, ``d'`` = ``d``: one layer ``(u·W) ⊙ u`` (the impulse ``h = e_0`` in every column)."""
    return Model(1, d, 1, d, (Layer.make(1, d, W=W, h=Grid.zeros(1, d).paint(0, 1, 0, d, 1)),))


def _squares(d: int, first: Any = 1) -> Circuit:
    """``y_0 = first·u_0²`` and ``y_j = u_j²`` for ``j ≥ 1``."""
    gates = [Gate.mul(j, j) for j in range(d)] + [Gate.scale(d, first)] + [Gate.scale(d + j, 1) for j in range(1, d)]
    return Circuit(1, d, tuple(gates), tuple(range(2 * d, 3 * d)))


def _residue(x: Any) -> int:
    x = Fraction(x)
    return x.numerator * pow(x.denominator, -1, M61) % M61


@pytest.fixture
def small_cells(monkeypatch: pytest.MonkeyPatch) -> int:
    """``MAX_CELLS = 1024``: a ``64×64`` W (4096 cells) is over it, a ``1×64`` state is not."""
    monkeypatch.setattr(limits, "MAX_CELLS", 1024)
    return 64


@pytest.mark.parametrize("method", ["auto", "randomized"])
def test_a_sparse_w_beyond_max_cells_is_decided_not_refused(small_cells: int, method: str) -> None:
    d = small_cells
    m = _wide(d, Grid.identity(d).paint(0, 1, 0, 1, Fraction(3, 7)))
    kw = {"backend": "python"} if method == "randomized" else {}
    proved = sv.verify(m, _squares(d, Fraction(3, 7)), method=method, timeout=120, **kw)
    assert proved.verdict is sv.Verdict.PROVED, proved
    wrong = sv.verify(m, _squares(d), method=method, timeout=120, **kw)  # entry 0 is 3/7·u_0², not u_0²
    assert wrong.verdict is sv.Verdict.REFUTED, wrong
    assert wrong.counterexample is not None and wrong.counterexample.cell == (0, 0)


def test_a_dense_w_beyond_max_cells_runs_as_column_updates(small_cells: int) -> None:
    """More than ``2·d'`` nonzeros (the matmul form) in a ``W`` over ``MAX_CELLS``: the residues are
    those of exact evaluation, cell by cell."""
    d = small_cells
    W = Grid.zeros(d, d)
    for j in range(d):  # three nonzeros per column: 3·d' > 2·d'
        W = W.paint(j, j + 1, j, j + 1, j + 2).paint((j + 1) % d, (j + 1) % d + 1, j, j + 1, -1)
        W = W.paint((j + 5) % d, (j + 5) % d + 1, j, j + 1, Fraction(1, j + 3))
    m = _wide(d, W)
    u = [[(7 * j + 3) % 101 - 50 for j in range(d)]]
    side = as_side(m)
    got = eval_mod_batch(side, [u], BatchModRing([M61], [{}]))[0]
    exact = eval_model(m, u, FractionRing({}))
    assert got == [[_residue(x) for x in row] for row in exact]


def test_the_torch_engine_does_not_make_a_w_dense_beyond_max_cells(small_cells: int,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    d = small_cells
    m = _wide(d, Grid.identity(d))
    with pytest.raises(UsageError, match=r"backend='torch' .*: 64×64 = 4096 cells for the model \(1×64\), more than MAX_CELLS = 1024"):
        sv.verify(m, _squares(d), method="randomized", backend="torch", timeout=120)
    monkeypatch.setattr(rz, "TORCH_MIN_COST", 0)  # auto would otherwise pick python for its size alone
    a, b = as_side(m), as_side(_squares(d))
    name, why, _ = rz.choose_engine(a, b, structure_bounds(a, b), "auto", Fraction(1, 2**100))
    assert name == "python" and "64×64 = 4096 cells" in why, why
    report = sv.verify(m, _squares(d), method="randomized", timeout=120)
    assert report.verdict is sv.Verdict.PROVED and report.evidence["backend"].startswith("python"), report
    monkeypatch.setattr(limits, "MAX_CELLS", 1 << 22)  # within the limit the torch engine runs it
    assert sv.verify(m, _squares(d), method="randomized", backend="torch", timeout=120).verdict is sv.Verdict.PROVED


_WEIGHTS = st.one_of(st.integers(-3, 3), st.sampled_from([2**70 + 1, -(2**61 - 1), Fraction(5, 2**61 - 1), Fraction(-7, 3),
                                                          sym("a"), sym("a") * sym("b") - Fraction(1, 3)]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), cells=st.sampled_from([1024, 1 << 22]), mode=st.sampled_from(["causal", "cyclic"]))
def test_both_projection_forms_give_the_exact_residues(monkeypatch: pytest.MonkeyPatch, data: st.DataObject, cells: int,
                                                       mode: str) -> None:
    """Random ``W`` (sparse or with more than ``2·d'`` nonzeros: the matmul form within
    ``MAX_CELLS``, column updates beyond it) with symbolic and rational weights, at several points
    each with its own prime and parameters: every residue is the exact value's."""
    monkeypatch.setattr(limits, "MAX_CELLS", cells)
    d = 40  # d'² = 1600: over a MAX_CELLS of 1024, within 2^22
    W = Grid.zeros(d, d)
    for _ in range(data.draw(st.integers(0, 3 * d), label="nonzeros")):
        i, j = data.draw(st.integers(0, d - 1)), data.draw(st.integers(0, d - 1))
        W = W.paint(i, i + 1, j, j + 1, data.draw(_WEIGHTS))
    h = Grid.zeros(2, d).paint(0, 1, 0, d, 1).paint(1, 2, 0, d // 2, data.draw(_WEIGHTS))
    m = Model(1, d, 2, d, (Layer.make(2, d, W=W, h=h, b1=Grid.zeros(2, d).paint(0, 1, 3, 4, data.draw(_WEIGHTS)),
                                      mode=mode),))
    primes = [2**89 - 1, 2**31 - 1, 1_000_000_007]  # none divides a denominator of _WEIGHTS
    params = [{"a": data.draw(st.integers(-5, 5)), "b": data.draw(st.integers(-5, 5))} for _ in primes]
    points = [[[data.draw(st.integers(-9, 9)) for _ in range(d)]] for _ in primes]
    names = {k: v for k, v in params[0].items() if k in m.params()}
    got = eval_mod_batch(as_side(m), points, BatchModRing(primes, [{k: v % p for k, v in ps.items() if k in names}
                                                                   for p, ps in zip(primes, params)]))
    for t, (p, ps, u) in enumerate(zip(primes, params, points)):
        exact = eval_model(m, u, FractionRing({k: v for k, v in ps.items() if k in names}))
        assert got[t] == [[Fraction(x).numerator * pow(Fraction(x).denominator, -1, p) % p for x in row] for row in exact]

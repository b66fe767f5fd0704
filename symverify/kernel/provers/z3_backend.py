"""The *z3* method (docs/theory.md §5): decide ``∃u, θ: lhs(u, θ) ≠ rhs(u, θ)`` over the reals.

Both sides are built as z3 real terms through the one interpreter (inputs and weight parameters
are real variables). ``unsat`` means the two polynomial maps agree on all of ``R^V``, hence are
equal as polynomials: ``proved``. ``sat`` gives a model; when its values are rational it is
re-checked exactly and reported, otherwise the small-integer search runs (the maps differ, so a
rational counterexample exists). The model's confirmation is held to the limits as every
method's is (:func:`~symverify.kernel.provers.counterexample.confirm_in_time`: values past
``GUARD_BITS`` under a timeout in a child limited to the time left and the memory limit, none past
``MAX_CONFIRM_BITS``); a stop there or in the search is ``unknown``, with the ``sat`` and the stop
in its note. ``unknown`` or a timeout is ``unknown``. Meant for small
instances and cross-checks: large sides are refused by a size guard (the z3
solver is fast only when both sides share structure).

Guards: a side costing more than :data:`MAX_Z3_COST` operations, or a certified degree bound above
:data:`MAX_Z3_DEGREE`, is refused (``unknown``) before z3 sees it; z3 itself runs in a child
process (:func:`symverify.kernel.provers.guard.run_limited`) under the exact method's memory limit and the
deadline, because z3 can exhaust memory or crash (a segmentation fault on ``x^(2^61−1)``) in ways
that would otherwise take the caller's process down. ``sat`` without a counterexample that
re-checks exactly is ``unknown`` (the evidence says z3 found the sides different).
"""

from __future__ import annotations

import time
from fractions import Fraction
from typing import Any, ClassVar

from symverify.errors import BackendUnavailableError
from symverify.ir.bigint import show_int
from symverify.kernel.ir.scalar import Scalar, Sym
from symverify.kernel.provers import outcome
from symverify.kernel.provers.counterexample import (
    MAX_CONFIRM_BITS,
    confirm_in_time,
    search_or_stop,
    stopped_note,
    value_bits,
)
from symverify.kernel.provers.options import DeadlineExceededError, Options
from symverify.kernel.provers.outcome import MethodResult
from symverify.kernel.provers.sides import Side

__all__ = ["Z3Ring", "run_z3", "MAX_Z3_COST", "MAX_Z3_DEGREE"]

MAX_Z3_COST = 20_000
MAX_Z3_DEGREE = 64
_GRACE = 0.5  # seconds the child may run past the deadline before it is killed (z3's own timeout fires first)


def _z3() -> Any:
    try:
        import z3
    except ImportError:
        raise BackendUnavailableError("the z3 method needs z3-solver: pip install z3-solver") from None
    return z3


class Z3Ring:
    """z3 real terms; parameters are real constants named ``p_<name>``; a parameter power
    ``a^e`` in a coefficient is one z3 power term, of constant size whatever ``e``."""

    falsy_is_zero: ClassVar[bool] = False

    def __init__(self, params: dict[str, Any]) -> None:
        self.z3 = _z3()
        self.params = params
        self.zero = self.z3.RealVal(0)

    def _q(self, x: int | Fraction) -> Any:
        from symverify.ir.bigint import rational_to_str

        return self.z3.RealVal(rational_to_str(Fraction(x), bounded=False))  # exact at any size

    def coerce(self, x: Scalar) -> Any:
        if isinstance(x, Sym):
            total = None
            for mono, c in x.terms:
                term = self._q(c)
                for name, e in mono:  # one power term: a chain of e products would be e terms long
                    term = term * self.params[name] if e == 1 else term * self.params[name] ** e
                total = term if total is None else total + term
            return total
        return self._q(x)

    def reduce(self, x: Any) -> Any:
        return x


def _rational(z3: Any, v: Any) -> Fraction | None:
    if z3.is_rational_value(v):
        return Fraction(v.numerator_as_long(), v.denominator_as_long())
    if z3.is_int_value(v):
        return Fraction(v.as_long())
    return None


def run_z3(lhs: Side, rhs: Side, opts: Options, *, degree: int = 1) -> MethodResult:
    """The z3 method; see the module docstring."""
    _z3()  # BackendUnavailableError here, in the caller's process
    cost = lhs.cost() + rhs.cost()
    if cost > MAX_Z3_COST:
        return outcome.unknown("z3", {"cost": cost, "max_cost": MAX_Z3_COST},
                            notes=(f"refused: {cost} operations exceed the z3 size guard ({MAX_Z3_COST})",))
    if degree > MAX_Z3_DEGREE:
        return outcome.unknown("z3", {"degree_bound": degree, "max_degree": MAX_Z3_DEGREE},
                            notes=(f"refused: the certified degree bound {show_int(degree)} exceeds the z3 degree guard ({MAX_Z3_DEGREE})",))
    from symverify.kernel.provers.guard import run_limited

    remaining = opts.remaining()
    lim = run_limited(_solve, (lhs, rhs, opts, degree), memory=opts.memory(),
                      timeout=None if remaining is None else max(remaining, 0.0) + _GRACE, what="the z3 query")
    if lim.status != "ok":
        return outcome.unknown("z3", {"ran": "subprocess", "memory_limit": opts.memory()},
                            notes=(f"z3 stopped ({lim.status}): {lim.detail}",))
    res: MethodResult = lim.value
    return res


def _solve(lhs: Side, rhs: Side, opts: Options, degree: int) -> MethodResult:
    """z3 on both sides (runs in the guarded child process)."""
    z3 = _z3()
    try:
        return _decide(z3, lhs, rhs, opts, degree)
    except DeadlineExceededError:
        return outcome.unknown("z3", {"result": "timeout"}, notes=("timeout: the deadline passed while z3 terms were built",))
    except z3.Z3Exception as e:
        return outcome.unknown("z3", {"result": "error"}, notes=(f"z3 failed: {e}",))


def _decide(z3: Any, lhs: Side, rhs: Side, opts: Options, degree: int) -> MethodResult:
    start = time.perf_counter()
    names = sorted(lhs.params() | rhs.params())
    params = {k: z3.Real(f"p_{k}") for k in names}
    xs = [[z3.Real(f"x{i * lhs.d + j}") for j in range(lhs.d)] for i in range(lhs.n)]
    ring = Z3Ring(params)
    a, b = lhs.evaluate(xs, ring, opts.checker()), rhs.evaluate(xs, ring, opts.checker())
    diffs = [x != y for ra, rb in zip(a, b) for x, y in zip(ra, rb) if not x.eq(y)]
    ev: dict[str, Any] = {"logic": "nonlinear real arithmetic", "disequalities": len(diffs), "ran": "subprocess"}
    if not diffs:
        return outcome.proved("z3", {**ev, "result": "syntactically equal terms"},
                            timings={"solve": time.perf_counter() - start})
    solver = z3.Solver()
    remaining = opts.remaining()
    if remaining is not None:
        if remaining <= 0:
            return outcome.unknown("z3", ev, notes=("timeout: the deadline passed while z3 terms were built",))
        solver.set("timeout", max(1, int(remaining * 1000)))
    solver.add(z3.Or(diffs))
    res = solver.check()
    secs = time.perf_counter() - start
    if res == z3.unsat:
        return outcome.proved("z3", {**ev, "result": "unsat"}, timings={"solve": secs})
    if res != z3.sat:
        return outcome.unknown("z3", {**ev, "result": str(res), "reason": solver.reason_unknown()},
                            notes=(f"z3 returned {res}: {solver.reason_unknown()}",), timings={"solve": secs})
    model = solver.model()
    u = [[_rational(z3, model.eval(x, model_completion=True)) for x in row] for row in xs]
    ps = {k: _rational(z3, model.eval(v, model_completion=True)) for k, v in params.items()}
    cex, stops, sizes = None, [], None
    try:
        from symverify.kernel.provers.bounds import structure_bounds

        bounds = structure_bounds(lhs, rhs, deadline=opts.checker())
        sizes = (bounds.peak_height_bits, bounds.peak_degree)  # the search's too
        if all(x is not None for row in u for x in row) and all(v is not None for v in ps.values()):
            bits = value_bits(u, ps, max(degree, bounds.peak_degree), bounds.peak_height_bits)
            if bits <= MAX_CONFIRM_BITS:  # held to the deadline and the memory limit as every confirmation
                cex = confirm_in_time(lhs, rhs, u, ps, "z3 model", opts, bits, check=opts.checker())  # type: ignore[arg-type]
    except DeadlineExceededError as e:  # the timeout, or the confirmation child's memory limit or crash
        stops.append(stopped_note(opts, e, "while z3's model was confirmed by exact evaluation"))
    if cex is None:
        try:
            cex = search_or_stop(lhs, rhs, opts, found_by="z3 (search after an irrational model)", degree=degree,
                                 sizes=sizes)
        except DeadlineExceededError as e:
            stops.append(stopped_note(opts, e, "while a counterexample was searched for"))
    if cex is None:
        why = "; ".join(stops) or "no counterexample small enough to re-check exactly was found"
        return outcome.unknown("z3", {**ev, "result": "sat"}, notes=(f"z3 found the sides different (sat), but {why}",),
                               timings={"solve": secs})
    return outcome.refuted("z3", {**ev, "result": "sat"}, cex, timings={"solve": secs})

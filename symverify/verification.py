"""``verify(lhs, rhs)``: decide whether two polynomial maps of one ``n×d`` shape are equal.

Sides are circuits, BaseConv models, kaleidoscope matrices or compiled objects, in any
combination (:mod:`symverify.provers.sides`). Methods (THEORY §5): ``exact`` (flint) and
``exact-sympy``, ``compositional`` (stage certificates), ``randomized`` (Schwartz–Zippel with a
stated bound), ``z3``, and ``auto``: a one-trial randomized pre-check (a mismatch refutes at once),
then ``compositional`` when a certificate is present, else ``exact`` when the certified expansion
estimate is small, else ``randomized``. A difference is a ``refuted`` report whose counterexample
has been re-checked by exact Fraction evaluation (a failed re-check raises :class:`ProverError`);
exceptions are only for malformed input. The randomized method runs on one of two engines (Python
ints mod primes ``≥ 2^61``, or torch int64 mod fresh 31-bit primes on batches of points; see
:mod:`symverify.provers.randomized`) and the report names the one used. ``numeric=`` adds the float
executor's cross-check against exact evaluation (THEORY §5 *numeric*): never a proof, it does not
change the verdict.

>>> from symverify.ir.circuit import Circuit, Gate
>>> square = Circuit(1, 1, (Gate.mul(0, 0),), (1,))
>>> str(verify(square, square, method="exact").verdict)
'proved'
"""

from __future__ import annotations

import random
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from symverify.errors import IRError, ProverError, SymverifyError
from symverify.ir.certificate import Certificate
from symverify.ir.scalar import Sym, as_scalar
from symverify.provers.bounds import Bounds, structure_bounds
from symverify.provers.certified import certified_pair, run_compositional
from symverify.provers.counterexample import confirm, recheck, search
from symverify.provers.exact import IN_PROCESS_MONOMIALS, run_exact
from symverify.provers.options import DEFAULT_ERROR_BOUND, DEFAULT_MAX_MONOMIALS, DeadlineExceededError, Options
from symverify.provers.outcome import (
    Counterexample,
    MethodResult,
    NumericSide,
    NumericSummary,
    UsageError,
    Verdict,
    jsonable,
)
from symverify.provers.randomized import run_randomized
from symverify.provers.sides import Side, pair_sides
from symverify.provers.z3_backend import run_z3

__all__ = ["verify", "Report", "Verdict", "Counterexample", "NumericSummary", "METHODS", "AUTO_EXACT_MONOMIALS",
           "NUMERIC_POINTS"]

METHODS = ("auto", "exact", "exact-sympy", "compositional", "randomized", "z3")
AUTO_EXACT_MONOMIALS = IN_PROCESS_MONOMIALS
NUMERIC_POINTS = 2
_NUMERIC_DTYPES = ("float64", "float32", "bfloat16")


@dataclass(frozen=True)
class Report:
    """The outcome of :func:`verify`.

    ``verdict`` is ``proved``/``refuted``/``unknown``; ``method`` names the method that decided;
    ``evidence`` holds what the method measured (monomials compared; stages checked; for
    randomized the engine ``backend``, the primes ``p``, ``k``, ``D`` and the bound);
    ``lhs``/``rhs`` the side statistics (circuit stats, model signature and parameter counts);
    ``timings`` seconds per phase; ``numeric`` the float cross-check when ``verify(numeric=...)``
    asked for one (never part of the verdict).
    """

    verdict: Verdict
    method: str
    evidence: Mapping[str, Any] = field(default_factory=dict)
    counterexample: Counterexample | None = None
    lhs: Mapping[str, Any] = field(default_factory=dict)
    rhs: Mapping[str, Any] = field(default_factory=dict)
    timings: Mapping[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    seed: int = 0
    numeric: NumericSummary | None = None

    @property
    def proved(self) -> bool:
        return self.verdict is Verdict.PROVED

    @property
    def refuted(self) -> bool:
        return self.verdict is Verdict.REFUTED

    def __repr__(self) -> str:
        """Verdict, method and the one-line summary; ``str()`` and ``to_json()`` give everything."""
        return f"Report({self.verdict.value}, method={self.method!r}, {self._summary()[:300]!r})"

    def _summary(self) -> str:
        ev = self.evidence
        if self.verdict is Verdict.REFUTED and self.counterexample is not None:
            return f"counterexample {self.counterexample}"
        if "stages_total" in ev:
            return f"{ev.get('stages_checked')}/{ev.get('stages_total')} certificate stages checked"
        if "bound" in ev:
            pts = f" × {ev['points_per_trial']} points" if "points_per_trial" in ev else ""
            return (f"k={ev.get('k')} trials{pts} mod p={ev.get('p')} ({ev.get('backend')}), "
                    f"degree ≤ {ev.get('degree_bound')}, error ≤ {ev.get('bound')}")
        if "monomials_compared" in ev:
            return f"{ev['monomials_compared']} monomials compared ({ev.get('backend')}, {ev.get('ran')})"
        if "result" in ev:
            return f"z3: {ev['result']}"
        return ""

    def __str__(self) -> str:
        total = self.timings.get("total", 0.0)
        head = f"{self.verdict.value.upper()} by {self.method} [{total:.3g} s]"
        lines = [head]
        summary = self._summary()
        if summary:
            lines.append(f"  {summary}")
        if self.counterexample is not None and self.counterexample.stage:
            lines.append(f"  first failing stage: {self.counterexample.stage}")
        if self.numeric is not None:
            lines.append(f"  {self.numeric}")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        from symverify._version import __version__

        return {
            "format": "symverify.report",
            "version": 1,
            "symverify": __version__,
            "verdict": self.verdict.value,
            "method": self.method,
            "evidence": jsonable(self.evidence),
            "counterexample": None if self.counterexample is None else self.counterexample.to_json(),
            "lhs": jsonable(self.lhs),
            "rhs": jsonable(self.rhs),
            "timings": {k: round(v, 6) for k, v in self.timings.items()},
            "notes": list(self.notes),
            "seed": self.seed,
            "numeric": None if self.numeric is None else self.numeric.to_json(),
        }


def _backend(method: str, backend: str | None) -> tuple[str, str]:
    """``(exact engine, randomized engine)`` from ``verify``'s ``backend=``."""
    if method == "exact-sympy":
        if backend not in (None, "sympy"):
            raise UsageError(f"method 'exact-sympy' uses the sympy backend; found backend={backend!r}")
        return "sympy", "auto"
    if backend in ("torch", "python"):
        if method != "randomized":
            raise UsageError(f"backend={backend!r} picks the randomized engine: it applies to method 'randomized' only, "
                             f"found method {method!r}")
        return _backend(method, None)[0], backend
    if backend is None:
        from symverify.semantics.poly import flint_available

        return ("flint" if flint_available() else "sympy"), "auto"
    if backend not in ("flint", "sympy"):
        raise UsageError(f"backend: expected 'flint' or 'sympy' (exact engines), or 'torch' or 'python' (randomized "
                         f"engines, method 'randomized' only), found {backend!r}")
    return backend, "auto"


def _numeric_dtype(numeric: object) -> str | None:
    """The dtype ``verify(numeric=...)`` asks for (None: no cross-check)."""
    if numeric is None or numeric is False:
        return None
    dtype = "float64" if numeric is True else numeric
    if not (isinstance(dtype, str) and dtype in _NUMERIC_DTYPES):
        raise UsageError(f"numeric: expected False, True or one of {', '.join(map(repr, _NUMERIC_DTYPES))}, found {numeric!r}")
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        from symverify.executors._torch import require_torch

        require_torch()  # BackendUnavailableError with the install hint
    return dtype


def _numeric(a: Side, b: Side, dtype: str, seed: int) -> NumericSummary:
    """Both sides' float executors at :data:`NUMERIC_POINTS` seeded small-rational inputs (entries
    and weights ``i/q``, ``|i| ≤ 4``, ``q ∈ {1, 2, 3}``), each against exact evaluation of that side."""
    from symverify.executors import numeric_check

    rng = random.Random(f"symverify-numeric-{seed}")

    def q() -> Fraction:
        return Fraction(rng.randint(-4, 4), rng.choice((1, 2, 3)))

    u = [[[q() for _ in range(a.d)] for _ in range(a.n)] for _ in range(NUMERIC_POINTS)]
    params = {name: q() for name in sorted(a.params() | b.params())}
    sides, skipped = [], []
    for name, side in (("lhs", a), ("rhs", b)):
        if side.kind not in ("model", "circuit"):
            skipped.append(f"{name} {side.kind}: no float executor")
            continue
        try:
            chk = numeric_check(side.obj, u, dtype=dtype, params=params)
        except SymverifyError as e:  # e.g. a weight beyond float64's range: report it, keep the verdict
            skipped.append(f"{name} {side.kind}: {e}")
            continue
        sides.append(NumericSide(name, side.kind, chk.path, chk.device, chk.max_abs_err, chk.max_rel_err, chk.tolerance, chk.ok))
    return NumericSummary(dtype, NUMERIC_POINTS, tuple(sides), tuple(skipped))


def _describe(side: Side) -> dict[str, Any]:
    if side.kind == "circuit" and len(side.obj.gates) > 50_000:
        c = side.obj
        return {"kind": "circuit", "name": c.name, "n": c.n, "d": c.d, "size": c.size, "outputs": len(c.outputs),
                "symbols": sorted(side.params())}
    return side.describe()


class _Bounds:
    """The structural bounds, computed on first use (compositional rarely needs them)."""

    def __init__(self, a: Side, b: Side, timings: dict[str, float], deadline: float | None = None) -> None:
        self.a, self.b, self.timings, self.deadline = a, b, timings, deadline
        self.value: Bounds | None = None

    def __call__(self) -> Bounds:
        if self.value is None:
            t = time.perf_counter()
            self.value = structure_bounds(self.a, self.b, deadline=self.deadline)
            self.timings["bounds"] = time.perf_counter() - t
        return self.value  # type: ignore[return-value]

    def degree(self) -> int:
        return self().degree


def _auto(a: Side, b: Side, opts: Options, get: _Bounds) -> MethodResult:
    bounds = get()
    pre = run_randomized(a, b, opts, bounds, method="randomized (pre-check)", tag="pre", max_trials=1)
    if pre.verdict is Verdict.REFUTED or pre.evidence.get("sides_differ_mod_p"):
        # A mismatch mod p shows the sides differ: never go on to look for a proof. Without a
        # counterexample small enough to re-check, the answer is unknown with that evidence.
        return pre
    notes: tuple[str, ...] = ()
    if certified_pair(a, b) is not None:
        try:
            comp = run_compositional(a, b, opts, degree=get.degree)
        except IRError as e:  # the certificate does not fit this circuit: decide by another method
            notes = (f"compositional was skipped: the certificate does not fit the circuit ({e})",)
        else:
            if comp.verdict is not Verdict.UNKNOWN:
                return comp
            # The certificate did not check and no counterexample was found: decide by another method,
            # and say why in the report.
            notes = (f"compositional was inconclusive: {comp.evidence.get('failure', 'certificate not checked')}",)
            notes += tuple(f"compositional: {n}" for n in comp.notes)
    if bounds.peak_monomials <= AUTO_EXACT_MONOMIALS:
        res = run_exact(a, b, opts, bounds)
        if res.verdict is not Verdict.UNKNOWN:
            return replace(res, notes=notes + res.notes)
        notes += tuple(f"exact: {n}" for n in res.notes)
    res = run_randomized(a, b, opts, bounds)
    return replace(res, notes=notes + res.notes)


def _kaleidoscope_matrix(a: Side, b: Side, opts: Options) -> MethodResult | None:
    """Kaleidoscope vs linear circuit: compare exact matrices (:mod:`symverify.provers.matrix`)."""
    pair = (a, b) if a.kind == "kaleidoscope" else (b, a)
    k, c = pair
    if k.kind != "kaleidoscope" or c.kind != "circuit" or not c.obj.is_linear():
        return None
    try:
        from symverify.provers.matrix import verify_circuit
    except ImportError:
        return None
    check = verify_circuit(k.obj, c.obj)
    ev = {"n": check.n, "size": check.size, "width": check.width, "compared": "exact n×n matrices"}
    if check.proved:
        return MethodResult(Verdict.PROVED, "exact-matrix", ev)
    cex = search(a, b, opts, found_by="exact-matrix")
    if cex is None and check.first_difference is not None:  # column j differs: the unit input e_j may separate
        j = check.first_difference[1]
        u = [[1 if i * a.d + col == j else 0 for col in range(a.d)] for i in range(a.n)]
        cex = confirm(a, b, u, {name: 0 for name in a.params() | b.params()}, found_by="exact-matrix")
    if cex is None:  # the entries differ as polynomials in the weights: let the generic methods find a point
        return None
    return MethodResult(Verdict.REFUTED, "exact-matrix", {**ev, "first_difference": str(check.first_difference)}, cex)


def _run(method: str, a: Side, b: Side, opts: Options, get: _Bounds) -> MethodResult:
    if method in ("auto", "exact"):
        fast = _kaleidoscope_matrix(a, b, opts)
        if fast is not None:
            return fast
    if method == "auto":
        return _auto(a, b, opts, get)
    if method in ("exact", "exact-sympy"):
        return run_exact(a, b, opts, get())
    if method == "compositional":
        return run_compositional(a, b, opts, degree=get.degree)
    if method == "randomized":
        return run_randomized(a, b, opts, get())
    return run_z3(a, b, opts, degree=get().degree)


def verify(lhs: Any, rhs: Any, *, method: str = "auto", seed: int | None = 0, trials: int | None = None,
           timeout: float | None = None, certificate: Certificate | None = None, backend: str | None = None,
           max_monomials: int | None = None, memory_limit: int | None = None,
           error_bound: Fraction | None = None, isolate: bool | None = None, numeric: bool | str = False) -> Report:
    """Decide ``lhs ≡ rhs`` (every output entry, as polynomials in the inputs and weights).

    Args:
        lhs, rhs: circuits, models, kaleidoscopes or compiled objects (``.model``, ``.certificate``).
        method: one of :data:`METHODS`.
        seed: seeds every random choice (randomized points, primes, counterexample candidates);
            ``None`` draws a fresh seed from the operating system (recorded in the report), so the
            randomized bound is over points nobody chose in advance.
        trials: at least this many randomized trials; the method always runs enough for
            ``error_bound`` (a smaller ``trials`` never weakens the bound).
        timeout: seconds; when it runs out the verdict is ``unknown``.
        certificate: a stage certificate for the model side (method ``compositional``/``auto``).
        backend: ``'flint'`` (default when installed) or ``'sympy'`` for exact expansion; for
            method ``randomized`` also ``'torch'`` (int64 mod fresh primes in ``[2^30, 2^31)``,
            batches of points) or ``'python'`` (Python ints mod primes ``≥ 2^61``) to force its
            engine. Unset, randomized uses torch when it is installed, both sides are models or
            circuits, the certified degree ``D`` gives ``D/2^30 ≤ 2^-10`` and one evaluation costs
            at least ``TORCH_MIN_COST`` operations (:func:`symverify.provers.randomized.choose_engine`).
        max_monomials: the exact method's cap on any one expanded polynomial; a certified estimate
            of more than 64× this many live monomials is refused without expanding.
        memory_limit: bytes of address space for the isolated exact expansion (default: ¼ of RAM).
        error_bound: the randomized target bound (default ``2^-100``).
        isolate: force (True) or forbid (False) the memory-limited subprocess for ``exact``.
        numeric: after deciding, run the float executor (``True``: float64; or ``'float64'``,
            ``'float32'``, ``'bfloat16'``) on both sides at seeded small-rational inputs and compare
            with exact evaluation (``report.numeric``). A cross-check of the executor, never a
            proof: it never changes the verdict (an executor error above its bound adds a note).

    Raises:
        ShapeError: the sides have different shapes (both are named).
        IRError: an argument is not a verifiable object, or a certificate is malformed.
        UsageError: an unknown method, backend or ``numeric`` value, ``compositional`` without a
            certificate, or ``backend='torch'`` where the torch engine cannot run.
        BackendUnavailableError: ``backend='torch'`` or ``numeric`` without torch installed.
        ProverError: a counterexample failed its exact re-check (a prover bug).
    """
    t0 = time.perf_counter()
    if method not in METHODS:
        raise UsageError(f"method: expected one of {', '.join(METHODS)}; found {method!r}")
    a, b = pair_sides(lhs, rhs, certificate)
    exact_engine, modular_engine = _backend(method, backend)
    numeric_dtype = _numeric_dtype(numeric)
    if seed is None:
        seed = secrets.randbits(63)
    if type(seed) is not int:
        raise UsageError(f"seed: expected an int (or None for fresh randomness), found {seed!r}")
    for name, val, least in (("max_monomials", max_monomials, 0), ("memory_limit", memory_limit, 1)):
        if val is not None and (type(val) is not int or val < least):
            raise UsageError(f"{name}: expected an int ≥ {least}, found {val!r}")
    if error_bound is not None:
        eb = as_scalar(error_bound, "error_bound")
        if isinstance(eb, Sym) or not 0 < eb < 1:
            raise UsageError(f"error_bound: expected a number strictly between 0 and 1, found {error_bound!r}")
    if timeout is not None and not (isinstance(timeout, (int, float)) and timeout > 0):
        raise UsageError(f"timeout: expected a positive number of seconds, found {timeout!r}")
    opts = Options(
        seed=seed,
        trials=trials,
        deadline=None if timeout is None else time.monotonic() + timeout,
        backend=exact_engine,
        max_monomials=DEFAULT_MAX_MONOMIALS if max_monomials is None else max_monomials,
        memory_limit=memory_limit,
        error_bound=DEFAULT_ERROR_BOUND if error_bound is None else Fraction(error_bound),
        isolate=isolate,
        modular=modular_engine,
    )
    if trials is not None and (type(trials) is not int or trials < 1):
        raise UsageError(f"trials: expected a positive int, found {trials!r}")
    timings: dict[str, float] = {}
    stats = {"lhs": _describe(a), "rhs": _describe(b)}
    if opts.expired():
        res = MethodResult(Verdict.UNKNOWN, method, notes=(f"timeout: {timeout} s ran out before any method started",))
    else:
        get = _Bounds(a, b, timings, opts.deadline)
        t = time.perf_counter()
        try:
            res = _run(method, a, b, opts, get)
        except DeadlineExceededError:
            res = MethodResult(Verdict.UNKNOWN, method, notes=(f"timeout: {timeout} s ran out before {method} decided",))
        timings["method"] = time.perf_counter() - t - timings.get("bounds", 0.0)
        if get.value is not None:
            res = replace(res, evidence={**res.evidence, "structure": get.value.to_json()})
    if res.verdict is Verdict.REFUTED and res.counterexample is None and opts.expired():
        res = replace(res, verdict=Verdict.UNKNOWN,
                      notes=(*res.notes, "the sides differ, but the timeout ran out before a counterexample was found"))
    if res.verdict is Verdict.PROVED and res.failure_bound > opts.error_bound:
        raise ProverError(f"method {res.method} reported 'proved' with failure bound {res.failure_bound}, above the "
                          f"requested error_bound {opts.error_bound}")
    cex = res.counterexample
    if res.verdict is Verdict.REFUTED:
        if cex is None:
            raise ProverError(f"method {res.method} reported 'refuted' without a counterexample that re-checks")
        t = time.perf_counter()
        cex = recheck(a, b, cex)
        timings["recheck"] = time.perf_counter() - t
    summary, notes = None, res.notes
    if numeric_dtype is not None:
        t = time.perf_counter()
        summary = _numeric(a, b, numeric_dtype, seed)
        timings["numeric"] = time.perf_counter() - t
        if not summary.passed:
            notes = (*notes, "numeric cross-check: the float executor exceeded its own error bound (an executor bug; "
                     "the verdict does not rest on it)")
    timings.update({f"method.{k}": v for k, v in res.timings.items()})
    timings["total"] = time.perf_counter() - t0
    return Report(res.verdict, res.method, res.evidence, cex, stats["lhs"], stats["rhs"], timings, notes, seed, summary)

"""``verify(lhs, rhs)``: decide whether two polynomial maps of one ``n×d`` shape are equal.

Sides are circuits, BaseConv models, kaleidoscope matrices or compiled objects, in any
combination (:mod:`symverify.kernel.provers.sides`). Methods (docs/theory.md §5) are the provers of
:mod:`symverify.kernel.provers.registry`, one interface for all: ``exact`` (flint) and ``exact-sympy``,
``compositional`` (stage certificates), ``randomized`` (Schwartz–Zippel with a stated bound),
``z3``, and ``auto``: ``compositional`` when a certificate is present, else a one-trial
randomized pre-check (a mismatch refutes at once), then ``exact`` when the certified expansion
estimate is small, else ``randomized``. ``verify`` checks its arguments
(:meth:`~symverify.kernel.provers.options.Options.from_call`), runs the named prover under the deadline,
and enforces the rules of docs/trusted-base.md on its result. A difference is a ``refuted`` report
whose counterexample has been re-checked by exact Fraction evaluation (a failed re-check raises
:class:`ProverError`); exceptions are only for malformed input. The randomized method runs on one of two engines (Python
ints mod primes ``≥ 2^61``, or torch int64 mod fresh 31-bit primes on batches of points; see
:mod:`symverify.kernel.provers.randomized`) and the report names the one used. ``numeric=`` adds the float
executor's cross-check against exact evaluation (docs/theory.md §5 *numeric*): never a proof, it does not
change the verdict.

>>> from symverify.kernel.ir.circuit import Circuit, Gate
>>> square = Circuit(1, 1, (Gate.mul(0, 0),), (1,))
>>> str(verify(square, square, method="exact").verdict)
'proved'
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from symverify.deadline import DeadlineExceededError
from symverify.errors import IRError, ProverError
from symverify.kernel.ir.baseconv import Model
from symverify.kernel.ir.butterfly import Kaleidoscope
from symverify.kernel.ir.certificate import Certificate
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.memo import checked_scope
from symverify.kernel.ir.scalar import plain_str
from symverify.kernel.provers import outcome
from symverify.kernel.provers.certified import meta_circuit_note
from symverify.kernel.provers.counterexample import recheck, stopped_note, value_bits
from symverify.kernel.provers.exact import bits_text
from symverify.kernel.provers.fingerprint import checked_digest
from symverify.kernel.provers.options import CERTIFICATE_METHODS, METHODS, Method, Options
from symverify.kernel.provers.outcome import (
    Counterexample,
    MethodResult,
    NumericSummary,
    Sealed,
    UsageError,
    Verdict,
    check_seal,
    fields_text,
    jsonable,
    seal,
)
from symverify.kernel.provers.registry import AUTO_EXACT_MONOMIALS, LazyBounds, prover_for, run_prover
from symverify.kernel.provers.sides import CircuitSide, Side, pair_sides
from symverify.kernel.semantics.straightline import program

if TYPE_CHECKING:
    from distributed import Client

__all__ = ["verify", "Verifiable", "Report", "Verdict", "Counterexample", "NumericSummary", "METHODS", "Method", "AUTO_EXACT_MONOMIALS",
           "NUMERIC_POINTS"]

NUMERIC_POINTS = 2


@dataclass(frozen=True)
class Report(Sealed):
    """The outcome of :func:`verify`.

    ``verdict`` is ``proved``/``refuted``/``unknown`` (a :class:`Verdict`, which has no truth value:
    the properties ``proved`` and ``refuted`` give it as booleans, and a report itself has none); ``method`` names
    the method that decided; ``evidence`` holds what the method measured (monomials compared;
    stages checked; for randomized the engine ``backend``, the primes ``p``, ``k``, ``D`` and the
    bound); ``counterexample`` the exactly re-checked :class:`Counterexample` of a ``refuted``
    verdict (else ``None``); ``lhs``/``rhs`` the side statistics (circuit stats, model signature
    and parameter counts) and each side's ``digest``, the SHA-256 of its exact content
    (:func:`side_digest`); ``timings`` seconds per phase; ``notes`` what the methods reported on the
    way (a fallback, where a timeout struck); ``seed`` the seed the random choices used (the drawn
    one for ``verify(seed=None)``); ``numeric`` the float cross-check when ``verify(numeric=...)``
    asked for one (never part of the verdict). ``str()`` and :meth:`to_json` give everything.
    ``timings`` is left out of ``==`` (and the hash), as out of the seal: two runs of the same
    check, here and on Dask, compare equal; the times are still pickled, shown and serialised.
    A report is hashable: its hash is that of the fields ``==`` compares but the mappings (``evidence``,
    ``lhs``, ``rhs``, which are dicts), so equal reports hash alike and a set of reports keeps one of each.
    Copies, deep copies and pickles are rebuilt by the constructor, seal included
    (:class:`~symverify.kernel.provers.outcome.Sealed`): one of a report changed after ``verify``
    made it raises :class:`~symverify.errors.ProverError`.
    """

    verdict: Verdict
    method: str
    evidence: Mapping[str, Any] = field(default_factory=dict, hash=False)
    counterexample: Counterexample | None = None
    lhs: Mapping[str, Any] = field(default_factory=dict, hash=False)
    rhs: Mapping[str, Any] = field(default_factory=dict, hash=False)
    timings: Mapping[str, float] = field(default_factory=dict, compare=False)
    notes: tuple[str, ...] = ()
    seed: int = 0
    numeric: NumericSummary | None = None
    failure_bound: Fraction = Fraction(0)
    """The exact probability that a ``proved`` is wrong: 0 for an exact argument, the stated bound
    ``ε`` of the randomized method (``evidence["bound"]`` shows it rounded up to ``2^x``)."""
    _seal: str = field(default="", repr=False, compare=False)
    SEALED: ClassVar[tuple[str, ...]] = ("evidence", "lhs", "rhs", "notes", "seed", "numeric")

    def __post_init__(self) -> None:
        """Only :func:`verify` makes a ``Report`` (its seal binds the verdict, the method, the
        failure bound, the counterexample and every other field it shows or records but its timings:
        the evidence, the sides' statistics, the notes, the seed and the numeric cross-check;
        :mod:`symverify.kernel.provers.outcome`): one built by hand, or one with one of them replaced
        (``dataclasses.replace``) or changed in place, raises :class:`~symverify.errors.ProverError`."""
        check_seal(self, "Report", self.verdict, self.method, self.failure_bound, self.counterexample, "verify")

    @property
    def proved(self) -> bool:
        return self.verdict is Verdict.PROVED

    @property
    def refuted(self) -> bool:
        return self.verdict is Verdict.REFUTED

    def __bool__(self) -> bool:
        """A report has no truth value: ``assert sv.verify(a, b)`` would pass on a refutation."""
        raise TypeError(
            f"the truth value of a Report is ambiguous (this one is {self.verdict.value}); use report.proved "
            "or report.refuted, or symverify.testing.assert_proved(a, b) / assert_refuted(a, b) in tests"
        )

    def _repr_html_(self) -> str:
        """A compact HTML table for notebooks (:func:`symverify.viz.html.report_html`)."""
        from symverify.viz.html import report_html

        return report_html(self)

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
                    f"degree ≤ {_show_value(ev.get('degree_bound'))}, error ≤ {ev.get('bound')}, seed {self.seed}")
        if "monomials_compared" in ev:
            return f"{ev['monomials_compared']} monomials compared ({ev.get('backend')}, {ev.get('ran')})"
        if "result" in ev:
            return f"z3: {ev['result']}"
        return ""

    def __str__(self) -> str:
        return self.text()

    def text(self, timings: bool = True) -> str:
        """What ``str()`` shows; ``timings=False`` leaves out the time, for text that must be the
        same in every run (proof-script details, golden files)."""
        total = self.timings.get("total", 0.0)
        head = f"{self.verdict.value.upper()} by {self.method}" + (f" [{total:.3g} s]" if timings else "")
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
            "failure_bound": jsonable(self.failure_bound),
        }


def side_digest(side: Side) -> str:
    """``"sha256:<hex>"``, the SHA-256 fingerprint of the side's exact content
    (:func:`~symverify.kernel.provers.fingerprint.fingerprint`: an injective encoding of every gate,
    coefficient, weight and size; not its name, nor its certificate, nor any address or float). Equal
    digests mean equal sides; the digest is the same on every machine, run and seed. The side is
    :func:`verify`'s, checked when it was read (:func:`~symverify.kernel.provers.sides.as_side`), so
    it is hashed without a second snapshot (:func:`~symverify.kernel.provers.fingerprint.checked_digest`)."""
    return checked_digest(side.obj)


def _describe(side: Side) -> dict[str, Any]:
    """The side's statistics for the report, with its :func:`side_digest` (``"digest"``: so two
    claims about different sides of equal statistics are told apart); a circuit of more than
    50 000 gates gets its sizes only (its full measures cost more than they tell)."""
    match side:
        case CircuitSide(obj=c) if len(c.gates) > 50_000:
            ops = program(c).ops  # one byte per gate, 0 for a constant: the size without a pass over the gates
            stats = {"kind": "circuit", "name": c.name, "n": c.n, "d": c.d, "size": len(ops) - ops.count(0),
                     "outputs": len(c.outputs), "symbols": sorted(side.params())}
        case _:
            stats = side.describe()
    return {**stats, "digest": side_digest(side)}


def _settle(res: MethodResult, opts: Options) -> MethodResult:
    """Enforce the failure-bound rule again on every result (docs/trusted-base.md): ``proved`` with a
    failure bound above ``error_bound`` is a prover bug (:class:`ProverError`). A ``refuted``
    always carries a counterexample: ``outcome.refuted`` is the only door to one, it refuses none,
    and the frozen, sealed ``MethodResult`` cannot lose it; :func:`verify` re-checks it."""
    if res.verdict is Verdict.PROVED and res.failure_bound > opts.error_bound:
        raise ProverError(f"method {res.method} reported 'proved' with failure bound {res.failure_bound}, above the "
                          f"requested error_bound {opts.error_bound}")
    return res


def _rechecked(a: Side, b: Side, res: MethodResult, opts: Options, timings: dict[str, float],
               bounds: LazyBounds) -> tuple[MethodResult, Counterexample | None]:
    """A ``refuted`` result's counterexample, re-evaluated with exact Fractions
    (:func:`~symverify.kernel.provers.counterexample.recheck` raises :class:`ProverError` if it does not hold),
    within the timeout: one whose values may exceed ``GUARD_BITS`` bits (its claimed values, or by the size
    bounds where the method computed them) is re-evaluated in a child limited to the time left, and
    once that has run out the result is ``unknown``, never ``refuted``."""
    cex = res.counterexample
    if res.verdict is not Verdict.REFUTED or cex is None:
        return res, cex
    t = time.perf_counter()
    bits = max(Fraction(x).numerator.bit_length() + Fraction(x).denominator.bit_length()
               for x in (cex.lhs_value, cex.rhs_value))
    if bounds.value is not None:
        sz = bounds.value
        bits = max(bits, value_bits(cex.inputs, cex.param_dict(), max(sz.degree, sz.peak_degree), sz.peak_height_bits))
    try:
        return res, recheck(a, b, cex, opts, bits)
    except DeadlineExceededError as e:
        note = stopped_note(opts, e, "while the counterexample was re-checked by exact evaluation")
        return outcome.unknown(res.method, res.evidence, notes=(*res.notes, note), timings=res.timings), None
    finally:
        timings["recheck"] = time.perf_counter() - t


def _cross_check(a: Side, b: Side, opts: Options, timings: dict[str, float],
                 notes: tuple[str, ...]) -> tuple[NumericSummary | None, tuple[str, ...]]:
    """The float executors' cross-check when ``numeric=`` asked for one
    (:func:`symverify.executors.cross_check`, at :data:`NUMERIC_POINTS` points): never part of the
    verdict; an executor error above its own bound adds a note.

    It runs within the call's timeout (skipped, with a note, once that has run out, and stopped
    between sides), and only where exact evaluation at its points is affordable by the size
    bounds (:func:`~symverify.kernel.provers.counterexample.affordable` with the peak height and degree
    of :func:`~symverify.kernel.provers.bounds.structure_bounds`): a constant squared 64 times is never
    evaluated exactly. A value beyond the float format's range is reported, never raised."""
    if opts.numeric is None:
        return None, notes
    from symverify.executors import cross_check

    t = time.perf_counter()
    skip = _numeric_skip(a, b, opts)
    if skip is not None:
        timings["numeric"] = time.perf_counter() - t
        return None, (*notes, f"numeric cross-check skipped: {skip}")
    try:
        runs = cross_check([("lhs", a.kind, a.obj), ("rhs", b.kind, b.obj)], a.n, a.d, a.params() | b.params(),
                           dtype=opts.numeric, seed=opts.seed, points=NUMERIC_POINTS, check=opts.checker())
    except DeadlineExceededError:
        timings["numeric"] = time.perf_counter() - t
        return None, (*notes, "numeric cross-check stopped: the timeout ran out")
    summary = NumericSummary.of(opts.numeric, NUMERIC_POINTS, runs)
    timings["numeric"] = time.perf_counter() - t
    if summary.passed is False:  # None: nothing was compared, no executor error seen
        notes = (*notes, "numeric cross-check: the float executor exceeded its own error bound (an executor bug; "
                 "the verdict does not rest on it)")
    return summary, notes


TORCH_IMPORT_SECONDS = 5.0
"""The numeric cross-check is skipped when torch is not yet imported and less time than this is left."""


def _show_value(x: Any) -> str:
    """An evidence value for people: integers abbreviated (:func:`~symverify.ir.bigint.show_int`)."""
    from symverify.ir.bigint import show_int

    return show_int(x) if isinstance(x, int) and not isinstance(x, bool) else str(x)


def _numeric_skip(a: Side, b: Side, opts: Options) -> str | None:
    """Why the numeric cross-check cannot run within the timeout and size budget, or None."""
    from symverify.kernel.provers.bounds import structure_bounds
    from symverify.kernel.provers.counterexample import MAX_CONFIRM_BITS, affordable

    if opts.expired():
        return "the timeout had run out"
    remaining = opts.remaining()
    if "torch" not in sys.modules and remaining is not None and remaining < TORCH_IMPORT_SECONDS:
        return "importing torch (seconds, not interruptible) would not fit in the time left"
    try:
        bounds = structure_bounds(a, b, deadline=opts.checker())
    except DeadlineExceededError:
        return "the timeout ran out while sizing the exact evaluation"
    point = [[Fraction(4, 3)]]  # the numeric points' entries are i/q with |i| ≤ 4, q ≤ 3
    if not affordable(point, {}, max(bounds.degree, bounds.peak_degree), bounds.peak_height_bits):
        return (f"exact evaluation at its points could need values of more than {MAX_CONFIRM_BITS} bits "
                f"(coefficients of up to {bits_text(bounds.peak_height_bits)} bits, degree up to "
                f"{bits_text(max(bounds.degree, bounds.peak_degree))})")
    return None


class CompiledLike(Protocol):
    """A compiled object: its ``.model`` (and, when it has one, its ``.certificate``) is the side."""

    @property
    def model(self) -> Model: ...


class FactorizationLike(Protocol):
    """A kaleidoscope factorization: its ``.kaleidoscope`` is the side."""

    @property
    def kaleidoscope(self) -> Kaleidoscope: ...


Verifiable = Circuit | Model | Kaleidoscope | CompiledLike | FactorizationLike
"""What :func:`verify` compares (anything else raises :class:`~symverify.errors.IRError`)."""


def verify(lhs: Verifiable, rhs: Verifiable, *, method: Method = "auto", seed: int | None = 0, trials: int | None = None,
           timeout: float | None = None, certificate: Certificate | None = None, backend: str | None = None,
           max_monomials: int | None = None, memory_limit: int | None = None,
           error_bound: Fraction | None = None, isolate: bool | None = None, numeric: bool | str = False,
           scheduler: str | Client | None = None, progress: bool | None = None) -> Report:
    """Decide ``lhs ≡ rhs`` (every output entry, as polynomials in the inputs and weights).

    Args:
        lhs, rhs: circuits, models, kaleidoscopes or compiled objects (``.model``, ``.certificate``).
        method: one of :data:`METHODS` (the provers in :data:`symverify.kernel.provers.registry.PROVERS`).
        seed: seeds every random choice (randomized points, primes, counterexample candidates);
            ``None`` draws a fresh seed from the operating system (recorded in the report), so the
            randomized bound is over points nobody chose in advance.
        trials: at least this many randomized trials; the method always runs enough for
            ``error_bound`` (a smaller ``trials`` never weakens the bound); at most
            :data:`symverify.ir.limits.MAX_TRIALS` (``2^16``, a ``UsageError`` above it). Methods ``auto`` and
            ``randomized`` only (another method refuses it, like ``max_monomials`` and ``isolate``
            outside ``auto``, ``exact``, ``exact-sympy`` and ``compositional``).
        timeout: seconds, a positive int, float or ``Fraction`` (numpy's too; the rule of every
            timeout, :func:`~symverify.kernel.provers.options.timeout_seconds`), None or ``math.inf``
            for no limit; when it runs out the verdict is ``unknown``.
        certificate: a stage certificate for the model side of a circuit and a model (methods
            ``compositional`` and ``auto``; another method, or two models, refuse it: it would not be read).
            When its ``meta`` names (``"circuit"``) another circuit than the one given, the report of
            a method that reads it (``compositional``, ``auto``) says so in a note, and so does the error of a certificate that does not fit this circuit
            (:func:`~symverify.kernel.provers.certified.meta_circuit_note`); the verdict is the stages'.
        backend: ``'flint'`` (default when installed) or ``'sympy'`` for exact expansion; for
            method ``randomized`` also ``'torch'`` (int64 mod fresh primes in ``[2^30, 2^31)``,
            batches of points) or ``'python'`` (Python ints mod primes ``≥ 2^61``) to force its
            engine. Unset, randomized uses torch when it is installed, both sides are circuits or
            models whose dense ``W`` (``d'²``) is within ``MAX_CELLS``, the certified degree ``D`` gives ``D/2^30 ≤ 2^-10``, one evaluation costs
            at least ``TORCH_MIN_COST`` operations and its estimated time is the lower
            (:func:`symverify.kernel.provers.randomized.choose_engine`, :mod:`symverify.provers.engine_cost`).
        max_monomials: the exact method's cap on any one expanded polynomial; a certified estimate
            of more than 64× this many live monomials is refused without expanding.
        memory_limit: bytes of address space for the isolated exact expansion (default: ¼ of RAM).
        error_bound: the randomized target bound (default ``2^-100``), strictly between 0 and 1 and at least
            ``2^-65536`` (:data:`~symverify.ir.limits.MAX_ERROR_BITS`; a ``UsageError`` otherwise).
        isolate: force (True) or forbid (False) the memory-limited subprocess for ``exact``.
        numeric: after deciding, run the float executor (``True``: float64; or ``'float64'``,
            ``'float32'``, ``'bfloat16'``) on both sides at seeded small-rational inputs and compare
            with exact evaluation (``report.numeric``). A cross-check of the executor, never a
            proof: it never changes the verdict (an executor error above its bound adds a note);
            ``report.numeric.status`` is ``"passed"``, ``"failed"`` or ``"not run"`` (every side
            skipped: nothing compared, ``passed`` is then None).
        scheduler: run the compositional stage checks (methods ``compositional`` and ``auto``) as
            Dask tasks: ``"local"`` (a local cluster of one process per core), a scheduler's
            address (``tcp://HOST:8786``) or file, or a ``distributed.Client``; the same verdict,
            report and failing stage as without (:mod:`symverify.kernel.provers.stages_dask`; needs
            ``symverify[dask]``).
        progress: show a spinner with the elapsed time on standard error while deciding
            (:func:`symverify.progress.activity`; ``None``: when interactive, or ``SYMVERIFY_PROGRESS=1``).

    Raises:
        ShapeError: the sides have different shapes (both are named).
        IRError: an argument is not a verifiable object, or a certificate is malformed or has no
            circuit and model to go with.
        LimitError: a side has more inputs than ``MAX_INPUTS`` or a model state of more cells than
            ``MAX_CELLS`` (:mod:`symverify.ir.limits`).
        UsageError: an unknown method, backend or ``numeric`` value, a budget the method never
            reads (``trials``, ``max_monomials``, ``isolate``, ``certificate``), ``compositional`` without a
            certificate, ``backend='torch'`` where the torch engine cannot run, or a
            ``scheduler`` that is not an address, or that cannot be reached.
        BackendUnavailableError: ``backend='torch'`` or ``numeric`` without torch installed.
        ProverError: a counterexample failed its exact re-check, or a method said ``proved`` with a
            failure bound above ``error_bound`` (a prover bug).
    """
    t0 = time.perf_counter()
    method = plain_str(method)  # its characters: the prover is found by ==, the options compare it too
    prover = prover_for(method)
    if certificate is not None and method not in CERTIFICATE_METHODS:  # it would be ignored
        raise UsageError(f"certificate: only methods {' and '.join(map(repr, CERTIFICATE_METHODS))} check a stage "
                         f"certificate; found method {method!r} (a compiled object's own certificate is used where it applies)")
    opts = Options.from_call(method, seed=seed, trials=trials, timeout=timeout, backend=backend,
                             max_monomials=max_monomials, memory_limit=memory_limit, error_bound=error_bound,
                             isolate=isolate, numeric=numeric, scheduler=scheduler)
    from symverify.progress import wanted

    wanted(progress)  # a bad value is refused before any work
    # the sides are read and checked last: an option's conversion (a seed's __index__) may run the
    # caller's code, which could rewrite a side checked before it
    a, b = pair_sides(lhs, rhs, certificate)
    timings: dict[str, float] = {}
    with checked_scope(a.obj, b.obj):  # both checked when read: what the run keeps for them needs no second snapshot
        return _decide(a, b, method, prover, opts, timings, progress, t0)


def _decide(a: Side, b: Side, method: str, prover: Any, opts: Options, timings: dict[str, float], progress: bool | None,
            t0: float) -> Report:
    """:func:`verify` once its sides are read and checked and its options are."""
    from symverify.progress import activity

    stats = (_describe(a), _describe(b))
    # a certificate whose meta names another circuit: said in a note (or in the error a certificate that does not
    # fit this circuit raises), never decided on; only by a method that reads the certificate (another checks no stage)
    mismatch = meta_circuit_note(a, b) if method in CERTIFICATE_METHODS else None
    with activity(f"verifying {a.label()} against {b.label()} (method {method})", progress):
        bounds = LazyBounds(a, b, timings, opts.deadline)
        try:
            res = _settle(run_prover(method, prover, a, b, opts, timings, bounds), opts)
        except IRError as e:
            if mismatch is None or not str(e).startswith("certificate"):
                raise
            raise IRError(f"{e}; {mismatch}") from None
        res, cex = _rechecked(a, b, res, opts, timings, bounds)
        summary, notes = _cross_check(a, b, opts, timings, res.notes)
    if mismatch is not None:
        notes = (*notes, mismatch)
    timings.update({f"method.{k}": v for k, v in res.timings.items()})
    timings["total"] = time.perf_counter() - t0
    sealed = fields_text((res.evidence, stats[0], stats[1], tuple(notes), opts.seed, summary))  # Report.SEALED
    return Report(res.verdict, res.method, res.evidence, cex, stats[0], stats[1], timings, tuple(notes), opts.seed, summary,
                  res.failure_bound, seal("Report", res.verdict, res.method, res.failure_bound, cex, sealed))

"""The protocol shared by the proof scripts in ``proofs/`` and the ``symverify prove`` runner.

A proof script is a module with a ``TITLE`` (the result it proves, e.g. ``"Lemma H.16"``) and a
function ``run(quick: bool = False) -> ProofResult``. Each :class:`Instance` is one claim: its
verdict, its *kind* (what the verdict rests on), the method, the resources the construction used
and the bounds it states for them. A result is *ok* only when every instance is ok: proved by a
prover or an exact computation and within every stated bound, or argued with its checks holding.

**Typed claims.** An instance is made only by one of three constructors, one per kind
(:class:`ClaimKind`); a scan of the source tree (tests/test_one_door.py) fails on any other
``Instance(...)`` call:

* :meth:`Instance.from_report` (kind ``prover``, made no other way: ``Instance(...)`` or
  ``dataclasses.replace`` of a prover's claim is a :class:`~symverify.errors.UsageError` in a
  user's script too; :meth:`Instance.renamed` changes a name, time or detail): the verdict of a prover: a ``Report`` of
  :func:`symverify.verify`, or a check of the matrix, fragment or certificate prover; with several,
  ``refuted`` if one is, else ``unknown`` if one is, else ``proved``;
* :meth:`Instance.computed` (kind ``computed``): an exact computation in the script itself, named
  (``"exact rank over Q (Gaussian elimination) at one rational point"``); its verdict comes from
  :func:`~symverify.kernel.provers.outcome.exact_comparison`;
* :meth:`Instance.argued` (kind ``argued``): a statement the tool does not decide (a general lemma,
  a reading of a claim), citing the docs section with its hand proof; its verdict is ``unknown``
  and it is counted apart (``argued``); the script's checks of it on the instances it ran
  (``checks=``) must hold for it to be ok.

Only the ``prover`` and ``computed`` kinds count as proved. Tables, JSON, JUnit and golden runs
show the kind. Running a script alone (``python -m symverify.proofs.NAME
[--quick] [--json OUT]``) goes through :func:`script_main`, whose ``--json`` file says its
``"format": "symverify.proof-result"`` and ``"version": 2`` (the runners refuse a result file
without them, or of another version than 1 or 2; version 2 holds ``digests`` on every prover's claim).

**Methods** come from a closed set: an instance's ``method`` is one of :data:`METHOD_TOKENS` or
several joined by ``+`` (``"compositional+exact"``); free text goes in ``detail``.

**Stable JSON.** Resources and bounds are named by text and are ints (not bools), ``Fraction`` values
or finite floats, stored as plain values (a numpy integer by its value; another numpy number, a
string, NaN: :class:`~symverify.errors.UsageError` where the instance is made;
:func:`~symverify.kernel.ir.scalar.plain_resource`, the rule of every table of resources), in read-only
tables of the instance's own (an edit after it was made, ``inst.bounds["layers"] = 10**9``, is a
``TypeError``: ``ok`` and the JSON say what was checked); an argued claim's ``checks`` is ``True``, ``False`` or ``None`` (a numpy bool
is refused: ``np.False_ is not False``). They keep one JSON type per value kind: ``int`` stays an integer,
a ``Fraction`` is always its exact string (``"4/5"``, ``"3"``), a ``float`` is rounded to 6
significant digits; times are rounded to 0.1 s.

**Sharding and cases.** A script whose instances are independent, one group per case, can
declare ``SHARDABLE = True`` and loop ``for case in each(cases):``. The cases of every
:func:`each` loop of a run are numbered ``0, 1, …`` in the order they are met (a second loop goes
on from where the first stopped). ``script_main(--shard k/K)`` runs only the cases with index
``≡ k (mod K)``; ``--cases 0,3,5-9`` runs exactly those cases; ``--count-cases`` runs none and
writes ``{"cases": N}``. With a selection every instance is tagged with the index of the case it
was *made* in (an instance made outside :func:`each` with the number of cases met before it),
however it reaches the result (appended, or in a list given to or assigned to
``ProofResult.instances``), and the part's JSON says how many cases it met (``"cases"``); the
runners (``symverify prove -j N`` and the Dask backend, one task per case) merge the parts into
exactly the order of a one-process run. So a result's instances must stand in the order of the
cases that made them (:meth:`ProofResult.to_json` refuses another order in every run, sharded or
not), and every process must meet the same cases in the same order (no unseeded randomness; the
runners fix ``PYTHONHASHSEED`` so that set order agrees; ``symverify prove -j N`` makes a row whose
shards met different numbers of cases ``crashed``). Instances made outside :func:`each` are made
and kept by every part, and must not depend on the cases a part runs (a summary of the cases, or
an instance per case made after ``list(each(…))``, would see only the part's own): the runners
merge them once and make a row whose parts made different ones ``crashed`` (compared field by
field: every field the run file shows but times, ``detail``, ``counterexample`` and
``failure_bound`` included; the error names the instance and the field); so they should be cheap. A script
must also run correctly when a loop yields no case (``--count-cases``, or a shard without cases),
and must run every loop of :func:`each` to its end: leaving one in a case (``break``, ``return``,
an exception caught outside the loop) is a :class:`~symverify.errors.UsageError` in every run, since
a part that does not run that case would go on to the later ones (choose the cases before the loop).

**Sweeps.** A script that declares ``SWEEP = True`` takes its cases from a parameter grid that
``symverify sweep`` passes in the environment variable :data:`SWEEP_ENV` (JSON); it reads it with
:func:`sweep_grid`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field, replace
from enum import Enum
from fractions import Fraction
from typing import Any, Protocol

from symverify.errors import IRError, ProverError, UsageError
from symverify.ir.bigint import safe_repr, show_rational
from symverify.kernel.ir.frozen import ReadOnlyMapping
from symverify.kernel.ir.scalar import number_table
from symverify.kernel.provers.outcome import Verdict, exact_comparison, is_sealed, no_truth_value
from symverify.viz.run_format import (
    COUNTEREXAMPLE_DEPTH,
    METHOD_TOKENS,
    RESULT_FORMAT,
    RESULT_VERSION,
    count_claims,
    json_problem,
)

__all__ = ["METHOD_TOKENS", "SWEEP_ENV", "ClaimKind", "PROVED_KINDS", "Decided", "Instance", "ProofResult", "combined_digest", "count_claims",
           "each", "parse_indices", "script_main", "sweep_grid", "timed"]


PRECHECK_METHOD = "randomized (pre-check)"
"""The method of a report that ``auto``'s one-trial randomized pre-check decided (a refutation, or
``unknown`` from a mismatch modulo a prime): its claim's method is ``randomized``."""

SWEEP_ENV = "SYMVERIFY_SWEEP"
"""The environment variable through which ``symverify sweep`` passes its grid (JSON) to a ``SWEEP`` script."""


@dataclass
class _Selection:
    """Which cases of :func:`each` this process runs, and where it is."""

    chosen: Callable[[int], bool] | None = None  # None: every case
    counting: bool = False  # --count-cases: run no case
    tagged: bool = False  # write each instance's case in the JSON (a part of a run)
    seen: int = 0  # cases met so far, over every each() loop
    current: int | None = None  # the case being handled
    left: int | None = None  # the first case in which a loop of each() was left (break, return, an exception)


_STATE = _Selection()

Number = int | float | Fraction


class ClaimKind(str, Enum):
    """What an instance's verdict rests on (see the module docstring)."""

    PROVER = "prover"  # a prover's verdict: a Report, or a matrix / fragment / certificate check
    COMPUTED = "computed"  # an exact computation in the script, named in ``basis``
    ARGUED = "argued"  # a hand proof the tool does not check, cited in ``basis``

    def __str__(self) -> str:
        return self.value


_FROM_REPORT: ContextVar[bool] = ContextVar("symverify_from_report", default=False)
"""Set while :meth:`Instance.from_report` (or :meth:`Instance.renamed`) makes an instance: a prover's
claim made any other way (``Instance(...)``, ``dataclasses.replace``) is refused."""

PROVED_KINDS = frozenset({ClaimKind.PROVER, ClaimKind.COMPUTED})
"""The kinds whose ``proved`` counts as proved."""

_CITATION = re.compile(r"docs/[\w./-]+\.md § \S.*")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
"""A side's digest as ``verify`` gives it (:func:`~symverify.kernel.verification.side_digest`)."""


class Decided(Protocol):
    """What :meth:`Instance.from_report` reads: a prover's outcome with a verdict (``Report``,
    ``KaleidoscopeCheck``, ``FragmentProof``, ``CompositionalResult``)."""

    @property
    def verdict(self) -> Verdict: ...


def _outcome_types() -> tuple[type, ...]:
    """The provers' outcome classes :meth:`Instance.from_report` accepts (an object that merely has
    a ``verdict`` attribute is not a prover's outcome)."""
    from symverify.kernel.provers.compositional import CompositionalResult
    from symverify.kernel.provers.forall import ForallResult
    from symverify.kernel.provers.fragment import FragmentProof
    from symverify.kernel.provers.matrix import KaleidoscopeCheck
    from symverify.kernel.verification import Report

    return (Report, CompositionalResult, FragmentProof, KaleidoscopeCheck, ForallResult)


def _sides(outcome: Any) -> tuple[str, str] | None:
    """The (lhs, rhs) digests of what a prover's outcome is about: a ``Report``'s sides; a
    ``FragmentProof``'s and a ``CompositionalResult``'s circuit and model; a ``KaleidoscopeCheck``'s
    kaleidoscope and target; a ``ForallResult``'s statement and construction (each sealed with its
    outcome). None for an outcome that names none (a report sealed without its sides' digests, made
    by hand, not by ``verify``)."""
    from symverify.kernel.verification import Report

    if isinstance(outcome, Report):
        lhs, rhs = outcome.lhs.get("digest"), outcome.rhs.get("digest")
        return (lhs, rhs) if isinstance(lhs, str) and isinstance(rhs, str) else None
    digests: tuple[str, str] | None = outcome.digests  # every other outcome class holds them, sealed
    return digests


def combined_digest(digests: Iterable[str]) -> str:
    """One digest naming a sequence of digests in its order: ``"sha256:"`` and the SHA-256 (lowercase
    hex) of the UTF-8 text of the digests joined by a newline. Every digest is ``"sha256:"`` and 64
    hex digits, so the text determines the sequence: a change to any one of them, or to their order
    or number, changes the result. To recompute a claim's (:meth:`Instance.from_report` with
    ``one_digest``)::

        hashlib.sha256("\\n".join(d[0] for d in outcome_digests).encode()).hexdigest()

    with ``"sha256:"`` in front, for the lhs (``d[1]`` for the rhs), over its outcomes' ``(lhs, rhs)``
    digests in order (a ``KaleidoscopeCheck``'s ``digests``, a ``Report``'s sides' ``"digest"``)."""
    import hashlib

    return "sha256:" + hashlib.sha256("\n".join(digests).encode("utf-8")).hexdigest()


def _combined(sides: list[tuple[str, str] | None]) -> tuple[tuple[str, str], ...]:
    """The one ``(lhs, rhs)`` pair naming every outcome's pair in ``sides`` (:func:`combined_digest`)."""
    pairs = [p for p in sides if p is not None]
    return ((combined_digest(a for a, _ in pairs), combined_digest(b for _, b in pairs)),)


def _method(outcome: Any) -> Any:
    """The method an outcome names, as its claim shows it: a ``KaleidoscopeCheck`` that also checked
    the kaleidoscope garbage-free (``E·(x, 0) = (M·x, 0)``, its sealed ``garbage_free_checked``) and
    was decided by the matrix comparison is ``exact-matrix+garbage-free`` (one refuted by the
    garbage-free check is ``garbage-free`` already); a report of ``auto`` decided by its one-trial
    pre-check (method ``randomized (pre-check)``: a refutation, or ``unknown`` from a mismatch
    modulo a prime) is ``randomized``, the method that decided it (the words of :data:`METHOD_TOKENS`
    hold no qualifier); any other outcome, its own ``method``."""
    from symverify.kernel.provers.matrix import KaleidoscopeCheck

    method = getattr(outcome, "method", None)
    if isinstance(outcome, KaleidoscopeCheck) and outcome.garbage_free_checked and method == "exact-matrix":
        return "exact-matrix+garbage-free"
    if method == PRECHECK_METHOD:
        return "randomized"
    return method


def _garbage_free_checked(name: str, method: object, decided: tuple[Any, ...]) -> None:
    """Refuse a claim whose ``method`` (given) names ``garbage-free`` unless every outcome it rests on is a
    ``KaleidoscopeCheck`` that checked it (its sealed ``garbage_free_checked``): the word states
    ``E·(x, 0) = (M·x, 0)`` of every kaleidoscope the claim is about, as ``randomized`` states an
    error bound. A :class:`~symverify.errors.UsageError` naming the first outcome that did not."""
    from symverify.kernel.provers.matrix import KaleidoscopeCheck

    if not isinstance(method, str) or "garbage-free" not in method.split("+"):
        return
    for k, r in enumerate(decided):
        if not (isinstance(r, KaleidoscopeCheck) and r.garbage_free_checked is True):
            raise UsageError(f"instance {name!r}: method {method!r:.80}: names garbage-free, but outcome {k} (a "
                             f"{type(r).__name__}, {r.verdict.value}) did not check it; name only what every outcome checked")


def _counterexample_json(outcome: Any) -> Any:
    """The counterexample of a refuting outcome as JSON, or ``None``: a ``Report``'s (its
    ``to_json``), a ``KaleidoscopeCheck``'s first differing entry ``{"entry": [row, col],
    "found": …, "expected": …}``, a ``ForallResult``'s ``{"params": {…}, "cell": [row, col],
    "detail": …}``; a ``FragmentProof`` refutes by a difference of polynomials (its ``failure``),
    with no counterexample."""
    from symverify.kernel.provers.forall import ForallResult
    from symverify.kernel.provers.matrix import KaleidoscopeCheck
    from symverify.kernel.provers.outcome import jsonable

    if isinstance(outcome, KaleidoscopeCheck):
        if outcome.first_difference is None:
            return None
        i, j, got, want = outcome.first_difference
        return {"entry": [i, j], "found": jsonable(got), "expected": jsonable(want)}
    if isinstance(outcome, ForallResult):
        return {"params": jsonable(dict(outcome.params)), "cell": jsonable(outcome.cell), "detail": outcome.detail}
    cex = getattr(outcome, "counterexample", None)
    if cex is None:
        return None
    return cex.to_json() if callable(getattr(cex, "to_json", None)) else jsonable(cex)


@dataclass(frozen=True)
class Instance:
    """One claim of a proof script, made by :meth:`from_report`, :meth:`computed` or
    :meth:`argued` (never directly).

    ``kind`` says what the verdict rests on and ``basis`` names the exact computation
    (``computed``) or the docs section with the hand proof (``argued``: ``"docs/FILE.md §
    SECTION"``); ``checks`` is an argued claim's checks on the instances the script ran (None:
    none). A ``verdict`` that is not a :class:`Verdict`, an argued claim with a verdict, or a
    computed claim without its computation raises :class:`~symverify.errors.UsageError`.
    """

    name: str
    verdict: Verdict
    method: str
    resources: Mapping[str, Number] = field(default_factory=dict)
    """What the construction used, by name: read-only once the instance is made (a
    :class:`~symverify.kernel.ir.frozen.ReadOnlyMapping`), so ``ok`` and the JSON say what was checked."""
    bounds: Mapping[str, Number] = field(default_factory=dict)
    """The bounds the claim states for its resources: read-only as ``resources``."""
    seconds: float = 0.0
    detail: str = ""
    kind: ClaimKind = field(kw_only=True)
    basis: str = field(default="", kw_only=True)
    checks: bool | None = field(default=None, kw_only=True)
    counterexample: Any = field(default=None, kw_only=True)
    """A refutation's counterexample as JSON (:meth:`from_report` takes the deciding outcome's,
    re-checked by its prover); ``None`` elsewhere. Held as a read-only copy (objects as
    ``ReadOnlyMapping``, lists as :class:`ReadOnlyList`), so what the JSON shows is what was made.
    The proof-run JSON writes it only when present."""
    failure_bound: Fraction = field(default=Fraction(0), kw_only=True)
    """A randomized proof's error bound ``ε``, exact: the probability that its ``proved`` is wrong
    (:meth:`from_report` takes the reports' ``failure_bound``, summed over several: a union bound);
    0 for an exact argument and for a claim that is not proved. The table shows it
    (``proved (ε ≤ 2^-100.0)``), the proof-run JSON, JUnit and golden records write it as
    ``failure_bound`` when it is not 0."""
    digests: tuple[tuple[str, str], ...] = field(default=(), kw_only=True)
    """What a prover's claim is about: one ``(lhs, rhs)`` pair per outcome it was made from, in the
    order given (:meth:`from_report`): a ``Report``'s side digests
    (:func:`~symverify.kernel.verification.side_digest`, ``"sha256:…"`` of each side's exact content);
    a ``FragmentProof``'s and a ``CompositionalResult``'s circuit and model (the same digests);
    a ``KaleidoscopeCheck``'s kaleidoscope and target (a circuit's content digest, else the exact
    target matrix's); a ``ForallResult``'s gadget statement (with the ranges decided) and
    construction. ``()`` for computed and argued claims. Two claims
    about different identities with equal names, resources and bounds differ in it; the same claim
    has the same digests on every run, seed and machine. The proof-run JSON writes it, as
    ``"digests": [{"lhs": …, "rhs": …}, …]``, only when there are some; golden runs and records compare it."""

    __bool__ = no_truth_value  # no truth value: `assert outcome` would pass on refuted and unknown

    def __post_init__(self) -> None:
        if not isinstance(self.verdict, Verdict):
            raise UsageError(f"instance {self.name!r}: verdict: expected a Verdict from a prover or an exact computation "
                             f"(Instance.from_report / computed / argued), found {type(self.verdict).__name__} {self.verdict!r}")
        try:
            object.__setattr__(self, "kind", ClaimKind(self.kind))
        except ValueError:
            raise UsageError(f"instance {self.name!r}: kind: expected one of {', '.join(k.value for k in ClaimKind)}, "
                             f"found {self.kind!r}") from None
        if self.kind is ClaimKind.ARGUED and self.verdict is not Verdict.UNKNOWN:
            raise UsageError(f"instance {self.name!r}: an argued claim is not decided by the tool; its verdict must be "
                             f"unknown, found {self.verdict.value}")
        if not isinstance(self.basis, str):
            raise UsageError(f"instance {self.name!r}: basis: expected text, found {type(self.basis).__name__}")
        if self.kind is ClaimKind.ARGUED and not _CITATION.fullmatch(self.basis):
            raise UsageError(f"instance {self.name!r}: an argued claim cites the docs section with its hand proof as "
                             f"'docs/FILE.md § SECTION', found {self.basis!r}")
        if self.kind is ClaimKind.COMPUTED and not self.basis.strip():
            raise UsageError(f"instance {self.name!r}: a computed claim names its exact computation; found none")
        if not isinstance(self.name, str):
            raise UsageError(f"instance {self.name!r}: name: expected text, found {type(self.name).__name__}")
        if not isinstance(self.detail, str):
            raise UsageError(f"instance {self.name!r}: detail: expected text, found {type(self.detail).__name__}")
        for part in ("name", "detail", "basis", "method"):
            text = getattr(self, part)
            lone = _LONE_SURROGATE.search(text) if isinstance(text, str) else None
            if lone is not None:  # UTF-8 cannot hold it: the table's print and the JSON read back failed far from here
                raise UsageError(f"instance {self.name!r}: {part}: expected Unicode text, found a lone surrogate "
                                 f"\\u{ord(lone.group()):04x} at position {lone.start()}")
        secs = self.seconds
        if isinstance(secs, bool) or not isinstance(secs, (int, float)) or not 0 <= secs < math.inf:  # NaN fails too
            raise UsageError(f"instance {self.name!r}: seconds: expected a finite number ≥ 0, found "
                             f"{type(secs).__name__} {safe_repr(secs, 40)}")
        for part in ("resources", "bounds"):
            table = getattr(self, part)
            if not isinstance(table, Mapping):
                raise UsageError(f"instance {self.name!r}: {part}: expected a mapping of names to numbers, found "
                                 f"{type(table).__name__}")
            for key in table:
                if not isinstance(key, str):  # json.dump would write 1 as "1", beside a key "1"
                    raise UsageError(f"instance {self.name!r}: {part}: expected names that are text, found "
                                     f"{type(key).__name__} {safe_repr(key, 40)}")
            try:  # the one rule (NaN is never over a bound; a float32 NaN neither; "3" > 2 raises): plain values,
                # in a table of their own that cannot be changed: inst.resources["layers"] = 1 after the check
                # (or on the caller's dict) would change what ok, the table and the JSON say
                object.__setattr__(self, part, ReadOnlyMapping(number_table(table, f"instance {self.name!r}: {part}")))
            except IRError as e:
                raise UsageError(str(e)) from None
        if self.checks is not None and not isinstance(self.checks, bool):  # np.False_ is not False: it counted as holding
            raise UsageError(f"instance {self.name!r}: checks: expected True, False or None (the script's checks held, "
                             f"failed, or were not run), found {type(self.checks).__name__} {safe_repr(self.checks, 40)}"
                             + (" (pass bool(x))" if type(self.checks).__module__ == "numpy" else ""))
        if self.counterexample is not None and self.verdict is not Verdict.REFUTED:
            raise UsageError(f"instance {self.name!r}: counterexample= belongs to a refuted claim, found it on a "
                             f"{self.verdict.value} one")
        problem = "" if self.counterexample is None else json_problem(self.counterexample)
        if problem:  # what the script's JSON, and the run file, could not hold
            raise UsageError(f"instance {self.name!r}: counterexample=: expected a JSON value (finite numbers, text keys, "
                             f"nested at most {COUNTEREXAMPLE_DEPTH} deep), found {problem}")
        if self.counterexample is not None:  # a copy of its own that cannot be changed, as resources and bounds
            object.__setattr__(self, "counterexample", _frozen_json(self.counterexample, {}))
        fb = self.failure_bound
        if type(fb) is not Fraction or not 0 <= fb < 1 or (fb and not (self.verdict is Verdict.PROVED
                                                                    and self.kind is ClaimKind.PROVER)):
            raise UsageError(f"instance {self.name!r}: failure_bound: expected a Fraction in [0, 1), nonzero only on "
                             f"a prover's proved claim, found {type(fb).__name__} {safe_repr(fb, 40)} on a "
                             f"{self.verdict.value} {self.kind.value} claim")
        if fb and "randomized" not in str(self.method).split("+"):
            raise UsageError(f"instance {self.name!r}: method {self.method!r}: a claim proved by a randomized test "
                             f"(error bound {show_rational(fb)}) names it: add '+randomized'")
        digests = self.digests
        if not isinstance(digests, tuple) or not all(
                isinstance(p, tuple) and len(p) == 2 and all(isinstance(h, str) and _DIGEST.fullmatch(h) for h in p)
                for p in digests):
            raise UsageError(f"instance {self.name!r}: digests: expected a tuple of (lhs, rhs) pairs of digests "
                             f"'sha256:<64 hex digits>' (Instance.from_report takes them from its reports), found "
                             f"{safe_repr(digests, 80)}")
        if digests and self.kind is not ClaimKind.PROVER:
            raise UsageError(f"instance {self.name!r}: digests name the sides of a prover's reports; found them on a "
                             f"{self.kind.value} claim")
        object.__setattr__(self, "digests", tuple((str.__str__(a), str.__str__(b)) for a, b in digests))
        if self.kind is not ClaimKind.ARGUED and self.checks is not None:
            raise UsageError(f"instance {self.name!r}: checks= belongs to argued claims, found it on a {self.kind.value} claim")
        words = self.method.split("+") if isinstance(self.method, str) else [self.method]
        unknown = [w for w in words if w not in METHOD_TOKENS]
        if unknown:
            raise UsageError(f"instance {self.name!r}: method {self.method!r}: expected words from "
                             f"{', '.join(sorted(METHOD_TOKENS))} joined by '+'; found {', '.join(map(repr, unknown))}")
        if self.kind is ClaimKind.PROVER and not _FROM_REPORT.get():  # Instance(...) or dataclasses.replace in a script
            raise UsageError(f"instance {self.name!r}: a prover's claim is made by Instance.from_report from a prover's "
                             f"own outcome, found one ({self.verdict.value}) built directly (Instance(...) or "
                             "dataclasses.replace); to change its name, seconds or detail use inst.renamed(...)")
        # where it was made (the case of each() being handled, and the cases met before it): its tag in a part of a run
        object.__setattr__(self, "_made", (_STATE.current, _STATE.seen))

    @classmethod
    def from_report(cls, name: str, report: Decided, *more: Decided, method: str | None = None,
                    resources: Mapping[str, Number] | None = None, bounds: Mapping[str, Number] | None = None,
                    seconds: float = 0.0, detail: str = "", one_digest: bool = False) -> Instance:
        """A prover's claim: the verdict of ``report`` (with ``more``: ``refuted`` if one of them is,
        else ``unknown`` if one is, else ``proved``). ``method`` defaults to the reports' methods
        joined by ``+`` (a matrix check that also checked the kaleidoscope garbage-free adds
        ``garbage-free``, so the claim shows the fact its outcome sealed; a report ``auto``'s
        pre-check decided, ``randomized (pre-check)``, is ``randomized``); a ``method`` given that
        names ``garbage-free`` where an outcome is no matrix check that checked it is a
        :class:`~symverify.errors.UsageError`. A ``proved`` claim carries the reports' error bound ``failure_bound``: the
        sum of their randomized bounds (a union bound; 0 when every one is an exact argument); a sum
        of 1 or more states nothing, a :class:`~symverify.errors.UsageError` (ask each report for a
        smaller ``error_bound``). The claim keeps the digests every outcome names, sealed with it
        (``digests``: what it is about); an outcome whose digests were changed after it was made is
        unsealed, refused as a forged one, and one that names none (sealed by hand, not by its
        prover) is a :class:`~symverify.errors.UsageError`: a run of version 4 promises digests on
        every prover's claim. With ``one_digest`` (a claim about many objects: every permutation of
        a size) the claim names them all by one pair, ``(combined_digest(lhs digests),
        combined_digest(rhs digests))`` over its outcomes in the order given (:func:`combined_digest`),
        instead of one pair per outcome."""
        decided = (report, *more)
        outcomes = _outcome_types()
        for r in decided:
            if not isinstance(r, outcomes) or not isinstance(getattr(r, "verdict", None), Verdict):
                raise UsageError(f"instance {name!r}: expected a prover's outcome with a verdict (a Report, or a matrix, "
                                 f"fragment, certificate or ∀ check), found {type(r).__name__}")
        for r in decided:
            if not is_sealed(r):
                raise ProverError(f"instance {name!r}: this {type(r).__name__} ({r.verdict.value}) was not made by its prover "
                                  "(built by hand, or its verdict or method replaced); only a prover's own outcome counts")
        sides = [_sides(r) for r in decided]
        if None in sides:  # a run of version 4 promises digests on every prover's claim (docs/formats.md)
            r = decided[sides.index(None)]
            raise UsageError(f"instance {name!r}: this {type(r).__name__} ({r.verdict.value}) names no digests of what it "
                             "is about (made otherwise than by its prover); a prover's claim names what each of its "
                             "outcomes is about")
        refuted = [r for r in decided if r.verdict is Verdict.REFUTED]
        undecided = [r for r in decided if r.verdict is Verdict.UNKNOWN]
        deciding = refuted[0] if refuted else undecided[0] if undecided else report
        if method is not None:  # a method given names only what every outcome checked (joined, each names its own)
            _garbage_free_checked(name, method, decided)
        else:
            methods = [_method(r) for r in decided]
            if not all(isinstance(m, str) for m in methods):
                raise UsageError(f"instance {name!r}: method: the outcomes do not all name their method; pass method=")
            method = "+".join(dict.fromkeys(m for m in methods if isinstance(m, str)))
        bound = Fraction(0)
        if deciding.verdict is Verdict.PROVED:  # the union bound over the reports' randomized arguments
            bound = sum((getattr(r, "failure_bound", Fraction(0)) for r in decided), Fraction(0))
            if bound >= 1:
                raise UsageError(f"instance {name!r}: the error bounds of its {len(decided)} reports sum to "
                                 f"{show_rational(bound)} ≥ 1, which bounds nothing; verify each with a smaller error_bound")
        token = _FROM_REPORT.set(True)
        try:
            return cls(name, deciding.verdict, method, dict(resources or {}), dict(bounds or {}), seconds, detail,
                       kind=ClaimKind.PROVER, counterexample=_counterexample_json(deciding) if refuted else None,
                       failure_bound=bound,
                       digests=_combined(sides) if one_digest else tuple(p for p in sides if p is not None))
        finally:
            _FROM_REPORT.reset(token)

    def renamed(self, name: str | None = None, *, seconds: float | None = None, detail: str | None = None) -> Instance:
        """This claim under another ``name``, ``seconds`` or ``detail`` (what ``dataclasses.replace`` did,
        which now refuses a prover's claim: it could change the verdict too); its verdict, kind, method,
        resources, bounds, counterexample and digests stay. It is tagged, like a new instance, with where it is
        renamed (the case of :func:`each` being handled)."""
        token = _FROM_REPORT.set(True)
        try:
            return replace(self, name=self.name if name is None else name,
                           seconds=self.seconds if seconds is None else seconds,
                           detail=self.detail if detail is None else detail)
        finally:
            _FROM_REPORT.reset(token)

    @classmethod
    def computed(cls, name: str, holds: bool | None, computation: str, method: str, *,
                 resources: Mapping[str, Number] | None = None, bounds: Mapping[str, Number] | None = None,
                 seconds: float = 0.0, detail: str = "") -> Instance:
        """A claim decided by an exact computation in the script, named by ``computation`` (e.g.
        ``"exact rank over Q at one rational point"``): ``proved`` when ``holds`` is True,
        ``refuted`` when False, ``unknown`` when the computation did not decide (None)."""
        return cls(name, exact_comparison(holds), method, dict(resources or {}), dict(bounds or {}), seconds, detail,
                   kind=ClaimKind.COMPUTED, basis=computation)

    @classmethod
    def argued(cls, name: str, cites: str, method: str = "lemma", *, checks: bool | None = None,
               resources: Mapping[str, Number] | None = None, bounds: Mapping[str, Number] | None = None,
               seconds: float = 0.0, detail: str = "") -> Instance:
        """A statement argued by hand in the docs section ``cites`` (``"docs/FILE.md § SECTION"``),
        not decided by the tool: its verdict is ``unknown`` and it never counts as proved.
        ``checks`` are the script's checks of it on the instances it ran: False makes it not ok."""
        return cls(name, exact_comparison(None), method, dict(resources or {}), dict(bounds or {}), seconds, detail,
                   kind=ClaimKind.ARGUED, basis=cites, checks=checks)

    @property
    def proved(self) -> bool:
        """Proved by a prover or an exact computation (an argued claim never is)."""
        return self.kind in PROVED_KINDS and self.verdict is Verdict.PROVED

    def over_bound(self) -> list[str]:
        """Names of resources that exceed their stated bound (or have no value)."""
        bad = []
        for key, bound in self.bounds.items():
            val = self.resources.get(key)
            if val is None or val > bound:
                bad.append(key)
        return bad

    @property
    def ok(self) -> bool:
        """Proved and within every stated bound; an argued claim: its checks did not fail and it is
        within every stated bound."""
        if self.kind is ClaimKind.ARGUED:
            return self.checks is not False and not self.over_bound()
        return self.proved and not self.over_bound()

    def shown(self) -> tuple[dict[str, int | float | str], dict[str, int | float | str]]:
        """Resources and bounds as written (:func:`stable_number`); where 6-digit floats would
        misstate a resource against its bound (``1.0000001 > 1`` written ``1.0 > 1.0``, or a value
        rounded up past an exact bound), both are written in full, so the written values compare as
        the exact ones do."""
        res = {k: stable_number(v) for k, v in self.resources.items()}
        bounds = {k: stable_number(v) for k, v in self.bounds.items()}
        over = set(self.over_bound())
        for k in res.keys() & bounds.keys():
            r, b = self.resources[k], self.bounds[k]
            if not (isinstance(r, float) or isinstance(b, float)):
                continue  # exact values are written exactly
            shown_r = Fraction(res[k]) if isinstance(r, float) else Fraction(r)
            shown_b = Fraction(bounds[k]) if isinstance(b, float) else Fraction(b)
            if (shown_r > shown_b) != (k in over):
                res[k], bounds[k] = (r if isinstance(r, float) else res[k]), (b if isinstance(b, float) else bounds[k])
        return res, bounds

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["verdict"] = self.verdict.value
        d["kind"] = self.kind.value
        d["seconds"] = round(self.seconds, 1)
        d["resources"], d["bounds"] = self.shown()
        d["over_bound"] = self.over_bound()
        d["ok"] = self.ok
        if self.counterexample is None:
            del d["counterexample"]  # "a refutation adds counterexample"
        if self.failure_bound or (self.proved and self.kind is ClaimKind.PROVER and "randomized" in self.method.split("+")):
            d["failure_bound"] = stable_number(self.failure_bound)  # "a randomized proof adds failure_bound", exact
        else:
            del d["failure_bound"]
        if self.digests:  # "a claim made from verify's reports adds digests"
            d["digests"] = [{"lhs": lhs, "rhs": rhs} for lhs, rhs in self.digests]
        else:
            del d["digests"]
        return d

    def verdict_text(self) -> str:
        """The verdict as the table shows it: ``argued``, or the verdict with a randomized proof's
        error bound (``proved (ε ≤ 2^-100.0)``, rounded up, never understated)."""
        if self.kind is ClaimKind.ARGUED:
            return "argued"
        if self.failure_bound:
            from symverify.kernel.provers.randomized import pow2_text

            return f"{self.verdict.value} (ε ≤ {pow2_text(self.failure_bound)})"
        return self.verdict.value


class ReadOnlyList(list):  # type: ignore[type-arg]
    """A ``list`` that cannot be changed after it is made (the lists of a claim's counterexample):
    item assignment and deletion, ``append``, ``extend``, ``insert``, ``pop``, ``remove``,
    ``clear``, ``sort``, ``reverse``, ``+=`` and ``*=`` raise ``TypeError``. Being a list, it
    compares equal to a list, goes through ``json.dumps``, and pickles and copies as itself; as
    :class:`~symverify.kernel.ir.frozen.ReadOnlyMapping`, it guards against mistakes, not against
    ``list.append(x, …)``."""

    __slots__ = ()

    def __new__(cls, items: Any = (), /) -> ReadOnlyList:
        self = super().__new__(cls)
        list.extend(self, items)
        return self

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # the items were set by __new__, once
        pass

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("'ReadOnlyList' object does not support item assignment: the list is read-only "
                        "(copy it with list(...))")

    __setitem__ = __delitem__ = append = extend = insert = pop = remove = clear = sort = reverse = _refuse  # type: ignore[assignment]
    __iadd__ = __imul__ = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> tuple[type[ReadOnlyList], tuple[list[Any]]]:
        return (ReadOnlyList, (list(self),))


def _frozen_json(v: Any, done: dict[int, Any]) -> Any:
    """A JSON value (checked by :func:`~symverify.viz.run_format.json_problem`: no cycle, bounded
    depth) as read-only containers of its own: objects as ``ReadOnlyMapping``, lists and tuples as
    :class:`ReadOnlyList`; a container met at several places is copied once (``done``)."""
    if not isinstance(v, (dict, list, tuple)):
        return v
    if id(v) not in done:
        done[id(v)] = (ReadOnlyMapping((k, _frozen_json(x, done)) for k, x in v.items()) if isinstance(v, dict)
                       else ReadOnlyList(_frozen_json(x, done) for x in v))
    return done[id(v)]


def stable_number(v: Number) -> int | float | str:
    """One JSON type per kind of value: int (its exact decimal string beyond 1590 bits: below
    ``2^1590 < 10^479``, ``json.dumps`` and ``str`` work under any int/str digit limit Python
    allows, at least 640 digits), exact string for a Fraction of any size, 6-digit float."""
    from symverify.ir.bigint import int_to_str, rational_to_str

    if isinstance(v, Fraction):
        return rational_to_str(v, bounded=False)
    if isinstance(v, float):
        return float(f"{v:.6g}")
    if isinstance(v, int) and not isinstance(v, bool) and v.bit_length() > 1590:
        return int_to_str(v, bounded=False)
    return v


class _Instances(list):  # type: ignore[type-arg]
    """A result's instance list. Each instance is tagged with where it was *made* (the case of
    :func:`each` being handled, or the cases met before it; :func:`made_in`), wherever and
    whenever it is added; every part keeps those made outside :func:`each` (the runners compare
    them across parts and keep one copy)."""

    def __init__(self, items: Any = ()) -> None:
        super().__init__()
        for i in items:
            self.append(i)

    def append(self, item: Any) -> None:
        super().append(_claim(item))

    def __setitem__(self, index: Any, value: Any) -> None:
        super().__setitem__(index, [_claim(v) for v in value] if isinstance(index, slice) else _claim(value))

    def extend(self, items: Any) -> None:
        for item in items:
            self.append(item)

    def __iadd__(self, items: Any) -> _Instances:  # type: ignore[misc,override]
        self.extend(items)
        return self

    def insert(self, index: Any, item: Any) -> None:
        raise TypeError("a result's instances are only appended (their order is the order of the cases)")


def _claim(item: Any) -> Instance:
    """``item`` if it is an :class:`Instance` (not a subclass, which could answer ``ok`` as it likes),
    else a :class:`~symverify.errors.UsageError`: a ``Report`` appended as it is had no ``ok`` (an
    AttributeError), and any object with ``ok = True`` made the result ok."""
    if type(item) is not Instance:
        hint = (f"; make a claim of it: Instance.from_report(NAME, {type(item).__name__.lower()})"
                if isinstance(item, _outcome_types()) else "")
        raise UsageError(f"a result's instances: expected an Instance (Instance.from_report, computed or argued), "
                         f"found {type(item).__name__}{hint}")
    return item


def made_in(inst: Any) -> tuple[int | None, int]:
    """``(case, cases met before it)``: the case of :func:`each` being handled when ``inst`` was
    made (None outside every case), and the number of cases met by then."""
    made = getattr(inst, "_made", None)
    return made if isinstance(made, tuple) else (_STATE.current, _STATE.seen)


def _where(made: tuple[int | None, int]) -> str:
    return "outside each()" if made[0] is None else f"in case {made[0]}"


def _place(made: tuple[int | None, int]) -> tuple[int, int]:
    """Where an instance made at ``made`` stands in a one-process run: after the instances of its
    case's predecessors; one made outside each() before the next case's (the runners' merge order)."""
    case, before = made
    return (case, 1) if case is not None else (before, 0)


def each(cases: Any) -> Iterator[Any]:
    """The cases this process runs (all of them unless the runner asked for ``--shard k/K`` or
    ``--cases …``); every instance made while handling a case is tagged with the case's index.

    Indices go on across loops: a second ``each`` numbers its cases after the first one's. A loop
    inside the handling of a case is a :class:`~symverify.errors.UsageError` in every run: a
    shard that skips an outer case never meets its inner ones, so the shards would number the
    cases differently (loop over the pairs, ``itertools.product``, in one ``each``).
    """
    state = _STATE
    if state.current is not None:
        raise UsageError(f"each() inside the handling of case {state.current} of another each(): expected one loop "
                         "level (shards that skip an outer case never meet its inner ones); loop over the pairs "
                         "(itertools.product) in one each()")
    try:
        for case in cases:
            index = state.seen
            state.seen += 1
            if state.counting or (state.chosen is not None and not state.chosen(index)):
                continue
            state.current = index
            try:
                yield case
            except GeneratorExit:  # the loop was left while handling this case: break, return, an exception
                if state.left is None:
                    state.left = index
                raise
            state.current = None
    finally:
        state.current = None


@dataclass
class ProofResult:
    """All instances a script checked for one result."""

    name: str
    title: str
    instances: list[Instance] = field(default_factory=_Instances)
    seconds: float = 0.0

    __bool__ = no_truth_value  # no truth value: `assert outcome` would pass on refuted and unknown

    def __post_init__(self) -> None:
        self.instances = self.instances  # as an _Instances (__setattr__)

    def __setattr__(self, key: str, value: Any) -> None:
        if key == "instances" and not isinstance(value, _Instances):
            value = _Instances(value)  # a list assigned later refuses insert() as appends do
        super().__setattr__(key, value)

    @property
    def ok(self) -> bool:
        return bool(self.instances) and all(i.ok for i in self.instances)

    def counts(self) -> dict[str, int]:
        return count_claims(i.to_json() for i in self.instances)

    def to_json(self) -> dict[str, Any]:
        """The result as JSON; in a part of a run (``--shard``, ``--cases``) each instance with its
        ``case`` (and ``before``). Instances not in the order of the cases they were made in (made in
        a case and added after a later case's, or a list reordered) cannot be merged back from parts
        into the order of one process: a :class:`~symverify.errors.UsageError` in every run."""
        made = [made_in(i) for i in self.instances]
        for k in range(1, len(made)):
            if _place(made[k]) < _place(made[k - 1]):
                raise UsageError(f"instance {self.instances[k].name!r} (made {_where(made[k])}) is added after "
                                 f"{self.instances[k - 1].name!r} (made {_where(made[k - 1])}): expected the instances "
                                 "in the order of the cases of each() that made them (a case's instances are added "
                                 "while it is handled), so that shards merge into the order of one process")
        instances = []
        for inst, (case, before) in zip(self.instances, made):
            d = inst.to_json()
            if _STATE.tagged:
                d["case"] = case
                if case is None:
                    d["before"] = before
            instances.append(d)
        return {
            "name": self.name,
            "title": self.title,
            "ok": self.ok,
            "counts": self.counts(),
            "seconds": round(self.seconds, 1),
            "instances": instances,
        }

    def table(self) -> str:
        """A plain-text table: one line per instance."""
        lines = [f"{self.title} ({self.name}): {'OK' if self.ok else 'FAILED'}  {self.counts()}"]
        for i in self.instances:
            rs, bs = i.shown()
            res = ", ".join(f"{k}={v}" + (f"≤{bs[k]}" if k in bs else "") for k, v in rs.items())
            over = [f"{k}={rs[k]} > {bs[k]}" if k in rs else f"{k} (no value)" for k in i.over_bound()]
            flag = "" if i.ok else ("  <-- over bound: " + ", ".join(over) if i.proved else "  <--")
            shown = i.verdict_text()
            basis = f" ({i.basis})" if i.basis else ""
            lines.append(f"  {shown:8s} {i.kind.value:8s} {i.method:14s} {i.name:40s} {res}{basis} [{i.seconds:.2f}s]{flag}")
        return "\n".join(lines)


@contextmanager
def timed() -> Iterator[list[float]]:
    """``with timed() as t: ...`` then ``t[0]`` holds the elapsed seconds."""
    box = [0.0]
    start = time.perf_counter()
    try:
        yield box
    finally:
        box[0] = time.perf_counter() - start


_SHARD = re.compile(r"([0-9]+)/([0-9]+)", re.ASCII)
"""``--shard K/N`` of :func:`script_main`: two decimal numbers of ASCII digits, nothing around them."""

_INDEX_PART = re.compile(r"([0-9]+)[ \t]*(?:-[ \t]*([0-9]+))?", re.ASCII)


def parse_indices(text: str, what: str = "indices") -> list[int]:
    """``"0,3,5-9"`` as the sorted list of distinct non-negative integers it names: ASCII
    decimal digits only (``1_0``, ``+3``, ``٣`` or ``0x10`` are refused, never read as a number);
    spaces around a number are allowed.

    >>> parse_indices("7,0-2,2")
    [0, 1, 2, 7]
    """
    out: set[int] = set()
    for part in str(text).split(","):
        part = part.strip()
        m = _INDEX_PART.fullmatch(part)
        if m is None:
            raise UsageError(f"{what}: expected non-negative integers and ranges like 0,3,5-9 (digits 0-9); "
                             f"found {text!r}")
        try:
            a = int(m.group(1), 10)
            b = int(m.group(2), 10) if m.group(2) is not None else a
        except ValueError:  # more digits than int() reads
            raise UsageError(f"{what}: a number of {max(map(len, m.groups(''))):,} digits in {part[:40]!r}…") from None
        if a < 0 or b < a:
            raise UsageError(f"{what}: expected non-negative integers and ranges A-B with A ≤ B; found {text!r}")
        if b - a >= 1_000_000:
            raise UsageError(f"{what}: the range {part} names more than 10^6 values")
        out.update(range(a, b + 1))
    return sorted(out)


def sweep_grid(default: Mapping[str, Any]) -> dict[str, Any]:
    """The grid ``symverify sweep`` passed (:data:`SWEEP_ENV`), else ``default``; the keys are
    ``default``'s (a grid without one of them keeps the default's value). The grid is strict JSON:
    a key repeated in an object, ``NaN`` or ``Infinity`` is a :class:`~symverify.errors.UsageError`
    (never its last value, never a float)."""
    text = os.environ.get(SWEEP_ENV)
    if not text:
        return dict(default)

    from symverify.errors import SerializationError
    from symverify.ir.serialize import json_value

    try:
        grid = json_value(text)
    except SerializationError as e:
        raise UsageError(f"{SWEEP_ENV}: expected a JSON object, found {text[:60]!r} ({e})") from None
    if not isinstance(grid, dict):
        raise UsageError(f"{SWEEP_ENV}: expected a JSON object, found {type(grid).__name__}")
    unknown = sorted(set(grid) - set(default))
    if unknown:
        raise UsageError(f"{SWEEP_ENV}: unknown parameter(s) {', '.join(unknown)}; expected {', '.join(default)}")
    return {k: grid.get(k, v) for k, v in default.items()}


def _json_path_problem(path: str, script: str | None = None) -> str:
    """Why ``--json PATH`` cannot be written ('' when it can, as far as can be told before the run).
    ``-`` is refused: ``symverify prove --json -`` means standard output, and here it wrote a file
    named ``-`` (the table is on standard output already). So is the file of the script itself
    (``script``, the file that defines ``run``; the same path after symbolic links, or a hard link to
    it): ``python NAME.py --json NAME.py`` replaced the script with its own result."""
    if path == "":
        return "expected a file path, found an empty string"
    if path == "-":
        return ("expected a file path, found '-', which is not standard output here (the table is printed there; "
                "./- names a file of that name)")
    if os.path.isdir(path):
        return "expected a file path, found a directory"
    if script is not None and os.path.exists(path) and os.path.exists(script):
        with suppress(OSError):
            if os.path.samefile(path, script):
                return f"names the proof script {script} itself, which writing the result would replace: expected another path"
    parent = os.path.dirname(path) or "."
    if not os.path.isdir(parent):
        return f"the directory {parent} does not exist"
    return ""


def script_main(run: Callable[[bool], ProofResult], argv: list[str] | None = None) -> int:
    """Entry point for ``python -m symverify.proofs.NAME [--quick] [--json OUT] [--shard K/N | --cases
    SPEC | --count-cases]``; returns the exit code (0 ok, 1 not ok, 2 bad arguments: exits with it, one
    line on stderr, an ``--json`` path that is empty, ``-``, a directory, in a missing directory or the
    script's own file before the run, one that cannot be written after it)."""
    from symverify.progress import tolerant_output

    with tolerant_output(), _script_collector():
        return _script_main(run, argv)


SCRIPT_GC_THRESHOLDS = (10_000, 10, 10)
"""The cyclic garbage collector's thresholds while a proof script runs (:func:`script_main`; the
interpreter's own are ``(700, 10, 10)``). A script builds millions of small container objects that
live to its end (exact scalars, certificate cells, layers, memoised plans), and with the default
first threshold the collector's full passes over them took about 13 % of a script's CPU (1.7 s of
``cor_h22_retnet``'s 12 s); a young generation of 10 000 objects cuts them to a tenth. Only when
garbage cycles are looked for changes: every object still is freed (reference counting frees the
acyclic ones at once, as before), so no result and no memory bound depends on it."""


@contextmanager
def _script_collector() -> Iterator[None]:
    """:data:`SCRIPT_GC_THRESHOLDS` inside the block, the thresholds found before it afterwards
    (a script run in a test's process leaves the collector as it was)."""
    import gc

    before = gc.get_threshold()
    gc.set_threshold(*SCRIPT_GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def _script_main(run: Callable[[bool], ProofResult], argv: list[str] | None) -> int:
    global _STATE
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="the small tier run in CI")
    ap.add_argument("--json", metavar="OUT", help="write the result as JSON to OUT")
    part = ap.add_mutually_exclusive_group()
    part.add_argument("--shard", metavar="K/N", help="only the cases with index ≡ K (mod N) (for SHARDABLE scripts)")
    part.add_argument("--cases", metavar="SPEC", help="only these cases, e.g. 0,3,5-9 (for SHARDABLE scripts)")
    part.add_argument("--count-cases", action="store_true", help="run no case; print and write {\"cases\": N}")
    args = ap.parse_args(argv)
    if args.json is not None:  # before the run: an empty path was ignored, a missing directory a traceback at the end
        where = _json_path_problem(args.json, getattr(getattr(run, "__code__", None), "co_filename", None))
        if where:
            ap.error(f"--json {args.json!r}: {where}")
    state = _Selection()
    wanted: list[int] = []
    if args.shard is not None:
        m = _SHARD.fullmatch(args.shard)
        try:  # ASCII digits only: int() also read '1_0' as 10, ' 1' as 1 and Arabic-Indic digits
            k, n = (int(m.group(1)), int(m.group(2))) if m is not None else (-1, 0)
        except ValueError:  # more digits than int() reads
            k, n = -1, 0
        if not 0 <= k < n:
            shown = repr(args.shard) if len(args.shard) <= 40 else f"{args.shard[:40]!r}… ({len(args.shard)} characters)"
            ap.error(f"--shard: expected K/N, two numbers of digits 0-9 with 0 ≤ K < N, found {shown}")
        state = _Selection(chosen=lambda i: i % n == k, tagged=n > 1)
    elif args.cases is not None:
        try:
            wanted = parse_indices(args.cases, "--cases")
        except UsageError as e:
            ap.error(str(e))
        chosen = frozenset(wanted)
        state = _Selection(chosen=chosen.__contains__, tagged=True)
    elif args.count_cases:
        state = _Selection(counting=True)
    previous, _STATE = _STATE, state
    try:
        start = time.perf_counter()
        result = run(args.quick)
        if not isinstance(result, ProofResult):
            raise UsageError(f"run(quick) returned {type(result).__name__}; a proof script's run returns the "
                             "ProofResult it filled (res = ProofResult(NAME, TITLE); res.instances.append(...); return res)")
        if state.left is not None:
            raise UsageError(f"the loop of each() was left in case {state.left} (break, return, or an exception caught "
                             "outside the loop): expected every loop of each() to run to its end, since a part of a run "
                             f"that does not run case {state.left} goes on to the later cases, and the parts would meet "
                             "different cases; choose the cases before the loop (each(c for c in cases if ...))")
        result.seconds = time.perf_counter() - start
        missing = [i for i in wanted if i >= state.seen]
        if missing:
            ap.error(f"--cases: the script has {state.seen} case(s) in this tier; no case {', '.join(map(str, missing))}")
        data: dict[str, Any] = {"format": RESULT_FORMAT, "version": RESULT_VERSION}  # the runner reads only these
        data.update({"cases": state.seen} if state.counting else result.to_json())
        if state.tagged and not state.counting:
            data["cases"] = state.seen  # every part of a run must meet the same cases (the runner compares them)
        _print_or_reader_gone(f"{state.seen} case(s)" if state.counting else result.table())
    finally:
        _STATE = previous
    if args.json is not None:
        from symverify.scripts.whole_file import write_whole

        try:  # whole or not at all, as symverify prove writes its files
            write_whole(args.json, json.dumps(data, indent=2), "--json")
        except UsageError as e:  # the path was fine before the run: a full disk, a directory removed meanwhile
            ap.exit(2, f"{ap.prog}: error: {e}\n")
    code = 0 if state.counting or result.ok else 1
    _print_or_reader_gone("", end="")  # flushes
    return code


def _print_or_reader_gone(text: str, end: str = "\n") -> None:
    """Print ``text`` and flush; when the reader has gone (``| head``: a broken pipe), the rest of
    standard output goes to the null device, so the run still writes its ``--json`` and exits with
    its verdict's code rather than a ``BrokenPipeError`` traceback."""
    from symverify.progress import stdout_to_devnull

    try:
        print(text, end=end, flush=True)
    except BrokenPipeError:
        stdout_to_devnull()

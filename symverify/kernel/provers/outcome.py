"""What a prover returns: a :class:`Verdict`, evidence, and a re-checked :class:`Counterexample`.

docs/theory.md §5 keeps three outcomes apart: ``proved`` (an exact argument, or a randomized test with a
stated error bound), ``refuted`` (with a counterexample input re-checked by exact evaluation of
both sides) and ``unknown`` (a budget or timeout ran out). :class:`MethodResult` is the internal
form one method hands to :func:`symverify.kernel.verification.verify`, which wraps it in a ``Report``.

**One door.** Every outcome is made by one constructor of this module, which enforces the rules of
docs/trusted-base.md where the outcome is made: :func:`proved` (its failure bound in ``[0, 1)``
and at most the requested ``error_bound``), :func:`refuted` (only with a :class:`Counterexample`
whose two exact values differ; ``verify`` re-checks it on both sides before a ``Report`` says
``refuted``) and :func:`unknown` (only with a note saying why). :func:`exact_comparison` is the
one door for the bare verdict of an exact comparison that always decides (a matrix or polynomial
comparison). A test (tests/test_one_door.py) scans the source tree and fails if any other module
calls ``MethodResult(...)``, makes a verdict from a string, or writes a verdict member or the
string ``"proved"`` anywhere but in a comparison.

**Seals.** The door is also shut at run time: a :class:`MethodResult` carries a seal that only
this module's constructors compute, binding its verdict, method, failure bound and counterexample
(every field of it, :func:`seal`); ``MethodResult(...)`` by hand, or ``dataclasses.replace`` that
changes one of those fields, raises :class:`ProverError`. ``verify``'s ``Report`` is sealed the
same way, and its seal binds besides every other field it shows or records but its timings (the
exact failure bound, the evidence with the randomized bound's text, the sides' statistics, the
notes, the seed, the numeric cross-check; its ``SEALED``). This stops results forged by mistake (a hand-built ``proved`` handed to
``Instance.from_report``); Python code that imports the private key can still forge one, as it
can patch any module.
:class:`NumericSummary` is the optional float cross-check (docs/theory.md §5 *numeric*): a check of the
executor, never evidence for the verdict.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from enum import Enum
from fractions import Fraction
from typing import Any, TypeVar

from symverify.errors import ProverError, UsageError
from symverify.ir.bigint import field_repr
from symverify.kernel.ir.scalar import Sym

__all__ = ["Verdict", "Counterexample", "MethodResult", "NumericSide", "NumericSummary", "UsageError", "jsonable",
           "proved", "refuted", "unknown", "exact_comparison", "seal", "seal_outcome", "is_sealed", "Sealed"]

_KEY = b"symverify outcome seal"


def seal(kind: str, verdict: Verdict, method: str, failure_bound: Fraction, counterexample: object,
         statement: str = "") -> str:
    """The seal of a ``kind`` (``MethodResult`` or ``Report``) with these deciding fields: a keyed
    BLAKE2b digest that only the one door (this module's constructors, and ``verify`` for its
    ``Report``) computes; a result whose seal does not match its fields was not made by them. The
    bound enters in hexadecimal, which has no size limit (a bound of 2^-100000 has a denominator
    beyond Python's 4300-digit ``str(int)`` limit), and so does the ``counterexample`` (None for
    none), every field of it (:func:`_counterexample_text`): one swapped for another after the
    result was made unseals it. ``statement`` is what an outcome class binds besides (:func:`_statement`)."""
    fb = Fraction(failure_bound)
    text = f"{kind}|{verdict.value}|{method}|{fb.numerator:x}/{fb.denominator:x}|{_counterexample_text(counterexample)}"
    if statement:
        text += f"|{len(statement)}|{statement}"
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), key=_KEY, digest_size=16).hexdigest()


def _counterexample_text(cex: object) -> str:
    """What a seal binds of a counterexample: ``"-"`` for none; else each field of the
    :class:`Counterexample` length-prefixed, numbers as exact hexadecimal ratios (any size, linear
    time). Anything else (no door makes it) gets a text no counterexample has."""
    if cex is None:
        return "-"
    try:
        if type(cex) is not Counterexample:
            raise TypeError

        def q(x: Any) -> str:
            f = Fraction(x)
            return f"{f.numerator:x}/{f.denominator:x}"

        parts = (";".join(",".join(q(x) for x in row) for row in cex.inputs),
                 ",".join(f"{len(k)}:{k}={q(v)}" for k, v in cex.params),
                 ",".join(q(i) for i in cex.cell), q(cex.lhs_value), q(cex.rhs_value),
                 "" if cex.stage is None else f"+{cex.stage}", cex.found_by)
        return "".join(f"{len(p)}:{p}" for p in parts)
    except (TypeError, ValueError, ZeroDivisionError):
        return f"!{type(cex).__module__}.{type(cex).__qualname__}"


def _statement(obj: Any) -> str:
    """The fields an outcome class lists in its ``SEALED`` (a ``ForallResult``: its gadget, ranges,
    hypotheses and counterexample; a ``KaleidoscopeCheck``: its sizes and first differing entry), as
    the text its seal binds (:func:`_field_text`): one of them changed after sealing (a verdict
    relabelled as one about another statement) unseals it. "" for a class listing none."""
    return fields_text(getattr(obj, name, None) for name in getattr(type(obj), "SEALED", ()))


def fields_text(values: Iterable[Any]) -> str:
    """The text a seal binds of these field values (:func:`_field_text`, joined)."""
    return "|".join(map(_field_text, values))


def _field_text(x: Any) -> str:
    """A sealed field as text: ints and Fractions in exact hexadecimal (``repr`` refuses an int of
    more than 4300 digits), text length-prefixed, tuples, lists, a mapping's items and a
    dataclass's fields (a report's evidence and statistics, a stage failure) and a ``Sym``'s terms
    item by item, each in this form, in linear time; anything else its ``repr`` (an exotic object
    whose ``repr`` fails: its type)."""
    if type(x) is int:
        return f"{x:#x}"
    if type(x) is Fraction:
        return f"{x.numerator:#x}/{x.denominator:#x}"
    if type(x) is str:
        return f"{len(x)}:{x}"
    if type(x) is tuple:
        return "(" + ",".join(map(_field_text, x)) + ")"
    if type(x) is list:
        return "[" + ",".join(map(_field_text, x)) + "]"
    if isinstance(x, Mapping):
        return "{" + ",".join(f"{_field_text(k)}:{_field_text(v)}" for k, v in x.items()) + "}"
    if type(x) is Sym:  # its repr abbreviates huge coefficients
        return "Sym" + _field_text(x.terms)
    if isinstance(x, Enum):
        return f"{type(x).__name__}.{_field_text(x.value)}"
    if is_dataclass(x) and not isinstance(x, type):
        return type(x).__qualname__ + _field_text(tuple(getattr(x, f.name) for f in fields(x) if f.name != "_seal"))
    try:
        return repr(x)
    except ValueError:  # an int beyond the int/str digit limit inside it
        return f"!{type(x).__module__}.{type(x).__qualname__}"


_Outcome = TypeVar("_Outcome")


def seal_outcome(obj: _Outcome) -> _Outcome:
    """Seal a prover's outcome object (a ``CompositionalResult``, ``FragmentProof``,
    ``KaleidoscopeCheck`` or ``ForallResult``) where its prover makes it: its ``_seal`` (a field
    with ``init=False``, so neither a hand-built object nor a ``dataclasses.replace`` copy has it)
    binds its class, verdict and method, and the fields its class lists in ``SEALED`` (:func:`_statement`).
    :func:`is_sealed` is what ``Instance.from_report`` asks."""
    made: Any = obj
    object.__setattr__(obj, "_seal", seal(type(obj).__name__, made.verdict, str(getattr(obj, "method", "")),
                                          Fraction(0), None, _statement(obj)))
    return obj


def is_sealed(obj: Any) -> bool:
    """Whether ``obj`` was sealed by its prover (:func:`seal_outcome`, or the ``Report`` and
    ``MethodResult`` constructors) and still has the verdict and method it was sealed with."""
    verdict = getattr(obj, "verdict", None)
    if not isinstance(verdict, Verdict):
        return False
    fb = getattr(obj, "failure_bound", Fraction(0))
    cex = getattr(obj, "counterexample", None)
    return bool(getattr(obj, "_seal", "")) and obj._seal == seal(type(obj).__name__, verdict, str(getattr(obj, "method", "")),
                                                                  fb, cex, _statement(obj))


def check_seal(obj: Any, kind: str, verdict: Verdict, method: str, failure_bound: Fraction,
               counterexample: object, door: str) -> None:
    """Raise :class:`ProverError` unless ``obj._seal`` matches its deciding fields and the fields its
    class lists in ``SEALED`` (:func:`_statement`; a ``Report``: its evidence, side statistics,
    notes, seed and numeric cross-check)."""
    if not isinstance(verdict, Verdict):
        raise ProverError(f"a {kind}'s verdict must be a Verdict, found {type(verdict).__name__}")
    if getattr(obj, "_seal", "") != seal(kind, verdict, method, failure_bound, counterexample, _statement(obj)):
        what = ", ".join(getattr(type(obj), "SEALED", ()))
        also = f", or had one of its sealed fields ({what}) replaced or changed" if what else ""
        raise ProverError(f"a {verdict.value} {kind} is made only by {door} (this one was built by hand or "
                          f"had its verdict, method, failure bound or counterexample replaced{also})")


class Sealed:
    """What every sealed outcome class (``MethodResult``, ``Report``, ``CompositionalResult``,
    ``FragmentProof``, ``KaleidoscopeCheck``, ``ForallResult``) inherits: copies, deep copies and
    pickles are rebuilt by :func:`_rebuild`, never field by field behind the constructor's back, so
    the seal is checked again where the object is remade. A pickle whose verdict, failure bound or a
    sealed field was changed (or an outcome changed in place, then copied) raises
    :class:`ProverError` when loaded: ``MethodResult`` and ``Report`` refuse it in their constructor,
    the classes sealed by :func:`seal_outcome` in :func:`_rebuild`. An outcome that was never sealed
    (one of the latter built by hand) stays unsealed, as it was (:func:`is_sealed` is False)."""

    __slots__ = ()

    def __bool__(self) -> bool:
        """No truth value: ``assert outcome`` would pass on refuted and unknown (:func:`no_truth_value`)."""
        return no_truth_value(self)

    def __reduce__(self) -> tuple[Any, tuple[type, tuple[tuple[str, Any], ...]]]:
        return _rebuild, (type(self), tuple((f.name, getattr(self, f.name)) for f in fields(self)))  # type: ignore[arg-type]

    def __setstate__(self, state: object) -> None:
        """A pickle in the default object form (``copyreg``'s: the object made empty, then its fields
        set from a dict, as pickles written before :meth:`__reduce__`, or by hand, have it) is
        remade by :func:`_rebuild` as well (a field it leaves out takes its default), so the seal is
        checked: a changed one raises :class:`ProverError`, and so does a state that is no dict of
        this class's fields by name."""
        cls, own = type(self), fields(self)  # type: ignore[arg-type]
        names = [f.name for f in own]
        if type(state) is not dict or not all(type(k) is str for k in state) or not set(state) <= set(names):
            found = sorted(map(str, state)) if type(state) is dict else type(state).__name__
            raise ProverError(f"a pickled {cls.__name__}: expected a dict of its fields {names}, found {found!s:.200}")
        items = []
        for f in own:
            if f.name in state:
                items.append((f.name, state[f.name]))
            elif f.default is not MISSING or f.default_factory is not MISSING:
                items.append((f.name, f.default if f.default is not MISSING else f.default_factory()))  # type: ignore[misc, operator]
            else:
                raise ProverError(f"a pickled {cls.__name__}: expected a dict of its fields {names}, found no {f.name!r}")
        obj = _rebuild(cls, tuple(items))
        for f in own:
            object.__setattr__(self, f.name, getattr(obj, f.name))


def _rebuild(cls: type, items: tuple[tuple[str, Any], ...]) -> Any:
    """A sealed outcome of class ``cls`` remade from its fields ``items`` (:meth:`Sealed.__reduce__`):
    through its constructor (which checks a ``MethodResult``'s or a ``Report``'s seal, and every
    class's own rules), its fields made by its prover (``init=False``: the seal) set afterwards, then
    refused (:class:`ProverError`) when it carries a seal that does not match its fields."""
    if not (isinstance(cls, type) and issubclass(cls, Sealed) and is_dataclass(cls)):
        raise ProverError(f"a sealed outcome is rebuilt only as a sealed outcome class, found {cls!r:.100}")
    values = dict(items)
    own = fields(cls)
    if set(values) != {f.name for f in own}:
        raise ProverError(f"a {cls.__name__} is rebuilt from the fields {sorted(f.name for f in own)}, "
                          f"found {sorted(values)!r:.200}")
    obj = cls(**{f.name: values[f.name] for f in own if f.init})
    for f in own:
        if not f.init:
            object.__setattr__(obj, f.name, values[f.name])
    if getattr(obj, "_seal", "") and not is_sealed(obj):
        what = ", ".join(getattr(cls, "SEALED", ()))
        raise ProverError(f"a {str(getattr(obj, 'verdict', '?'))[:40]} {cls.__name__} is made only by its prover (this copy or pickle "
                          f"had its verdict, method or one of its sealed fields ({what}) replaced or changed)")
    return obj


class Verdict(str, Enum):
    """The three outcomes of docs/theory.md §5, str-valued.

    >>> Verdict.PROVED == "proved", str(Verdict.UNKNOWN)
    (True, 'unknown')
    """

    PROVED = "proved"
    REFUTED = "refuted"
    UNKNOWN = "unknown"

    def __str__(self) -> str:
        return self.value

    def __bool__(self) -> bool:
        """A verdict has no truth value (as a :class:`~symverify.kernel.verification.Report` has
        none): each is a nonempty string, so ``assert report.verdict`` would pass on ``refuted``
        and ``unknown``."""
        raise TypeError(f"the truth value of a Verdict is ambiguous (this one is {self.value}); compare it "
                        "(verdict is Verdict.PROVED) or use report.proved, or symverify.testing.assert_proved in tests")


def no_truth_value(outcome: Any) -> bool:
    """``__bool__`` of a prover's outcome (``MethodResult``, ``CompositionalResult``,
    ``FragmentProof``, ``KaleidoscopeCheck``, ``ForallResult``) and of a proof script's claims: a
    ``TypeError``. An object without ``__bool__`` is true, so ``assert check_certificate(...)``
    would pass on ``refuted`` and ``unknown``; test ``.proved`` or ``.ok`` instead."""
    verdict = getattr(outcome, "verdict", None)
    shown = f"this one is {verdict.value}" if isinstance(verdict, Verdict) else "test it by its fields"
    raise TypeError(f"the truth value of a {type(outcome).__name__} is ambiguous ({shown}); test .proved or .ok, "
                    "or use symverify.testing.assert_proved in tests")


def _q(x: int | Fraction) -> str:
    """Exact text for JSON, whatever the size (``sys.get_int_max_str_digits`` does not apply), in
    linear time: hexadecimal ``"0x…"`` beyond :data:`~symverify.ir.bigint.DECIMAL_TEXT_BITS` bits
    (:func:`~symverify.ir.bigint.rational_to_text`; :func:`~symverify.ir.bigint.parse_rational` reads it)."""
    from symverify.ir.bigint import rational_to_text

    return rational_to_text(x)


def _show(x: int | Fraction) -> str:
    """Text for people: integers of more than ``SHOW_DIGITS`` digits abbreviated."""
    from symverify.ir.bigint import show_rational

    return show_rational(x)


@dataclass(frozen=True)
class Counterexample:
    """An input (and parameter values) on which the two sides differ, re-checked exactly.

    ``inputs`` is the ``n×d`` rational input ``u``; ``params`` assigns every symbolic weight;
    ``cell`` is the first (row-major) output entry where the sides differ and ``lhs_value`` /
    ``rhs_value`` are the exact values there. ``stage`` names the first failing certificate stage
    when the compositional method found the difference.
    """

    inputs: tuple[tuple[Fraction | int, ...], ...]
    params: tuple[tuple[str, Fraction | int], ...]
    cell: tuple[int, int]
    lhs_value: Fraction | int
    rhs_value: Fraction | int
    stage: str | None = None
    found_by: str = ""

    def __repr__(self) -> str:
        return field_repr(self)  # the generated repr, with huge integers abbreviated (never fails)

    def param_dict(self) -> dict[str, Fraction | int]:
        """Every assigned weight, of both sides."""
        return dict(self.params)

    def params_for(self, side: Any) -> dict[str, Fraction | int]:
        """The values of ``side``'s own symbolic weights: the ``params=`` to re-evaluate one side
        with, since a side refuses names it does not have. ``side`` is anything ``verify`` compares
        (a circuit, a model, a kaleidoscope or a compiled object, whose weights are its model's);
        anything else is an :class:`~symverify.errors.IRError`."""
        from symverify.kernel.provers.sides import as_side

        own = as_side(side, "params_for").params()
        return {k: v for k, v in self.params if k in own}

    def to_json(self) -> dict[str, Any]:
        return {
            "inputs": [[_q(x) for x in row] for row in self.inputs],
            "params": {k: _q(v) for k, v in self.params},
            "cell": list(self.cell),
            "lhs_value": _q(self.lhs_value),
            "rhs_value": _q(self.rhs_value),
            "stage": self.stage,
            "found_by": self.found_by,
        }

    def __str__(self) -> str:
        """One line; integers of more than ``SHOW_DIGITS`` digits are abbreviated as
        ``<5001-digit integer ≡ 123456789 mod 10^9>`` (:func:`symverify.ir.bigint.show_int`);
        :meth:`to_json` keeps every value exact."""
        rows = _show_inputs(self.inputs)
        ps = ", ".join(f"{k}={_show(v)}" for k, v in self.params)
        extra = f" with {ps}" if ps else ""
        return f"u = {rows}{extra}: entry {self.cell} is {_show(self.lhs_value)} (lhs) vs {_show(self.rhs_value)} (rhs)"


SHOW_ENTRIES = 16
"""Inputs of at most this many entries are printed in full; larger ones sparsely."""
SHOW_NONZERO = 8
"""At most this many nonzero entries of a large input are printed."""


def _show_inputs(inputs: tuple[tuple[Fraction | int, ...], ...]) -> str:
    """``u`` for people: every entry when there are at most :data:`SHOW_ENTRIES`, else the shape,
    the count of nonzero entries and the first :data:`SHOW_NONZERO` of them (``u[i][j]=v``)."""
    n, d = len(inputs), len(inputs[0]) if inputs else 0
    if n * d <= SHOW_ENTRIES:
        return "[" + "; ".join(" ".join(_show(x) for x in row) for row in inputs) + "]"
    nonzero = [(i, j, x) for i, row in enumerate(inputs) for j, x in enumerate(row) if x != 0]
    shown = ", ".join(f"u[{i}][{j}]={_show(x)}" for i, j, x in nonzero[:SHOW_NONZERO])
    more = f", … {len(nonzero) - SHOW_NONZERO} more" if len(nonzero) > SHOW_NONZERO else ""
    body = f": {shown}{more}" if nonzero else ""
    return f"<{n}×{d}, {len(nonzero)} nonzero{body}>"


@dataclass(frozen=True)
class MethodResult(Sealed):
    """One method's outcome before it becomes a ``Report``.

    ``failure_bound`` is the probability that a ``proved`` is wrong: 0 for the exact arguments,
    the stated Schwartz–Zippel bound for the randomized method. ``verify`` refuses (ProverError)
    a ``proved`` whose failure bound exceeds the requested ``error_bound``. ``timings`` (seconds
    per phase) is left out of ``==`` and the hash, as out of the seal: two runs of the same check
    compare equal; the times are still pickled and passed on to the report. The hash leaves out
    ``evidence`` too (a dict), so a result is hashable and equal results hash alike.
    """

    verdict: Verdict
    method: str
    evidence: Mapping[str, Any] = field(default_factory=dict, hash=False)
    counterexample: Counterexample | None = None
    notes: tuple[str, ...] = ()
    timings: Mapping[str, float] = field(default_factory=dict, compare=False)
    failure_bound: Fraction = Fraction(0)
    _seal: str = field(default="", repr=False, compare=False)

    def __post_init__(self) -> None:
        check_seal(self, "MethodResult", self.verdict, self.method, self.failure_bound,
                   self.counterexample, "outcome.proved/refuted/unknown")


def _result(verdict: Verdict, method: str, evidence: Mapping[str, Any] | None, counterexample: Counterexample | None,
            notes: tuple[str, ...], timings: Mapping[str, float] | None, bound: Fraction = Fraction(0)) -> MethodResult:
    """The sealed ``MethodResult`` the three constructors below return once their rules hold."""
    return MethodResult(verdict, method, _dict(evidence), counterexample, tuple(notes), _dict(timings), bound,
                        seal("MethodResult", verdict, method, bound, counterexample))


def _dict(m: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """The mapping a prover passed (kept, not copied: evidence may still be added to it), or a new one."""
    return {} if m is None else m


def proved(method: str, evidence: Mapping[str, Any] | None = None, *, failure_bound: Fraction = Fraction(0),
           error_bound: Fraction | None = None, notes: tuple[str, ...] = (),
           timings: Mapping[str, float] | None = None) -> MethodResult:
    """The one constructor of a ``proved`` result.

    ``failure_bound`` is the probability that the claim is wrong: 0 for an exact argument, the
    stated Schwartz–Zippel bound for the randomized method. It must lie in ``[0, 1)``, and a
    nonzero one must come with the requested ``error_bound`` it is held to
    (``failure_bound ≤ error_bound``); anything else is a prover bug (:class:`ProverError`).

    >>> proved("exact").verdict, proved("randomized", failure_bound=Fraction(1, 8), error_bound=Fraction(1, 4)).failure_bound
    (<Verdict.PROVED: 'proved'>, Fraction(1, 8))
    """
    bound = Fraction(failure_bound)
    if not 0 <= bound < 1:
        raise ProverError(f"method {method}: a 'proved' needs a failure bound in [0, 1), found {bound}")
    if bound and error_bound is None:
        raise ProverError(f"method {method}: a 'proved' with failure bound {bound} must state the error_bound it is held to")
    if error_bound is not None and bound > error_bound:
        raise ProverError(f"method {method} reported 'proved' with failure bound {bound}, above the requested "
                          f"error_bound {error_bound}")
    return _result(Verdict.PROVED, method, evidence, None, notes, timings, bound)


def refuted(method: str, evidence: Mapping[str, Any] | None, counterexample: Counterexample, *,
            notes: tuple[str, ...] = (), timings: Mapping[str, float] | None = None) -> MethodResult:
    """The one constructor of a ``refuted`` result: only with a :class:`Counterexample` whose two
    exact values differ (:func:`symverify.kernel.verification.verify` then re-checks it by evaluating both
    sides again before its ``Report`` says ``refuted``); anything else is a prover bug
    (:class:`ProverError`)."""
    if not isinstance(counterexample, Counterexample):
        raise ProverError(f"method {method}: 'refuted' needs a counterexample, found {type(counterexample).__name__}")
    if counterexample.lhs_value == counterexample.rhs_value:
        raise ProverError(f"method {method}: 'refuted' with a counterexample whose two sides agree at entry "
                          f"{counterexample.cell} ({_show(counterexample.lhs_value)})")
    return _result(Verdict.REFUTED, method, evidence, counterexample, notes, timings)


def unknown(method: str, evidence: Mapping[str, Any] | None = None, *, notes: tuple[str, ...],
            timings: Mapping[str, float] | None = None) -> MethodResult:
    """The one constructor of an ``unknown`` result: a budget, a timeout or a missing counterexample
    stopped the method, and ``notes`` (at least one) say which; an empty ``notes`` is a prover bug
    (:class:`ProverError`)."""
    if not notes or not all(isinstance(n, str) and n for n in notes):
        raise ProverError(f"method {method}: 'unknown' needs a note saying why, found {notes!r}")
    return _result(Verdict.UNKNOWN, method, evidence, None, notes, timings)


def exact_comparison(equal: bool | None) -> Verdict:
    """The verdict of an exact comparison that decides (a matrix, polynomial or rank comparison in
    exact arithmetic): ``proved`` when equal, ``refuted`` when not (a difference of exact values;
    a ``Report`` still says ``refuted`` only with a re-checked counterexample), ``unknown`` when the
    comparison did not run (None).

    >>> [str(exact_comparison(x)) for x in (True, False, None)]
    ['proved', 'refuted', 'unknown']
    """
    if equal is None:
        return Verdict.UNKNOWN
    if not isinstance(equal, bool):
        raise UsageError(f"exact_comparison: expected True, False or None, found {type(equal).__name__} {equal!r}")
    return Verdict.PROVED if equal else Verdict.REFUTED


@dataclass(frozen=True)
class NumericSide:
    """One side's float run against its exact evaluation (from a ``NumericCheck``).

    ``bound`` is the largest per-point running error bound of :mod:`symverify.executors.numeric`;
    ``passed``: every point's error is within its own bound.
    """

    side: str
    kind: str
    path: str
    device: str
    max_abs_err: float
    max_rel_err: float
    bound: float
    passed: bool

    def to_json(self) -> dict[str, Any]:
        return {"side": self.side, "kind": self.kind, "path": self.path, "device": self.device,
                "max_abs_err": self.max_abs_err, "max_rel_err": self.max_rel_err, "bound": self.bound, "passed": self.passed}


@dataclass(frozen=True)
class NumericSummary:
    """The float executor on both sides at ``points`` seeded small-rational inputs, each compared
    with exact Fraction evaluation of the same side (docs/theory.md §5 *numeric*).

    A cross-check of the executor, never a proof: it does not change the verdict. ``skipped``
    names each side that was not run, and why (a kaleidoscope has no float executor; a weight may
    not fit in the float format). ``status`` is ``"failed"`` when a compared side's float error
    exceeds its own bound (an executor bug), ``"passed"`` when at least one side was compared and
    every compared side is within its bound, and ``"not run"`` when no side was compared (every side
    skipped): a check that compared nothing passed nothing. ``passed`` is ``True``, ``False`` or
    ``None`` accordingly, and ``max_abs_err`` and ``bound`` are ``None`` when nothing was compared.
    """

    dtype: str
    points: int
    sides: tuple[NumericSide, ...]
    skipped: tuple[str, ...] = ()

    @classmethod
    def of(cls, dtype: str, points: int, runs: Sequence[tuple[str, str, Any]]) -> NumericSummary:
        """The summary of :func:`symverify.executors.cross_check`'s runs: each ``(side, kind,
        result)`` is a ``NumericCheck`` or the reason the side was skipped."""
        sides = tuple(NumericSide(name, kind, r.path, r.device, r.max_abs_err, r.max_rel_err, r.tolerance, r.ok)
                      for name, kind, r in runs if not isinstance(r, str))
        skipped = tuple(f"{name} {kind}: {r}" for name, kind, r in runs if isinstance(r, str))
        return cls(dtype, points, sides, skipped)

    @property
    def ran(self) -> bool:
        """Whether some side was compared with exact evaluation."""
        return bool(self.sides)

    @property
    def max_abs_err(self) -> float | None:
        """The largest measured error over the compared sides; None when none was compared."""
        return max(s.max_abs_err for s in self.sides) if self.sides else None

    @property
    def bound(self) -> float | None:
        """The largest bound over the compared sides (each side is held to its own); None when none was compared."""
        return max(s.bound for s in self.sides) if self.sides else None

    @property
    def status(self) -> str:
        """``"failed"``, ``"passed"`` or ``"not run"`` (see the class docstring)."""
        if not self.sides:
            return "not run"
        return "passed" if all(s.passed for s in self.sides) else "failed"

    @property
    def passed(self) -> bool | None:
        """True when every compared side is within its bound, False when one exceeds it, None when
        no side was compared (never True for a check that compared nothing)."""
        return None if not self.sides else all(s.passed for s in self.sides)

    def __bool__(self) -> bool:
        """No truth value: a summary is true whether its cross-check passed, failed or ran on nothing,
        so ``assert report.numeric`` would pass on a failed one."""
        raise TypeError(f"the truth value of a NumericSummary is ambiguous (this one {self.status}); test .passed "
                        "(True, False, or None when nothing was compared) or .status")

    def __str__(self) -> str:
        parts = [f"{s.side} {s.kind} max abs error {s.max_abs_err:.3g} {'≤' if s.passed else 'EXCEEDS'} bound {s.bound:.3g}"
                 for s in self.sides]
        parts += [f"{entry} (skipped)" for entry in self.skipped]
        status = self.status
        if status == "not run":
            verdict = "not run (every side skipped, nothing compared)"
        elif status == "failed":
            verdict = "FAILED (executor error above its bound)"
        else:
            verdict = "passed" + (f" on {', '.join(s.side for s in self.sides)} only" if self.skipped else "")
        detail = f": {'; '.join(parts)}" if parts else ""
        return f"numeric cross-check ({self.dtype}, {self.points} points; not a proof): {verdict}{detail}"

    def to_json(self) -> dict[str, Any]:
        return {"dtype": self.dtype, "points": self.points, "status": self.status, "max_abs_err": self.max_abs_err,
                "bound": self.bound, "passed": self.passed, "sides": [s.to_json() for s in self.sides],
                "skipped": list(self.skipped),
                "note": "a cross-check of the float executor against exact evaluation, never a proof"}


def jsonable(x: Any) -> Any:
    """``x`` with Fractions as strings, tuples as lists and enums as their values (for JSON).

    Values stay exact whatever their size, in linear time: an int of more than about 480 digits
    becomes its exact decimal string (``json.dumps`` could not write it once it passes Python's
    int/str limit), beyond :data:`~symverify.ir.bigint.DECIMAL_TEXT_BITS` bits its hexadecimal
    ``"0x…"`` (:func:`~symverify.ir.bigint.int_to_text`); a Fraction or a Sym its exact text.
    """
    from symverify.ir.bigint import int_to_text, rational_to_text
    from symverify.kernel.ir.scalar import Sym, scalar_text

    if isinstance(x, Enum):
        return x.value
    if isinstance(x, bool) or x is None or isinstance(x, str):
        return x
    if isinstance(x, int):
        return int_to_text(x)
    if isinstance(x, float):
        return x if x == x and abs(x) != float("inf") else str(x)
    if isinstance(x, Fraction):
        return rational_to_text(x)
    if isinstance(x, Sym):
        return scalar_text(x)
    if isinstance(x, Mapping):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, set, frozenset)):
        items = sorted(x, key=_sort_key) if isinstance(x, (set, frozenset)) else x
        return [jsonable(v) for v in items]
    if hasattr(x, "to_json"):
        return jsonable(x.to_json())
    from symverify.kernel.ir.scalar import show_scalar

    return show_scalar(x)


def _sort_key(v: Any) -> str:
    from symverify.kernel.ir.scalar import show_scalar

    return show_scalar(v)

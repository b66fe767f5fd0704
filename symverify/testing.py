"""Assertions for users' test suites, and the stable records their golden files hold.

:func:`assert_proved` and :func:`assert_refuted` run :func:`symverify.verify` and fail with
everything needed to read the outcome: the verdict, the method, the failure bound and, for a
refutation, the counterexample (the differing entry, both exact values and the input)::

    >>> import symverify as sv
    >>> from symverify.testing import assert_proved
    >>> c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
    >>> assert_proved(c, sv.compile(c).model).method
    'exact'

:func:`golden_record` turns a :class:`~symverify.kernel.verification.Report`, a compile result or a
proof-script instance into the stable, sorted JSON that the pytest plugin's ``symverify_golden``
fixture (:mod:`symverify.pytest_plugin`) stores: verdicts, methods, resources and bounds, never
timings, a counterexample's seed-dependent input or anything that depends on the machine.

The hypothesis strategies (:func:`circuits`, :func:`models`, :func:`coefficients`,
:func:`rational_inputs`) live in :mod:`symverify.strategies` and are re-exported here on use.
"""

from __future__ import annotations

import collections
import enum
import json
import numbers
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from symverify.errors import UsageError

if TYPE_CHECKING:
    from symverify.kernel.verification import Report
    from symverify.strategies import circuits, coefficients, models, rational_inputs

__all__ = [
    "assert_proved",
    "assert_refuted",
    "explain",
    "golden_record",
    "golden_text",
    "coefficients",
    "circuits",
    "models",
    "rational_inputs",
]

_STRATEGIES = ("coefficients", "circuits", "models", "rational_inputs")


def __getattr__(name: str) -> Any:
    if name in _STRATEGIES:
        from symverify import strategies

        return getattr(strategies, name)
    raise AttributeError(f"module 'symverify.testing' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names, the re-exported strategies included (``dir``, ``help``, tab completion)."""
    return sorted(set(globals()) | set(__all__))


def explain(report: Report) -> str:
    """Everything a failed assertion should show about ``report``: verdict, method, bound,
    counterexample (entry, both values, input), notes."""
    from symverify.kernel.verification import Report

    if not isinstance(report, Report):
        raise UsageError(f"explain: expected a Report (from symverify.verify), found {type(report).__name__}")
    ev = report.evidence
    lines = [f"verdict: {report.verdict.value} (method {report.method})"]
    if "bound" in ev:
        lines.append(f"failure bound: {ev['bound']}")
    cx = report.counterexample
    if cx is not None:
        lines.append(f"counterexample: {cx}")
        if cx.stage:
            lines.append(f"first failing stage: {cx.stage}")
    for key in ("sides_differ_mod_p", "mismatch_prime", "mismatch_entry"):
        if key in ev:
            lines.append(f"{key}: {ev[key]}")
    lines.extend(f"note: {n}" for n in report.notes)
    return "\n".join(lines)


def _headline(report: Report, expected: str) -> str:
    """The first line of a failed assertion: what was expected, the verdict, the method and the
    deciding fact (the counterexample, or why the verdict is unknown), like hypothesis's
    "Falsifying example" line."""
    ev = report.evidence
    head = f"expected {expected}, found {report.verdict.value} (method {report.method})"
    cx = report.counterexample
    if cx is not None:
        return f"{head}: counterexample {cx}"
    if "sides_differ_mod_p" in ev:
        return f"{head}: the sides differ mod {ev.get('mismatch_prime', 'a prime')} (no re-checked counterexample)"
    if report.notes:
        return f"{head}: {report.notes[0]}"
    if "bound" in ev:
        return f"{head}, failure bound {ev['bound']}"
    return head


MAX_DIFF_SIDE = 200
"""Sides of at most this many gates (circuits) or layers (models) get ``lhs − rhs`` as polynomials in a
failed assertion's message."""

MAX_DIFF_TEXT = 600
"""At most this many characters of ``lhs − rhs`` are shown (the rest is counted, not printed)."""


def _difference(lhs: Any, rhs: Any) -> str:
    """``lhs − rhs`` as polynomials, entry by entry (nonzero entries only), for small circuits and
    models of one shape; '' otherwise or when it cannot be computed (it is a display aid)."""
    from symverify.kernel.ir.baseconv import Model
    from symverify.kernel.ir.circuit import Circuit

    def small(x: Any) -> bool:
        if isinstance(x, Circuit):
            return len(x.gates) <= MAX_DIFF_SIDE
        if isinstance(x, Model):
            return len(x.layers) <= MAX_DIFF_SIDE and x.inner_n * x.inner_d <= 256
        return False

    if not (small(lhs) and small(rhs)) or (lhs.n, lhs.d) != (rhs.n, rhs.d):
        return ""
    try:
        from symverify.kernel.semantics.poly import polynomials, shared_ring

        ring = shared_ring(lhs, rhs)
        a, b = polynomials(lhs, ring), polynomials(rhs, ring)
        parts = []
        for i, (ra, rb) in enumerate(zip(a, b)):
            for j, (pa, pb) in enumerate(zip(ra, rb)):
                diff = pa - pb
                if str(diff) != "0":
                    parts.append(f"({i}, {j}): {diff}")
    except Exception:  # a display aid must never hide the assertion itself
        return ""
    if not parts:
        return ""
    text = "; ".join(parts)
    if len(text) > MAX_DIFF_TEXT:
        text = text[: MAX_DIFF_TEXT - 1] + f"… ({len(parts)} nonzero entries in all)"
    return f"lhs − rhs: {text} (inputs x_(i·d+j) = u[i, j])"


def _short_repr(obj: Any, width: int = 200) -> str:
    """The object's own (short) repr, cut to ``width`` characters; never raises."""
    try:
        text = repr(obj)
    except Exception:
        text = f"<{type(obj).__name__}>"
    return text if len(text) <= width else text[: width - 1] + "…"


def _failure(report: Report, assertion: Callable[..., Report], lhs: Any, rhs: Any) -> str:
    """The message of a failed ``assertion`` (``assert_proved``: "expected proved, found ...")."""
    expected = assertion.__name__.removeprefix("assert_")
    lines = [_headline(report, expected)]
    diff = _difference(lhs, rhs) if not report.proved else ""
    if diff:
        lines.append(diff)
    lines.append(f"lhs: {_short_repr(lhs)}")
    lines.append(f"rhs: {_short_repr(rhs)}")
    lines.append(explain(report))
    return "\n".join(lines)


def assert_proved(lhs: Any, rhs: Any, **verify_kwargs: Any) -> Report:
    """``verify(lhs, rhs, **verify_kwargs)`` and its report, or an ``AssertionError`` whose first
    line is the verdict and the counterexample (``expected proved, found refuted (method exact):
    counterexample u = [[0, 0]]: entry (0, 0) is 0 (lhs) vs 1 (rhs)``), followed by ``lhs − rhs`` as
    polynomials for small sides, short reprs of both sides and :func:`explain`. A numeric
    cross-check asked for (``numeric=...``) that failed, the float executor erring beyond its own
    bound, fails the assertion too, though the verdict does not rest on it. The assertion's own
    frame is hidden from pytest's traceback (``__tracebackhide__``).

    >>> import symverify as sv
    >>> x = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
    >>> y = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + 1], n=1, d=2)
    >>> try:
    ...     assert_proved(x, y, method="exact")
    ... except AssertionError as e:
    ...     print(str(e).splitlines()[1])
    lhs − rhs: (0, 0): -1 (inputs x_(i·d+j) = u[i, j])
    """
    __tracebackhide__ = True
    from symverify.kernel.verification import verify

    report = verify(lhs, rhs, **verify_kwargs)
    if not report.proved:
        raise AssertionError(_failure(report, assert_proved, lhs, rhs))
    _check_numeric(report, assert_proved)
    return report


def assert_refuted(lhs: Any, rhs: Any, **verify_kwargs: Any) -> Report:
    """``verify(lhs, rhs, **verify_kwargs)`` and its report when it is refuted (with a re-checked
    counterexample), else an ``AssertionError`` whose first line names the verdict (as
    :func:`assert_proved`; a numeric cross-check asked for that failed fails it too)."""
    __tracebackhide__ = True
    from symverify.kernel.verification import verify

    report = verify(lhs, rhs, **verify_kwargs)
    if not report.refuted:
        raise AssertionError(_failure(report, assert_refuted, lhs, rhs))
    _check_numeric(report, assert_refuted)
    return report


def _check_numeric(report: Report, assertion: Callable[..., Report]) -> None:
    """An ``AssertionError`` when ``verify(..., numeric=...)`` asked for the float cross-check and
    it failed (a float executor erred beyond its own bound): the verdict does not rest on it, but a
    test that asked for it would otherwise pass on an executor bug. A cross-check that compared
    nothing (``not run``, a note says why) does not fail the assertion."""
    __tracebackhide__ = True
    summary, verdict = report.numeric, assertion.__name__.removeprefix("assert_")
    if summary is not None and summary.passed is False:
        raise AssertionError(f"expected {verdict} with the numeric cross-check asked for passing, found {verdict} "
                             f"(method {report.method}) but the cross-check failed: {summary}\n{explain(report)}")


SUPPORTED = ("str, int, Fraction, float, bool, None, decimal.Decimal, complex, datetime/date/time/timedelta, "
             "uuid.UUID, paths, enums, symverify's Sym, lists, tuples, sets, mappings, numpy arrays and scalars, "
             "torch tensors, pandas DataFrame/Series/Index, Report, Compiled, Instance, ProofResult")
"""What :func:`golden_record` records (docs/formats.md, "Golden files")."""


def _text_types() -> tuple[type, ...]:
    """Types whose ``str`` is exact and the same on every run and machine, recorded as that text."""
    import datetime
    import decimal
    import pathlib
    import uuid

    from symverify.kernel.ir.scalar import Sym

    return (decimal.Decimal, complex, datetime.date, datetime.time, datetime.timedelta, uuid.UUID, pathlib.PurePath, Sym)


def _exact_text(x: Any) -> str:
    """The exact text of a value of :func:`_text_types`: its ``str``, but a ``Sym`` by
    :func:`~symverify.kernel.ir.scalar.scalar_text` (its ``str`` abbreviates integers of more than
    ``SHOW_DIGITS`` digits, so two coefficients that differ in the middle read the same)."""
    from symverify.kernel.ir.scalar import Sym, scalar_text

    return scalar_text(x) if isinstance(x, Sym) else str(x)


def _pandas(x: Any, depth: int = 0) -> Any:
    """The record of a pandas DataFrame or Series (every value, the index and the column labels or
    name, exactly, and the names of the index's and columns' levels where one has a name:
    ``index_names``, ``columns_names``) or of a named Index (``{"type": "pandas.Index", "names",
    "values"}``; an unnamed one is the list of its values), or None when ``x`` is none of these
    (pandas is never imported here: a pandas object exists only once its user imported pandas)."""
    import sys

    pd = sys.modules.get("pandas")
    if pd is None:
        return None
    def names(index: Any) -> Any:  # the names of an index's levels, when one has a name (else left out)
        return _stable(list(index.names), depth + 1) if any(n is not None for n in index.names) else None

    if isinstance(x, pd.DataFrame):
        rec = {"type": "pandas.DataFrame", "columns": _stable(x.columns.tolist(), depth + 1),
               "index": _stable(x.index.tolist(), depth + 1),
               "values": _stable([list(row) for row in x.itertuples(index=False, name=None)], depth + 1)}
        for key, index in (("columns_names", x.columns), ("index_names", x.index)):
            if (level_names := names(index)) is not None:
                rec[key] = level_names
        return rec
    if isinstance(x, pd.Series):
        rec = {"type": "pandas.Series", "name": _stable(x.name, depth + 1), "index": _stable(x.index.tolist(), depth + 1),
               "values": _stable(list(x), depth + 1)}
        if (level_names := names(x.index)) is not None:
            rec["index_names"] = level_names
        return rec
    if isinstance(x, pd.Index) and (level_names := names(x)) is not None:
        return {"type": "pandas.Index", "names": level_names, "values": _stable(x.tolist(), depth + 1)}
    if x is pd.NA or x is pd.NaT:  # tagged: their text ("<NA>", "NaT") is also a string's record
        return {"type": _MISSING[x is pd.NaT]}
    return None


def _stable(x: Any, depth: int = 0) -> Any:
    """JSON with one type per field: numbers as the proof-run JSON writes them (floats to 6 digits)
    (:func:`~symverify.scripts.protocol.stable_number`; numpy scalars and arrays and torch tensors as
    their Python values, whole; a ``np.longdouble`` as a float, :func:`_wide_float`), mappings with
    sorted keys as their exact text (:func:`_key`), pandas DataFrames and Series as
    their values, index and column names, ``pandas.NA``, ``pandas.NaT`` and numpy's NaT tagged
    (``{"type": "pandas.NA"}``: :data:`_MISSING`, :func:`_dates`), never as a string's or None's
    record, types of :func:`_text_types` as their exact text.
    Anything else (a type whose text may elide values, like a model's or a user class's repr, or
    name its address) is a :class:`UsageError` listing :data:`SUPPORTED`; so is a string that is no
    UTF-8 text (a lone surrogate)."""
    from symverify.ir import limits
    from symverify.ir.bigint import int_to_text, rational_to_text, safe_repr
    from symverify.scripts.protocol import stable_number

    if depth > limits.MAX_JSON_DEPTH:  # a list or mapping that holds itself recursed until RecursionError
        raise UsageError(f"golden_record: values nested more than symverify.ir.limits.MAX_JSON_DEPTH = {limits.MAX_JSON_DEPTH} "
                         "levels deep (a list or mapping that holds itself?), found a "
                         f"{type(x).__name__} at depth {depth}; no golden file holds it")
    if isinstance(x, str):
        try:
            x.encode("utf-8")
        except UnicodeEncodeError as e:
            raise UsageError(f"golden_record: the string {safe_repr(x, 60)} is no UTF-8 text (character {e.start}: "
                             f"{e.reason}), so no golden file can hold it") from None
        return x
    if isinstance(x, bool) or x is None:
        return x
    frame = _pandas(x, depth)
    if frame is not None:
        return frame
    if getattr(x, "dtype", None) is not None and callable(getattr(x, "tolist", None)):
        if getattr(x.dtype, "kind", None) in ("m", "M"):  # datetime64, timedelta64: NaT's Python value is None
            return _dates(x, depth)
        if getattr(x.dtype, "names", None) and _holds_dates(x.dtype):  # a structured value with a date field
            return _fields(x, depth)
        value = x.tolist()  # a numpy scalar or array: its Python value, whole (str() elides long arrays)
        if type(value) is type(x):  # np.longdouble, np.clongdouble: no Python value of their own
            value = _wide_float(x)
        return _stable(value, depth)
    if isinstance(x, numbers.Integral):  # exact at any size (a decimal or "0x…" string beyond 1590 bits)
        return int_to_text(int(x))
    if isinstance(x, Fraction):
        return rational_to_text(x)
    if isinstance(x, float):
        return stable_number(x)
    if isinstance(x, Mapping):
        # each item read once, its key's text taken from the key object read (a mapping may make its keys
        # as it iterates: keyed by id(), a key freed and another made at its address took its text)
        items = sorted(((_key(k), v) for k, v in x.items()), key=lambda kv: kv[0])
        out = {_stable(t, depth + 1): _stable(v, depth + 1) for t, v in items}
        if len(out) != len(items):
            counts = collections.Counter(t for t, _ in items)
            same = sorted(t for t, n in counts.items() if n > 1)
            raise UsageError(f"golden_record: keys that read the same as text ({', '.join(map(repr, same))}) would "
                             "overwrite each other; give them distinct names")
        return out
    if isinstance(x, (list, tuple)):
        return [_stable(v, depth + 1) for v in x]
    if isinstance(x, (set, frozenset)):  # in an order that does not depend on the hash seed
        return sorted((_stable(v, depth + 1) for v in x), key=lambda v: json.dumps(v, sort_keys=True, ensure_ascii=False))
    if _recordable(x):  # a report, compile result or proof nested in a mapping: its record, not its text
        return golden_record(x)
    if isinstance(x, enum.Enum):  # Verdict, Mode: the value of a str enum, else Class.NAME
        return _stable(x.value if isinstance(x.value, str) else str(x), depth)
    if isinstance(x, _text_types()):
        return _stable(_exact_text(x), depth)
    kind = type(x).__name__
    hint = (f" (keep what verify or compile says about the {kind.lower()}: its Report or Compiled)"
            if kind in ("Circuit", "Model") else "")
    raise UsageError(f"golden_record: expected values of the supported types ({SUPPORTED}), found a {kind}{hint}; "
                     "its text may elide values or name its address, so a changed value could match the stored one: "
                     "record its fields instead (a mapping)")


_MISSING = ("pandas.NA", "pandas.NaT")
"""The tags of the records of ``pandas.NA`` and ``pandas.NaT``: ``{"type": "pandas.NA"}`` and
``{"type": "pandas.NaT"}``. Their text would be the record of the strings ``"<NA>"`` and ``"NaT"``."""


def _dates(x: Any, depth: int) -> Any:
    """The record of a numpy ``datetime64`` or ``timedelta64`` scalar or array, item by item: a
    value whose Python value (``tolist``) is a ``datetime``, ``date`` or ``timedelta`` as its text;
    one whose Python value is an int (a count of its unit where no such Python value holds it: a
    ``datetime64[ns]``, finer units, a multiple unit such as ``10ns``, a ``timedelta64`` of months
    or years, a date beyond year 9999) tagged with its kind and unit, as
    ``{"type": "numpy.datetime64", "unit": "ns", "value": 5}`` (``numpy.timedelta64``; ``unit`` as
    numpy writes it in the dtype, ``"generic"`` for none), so it never reads as the int of that
    count nor as another unit's value; and NaT tagged as ``{"type": "numpy.datetime64", "value":
    "NaT"}`` (``numpy.timedelta64``): its Python value is None, the record of None. In a masked array
    a masked value is None (as in a masked array of any dtype), the others as above. Another
    library's array of such a dtype (pandas' ``DatetimeArray``, ``TimedeltaArray``, an unnamed
    ``DatetimeIndex``) is the record of its ``tolist()``, whose values are its own (``Timestamp``,
    ``Timedelta``, ``pandas.NaT``), not numpy's. A ``np.matrix`` is read as the array it holds (its
    rows are matrices again)."""
    import numpy as np  # x has a numpy dtype: numpy is imported

    if isinstance(x, np.ma.MaskedArray):
        return _masked_dates(np.asarray(x.data), np.ma.getmaskarray(x), depth)
    if not isinstance(x, (np.ndarray, np.generic)):
        return _stable(x.tolist(), depth)
    if isinstance(x, np.ndarray) and x.ndim:
        return [_dates(v, depth + 1) for v in np.asarray(x)]
    kind = f"numpy.{'datetime64' if x.dtype.kind == 'M' else 'timedelta64'}"
    if np.isnat(x):
        return {"type": kind, "value": "NaT"}
    value = x.tolist()
    if isinstance(value, int):  # a count of its unit: tagged, never the int's record
        dtype: Any = x.dtype  # datetime64 or timedelta64 (kind M or m)
        unit, count = np.datetime_data(dtype)
        return {"type": kind, "unit": unit if count == 1 else f"{count}{unit}", "value": _stable(value, depth + 1)}
    return _stable(value, depth)


def _holds_dates(dtype: Any) -> bool:
    """Whether a numpy dtype is, or holds in a field or subarray at any depth, a ``datetime64`` or
    ``timedelta64``."""
    if dtype.names:
        return any(_holds_dates(dtype.fields[name][0]) for name in dtype.names)
    if dtype.subdtype is not None:
        return _holds_dates(dtype.subdtype[0])
    return bool(dtype.kind in ("m", "M"))


def _fields(x: Any, depth: int) -> Any:
    """The record of a numpy structured array or scalar with a date or duration field: each item as
    the list of its fields' records, in order (what ``tolist`` gives, its tuple of field values, as a
    list), each field read as a value of its own dtype, so a ``datetime64[ns]`` field is tagged by
    :func:`_dates` (``tolist`` gives it as the int of its count). Another library's value of such a
    dtype is the record of its ``tolist()``; a masked one is a :class:`UsageError` (its masks are per
    field: record each field as an array of its own)."""
    import numpy as np  # x has a numpy structured dtype: numpy is imported

    if isinstance(x, np.ma.MaskedArray):
        raise UsageError(f"golden_record: expected a plain numpy structured array, found a masked one of dtype {x.dtype} "
                         "with a date or duration field; record each field as an array of its own (x[name])")
    if not isinstance(x, (np.ndarray, np.void)):
        return _stable(x.tolist(), depth)
    if isinstance(x, np.ndarray) and x.ndim:
        return [_fields(v, depth + 1) for v in x]
    item: Any = x[()] if isinstance(x, np.ndarray) else x
    return [_stable(item[name], depth + 1) for name in item.dtype.names]


def _masked_dates(data: Any, mask: Any, depth: int) -> Any:
    """The record of a masked numpy array of dates or durations (its ``data`` and its mask, of one
    shape): a masked item as None, the others as :func:`_dates` records them."""
    if data.ndim:
        return [_masked_dates(d, m, depth + 1) for d, m in zip(data, mask)]
    return None if bool(mask) else _dates(data[()], depth)


def _wide_float(x: Any) -> float | complex:
    """The Python float (complex) of a numpy value wider than one (``np.longdouble``,
    ``np.clongdouble``), recorded to 6 digits as floats are; a finite value that a float cannot hold
    (beyond ``±1.8e308``, or nonzero below its smallest value) is a :class:`UsageError`, never
    recorded as ``inf`` or ``0``. Any other value with no Python value is a :class:`UsageError` too."""
    import math

    import numpy as np  # x is a numpy value: numpy is imported

    kind = f"numpy {getattr(x, 'dtype', type(x).__name__)}"
    try:
        parts = [x.real, x.imag] if getattr(getattr(x, "dtype", None), "kind", "") == "c" else [x]
        with np.errstate(all="ignore"):
            narrow = [float(p) for p in parts]
            finite = [bool(np.isfinite(p)) for p in parts]
            nonzero = [bool(p != 0) for p in parts]
    except (AttributeError, TypeError, ValueError, OverflowError):
        raise UsageError(f"golden_record: expected values of the supported types ({SUPPORTED}), found a {kind} value "
                         "that has no Python value; record float(x), Fraction(...) or str(x)") from None
    for f, fin, nz in zip(narrow, finite, nonzero):
        if fin and (math.isinf(f) or (f == 0 and nz)):
            raise UsageError(f"golden_record: the {kind} value {x!r} is {'beyond' if math.isinf(f) else 'below'} the range "
                             f"of a float, so its record would read {f}; record it exactly as a Fraction "
                             "(Fraction(*x.as_integer_ratio())) or as text")
    return complex(narrow[0], narrow[1]) if len(narrow) == 2 else narrow[0]


KEY_TYPES = "str, int, Fraction, float, bool, None, enums, numpy scalars (not datetime64 or timedelta64), Decimal, dates and times, UUIDs, paths, Sym and tuples of these"
"""The mapping keys :func:`golden_record` records (as their text)."""


def _key(k: Any) -> str:
    """A mapping key's text, exact: a string itself, an int or Fraction of any size exactly
    (:func:`~symverify.ir.bigint.rational_to_text`), other numbers, enums and :func:`_text_types` by
    ``str``, a tuple of these as a tuple. A key of another type (a user's class, whose text may name
    its address or elide values; a frozenset, whose text depends on the hash seed) is a :class:`UsageError`."""
    from symverify.ir.bigint import rational_to_text

    if isinstance(k, str):
        return str(k)
    if isinstance(k, bool) or k is None or isinstance(k, enum.Enum):
        return str(k)
    if isinstance(k, _text_types()):
        return _exact_text(k)
    if getattr(getattr(k, "dtype", None), "kind", None) in ("m", "M"):  # before Integral: timedelta64 is registered as one
        which = "datetime64" if k.dtype.kind == "M" else "timedelta64"
        shown = "NaT" if k != k else str(k)
        raise UsageError(f"golden_record: mapping keys are recorded as their text: expected keys of the types {KEY_TYPES}, "
                         f"found a numpy {which} key {shown}; such a key has no exact text of its own (NaT would read as "
                         "the string key 'NaT', a value's text depends on its unit): key the mapping by str(key) or a name")
    if isinstance(k, (numbers.Integral, Fraction)) and not getattr(k, "shape", ()):
        return rational_to_text(Fraction(k))
    if (isinstance(k, numbers.Number) and getattr(k, "dtype", None) is not None) or isinstance(k, float):
        return str(k)
    if isinstance(k, tuple):
        texts = [_key(i) for i in k]  # each item checked
        if _plain_tuple(k):
            try:
                return str(k)  # the text earlier versions recorded
            except ValueError:  # an int beyond Python's int/str digit limit
                pass
        return "(" + ", ".join(repr(i) if isinstance(i, str) else t for i, t in zip(k, texts)) + ("," if len(k) == 1 else "") + ")"
    raise UsageError(f"golden_record: mapping keys are recorded as their text: expected keys of the types {KEY_TYPES}, "
                     f"found a {type(k).__name__} key; its text may name its address, elide values or change from run "
                     "to run: key the mapping by a name")


def _plain_tuple(k: tuple[Any, ...]) -> bool:
    """Whether ``str(k)`` is exact text for the tuple key ``k``: every item, at every depth, is a
    str, int, float, Fraction, None or such a tuple (their ``repr`` is exact). A nested tuple holding
    another type (a ``Sym``, whose ``repr`` abbreviates integers of more than ``SHOW_DIGITS`` digits)
    is written item by item (:func:`_key`), so two keys that differ only inside it are told apart."""
    return all(_plain_tuple(i) if isinstance(i, tuple) else isinstance(i, (str, int, float, Fraction)) or i is None
               for i in k)


def _recordable(x: Any) -> bool:
    """Whether ``x`` is one of the objects :func:`golden_record` has a record of (not a mapping)."""
    from symverify.compiler.result import Compiled
    from symverify.kernel.verification import Report
    from symverify.scripts.protocol import Instance, ProofResult

    return isinstance(x, (Report, Compiled, Instance, ProofResult))


def golden_record(obj: Any) -> dict[str, Any]:
    """The stable record of a report, a compile result, a proof instance or result, a mapping, or a
    pandas DataFrame or Series (its values, index and column names or name, whole).

    Kept: verdicts, methods, the sides' statistics with each side's ``digest`` (the SHA-256 of its
    exact content, :func:`~symverify.kernel.verification.side_digest`: two claims about different
    sides of equal statistics get different records), a compile result's ``model_digest`` and, when it
    knows the circuit compiled (``symverify.compile`` sets ``source``), ``source_digest`` (the same
    digests ``verify`` gives those sides: a compiler change that makes another model of the same shape
    and resources differs), a proof instance's ``digests`` (those of the sides of the reports it
    was made from, when it was), resources, bounds, the failure bound of a proof,
    an argued claim's ``checks`` (when not None) and, for a refutation, ``"counterexample": "re-checked"``. Left out: timings, engine choices,
    paths (they differ between machines), the bound of the trials an ``unknown`` ran before its
    timeout (it depends on the time) and the counterexample's input and values (they depend on the seed:
    ``verify(seed=None)`` or another seed finds another one; :func:`assert_refuted` and
    ``Report.to_json()`` show it). So the record is a function of the claim alone: runs with
    different seeds or timings give byte-identical records. One exception: a randomized proof's
    failure bound depends on the engine that method ``auto`` or ``randomized`` chose (torch where it
    is installed and cheaper, else Python ints); ``verify(..., method="randomized", backend="python")``
    states the same bound on every machine. In a mapping, reports, compile results
    and proofs are recorded the same way, and sets as sorted lists. Values of types without an exact
    record (:data:`SUPPORTED` lists those with one) are refused: their text may elide values or name
    an address, so a changed value could match the stored record.
    """
    from symverify.compiler.result import Compiled
    from symverify.kernel.verification import Report
    from symverify.scripts.protocol import Instance, ProofResult

    if isinstance(obj, Report):
        rec: dict[str, Any] = {"kind": "report", "verdict": obj.verdict, "method": obj.method, "lhs": obj.lhs, "rhs": obj.rhs}
        if "bound" in obj.evidence and obj.proved:  # an unknown's bound is that of the trials run before the timeout
            rec["failure_bound"] = obj.evidence["bound"]
        if obj.counterexample is not None:  # its input and values depend on the seed: only that there is one
            rec["counterexample"] = "re-checked"
    elif isinstance(obj, Compiled):
        rec = {"kind": "compiled", "method": obj.method, "signature": obj.model.signature,
               "resources": obj.resources, "bounds": obj.bounds, **obj.digests("golden_record: ")}
    elif isinstance(obj, Instance):
        rec = {"kind": "instance", "name": obj.name, "verdict": obj.verdict, "claim": obj.kind.value, "basis": obj.basis,
               "method": obj.method, "resources": obj.resources, "bounds": obj.bounds, "ok": obj.ok}
        if obj.checks is not None:  # an argued claim's checks held: a run where they are no longer run differs
            rec["checks"] = obj.checks
        if "failure_bound" in (shown := obj.to_json()):  # a randomized proof's error bound, exact
            rec["failure_bound"] = shown["failure_bound"]
        if "digests" in shown:  # what a claim made from verify's reports is about
            rec["digests"] = shown["digests"]
    elif isinstance(obj, ProofResult):
        rec = {"kind": "proof", "name": obj.name, "title": obj.title, "ok": obj.ok,
               "instances": [golden_record(i) for i in obj.instances]}
    elif isinstance(obj, Mapping):
        rec = dict(obj)
    elif (frame := _pandas(obj)) is not None and isinstance(frame, dict):
        return dict(frame)
    else:
        hint = (f"; keep what verify or compile says about the {type(obj).__name__.lower()} "
                "(symverify_golden.check(assert_proved(a, b)) or check(sv.compile(c)))"
                if type(obj).__name__ in ("Circuit", "Model") else "")
        raise UsageError(f"golden_record: expected a Report, Compiled, Instance, ProofResult, mapping or pandas DataFrame or Series, found {type(obj).__name__}{hint}")
    return _stable(rec)


def golden_text(obj: Any) -> str:
    """:func:`golden_record` as sorted, indented JSON with a final newline (diff-friendly)."""
    return json.dumps(golden_record(obj), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

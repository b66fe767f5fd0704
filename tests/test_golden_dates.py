"""Golden records of numpy ``datetime64`` and ``timedelta64`` values whose Python value is an int
(``tolist``: nanoseconds and finer, a multiple unit, months and years of a timedelta, a date beyond
``datetime``'s range): they are tagged with their kind and unit, so none has the record of an int
or of another unit's value. Values whose Python value is a ``datetime``, ``date`` or ``timedelta``
keep their text record (docs/formats.md, "Golden files")."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from symverify.testing import golden_record

UNITS = ["Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as"]


def _record(x):
    """The record of ``x`` as a value in a mapping, as canonical JSON text."""
    return json.dumps(golden_record({"v": x}), sort_keys=True)


def test_a_nanosecond_datetime_is_not_recorded_as_an_int():
    """``np.datetime64(5, "ns").tolist()`` is the int 5: its record was the int 5's, so a datetime
    column matched a column of ints (and 5 ns matched 5 ps, 5 × 10 ns and a 5 ns duration)."""
    assert golden_record({"v": np.datetime64(5, "ns")}) == {"v": {"type": "numpy.datetime64", "unit": "ns", "value": 5}}
    assert golden_record({"v": np.timedelta64(5, "ns")}) == {"v": {"type": "numpy.timedelta64", "unit": "ns", "value": 5}}
    assert golden_record({"v": np.datetime64(5, "10ns")})["v"]["unit"] == "10ns"
    records = {_record(x) for x in (5, np.int64(5), np.datetime64(5, "ns"), np.datetime64(5, "ps"),
                                    np.datetime64(5, "10ns"), np.timedelta64(5, "ns"), np.timedelta64(5, "M"),
                                    np.timedelta64(5, "Y"), np.timedelta64(5))}
    assert len(records) == 8  # the int and the numpy int alone share one: a numpy scalar is its Python value


def test_an_array_and_a_masked_array_of_nanosecond_datetimes_are_tagged_item_by_item():
    dates = np.array([[1, 2]], dtype="datetime64[ns]")
    tag = {"type": "numpy.datetime64", "unit": "ns"}
    assert golden_record({"a": dates}) == {"a": [[{**tag, "value": 1}, {**tag, "value": 2}]]}
    masked = np.ma.array(np.array([1, 2], dtype="datetime64[ns]"), mask=[False, True])
    assert golden_record({"a": masked}) == {"a": [{**tag, "value": 1}, None]}  # masked: None, as for any dtype
    days = np.ma.array(np.array(["2020-01-01", "NaT", "2020-01-03"], dtype="datetime64[D]"), mask=[False, False, True])
    assert golden_record({"a": days}) == {"a": ["2020-01-01", {"type": "numpy.datetime64", "value": "NaT"}, None]}


def test_values_with_a_python_date_or_duration_keep_their_text_record():
    """Golden files of dates, times and durations numpy gives as Python values stay byte for byte."""
    assert golden_record({"d": np.datetime64("2020-01-01"), "t": np.datetime64(5, "us"), "s": np.timedelta64(3, "s"),
                          "y": np.datetime64("1975")}) == {
        "d": "2020-01-01", "t": "1970-01-01 00:00:00.000005", "s": "0:00:03", "y": "1975-01-01"}
    assert golden_record({"v": np.datetime64("NaT", "ns")}) == {"v": {"type": "numpy.datetime64", "value": "NaT"}}


def _unit(kind: str):
    units = st.sampled_from(UNITS + (["generic"] if kind == "m" else []))
    return st.tuples(units, st.sampled_from([1, 1, 1, 3, 10])).map(
        lambda uc: uc[0] if uc[0] == "generic" or uc[1] == 1 else f"{uc[1]}{uc[0]}")


def _numpy_time(kind: str):
    @st.composite
    def draw(draw):
        unit = draw(_unit(kind))
        cls = np.datetime64 if kind == "M" else np.timedelta64
        if draw(st.integers(0, 9)) == 0:
            return cls("NaT") if unit == "generic" else cls("NaT", unit)
        value = draw(st.one_of(st.integers(-1000, 1000), st.integers(-(2**62), 2**62)))
        try:
            return cls(value) if unit == "generic" else cls(value, unit)
        except (ValueError, OverflowError):
            assume(False)
    return draw()


VALUES = st.one_of(st.integers(-(2**70), 2**70), st.integers(-1000, 1000).map(np.int64), _numpy_time("M"),
                   _numpy_time("m"))


def _family(x) -> str:
    return getattr(getattr(x, "dtype", None), "kind", "i") if not isinstance(x, int) else "i"


def _same(a, b) -> bool:
    """Whether ``a`` and ``b`` are one value of one kind (numpy's NaT counts as one value)."""
    if _family(a) != _family(b):
        return False
    if _family(a) == "i":
        return int(a) == int(b)
    if np.isnat(a) or np.isnat(b):
        return bool(np.isnat(a) and np.isnat(b))
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # years or months against days: no common unit, so never the same value
        return False


@given(VALUES, VALUES)
def test_distinct_values_of_distinct_kinds_have_distinct_records(a, b):
    """Over ints, numpy ints, and numpy datetimes and durations of every unit (multiples and NaT
    included): equal records mean one kind and one value."""
    if _record(a) == _record(b):
        assert _same(a, b), (a, b, _record(a))


@given(st.sampled_from(UNITS), st.integers(-(2**40), 2**40))
def test_every_record_of_a_numpy_time_is_a_tag_or_a_text(unit, value):
    """No numpy datetime or duration is recorded as a bare number."""
    for x in (np.datetime64(value, unit), np.timedelta64(value, unit)):
        rec = golden_record({"v": x})["v"]
        assert isinstance(rec, str) or (isinstance(rec, dict) and rec["type"].startswith("numpy.")), (x, rec)


@pytest.mark.parametrize("kind", ["datetime64", "timedelta64"])
def test_a_huge_value_is_tagged_exactly(kind):
    """A value beyond a float's exact ints is recorded exactly (its int, as every int is)."""
    cls = getattr(np, kind)
    x = cls(2**62 + 1, "as")
    assert golden_record({"v": x}) == {"v": {"type": f"numpy.{kind}", "unit": "as", "value": 2**62 + 1}}


def test_a_structured_array_with_a_nanosecond_field_tags_it():
    """A structured array's ``tolist`` gives a ``datetime64[ns]`` field as the int of its count too:
    ``[(5, 1)]`` had the record of an array of two int fields."""
    tag = {"type": "numpy.datetime64", "unit": "ns", "value": 5}
    rows = np.array([(5, 1)], dtype=[("t", "M8[ns]"), ("i", "i8")])
    assert golden_record({"v": rows}) == {"v": [[tag, 1]]}
    assert golden_record({"v": rows[0]}) == {"v": [tag, 1]} == golden_record({"v": np.array(rows[0])})
    ints = np.array([(5, 1)], dtype=[("t", "i8"), ("i", "i8")])
    assert _record(rows) != _record(ints)
    nested = np.array([(5, [1, 2], (3,))], dtype=[("t", "M8[ns]"), ("s", "m8[ns]", (2,)), ("n", [("u", "M8[ps]")])])
    span = {"type": "numpy.timedelta64", "unit": "ns"}
    assert golden_record({"v": nested}) == {"v": [[tag, [{**span, "value": 1}, {**span, "value": 2}],
                                                   [{"type": "numpy.datetime64", "unit": "ps", "value": 3}]]]}


def test_a_structured_array_without_dates_keeps_its_record():
    rows = np.array([(5, 1.5, "a")], dtype=[("i", "i8"), ("f", "f8"), ("s", "U1")])
    assert golden_record({"v": rows}) == {"v": [[5, 1.5, "a"]]}
    days = np.array([("2020-01-01", 2)], dtype=[("d", "M8[D]"), ("i", "i8")])
    assert golden_record({"v": days}) == {"v": [["2020-01-01", 2]]}  # a date field: its text, as before


def test_a_masked_structured_array_with_a_date_field_is_refused():
    from symverify.errors import UsageError

    masked = np.ma.array(np.array([(5, 1)], dtype=[("t", "M8[ns]"), ("i", "i8")]), mask=[(True, False)])
    with pytest.raises(UsageError, match=r"expected a plain numpy structured array, found a masked one of dtype .*M8\[ns\]"):
        golden_record({"v": masked})

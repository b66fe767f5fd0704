"""Golden records of missing values: ``pandas.NA``, ``pandas.NaT`` and numpy's NaT are tagged, so
none has the record of a string (``"<NA>"``, ``"NaT"``) or of ``None`` (docs/formats.md, "Golden
files")."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from symverify.testing import golden_record, golden_text

try:
    import pandas as pd
except ImportError:  # the numpy and plain values are still checked
    pd = None

NP_NAT = {"datetime": np.datetime64("NaT"), "timedelta": np.timedelta64("NaT")}


def _record(x):
    """The record of ``x`` as a value in a mapping, as canonical JSON text."""
    return json.dumps(golden_record({"v": x}), sort_keys=True)


def test_numpy_nat_is_not_recorded_as_none():
    """``np.datetime64("NaT").tolist()`` is None: a datetime column with a missing value matched a
    golden file holding None there, and one holding no missing value but a None."""
    assert _record(NP_NAT["datetime"]) != _record(None)
    assert _record(NP_NAT["timedelta"]) != _record(None)
    assert _record(NP_NAT["datetime"]) != _record(NP_NAT["timedelta"])
    assert golden_record({"v": NP_NAT["datetime"]}) == {"v": {"type": "numpy.datetime64", "value": "NaT"}}
    days = np.array([["2020-01-01", "NaT"]], dtype="datetime64[D]")
    assert golden_record({"a": days}) == {"a": [["2020-01-01", {"type": "numpy.datetime64", "value": "NaT"}]]}
    assert golden_record({"a": np.array(NP_NAT["timedelta"])}) == {"a": {"type": "numpy.timedelta64", "value": "NaT"}}
    # values that are no NaT: as before
    assert golden_record({"a": days[:, :1], "t": np.timedelta64(3, "s")}) == {"a": [["2020-01-01"]], "t": "0:00:03"}


def _values():
    """Values of the kinds a column with missing values holds: missing markers, strings (the markers'
    text among them), ints and bools."""
    markers = [None, *NP_NAT.values()] + ([pd.NA, pd.NaT] if pd is not None else [])
    texts = ["<NA>", "NaT", "None", "null", "nan", "NA", "numpy.datetime64", "pandas.NA"]
    return st.one_of(st.sampled_from(markers), st.sampled_from(texts), st.text(max_size=8),
                     st.integers(-(1 << 64), 1 << 64), st.booleans())


def _same(a, b) -> bool:
    """Whether ``a`` and ``b`` are one value: the same missing marker, or equal values of one type."""
    if not isinstance(a, (str, int)) or not isinstance(b, (str, int)):
        return a is b or (type(a) is type(b) and isinstance(a, np.generic) and str(a) == str(b))
    return type(a) is type(b) and a == b


@given(_values(), _values())
def test_distinct_values_have_distinct_records(a, b):
    if _same(a, b):
        assert _record(a) == _record(b)
    else:
        assert _record(a) != _record(b), (a, b)


def test_pandas_na_and_nat_are_not_recorded_as_strings_or_none():
    """``pandas.NA`` was recorded as ``"<NA>"`` and ``pandas.NaT`` as ``"NaT"``: a string column
    holding the text ``"<NA>"`` matched one with a missing value there."""
    if pd is None:
        pytest.skip("pandas is not installed")
    na, text = pd.Series(["a", pd.NA], dtype=object), pd.Series(["a", "<NA>"], dtype=object)
    assert golden_text(na) != golden_text(text)
    assert golden_record(na)["values"] == ["a", {"type": "pandas.NA"}]
    nat, none = pd.Series([pd.NaT, "NaT"], dtype=object), pd.Series([None, "NaT"], dtype=object)
    assert golden_text(nat) != golden_text(none)
    assert golden_record(nat)["values"] == [{"type": "pandas.NaT"}, "NaT"]
    dates = pd.DataFrame({"d": pd.to_datetime(["2020-01-01", None])}, index=pd.DatetimeIndex(["2020-01-02", None]))
    assert golden_record(dates)["index"] == ["2020-01-02 00:00:00", {"type": "pandas.NaT"}]
    assert golden_record(dates)["values"] == [["2020-01-01 00:00:00"], [{"type": "pandas.NaT"}]]
    ints = pd.Series([1, None], dtype="Int64")
    assert golden_record(ints)["values"] == [1, {"type": "pandas.NA"}]
    assert golden_record({"a": pd.NA, "b": "<NA>"}) == {"a": {"type": "pandas.NA"}, "b": "<NA>"}


class _OtherDates:
    """An array of another library with a numpy ``datetime64`` dtype (as pandas' ``DatetimeArray``
    and an unnamed ``DatetimeIndex``): its values are its own, ``datetime`` objects, not numpy's."""

    dtype = np.dtype("datetime64[ns]")
    ndim = 1

    def __init__(self, values):
        self.values = values

    def __iter__(self):
        return iter(self.values)

    def tolist(self):
        return list(self.values)


def test_an_array_of_another_library_with_a_datetime_dtype_is_recorded_by_its_values():
    """Numpy's NaT was tagged by ``np.isnat`` on each item of any value with a datetime dtype: an
    item of pandas' ``DatetimeArray`` (a ``Timestamp`` or ``pandas.NaT``) raised ``TypeError``."""
    import datetime

    dates = _OtherDates([datetime.datetime(2020, 1, 1), datetime.date(2020, 1, 2)])
    assert golden_record({"a": dates}) == {"a": ["2020-01-01 00:00:00", "2020-01-02"]}
    if pd is None:
        return
    index = pd.DatetimeIndex(["2020-01-01", None])
    assert golden_record({"i": index, "a": index.array, "t": pd.array(pd.to_timedelta(["1s", None]))}) == {
        "i": ["2020-01-01 00:00:00", {"type": "pandas.NaT"}], "a": ["2020-01-01 00:00:00", {"type": "pandas.NaT"}],
        "t": ["0 days 00:00:01", {"type": "pandas.NaT"}]}


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
def test_a_matrix_or_masked_array_of_dates_is_recorded_by_its_values():
    """Each item of a datetime array went to ``np.isnat``: a ``np.matrix``'s rows are matrices again
    (``RecursionError``), a masked array's masked value is no datetime (``TypeError``)."""
    days = np.array([["2020-01-01", "NaT"]], dtype="datetime64[D]")
    nat = {"type": "numpy.datetime64", "value": "NaT"}
    assert golden_record({"m": np.matrix(days)}) == {"m": [["2020-01-01", nat]]}
    masked = np.ma.array(np.array(["2020-01-01", "2020-01-02"], dtype="datetime64[D]"), mask=[False, True])
    assert golden_record({"a": masked}) == {"a": ["2020-01-01", None]}  # masked: None, as for any dtype

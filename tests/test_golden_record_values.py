"""Golden records of awkward values: numpy values wider than a float, mapping keys that have no exact
text, pandas index names, symbolic weights with huge coefficients (docs/formats.md, "Golden files")."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from symverify.errors import UsageError
from symverify.testing import golden_record, golden_text

WIDE = np.finfo(np.longdouble).max > np.finfo(np.float64).max  # x86-64: 80-bit long double
needs_wide = pytest.mark.skipif(not WIDE, reason="np.longdouble is a float64 on this platform")


def test_a_numpy_longdouble_is_recorded_as_floats_are():
    """``np.longdouble(x).tolist()`` is the longdouble itself, so the record recursed until
    RecursionError; it is the float, to 6 digits, as float64 values are."""
    assert golden_record({"v": np.longdouble("1.1"), "a": np.array([np.longdouble("0.5")] * 3)}) == {"v": 1.1, "a": [0.5] * 3}
    assert golden_record({"c": np.clongdouble(1 + 2j)}) == {"c": "(1+2j)"}
    rec = golden_record({"n": np.longdouble("nan"), "i": np.longdouble("-inf")})
    assert math.isnan(rec["n"]) and rec["i"] == -math.inf
    assert golden_text({"v": np.longdouble("0.25")}) == golden_text({"v": 0.25})


@needs_wide
@pytest.mark.parametrize("text, where", [("1e4000", "beyond"), ("-1e-4000", "below")])
def test_a_numpy_longdouble_a_float_cannot_hold_is_refused(text, where):
    """Recorded as ``inf`` or ``-0.0`` it would match any other value out of the float's range."""
    with pytest.raises(UsageError, match=rf"golden_record: the numpy float\d+ value np.longdouble\('{text[:2]}.*'\) is "
                                         rf"{where} the range of a float, so its record would read .*; record it exactly "
                                         r"as a Fraction"):
        golden_record({"v": np.longdouble(text)})
    with pytest.raises(UsageError, match=rf"numpy complex\d+ value .* is {where} the range"):
        golden_record({"v": np.clongdouble(np.longdouble(text) * 1j)})


class _Key:
    """A user's class: its text names its address."""


@pytest.mark.parametrize("key, kind", [(_Key(), "_Key"), (frozenset({"a", "b"}), "frozenset"), ((1, _Key()), "_Key")])
def test_a_mapping_key_without_exact_text_is_refused(key, kind):
    """Keys were recorded as ``str(key)`` whatever their type: an address (another record on every
    run), a frozenset's order (another on every hash seed), or a text that elides values (a changed
    key matched), where a value of that type is refused."""
    with pytest.raises(UsageError, match=rf"golden_record: mapping keys are recorded as their text: expected keys of the "
                                         rf"types str, int, .*found a {kind} key; .*key the mapping by a name"):
        golden_record({"m": {key: 1}})


def test_keys_are_recorded_as_before_and_huge_integer_keys_exactly():
    """Keys of the supported types keep the text earlier versions wrote; an int key beyond Python's
    int/str digit limit raised ValueError, it is recorded exactly."""
    import enum

    class Color(enum.Enum):
        RED = "red"

    rec = golden_record({1: "a", 0.5: "b", None: "c", "t": "d", Fraction(1, 3): "e", (1, "x", None): "f",
                         Color.RED: "g", np.int64(7): "h", (Fraction(1, 2),): "i"})
    assert rec == {"1": "a", "0.5": "b", "None": "c", "t": "d", "1/3": "e", "(1, 'x', None)": "f", "Color.RED": "g",
                   "7": "h", "(Fraction(1, 2),)": "i"}
    huge = 10**5000
    rec = golden_record({huge: 1, huge + 1: 2, (huge,): 3})
    assert sorted(rec.values()) == [1, 2, 3] and all(("1" + "0" * 49) in k for k in rec)
    with pytest.raises(UsageError, match=r"keys that read the same as text \('1'\)"):
        golden_record({1: "a", "1": "b"})


class _MadeKeys(Mapping):  # type: ignore[type-arg]
    """A mapping that makes its keys as it iterates (big ints, new objects at every read): a key is
    freed once read and the next one may be made at its address."""

    def __init__(self, n: int, base: int = 10**20) -> None:
        self.n, self.base = n, base

    def __getitem__(self, k: object) -> int:
        if isinstance(k, int) and 0 <= k - self.base < self.n:
            return (k - self.base) ** 2
        raise KeyError(k)

    def __iter__(self) -> Iterator[int]:
        return (self.base + j for j in range(self.n))

    def __len__(self) -> int:
        return self.n


@pytest.mark.parametrize("n", [1, 2, 5, 40])
def test_a_mapping_that_makes_its_keys_as_it_iterates_is_recorded_by_its_items(n):
    """The keys' texts were looked up by ``id()`` of the keys of one iteration while the items of
    another were sorted: a mapping making new key objects at every read raised ``KeyError`` (or, with
    an address reused, gave a key another's text)."""
    base = 10**20
    expected = {str(base + j): j * j for j in range(n)}
    assert golden_record({"m": _MadeKeys(n, base)}) == {"m": expected}
    assert golden_record({"m": _MadeKeys(n, base)}) == golden_record({"m": {base + j: j * j for j in range(n)}})


@given(st.dictionaries(st.one_of(st.text(), st.integers(), st.fractions()), st.integers(), max_size=6))
def test_key_order_never_changes_the_record(d):
    reordered = dict(reversed(list(d.items())))
    try:
        text = golden_text(d)
    except UsageError:  # two keys of one text
        with pytest.raises(UsageError, match="read the same as text"):
            golden_text(reordered)
        return
    assert golden_text(reordered) == text


def test_pandas_index_names_are_recorded():
    """A DataFrame's or Series' index name, and its columns' name, were dropped (and a named Index
    was the list of its values): renaming them matched the golden file. A name is recorded where one
    is set, so records of unnamed ones are as before."""
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": [1, 2]})
    before = {"type": "pandas.DataFrame", "columns": ["a"], "index": [0, 1], "values": [[1], [2]]}
    assert golden_record(df) == before
    named = df.rename_axis("row").rename_axis("col", axis=1)
    assert golden_record(named) == {**before, "index_names": ["row"], "columns_names": ["col"]}
    assert golden_record(df.rename_axis("other")) != golden_record(df.rename_axis("row"))
    s = pd.Series([1], index=pd.Index(["x"], name="k"), name="s")
    assert golden_record(s)["index_names"] == ["k"] and "index_names" not in golden_record(s.rename_axis(None))
    multi = pd.DataFrame({"a": [1]}, index=pd.MultiIndex.from_tuples([(0, 1)], names=["p", None]))
    assert golden_record(multi)["index_names"] == ["p", None] and golden_record(multi)["index"] == [[0, 1]]
    assert golden_record({"i": pd.Index([1, 2], name="n")}) == {"i": {"type": "pandas.Index", "names": ["n"], "values": [1, 2]}}
    assert golden_record({"i": pd.Index([1, 2])}) == {"i": [1, 2]}


def test_a_sym_with_huge_coefficients_is_recorded_exactly():
    """``str(Sym)`` abbreviates an integer of more than ``SHOW_DIGITS`` digits to its size and its
    residue mod 10^9: two weights differing in the middle had one record, as a value and as a key."""
    from symverify.kernel.ir.scalar import sym

    a, b = sym("a") * (10**6000 + 1), sym("a") * (10**6000 + 10**9 + 1)
    assert golden_record({"s": a}) != golden_record({"s": b})
    assert golden_record({a: 1}) != golden_record({b: 1})
    assert golden_record({"s": a})["s"].endswith("1*a") and "digit integer" not in golden_record({"s": a})["s"]
    assert golden_record({"s": sym("a") * 2 - 1}) == {"s": str(sym("a") * 2 - 1)}  # small ones: as before


@pytest.mark.parametrize("wrap", [lambda x: ((x,),), lambda x: (1, ("k", x)), lambda x: ((("deep", x),),)],
                         ids=["tuple-in-tuple", "beside-plain-items", "three-deep"])
def test_a_sym_nested_in_a_tuple_key_is_recorded_exactly(wrap):
    """A tuple key whose items are tuples was written by ``str(key)``, the ``repr`` of each item at
    every depth: a ``Sym`` inside a nested tuple was abbreviated (size and residue mod 10^9), so two
    keys differing in the middle of a coefficient had one record."""
    from symverify.kernel.ir.scalar import scalar_text, sym

    a, b = sym("a") * (10**150 + 1), sym("a") * (10**150 + 10**100 + 1)  # one size, one residue mod 10^9
    ra, rb = golden_record({wrap(a): 1}), golden_record({wrap(b): 1})
    assert ra != rb
    assert scalar_text(a) in next(iter(ra)) and "digit integer" not in next(iter(ra))
    assert golden_record({((1, "x"), None): 1}) == {"((1, 'x'), None)": 1}  # plain nested tuples: as before


def test_an_unknown_report_in_a_pandas_index_or_columns_is_not_kept(tmp_path):
    """Only settled results are kept: an unknown report in a DataFrame's values failed the check, but
    one in its index or columns (or a Series' index), which the record holds too, was written and
    matched on every later unknown run."""
    pd = pytest.importorskip("pandas")
    import symverify as sv
    from symverify.pytest_plugin import GoldenFile

    x = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
    unknown = sv.verify(x, sv.compile(x).model, method="z3", timeout=1e-9)
    assert unknown.verdict is sv.Verdict.UNKNOWN
    hidden = pd.Index([unknown], dtype=object)
    for obj in (pd.DataFrame({"a": [1]}, index=hidden), pd.DataFrame([[1]], columns=hidden),
                pd.Series([1], index=hidden), {"df": pd.DataFrame({"a": [1]}, index=hidden)}):
        for update in (True, False):
            with pytest.raises(pytest.fail.Exception, match=r"symverify_golden.check: .*verify's verdict is unknown.*"
                                                            r"a golden file keeps settled results only"):
                GoldenFile(tmp_path, "t", update).check(obj)
    assert not list(tmp_path.iterdir())
    GoldenFile(tmp_path, "t", True).check(pd.DataFrame({"a": [1]}, index=pd.Index(["r"], name="n")))


@pytest.mark.parametrize(("key", "shown"), [
    (np.timedelta64("NaT"), "numpy timedelta64 key NaT"),
    (np.datetime64("NaT"), "numpy datetime64 key NaT"),
    (np.timedelta64(3, "s"), "numpy timedelta64 key 3 seconds"),
    (np.datetime64("2020-01-01"), "numpy datetime64 key 2020-01-01"),
])
def test_a_numpy_datetime_or_timedelta_key_is_refused_by_name(key, shown):
    """A timedelta64 key (NaT or not) raised TypeError (numpy registers it as an integer); NaT would read
    as the string key 'NaT'. Each such key is a UsageError naming it, in a tuple key too."""
    for mapping in ({key: 1}, {("a", key): 1}):
        with pytest.raises(UsageError, match=rf"golden_record: mapping keys are recorded as their text: .*found a {shown}; "
                                             r"such a key has no exact text of its own .*key the mapping by str\(key\) or a name"):
            golden_record(mapping)

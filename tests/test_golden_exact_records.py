"""Golden records (``symverify.testing.golden_record``, the ``symverify_golden`` fixture) keep values
whole and exactly, and refuse values of types they have no exact record of instead of storing their
text (docs/formats.md, "Golden files")."""

from __future__ import annotations

import pytest

import symverify as sv
from symverify.errors import UsageError


class _Summary:
    """A user's class whose text elides its values, as pandas and numpy print long data."""

    def __init__(self, values):
        self.values = values

    def __str__(self):
        return f"[{self.values[0]} ... {self.values[-1]}]"


def test_golden_records_refuse_objects_known_only_by_their_text():
    """``{"s": _Summary(range(1000))}`` was stored as ``[0 ... 999]``, so a changed value in the middle
    matched the golden file; types golden records do not know are refused, naming the supported ones."""
    from symverify.testing import golden_record

    with pytest.raises(UsageError, match=r"golden_record: expected values of the supported types \(str, int, Fraction, "
                                         r".*pandas DataFrame/Series/Index, Report.*\), found a _Summary; its text may "
                                         r"elide values .*record its fields instead"):
        golden_record({"s": _Summary(list(range(1000)))})


def test_golden_records_refuse_a_circuit_inside_a_mapping():
    """A circuit's repr counts its gates (``gates=2 (lin 1, mul 1)``): two different circuits of the
    same counts had the same record."""
    from symverify.testing import golden_record

    c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
    with pytest.raises(UsageError, match=r"found a Circuit \(keep what verify or compile says about the circuit"):
        golden_record({"c": c})


def test_golden_records_keep_exact_texts_and_values():
    """What was recorded before is recorded the same way: exact numbers, enums by value, texts that
    are exact (Decimal, dates, paths, UUIDs, complex, Sym), numpy arrays whole."""
    import datetime
    import decimal
    import enum
    import pathlib
    import uuid
    from fractions import Fraction

    import numpy as np

    from symverify.kernel.ir.scalar import sym
    from symverify.testing import golden_record

    class Color(enum.Enum):
        RED = "red"
        ONE = 1

    rec = golden_record({"a": np.arange(2000), "c": Color.RED, "o": Color.ONE, "d": decimal.Decimal("1.10"),
                         "t": datetime.datetime(2026, 1, 2, 3, 4, 5, 6), "p": pathlib.PurePosixPath("a/b"),
                         "u": uuid.UUID(int=5), "z": 1 + 2j, "s": sym("a") * 2 - 1, "q": Fraction(1, 3), "n": None})
    assert rec["a"] == list(range(2000))
    assert (rec["c"], rec["o"], rec["d"], rec["t"], rec["p"]) == ("red", "Color.ONE", "1.10", "2026-01-02 03:04:05.000006", "a/b")
    assert (rec["u"], rec["z"], rec["q"], rec["n"]) == ("00000000-0000-0000-0000-000000000005", "(1+2j)", "1/3", None)
    assert "a" in rec["s"]


def test_golden_records_of_pandas_frames_and_series_are_whole():
    """A DataFrame was stored by its text, which elides all but its ends, and a Series by its values
    alone (its index dropped): a changed middle value or index matched the golden file."""
    pd = pytest.importorskip("pandas")
    from symverify.testing import golden_record

    df = pd.DataFrame({"a": list(range(2000)), "b": ["x"] * 2000})
    rec = golden_record({"df": df})["df"]
    assert rec == {"type": "pandas.DataFrame", "columns": ["a", "b"], "index": list(range(2000)),
                   "values": [[i, "x"] for i in range(2000)]}
    changed = df.copy()
    changed.loc[1000, "a"] = -1
    assert golden_record({"df": changed})["df"] != rec
    s = pd.Series([1, 2], index=["x", "y"], name="n")
    assert golden_record(s.to_frame().T)["values"] == [[1, 2]]
    assert golden_record({"s": s})["s"] == {"type": "pandas.Series", "name": "n", "index": ["x", "y"], "values": [1, 2]}
    assert golden_record({"s": s.set_axis(["x", "z"])}) != golden_record({"s": s})

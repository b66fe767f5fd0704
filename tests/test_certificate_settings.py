"""The settings of a direct certificate check (``check_certificate``, ``check_certificate_dask``).

``verify`` checks its options (:meth:`Options.from_call`); a certificate check called directly
takes a ``deadline``, ``max_monomials``, ``memory_limit`` and ``isolate`` of its own. A NaN
deadline or budget compares false with everything, so it used to switch the deadline or the
memory budget off without a word, and a string deadline ended in a ``TypeError``: each is now a
:class:`~symverify.errors.UsageError` naming the argument, before any stage is checked.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import symverify as sv
from symverify.errors import UsageError
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.provers.compositional import check_certificate, check_settings

CIRCUIT = Circuit(1, 2, (Gate.mul(0, 1),), (2, 0))


@pytest.fixture(scope="module")
def compiled() -> sv.Compiled:
    return sv.compile(CIRCUIT)


class FloatSub(float):
    def __gt__(self, other: object) -> bool:
        return False


@pytest.mark.parametrize(("kw", "match"), [
    ({"deadline": math.nan}, r"deadline: expected a time\.monotonic\(\) value.*found nan"),
    ({"deadline": "x"}, r"deadline: expected a time\.monotonic\(\) value.*found 'x'"),
    ({"deadline": True}, r"deadline: expected .*found True"),
    ({"deadline": 10**400}, r"deadline: expected .*found an int of 1329 bits"),
    ({"max_monomials": math.nan}, r"max_monomials: expected an int ≥ 0, found nan"),
    ({"max_monomials": True}, r"max_monomials: expected an int ≥ 0, found True"),
    ({"max_monomials": -1}, r"max_monomials: expected an int ≥ 0, found -1"),
    ({"max_monomials": 2.5}, r"max_monomials: expected an int ≥ 0, found 2\.5"),
    ({"memory_limit": -5}, r"memory_limit: expected None or an int ≥ 1, found -5"),
    ({"memory_limit": "x"}, r"memory_limit: expected None or an int ≥ 1, found 'x'"),
    ({"isolate": "no"}, r"isolate: expected True, False or None \(automatic\), found 'no'"),
    ({"isolate": 0}, r"isolate: expected True, False or None \(automatic\), found 0"),
])
def test_bad_settings_are_refused(compiled: sv.Compiled, kw: dict[str, object], match: str) -> None:
    with pytest.raises(UsageError, match=match):
        check_certificate(CIRCUIT, compiled.model, compiled.certificate, **kw)  # type: ignore[arg-type]


def test_bad_settings_are_refused_on_dask_before_any_cluster(compiled: sv.Compiled) -> None:
    pytest.importorskip("distributed")
    from symverify.kernel.provers.stages_dask import check_certificate_dask

    # refused before a cluster is started: the scheduler given is never reached
    with pytest.raises(UsageError, match=r"max_monomials: expected an int ≥ 0, found nan"):
        check_certificate_dask(CIRCUIT, compiled.model, compiled.certificate, scheduler="tcp://127.0.0.1:9",
                               max_monomials=math.nan)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"deadline: expected .*found nan"):
        check_certificate_dask(CIRCUIT, compiled.model, compiled.certificate, scheduler="tcp://127.0.0.1:9",
                               deadline=math.nan)


def test_good_settings_are_read_as_plain_values(compiled: sv.Compiled) -> None:
    import numpy as np

    assert check_settings(None, 5, None, None) == (None, 5, None, None)
    assert check_settings(math.inf, np.int64(7), np.int64(1 << 30), True) == (math.inf, 7, 1 << 30, True)
    d, *_ = check_settings(FloatSub(-1.0), 1, None, False)
    assert type(d) is float and d == -1.0  # read by the double it stores, not by its own comparisons
    res = check_certificate(CIRCUIT, compiled.model, compiled.certificate, deadline=FloatSub(-1.0))
    assert res.stopped == "timeout"  # a deadline in the past stops the check (its own > said otherwise)
    assert check_certificate(CIRCUIT, compiled.model, compiled.certificate, max_monomials=np.int64(1000)).ok


@given(st.floats(allow_nan=True, allow_infinity=True) | st.integers())
def test_deadline_rule(x: float) -> None:
    if (isinstance(x, float) and math.isnan(x)) or (isinstance(x, int) and x.bit_length() > 1023):
        with pytest.raises(UsageError, match="deadline"):
            check_settings(x, 1, None, None)
    else:
        assert check_settings(x, 1, None, None)[0] == float(x)


@pytest.mark.parametrize("bad", [math.nan, -1, 0, "x", True, math.inf, 10**400])
def test_connect_timeout_is_a_positive_finite_number(compiled: sv.Compiled, bad: object) -> None:
    """A connect timeout that is no positive finite number of seconds was handed to Dask, whose
    complaint read as a failed connection (``cannot connect: could not convert string to float:
    '1-1'`` for -1; for 0 "something accepts connections there but does not answer", with nothing
    listening): it is a UsageError naming the argument, before any connection is tried."""
    pytest.importorskip("distributed")
    from symverify.kernel.provers.stages_dask import check_certificate_dask

    with pytest.raises(UsageError, match=r"^connect_timeout: expected a positive finite number of seconds, found "):
        check_certificate_dask(CIRCUIT, compiled.model, compiled.certificate, scheduler="tcp://127.0.0.1:9",
                               connect_timeout=bad)  # type: ignore[arg-type]


def test_numpy_integers_size_the_tasks_by_their_values(compiled: sv.Compiled) -> None:
    """``stages_per_task`` and ``workers`` take a numpy integer by its value, as every size of the
    API does (``np.int64(2)`` was refused as no positive int); a bool is still no count."""
    pytest.importorskip("distributed")
    import numpy as np

    from symverify.kernel.provers.stages_dask import check_certificate_dask

    # read by value: the argument passes, and the scheduler is what fails
    with pytest.raises(UsageError, match=r"^scheduler tcp://127\.0\.0\.1:9: cannot connect"):
        check_certificate_dask(CIRCUIT, compiled.model, compiled.certificate, scheduler="tcp://127.0.0.1:9",
                               stages_per_task=np.int64(2), connect_timeout=0.5)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"^stages_per_task: expected a positive int, found True"):
        check_certificate_dask(CIRCUIT, compiled.model, compiled.certificate, scheduler="tcp://127.0.0.1:9",
                               stages_per_task=True, connect_timeout=0.5)
    with pytest.raises(UsageError, match=r"^workers: expected a positive int, found 0"):
        check_certificate_dask(CIRCUIT, compiled.model, compiled.certificate, scheduler="local",
                               workers=np.int64(0))  # type: ignore[arg-type]

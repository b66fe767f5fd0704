"""``number_table`` (the resources and bounds of factorizations, instances and compile results): a
plain ``int`` is taken as it is, every other value read by ``plain_resource``, with the same table and
the same errors as before; the label of an error is built only for a value that may raise one."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from symverify.errors import IRError
from symverify.kernel.ir import scalar
from symverify.kernel.ir.scalar import number_table, plain_resource

_values = st.one_of(st.integers(-(2**80), 2**80), st.fractions(), st.floats(allow_nan=False, allow_infinity=False),
                    st.integers(-100, 100).map(np.int64))


@given(st.dictionaries(st.text(min_size=1, max_size=5), _values, max_size=6))
def test_the_table_is_plain_resource_of_every_value(table: dict[str, object]) -> None:
    got = number_table(table, "bounds")
    want = {k: plain_resource(v, "bounds") for k, v in table.items()}
    assert got == want and [type(v) for v in got.values()] == [type(v) for v in want.values()]
    assert all(type(v) in (int, Fraction, float) for v in got.values())


def test_plain_ints_build_no_error_label(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    monkeypatch.setattr(scalar, "safe_repr", lambda x, n=80: calls.append(x) or repr(x))
    assert number_table({"w": 1, "N": 8, "e": 2**70}, "factorization bounds") == {"w": 1, "N": 8, "e": 2**70}
    assert calls == []


@pytest.mark.parametrize(("value", "found"), [(True, "bool True"), ("3", "str '3'"), (math.inf, "finite number, found inf"),
                                              (None, "NoneType None")])
def test_a_bad_value_is_still_refused_naming_its_key(value: object, found: str) -> None:
    with pytest.raises(IRError, match=rf"factorization bounds\['w'\]: expected a .*{found}"):
        number_table({"N": 8, "w": value}, "factorization bounds")

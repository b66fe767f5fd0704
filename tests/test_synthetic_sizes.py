"""The synthetic model builders read ``n``/``d`` as given: 0 is refused by the model's own check,
not replaced by the inner size (``n or inner_n`` built a model of another shape than asked)."""

from __future__ import annotations

import pytest

from symverify.errors import ShapeError
from symverify.executors.synthetic import dense_model, impulse_model


@pytest.mark.parametrize("build", [impulse_model, dense_model])
@pytest.mark.parametrize(("kw", "what"), [({"n": 0}, "n"), ({"d": 0}, "d")])
def test_a_size_of_zero_is_refused(build, kw, what) -> None:
    with pytest.raises(ShapeError, match=rf"model {what}: expected a positive int, found 0"):
        build(8, 2, 1, **kw)


@pytest.mark.parametrize("build", [impulse_model, dense_model])
def test_sizes_default_to_the_inner_state(build) -> None:
    m = build(8, 2, 1)
    assert (m.n, m.d) == (8, 2)
    m = build(8, 2, 1, n=5, d=1)
    assert (m.n, m.d) == (5, 1)

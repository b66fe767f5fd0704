"""Grid storage and the BaseConv layer/model IR: shapes, validation, sizes."""

from fractions import Fraction

import pytest

from symverify import Grid, IRError, Layer, Mode, Model, ShapeError, sym
from symverify.errors import UsageError


def test_grid_paint_overrides_and_counts():
    g = Grid.full(4, 3, 1).paint(0, 2, 0, 3, 0).paint_cells([(3, 2, 5)])
    assert g.to_rows() == [[0, 0, 0], [0, 0, 0], [1, 1, 1], [1, 1, 5]]
    assert g.nonzero_count() == 6 and g.get(3, 2) == 5 and g.get(0, 0) == 0
    assert g.transpose().rows == 3
    assert Grid.zeros(2, 2).is_zero()


def test_large_mask_grid_is_small_in_memory():
    g = Grid.zeros(4096, 64).paint(2048, 4096, 0, 64, 1)
    assert g.storage_size() == 1 and g.nonzero_count() == 2048 * 64


@pytest.mark.parametrize(
    "make, err, match",
    [
        (lambda: Grid(2, 2, 0, ((0, 3, 0, 1, 1),)), ShapeError, r"rows \[0, 3\) × cols \[0, 1\) do not fit in a 2×2 grid"),
        (lambda: Grid(2, 2, 0, ((0, 1, 0),)), IRError, r"expected \(row_start, row_stop, col_start, col_stop, value\)"),
        (lambda: Grid(-1, 2), ShapeError, r"non-negative integer sizes"),
        (lambda: Grid.from_rows([[1, 2], [3]]), ShapeError, r"row 1: expected 2 entries, found 1"),
        (lambda: Grid.zeros(2, 2).paint(0, 1, 0, 1, 0.25), IRError, r"found the float 0.25"),
    ],
)
def test_grid_validation(make, err, match):
    with pytest.raises(err, match=match):
        make()


def _layer(nn=3, dd=2, **kw):
    return Layer.make(nn, dd, **kw)


def test_model_signature_and_params():
    L = _layer(W=Grid.identity(2), b2=Grid.full(3, 2, 1))
    m = Model(2, 1, 3, 2, (L, L))
    assert m.signature == (2, 2, 1, 3, 2)
    assert m.param_count() == 2 * (4 + 3 * 6)
    assert m.nonzero_param_count() == 2 * (2 + 6)
    assert m.then(m).depth == 4
    assert Model(2, 1, 3, 2, (_layer(W=Grid.from_cells(2, 2, {(0, 1): sym("w")})),)).params() == {"w"}


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: Layer(Grid.zeros(2, 3), Grid.zeros(3, 2), Grid.zeros(3, 2), Grid.zeros(3, 2)), r"layer W: expected a square d'×d' matrix, found 2×3"),
        (lambda: Layer(Grid.zeros(2, 2), Grid.zeros(3, 2), Grid.zeros(4, 2), Grid.zeros(3, 2)), r"layer h: expected shape 3×2 \(N'×d', from b1 and W\), found 4×2"),
        (lambda: Layer(Grid.zeros(2, 2), Grid.zeros(3, 2), Grid.zeros(3, 2), Grid.zeros(3, 2), "acausal"), r"expected 'causal' or 'cyclic', found 'acausal'"),
        (lambda: Layer([[1]], Grid.zeros(3, 2), Grid.zeros(3, 2), Grid.zeros(3, 2)), r"layer field W: expected a Grid, found list"),
        (lambda: Model(4, 1, 3, 2, ()), r"inner size 3×2 must contain the input 4×1"),
        (lambda: Model(2, 1, 3, 2, (_layer(nn=4),)), r"layer 0: expected inner shape 3×2 \(N'×d'\), found 4×2"),
        (lambda: Model(0, 1, 3, 2, ()), r"model n: expected a positive int, found 0"),
        (lambda: Model(2, 1, 3, 2, ("layer",)), r"layer 0: expected a Layer, found str"),
        (lambda: Model(2, 1, 3, 2, ()).then(Model(2, 1, 4, 2, ())), r"cannot stack models"),
    ],
)
def test_model_validation(make, match):
    with pytest.raises(IRError, match=match):
        make()


def test_mode_strings_are_accepted():
    L = Layer(Grid.zeros(1, 1), Grid.zeros(1, 1), Grid.zeros(1, 1), Grid.zeros(1, 1), "cyclic")
    assert L.mode is Mode.CYCLIC


def test_raw_grid_constructor_checks_values():
    with pytest.raises(IRError, match=r"grid rectangle 0 value: .*found the float 0.5"):
        Grid(1, 1, 0, ((0, 1, 0, 1, 0.5),))
    with pytest.raises(IRError, match=r"grid fill: .*float"):
        Grid(1, 1, 0.25)
    with pytest.raises(IRError, match=r"grid rectangle 0: expected int bounds"):
        Grid(2, 2, 0, ((0, 1.0, 0, 1, 1),))
    assert Grid(1, 1, "1", ((0, 1, 0, 1, "1/2"),)).get(0, 0) == Fraction(1, 2)


def test_identity_memo_keys_by_identity_and_key_and_evicts_least_recent():
    from symverify.kernel.ir.memo import IdentityMemo

    memo: IdentityMemo[int] = IdentityMemo(2)
    a, b, c = [0], [0], [0]  # equal values, distinct objects
    calls: list[int] = []

    def compute(v: int) -> int:
        calls.append(v)
        return v

    assert memo(a, lambda: compute(1)) == 1 and memo(b, lambda: compute(2)) == 2  # equal is not identical
    assert memo(a, lambda: compute(9)) == 1 and memo(a, lambda: compute(3), key="q") == 3  # a key is its own entry
    assert len(memo) == 2 and memo.get(b) is None  # b was the least recently used
    memo.put(c, 4)
    assert memo.get(a) is None and memo.get(a, "q") == 3 and memo.get(c) == 4
    assert calls == [1, 2, 3]
    with pytest.raises(UsageError, match="expected an int ≥ 1, found int 0"):
        IdentityMemo(0)


def test_params_of_is_the_model_params_and_is_kept():
    from symverify.kernel.ir.analysis import params_of


    m = Model(2, 1, 2, 1, (Layer.make(2, 1, W=Grid.from_rows([[sym("a")]]), b2=Grid.full(2, 1, 1)),))
    assert params_of(m) == frozenset({"a"}) == m.params()
    assert params_of(m) is params_of(m)


def test_nonzero_drops_cells_painted_back_to_zero_whatever_the_zero_type() -> None:
    a = sym("a")
    for fill in (0, Fraction(0)):
        for zero in (0, Fraction(0)):
            g = Grid(3, 2, fill, ((0, 3, 0, 2, 1), (1, 2, 0, 2, zero), (2, 3, 1, 2, a)))
            assert g.nonzero() == {(0, 0): 1, (0, 1): 1, (2, 0): 1, (2, 1): a}
            assert len(g.nonzero()) == g.nonzero_count()


def test_grid_get_outside_the_grid_is_refused():
    import numpy as np
    import pytest

    from symverify.errors import ShapeError
    from symverify.kernel.ir.grid import Grid

    for g in (Grid.from_rows([[1, 2], [3, 4]]), Grid(2, 2, 7, ()), Grid.from_array(np.array([[1, 2], [3, 4]]))):
        assert g.get(1, 1) in (4, 7)
        for i, j in ((-1, 0), (0, -1), (2, 0), (0, 2), (True, 0), (0, 1.0)):
            with pytest.raises(ShapeError, match=r"Grid.get: expected a cell of the 2×2 grid"):
                g.get(i, j)


def test_paint_reads_integer_bounds_by_value_and_refuses_others():
    """``paint`` took a numpy integer bound to the grid constructor, which refused it, while
    ``paint_cells`` and ``from_cells`` read numpy indices by value; and an empty range of float
    bounds (``paint(1.0, 1.0, ...)``) was returned unchanged rather than refused."""
    import numpy as np

    g = Grid.zeros(3, 2).paint(np.int64(0), np.int64(2), 0, 1, 3)
    assert g.to_rows() == [[3, 0], [3, 0], [0, 0]] and all(type(x) is int for x in g.rects[0][:4])
    for bad in [(1.0, 1.0, 0, 1), (0, 2.0, 0, 1), (False, True, 0, 1)]:
        with pytest.raises(IRError, match=r"Grid.paint: expected int bounds, found \("):
            Grid.zeros(3, 2).paint(*bad, 1)

"""``compile_numpy`` (float) and ``compile_torch`` ran NaN and ±inf inputs in IEEE arithmetic: the
zero coefficients of every stage turned one infinite entry into NaN outputs that the product does not
depend on (``0·inf = NaN``), while the exact product has no NaN or infinity at all. Such an input is an
``IRError`` naming its entry, in the input's own shape, on every path (dense, blocks, stages, native
kernel, cast to float32); finite inputs, an overflow inside the run included, run as before."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.errors import IRError
from symverify.kaleidoscope import compile_numpy, compile_torch
from symverify.kernel.ir.butterfly import ButterflyFactor, FactorList

BAD = st.sampled_from([math.nan, math.inf, -math.inf])


def _upper(N: int) -> FactorList:
    """A product of upper-triangular factors with zero coefficients (d3 = 0) on every stride."""
    strides = [1 << k for k in range(N.bit_length() - 1)]
    h = N // 2
    return FactorList(N, tuple(ButterflyFactor(N, s, (1,) * h, (1,) * h, (0,) * h, (2,) * h) for s in strides))


def _shown(v: float) -> str:
    return repr(v)


@settings(max_examples=30, deadline=None)
@given(N=st.sampled_from([4, 16]), batch=st.integers(0, 3), dtype=st.sampled_from(["float64", "float32"]),
       data=st.data())
def test_numpy_refuses_a_non_finite_entry_naming_it(N, batch, dtype, data):
    prog = compile_numpy(_upper(N), dtype=dtype)
    v = data.draw(BAD)
    col = data.draw(st.integers(0, N - 1))
    if batch == 0:  # one input of shape (N,)
        x = np.zeros(N)
        x[col] = v
        at = [col]
    else:
        row = data.draw(st.integers(0, batch - 1))
        x = np.zeros((batch, N))
        x[row, col] = v
        at = [row, col]
    with pytest.raises(IRError, match=rf"^numpy butterfly apply: entry \{at}\ is {_shown(v)}: expected finite numbers"):
        prog.apply(x)
    obj = x.astype(object)  # an object array of Python floats too
    with pytest.raises(IRError, match=r"expected finite numbers"):
        prog.apply(obj)


@pytest.mark.parametrize("native", ["1", "0"])
@pytest.mark.parametrize("N, B", [(4, 1), (256, 2), (2048, 1)])  # dense, blocks, stages (or the native kernel)
@pytest.mark.parametrize("v", [math.nan, math.inf, -math.inf])
def test_torch_refuses_a_non_finite_entry_naming_it_on_every_path(monkeypatch, native, N, B, v):
    monkeypatch.setenv("SYMVERIFY_NATIVE", native)
    mod = compile_torch(_upper(N))
    x = torch.zeros(B, N, dtype=torch.float64)
    x[B - 1, N - 1] = v
    with pytest.raises(IRError, match=rf"^torch butterfly apply: entry \[{B - 1}, {N - 1}\] is {_shown(v)}: expected finite"):
        mod(x)
    with pytest.raises(IRError, match=rf"entry \[{N - 1}\] is {_shown(v)}"):
        mod(x[B - 1])  # one input of shape (N,)
    x3 = torch.zeros(2, 1, N, dtype=torch.float64)
    x3[1, 0, 1] = v
    with pytest.raises(IRError, match=r"entry \[1, 0, 1\] is"):  # named in the input's own shape
        mod(x3)
    with pytest.raises(IRError, match=r"expected finite"):
        compile_torch(_upper(N), dtype="float32")(x)  # the cast path
    if N <= 512:  # autograd (not the native kernel) runs the dense and block forms
        with pytest.raises(IRError, match=r"expected finite"):
            mod(x.clone().requires_grad_(True))


def test_finite_inputs_run_as_before_an_overflow_included():
    mod, prog = compile_torch(_upper(4)), compile_numpy(_upper(4))
    x = [1e308, 1e308, 1e308, 1e308]
    y = mod(torch.tensor(x, dtype=torch.float64))
    assert not bool(torch.isfinite(y).all())  # an overflow of finite numbers is the float result, not refused
    with np.errstate(over="ignore", invalid="ignore"):
        assert not np.isfinite(prog.apply(np.array(x))).all()
    assert mod(torch.arange(4.0, dtype=torch.float64)).tolist() == prog.apply(np.arange(4.0)).tolist()


def test_the_modular_path_takes_integers_as_before():
    prog = compile_numpy(_upper(4), kind="mod", p=7)
    assert prog.apply(np.array([1, 2, 3, 4])).tolist() == prog.apply([1, 2, 3, 4]).tolist()


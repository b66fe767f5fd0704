"""Gated convolutions (Hyena, H3) as a user calls them: the sizes the circuit builders take are the
sizes the direct constructions take, a row given as None is refused rather than read as zeros, and
the circuit of every order, width and filter length is the forward pass written out by hand."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from cases import assert_forward_matches
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.compiler.gated import gated_conv_direct, gated_from_zoology, h3_direct, hyena_direct
from symverify.errors import CompileError, IRError
from symverify.library import gated_conv_weights, h3, hyena
from symverify.semantics.exact import evaluate


@pytest.mark.parametrize("kind", [np.int64, np.int32, np.uint8])
def test_direct_constructions_take_numpy_sizes_like_the_circuits(kind):
    """``hyena(N, d)`` read a numpy integer size by its value, ``hyena_direct(N, d)`` refused the same
    size as "not an int": the circuit was built and its model was not."""
    N, d = kind(3), kind(1)
    out = hyena_direct(N, d, kind(3))
    assert out.model.signature == hyena_direct(3, 1, 3).model.signature
    assert sv.verify(hyena(N, d, kind(3)), out).proved
    out3 = h3_direct(N, kind(2))
    assert out3.model.signature == h3_direct(3, 2).model.signature
    assert sv.verify(h3(N, kind(2)), out3).proved
    w = gated_conv_weights(3, 1)
    assert gated_conv_direct(N, w).model.signature == gated_conv_direct(3, w).model.signature


def test_gated_from_zoology_takes_a_numpy_sequence_length():
    torch = pytest.importorskip("torch")
    from symverify.executors.zoology_gated import ZoologyHyena

    torch.manual_seed(0)
    circuit, compiled = gated_from_zoology(ZoologyHyena(1, 4).double().eval(), np.int64(4))
    assert compiled.model.signature == (4, 5, 1, 4, 3)
    assert sv.verify(circuit, compiled).proved


@pytest.mark.parametrize(("call", "message"), [
    (lambda: hyena(2, 1, in_proj=[None]), r"hyena W_in\[0\]: expected 3 entries, found None"),
    (lambda: hyena(2, 1, out_proj=[None]), r"hyena W_out\[0\]: expected 1 entries, found None"),
    (lambda: hyena(2, 1, short_filter=[[1], None, [1]]), r"hyena short\[1\]: expected at most 2 entries, found None"),
    (lambda: hyena(3, 1, 3, filters=[[[1]], [None]]), r"hyena long\[1\]\[0\]: expected at most 3 entries, found None"),
    (lambda: h3(2, 1, shift_kernel=[None]), r"h3 shift_kernel\[0\]: expected at most 2 entries, found None"),
    (lambda: h3(2, 2, W_k=[[1, 0], None]), r"h3 W_k\[1\]: expected 2 entries, found None"),
    (lambda: gated_conv_weights(2, 1, W_in=[None]), r"gated W_in\[0\]: expected 3 entries, found None"),
])
def test_a_row_given_as_none_is_refused(call, message):
    """A row (or one channel's taps) given as None inside a given argument was read as zeros: a weight
    matrix silently missing a row. None stands for symbolic weights only as a whole argument."""
    with pytest.raises(IRError, match=message + r" \(None makes a whole weight argument symbolic"):
        call()


def test_a_row_given_as_none_is_a_compile_error_of_the_direct_construction():
    with pytest.raises(CompileError, match=r"hyena_direct: hyena W_in\[0\]: expected 3 entries, found None"):
        hyena_direct(2, 1, in_proj=[None])


def test_whole_arguments_left_none_stay_symbolic():
    c = hyena(2, 1, in_proj=[[1, 2, 3]])
    assert "W_in[0][0]" not in c.params() and {"b_in[0]", "s[0][0]", "h1[0][0]", "D1[0]"} <= c.params()


def _conv(f, x, t):
    return sum((f[k] * x[t - k] for k in range(min(t + 1, len(f)))), Fraction(0))


def _forward(u, m, d, W_in, b_in, s, beta, h, D, W_out, b_out):
    """The gated convolution of order m written out: projections, causal pre-filter, then
    ``w_1 = x̃_1 ⊙ ṽ`` and ``w_{i+1} = x̃_{i+1} ⊙ ((h_i + D_i·e_0) ⊛ w_i)``, out-projection."""
    N = len(u)
    P = [[sum(u[t][r] * W_in[r][c] for r in range(d)) + b_in[c] for c in range((m + 1) * d)] for t in range(N)]
    Pf = [[_conv(s[c], [P[i][c] for i in range(N)], t) + beta[c] for c in range((m + 1) * d)] for t in range(N)]
    w = [[Pf[t][q] * Pf[t][m * d + q] for q in range(d)] for t in range(N)]
    for i in range(m - 1):
        z = [[_conv(h[i][q], [w[j][q] for j in range(N)], t) + D[i][q] * w[t][q] for q in range(d)] for t in range(N)]
        w = [[Pf[t][(i + 1) * d + q] * z[t][q] for q in range(d)] for t in range(N)]
    return [[sum(w[t][r] * W_out[r][q] for r in range(d)) + b_out[q] for q in range(d)] for t in range(N)]


@settings(max_examples=25, deadline=None, database=None, derandomize=True)
@given(st.data(), st.integers(2, 4), st.integers(1, 2), st.integers(1, 4))
def test_hyena_of_any_order_is_its_forward_pass_and_its_direct_model_is_proved(data, m, d, N):
    """Order m > 2, d > 1, N = 1, a short filter of 1 … N taps and long filters shorter than N: the
    circuit is the forward pass, and the direct model is proved equal to it."""
    q = st.builds(Fraction, st.integers(-3, 3), st.integers(1, 2))
    width = (m + 1) * d
    K = data.draw(st.integers(1, N))
    vec = lambda n: data.draw(st.lists(q, min_size=n, max_size=n))  # noqa: E731
    W_in, b_in = [vec(width) for _ in range(d)], vec(width)
    s = [data.draw(st.lists(q, max_size=K)) for _ in range(width)]
    h = [[data.draw(st.lists(q, max_size=N)) for _ in range(d)] for _ in range(m - 1)]
    beta, D = vec(width), [vec(d) for _ in range(m - 1)]
    W_out, b_out = [vec(d) for _ in range(d)], vec(d)
    u = [vec(d) for _ in range(N)]
    kw = dict(short_len=K, in_proj=W_in, in_bias=b_in, short_filter=s, short_bias=beta, filters=h, filter_bias=D,
              out_proj=W_out, out_bias=b_out)
    c = hyena(N, d, m, **kw)
    assert evaluate(c, u) == _forward(u, m, d, W_in, b_in, s, beta, h, D, W_out, b_out)
    out = hyena_direct(N, d, m, **kw)
    assert out.model.signature == (N, m + 3, d, N, width)
    assert sv.verify(c, out).proved


def test_hyena_names_its_symbols_after_a_prefix_as_hyena_direct_does():
    """``hyena_direct(N, d, prefix="L0.")`` named its symbols ``L0.W_in[0][0]``, …, but ``hyena`` took
    no ``prefix`` (a TypeError), so its circuit could only be built through ``hyena_weights``."""
    c = hyena(2, 1, prefix="L0.")
    assert c.params() and all(p.startswith("L0.") for p in c.params())
    assert sv.verify(c, hyena_direct(2, 1, prefix="L0.")).proved
    assert sv.verify(hyena(2, 1), hyena_direct(2, 1, prefix="L0.")).refuted


def test_hyena_names_a_misspelt_weight():
    """``hyena(4, 1, filter=...)`` raised TypeError; ``h3`` and ``hyena_direct`` named it already."""
    with pytest.raises(IRError, match=r"hyena: unknown weights \['filter'\]; expected only \['short_len', 'in_proj', .*'prefix'\]"):
        hyena(4, 1, filter=[[[1]]])


@pytest.mark.parametrize("use_bias", [True, False])
def test_the_local_hyena_form_follows_zoology_without_the_filter_bias(use_bias):
    """zoology's ``Filter.forward`` adds the skip ``D·v`` only with ``use_bias``, and
    ``gated_weights_from_zoology`` reads ``D = 0`` without it; the local ``ZoologyHyena`` added
    ``filter_fn.bias`` anyway, so its forward and the model read from it differed by ~5e-2."""
    torch = pytest.importorskip("torch")
    from symverify.executors.zoology_gated import ZoologyHyena

    torch.manual_seed(0)
    module = ZoologyHyena(2, 6).double().eval()
    module.filter_fn.use_bias = use_bias
    circuit, compiled = gated_from_zoology(module, 6)
    assert sv.verify(circuit, compiled).proved
    assert_forward_matches(module, compiled, 6, 2)

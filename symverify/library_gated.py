"""Gated convolutions as circuits: zoology's ``Hyena`` and ``H3`` forward passes, every weight and
filter tap optionally symbolic (docs/gated-convolutions.md states the forms followed).

Both layers are instances of one *gated convolution* of order ``m ≥ 2`` on ``u ∈ F^{N×d}``
(causal convolutions, ``(f ⊛ x)[t] = Σ_{0≤k≤t} f[k]·x[t−k]``):

1. projections ``P = u·W_in + b_in`` into ``(m+1)·d`` channels, read as blocks
   ``x_1, …, x_m, v`` of d channels each;
2. a causal pre-filter per channel, ``P̃_c = s_c ⊛ P_c + β_c`` (taps ``s_c[0..K−1]``);
3. ``w_1 = x̃_1 ⊙ ṽ``; for ``i = 1 … m−1``: ``z_i = (h_i + D_i·e_0) ⊛ w_i`` and
   ``w_{i+1} = x̃_{i+1} ⊙ z_i``;
4. the output ``y = w_m·W_out + b_out``.

* **Hyena** (``zoology/mixers/hyena.py``, ``num_heads = num_blocks = 1``, not bidirectional): ``W_in,
  b_in`` are ``in_proj`` (split ``x1, x2, v``), the pre-filter is ``short_filter`` (depthwise
  ``Conv1d``, ``kernel_size = short_filter_order`` (3), ``padding = K − 1``, the first ``l`` outputs:
  causal tap ``k`` is ``weight[c, 0, K−1−k]``, with its bias ``β``), ``h_1`` the materialised implicit
  filter ``filter_fn.filter(l)`` and ``D_1`` ``filter_fn.bias`` (``fftconv_ref``'s ``u·D``), then
  ``v ⊙ x2`` and ``out_proj``. No residual. For ``order = m > 2`` the chain continues as in the
  Hyena paper (one long filter per extra gate).
* **H3** (``zoology/mixers/h3/h3.py``, ``head_dim = 1``): with ``x_1 = k``, ``x_2 = q``: ``k`` is
  pre-filtered by the shift-SSM kernel with ``ssm_k_D`` added at tap 0 (``q`` and ``v`` have the
  identity pre-filter, no bias), ``h_1`` is the diagonal-SSM kernel with ``D`` the skip, ``y = q ⊙
  (h_1 ⊛ (k̃ ⊙ v) + D·k̃ ⊙ v)``, then ``output_linear``. No residual.

Everything is polynomial in ``u`` once the filters are materialised (the implicit filter's MLP,
sine and exponential modulation, and the SSM kernels act on parameters only). Inputs are ``vec(u)``
row-major; outputs ``y[t][q]`` row-major.
"""

from __future__ import annotations

import functools
import inspect
import numbers
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

from symverify.errors import IRError
from symverify.ir import limits
from symverify.ir.bigint import field_repr
from symverify.ir.build import CircuitBuilder, Wire, sum_tree
from symverify.ir.value_memo import ValueMemo, layout_snapshot, same_layout, typed_key
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.scalar import (
    Scalar,
    Sym,
    as_scalar,
    is_bool,
    is_zero,
    plain_float,
    plain_int,
    plain_items,
    plain_str,
    sym,
    unordered,
)

__all__ = ["GatedConvWeights", "GatedConvNodes", "gated_conv_weights", "gated_conv", "gated_conv_layout",
           "hyena", "hyena_weights", "h3", "h3_weights"]

Vec = tuple[Scalar, ...]
Mat = tuple[tuple[Scalar, ...], ...]


@dataclass(frozen=True)
class GatedConvWeights:
    """The weights of one gated convolution of order ``m`` (module docstring), exact or symbolic.

    ``W_in`` is ``d × (m+1)d`` (``u·W_in``), ``b_in`` has ``(m+1)d`` entries; ``short[c]`` are the
    causal pre-filter taps of channel c and ``short_bias[c]`` its bias; ``long[i][q]`` the taps of
    gate i+1's filter on channel q (``len ≤ N``) and ``long_skip[i][q]`` its skip; ``W_out`` is
    ``d × d``, ``b_out`` has d entries. ``kind`` names the layer followed (``"hyena"``, ``"h3"``).

    ``N`` is the sequence length the weights were built for (:func:`gated_conv_weights` sets it; its
    symbolic long filters have exactly N taps ``h{i}[q][k]``, ``k < N``): :func:`gated_conv` and
    :func:`~symverify.compiler.gated.gated_conv_direct` refuse them for another sequence length,
    where their filters would be padded with 0 (a proof for all values of N symbolic taps would
    silently be one for fewer). ``None`` (the default for weights built by hand) is for any
    sequence length at least as long as every filter, shorter filters padded with 0; to pad on
    purpose, ``dataclasses.replace(w, N=None)`` or ``N=`` the new length.
    """

    d: int
    order: int
    W_in: Mat
    b_in: Vec
    short: tuple[Vec, ...]
    short_bias: Vec
    long: tuple[tuple[Vec, ...], ...]
    long_skip: tuple[Vec, ...]
    W_out: Mat
    b_out: Vec
    kind: str = "gated"
    N: int | None = None

    def __post_init__(self) -> None:
        """Validate the shapes against ``d`` and ``order`` and make every entry an exact scalar: a
        weight built directly (or by ``dataclasses.replace``) with another order or d, or a ragged
        matrix, gave an IndexError deep in the construction, or had its extra entries silently ignored.

        Raises:
            IRError: ``d`` not an int ≥ 1, ``order`` not an int ≥ 2, ``kind`` not a str, ``N`` neither
                None nor an int ≥ 1, a field of the wrong shape (naming it), a filter of no tap or
                (with ``N``) of more than N taps, or an entry that is not exact.
        """
        where = self.kind if type(self.kind) is str else "GatedConvWeights"
        if type(self.kind) is not str:
            raise IRError(f"GatedConvWeights: expected a str kind, found {type(self.kind).__name__} {self.kind!r:.40}")
        d, m = _pos(self.d, "d", where), _pos(self.order, "order", where, 2)
        if self.N is not None:
            object.__setattr__(self, "N", int(_pos(self.N, "N (the sequence length the weights are for) or None", where)))
        width = (m + 1) * d

        def vec(name: str, x: object, n: int | None) -> Vec:
            xs = _seq(x)
            if xs is None or (n is not None and len(xs) != n):
                found = f"length {len(xs)}" if xs is not None else type(x).__name__
                raise IRError(f"{where} {name}: expected {n if n is not None else 'a sequence of'} entries, found {found}")
            return tuple(v if type(v) is int or type(v) is Sym else as_scalar(v, f"{where} {name}[{i}]") for i, v in enumerate(xs))

        def rows(name: str, x: object, n: int, inner: int | None) -> tuple[Vec, ...]:
            xs = _seq(x)
            if xs is None or len(xs) != n:
                found = f"{len(xs)} rows" if xs is not None else type(x).__name__
                raise IRError(f"{where} {name}: expected {n} rows, found {found}")
            return tuple(vec(f"{name}[{r}]", row, inner) for r, row in enumerate(xs))

        banks = _seq(self.long)
        if banks is None or len(banks) != m - 1:
            raise IRError(f"{where} long: expected {m - 1} filter banks (one per gate after the first), found "
                          f"{len(banks) if banks is not None else type(self.long).__name__}")
        W_in, b_in = rows("W_in", self.W_in, d, width), vec("b_in", self.b_in, width)
        short, short_bias = rows("short", self.short, width, None), vec("short_bias", self.short_bias, width)
        long = tuple(rows(f"long[{i}]", b, d, None) for i, b in enumerate(banks))
        for name, bank in (("short", short), *((f"long[{i}]", b) for i, b in enumerate(long))):
            for c, taps in enumerate(bank):  # gated_conv_weights pads every filter to its length (≥ 1)
                if not taps:
                    raise IRError(f"{where} {name}[{c}]: expected a filter of at least 1 tap, found none")
                if self.N is not None and len(taps) > self.N:
                    raise IRError(f"{where} {name}[{c}]: expected at most N = {self.N} taps (the sequence length the "
                                  f"weights are for), found {len(taps)}")
        fixed = {"W_in": W_in, "b_in": b_in, "short": short, "short_bias": short_bias, "long": long,
                 "long_skip": rows("long_skip", self.long_skip, m - 1, d),
                 "W_out": rows("W_out", self.W_out, d, d), "b_out": vec("b_out", self.b_out, d)}
        for name, value in fixed.items():
            object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        return field_repr(self)  # the generated repr, with huge integers abbreviated (never fails)

    @property
    def width(self) -> int:
        """``(m+1)·d``, the number of projection channels."""
        return (self.order + 1) * self.d

    def channel(self, j: int, q: int) -> int:
        """Projection channel of block j (``0 … m−1``: ``x_{j+1}``; ``m``: ``v``), component q."""
        return j * self.d + q

    def params(self) -> frozenset[str]:
        from symverify.kernel.ir.scalar import param_names

        vals: list[Scalar] = [x for r in self.W_in for x in r] + list(self.b_in) + [x for s in self.short for x in s]
        vals += list(self.short_bias) + [x for g in self.long for f in g for x in f] + [x for g in self.long_skip for x in g]
        vals += [x for r in self.W_out for x in r] + list(self.b_out)
        return param_names(vals)


@dataclass(frozen=True)
class GatedConvNodes:
    """Where the layer's values sit in its circuit (node ids, indexed ``[t][c]`` or ``[i][t][q]``):
    projections ``P``, pre-filtered ``Pf``, the gated products ``w[i]`` (``w[0] = x̃_1 ⊙ ṽ``; the
    last is the output of the gating) and the output ``y``."""

    P: tuple[tuple[int, ...], ...]
    Pf: tuple[tuple[int, ...], ...]
    w: tuple[tuple[tuple[int, ...], ...], ...]
    y: tuple[tuple[int, ...], ...]


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _plain_value(v: object, integer: bool = False) -> object:
    """``v`` as the plain value it stores when it is an instance of a subclass of ``int``, ``float``,
    ``str``, ``tuple``, ``list`` or ``dict``; with ``integer`` (a parameter annotated ``int``: a size,
    count or seed), a numpy integer as its int too, as :func:`symverify.library._seed` reads a seed.
    Anything else (numpy's floats, bools and arrays; a numpy integer given for a flag) as it is, so
    the builder's own check refuses it naming its type."""
    if type(v).__module__ == "numpy":
        return operator.index(v) if integer and isinstance(v, numbers.Integral) and not is_bool(v) else v  # type: ignore[arg-type]
    return plain_items(plain_str(plain_int(plain_float(v))))


def _plain_args(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """``fn`` reading each argument as the plain value it stores (:func:`_plain_value`): a builder
    computes with its sizes (``n·d``, ``range(m)``, comparisons), and a subclass of ``int`` could
    answer each of those otherwise than its value, so the circuit built would not be the one named.
    A numpy integer is read as its int where the parameter's annotation names ``int``."""
    params = list(inspect.signature(fn).parameters.values())
    ints = frozenset(p.name for p in params if re.search(r"\bint\b", str(p.annotation)))
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]

    @functools.wraps(fn)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        return fn(*(_plain_value(v, k < len(names) and names[k] in ints) for k, v in enumerate(args)),  # type: ignore[arg-type]
                  **{k: _plain_value(v, k in ints) for k, v in kwargs.items()})  # type: ignore[arg-type]

    return wrapper


def _pos(v: object, name: str, where: str, least: int = 1) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or v < least:
        raise IRError(f"{where}: expected an int {name} ≥ {least}, found {v!r}")
    return v


def _symbolic_filters(N: object, d: object, order: object, per_gate: int, where: str) -> None:
    """Refuse a circuit whose symbolic filters alone exceed ``MAX_GATES`` before any weight is made:
    each of the ``per_gate·(order − 1)`` banks of ``d`` symbolic filters of ``N`` taps contributes
    ``Σ_k (N − k) = N(N+1)/2`` terms per channel, part of the lower bound :func:`gated_conv_layout`
    checks once the weights exist (building ``N·d`` symbols first took tens of seconds)."""
    n, dd, m = _pos(N, "N (sequence length)", where), _pos(d, "d", where), _pos(order, "order", where, 2)
    banks = per_gate * (m - 1)
    if banks and n * (m + 1) * dd <= limits.MAX_CELLS:  # a state over MAX_CELLS: the weights' own check says so
        limits.check(banks * dd * (n * (n + 1) // 2), "MAX_GATES",
                     lambda: f"{where}(N={n}, d={dd}, order={m}) circuit: its {banks} bank(s) of symbolic N-tap filters alone")


def _seq(x: object) -> list[object] | None:
    if unordered(x, sized=True):  # a mapping would read as its keys, a set in hash order, a str as characters
        return None
    return list(x)  # type: ignore[call-overload]


def _vector(where: str, name: str, x: object, n: int, default: str | None, *, max_len: bool = False) -> Vec:
    """``n`` exact entries (``max_len``: at most n, padded with 0) or, for None, symbols ``{default}[i]``.

    ``default`` None marks a row inside a given argument (a matrix row, one channel's taps): None
    there is an :class:`IRError`, not a row of zeros; only a whole argument left None is symbolic."""
    if x is None:
        if default is None:
            raise IRError(f"{where} {name}: expected {'at most ' if max_len else ''}{n} entries, found None (None makes "
                          "a whole weight argument symbolic; a row inside a given argument must be given)")
        return tuple(sym(f"{default}[{i}]") for i in range(n))
    xs = _seq(x)
    if xs is None or (len(xs) > n if max_len else len(xs) != n):
        found = f"length {len(xs)}" if xs is not None else type(x).__name__
        raise IRError(f"{where} {name}: expected {'at most ' if max_len else ''}{n} entries, found {found}")
    vals = tuple(as_scalar(v, f"{where} {name}[{i}]") for i, v in enumerate(xs))
    return vals + (0,) * (n - len(vals))


def _matrix(where: str, name: str, x: object, rows: int, cols: int, default: str) -> Mat:
    """A ``rows × cols`` matrix of exact entries or, for None, symbols ``{default}[r][c]`` (a row of a
    given matrix may not be None: :func:`_vector`)."""
    if x is None:
        return tuple(tuple(sym(f"{default}[{r}][{c}]") for c in range(cols)) for r in range(rows))
    xs = _seq(x)
    if xs is None or len(xs) != rows:
        raise IRError(f"{where} {name}: expected a {rows}×{cols} matrix, found {len(xs) if xs is not None else type(x).__name__} rows")
    return tuple(_vector(where, f"{name}[{r}]", row, cols, None) for r, row in enumerate(xs))


@_plain_args
def gated_conv_weights(N: int, d: int, order: int = 2, *, short_len: int | None = None, W_in: object = None, b_in: object = None,
                       short: object = None, short_bias: object = None, long: object = None, long_skip: object = None,
                       W_out: object = None, b_out: object = None, prefix: str = "", kind: str = "gated") -> GatedConvWeights:
    """Validated :class:`GatedConvWeights` for sequence length N; every argument left ``None`` is
    symbolic (``{prefix}W_in[r][c]``, ``{prefix}b_in[c]``, ``{prefix}s[c][k]``, ``{prefix}beta[c]``,
    ``{prefix}h{i}[q][k]`` for ``k < N``, ``{prefix}D{i}[q]``, ``{prefix}W_out[r][q]``,
    ``{prefix}b_out[q]``), so statements proved with it hold for all of their values. ``short``
    rows have at most ``short_len`` taps (default ``min(3, N)``, zoology's ``short_filter_order``),
    ``long[i][q]`` at most N (shorter ones are padded with 0).

    Raises:
        IRError: sizes not positive ints, ``order < 2``, ``short_len > N``, a matrix or vector of
            the wrong shape, a row or filter given as None inside a given argument (only a whole
            argument left None is symbolic), an entry that is not exact, or a ``prefix`` with every
            weight given.
        LimitError: a state ``N·(order+1)·d`` or an in-projection of ``d·(order+1)·d`` entries over
            :data:`~symverify.ir.limits.MAX_CELLS` cells (checked before any weight is made).
    """
    for what, v in (("kind", kind), ("prefix", prefix)):
        if type(v) is not str:
            raise IRError(f"gated_conv_weights: expected a str {what}, found {type(v).__name__} {v!r:.40}")
    where = kind
    if prefix and all(x is not None for x in (W_in, b_in, short, short_bias, long, long_skip, W_out, b_out)):
        raise IRError(f"{where}: prefix={prefix!r} names the symbolic weights, but every weight is given")
    _pos(N, "N (sequence length)", where)
    _pos(d, "d", where)
    _pos(order, "order", where, 2)
    limits.check(N * (order + 1) * d, "MAX_CELLS", lambda: f"{where}(N={N}, d={d}, order={order}) state N·(order+1)·d")
    limits.check(d * (order + 1) * d, "MAX_CELLS", lambda: f"{where}(N={N}, d={d}, order={order}) in-projection W_in: d·(order+1)·d")
    short_len = min(3, N) if short_len is None else short_len
    _pos(short_len, "short_len", where)
    if short_len > N:
        raise IRError(f"{where}: short_len must be ≤ N = {N} (taps beyond the sequence are never read), found {short_len}")
    m, p = order, prefix
    width = (m + 1) * d
    Win = _matrix(where, "W_in", W_in, d, width, f"{p}W_in")
    bin_ = _vector(where, "b_in", b_in, width, f"{p}b_in")
    sh: tuple[Vec, ...]
    if short is None:
        sh = tuple(tuple(sym(f"{p}s[{c}][{k}]") for k in range(short_len)) for c in range(width))
    else:
        rows = _seq(short)
        if rows is None or len(rows) != width:
            raise IRError(f"{where} short: expected {width} rows of taps (one per projection channel), found "
                          f"{len(rows) if rows is not None else type(short).__name__}")
        sh = tuple(_vector(where, f"short[{c}]", r, short_len, None, max_len=True) for c, r in enumerate(rows))
    sb = _vector(where, "short_bias", short_bias, width, f"{p}beta")
    lg: list[tuple[Vec, ...]] = []
    lD: list[Vec] = []
    gates = _seq(long) if long is not None else None
    Ds = _seq(long_skip) if long_skip is not None else None
    if long is not None and (gates is None or len(gates) != m - 1):
        raise IRError(f"{where} long: expected {m - 1} filter banks (one per gate after the first), found "
                      f"{len(gates) if gates is not None else type(long).__name__}")
    if long_skip is not None and (Ds is None or len(Ds) != m - 1):
        raise IRError(f"{where} long_skip: expected {m - 1} skip vectors, found {len(Ds) if Ds is not None else type(long_skip).__name__}")
    for i in range(m - 1):
        if gates is None:
            lg.append(tuple(tuple(sym(f"{p}h{i + 1}[{q}][{k}]") for k in range(N)) for q in range(d)))
        else:
            bank = _seq(gates[i])
            if bank is None or len(bank) != d:
                raise IRError(f"{where} long[{i}]: expected {d} filters (one per channel), found "
                              f"{len(bank) if bank is not None else type(gates[i]).__name__}")
            lg.append(tuple(_vector(where, f"long[{i}][{q}]", f, N, None, max_len=True) for q, f in enumerate(bank)))
        # a skip vector inside a given long_skip is a row of it: None there is refused, not symbolic
        lD.append(_vector(where, f"long_skip[{i}]", None if Ds is None else Ds[i], d, f"{p}D{i + 1}" if Ds is None else None))
    Wout = _matrix(where, "W_out", W_out, d, d, f"{p}W_out")
    bout = _vector(where, "b_out", b_out, d, f"{p}b_out")
    return GatedConvWeights(d, m, Win, bin_, sh, sb, tuple(lg), tuple(lD), Wout, bout, kind, N)


_LAYOUTS: ValueMemo[tuple[Circuit, GatedConvNodes]] = ValueMemo(8, held=layout_snapshot, same=same_layout)
"""The last layouts built: ``hyena(N, d)`` and ``hyena_direct(N, d)`` build the same circuit."""


@_plain_args
def gated_conv_layout(N: int, w: GatedConvWeights, name: str | None = None) -> tuple[Circuit, GatedConvNodes]:
    """The circuit of the gated convolution ``w`` on ``u ∈ F^{N×d}`` and where its values sit.

    Depth ``O(log d + log K + order·log N)``; size ``O(N·(m+1)·d·(d + K) + m·N²·d)``. The last
    few results are kept (:class:`~symverify.ir.value_memo.ValueMemo`, keyed by the arguments'
    values and types): the same immutable circuit is returned for equal arguments.

    Raises:
        IRError: N not a positive int, weights built for another sequence length
            (:attr:`GatedConvWeights.N`), or a long or short filter of more than N taps (never read).
        LimitError: a state over ``MAX_CELLS`` cells or convolutions over ``MAX_GATES`` terms.
    """
    if not isinstance(w, GatedConvWeights):
        raise IRError(f"gated_conv: expected GatedConvWeights, found {type(w).__name__}")
    if type(N) is not int or not (name is None or type(name) is str):
        return _gated_conv_layout(N, w, name)
    return _LAYOUTS(typed_key(N, w, name), lambda: _gated_conv_layout(N, w, name))


def _gated_conv_layout(N: int, w: GatedConvWeights, name: str | None) -> tuple[Circuit, GatedConvNodes]:
    _pos(N, "N (sequence length)", w.kind)
    if w.N is not None and w.N != N:
        raise IRError(f"{w.kind}: expected weights for sequence length N = {N}, found weights built for N = {w.N} "
                      f"(padding their filters with 0 would change what a proof with them covers); build them for N = {N}, or pad on purpose with "
                      f"dataclasses.replace(weights, N=None)")
    if any(len(f) > N for g in w.long for f in g):
        raise IRError(f"{w.kind}: a long filter has more than N = {N} taps")
    if any(len(f) > N for f in w.short):  # as gated_conv_weights' short_len ≤ N: taps beyond the sequence are never read
        raise IRError(f"{w.kind}: a short filter has more than N = {N} taps")
    d, m, width = w.d, w.order, w.width
    limits.check(N * width, "MAX_CELLS", lambda: f"{w.kind}(N={N}, d={d}, order={m}) state N·(order+1)·d")
    # each nonzero tap k of a filter is one term of N − k outputs: a lower bound on the gates
    terms = sum(N - k for c in range(width) for k, x in enumerate(w.short[c][:N]) if not is_zero(x))
    terms += sum(N - k for i in range(m - 1) for q in range(d)
                 for k, x in enumerate(w.long[i][q]) if not is_zero(x + w.long_skip[i][q] if k == 0 else x))  # type: ignore[operator]
    limits.check(terms, "MAX_GATES", lambda: f"{w.kind}(N={N}, d={d}, order={m}) circuit (its convolutions alone)")
    b = CircuitBuilder(N, d)
    u = b.inputs()

    def affine(terms: list[tuple[Scalar, Wire]], const: Scalar) -> Wire:
        nz = [(c, x) for c, x in terms if not is_zero(c)]
        if not nz:
            return b.const(const)
        s = sum_tree(b, nz)
        return s if is_zero(const) else s + b.const(const)

    P = [[affine([(w.W_in[r][c], u[t][r]) for r in range(d)], w.b_in[c]) for c in range(width)] for t in range(N)]
    Pf = [[affine([(w.short[c][k], P[t - k][c]) for k in range(min(t + 1, len(w.short[c])))], w.short_bias[c])
           for c in range(width)] for t in range(N)]
    v0 = [[Pf[t][w.channel(m, q)] for q in range(d)] for t in range(N)]
    ws = [[[Pf[t][w.channel(0, q)] * v0[t][q] for q in range(d)] for t in range(N)]]
    for i in range(m - 1):
        prev = ws[-1]
        taps = [list(w.long[i][q]) for q in range(d)]
        for q in range(d):
            taps[q][0] = taps[q][0] + w.long_skip[i][q]  # type: ignore[operator]
        z = [[affine([(taps[q][k], prev[t - k][q]) for k in range(min(t + 1, len(taps[q])))], 0) for q in range(d)]
             for t in range(N)]
        ws.append([[Pf[t][w.channel(i + 1, q)] * z[t][q] for q in range(d)] for t in range(N)])
    last = ws[-1]
    y = [[affine([(w.W_out[r][q], last[t][r]) for r in range(d)], w.b_out[q]) for q in range(d)] for t in range(N)]

    def ids(rows: list[list[Wire]]) -> tuple[tuple[int, ...], ...]:
        return tuple(tuple(x.node for x in r) for r in rows)

    label = name or f"{w.kind}{'' if m == 2 else m}_{N}x{d}"
    circuit = b.build([x for row in y for x in row], label)
    return circuit, GatedConvNodes(ids(P), ids(Pf), tuple(ids(x) for x in ws), ids(y))


@_plain_args
def gated_conv(N: int, w: GatedConvWeights) -> Circuit:
    """The circuit of :func:`gated_conv_layout` alone."""
    return gated_conv_layout(N, w)[0]


@_plain_args
def hyena_weights(N: int, d: int, order: int = 2, *, short_len: int | None = None, in_proj: object = None, in_bias: object = None,
                  short_filter: object = None, short_bias: object = None, filters: object = None, filter_bias: object = None,
                  out_proj: object = None, out_bias: object = None, prefix: str = "") -> GatedConvWeights:
    """Hyena's weights in the gated-convolution form (``in_proj`` as ``u·W_in``, a ``d × (order+1)·d``
    matrix; ``short_filter[c]`` the causal taps; ``filters[i][q]`` gate i+1's long filter,
    ``filter_bias[i][q]`` its skip; ``out_proj`` as ``y·W_out``). None means symbolic."""
    return gated_conv_weights(N, d, order, short_len=short_len, W_in=in_proj, b_in=in_bias, short=short_filter,
                              short_bias=short_bias, long=filters, long_skip=filter_bias, W_out=out_proj, b_out=out_bias,
                              prefix=prefix, kind="hyena")


@_plain_args
def hyena(N: int, d: int, order: int = 2, *, short_len: int | None = None, in_proj: object = None, in_bias: object = None,
          short_filter: object = None, short_bias: object = None, filters: object = None, filter_bias: object = None,
          out_proj: object = None, out_bias: object = None, prefix: str = "", **unknown: object) -> Circuit:
    """zoology's ``Hyena`` (order 2; higher orders continue the chain) on ``u ∈ F^{N×d}``:

    ``[x1 | x2 | v] = short_filter ⊛ (u·W_in + b_in) + β``, ``y = ((h ⊛ (v ⊙ x1) + D·(v ⊙ x1)) ⊙ x2)·W_out
    + b_out`` (module docstring). Arguments left None are symbolic (:func:`hyena_weights`, their names
    after ``prefix``, as :func:`~symverify.compiler.gated.hyena_direct` names them); symbolic
    long filters whose terms alone exceed ``MAX_GATES`` are a :class:`~symverify.errors.LimitError`
    before any weight is made. Another keyword (a misspelt weight) is an :class:`IRError` naming the
    keywords taken, as in :func:`h3`.

    >>> from symverify.kernel.ir.analysis import stats
    >>> c = hyena(4, 1)
    >>> c.num_inputs, len(c.outputs), len(c.params())
    (4, 4, 25)
    """
    if unknown:
        taken = [p.name for p in inspect.signature(hyena_weights).parameters.values() if p.kind is p.KEYWORD_ONLY]
        raise IRError(f"hyena: unknown weights {sorted(unknown)}; expected only {taken}")
    if filters is None:
        _symbolic_filters(N, d, order, 1, "hyena")
    return gated_conv(N, hyena_weights(N, d, order, short_len=short_len, in_proj=in_proj, in_bias=in_bias,
                                       short_filter=short_filter, short_bias=short_bias, filters=filters,
                                       filter_bias=filter_bias, out_proj=out_proj, out_bias=out_bias, prefix=prefix))


@_plain_args
def h3_weights(N: int, d: int, *, W_q: object = None, b_q: object = None, W_k: object = None, b_k: object = None,
               W_v: object = None, b_v: object = None, shift_kernel: object = None, shift_D: object = None,
               ssm_kernel: object = None, D: object = None, W_out: object = None, b_out: object = None,
               prefix: str = "") -> GatedConvWeights:
    """H3's weights in the gated-convolution form (order 2, ``x_1 = k``, ``x_2 = q``).

    ``W_q, W_k, W_v`` are ``d×d`` as ``u·W`` (``= proj.weight.T``); ``shift_kernel[q]`` the shift-SSM
    kernel of channel q (at most N taps) and ``shift_D[q]`` its skip (``ssm_k_D``); ``ssm_kernel[q]``
    and ``D[q]`` the diagonal SSM's. None means symbolic (``W_q[r][c]``, ``hs[q][k]``, ``Ds[q]``,
    ``h1[q][k]``, ``D1[q]``, …, after ``prefix``; a ``prefix`` with every weight given is an IRError).
    """
    where = "h3"
    if type(prefix) is not str:
        raise IRError(f"h3_weights: expected a str prefix, found {type(prefix).__name__} {prefix!r:.40}")
    _pos(N, "N (sequence length)", where)
    _pos(d, "d", where)
    limits.check(N * 3 * d, "MAX_CELLS", lambda: f"{where}(N={N}, d={d}) state N·3·d")
    limits.check(3 * d * d, "MAX_CELLS", lambda: f"{where}(N={N}, d={d}) projections W_q, W_k, W_v: 3·d·d")
    own = (W_q, b_q, W_k, b_k, W_v, b_v, shift_kernel, shift_D)  # made here; the rest by gated_conv_weights
    rest = (ssm_kernel, D, W_out, b_out)
    if prefix and all(x is not None for x in own + rest):
        raise IRError(f"{where}: prefix={prefix!r} names the symbolic weights, but every weight is given")
    p = prefix
    Wq, Wk, Wv = (_matrix(where, n, x, d, d, f"{p}{n}") for n, x in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v)))
    bq, bk, bv = (_vector(where, n, x, d, f"{p}{n}") for n, x in (("b_q", b_q), ("b_k", b_k), ("b_v", b_v)))
    if shift_kernel is None:
        hs: tuple[Vec, ...] = tuple(tuple(sym(f"{p}hs[{q}][{k}]") for k in range(N)) for q in range(d))
    else:
        rows = _seq(shift_kernel)
        if rows is None or len(rows) != d:
            raise IRError(f"h3 shift_kernel: expected {d} filters, found {len(rows) if rows is not None else type(shift_kernel).__name__}")
        hs = tuple(_vector(where, f"shift_kernel[{q}]", r, N, None, max_len=True) for q, r in enumerate(rows))
    Ds = _vector(where, "shift_D", shift_D, d, f"{p}Ds")
    short = [tuple(hs[q][0] + Ds[q] if k == 0 else hs[q][k] for k in range(N)) for q in range(d)]  # type: ignore[operator]
    short += [(1,) + (0,) * (N - 1) for _ in range(2 * d)]
    W_in = tuple(Wk[r] + Wq[r] + Wv[r] for r in range(d))
    return gated_conv_weights(N, d, 2, short_len=N, W_in=W_in, b_in=bk + bq + bv, short=short, short_bias=[0] * (3 * d),
                              long=None if ssm_kernel is None else [ssm_kernel], long_skip=None if D is None else [D],
                              W_out=W_out, b_out=b_out, prefix=prefix if any(x is None for x in rest) else "", kind="h3")


_H3_WEIGHTS = ("W_q", "b_q", "W_k", "b_k", "W_v", "b_v", "shift_kernel", "shift_D", "ssm_kernel", "D", "W_out", "b_out", "prefix")
"""The keyword arguments of :func:`h3_weights`, which :func:`h3` passes on."""


@_plain_args
def h3(N: int, d: int, **weights: object) -> Circuit:
    """zoology's ``H3`` (``head_dim = 1``) on ``u ∈ F^{N×d}``: ``q, k, v = u·W_{q,k,v} + b``,
    ``k̃ = hs ⊛ k + Ds·k``, ``y = (q ⊙ (h1 ⊛ (k̃ ⊙ v) + D·(k̃ ⊙ v)))·W_out + b_out``. Keyword arguments
    are :func:`h3_weights`'; those left out are symbolic (symbolic kernels whose terms alone exceed
    ``MAX_GATES``: a :class:`~symverify.errors.LimitError` before any weight is made).

    >>> c = h3(3, 1)
    >>> c.num_inputs, len(c.outputs)
    (3, 3)
    """
    unknown = sorted(set(weights) - set(_H3_WEIGHTS))
    if unknown:
        raise IRError(f"h3: unknown weights {unknown}; expected only {list(_H3_WEIGHTS)}")
    _symbolic_filters(N, d, 2, (weights.get("shift_kernel") is None) + (weights.get("ssm_kernel") is None), "h3")
    return gated_conv(N, h3_weights(N, d, **weights))  # type: ignore[arg-type]

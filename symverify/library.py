"""Standard circuits with known depth and width, and a seeded random circuit generator.

Every builder returns a validated :class:`~symverify.kernel.ir.circuit.Circuit`; docstrings state the
polynomials computed and the depth. Inputs are ``vec(u)`` row-major (``x_{i·d+j} = u[i, j]``).
"""

from __future__ import annotations

import math
import numbers
import operator
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from symverify.errors import IRError, UsageError
from symverify.ir import limits
from symverify.ir.bigint import field_repr, safe_repr
from symverify.ir.build import CircuitBuilder, Wire, from_matrix, sum_tree
from symverify.ir.value_memo import ValueMemo, layout_snapshot, same_layout, typed_key
from symverify.kernel.ir.analysis import levels
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.ir.scalar import (
    Scalar,
    as_scalar,
    is_bool,
    is_zero,
    sym,
    unordered,
)
from symverify.library_gated import (
    GatedConvWeights,
    _plain_args,
    _pos,
    gated_conv,
    gated_conv_weights,
    h3,
    h3_weights,
    hyena,
    hyena_weights,
)

__all__ = [
    "walsh_hadamard",
    "poly_mult",
    "prefix_sums",
    "product_tree",
    "matvec",
    "matvec_bilinear",
    "elementary_symmetric",
    "determinant",
    "retnet",
    "retnet_stack",
    "retnet_layout",
    "retnet_weights",
    "retnet_stack_weights",
    "RetNetWeights",
    "RetNetNodes",
    "hyena",
    "hyena_weights",
    "h3",
    "h3_weights",
    "gated_conv",
    "gated_conv_weights",
    "GatedConvWeights",
    "random_circuit",
    "random_linear_circuit",
    "wired_circuit",
    "WIRINGS",
    "symbolic_mixing",
    "standard_library",
]


def _pow2(k: int, what: str) -> None:
    if k < 1 or k & (k - 1):
        raise IRError(f"{what}: expected a power of two, found {k}")


def _sizes(where: str, inputs: Callable[[], int], gates: Callable[[], int], **sizes: object) -> None:
    """Check a builder's size arguments before it builds anything: each is an int ≥ 1
    (:class:`IRError` naming it), the inputs are within ``MAX_INPUTS`` and ``gates()``, a lower bound
    on the circuit's gate count, within ``MAX_GATES`` (:class:`~symverify.errors.LimitError`), so a
    huge size is refused at once instead of filling the memory."""
    for name, v in sizes.items():
        _pos(v, name, where)
    limits.check(inputs(), "MAX_INPUTS", lambda: f"{where}({', '.join(f'{k}={v}' for k, v in sizes.items())})")
    limits.check(gates(), "MAX_GATES", lambda: f"{where}({', '.join(f'{k}={v}' for k, v in sizes.items())})")


@_plain_args
def walsh_hadamard(n: int, d: int = 1) -> Circuit:
    """``y = H_N·x`` for ``N = n·d`` (a power of two), unnormalised Sylvester order.

    Depth ``log2 N``: level t combines pairs ``(i, i + 2^t)`` into ``(a + b, a − b)``.

    >>> c = walsh_hadamard(4)
    >>> from symverify.kernel.ir.analysis import stats
    >>> stats(c).depth, stats(c).size
    (2, 8)
    """
    _sizes("walsh_hadamard", lambda: n * d, lambda: n * d * ((n * d).bit_length() - 1), n=n, d=d)
    N = n * d
    _pow2(N, "walsh_hadamard size n·d")
    b = CircuitBuilder(n, d)
    z: list[Wire] = [w for row in b.inputs() for w in row]
    h = 1
    while h < N:
        nz = list(z)
        for i in range(N):
            if i & h == 0:
                nz[i], nz[i + h] = z[i] + z[i + h], z[i] - z[i + h]
        z, h = nz, 2 * h
    return b.build(z, f"walsh_hadamard_{N}")


@_plain_args
def poly_mult(m: int) -> Circuit:
    """Schoolbook product of two degree-(m−1) polynomials: row 0 of u holds a, row 1 holds b
    (n = 2, d = m); output k = ``Σ_{i+j=k} a_i·b_j`` for k = 0 … 2m−2. Depth ``1 + ⌈log2 m⌉``.
    """
    _sizes("poly_mult", lambda: 2 * m, lambda: m * m, m=m)
    b = CircuitBuilder(2, m)
    u = b.inputs()
    prods = [[u[0][i] * u[1][j] for j in range(m)] for i in range(m)]
    outs = [sum_tree(b, [(1, prods[i][k - i]) for i in range(m) if 0 <= k - i < m]) for k in range(2 * m - 1)]
    return b.build(outs, f"poly_mult_{m}")


@_plain_args
def prefix_sums(N: int, d: int = 1) -> Circuit:
    """All prefix sums ``y_k = x_0 + … + x_k`` of ``N·d`` inputs (Hillis–Steele), depth ``⌈log2(N·d)⌉``."""
    _sizes("prefix_sums", lambda: N * d, lambda: sum(N * d - (1 << t) for t in range((N * d - 1).bit_length())), N=N, d=d)
    b = CircuitBuilder(N, d)
    z: list[Wire] = [w for row in b.inputs() for w in row]
    h = 1
    while h < len(z):
        z = [z[i] + z[i - h] if i >= h else z[i] for i in range(len(z))]
        h *= 2
    return b.build(z, f"prefix_sums_{N * d}")


@_plain_args
def product_tree(N: int, d: int = 1) -> Circuit:
    """``x_0·x_1 ⋯ x_{N·d−1}`` by a balanced tree, depth ``⌈log2(N·d)⌉``; one output."""
    _sizes("product_tree", lambda: N * d, lambda: N * d - 1, N=N, d=d)
    b = CircuitBuilder(N, d)
    z: list[Wire] = [w for row in b.inputs() for w in row]
    while len(z) > 1:
        z = [z[i] * z[i + 1] for i in range(0, len(z) - 1, 2)] + ([z[-1]] if len(z) % 2 else [])
    return b.build(z, f"product_tree_{N * d}")


@_plain_args
def matvec(M: Sequence[Sequence[object]], n: int, d: int = 1) -> Circuit:
    """The linear circuit ``y = M·x`` for a fixed exact matrix ``M`` (m × n·d, m ≤ n·d)."""
    return from_matrix(M, n, d, "matvec")


@_plain_args
def matvec_bilinear(m: int) -> Circuit:
    """``y = A·x`` with both ``A`` (rows 0 … m−1 of u) and ``x`` (row m) as inputs; n = m+1, d = m.
    Depth ``1 + ⌈log2 m⌉``."""
    _sizes("matvec_bilinear", lambda: (m + 1) * m, lambda: m * m, m=m)
    b = CircuitBuilder(m + 1, m)
    u = b.inputs()
    outs = [sum_tree(b, [(1, u[i][j] * u[m][j]) for j in range(m)]) for i in range(m)]
    return b.build(outs, f"matvec_bilinear_{m}")


@_plain_args
def elementary_symmetric(N: int, k: int | None = None, d: int = 1) -> Circuit:
    """``e_1, …, e_k`` of the ``N·d`` inputs (default all, ``k = N·d``) by the recurrence
    ``e_j(x_0..x_i) = e_j(x_0..x_{i−1}) + x_i·e_{j−1}(x_0..x_{i−1})``; output j−1 is ``e_j``.
    The depth grows linearly in ``N·d`` (the recurrence is sequential)."""
    _sizes("elementary_symmetric", lambda: N * d, lambda: 0, N=N, d=d)
    total = N * d
    k = total if k is None else k
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= total:
        raise IRError(f"elementary_symmetric: expected an int 1 ≤ k ≤ {total}, found {k!r}")
    # input i adds one product per e_j with 2 ≤ j ≤ min(i + 1, k): Σ_i (min(i + 1, k) − 1) of them
    limits.check(k * (k - 1) // 2 + (total - k) * (k - 1), "MAX_GATES", lambda: f"elementary_symmetric(N={N}, k={k}, d={d})")
    b = CircuitBuilder(N, d)
    xs: list[Wire] = [w for row in b.inputs() for w in row]
    e: list[Wire | None] = [None] * (k + 1)  # e[j] over the prefix; None = 0
    for x in xs:
        for j in range(k, 0, -1):
            prev = e[j - 1]
            term = x if j == 1 else (x * prev if prev is not None else None)
            if term is not None:
                e[j] = term if e[j] is None else e[j] + term
    return b.build([e[j] for j in range(1, k + 1)], f"elementary_symmetric_{total}_{k}")


@_plain_args
def determinant(m: int) -> Circuit:
    """``det(u)`` of an ``m×m`` input (n = d = m) by Laplace expansion along row 0; one output.

    ``1 ≤ m ≤ 5``: the expansion has ``m!`` terms; another ``m`` is an :class:`~symverify.errors.IRError`.
    """
    if not isinstance(m, int) or isinstance(m, bool) or not 1 <= m <= 5:
        raise IRError(f"determinant: expected an int 1 ≤ m ≤ 5 (Laplace expansion is m! terms), found {m!r}")
    b = CircuitBuilder(m, m)
    u = b.inputs()

    def det(rows: list[int], cols: list[int]) -> Wire:
        if len(rows) == 1:
            return u[rows[0]][cols[0]]
        terms: list[tuple[Scalar, Wire]] = []
        for k, c in enumerate(cols):
            minor = det(rows[1:], cols[:k] + cols[k + 1 :])
            terms.append((1 if k % 2 == 0 else -1, u[rows[0]][c] * minor))
        return sum_tree(b, terms)

    return b.build([det(list(range(m)), list(range(m)))], f"determinant_{m}")


@dataclass(frozen=True)
class RetNetWeights:
    """The weights of one RetNet layer (Algorithm 6): the decay ``γ`` and the ``d×d`` projections
    ``W_A``, ``W_C``, ``W_V`` (exact scalars or :class:`~symverify.kernel.ir.scalar.Sym` parameters)."""

    gamma: Scalar
    W_A: tuple[tuple[Scalar, ...], ...]
    W_C: tuple[tuple[Scalar, ...], ...]
    W_V: tuple[tuple[Scalar, ...], ...]

    def __repr__(self) -> str:
        return field_repr(self)  # the generated repr, with huge integers abbreviated (never fails)

    @property
    def d(self) -> int:
        return len(self.W_A)


@_plain_args
def retnet_weights(d: int, gamma: object = None, W_A: Sequence[Sequence[object]] | None = None,
                   W_C: Sequence[Sequence[object]] | None = None, W_V: Sequence[Sequence[object]] | None = None,
                   *, prefix: str = "") -> RetNetWeights:
    """Validated :class:`RetNetWeights`; every argument left ``None`` becomes symbolic, so statements
    proved with it hold for all its values: ``γ`` is the parameter ``{prefix}gamma`` and ``W_X[p][q]``
    the parameter ``{prefix}W_X[p][q]``.

    >>> w = retnet_weights(2, gamma=Fraction(1, 2), W_A=[[1, 0], [0, 1]])
    >>> w.gamma, str(w.W_C[1][0])
    (Fraction(1, 2), 'W_C[1][0]')

    Raises:
        IRError: ``d`` is not a positive int, a matrix is not ``d×d``, an entry is not exact, a
            ``prefix`` that is not a str, or a ``prefix`` with every weight given (it would name nothing).
    """
    if not isinstance(d, int) or isinstance(d, bool) or d < 1:
        raise IRError(f"retnet: expected a positive int d, found {d!r}")
    if type(prefix) is not str:  # True would name the weights Truegamma, TrueW_A[0][0], …
        raise IRError(f"retnet_weights: expected a str prefix, found {type(prefix).__name__} {safe_repr(prefix, 40)}")
    limits.check(d * d, "MAX_CELLS", lambda: f"retnet_weights(d={d}): each d×d projection")
    if prefix and all(x is not None for x in (gamma, W_A, W_C, W_V)):
        raise IRError(f"retnet: prefix={prefix!r} names the symbolic weights, but gamma, W_A, W_C and W_V are all given")
    g = sym(f"{prefix}gamma") if gamma is None else as_scalar(gamma, "retnet gamma")

    def matrix(name: str, Wm: Sequence[Sequence[object]] | None) -> tuple[tuple[Scalar, ...], ...]:
        if Wm is None:
            return tuple(tuple(sym(f"{prefix}{name}[{p}][{q}]") for q in range(d)) for p in range(d))
        rows = None if unordered(Wm, sized=True) else list(Wm)  # type: ignore[arg-type]
        if rows is None or len(rows) != d or any(unordered(r, sized=True) or len(r) != d for r in rows):  # a dict row: its keys
            raise IRError(f"retnet {name}: expected a {d}×{d} matrix (a list of {d} rows of {d} entries), found "
                          + _matrix_shape(Wm, rows))
        return tuple(tuple(as_scalar(v, f"retnet {name}[{p}][{q}]") for q, v in enumerate(r)) for p, r in enumerate(rows))

    return RetNetWeights(g, matrix("W_A", W_A), matrix("W_C", W_C), matrix("W_V", W_V))


def _matrix_shape(given: object, rows: list[Any] | None) -> str:
    """What a refused matrix argument is, for the error: its type, or its row count and row lengths."""
    if rows is None:
        return f"{type(given).__name__} {safe_repr(given, 40)}"
    lengths = [f"a {type(r).__name__}" if unordered(r, sized=True) else f"{len(r)} entries" for r in rows[:8]]
    return f"{len(rows)} rows ({', '.join(lengths)}{', …' if len(rows) > 8 else ''})"


@dataclass(frozen=True)
class RetNetNodes:
    """Where one RetNet layer's values sit in a circuit (node ids, indexed ``[t]``, ``[t][p]`` or
    ``[t][p][q]``): its input ``u[t][r]``, the projections ``A``, ``C``, ``V``, the outer products
    ``outer[t][p][q] = A[t][p]·V[t][q]``, the states ``z[t][p][q]``, the read-out products
    ``read[t][p][q] = C[t][p]·z[t][p][q]`` and the output ``y[t][q] = Σ_p read[t][p][q]``."""

    u: tuple[tuple[int, ...], ...]
    A: tuple[tuple[int, ...], ...]
    C: tuple[tuple[int, ...], ...]
    V: tuple[tuple[int, ...], ...]
    outer: tuple[tuple[tuple[int, ...], ...], ...]
    z: tuple[tuple[tuple[int, ...], ...], ...]
    read: tuple[tuple[tuple[int, ...], ...], ...]
    y: tuple[tuple[int, ...], ...]


def _retnet_layer(b: CircuitBuilder, u: list[list[Wire]], w: RetNetWeights) -> tuple[list[list[Wire]], RetNetNodes]:
    """Emit one RetNet layer on the wires ``u`` (N×d); its output wires and its nodes."""
    N, d, g = len(u), w.d, w.gamma

    def proj(Wm: tuple[tuple[Scalar, ...], ...], t: int) -> list[Wire]:
        return [sum_tree(b, [(Wm[p][q], u[t][p]) for p in range(d) if not is_zero(Wm[p][q])]) for q in range(d)]

    A: list[list[Wire]] = []
    C: list[list[Wire]] = []
    V: list[list[Wire]] = []
    y: list[list[Wire]] = []
    outer: list[list[list[Wire]]] = []
    z: list[list[list[Wire]]] = []
    read: list[list[list[Wire]]] = []
    prev: list[list[Wire]] | None = None
    for t in range(N):
        a, c, v = proj(w.W_A, t), proj(w.W_C, t), proj(w.W_V, t)
        o = [[a[p] * v[q] for q in range(d)] for p in range(d)]
        # one linear gate per step: z^t = γ·z^{t−1} + A[t]ᵀV[t]  (z^0 = A[0]ᵀV[0])
        zt = o if prev is None else [[b.emit(Gate.lin(prev[p][q].node, g, o[p][q].node, 1)) for q in range(d)] for p in range(d)]
        r = [[c[p] * zt[p][q] for q in range(d)] for p in range(d)]
        y.append([sum_tree(b, [(1, r[p][q]) for p in range(d)]) for q in range(d)])
        A.append(a)
        C.append(c)
        V.append(v)
        outer.append(o)
        z.append(zt)
        read.append(r)
        prev = zt

    def ids1(ws: list[list[Wire]]) -> tuple[tuple[int, ...], ...]:
        return tuple(tuple(x.node for x in row) for row in ws)

    def ids2(ws: list[list[list[Wire]]]) -> tuple[tuple[tuple[int, ...], ...], ...]:
        return tuple(ids1(m) for m in ws)

    return y, RetNetNodes(ids1(u), ids1(A), ids1(C), ids1(V), ids2(outer), ids2(z), ids2(read), ids1(y))


@_plain_args
def retnet_layout(N: int, d: int, layers: Sequence[RetNetWeights], name: str | None = None) -> tuple[Circuit, tuple[RetNetNodes, ...]]:
    """A stack of RetNet layers (layer k reads layer k−1's output) and where each layer's values sit.

    This is the circuit :func:`retnet` and :func:`retnet_stack` return; the node map lets a
    construction (:func:`symverify.compiler.retnet.retnet_direct`) name the circuit values its
    layers hold in a stage certificate. The last few results are kept: equal arguments (values
    and types) return the same immutable circuit.
    """
    if not isinstance(N, int) or isinstance(N, bool) or N < 1:
        raise IRError(f"retnet: expected a positive int N (the sequence length), found {N!r}")
    if not isinstance(d, int) or isinstance(d, bool) or d < 1:
        raise IRError(f"retnet: expected a positive int d, found {type(d).__name__} {safe_repr(d, 40)}")
    if isinstance(layers, (str, bytes)) or unordered(layers) or not isinstance(layers, Sequence):
        raise IRError(f"retnet: expected a sequence of RetNetWeights (one per layer), found {type(layers).__name__} "
                      f"{safe_repr(layers, 40)}")
    if name is not None and not isinstance(name, str):
        raise IRError(f"retnet: expected a str name or None, found {type(name).__name__} {safe_repr(name, 40)}")
    if not layers:
        raise IRError("retnet: expected at least one layer")
    for k, w in enumerate(layers):
        if not isinstance(w, RetNetWeights):
            raise IRError(f"retnet layer {k}: expected RetNetWeights, found {type(w).__name__}")
        if w.d != d:
            raise IRError(f"retnet layer {k}: expected weights for d = {d}, found d = {w.d}")
    # each layer multiplies A[t][p]·V[t][q] for every t, p, q: at least N·d² gates a layer
    limits.check(N * d * d * len(layers), "MAX_GATES", lambda: f"retnet(N={N}, d={d}) with {len(layers)} layer(s)")
    if type(d) is not int or not (name is None or type(name) is str):
        return _retnet_layout(N, d, layers, name)
    return _RETNET_LAYOUTS(typed_key(N, d, tuple(layers), name), lambda: _retnet_layout(N, d, layers, name))


_RETNET_LAYOUTS: ValueMemo[tuple[Circuit, tuple[RetNetNodes, ...]]] = ValueMemo(8, held=layout_snapshot, same=same_layout)
"""The last layouts built: ``retnet(N, d)`` and ``retnet_direct(N, d)`` build the same circuit
(kept by the arguments' values and types, :class:`~symverify.ir.value_memo.ValueMemo`)."""


def _retnet_layout(N: int, d: int, layers: Sequence[RetNetWeights], name: str | None) -> tuple[Circuit, tuple[RetNetNodes, ...]]:
    b = CircuitBuilder(N, d)
    u = b.inputs()
    nodes = []
    for w in layers:
        u, nd = _retnet_layer(b, u, w)
        nodes.append(nd)
    label = name or (f"retnet_{N}x{d}" if len(layers) == 1 else f"retnet_stack{len(layers)}_{N}x{d}")
    return b.build([x for row in u for x in row], label), tuple(nodes)


@_plain_args
def retnet(N: int, d: int, gamma: object = None, W_A: Sequence[Sequence[object]] | None = None,
           W_C: Sequence[Sequence[object]] | None = None, W_V: Sequence[Sequence[object]] | None = None) -> Circuit:
    """RetNet (Algorithm 6, Corollary H.22) on ``u ∈ F^{N×d}`` (N the sequence length):
    ``A = uW_A, C = uW_C, V = uW_V``, ``z^t = γ·z^{t−1} + A[t,:]ᵀ V[t,:]`` (``z^{−1} = 0``) and
    ``y[t,:] = C[t,:]·z^t``; unrolled, ``z^t = Σ_{i≤t} γ^{t−i} A[i,:]ᵀ V[i,:]`` (the excerpt's eq. 7).

    One linear gate per recurrence step (``γ·z^{t−1} + outer`` is a single ``LIN``), so the depth is
    at most ``N + 1 + max(1, ⌈log2 d⌉) + ⌈log2 d⌉`` (equal for generic weights; ``N + 1 + 2⌈log2 d⌉``
    for d ≥ 2): ``max(1, ⌈log2 d⌉)`` for the projections, 1 for the outer products, ``N − 1``
    recurrence steps, 1 for ``C[t,p]·z^t[p,q]`` and ``⌈log2 d⌉`` for the sum over p. Size
    ``O(N·d²)``. Arguments left ``None`` are symbolic (:func:`retnet_weights`: ``gamma``,
    ``W_A[p][q]``, …), so a proof about this circuit holds for all of their values.

    >>> from symverify.kernel.ir.analysis import stats
    >>> stats(retnet(8, 2)).depth
    11
    """
    return retnet_layout(N, d, [retnet_weights(d, gamma, W_A, W_C, W_V)])[0]


@_plain_args
def retnet_stack(N: int, d: int, layers: int | Sequence[RetNetWeights]) -> Circuit:
    """``layers`` RetNet layers applied in turn (layer k reads layer k−1's ``N×d`` output).

    An int asks for that many layers with symbolic weights, layer k's named ``L{k}.gamma``,
    ``L{k}.W_A[p][q]``, … (:func:`retnet_weights` with ``prefix=f"L{k}."``).
    """
    return retnet_layout(N, d, retnet_stack_weights(d, layers))[0]


@_plain_args
def retnet_stack_weights(d: int, layers: int | Sequence[RetNetWeights]) -> list[RetNetWeights]:
    """The weights of a stack: a count gives symbolic layers (``prefix=f"L{k}."``), a sequence is kept."""
    if isinstance(layers, int) and not isinstance(layers, bool):
        if layers < 1:
            raise IRError(f"retnet_stack: expected at least one layer, found {layers}")
        limits.check(layers * d * d if isinstance(d, int) else 0, "MAX_GATES",
                     lambda: f"retnet_stack(d={d}) of {layers} layers (each at least N·d² gates)")
        return [retnet_weights(d, prefix=f"L{k}.") for k in range(layers)]
    if isinstance(layers, (str, bytes, bool)) or not isinstance(layers, Sequence):
        raise IRError(f"retnet_stack: expected a layer count or a sequence of RetNetWeights, found {type(layers).__name__}")
    return list(layers)


_COEFFS: list[Scalar] = [1, 1, -1, 2, -2, 3, Fraction(1, 2), Fraction(-2, 3)]
_CONSTS: list[Scalar] = [1, 2, -1, Fraction(1, 3)]


@_plain_args
def symbolic_mixing(n: int) -> Circuit:
    """A linear circuit with symbolic coefficients (for "for all a, b" statements): level 1 is
    ``y_i = a·x_i + b·x_{i+1}``, level 2 ``z_i = y_i + a·b·y_{i+1}`` (indices mod n); n×1 input."""
    _sizes("symbolic_mixing", lambda: n, lambda: 2 * n, n=n)
    a, b = sym("a"), sym("b")
    gates = [Gate.lin(i, a, (i + 1) % n, b) for i in range(n)]
    gates += [Gate.lin(n + i, 1, n + (i + 1) % n, a * b) for i in range(n)]
    return Circuit(n, 1, tuple(gates), tuple(range(2 * n, 3 * n)), f"symbolic_mixing_{n}")


def _seed(seed: object, where: str, error: type[IRError] | type[UsageError] = IRError) -> int:
    """``seed`` as a plain ``int`` (an ``int`` subclass or a numpy integer by its value); refuse a
    seed that is not an integer: ``None`` would draw the operating system's randomness (a circuit no
    one can rebuild), and a bool, float or str would make a circuit named after a seed that is not one."""
    return _integer(seed, "seed", where, error)


def _integer(v: object, what: str, where: str, error: type[IRError] | type[UsageError] = IRError) -> int:
    """``v`` as a plain ``int`` when it is an integer (``int``, ``IntEnum``, numpy integers; not a bool)."""
    if isinstance(v, numbers.Integral) and not is_bool(v):
        return operator.index(v)
    raise error(f"{where}: expected an int {what}, found {type(v).__name__} {v!r:.40}")


def _flag(v: object, what: str, where: str, error: type[IRError] | type[UsageError] = IRError) -> bool:
    """``v`` as a ``bool`` when it is one (Python's or numpy's); anything else is refused."""
    if is_bool(v):
        return bool(v)
    raise error(f"{where}: expected {what} True or False, found {type(v).__name__} {v!r:.40}")


def _fraction_of_gates(v: object, where: str, error: type[IRError] | type[UsageError] = IRError) -> float | int | Fraction:
    """``mul_fraction``: a real number ``0 ≤ v ≤ 1`` (an int, float or Fraction as it is; a numpy float
    as the float of its value); else ``error`` naming the argument, its type and value."""
    if type(v).__module__ == "numpy" and isinstance(v, numbers.Real) and not is_bool(v):
        v = float(v)  # type: ignore[arg-type]
    if not isinstance(v, (int, float, Fraction)) or is_bool(v):
        raise error(f"{where}: expected a real number 0 ≤ mul_fraction ≤ 1, found {type(v).__name__} {safe_repr(v, 40)}")
    if not 0 <= v <= 1:  # NaN fails too
        raise error(f"{where}: expected 0 ≤ mul_fraction ≤ 1, found {safe_repr(v, 40)}")
    return v


def _coeff(rng: random.Random) -> Scalar:
    return rng.choice(_COEFFS)


@_plain_args
def random_circuit(n: int, d: int, size: int, depth: int, mul_fraction: float = 0.3, *, seed: int = 0,
                   num_outputs: int | None = None, consts: bool = True) -> Circuit:
    """A seeded random circuit with exactly ``depth`` levels and ``size`` gates (size ≥ depth),
    counted as :attr:`Circuit.size <symverify.kernel.ir.circuit.Circuit.size>` counts them: ``MUL`` and
    ``LIN`` gates, constants not included.

    Every level gets at least one gate; each gate reads one node of the previous level (so its
    level is exact) and one node of any earlier level. A fraction ``mul_fraction`` of the gates
    multiply; the rest are linear with small rational coefficients; with ``consts`` a few
    ``CONST`` gates appear on top of the ``size`` (so ``len(c.gates)`` may exceed ``size``;
    ``consts=False`` gives exactly ``size`` entries in ``c.gates``). Outputs: the last level's gates first, then random nodes, ``num_outputs``
    in all (default ``min(n·d, 4)``).
    """
    _sizes("random_circuit", lambda: n * d, lambda: 0, n=n, d=d)
    for name, v in (("size", size), ("depth", depth)):
        if not isinstance(v, int) or isinstance(v, bool):
            raise IRError(f"random_circuit: expected an int {name}, found {v!r}")
    if depth < 0 or size < depth or (depth == 0 and size):
        raise IRError(f"random_circuit: expected size ≥ depth ≥ 0 (and size 0 when depth 0), found size={size}, depth={depth}")
    fraction = _fraction_of_gates(mul_fraction, "random_circuit")
    seed = _seed(seed, "random_circuit")
    consts = _flag(consts, "consts", "random_circuit")
    if num_outputs is not None:
        num_outputs = _integer(num_outputs, "num_outputs (or None)", "random_circuit")
    limits.check(size, "MAX_GATES", "random_circuit")
    rng = random.Random(seed)
    nd = n * d
    gates: list[Gate] = []
    by_level: list[list[int]] = [list(range(nd))]
    counts = [1] * depth
    for _ in range(size - depth):
        counts[rng.randrange(depth)] += 1
    pool = list(by_level[0])  # every node of the levels below, level by level (the same list for a whole level)
    for ell in range(1, depth + 1):
        cur: list[int] = []
        for _ in range(counts[ell - 1]):
            a = rng.choice(by_level[ell - 1])
            bnode = rng.choice(pool)
            if consts and rng.random() < 0.05:
                gates.append(Gate(Op.CONST, (), (rng.choice(_CONSTS),)))
                bnode = nd + len(gates) - 1
            if rng.random() < fraction:
                gates.append(Gate(Op.MUL, (a, bnode), ()))
            else:
                gates.append(Gate(Op.LIN, (a, bnode), (_coeff(rng), _coeff(rng))))
            cur.append(nd + len(gates) - 1)
        by_level.append(cur)
        pool += cur
    m = min(nd, 4) if num_outputs is None else num_outputs
    if not 0 <= m <= nd:
        raise IRError(f"random_circuit: expected 0 ≤ num_outputs ≤ n·d = {nd}, found {m}")
    outs = list(by_level[-1][:m])
    every = list(range(nd + len(gates)))
    while len(outs) < m:
        outs.append(rng.choice(every))
    c = Circuit(n, d, tuple(gates), tuple(outs), f"random_{n}x{d}_s{size}_D{depth}_seed{seed}")
    assert max((levels(c)[o] for o in outs), default=0) == depth or m == 0
    return c


@_plain_args
def random_linear_circuit(n: int, d: int, size: int, depth: int, *, seed: int = 0, num_outputs: int | None = None) -> Circuit:
    """:func:`random_circuit` with only linear gates and no constants (a linear circuit)."""
    return random_circuit(n, d, size, depth, 0.0, seed=seed, num_outputs=num_outputs, consts=False)


WIRINGS = ("below", "hub", "hubs", "random", "reversal", "few", "permutation")


@_plain_args
def wired_circuit(w: int, depth: int, wiring: str, *, seed: int = 0, mul_fraction: float = 0.5,
                  shuffle_outputs: bool = False, d: int | None = None) -> Circuit:
    """A seeded circuit of ``depth`` levels of ``w`` gates each (cut width ``w``, inputs
    ``n·d = w`` with ``d`` the first of 4, 2, 1 dividing ``w``, or the given ``d``, which must divide
    ``w``) whose wiring between levels is
    one of :data:`WIRINGS`. Gate ``j`` of a level reads two nodes of the level below:

    * ``below``: node ``j`` and a random node (the wiring of ``thm_h21_sweep``);
    * ``hub``: a random node and node 0 (one node read by every gate: fan-out ``w``);
    * ``hubs``: a random node and one of ``⌈√w⌉`` random hubs;
    * ``random``: two random nodes (some nodes unread);
    * ``reversal``: node ``w − 1 − j`` and node ``(7j + 3) mod w``;
    * ``few``: two of the first four nodes (fan-out about ``w/2``);
    * ``permutation``: ``π(j)`` and ``σ(j)`` for two random permutations.

    A fraction ``mul_fraction`` of the gates multiply, the rest are ``a + c·b`` with ``c`` in
    ``{1, 2, −1}``. The last level is the output, in order or shuffled. These circuits exercise the
    compiler on wirings the proof sweeps do not contain (``benchmarks/h21_unseen.py``).
    """
    if wiring not in WIRINGS:
        raise UsageError(f"wired_circuit: wiring: expected one of {', '.join(WIRINGS)}, found {wiring!r}")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (w, depth)) or w < 1 or depth < 1:
        raise UsageError(f"wired_circuit: expected w ≥ 1, depth ≥ 1 (ints), found w={w!r:.40}, depth={depth!r:.40}")
    fraction = _fraction_of_gates(mul_fraction, "wired_circuit", UsageError)
    limits.check(w * depth, "MAX_GATES", f"wired_circuit of width {w} and depth {depth}")
    limits.check(w, "MAX_INPUTS", "wired_circuit")
    if d is not None and (not isinstance(d, int) or isinstance(d, bool) or d < 1 or w % d):
        raise UsageError(f"wired_circuit: d: expected a positive divisor of w = {w}, found {d!r}")
    seed = _seed(seed, "wired_circuit", UsageError)
    shuffle_outputs = _flag(shuffle_outputs, "shuffle_outputs", "wired_circuit", UsageError)
    rng = random.Random(f"wired {w} {depth} {wiring} {seed}")
    if d is None:
        d = next(k for k in (4, 2, 1) if w % k == 0)
    gates: list[Gate] = []
    below = list(range(w))
    for _ in range(depth):
        pi, sigma = rng.sample(below, w), rng.sample(below, w)
        hubs = rng.sample(below, min(w, math.isqrt(w - 1) + 1))
        level = []
        for j in range(w):
            a, b = _operands(wiring, j, below, hubs, pi, sigma, rng)
            if rng.random() < fraction:
                gates.append(Gate(Op.MUL, (a, b), ()))
            else:
                gates.append(Gate(Op.LIN, (a, b), (1, rng.choice((1, 2, -1)))))
            level.append(w + len(gates) - 1)
        below = level
    outs = rng.sample(below, w) if shuffle_outputs else below
    return Circuit(w // d, d, tuple(gates), tuple(outs), f"{wiring}_w{w}_D{depth}_seed{seed}")


def _operands(wiring: str, j: int, below: Sequence[int], hubs: Sequence[int], pi: Sequence[int], sigma: Sequence[int],
              rng: random.Random) -> tuple[int, int]:
    """The two operands of gate ``j`` of a level of :func:`wired_circuit`."""
    w = len(below)
    if wiring == "below":
        return below[j], rng.choice(below)
    if wiring == "hub":
        return rng.choice(below), below[0]
    if wiring == "hubs":
        return rng.choice(below), rng.choice(hubs)
    if wiring == "random":
        return rng.choice(below), rng.choice(below)
    if wiring == "reversal":
        return below[w - 1 - j], below[(7 * j + 3) % w]
    if wiring == "few":
        return below[rng.randrange(min(w, 4))], below[rng.randrange(min(w, 4))]
    return pi[j], sigma[j]


def standard_library(quick: bool = True) -> list[Circuit]:
    """The sweep used by proof scripts: every library family at small (quick) or larger sizes."""
    quick = _flag(quick, "quick", "standard_library", UsageError)
    s = 1 if quick else 2
    out = [
        walsh_hadamard(4 * s, 2),
        poly_mult(2 + s),
        prefix_sums(4 * s, 2),
        product_tree(4 * s),
        matvec([[1, 2, 0, -1], [0, 1, Fraction(1, 2), 0], [3, 0, 0, 1], [0, 0, 1, 1]], 2, 2),
        matvec_bilinear(2 + s),
        elementary_symmetric(3 + s),
        determinant(2 + s),
        random_circuit(2, 2, 12 * s, 4, seed=1),
    ]
    return out

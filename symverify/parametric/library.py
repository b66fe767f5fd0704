"""The appendix's building blocks as parametric gadgets (docs/forall.md §4).

Each function returns a :class:`~symverify.kernel.parametric.gadget.Gadget` whose weights are the
construction's (cited in its docstring) and whose ``spec`` is the statement proved for all sizes
by :func:`symverify.kernel.provers.forall.prove_forall`. Sizes: ``N`` rows (``N'``), ``d`` channels
(``d'``) unless a layout fixes them; ``N ≤ 2^40`` and ``d ≤ 2^20`` throughout.

The compiler and the gadget modules build their layers from these definitions
(:func:`symverify.kernel.parametric.concrete.instantiate`), so what is proved here is what they emit.
"""

from __future__ import annotations

from collections.abc import Callable

from symverify.kernel.parametric.expr import (
    ONE,
    TRUE,
    Cond,
    IExpr,
    Value,
    all_of,
    bit,
    eq,
    fam,
    ge,
    inp,
    ite,
    lt,
    pow2,
    pred,
    var,
    where,
)
from symverify.kernel.parametric.gadget import Gadget, Param, PLayer, Tap, tap

__all__ = [
    "MAX_N", "MAX_D", "shift_down", "shift_up", "cyclic_shift", "running_add", "mask", "gate", "constant", "move_rows",
    "move_cols", "remember_rows", "remember_rows_two", "remember_channels", "butterfly_sequence", "butterfly_channel", "product_pair", "mul_stage", "gather", "scatter", "factor_sequence", "factor_channel", "block_scale",
    "user_cyclic_shift", "PRIMITIVES", "ALL",
]

MAX_N = 1 << 40
MAX_D = 1 << 20
MAX_LOG_N = 40
MAX_LOG_D = 20

i, q = var("i"), var("q")
N, D = var("N"), var("d")


def _sizes(*extra: Param) -> tuple[Param, ...]:
    return (Param("N", 1, MAX_N), Param("d", 1, MAX_D), *extra)


def shift_down() -> Gadget:
    """``y[i] = u[i − s]`` for ``i ≥ s``, else 0 (causal): ``W = 0``, ``b1 = 1``, ``h = e_s``, ``b2 = 0``
    (appendix H ``prim-shift``, kernel ``X^s``)."""
    s = var("s")
    layer = PLayer(b1=ONE, h=(tap(s),), mode="causal")
    return Gadget("shift_down", _sizes(Param("s", 0, MAX_N - 1)), N, D, (layer,),
                  where(ge(i, s), inp(i - s, q)), where=lt(s, N))


def shift_up() -> Gadget:
    """``y[i] = u[i + s]`` for ``i + s < N'``, else 0 (cyclic): ``W = 0``, ``h = e_{(N' − s) mod N'}``,
    ``b1 = 1`` on the rows ``i < N' − s``, ``b2 = 0`` (the mask compares ``i`` itself with a bound, so it
    is built as two row blocks at any ``N'``)."""
    s = var("s")
    layer = PLayer(b1=where(lt(i, N - s), 1), h=(tap(ite(eq(s, 0), 0, N - s)),), mode="cyclic")
    return Gadget("shift_up", _sizes(Param("s", 0, MAX_N - 1)), N, D, (layer,),
                  where(lt(i + s, N), inp(i + s, q)), where=lt(s, N))


def cyclic_shift() -> Gadget:
    """``y[i] = u[(i − s) mod N']`` (cyclic): ``W = 0``, ``b1 = 1``, ``h = e_s``, ``b2 = 0``, ``0 ≤ s < N'``."""
    s = var("s")
    layer = PLayer(b1=ONE, h=(tap(s),), mode="cyclic")
    return Gadget("cyclic_shift", _sizes(Param("s", 0, MAX_N - 1)), N, D, (layer,),
                  inp((i + N - s) % N, q), where=lt(s, N))


def running_add() -> Gadget:
    """``prim-add``: rows ``[0,n) = x``, ``[n,2n) = S`` ↦ rows ``[0,n) = 1``, ``[n,2n) = S + x``, rows
    ``≥ 2n`` 0. Layer 1 (causal): ``h = e_0 + e_n``, ``b1 = 1`` on rows ``[n, 2n)``; layer 2: ``h = e_0``,
    ``b1 = 1``, ``b2 = 1`` on rows ``[0, n)``."""
    n = var("n")
    l1 = PLayer(b1=where(ge(i, n) & lt(i, 2 * n), 1), h=(tap(0), tap(n)))
    l2 = PLayer(b1=ONE, h=(tap(0),), b2=where(lt(i, n), 1))
    spec = where(lt(i, n), 1, where(lt(i, 2 * n), inp(i, q) + inp(i - n, q)))
    return Gadget("running_add", _sizes(Param("n", 1, MAX_N // 2)), N, D, (l1, l2), spec, where=ge(N, 2 * n))


def mask() -> Gadget:
    """A block mask ``y = 1_{[r0,r1)×[c0,c1)} ⊙ u``: ``W = 0``, ``b1`` = the block's indicator,
    ``h = e_0``, ``b2 = 0`` (the fixed-gate primitive with a 0/1 gate)."""
    r0, r1, c0, c1 = var("r0"), var("r1"), var("c0"), var("c1")
    inside = all_of(ge(i, r0), lt(i, r1), ge(q, c0), lt(q, c1))
    layer = PLayer(b1=where(inside, 1), h=(tap(0),))
    ps = _sizes(Param("r0", 0, MAX_N), Param("r1", 0, MAX_N), Param("c0", 0, MAX_D), Param("c1", 0, MAX_D))
    return Gadget("mask", ps, N, D, (layer,), where(inside, inp(i, q)), where=all_of(ge(N, r1), ge(D, c1)))


def gate() -> Gadget:
    """The fixed gate ``y = B ⊙ u`` for every ``B``: ``W = 0``, ``b1 = B``, ``h = e_0``, ``b2 = 0``."""
    layer = PLayer(b1=fam("B", i, q), h=(tap(0),))
    return Gadget("gate", _sizes(), N, D, (layer,), fam("B", i, q) * inp(i, q), families={"B": (N, D)})


def constant() -> Gadget:
    """``y = R`` whatever the input: ``W = 0``, ``b1 = R``, ``h = 0``, ``b2 = 1``."""
    layer = PLayer(b1=fam("R", i, q), b2=ONE)
    return Gadget("constant", _sizes(), N, D, (layer,), fam("R", i, q), families={"R": (N, D)})


def move_rows() -> Gadget:
    """Rows ``[dst, dst + c) ← [src, src + c)`` on every channel, everything else 0, one layer:
    ``W = 0``, ``h = e_{(dst − src) mod N'}``, ``b1 = 1`` on the destination rows, ``b2 = 0``;
    cyclic (it moves up or down)."""
    src, dst, c = var("src"), var("dst"), var("c")
    dest = ge(i, dst) & lt(i, dst + c)
    layer = PLayer(b1=where(dest, 1), h=(tap((N + dst - src) % N),), mode="cyclic")
    ps = _sizes(Param("src", 0, MAX_N), Param("dst", 0, MAX_N), Param("c", 1, MAX_N))
    return Gadget("move_rows", ps, N, D, (layer,), where(dest, inp(i - dst + src, q)),
                  where=all_of(ge(N, src + c), ge(N, dst + c)))


def move_cols() -> Gadget:
    """Channels ``[dst, dst + c) ← [src, src + c)`` on every row, one row-local layer:
    ``W[src + t, dst + t] = 1``, ``b1 = 0``, ``h = 0``, ``b2 = 1`` on the destination channels."""
    src, dst, c = var("src"), var("dst"), var("c")
    dest = ge(q, dst) & lt(q, dst + c)
    layer = PLayer(W=(tap(q - dst + src, 1, dest),), b2=where(dest, 1))
    ps = _sizes(Param("src", 0, MAX_D), Param("dst", 0, MAX_D), Param("c", 1, MAX_D))
    return Gadget("move_cols", ps, N, D, (layer,), where(dest, inp(i, q - dst + src)),
                  where=all_of(ge(D, src + c), ge(D, dst + c)))


def remember_rows() -> Gadget:
    """Proposition H.10 (remember), rows, one layer (:func:`symverify.gadgets.remember.remember_rows` with
    ``h = g·e_0`` and a constant ``f = F``): rows ``[0, a)`` hold ``x``, rows ``[a, a + b)`` hold ``r``; the
    layer computes ``F ⊙ (h ⊛ x)`` on the ``x`` rows and keeps ``r``: ``W = 0``, ``h = e_0``,
    ``b1[i, c] = F[i, c]·g[c]`` on the ``x`` rows and 1 on the ``r`` rows, ``b2 = 0``. Spec:
    ``y = F·g·x`` on rows ``< a``, ``y = r`` on rows ``[a, a + b)``, 0 below; the input is 0 from row
    ``a + b`` on. For all ``F``, ``g`` (families)."""
    a, b = var("a"), var("b")
    coef = fam("F", i, q) * fam("g", q)
    layer = PLayer(b1=where(lt(i, a), coef, where(lt(i, a + b), 1)), h=(tap(0),), mode="causal")
    spec = where(lt(i, a), coef * inp(i, q), where(lt(i, a + b), inp(i, q)))
    return Gadget("remember_rows", _sizes(Param("a", 1, MAX_N), Param("b", 0, MAX_N)), N, D, (layer,), spec,
                  where=ge(N, a + b), entry=lt(i, a + b), families={"F": (N, D), "g": (D,)})


def _two_tap(lo: Cond) -> tuple[Tap, ...]:
    """A filter with two taps at the lags ``l1``, ``l2`` (any, equal allowed: they add) and the
    coefficients ``h1[c]``, ``h2[c]`` on the channels where ``lo`` holds."""
    return (tap(var("l1"), fam("h1", q), lo), tap(var("l2"), fam("h2", q), lo))


def _two_tap_conv(r: IExpr, c: IExpr) -> Value:
    """``(h ⊛ x)[r, c]`` for :func:`_two_tap`'s filter, causal."""
    l1, l2 = var("l1"), var("l2")
    return where(ge(r, l1), fam("h1", c) * inp(r - l1, c)) + where(ge(r, l2), fam("h2", c) * inp(r - l2, c))


def remember_rows_two() -> Gadget:
    """Proposition H.10 (remember), rows, the **two-layer** form for a general filter
    (:func:`symverify.gadgets.remember.remember_rows` with ``b ≥ 1`` and taps at lags other than 0):
    ``x`` = rows ``[0, a)``, ``r`` = rows ``[a, a + b)``, ``s = a + b``, ``N' ≥ 2s``; the filter has
    two taps at any lags ``l1, l2 < a`` with coefficients ``h1[c]``, ``h2[c]`` (families: every
    filter with at most two taps), ``f = F`` a constant.

    Layer 1 (causal): ``h₁ = h + e_s``, ``b1 = F`` on the ``x`` rows and 1 on rows ``[a + s, a + b + s)``
    (``r`` moves down by ``s`` into the workspace), ``W = b2 = 0``. Layer 2 (cyclic): ``h₂ = e_0 +
    e_{N' − s}``, ``b1`` = 1 on rows ``[0, a + b)``, ``W = b2 = 0`` (``r`` moves back up; the ``x`` rows
    meet only zero rows at lag ``−s``). Spec: ``F ⊙ (h ⊛ x)`` on rows ``< a``, ``r`` on ``[a, a + b)``,
    0 below; the input is 0 from row ``a + b`` on."""
    a, b = var("a"), var("b")
    s = a + b
    l1 = PLayer(b1=where(lt(i, a), fam("F", i, q), where(ge(i, a + s) & lt(i, s + s), 1)),
                h=(*_two_tap(TRUE), tap(s)), mode="causal")
    l2 = PLayer(b1=where(lt(i, s), 1), h=(tap(0), tap(N - s)), mode="cyclic")
    spec = where(lt(i, a), fam("F", i, q) * _two_tap_conv(i, q), where(lt(i, s), inp(i, q)))
    ps = _sizes(Param("a", 1, MAX_N), Param("b", 1, MAX_N), Param("l1", 0, MAX_N), Param("l2", 0, MAX_N))
    return Gadget("remember_rows_two", ps, N, D, (l1, l2), spec, where=all_of(ge(N, 2 * s), lt(var("l1"), a), lt(var("l2"), a)),
                  entry=lt(i, s), families={"F": (N, D), "h1": (D,), "h2": (D,)})


def remember_channels() -> Gadget:
    """Proposition H.10 (remember), **channels** (:func:`symverify.gadgets.remember.remember_channels`
    with ``f`` in the state, ``ChannelF``: Theorem H.21's use): on rows ``[0, m)``, ``x`` = channels
    ``[0, a)``, ``r`` = channels ``[a, a + b)``, ``f`` for ``x``'s channel ``c`` in channel ``fo + c``
    (``fo ≥ a + b``); a filter with two taps at any lags (as :func:`remember_rows_two`). One causal
    layer: ``W[fo + c, c] = 1`` and ``h`` = the filter on the ``x`` channels; ``b1`` = 1 on the ``r``
    channels' rows ``< m`` with ``h = e_0`` there; ``b2 = 0``. Spec on rows ``< m``: ``f ⊙ (h ⊛ x)`` on
    the ``x`` channels, ``r`` on the ``r`` channels, 0 elsewhere (the ``f`` channels are consumed); the
    input is 0 outside rows ``< m`` of ``x``, ``r`` and ``f``'s channels."""
    a, b, m, fo = var("a"), var("b"), var("m"), var("fo")
    xs = lt(q, a)
    rs = ge(q, a) & lt(q, a + b)
    layer = PLayer(W=(tap(q + fo, 1, xs),), b1=where(rs & lt(i, m), 1), h=(*_two_tap(xs), tap(0, 1, rs)), mode="causal")
    spec = where(lt(i, m), where(xs, inp(i, q + fo) * _two_tap_conv(i, q), where(rs, inp(i, q))))
    entry = lt(i, m) & (lt(q, a + b) | ge(q, fo) & lt(q, fo + a))
    ps = _sizes(Param("a", 1, MAX_D), Param("b", 0, MAX_D), Param("m", 1, MAX_N), Param("fo", 1, MAX_D),
                Param("l1", 0, MAX_N), Param("l2", 0, MAX_N))
    return Gadget("remember_channels", ps, N, D, (layer,), spec,
                  where=all_of(ge(N, m), ge(var("fo"), a + b), ge(D, var("fo") + a), lt(var("l1"), m), lt(var("l2"), m)),
                  entry=entry, families={"h1": (D,), "h2": (D,)})


def _butterfly_params() -> tuple[Param, ...]:
    return (Param("r", 1, MAX_LOG_N - 2), Param("j", 0, MAX_LOG_D), Param("e", 0, MAX_LOG_N))


def _layout(r: IExpr) -> tuple[IExpr, IExpr, IExpr]:
    """``R = 2^r`` track rows, ``S = R + R/2`` (block offset), ``N' = 3·S``."""
    R = pow2(r)
    S = R + (R >> 1)
    return R, S, 3 * S


def butterfly_sequence() -> Gadget:
    """Lemma H.16, sequence axis (stride ``s = t·tw ≥ tw``, ``t = 2^e ≤ R/2``): the layers ``A`` and ``B``
    of :mod:`symverify.compiler.butterfly_to_baseconv` on the layout ``R = 2^r`` rows per block,
    ``tw = d' = 2^j``, blocks ``B0, B1, B2`` ``S = R + R/2`` rows apart, ``N' = 3S``, cyclic.

    ``A``: ``h = e_0 + e_S + e_{2S}`` (every block receives ``B0``), ``b1`` on ``B0``: ``d1[p]`` at a lower
    row (bit e of the row 0), ``d4[p − s]`` at an upper one; on ``B1``: ``d2[p − s]`` at upper rows; on
    ``B2``: ``d3[p]`` at lower rows (``p`` = the cell's position ``row·tw + channel``). ``B``:
    ``h = e_0 + e_{N' − S − t} + e_{S + t}``, ``b1 = 1`` on ``B0``'s track. Spec: ``out[p] = d1·x[p] +
    d2·x[p + s]``, ``out[p + s] = d3·x[p] + d4·x[p + s]`` on ``B0``, every other cell 0; input on ``B0``.
    The families are indexed by the cell ``(row, channel)`` of the pair's lower position ``p``. The
    track width ``tw`` is a free integer here (the sequence axis does not depend on it being a power
    of two), which keeps the channel arithmetic linear."""
    r, tw, e = var("r"), var("tw"), var("e")
    R, S, NN = _layout(r)
    t = pow2(e)
    low = ~bit(i, e)
    in_b0 = lt(i, R)
    in_b1 = ge(i, S) & lt(i, S + R)
    in_b2 = ge(i, 2 * S) & lt(i, 2 * S + R)
    rho1, rho2 = i - S, i - 2 * S
    b1 = where(in_b0, where(low, fam("d1", i, q), fam("d4", i - t, q)),
               where(in_b1, where(bit(rho1, e), fam("d2", rho1 - t, q)),
                     where(in_b2, where(~bit(rho2, e), fam("d3", rho2, q)))))
    A = PLayer(b1=b1, h=(tap(0), tap(S), tap(2 * S)), mode="cyclic")
    B = PLayer(b1=where(in_b0, 1), h=(tap(0), tap(NN - S - t), tap(S + t)), mode="cyclic")
    spec = where(in_b0, where(low, fam("d1", i, q) * inp(i, q) + fam("d2", i, q) * inp(i + t, q),
                              fam("d3", i - t, q) * inp(i - t, q) + fam("d4", i - t, q) * inp(i, q)))
    fams = {k: (R, tw) for k in ("d1", "d2", "d3", "d4")}
    ps = (Param("r", 1, MAX_LOG_N - 2), Param("tw", 1, MAX_D), Param("e", 0, MAX_LOG_N))
    return Gadget("butterfly_sequence", ps, NN, tw, (A, B), spec, where=lt(e, r), entry=in_b0,
                  families=fams, cases=(in_b0 & low, in_b0 & ~low))


def butterfly_channel() -> Gadget:
    """Lemma H.16, channel axis (stride ``s = 2^e < tw``): layers ``A`` and ``C`` of
    :mod:`symverify.compiler.butterfly_to_baseconv` (layout as :func:`butterfly_sequence`).

    ``A``: ``h = e_0 + e_S``; ``b1`` on ``B0``: ``d1[p]`` at a lower channel (bit e 0), ``d2[p − s]`` at an
    upper one; on ``B1``: ``d3[p]`` lower, ``d4[p − s]`` upper. ``C``: ``W = I + P_s`` (``P_s``: channel
    ``c ↦ c XOR s``), ``h = b1 = 0``, ``b2`` = 1 on ``B0``'s lower and ``B1``'s upper cells. Spec (left
    pending as ``B0 + B1``): ``B0`` lower cell ``p``: ``d1·x[p] + d2·x[p + s]``; ``B1`` upper cell
    ``p + s``: ``d3·x[p] + d4·x[p + s]``; every other cell 0."""
    r, j, e = var("r"), var("j"), var("e")
    R, S, NN = _layout(r)
    tw = pow2(j)
    s = pow2(e)
    low = ~bit(q, e)
    in_b0 = lt(i, R)
    in_b1 = ge(i, S) & lt(i, S + R)
    rho1 = i - S
    b1 = where(in_b0, where(low, fam("d1", i, q), fam("d2", i, q - s)),
               where(in_b1, where(low, fam("d3", rho1, q), fam("d4", rho1, q - s))))
    A = PLayer(b1=b1, h=(tap(0), tap(S)), mode="cyclic")
    C = PLayer(W=(tap(q), tap(q ^ s)), b2=where(in_b0 & low, 1, where(in_b1 & ~low, 1)), mode="cyclic")
    spec = where(in_b0 & low, fam("d1", i, q) * inp(i, q) + fam("d2", i, q) * inp(i, q + s),
                 where(in_b1 & ~low, fam("d3", rho1, q - s) * inp(rho1, q - s) + fam("d4", rho1, q - s) * inp(rho1, q)))
    fams = {k: (R, tw) for k in ("d1", "d2", "d3", "d4")}
    return Gadget("butterfly_channel", _butterfly_params(), NN, tw, (A, C), spec, where=lt(e, j), entry=in_b0,
                  families=fams)


def _flag(name: str) -> IExpr:
    return var(name)


def _a_taps(S: IExpr, track: Cond) -> tuple[Tap, ...]:
    """The taps of layer ``A`` (:func:`~symverify.compiler.butterfly_to_baseconv.block_taps`) as the
    compiler chooses them: ``k = ((t − b) mod 3)·S`` for every source block ``b`` (``B0``, and ``B1`` when
    ``pend = 1``) and target block ``t`` (``B0``, ``B1`` when ``x1 = 1``, ``B2`` when ``x2 = 1``), on the
    track channels."""
    pend, x1, x2 = var("pend"), _flag("x1"), _flag("x2")
    return (tap(0, 1, track), tap(S, 1, track & (eq(x1, 1) | eq(pend, 1) & eq(x2, 1))),
            tap(2 * S, 1, track & (eq(x2, 1) | eq(pend, 1))))


def _pending_value(S: IExpr) -> Callable[[IExpr, IExpr], Value]:
    """``T(a, c) = B0[a, c] + pend·B1[a, c]``: the value at track cell ``(a, c)`` (a pending state is the sum)."""
    pend = var("pend")
    return lambda a, c: inp(a, c) + where(eq(pend, 1), inp(S + a, c))


def _flags() -> tuple[Param, ...]:
    return (Param("pend", 0, 1), Param("x1", 0, 1), Param("x2", 0, 1))


def factor_sequence() -> Gadget:
    """Lemma H.16, sequence axis, in every form the compiler emits
    (:func:`~symverify.compiler.butterfly_to_baseconv.factor_layers`): on a clean or **pending** input
    (``pend``: the input is ``T = B0 + B1``), **pruned** (free predicates: ``SUP`` = the track cells whose
    position may be nonzero, ``LIVE`` = the output cells kept) and with ``d`` channels, ``tw ≤ d < 2·tw``
    (the **off-track** channels ``c ≥ tw`` of a ``d`` not a power of two stay 0). Layout as
    :func:`butterfly_sequence` (``R = 2^r``, ``S = R + R/2``, ``N' = 3S``, stride ``t·tw``, ``t = 2^e``).

    ``A`` = :func:`_a_taps` (``x1``/``x2``: whether a coefficient lands in ``B1``/``B2``; ``assume`` ties
    them to ``SUP``), ``b1`` as :func:`butterfly_sequence` but only at the cells of positions in
    ``SUP``; ``B`` as :func:`butterfly_sequence` on the track channels, ``b1`` = 1 on ``LIVE``. Spec on
    ``B0``'s track: ``LIVE``·(``d1·T'[p] + d2·T'[p + s]``) at a lower row, ``LIVE``·(``d3·T'[p − s] +
    d4·T'[p]``) at an upper one, ``T' = 1_SUP ⊙ T``: the factor applied to the input restricted to its
    support (the compiler's state tracking shows ``T = T'``), masked to the live cells; 0 elsewhere."""
    r, tw, e = var("r"), var("tw"), var("e")
    R, S, NN = _layout(r)
    t = pow2(e)
    track = lt(q, tw)
    low = ~bit(i, e)
    in_b0 = lt(i, R) & track
    in_b1 = ge(i, S) & lt(i, S + R) & track
    in_b2 = ge(i, 2 * S) & lt(i, 2 * S + R) & track
    rho1, rho2 = i - S, i - 2 * S

    def sup(a: IExpr, c: IExpr) -> Cond:
        return pred("SUP", a, c)

    b1 = where(in_b0 & sup(i, q), where(low, fam("d1", i, q), fam("d4", i - t, q)),
               where(in_b1 & sup(rho1, q), where(bit(rho1, e), fam("d2", rho1 - t, q)),
                     where(in_b2 & sup(rho2, q), where(~bit(rho2, e), fam("d3", rho2, q)))))
    A = PLayer(b1=b1, h=_a_taps(S, track), mode="cyclic")
    B = PLayer(b1=where(in_b0 & pred("LIVE", i, q), 1), h=(tap(0, 1, track), tap(NN - S - t, 1, track), tap(S + t, 1, track)),
               mode="cyclic")
    T = _pending_value(S)

    def tt(a: IExpr) -> object:
        return where(sup(a, q), T(a, q))

    spec = where(in_b0 & pred("LIVE", i, q),
                 where(low, fam("d1", i, q) * tt(i) + fam("d2", i, q) * tt(i + t),
                       fam("d3", i - t, q) * tt(i - t) + fam("d4", i - t, q) * tt(i)))
    on_track = lt(i, R) & track
    assume = all_of(~sup(i, q) | on_track, ~pred("LIVE", i, q) | on_track,
                    ~(sup(i, q) & bit(i, e)) | eq(var("x1"), 1), ~(sup(i, q) & ~bit(i, e)) | eq(var("x2"), 1))
    entry = on_track | eq(var("pend"), 1) & in_b1
    fams = {k: (R, tw) for k in ("d1", "d2", "d3", "d4")}
    ps = (Param("r", 1, MAX_LOG_N - 2), Param("tw", 1, MAX_D // 2), Param("d", 1, MAX_D), Param("e", 0, MAX_LOG_N), *_flags())
    return Gadget("factor_sequence", ps, NN, D, (A, B), spec, where=all_of(lt(e, r), le_(tw, D), lt(D, 2 * tw)),
                  entry=entry, assume=assume, families=fams, cases=(in_b0 & low, in_b0 & ~low))


def factor_channel() -> Gadget:
    """Lemma H.16, channel axis, in every form the compiler emits (as :func:`factor_sequence`: pending,
    pruned by ``SUP``/``LIVE``, off-track channels; ``R = 2^r ≥ 1`` track rows, ``tw = 2^j``, stride
    ``s = 2^e < tw``). ``A`` = :func:`_a_taps` (``x1``: a coefficient lands in ``B1``), ``b1`` as
    :func:`butterfly_channel` at the cells of positions in ``SUP``; ``C``: ``W = I + P_s`` on the track,
    ``b2`` = 1 on ``B0``'s lower and ``B1``'s upper cells that are ``LIVE``. Spec (pending ``B0 + B1``):
    ``B0`` lower cell ``p``: ``LIVE``·(``d1·T'[p] + d2·T'[p + s]``); ``B1`` upper cell ``p + s``:
    ``LIVE``·(``d3·T'[p] + d4·T'[p + s]``), ``T' = 1_SUP ⊙ T``; 0 elsewhere."""
    r, j, e = var("r"), var("j"), var("e")
    R, S, NN = _layout(r)
    tw = pow2(j)
    s = pow2(e)
    track = lt(q, tw)
    low = ~bit(q, e)
    in_b0 = lt(i, R) & track
    in_b1 = ge(i, S) & lt(i, S + R) & track
    rho1 = i - S

    def sup(a: IExpr, c: IExpr) -> Cond:
        return pred("SUP", a, c)

    b1 = where(in_b0 & sup(i, q), where(low, fam("d1", i, q), fam("d2", i, q - s)),
               where(in_b1 & sup(rho1, q), where(low, fam("d3", rho1, q), fam("d4", rho1, q - s))))
    A = PLayer(b1=b1, h=_a_taps(S, track), mode="cyclic")
    live = pred("LIVE", i, q)
    C = PLayer(W=(tap(q, 1, track), tap(q ^ s, 1, track)), b2=where(live & (in_b0 & low | in_b1 & ~low), 1), mode="cyclic")
    T = _pending_value(S)

    def tt(a: IExpr, c: IExpr) -> object:
        return where(sup(a, c), T(a, c))

    spec = where(live & in_b0 & low, fam("d1", i, q) * tt(i, q) + fam("d2", i, q) * tt(i, q + s),
                 where(live & in_b1 & ~low, fam("d3", rho1, q - s) * tt(rho1, q - s) + fam("d4", rho1, q - s) * tt(rho1, q)))
    on_track = lt(i, R) & track
    assume = all_of(~sup(i, q) | on_track, ~live | in_b0 | in_b1, ~sup(i, q) | eq(var("x1"), 1))
    entry = on_track | eq(var("pend"), 1) & in_b1
    fams = {k: (R, tw) for k in ("d1", "d2", "d3", "d4")}
    ps = (Param("r", 0, MAX_LOG_N - 2), Param("j", 0, MAX_LOG_D - 1), Param("d", 1, MAX_D), Param("e", 0, MAX_LOG_D), *_flags())
    return Gadget("factor_channel", ps, NN, D, (A, C), spec, where=all_of(lt(e, j), le_(tw, D), lt(D, 2 * tw), eq(var("x2"), 0)),
                  entry=entry, assume=assume, families=fams)


def block_scale() -> Gadget:
    """Layer ``A`` writing ``B0`` alone (the compiler's layer ``A`` with
    every coefficient in ``B0``): ``y = KEEP ⊙ g ⊙ (T + C)`` on ``B0``'s track, 0 elsewhere, ``T = B0 +
    pend·B1`` (a pending input is summed first). One cyclic conv layer: ``h = e_0 (+ e_{2S}``
    when ``pend = 1``, reading ``B1`` into ``B0``) on the track channels, ``b1 = g`` on the cells where the
    free predicate ``KEEP`` holds (on ``B0``'s track), ``b2 = C`` on ``B0``'s track, ``W = 0``. It is the
    **diagonal factor** of Lemma H.16 (``g`` = the diagonal, ``C = 0``, ``KEEP`` = the support:
    ``y = diag(g)·(1_SUP ⊙ T)``) and the **closing sum** ``B0 + B1 + C → B0`` (``g = 1``, ``C`` the offset,
    ``KEEP`` = the live cells, :func:`~symverify.compiler.butterfly_to_baseconv.sum_layer`). Layout as
    :func:`mul_stage` (``R`` track rows, ``S = R + ⌊R/2⌋``, ``N' = 3S``, ``tw ≤ d < 2·tw``); ``R`` and ``tw``
    are free integers (every ``R ≥ 1``, powers of two included), so the arithmetic is linear."""
    R, tw, pend = var("R"), var("tw"), var("pend")
    S = R + (R >> 1)
    track = lt(q, tw)
    on_track = lt(i, R) & track
    keep = pred("KEEP", i, q)
    layer = PLayer(b1=where(on_track & keep, fam("g", i, q)), h=(tap(0, 1, track), tap(2 * S, 1, track & eq(pend, 1))),
                   b2=where(on_track, fam("C", i, q)), mode="cyclic")
    spec = where(on_track & keep, fam("g", i, q) * (inp(i, q) + where(eq(pend, 1), inp(S + i, q)) + fam("C", i, q)))
    entry = on_track | eq(pend, 1) & ge(i, S) & lt(i, S + R) & track
    ps = (Param("R", 1, 1 << (MAX_LOG_N - 2)), Param("tw", 1, MAX_D // 2), Param("d", 1, MAX_D), Param("pend", 0, 1))
    return Gadget("block_scale", ps, 3 * S, D, (layer,), spec, where=all_of(le_(tw, D), lt(D, 2 * tw)), entry=entry,
                  assume=~keep | on_track, families={"g": (R, tw), "C": (R, tw)})


def product_pair() -> Gadget:
    """Theorem H.21's multiplicative pair: ``k`` products ``v1[t]·v2[t]`` with constants, from ``v1`` on rows
    ``[a, a + k)`` and ``v2`` on rows ``[b, b + k)`` (``b = a + off``) of every channel (any placement with
    ``v2`` below ``v1``): one causal layer ``W = I`` with ``b1 = c1`` (``v1 + c1``), ``h = e_off``,
    ``b2 = c2`` (``v2 + c2``), gated to the rows ``[b, b + k)``: ``y[b + t] = (v1[t] + c1)·(v2[t] + c2)``,
    every other row 0 (the product of Proposition H.10's two branches)."""
    a, off, k = var("a"), var("off"), var("k")
    b = a + off
    rows = ge(i, b) & lt(i, b + k)
    # rows outside [b, b + k) end 0: there the projection u[i] (+ 0) or the convolution u[i − off]
    # (+ 0) reads a zero row (off ≥ k, the input is 0 outside the two blocks)
    layer = PLayer(W=(tap(q),), b1=where(rows, fam("c1", q)), h=(tap(off),), b2=where(rows, fam("c2", q)), mode="causal")
    spec = where(rows, (inp(i, q) + fam("c1", q)) * (inp(i - off, q) + fam("c2", q)))  # (v2 + c1)·(v1 + c2)
    ps = _sizes(Param("a", 0, MAX_N), Param("off", 1, MAX_N), Param("k", 1, MAX_N))
    entry = ge(i, a) & lt(i, a + k) | ge(i, b) & lt(i, b + k)
    return Gadget("product_pair", ps, N, D, (layer,), spec, where=all_of(ge(N, b + k), ge(off, k)),
                  care=TRUE, entry=entry, families={"c1": (D,), "c2": (D,)})


def mul_stage() -> Gadget:
    """Theorem H.21's multiplicative stage as the compiler builds it (``M1``, ``M2`` of
    :func:`symverify.compiler.circuit_to_baseconv.mul_layers`), for **every placement**: the free
    predicates ``V1``, ``V3`` say which track cells ``(row, channel)`` of ``B0`` hold ``v1`` and ``v3``;
    ``v2`` sits ``k`` rows below ``v1`` (``V2(ρ, c) = V1(ρ − k, c)``); the three are disjoint and on the
    track, ``v2`` inside it (``assume``). Layout as :func:`butterfly_sequence` (``R`` rows per block, ``tw``
    track channels, ``S = R + ⌊R/2⌋``, ``N' = 3S``) with ``d`` channels, ``tw ≤ d < 2·tw``; ``pend = 1`` when the input is a
    pending sum ``B0 + B1``; ``C`` the linear stage's constants. ``R`` and ``tw`` are free integers here
    (the statement holds for every ``R ≥ 2``, powers of two included), which keeps the arithmetic linear.

    ``M1`` (the closing conv layer ``A``): ``h = e_0 + e_S (+ e_{2S})`` on the track channels, ``b1`` =
    1 on ``B0``'s ``v1``, ``v3`` cells and ``B1``'s ``v2`` cells, ``b2 = C`` (on ``B1`` at ``v2``
    positions, on ``B0`` elsewhere). ``M2 = (u·I) ⊙ (h ⊛ u + mask(v3))`` with ``h = e_{N' − S − k}``.
    Spec on ``B0``: ``(x1 + C)·(x2 + C')`` at a ``v1`` cell (``x2`` the value ``k`` rows below),
    ``x3 + C`` at a ``v3`` cell, 0 on every other cell of the state."""
    R, tw, k, pend = var("R"), var("tw"), var("k"), var("pend")
    S = R + (R >> 1)
    NN = 3 * S
    track = lt(q, tw)
    in_b0 = lt(i, R) & track
    rho1 = i - S
    in_b1 = ge(i, S) & lt(i, S + R) & track

    def v1(a: IExpr, c: IExpr) -> Cond:
        return pred("V1", a, c)

    def v3(a: IExpr, c: IExpr) -> Cond:
        return pred("V3", a, c)

    def v2(a: IExpr, c: IExpr) -> Cond:
        return ge(a, k) & pred("V1", a - k, c)

    keep = where(in_b0 & (v1(i, q) | v3(i, q)), ONE, where(in_b1 & v2(rho1, q), ONE))
    const = where(in_b0 & ~v2(i, q), fam("C", i, q), where(in_b1 & v2(rho1, q), fam("C", rho1, q)))
    M1 = PLayer(b1=keep, b2=const, h=(tap(0, 1, track), tap(S, 1, track), tap(2 * S, 1, track & eq(pend, 1))), mode="cyclic")
    M2 = PLayer(W=(tap(q, 1, track),), h=(tap(NN - S - k, 1, track),), b2=where(in_b0 & v3(i, q), ONE), mode="cyclic")

    def val(a: IExpr) -> object:
        return inp(a, q) + where(eq(pend, 1), inp(S + a, q))

    spec = where(in_b0 & v1(i, q), (val(i) + fam("C", i, q)) * (val(i + k) + fam("C", i + k, q)),
                 where(in_b0 & v3(i, q), val(i) + fam("C", i, q)))
    occupied = v1(i, q) | v3(i, q) | v2(i, q)
    entry = (lt(i, R) & track & occupied) | (eq(pend, 1) & in_b1 & (v1(rho1, q) | v3(rho1, q) | v2(rho1, q)))
    on_track = lt(i, R) & track
    assume = all_of(
        ~(v1(i, q) | v3(i, q)) | on_track,
        ~v1(i, q) | lt(i + k, R),
        ~(v1(i, q) & v3(i, q)),
        ~(v3(i, q) & v2(i, q)),
        ~(v1(i, q) & v2(i, q)),
    )
    ps = (Param("R", 2, 1 << (MAX_LOG_N - 2)), Param("tw", 1, MAX_D // 2), Param("d", 1, MAX_D), Param("k", 1, MAX_N),
          Param("pend", 0, 1))
    return Gadget("mul_stage", ps, NN, D, (M1, M2), spec, where=all_of(le_(tw, D), lt(D, 2 * tw), le_(k, R >> 1)),
                  entry=entry, assume=assume, families={"C": (R, tw)})


def _move_params() -> tuple[Param, ...]:
    return (Param("N", 1, MAX_N), Param("d", 1, MAX_D), Param("n", 1, MAX_N // 2), Param("tw", 1, MAX_D))


def _move_where() -> Cond:
    tw = var("tw")
    return all_of(ge(N, 2 * var("n")), le_(tw, D), lt(D, 2 * tw))


def gather() -> Gadget:
    """The gather layers for ``d`` not a power of two, exactly as the compiler emits them
    (:func:`~symverify.compiler.butterfly_to_baseconv.gather_layers`), for **every set of occupied
    input cells** (the free predicate ``IN``, on rows ``< n``): input cell ``(i, c)`` ends at its track
    position, ``(i, c)`` for ``c < tw`` and ``(n + i, c − tw)`` for ``c ≥ tw``
    (:func:`~symverify.compiler.layout.track_position`).

    Layer 1 (conv, cyclic): ``h = e_0`` on channels ``c < tw``, ``e_n`` on ``c ≥ tw``; ``b1`` = 1 on the
    moved cells (``IN(i, c)`` for ``c < tw``, ``IN(i − n, c)`` at rows ``i ≥ n`` for ``c ≥ tw``); ``W = b2 = 0``.
    Layer 2 (mix): ``u·W`` with ``W[c, c mod tw] = 1``, ``b2`` = 1 on the track cells of the occupied
    inputs, ``h = b1 = 0``. Spec: cell ``(i, c)``, ``c < tw``: ``u[i, c]`` where ``IN(i, c)``,
    ``u[i − n, c + tw]`` where ``i ≥ n`` and ``IN(i − n, c + tw)``; every other cell 0, **for every
    input state**: a cell outside ``IN`` is not moved, whatever it holds (so the compiler passes only
    the input cells the circuit reads and drops the others). Sizes: ``tw ≤ d < 2·tw`` (``tw`` a free integer here: the statement holds for
    every ``tw``, powers of two included, which keeps the arithmetic linear), ``N' ≥ 2n``."""
    n, tw = var("n"), var("tw")
    lo = lt(q, tw)
    up = q + tw

    def occ(a: IExpr, c: IExpr) -> Cond:
        return pred("IN", a, c)

    moved = where(lo & occ(i, q), 1, where(~lo & ge(i, n) & occ(i - n, q), 1))
    l1 = PLayer(b1=moved, h=(tap(0, 1, lo), tap(n, 1, ~lo)), mode="cyclic")
    folded = ge(i, n) & lt(up, D) & occ(i - n, up)
    l2 = PLayer(W=(tap(q, 1, lo), tap(up, 1, lo & lt(up, D))), b2=where(lo & (occ(i, q) | folded), 1), mode="cyclic")
    spec = where(lo, where(occ(i, q), inp(i, q), where(folded, inp(i - n, up))))
    return Gadget("gather", _move_params(), N, D, (l1, l2), spec, where=_move_where(), assume=~occ(i, q) | lt(i, n))


def scatter() -> Gadget:
    """The scatter layers (the inverse of :func:`gather`) exactly as the compiler emits them
    (:func:`~symverify.compiler.butterfly_to_baseconv.scatter_layers`), for **every set of output
    cells** (the free predicate ``OUT``, on rows ``< n``): output cell ``(i, c)`` receives the value at its
    track position, ``(i, c)`` for ``c < tw`` and ``(n + i, c − tw)`` for ``c ≥ tw``.

    Layer 1 (mix): ``u·W`` with ``W[c, c] = 1`` (``c < tw``), ``W[c − tw, c] = 1`` (``c ≥ tw``); ``b2`` = 1 at
    ``(i, c)`` for ``OUT(i, c)``, ``c < tw``, and at ``(n + i, c)`` for ``OUT(i, c)``, ``c ≥ tw``. Layer 2 (conv,
    cyclic): ``h = e_0`` on ``c < tw``, ``e_{N' − n}`` (up ``n`` rows) on ``c ≥ tw``, ``b1`` = 1 on the output
    cells. Spec: ``u[i, c]`` (``c < tw``) or ``u[n + i, c − tw]`` (``c ≥ tw``) where ``OUT(i, c)``, every
    other cell 0 — for every input state (nothing needs to be 0 off the outputs). Sizes as :func:`gather`."""
    n, tw = var("n"), var("tw")
    lo = lt(q, tw)

    def out(a: IExpr, c: IExpr) -> Cond:
        return pred("OUT", a, c)

    l1 = PLayer(W=(tap(q, 1, lo), tap(q - tw, 1, ~lo)),
                b2=where(lo & out(i, q), 1, where(~lo & ge(i, n) & out(i - n, q), 1)), mode="cyclic")
    l2 = PLayer(b1=where(out(i, q), 1), h=(tap(0, 1, lo), tap(N - n, 1, ~lo)), mode="cyclic")
    spec = where(out(i, q), where(lo, inp(i, q), inp(n + i, q - tw)))
    return Gadget("scatter", _move_params(), N, D, (l1, l2), spec, where=_move_where(), assume=~out(i, q) | lt(i, n))


def le_(a: IExpr, b: IExpr) -> Cond:
    return ge(b, a)


def user_cyclic_shift(off_by_one: bool = False) -> Gadget:
    """docs/forall.md's user example: a cyclic shift down by ``s`` rows, ``h = e_s`` (``e_{s+1}`` with
    ``off_by_one``)."""
    s = var("s")
    lag = (s + 1) % N if off_by_one else s
    return Gadget("user_cyclic_shift" + ("_off_by_one" if off_by_one else ""), _sizes(Param("s", 0, MAX_N - 1)), N, D,
                  (PLayer(b1=ONE, h=(tap(lag),), mode="cyclic"),), inp((i + N - s) % N, q), where=lt(s, N))


PRIMITIVES = (shift_down, shift_up, cyclic_shift, running_add, mask, gate, constant, move_rows, move_cols)
ALL = (*PRIMITIVES, remember_rows, remember_rows_two, remember_channels, butterfly_sequence, butterfly_channel, product_pair, mul_stage, gather, scatter, factor_sequence,
       factor_channel, block_scale)

_ = (eq, TRUE)

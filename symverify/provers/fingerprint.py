"""Canonical SHA-256 fingerprints of circuits, models and kaleidoscopes (the Fiat–Shamir input).

The randomized verifier derives its trial points from a hash of both sides
(:func:`symverify.provers.randomized.trial_rng`); the hash must be collision resistant on the
*full* content, so every weight, size and mode is fed. Each encoding is type-tagged and
length-prefixed, so it determines the object: two objects with the same encoding are equal, and
finding two different objects with the same digest means finding a SHA-256 collision.

:func:`feed` is the generic encoding (dataclasses field by field). Circuits, models and
kaleidoscopes have flat encodings that pack their integers into int64 arrays and hash them in a
few large updates: a compiled model of 10^3 layers and 2·10^5 rectangles is fingerprinted in a
fraction of a second instead of one recursive call per number. Values that do not fit in int64
(or symbolic weights) fall back to :func:`feed`, under a different tag.
"""

from __future__ import annotations

import dataclasses
import hashlib
from array import array
from collections.abc import Callable, Sequence
from enum import Enum
from fractions import Fraction
from typing import Any

from symverify.errors import ProverError
from symverify.ir.baseconv import Mode, Model
from symverify.ir.butterfly import Kaleidoscope
from symverify.ir.circuit import Circuit
from symverify.ir.grid import Grid
from symverify.ir.memo import IdentityMemo
from symverify.semantics.straightline import program

__all__ = ["feed", "fingerprint", "feed_circuit", "feed_model", "feed_kaleidoscope"]


def feed(h: Any, x: Any) -> None:
    """Stream a canonical, type-tagged, length-prefixed encoding of ``x`` into the hash ``h``:
    dataclasses (circuits, gates, models, layers, grids, butterflies, kaleidoscopes) field by
    field, exact integers and rationals as two's-complement bytes (no decimal conversion, so no
    size limit), symbols by their canonical terms."""
    if isinstance(x, bool) or x is None:
        h.update(b"b" + repr(x).encode())
    elif isinstance(x, int):
        h.update(b"i" + x.to_bytes((x.bit_length() + 8) // 8 or 1, "big", signed=True) + b";")
    elif isinstance(x, Fraction):
        h.update(b"q")
        feed(h, x.numerator)
        feed(h, x.denominator)
    elif isinstance(x, Enum):
        h.update(b"e")
        feed(h, str(x.value))
    elif isinstance(x, str):
        data = x.encode("utf-8", "surrogatepass")
        h.update(b"s" + len(data).to_bytes(8, "big") + data)
    elif isinstance(x, (tuple, list)):
        h.update(b"(" + len(x).to_bytes(8, "big"))
        for item in x:
            feed(h, item)
        h.update(b")")
    elif dataclasses.is_dataclass(x):
        h.update(b"d")
        feed(h, type(x).__name__)
        for f in dataclasses.fields(x):
            if f.compare:
                feed(h, getattr(x, f.name))
    else:
        raise ProverError(f"fingerprint: no canonical encoding for {type(x).__name__}")


_RECENT: IdentityMemo[bytes] = IdentityMemo(4)
"""The digests of the last few ``(object, kind)`` pairs computed, found by identity. The IR is
immutable, and holding the object keeps its ``id`` from being reused, so a hit is the digest of
that very content."""


def fingerprint(kind: str, obj: Any) -> bytes:
    """A SHA-256 digest of ``kind`` and ``obj``'s canonical encoding: the flat one for a circuit,
    model or kaleidoscope when its numbers fit (see the module docstring), else :func:`feed`.
    The digests of the last few objects are kept (the pre-check and a later randomized run of
    one ``verify`` hash the same sides)."""
    hit = _RECENT.get(obj, kind)
    if hit is not None:
        return hit
    h = hashlib.sha256()
    feed(h, kind)
    flat = _FLAT.get(type(obj))
    if flat is None or not flat(h, obj):
        feed(h, obj)
    digest = h.digest()
    if flat is not None:
        _RECENT.put(obj, digest, kind)
    return digest


def _int64(values: Sequence[int]) -> bytes | None:
    """``values`` as a length-prefixed int64 array, or None when one does not fit."""
    try:
        data = array("q", values)
    except OverflowError:
        return None
    return len(values).to_bytes(8, "big") + data.tobytes()


def _feed_ints(h: Any, values: Sequence[int]) -> bool:
    data = _int64(values)
    if data is None:
        return False
    h.update(data)
    return True


def _feed_scalars(h: Any, values: Sequence[Any]) -> None:
    """Exact scalars: tag ``Q`` and two int64 arrays (numerators; denominators, 0 marking an
    int) when every value is an int or Fraction that fits, else tag ``V`` and :func:`feed` each."""
    if all(type(v) is int or type(v) is Fraction for v in values):
        nums = _int64([v.numerator for v in values])
        dens = _int64([0 if type(v) is int else v.denominator for v in values])
        if nums is not None and dens is not None:
            h.update(b"Q" + nums + dens)
            return
    h.update(b"V" + len(values).to_bytes(8, "big"))
    for v in values:
        feed(h, v)


def feed_circuit(h: Any, c: Circuit) -> bool:
    """Stream a circuit in its flat form (:class:`~symverify.semantics.straightline.Program`):
    ``n``, ``d``, the op bytes, the node ids as int64, every coefficient's index into the
    distinct coefficients, those coefficients (each by :func:`feed`), the outputs; every part
    tagged or length-prefixed, so the encoding determines the circuit. False (nothing fed) when a
    node id does not fit in int64: the caller then feeds the circuit field by field."""
    prog = program(c)
    if prog.args is None:
        return False
    h.update(b"C")
    feed(h, c.n)
    feed(h, c.d)
    for part in (prog.ops, prog.args, prog.coeff_index):
        h.update(len(part).to_bytes(8, "big"))
        h.update(part)
    feed(h, prog.scalars)
    feed(h, c.outputs)
    return True


_MODE_BYTE = {Mode.CAUSAL: b"c", Mode.CYCLIC: b"y"}


def feed_model(h: Any, m: Model) -> bool:
    """Stream a model flat: tag ``M``; ``n, d, N', d'``, the layer count and one mode byte per
    layer; per grid (``W, b1, h, b2`` of each layer in order) its rows, columns and rectangle
    count; every rectangle's four bounds; then the fills followed by the rectangle values
    (:func:`_feed_scalars`). The counts fix where each part ends, so the encoding determines the
    model. False (nothing fed) when a size does not fit in int64."""
    grids: list[Grid] = [g for layer in m.layers for g in (layer.W, layer.b1, layer.h, layer.b2)]
    rects = [r for g in grids for r in g.rects]
    head = _int64([m.n, m.d, m.inner_n, m.inner_d, len(m.layers)])
    shapes = _int64([x for g in grids for x in (g.rows, g.cols, len(g.rects))])
    bounds = _int64([x for r in rects for x in (r[0], r[1], r[2], r[3])])
    if head is None or shapes is None or bounds is None:
        return False
    h.update(b"M" + head + b"".join(_MODE_BYTE[layer.mode] for layer in m.layers) + shapes + bounds)
    _feed_scalars(h, [g.fill for g in grids] + [r[4] for r in rects])
    return True


def feed_kaleidoscope(h: Any, k: Kaleidoscope) -> bool:
    """Stream a kaleidoscope flat: tag ``K``; ``n``, ``size``, the group count; per group its size
    and factor count; per factor its size, stride and the lengths of its four diagonals; then
    every diagonal entry in order (:func:`_feed_scalars`). False when a size does not fit in int64."""
    factors = [f for g in k.groups for f in g.factors]
    head = _int64([k.n, k.size, len(k.groups)] + [x for g in k.groups for x in (g.size, len(g.factors))])
    shapes = _int64([x for f in factors for x in (f.size, f.stride, len(f.d1), len(f.d2), len(f.d3), len(f.d4))])
    if head is None or shapes is None:
        return False
    h.update(b"K" + head + shapes)
    _feed_scalars(h, [x for f in factors for diag in (f.d1, f.d2, f.d3, f.d4) for x in diag])
    return True


_FLAT: dict[type, Callable[[Any, Any], bool]] = {Circuit: feed_circuit, Model: feed_model, Kaleidoscope: feed_kaleidoscope}
"""The flat encoding of each type that has one."""

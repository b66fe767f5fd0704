"""The decoder of the side encoding (:func:`symverify.kernel.provers.fingerprint.encode`), for the tests.

``decode(encode(x)) == x`` for every side ``x`` makes ``encode`` injective: two sides with one
encoding decode to one object, so they are equal, and the Fiat–Shamir points drawn from a
fingerprint belong to one side only. No method reads the decoder (its existence is the argument,
which the tests check on random circuits, models and kaleidoscopes, and on malformed and
non-canonical bytes), so it lives here, outside the trusted kernel.
"""

from __future__ import annotations

import sys
from array import array
from fractions import Fraction

from symverify.errors import IRError
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, Kaleidoscope
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Scalar, Sym
from symverify.kernel.provers.fingerprint import _ARITY, _MODE_BYTE, EncodingError, Side, _int64_rationals, encode

__all__ = ["decode"]

_BYTE_MODE = {v[0]: k for k, v in _MODE_BYTE.items()}
_OPS = (Op.CONST, Op.LIN, Op.MUL)
"""The op codes of the encoding, in order (``0`` const, ``1`` lin, ``2`` mul)."""


class _Reader:
    """Reads the productions of :mod:`symverify.kernel.provers.fingerprint`'s docstring from ``data``; every malformed or truncated part
    raises :class:`EncodingError` naming its offset."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = memoryview(data), 0

    def fail(self, what: str) -> EncodingError:
        return EncodingError(f"decode: {what} at byte {self.pos}")

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise self.fail(f"expected {n} more bytes, found {len(self.data) - self.pos}")
        out = bytes(self.data[self.pos : self.pos + n])
        self.pos += n
        return out

    def tag(self, allowed: bytes) -> int:
        t = self.take(1)[0]
        if t not in allowed:
            self.pos -= 1
            raise self.fail(f"expected a tag in {allowed!r}, found {bytes([t])!r}")
        return t

    def u64(self) -> int:
        return int.from_bytes(self.take(8), "big")

    def int_(self) -> int:
        self.tag(b"I")
        return self._int_body()

    def _int_body(self) -> int:
        n = self.u64()
        if n == 0:
            raise self.fail("an int of zero bytes")
        data = self.take(n)
        x = int.from_bytes(data, "big", signed=True)
        if len(data) != (x.bit_length() + 8) // 8:
            raise self.fail("an int not in its minimal length")
        return x

    def str_(self) -> str:
        self.tag(b"T")
        try:
            return self.take(self.u64()).decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            raise self.fail("a string that is not UTF-8") from None

    def bytes_(self) -> bytes:
        self.tag(b"B")
        return self.take(self.u64())

    def scalar(self) -> Scalar:
        t = self.tag(b"IFS")
        if t == ord("I"):
            return self._int_body()
        if t == ord("F"):
            num, den = self.int_(), self.int_()
            q = Fraction(num, den) if den >= 2 else None
            if q is None or (q.numerator, q.denominator) != (num, den):
                raise self.fail(f"a rational {num}/{den} not in lowest terms with denominator ≥ 2")
            return q
        terms = []
        for _ in range(self.u64()):
            mono = tuple((self.str_(), self.int_()) for _ in range(self.u64()))
            coeff = self.scalar()
            if isinstance(coeff, Sym):
                raise self.fail("a symbol coefficient that is itself a symbol")
            terms.append((mono, Fraction(coeff)))
        try:
            return Sym(tuple(terms))
        except IRError as e:
            raise self.fail(f"a symbol that is not canonical ({e})") from None

    def ints(self) -> list[int]:
        t, n = self.tag(b"NW"), self.u64()
        if t == ord("W"):
            values = [self.int_() for _ in range(n)]
            try:
                array("q", values)
            except OverflowError:
                return values
            raise self.fail("a wide int list whose values all fit in int64")
        a = array("q")
        a.frombytes(self.take(8 * n))
        if sys.byteorder == "big":
            a.byteswap()
        return a.tolist()

    def scalars(self) -> list[Scalar]:
        t, n = self.tag(b"AV"), self.u64()
        if t == ord("V"):
            values = [self.scalar() for _ in range(n)]
            if _int64_rationals(values) is not None:
                raise self.fail("a wide scalar list whose values all fit in int64")
            return values
        nums, dens = array("q"), array("q")
        nums.frombytes(self.take(8 * n))
        dens.frombytes(self.take(8 * n))
        if sys.byteorder == "big":
            nums.byteswap()
            dens.byteswap()
        out: list[Scalar] = []
        for a, b in zip(nums, dens):
            if b == 1:
                out.append(a)
                continue
            q = Fraction(a, b) if b >= 2 else None
            if q is None or (q.numerator, q.denominator) != (a, b):
                raise self.fail(f"a rational {a}/{b} not in lowest terms with denominator ≥ 1")
            out.append(q)
        return out

    def counted(self, values: list[int], count: int, what: str) -> list[int]:
        if len(values) != count:
            raise self.fail(f"{what}: expected {count} values, found {len(values)}")
        return values


def decode(data: bytes) -> Side:
    """The circuit, model or kaleidoscope whose :func:`encode` is ``data`` (the inverse of encode).

    Raises:
        EncodingError: ``data`` is not the encoding of any side (truncated, trailing bytes, a wrong
            tag or count, a value not in its canonical form, or an object its constructor refuses).
    """
    r = _Reader(data)
    kind = r.tag(b"CMK")
    obj: Side
    try:
        if kind == ord("C"):
            obj = _read_circuit(r)
        elif kind == ord("M"):
            obj = _read_model(r)
        else:
            obj = _read_kaleidoscope(r)
    except EncodingError:
        raise
    except IRError as e:  # ShapeError is an IRError: the bytes describe an object that cannot exist
        raise EncodingError(f"decode: the bytes describe an invalid {chr(kind)} object ({e})") from None
    if r.pos != len(r.data):
        raise r.fail(f"{len(r.data) - r.pos} trailing bytes after the object")
    if encode(obj) != bytes(data):
        raise EncodingError("decode: the bytes are not in the canonical form of the object they describe")
    return obj


def _read_circuit(r: _Reader) -> Circuit:
    n, d, ngates, nout = r.counted(r.ints(), 4, "circuit head")
    ops = r.bytes_()
    if len(ops) != ngates or any(b >= len(_OPS) for b in ops):
        raise r.fail(f"circuit ops: expected {ngates} op codes in 0..2")
    gate_ops = [_OPS[b] for b in ops]
    args = r.counted(r.ints(), sum(_ARITY[op][0] for op in gate_ops), "circuit node ids")
    cidx = r.counted(r.ints(), sum(_ARITY[op][1] for op in gate_ops), "circuit coefficient indices")
    scalars = r.scalars()
    if any(not 0 <= i < len(scalars) for i in cidx):
        raise r.fail("a coefficient index out of range")
    outputs = r.counted(r.ints(), nout, "circuit outputs")
    gates, a, c = [], 0, 0
    for op in gate_ops:
        na, nc = _ARITY[op]
        gates.append(Gate(op, tuple(args[a : a + na]), tuple(scalars[i] for i in cidx[c : c + nc])))
        a, c = a + na, c + nc
    return Circuit(n, d, tuple(gates), tuple(outputs))


def _read_model(r: _Reader) -> Model:
    n, d, inner_n, inner_d, nlayers = r.counted(r.ints(), 5, "model head")
    modes = r.bytes_()
    if len(modes) != nlayers or any(b not in _BYTE_MODE for b in modes):
        raise r.fail(f"model modes: expected {nlayers} mode bytes (c or y)")
    shapes = r.counted(r.ints(), 12 * nlayers, "model grid shapes")
    nrects = sum(shapes[2::3])
    bounds = r.counted(r.ints(), 4 * nrects, "model rectangle bounds")
    values = r.scalars()
    if len(values) != 4 * nlayers + nrects:
        raise r.fail(f"model values: expected {4 * nlayers + nrects}, found {len(values)}")
    grids, j = [], 0
    for g in range(4 * nlayers):
        rows, cols, k = shapes[3 * g : 3 * g + 3]
        rects = tuple((*bounds[4 * i : 4 * i + 4], values[4 * nlayers + i]) for i in range(j, j + k))
        grids.append(Grid(rows, cols, values[g], rects))  # type: ignore[arg-type]
        j += k
    layers = tuple(Layer(grids[4 * i], grids[4 * i + 1], grids[4 * i + 2], grids[4 * i + 3], _BYTE_MODE[modes[i]])
                   for i in range(nlayers))
    return Model(n, d, inner_n, inner_d, layers)


def _read_kaleidoscope(r: _Reader) -> Kaleidoscope:
    head = r.ints()
    if len(head) < 3 or len(head) != 3 + 2 * head[2]:
        raise r.fail("kaleidoscope head: expected n, size, #groups and a (size, #factors) pair per group")
    n, size, ngroups = head[:3]
    per_group = head[4::2]
    shapes = r.counted(r.ints(), 6 * sum(per_group), "kaleidoscope factor shapes")
    values = r.scalars()
    if len(values) != sum(shapes[2 + 6 * f + j] for f in range(sum(per_group)) for j in range(4)):
        raise r.fail("kaleidoscope diagonals: the entry count does not match the factor shapes")
    factors, at = [], 0
    for f in range(sum(per_group)):
        fsize, stride, *lens = shapes[6 * f : 6 * f + 6]
        diags = []
        for ln in lens:
            diags.append(tuple(values[at : at + ln]))
            at += ln
        factors.append(ButterflyFactor(fsize, stride, *diags))
    groups, f0 = [], 0
    for g in range(ngroups):
        groups.append(BBStar(head[3 + 2 * g], tuple(factors[f0 : f0 + per_group[g]])))
        f0 += per_group[g]
    return Kaleidoscope(n, size, tuple(groups))

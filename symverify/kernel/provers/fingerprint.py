"""An injective encoding of every side, and its SHA-256 fingerprint (the Fiat–Shamir input).

The randomized verifier derives its trial primes and points from a hash of both sides
(:mod:`symverify.kernel.provers.challenge`). That is sound only if the hash input determines the side:
two different sides with one encoding would share their points, and an adversary who can choose
among many sides behind one encoding can pick the one whose difference vanishes there. So the
encoding here is *injective*: it has a left inverse, the decoder of the tests
(``tests/fingerprint_decode.py``), which rebuilds the side from the bytes, and
``decode(encode(x)) == x`` for every side ``x`` (the tests check this on random objects of every
kind), so ``encode(x) == encode(y)`` implies ``x == y``. The decoder is no part of a verdict (no
method reads it: its existence is the argument), so it lives with the tests, outside the kernel.

**The format.** A prefix-free code built from a handful of productions; every one starts with a
one-byte tag, and every variable-length part is preceded by its length, so a reader always knows
where a part ends (no terminators, no escapes)::

    int       I  len:u64  two's-complement bytes (minimal length, big-endian)
    rational  F  int(numerator)  int(denominator ≥ 2)            (an integral value is an int)
    symbol    S  u64(#terms)  per term: u64(#factors) (str name, int exponent)*  rational-or-int coeff
    str       T  len:u64  UTF-8 bytes
    ints      N  count:u64  count × int64 little-endian           (when every value fits in int64)
              W  count:u64  count × int                            (otherwise)
    scalars   A  count:u64  count × int64 numerators, count × int64 denominators (1 for an int)
                                                                   (every value an int or Fraction that fits)
              V  count:u64  count × (int | rational | symbol)      (otherwise)
    bytes     B  len:u64  raw bytes

and one production per side kind (the sizes in the ``ints`` parts fix how many items follow)::

    circuit       C  ints[n, d, #gates, #outputs]  bytes(op codes: 0 const, 1 lin, 2 mul)
                     ints(node ids, gate by gate)  ints(coefficient indices)  scalars(distinct coefficients)
                     ints(outputs)
    model         M  ints[n, d, N', d', L]  bytes(one mode byte per layer: c causal, y cyclic)
                     ints(rows, cols, #rects of W, b1, h, b2 of every layer)  ints(every rect's 4 bounds)
                     scalars(the fills, then every rect's value)
    kaleidoscope  K  ints[n, size, #groups, (group size, #factors)*]
                     ints((size, stride, len d1, len d2, len d3, len d4) per factor)  scalars(every diagonal entry)

Each object is encoded one way: the choice between the ``N``/``W`` and ``A``/``V`` forms is a
function of the values, and the reader learns it from the tag. Fields that do not take part in
equality (a circuit's or model's ``name``) are not encoded. Only the IR's own classes have an
encoding: a side holding an instance of a subclass (of ``Gate``, ``Layer``, ``Grid``,
``CellArray``, ``BBStar``, ``ButterflyFactor``, or of ``int`` as a size or index) raises
:class:`EncodingError`, since a subclass may evaluate otherwise than the fields encoded here say. :func:`fingerprint` is SHA-256 over a
domain tag, the side's kind and this encoding; it is streamed into the hash in a few large updates
(a model of 10^3 layers and 2·10^5 rectangles in a fraction of a second).
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import struct
import sys
from array import array
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from fractions import Fraction
from itertools import chain, repeat
from operator import attrgetter, is_
from typing import Any, Protocol, cast

from symverify.errors import IRError, ProverError
from symverify.ir.bigint import safe_repr
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, Kaleidoscope, bbstar_strides, is_power_of_two
from symverify.kernel.ir.cellarray import CellArray
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.ir.circuit import _check as check_circuit
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.memo import IdentityMemo, checked_scope, fields_now, forget, set_validator
from symverify.kernel.ir.scalar import Scalar, Sym, all_int, is_canonical, scalars_held, type_ids
from symverify.kernel.ir.scalar import _check_terms as check_sym_terms
from symverify.kernel.semantics.straightline import keep_checked, program

__all__ = ["encode", "refresh", "snapshot", "same_snapshot", "fingerprint", "content_digest", "matrix_digest", "permutation_digest", "tree_digest", "EncodingError", "DOMAIN",
           "CLAIM_DOMAIN", "DIGEST", "check_digests", "Side"]

DOMAIN = b"symverify/side-encoding/v2"
"""The domain tag hashed in front of every fingerprint (a new format gets a new tag)."""

Side = Circuit | Model | Kaleidoscope
_KINDS: dict[type, str] = {Circuit: "circuit", Model: "model", Kaleidoscope: "kaleidoscope"}
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_MODE_BYTE = {Mode.CAUSAL: b"c", Mode.CYCLIC: b"y"}
_ARITY = {Op.CONST: (0, 1), Op.LIN: (2, 2), Op.MUL: (2, 0)}  # (node ids, coefficients) per gate


class EncodingError(IRError):
    """Bytes that are not the encoding of any side (:func:`decode`), or an object that has none."""


class Sink(Protocol):
    def update(self, data: bytes, /) -> None: ...


def _u64(n: int) -> bytes:
    return n.to_bytes(8, "big")


def _le64(values: array) -> bytes:
    """An int64 array's bytes in little-endian order, whatever the machine's."""
    if sys.byteorder == "big":
        values = array("q", values)
        values.byteswap()
    return values.tobytes()


# ---- productions -------------------------------------------------------------------------------


def _int(x: int) -> bytes:
    data = x.to_bytes((x.bit_length() + 8) // 8, "big", signed=True)
    return b"I" + _u64(len(data)) + data


def _str(s: str) -> bytes:
    data = s.encode("utf-8", "surrogatepass")
    return b"T" + _u64(len(data)) + data


def _scalar(x: Scalar) -> bytes:
    if type(x) is int:
        return _int(x)
    if type(x) is Fraction:
        return _int(x.numerator) if x.denominator == 1 else b"F" + _int(x.numerator) + _int(x.denominator)
    if type(x) is Sym:
        parts = [b"S", _u64(len(x.terms))]
        for mono, coeff in x.terms:
            parts.append(_u64(len(mono)))
            for name, e in mono:
                parts += (_str(name), _int(e))
            parts.append(_scalar(coeff))
        return b"".join(parts)
    raise EncodingError(f"encoding: expected an exact scalar (int, Fraction or Sym), found {type(x).__name__}")


def _ints(values: Sequence[int]) -> bytes:
    _exact(values, (int,), "size, index or count")
    try:
        return b"N" + _u64(len(values)) + _le64(array("q", values))
    except OverflowError:
        return b"W" + _u64(len(values)) + b"".join(_int(v) for v in values)


_NUMERATOR, _DENOMINATOR = attrgetter("numerator"), attrgetter("denominator")


def _int64_rationals(values: Sequence[Scalar]) -> tuple[array, array] | None:
    """Numerators and denominators as int64 arrays, or None when a value is a symbol or does not fit.
    Values that are all plain ``int`` (most weights and diagonals) are their own numerators, over 1."""
    try:
        if all_int(values):  # classes by identity (type_ids)
            return array("q", values), array("q", [1]) * len(values)
        kinds = set(map(type, values))
        if any(issubclass(k, Sym) for k in kinds):
            return None
        # int and Fraction both answer numerator and denominator: read in C (a Python loop over the
        # millions of diagonal entries of a large kaleidoscope cost seconds)
        return array("q", map(_NUMERATOR, values)), array("q", map(_DENOMINATOR, values))
    except OverflowError:
        return None


def _scalars(values: Sequence[Scalar]) -> bytes:
    flat = _int64_rationals(values)
    if flat is not None:
        return b"A" + _u64(len(values)) + _le64(flat[0]) + _le64(flat[1])
    return b"V" + _u64(len(values)) + _scalar_bytes(values)


_SMALL_INTS = {v: _int(v) for v in range(-1024, 1025)}
"""``_int(v)`` of the small ints, which most wide lists (a symbol or a big int among plain weights)
are made of: read from this table, the same bytes."""


def _scalar_bytes(values: Iterable[Scalar]) -> bytes:
    """``b"".join(_scalar(v) for v in values)``: a plain ``int`` in :data:`_SMALL_INTS` is read from
    the table, every other value encoded by :func:`_scalar`."""
    small = _SMALL_INTS.get
    return b"".join([(small(v) if type(v) is int else None) or _scalar(v) for v in values])


def _scalar_runs(runs: Sequence[Sequence[Scalar]], int_runs: Iterable[bool] | None = None) -> list[bytes]:
    """:func:`_scalars` of the concatenation of ``runs``, as parts whose concatenation is exactly its
    bytes, built run by run without the flat list: a run of plain ``int`` only (``int_runs``, one flag
    a run, says so when True, as a factor's derived ``all_int`` does; otherwise checked in C) is
    packed into little-endian int64 by ``struct`` in C, its denominators all 1; any other run is read
    by :func:`_int64_rationals`. The ``A`` form is taken exactly when :func:`_scalars` takes it (every
    value an ``int`` or ``Fraction`` whose numerator and denominator fit in int64): a symbol or a
    value past int64 in any run makes the whole list its ``V`` form. A kaleidoscope's tens of
    millions of diagonal entries, most of them plain ints, cost a C-level copy each, not a Python
    object in a flat list and an attribute read; the parts are streamed into the hash, never joined.
    Runs shorter than :data:`_SHORT_RUN` on average (a small kaleidoscope's) are cheaper as the flat
    list, which is then written (the same bytes)."""
    total = sum(map(len, runs))
    if total < _SHORT_RUN * len(runs):
        return [_scalars(list(chain.from_iterable(runs)))]
    nums: list[bytes] = []
    dens: list[bytes] = []
    ones = 0  # the denominators 1 of the int runs since the last other run, written in one part
    try:
        for run, known in zip(runs, repeat(False) if int_runs is None else int_runs):
            if known or all_int(run):
                nums.append(struct.pack(f"<{len(run)}q", *run))
                ones += len(run)
                continue
            flat = _int64_rationals(run)
            if flat is None:
                raise OverflowError
            dens.append(_LE_ONE * ones)
            ones = 0
            nums.append(_le64(flat[0]))
            dens.append(_le64(flat[1]))
    except (OverflowError, struct.error):  # an int past int64 (struct.error), a symbol or a wide rational
        return [b"V" + _u64(total), *map(_scalar_bytes, runs)]
    dens.append(_LE_ONE * ones)
    return [b"A" + _u64(total), *nums, *dens]


_SHORT_RUN = 64
"""The average run length below which :func:`_scalar_runs` writes the flat list (measured: the two
ways cost the same at about 64 entries a run; 2× apart at 4, 2.7× at 1024, in favour of the runs)."""
_LE_ONE = (1).to_bytes(8, "little")


def _bytes(data: bytes) -> bytes:
    return b"B" + _u64(len(data)) + data


# ---- sides -------------------------------------------------------------------------------------


def _exact(items: Iterable[object], classes: tuple[type, ...], what: str, where: str = "encoding") -> None:
    """Refuse a part of a side that is an instance of a subclass: the encoding describes the fields of
    the IR's own classes, and a subclass may evaluate otherwise than those fields say (a ``Grid``
    whose ``nonzero`` is not its rectangles, an ``int`` whose ``*`` lies about ``n·d``), so a side
    holding one has no encoding."""
    if type(items) is not list and type(items) is not tuple:
        items = list(items)  # read once: the test below and a refusal read the same items
    if len(classes) == 1 and all(map(is_, map(type, items), repeat(classes[0]))):  # the common case, in C (by identity)
        return
    kinds = list(map(type, items))
    for kind in {id(k): k for k in kinds}.values():  # by identity: a metaclass's == or hash could
        if not any(kind is c for c in classes):  # make another class equal to one of the IR's (in a set too)
            raise EncodingError(f"{where}: expected every {what} of type {' or '.join(c.__name__ for c in classes)} "
                                f"exactly, found an instance of {kind.__module__}.{kind.__qualname__} (a subclass may "
                                "evaluate otherwise than its fields say)")


def _containers(obj: Any, names: Sequence[str], where: str) -> None:
    """Refuse a side whose fields ``names`` are not plain ``tuple`` s, as its constructor stores them:
    a field set after construction (``object.__setattr__`` skips the checks) to a ``tuple`` subclass
    could give its length otherwise than its items (a model's ``len(layers)`` saying 1 for two layers
    made the certificate checker read one layer of the two: ``x ≡ 2·x`` proved)."""
    _exact([getattr(obj, name) for name in names], (tuple,), f"{'/'.join(names)} container", where)


def _circuit_parts(c: Circuit, where: str, state: tuple[object, ...] | None = None) -> None:
    """The circuit's containers, gates, node ids and sizes of its own classes; then its gates as its
    constructor leaves them: each op an :class:`Op` member, its args and coefficients plain tuples of
    the op's arity, every node id defined before the gate reads it (the circuit's own invariants,
    checked again), every coefficient a canonical exact scalar (:func:`_coefficients`). A gate's field
    set after construction (``object.__setattr__``) skipped those checks, and the readers disagreed:
    an op set to the string ``"mul"`` made ``evaluate`` read a constant 1 and ``randomized`` a sum
    (``x + x`` proved equal to what ``evaluate`` reads as 1), an ``int`` subclass coefficient 2 whose
    ``*`` is 3's made ``evaluate`` read ``3·x`` and every method ``2·x``."""
    _containers(c, ("gates", "outputs"), where)
    _exact(c.gates, (Gate,), "gate", where)
    gates = c.gates
    lists = state[1:5] if state is not None and state[0] is _CIRCUIT else None
    if lists is None:
        coeffs = list(map(_COEFFS, gates))
        lists = (list(map(_OP, gates)), list(map(_ARGS, gates)), coeffs, _odd(coeffs))
    ops, args, coeffs, odd = cast("tuple[list[Any], list[Any], list[Any], list[Any]]", lists)
    _exact(args, (tuple,), "gate's args container", where)
    # every node id once, in gate order: plain tuples, iterated in C (no reader of the caller's runs)
    node_ids = list(chain.from_iterable(args))
    _exact(node_ids, (int,), "node id", where)
    _exact([c.n, c.d, *c.outputs], (int,), "size or output", where)
    _exact(ops, (Op,), "gate op", where)
    _exact(coeffs, (tuple,), "gate's coefficients container", where)
    _coefficients(odd, "gate coefficient", where)  # a plain int is canonical
    nd = c.n * c.d
    # the fast test (C-level maps over every gate); where it fails, the circuit's own check names the gate
    try:
        arity: bytes | None = bytes(map(len, args))  # each gate's number of node ids, read once
    except ValueError:  # 256 or more: no gate's arity
        arity = None
    fine = arity is not None and all(_ARITY[op] == (na, nc) for op, na, nc in set(zip(ops, arity, map(len, coeffs))))
    if fine and gates:
        import numpy as np

        lens = np.frombuffer(cast(bytes, arity), dtype=np.uint8)
        try:
            ids = np.fromiter(node_ids, dtype=np.int64, count=len(node_ids))
        except OverflowError:
            fine = False
        else:  # node k + nd reads only nodes before it; each gate that reads nodes reads two (the arity test)
            fine = bool((ids >= 0).all() and (ids.reshape(-1, 2) < (nd + np.flatnonzero(lens))[:, None]).all())
    if not fine or c.n < 1 or c.d < 1 or len(c.outputs) > nd or not all(0 <= o < nd + len(gates) for o in c.outputs):
        try:
            check_circuit(c)
        except IRError as e:
            raise IRError(f"{where}: {e} (a field set after construction?)") from None
    elif gates:  # every list passed: the program is made from them, not from a second read of the gates
        with checked_scope(c, compare_after=False):  # only the kernel's own code runs in the block
            keep_checked(c, coeffs, ids)


def _coefficients(items: Iterable[object], what: str, where: str) -> None:
    """Refuse a value that is no canonical exact scalar as the constructors store it
    (:func:`~symverify.kernel.ir.scalar.is_canonical`: a plain ``int``, a :class:`Sym`, a ``Fraction``
    in lowest terms of plain ints; a :class:`Sym`'s terms canonical too, read again), naming the first found.

    Each distinct object is tested once, in order of first occurrence (a circuit's 10^5 coefficients
    are mostly a few shared ``Fraction`` objects): the test reads only the object's own fields, and
    nothing between two of its occurrences runs code that could write them, so a second test of the
    same object gives the first's answer."""
    seq = items if type(items) is list or type(items) is tuple else list(items)
    for x in dict(zip(map(id, seq), seq)).values():  # by identity: the objects are held by seq, their ids unique
        if type(x) is Sym:
            try:
                check_sym_terms(getattr(x, "terms", None))  # a slot deleted past the class is no tuple of terms
            except IRError as e:
                raise EncodingError(f"{where}: a {what}: {e} (a field set after construction?)") from None
        elif type(x) is not int and not is_canonical(x):
            raise EncodingError(f"{where}: expected every {what} an exact scalar as its constructor stores it (a plain int, "
                                f"a Sym or a Fraction in lowest terms), found {type(x).__module__}.{type(x).__qualname__} "
                                f"{safe_repr(x, 40)} (a field set after construction?)")


def _model_parts(m: Model, where: str, state: object = None) -> list[Grid]:
    _containers(m, ("layers",), where)
    _exact(m.layers, (Layer,), "layer", where)
    grids: list[Grid] = [g for layer in m.layers for g in (layer.W, layer.b1, layer.h, layer.b2)]
    _exact(grids, (Grid,), "grid", where)
    _exact([g.rects for g in grids], (tuple, CellArray), "grid's rectangles", where)  # a plain tuple holds plain tuples (Grid)
    _exact([m.n, m.d, m.inner_n, m.inner_d, *(x for g in grids for x in (g.rows, g.cols))], (int,), "size", where)
    _exact([layer.mode for layer in m.layers], (Mode,), "layer mode", where)
    _model_form(m, where)
    for k, layer in enumerate(m.layers):
        for name in ("W", "b1", "h", "b2"):
            _grid_form(getattr(layer, name), f"{where}: layer {k} {name}")
    return grids


def _model_form(m: Model, where: str) -> None:
    """Refuse a model whose sizes are not as its constructor leaves them (every size ≥ 1, the inner
    state containing the input, each layer's ``W`` ``d'×d'`` and ``b1``, ``h``, ``b2`` ``N'×d'`` for the
    model's ``N'×d'``): a size set after construction (``object.__setattr__``) skipped those checks,
    and the methods read such a model otherwise than ``evaluate`` (or crashed on a numpy shape)."""
    nn, dd = m.inner_n, m.inner_d
    if min(m.n, m.d) < 1 or nn < m.n or dd < m.d:
        raise IRError(f"{where}: expected sizes n, d ≥ 1 inside the inner state N'×d' as the Model constructor leaves them, "
                      f"found n={safe_repr(m.n)}, d={safe_repr(m.d)}, N'={safe_repr(nn)}, d'={safe_repr(dd)} (a field set after construction?)")
    for k, layer in enumerate(m.layers):
        shapes = [(g.rows, g.cols) for g in (layer.W, layer.b1, layer.h, layer.b2)]
        if shapes != [(dd, dd), (nn, dd), (nn, dd), (nn, dd)]:
            raise IRError(f"{where}: layer {k}: expected W {dd}×{dd} and b1, h, b2 {nn}×{dd} (the model's N'×d'), found "
                          f"{', '.join(f'{r}×{c}' for r, c in shapes)} (a field set after construction?)")


def _grid_form(g: Grid, where: str) -> None:
    """Refuse a grid whose fill or rectangles are not as its constructor leaves them: a canonical
    exact fill (0 under a :class:`CellArray`, whose cells must fit), each rectangle a plain 5-tuple of
    plain int bounds inside the grid and a canonical exact value
    (:func:`~symverify.kernel.ir.scalar.is_canonical`). Rectangles set after construction skipped
    those checks: a value ``Fraction(4, 2)`` left unnormalised made ``evaluate`` read another model
    than the one every method proved; a rectangle past the grid, or a list, crashed them."""
    fill, rects = g.fill, g.rects
    if type(fill) is not int and not is_canonical(fill):
        raise EncodingError(f"{where}: expected the fill an exact scalar as the Grid constructor stores it, found "
                            f"{type(fill).__module__}.{type(fill).__qualname__} {safe_repr(fill, 40)} (a field set after construction?)")
    if type(rects) is CellArray:
        if not (type(fill) is int and fill == 0):
            raise IRError(f"{where}: a grid stored as a cell array needs fill 0, found {safe_repr(fill, 40)} (a field set after construction?)")
        rects.check_form(where)
        rects.check_fits(g.rows, g.cols, where)
        return
    rows, cols = g.rows, g.cols
    for k, r in enumerate(rects):
        if not (type(r) is tuple and len(r) == 5 and type(r[0]) is int and type(r[1]) is int and type(r[2]) is int
                and type(r[3]) is int and 0 <= r[0] < r[1] <= rows and 0 <= r[2] < r[3] <= cols
                and (type(r[4]) is int or is_canonical(r[4]))):
            raise IRError(f"{where}: rectangle {k}: expected (row_start, row_stop, col_start, col_stop, value) of plain int "
                          f"bounds inside the {rows}×{cols} grid and an exact scalar as the Grid constructor stores them, "
                          f"found {type(r).__name__} {safe_repr(r, 80)} (a field set after construction?)")


def _kaleidoscope_parts(k: Kaleidoscope, where: str, state: object = None) -> list[ButterflyFactor]:
    _containers(k, ("groups",), where)
    _exact(k.groups, (BBStar,), "BB* group", where)
    _exact([g.factors for g in k.groups], (tuple,), "BB* group's factors container", where)
    factors = [f for g in k.groups for f in g.factors]
    _exact(factors, (ButterflyFactor,), "butterfly factor", where)
    _exact([x for f in factors for x in (f.size, f.stride)], (int,), "factor size or stride", where)
    formed = _FORMED.get
    for j, f in enumerate(factors):
        content = _FACTOR_CONTENT(f)
        hit = formed(id(f))
        if hit is not None and hit[0] is f and all(map(is_, hit[1], content)):
            continue
        content = _factor_form(f, where, j)
        if content[6] is True and cast(int, content[0]) <= _FORMED_UP_TO:  # plain tuples of plain ints: nothing in them can change
            if len(_FORMED) >= _FORMED_SIZE:
                _FORMED.clear()
            _FORMED[id(f)] = (f, content)
    _kaleidoscope_form(k, where)
    return factors


_FACTOR_CONTENT = attrgetter("size", "stride", "d1", "d2", "d3", "d4", "all_int")
"""Every field of a butterfly factor that :func:`_factor_form` reads (all of them but the mark of its
kept plan, which only the planner reads: :func:`~symverify.kernel.kaleidoscope.apply._plan`)."""

_FORMED: dict[int, tuple[ButterflyFactor, tuple[object, ...]]] = {}
"""The factors :func:`_factor_form` accepted with ``all_int`` True, by ``id``, each with the factor itself
(so its ``id`` is not reused while the entry lives) and the objects its fields held then
(:data:`_FACTOR_CONTENT`): plain ints and plain tuples of plain ints, which cannot change. A factor
whose fields are those very objects again holds what was accepted, so :func:`_kaleidoscope_parts`
does not walk it again (the factors a sweep of small permutations shares among its kaleidoscopes,
:func:`~symverify.kaleidoscope.permutation.route_permutation`, are walked once); a field set since
(``object.__setattr__``) is another object and the factor is walked again. A factor with an entry
that is no ``int`` (a ``Fraction``, whose fields can be rewritten in place, or a :class:`Sym`) is
never kept, nor one larger than :data:`_FORMED_UP_TO` (a large factor is rarely shared, and its
diagonals would be kept alive). Emptied when it reaches :data:`_FORMED_SIZE` entries."""

_FORMED_SIZE = 4096
_FORMED_UP_TO = 64


def _kaleidoscope_form(k: Kaleidoscope, where: str) -> None:
    """Refuse a kaleidoscope whose sizes or groups are not as the constructors of :class:`Kaleidoscope`
    and :class:`BBStar` leave them: ``n`` and ``size`` plain ints with ``size`` a power of two and
    ``1 ≤ n ≤ size``, every group of ``size``, its factors of ``size`` with the BB* strides
    ``size/2 … 1, 1 … size/2`` in application order. A field set after construction
    (``object.__setattr__``) skipped those checks: a group of factors in another order was reported as
    one BB* element (``w`` counts groups), and a factor of another size raised ``IndexError``."""
    n, size = k.n, k.size
    if not (type(n) is int and type(size) is int and is_power_of_two(size) and 1 <= n <= size):
        raise IRError(f"{where}: expected 1 ≤ n ≤ size, size a power of two, found n = {safe_repr(n, 40)}, "
                      f"size = {safe_repr(size, 40)} (a field set after construction?)")
    want = bbstar_strides(size) if size >= 2 else ()
    for i, g in enumerate(k.groups):
        got = tuple(f.stride for f in g.factors)
        if type(g.size) is not int or g.size != size or any(f.size != size for f in g.factors) or got != want:
            raise IRError(f"{where}: BB* group {i}: expected size {size} and strides {list(want)} in application order, "
                          f"found size {safe_repr(g.size, 40)}, factor sizes {safe_repr([f.size for f in g.factors], 80)}, "
                          f"strides {safe_repr(list(got), 80)} (a field set after construction?)")


def _factor_form(f: ButterflyFactor, where: str, j: int) -> tuple[object, ...]:
    """Refuse a factor whose fields are not as its constructor leaves them: a power-of-two size ≥ 2
    and stride ≤ ``size/2``, each diagonal a plain tuple of ``size/2`` canonical exact scalars, and
    ``all_int`` True exactly when every entry is a plain ``int`` (the plans and the encoding read the
    entries by it). A field set after construction (``object.__setattr__``) skipped those checks: an
    entry that is a string crashed the methods, a longer diagonal was read in part. A refusal names
    ``where`` and the factor's position ``j`` (the name is built only then). Returns the objects its
    fields held (:data:`_FACTOR_CONTENT`), each read once: those are what was checked."""
    content = _FACTOR_CONTENT(f)
    size, stride, *diagonals, all_int_ = content
    half = size // 2
    if not (is_power_of_two(size) and size >= 2 and is_power_of_two(stride) and stride <= half):
        raise IRError(f"{where}: butterfly factor {j}: expected a power-of-two size ≥ 2 and stride ≤ size/2, found size "
                      f"{safe_repr(size, 40)}, stride {safe_repr(stride, 40)} (a field set after construction?)")
    ints = True
    for name, d in zip(("d1", "d2", "d3", "d4"), diagonals):
        if type(d) is not tuple or len(d) != half:
            raise IRError(f"{where}: butterfly factor {j}: expected {name} a tuple of {half} entries (size/2), found "
                          f"{type(d).__name__} of {len(d) if hasattr(d, '__len__') else '?'} (a field set after construction?)")
        if not all_int(d):  # C-level, by identity: most diagonals are plain ints
            ints = False
            _coefficients(d, f"{name} entry", f"{where}: butterfly factor {j}")
    if all_int_ is not ints:
        raise IRError(f"{where}: butterfly factor {j}: its all_int is {safe_repr(all_int_, 20)} but its entries are "
                      f"{'all' if ints else 'not all'} plain ints, as its constructor derives it (a field set after construction?)")
    return content


_PARTS: dict[type, Callable[[Any, str, Any], object]] = {Circuit: _circuit_parts, Model: _model_parts,
                                                    Kaleidoscope: _kaleidoscope_parts}


def _own(table: Mapping[type, Any], obj: object) -> Any:
    """``table``'s value for ``obj``'s exact class, found by identity (a dict lookup would take a class
    whose metaclass hashes and compares equal to one of the IR's), or None."""
    kind = type(obj)
    for k, v in table.items():
        if k is kind:
            return v
    return None


def check_plain(obj: object, where: str) -> None:
    """Refuse (:class:`EncodingError`, naming ``where``) a side that is, or holds as a gate, layer,
    grid, rectangle list, BB* group, butterfly factor, size or node id, an instance of a subclass of
    the IR's own classes: every method reads a side through those fields, and a subclass may answer
    one reader otherwise than another (a property that says one thing to the certificate checker and
    another to the stage evaluator), so no method takes one (the encoding refuses them too). A
    circuit's gates must also be as their constructor leaves them (:func:`_circuit_parts`; an
    :class:`IRError`): op, arity, node ids and coefficients; a model's sizes, modes and grids too
    (:func:`_model_form`, :func:`_grid_form`), and a kaleidoscope's factors (:func:`_factor_form`).
    The last few sides found plain are
    remembered by identity with a snapshot of what they hold (:data:`_PLAIN`) and not walked again
    while it holds the same objects; a side found changed, at any depth, is walked again and what the
    identity memos keep for it is dropped (:mod:`symverify.kernel.ir.memo`)."""
    parts = _own(_PARTS, obj)
    if parts is None:
        kind = type(obj)
        raise EncodingError(f"{where}: expected a Circuit, Model or Kaleidoscope exactly, found an instance of "
                            f"{kind.__module__}.{kind.__qualname__} (a subclass may evaluate otherwise than its fields say)")
    _plain(obj, parts, where)


_PLAIN: IdentityMemo[tuple[object, ...]] = IdentityMemo(16)
"""The last few sides whose parts :func:`check_plain` or the encoding found plain, by identity, with
a snapshot of everything they held then (:func:`_state`). Holding the object keeps its ``id`` from
being reused, and a hit whose snapshot holds the same objects is that very content, so a side that
``verify`` read and then encodes is walked once. A side whose snapshot changed (a field written past
its frozen dataclass with ``object.__setattr__``, at any depth: a gate's op or coefficients, a
fraction's numerator, a grid's rectangles, a factor's diagonal) is walked again, and everything the
identity memos keep for it is dropped first (:func:`~symverify.kernel.ir.memo.forget`): its program,
bounds, plans and digest are the old content's. So is a side not found here (evicted since): the
other memos may still hold its old content's entries."""


_scalars_state = scalars_held
"""Each value that is not a plain ``int``, with its fields and a :class:`Sym`'s coefficients with theirs
(:func:`~symverify.kernel.ir.scalar.scalars_held`)."""


_OP, _ARGS, _COEFFS = attrgetter("op"), attrgetter("args"), attrgetter("coeffs")
_FRACTION_SLOTS = attrgetter("_numerator"), attrgetter("_denominator")  # a Fraction's slots
_CIRCUIT = object()  # the first item of a circuit's snapshot


def _odd(coeffs: list[Any]) -> list[object]:
    """The coefficients, of every gate's tuple, that are not plain ints."""
    return [x for x in chain.from_iterable(coeffs) if type(x) is not int]


def _circuit_state(c: Circuit) -> tuple[object, ...]:
    """Everything a circuit holds that can change under its identity: each gate's op, node-id tuple
    and coefficient tuple (by identity; tuples and ints cannot change), the coefficients that are not
    ints, the numerator and denominator of each ``Fraction`` among them (read by C-level maps), the
    fields of the others (:func:`_scalars_state`), and the circuit's own fields. The walk of its
    parts reads the same lists (:func:`_circuit_parts`)."""
    gates = c.gates
    coeffs = list(map(_COEFFS, gates))
    odd = _odd(coeffs)
    fractions = [x for x in odd if type(x) is Fraction]
    rest = _scalars_state(x for x in odd if type(x) is not Fraction)
    return (_CIRCUIT, list(map(_OP, gates)), list(map(_ARGS, gates)), coeffs, odd,
            list(map(_FRACTION_SLOTS[0], fractions)), list(map(_FRACTION_SLOTS[1], fractions)), rest, *fields_now(c))


def _grid_state(g: object) -> list[object]:
    out = [g, *fields_now(g)]
    if type(g) is Grid:
        rects = g.rects
        out.extend(_scalars_state([g.fill]))
        if type(rects) is CellArray:
            out.extend(fields_now(rects))
            out.extend(_scalars_state(x[2] for x in rects.extra if type(x) is tuple and len(x) == 3))
        elif type(rects) is tuple:
            out.extend(_scalars_state(r[4] for r in rects if type(r) is tuple and len(r) == 5))
    return out


def _model_state(m: Model) -> tuple[object, ...]:
    """A model's own fields, each layer's and each grid's (:func:`_grid_state`: its rectangles'
    values, or its cell array's fields and exact extra cells, that are not ints, with their fields)."""
    layers = m.layers
    if type(layers) is not tuple:
        return (*fields_now(m), None)
    out: list[object] = []
    for layer in layers:
        out.append(layer)
        out.extend(fields_now(layer))
        if type(layer) is Layer:
            for g in (layer.W, layer.b1, layer.h, layer.b2):
                out.extend(_grid_state(g))
    return (*fields_now(m), out)


def _kaleidoscope_state(k: Kaleidoscope) -> tuple[object, ...]:
    """A kaleidoscope's own fields, each BB* group's and each butterfly factor's, and each diagonal
    entry that is not an int with its fields (a factor's kept plan is read only through the mark its
    planner gave it, and only for the fields it was made from:
    :func:`~symverify.kernel.kaleidoscope.apply._plan`)."""
    groups = k.groups
    if type(groups) is not tuple:
        return (*fields_now(k), None)
    out: list[object] = []
    for g in groups:
        out.append(g)
        out.extend(fields_now(g))
        if type(g) is BBStar and type(g.factors) is tuple:
            for f in g.factors:
                out.append(f)
                if type(f) is ButterflyFactor:
                    out.extend((f.size, f.stride, f.d1, f.d2, f.d3, f.d4, f.all_int))  # not the plan's mark: never read unless its own
                    if not f.all_int:
                        out.extend(_scalars_state(x for d in (f.d1, f.d2, f.d3, f.d4) if type(d) is tuple for x in d))
                else:
                    out.extend(fields_now(f))
    return (*fields_now(k), out)


_STATES: dict[type, Callable[[Any], tuple[object, ...]]] = {Circuit: _circuit_state, Model: _model_state,
                                                            Kaleidoscope: _kaleidoscope_state}


def _state(obj: object) -> tuple[object, ...]:
    """A snapshot of everything ``obj`` holds that a field written past a frozen dataclass could
    change: the objects found, by identity (compared item by item, lists element by element)."""
    state = _own(_STATES, obj)
    if state is None:
        raise EncodingError(f"snapshot: expected a Circuit, Model or Kaleidoscope exactly, found {type(obj).__name__}")
    return state(obj)


def _same_state(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if type(x) is list and type(y) is list:
            if len(x) != len(y) or not all(map(is_, x, y)):
                return False
        elif x is not y:
            return False
    return True


def _plain(obj: object, parts: Callable[[Any, str, Any], object], where: str = "encoding") -> None:
    """Walk ``obj``'s parts (naming ``where`` in a refusal) unless :data:`_PLAIN` holds it with the
    same snapshot (:func:`_state`); otherwise drop every memo's entries for it first
    (:func:`~symverify.kernel.ir.memo.forget`) and remember it once its parts pass (a refused side is
    never remembered)."""
    hit = _PLAIN.get(obj)
    try:
        if hit is not None and _still(hit, obj):
            return
    except Exception:  # not the IR's own parts any more (a property that raises): walked again below
        pass
    try:
        state: tuple[object, ...] | None = _state(obj)
    except Exception:  # not the IR's own parts (a property that raises): the walk names what it found
        state = None
    forget(obj)
    parts(obj, where, state)
    _PLAIN.put(obj, cast("tuple[object, ...]", state))


def _still(kept: tuple[object, ...], obj: object) -> bool:
    """``_same_state(kept, _state(obj))`` for a snapshot ``kept`` that :data:`_PLAIN` holds for ``obj``
    (taken when ``obj``'s parts passed their walk), without a new snapshot's lists: a circuit's gates
    are compared field by field (op, node-id tuple, coefficient tuple, by identity) as C-level maps that
    stop at the first change. Its ``odd`` list (the coefficients that are not plain ``int``) is not read
    again: the walk found every coefficient container a plain ``tuple``, which no Python code can change,
    so the same tuples hold the same objects, and no object can become or stop being an ``int`` (a class
    is assigned only between heap types, ``int`` is none). The rest is read as :func:`_circuit_state`
    reads it (which of those objects are ``Fraction`` s now, their two slots, the fields of the others,
    the circuit's own fields), so this is true exactly when the full comparison is. Other sides: the
    full comparison. May raise where :func:`_state` would (a property that raises)."""
    if kept[0] is not _CIRCUIT or type(obj) is not Circuit:
        return _same_state(kept, _state(obj))
    gates = obj.gates
    ops, args, coeffs, odd, nums, dens, rest = cast("tuple[list[Any], ...]", kept[1:8])
    if type(gates) is not tuple or len(gates) != len(ops):  # a plain tuple's length is its items'
        return False
    if not (all(map(is_, map(_COEFFS, gates), coeffs)) and all(map(is_, map(_OP, gates), ops))
            and all(map(is_, map(_ARGS, gates), args))):
        return False
    fractions = [x for x in odd if type(x) is Fraction]
    if len(fractions) != len(nums) or not (all(map(is_, map(_FRACTION_SLOTS[0], fractions), nums))
                                           and all(map(is_, map(_FRACTION_SLOTS[1], fractions), dens))):
        return False
    return _same_state((_scalars_state(x for x in odd if type(x) is not Fraction), *fields_now(obj)), (rest, *kept[8:]))


def snapshot(obj: Side) -> tuple[object, ...]:
    """What a circuit, model or kaleidoscope holds now, by identity (the snapshot every check of a
    side compares: :func:`_state`); compare two with :func:`same_snapshot`. For a keeper of such
    objects outside the kernel (a builder's kept results) that must not hand out one rewritten in place."""
    return _state(obj)


def same_snapshot(a: object, b: object) -> bool:
    """Whether two :func:`snapshot` s hold the same objects, item by item (the side is unchanged)."""
    return type(a) is tuple and type(b) is tuple and _same_state(a, b)


_SEEN: IdentityMemo[tuple[object, ...]] = IdentityMemo(16)
"""The snapshots :func:`refresh` kept (sides not walked for plainness: :data:`_PLAIN` holds those)."""


def refresh(obj: object) -> None:
    """Drop what the identity memos keep for the side ``obj`` (its plans, programs, bounds, digest)
    unless its snapshot (:func:`_state`) holds the same objects as the one :func:`check_plain` or an
    earlier call kept: a reader outside a check (``numeric_check``'s float plans; ``execute``'s callers after an
    in-place rewrite) calls it first, so a field rewritten inside the side (``object.__setattr__`` on a gate, a grid, a
    ``Fraction``) since its plan was kept is read afresh. Refuses nothing (an object of another kind
    is left alone, an instance of a subclass of the IR's classes has no snapshot and what is kept for
    it is dropped each time); linear in what the side holds, as the snapshot of a check."""
    if _own(_STATES, obj) is None:
        if isinstance(obj, (Circuit, Model, Kaleidoscope)):
            forget(obj)
        return
    try:
        hit = _PLAIN.get(obj)
        if hit is not None and _still(hit, obj):  # the snapshot its check kept: compared without a new one
            return
        state = _state(obj)
    except Exception:  # not the IR's own parts: nothing kept for it is read as its content
        forget(obj)
        return
    hit = _SEEN.get(obj)
    if hit is not None and _same_state(hit, state):
        return
    forget(obj)  # changed, or not seen since its snapshot was dropped: what the memos keep may be old
    _SEEN.put(obj, state)


set_validator(refresh)  # the memos a reader outside a check writes compare the side's snapshot before storing


def _circuit(sink: Sink, c: Circuit) -> None:
    prog = program(c)
    sink.update(b"C" + _ints([c.n, c.d, len(c.gates), len(c.outputs)]) + _bytes(prog.ops))
    if prog.args is not None:  # the program's int64 node ids are native-endian
        sink.update(b"N" + _u64(len(prog.args) // 8) + _le64(array("q", prog.args)))
    else:
        sink.update(_ints([a for g in c.gates for a in g.args]))
    sink.update(b"N" + _u64(len(prog.coeff_index) // 8) + _le64(array("q", prog.coeff_index)))
    sink.update(_scalars(prog.scalars))
    sink.update(_ints(c.outputs))


def _model(sink: Sink, m: Model) -> None:
    grids = [g for layer in m.layers for g in (layer.W, layer.b1, layer.h, layer.b2)]
    rects = [r for g in grids for r in g.rects]
    sink.update(b"M" + _ints([m.n, m.d, m.inner_n, m.inner_d, len(m.layers)])
                + _bytes(b"".join(_MODE_BYTE[layer.mode] for layer in m.layers)))
    sink.update(_ints([x for g in grids for x in (g.rows, g.cols, len(g.rects))]))
    sink.update(_ints([x for r in rects for x in r[:4]]))
    sink.update(_scalars([g.fill for g in grids] + [r[4] for r in rects]))


def _kaleidoscope(sink: Sink, k: Kaleidoscope) -> None:
    factors = [f for g in k.groups for f in g.factors]
    sink.update(b"K" + _ints([k.n, k.size, len(k.groups)] + [x for g in k.groups for x in (g.size, len(g.factors))]))
    sink.update(_ints([x for f in factors for x in (f.size, f.stride, len(f.d1), len(f.d2), len(f.d3), len(f.d4))]))
    ints = [f.all_int for f in factors for _ in range(4)]
    for part in _scalar_runs([diag for f in factors for diag in (f.d1, f.d2, f.d3, f.d4)], ints):
        sink.update(part)


_WRITERS: dict[type, Callable[[Sink, Any], None]] = {Circuit: _circuit, Model: _model, Kaleidoscope: _kaleidoscope}


def _writer(obj: object) -> Callable[[Sink, Any], None]:
    w = _own(_WRITERS, obj)
    if w is None:
        raise EncodingError(f"encoding: expected a circuit, model or kaleidoscope, found {type(obj).__name__}")
    return w


class _Collect:
    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def update(self, data: bytes, /) -> None:
        self.parts.append(data)


def encode(obj: Side) -> bytes:
    """The canonical encoding of a circuit, model or kaleidoscope (module docstring).

    >>> from symverify.kernel.ir.circuit import Circuit, Gate
    >>> encode(Circuit(1, 2, (Gate.lin(0, 87779591, 1, 3),), (2,)))[:1]
    b'C'
    """
    write = _writer(obj)
    _plain(obj, cast("Callable[[Any, str, Any], object]", _own(_PARTS, obj)))  # the writers read a side checked as check_plain checks it
    out = _Collect()
    write(out, obj)
    return b"".join(out.parts)


_RECENT: IdentityMemo[bytes] = IdentityMemo(4, validate=True)
"""The digests of the last few sides computed, found by identity. The IR is immutable, and holding
the object keeps its ``id`` from being reused, so a hit is the digest of that very content."""


def fingerprint(obj: Side) -> bytes:
    """SHA-256 of :data:`DOMAIN`, the side's kind and :func:`encode` (streamed, not materialised).

    The side is checked first as :func:`check_plain` checks it (its snapshot compared with the one
    kept): a side rewritten in place since its digest was kept (``object.__setattr__`` on a gate, a
    grid, a factor, a ``Fraction``) is walked again and its kept digest dropped, so the digest names
    what the side holds now."""
    write = _writer(obj)
    _plain(obj, cast("Callable[[Any, str, Any], object]", _own(_PARTS, obj)))
    with checked_scope(obj, compare_after=False):  # its snapshot was just compared; only the encoder runs here
        return _digest(obj, write)


def checked_fingerprint(obj: Side) -> bytes:
    """:func:`fingerprint` of a side that :func:`check_plain` accepted earlier in the same call
    (``verify``'s sides, at the start of each ``verify``): without a second snapshot of the side
    (outside ``verify``'s call a digest is stored only after the side's snapshot is compared).

    The digests of the last few sides are kept (the pre-check and a later randomized run of one
    ``verify`` hash the same sides)."""
    return _digest(obj, _writer(obj))


def _digest(obj: Side, write: Callable[[Sink, Any], None]) -> bytes:
    hit = _RECENT.get(obj)
    if hit is not None:
        return hit
    h = hashlib.sha256(DOMAIN)
    h.update(_str(_own(_KINDS, obj)))
    write(h, obj)
    return _RECENT.put(obj, h.digest())


def content_digest(obj: Side) -> str:
    """``"sha256:<hex>"`` of :func:`fingerprint`: the name of a side's exact content in reports,
    proof runs and golden records (equal digests mean equal sides; the same on every machine, run
    and seed), of what the side holds now (a side rewritten in place is checked and hashed again)."""
    return "sha256:" + fingerprint(obj).hex()


def checked_digest(obj: Side) -> str:
    """:func:`content_digest` of a side :func:`check_plain` accepted earlier in the same call
    (:func:`checked_fingerprint`)."""
    return "sha256:" + checked_fingerprint(obj).hex()


# ---- the objects other claims are about --------------------------------------------------------

CLAIM_DOMAIN = b"symverify/claim-object/v1"
"""The domain tag of :func:`matrix_digest` and :func:`tree_digest` (never a side's :data:`DOMAIN`,
so no matrix or tree has a side's digest)."""


def _claim_digest(kind: str, data: Iterable[bytes]) -> str:
    h = hashlib.sha256(CLAIM_DOMAIN)
    h.update(_str(kind))
    for part in data:
        h.update(part)
    return "sha256:" + h.hexdigest()


DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
"""The form of every digest a claim names (:func:`content_digest`, :func:`matrix_digest`, :func:`tree_digest`)."""


def check_digests(digests: object, what: str, names: str) -> None:
    """Refuse a prover outcome's ``digests`` that is neither None nor a pair of plain ``str``
    digests of the form :data:`DIGEST` (:class:`ProverError`, naming the outcome ``what`` and the
    pair's parts ``names``)."""
    d = digests
    if d is not None and not (type(d) is tuple and len(d) == 2 and all(type(h) is str and DIGEST.fullmatch(h) for h in d)):
        raise ProverError(f"{what}: digests: expected None or {names} digests 'sha256:<64 hex digits>', "
                          f"found {safe_repr(d, 100)}")


def matrix_digest(rows: int, cols: int, entries: Mapping[tuple[int, int], Scalar]) -> str:
    """``"sha256:<hex>"`` of an exact ``rows × cols`` matrix given by its nonzero ``entries``: SHA-256
    of :data:`CLAIM_DOMAIN`, the kind ``"matrix"``, ``ints[rows, cols, #entries, (row, col) of every
    entry in row-major order]`` and their values (``scalars``). Entries equal to 0 are left out
    first, so a matrix has one digest however its zeros were listed; equal digests mean equal
    matrices (the same on every machine, run and seed)."""
    items = [(k, v) for k, v in sorted(entries.items()) if not (v == 0 and type(v) is not Sym)]  # keys unique: sorted by key
    return _claim_digest("matrix", (_ints([rows, cols, len(items), *(x for k, _ in items for x in k)]),
                                    _scalars([v for _, v in items])))


def permutation_digest(perm: Sequence[int]) -> str:
    """:func:`matrix_digest` of the permutation matrix ``P[perm[i], i] = 1`` of a bijection ``perm``
    of ``0 … n−1`` (validated by the caller), without building and sorting its entries: row ``r``
    holds its one 1 in column ``perm⁻¹[r]``, so the row-major entries are ``(r, perm⁻¹[r])``."""
    n = len(perm)
    inv = [0] * n
    for i, t in enumerate(perm):
        inv[t] = i
    return _claim_digest("matrix", (_ints([n, n, n, *(x for r in range(n) for x in (r, inv[r]))]), _scalars([1] * n)))


def tree_digest(kind: str, root: object, nodes: Collection[type]) -> str:
    """``"sha256:<hex>"`` of a tree of frozen dataclasses (a parametric gadget's expressions and
    layers): SHA-256 of :data:`CLAIM_DOMAIN`, ``kind`` and the pre-order encoding of ``root``, where
    an instance of a class in ``nodes`` (exactly: no subclass) is ``D`` + its class name + its
    field count + its fields in declaration order, a tuple ``L`` + its length + its items, a mapping
    ``M`` + its length + its items sorted by key (key, value), a ``str``, ``int`` or ``Fraction``
    its production above (``bool`` ``?`` + one byte). Every part is tagged and length-prefixed, so
    the encoding is prefix-free: equal digests mean equal trees. Shared subtrees are encoded at
    every use; the walk is iterative (no recursion limit). Anything else is an
    :class:`EncodingError` naming its type."""
    out: list[bytes] = []
    todo: list[object] = [root]
    node_ids = type_ids(*nodes)  # a node's class by identity: one equal to a node class (a metaclass's ==) is none
    while todo:
        x = todo.pop()
        t = type(x)
        if t is str:
            out.append(_str(cast(str, x)))
        elif t is bool:
            out.append(b"?1" if x else b"?0")
        elif t is int or t is Fraction:
            out.append(_scalar(cast(Scalar, x)))
        elif t is tuple:
            items = cast(tuple[object, ...], x)
            out.append(b"L" + _u64(len(items)))
            todo.extend(reversed(items))
        elif isinstance(x, Mapping):
            pairs = sorted(x.items(), key=lambda kv: kv[0])
            out.append(b"M" + _u64(len(pairs)))
            todo.extend(reversed([y for kv in pairs for y in kv]))
        elif id(t) in node_ids:
            names = [f.name for f in dataclasses.fields(cast(Any, x))]
            out.append(b"D" + _str(t.__qualname__) + _u64(len(names)))
            todo.extend(reversed([getattr(x, n) for n in names]))
        else:
            raise EncodingError(f"{kind} digest: expected {', '.join(sorted(c.__name__ for c in nodes))}, tuples, "
                                f"mappings, str, int or Fraction, found {t.__module__}.{t.__qualname__}")
    return _claim_digest(kind, out)

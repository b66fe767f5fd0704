"""Versioned JSON for circuits, models and certificates; exact round trip.

Rationals are strings (``"-1/2"``); a symbolic scalar is ``{"sym": [[coeff, {name: exp}], ...]}``.
Every document carries ``"format"`` (``symverify.circuit``, ``symverify.model`` or
``symverify.certificate``) and ``"version"``.

**Exact values of any size.** Numerators and denominators are written in full decimal whatever
their size and whatever ``sys.get_int_max_str_digits()`` says (:mod:`symverify.ir.bigint`), so a
file holds the same text on every Python; small values look as they always did. At most
:data:`~symverify.ir.limits.MAX_INT_DIGITS` digits per integer are written or read.

**Validation.** Loading never trusts the file: every field is checked for its JSON type and range
(a bool is not an int, a float is not a size, sizes are non-negative, node ids and layer indices
too), unknown and duplicate fields are refused, JSON integer literals are bounded by
:data:`~symverify.ir.limits.MAX_JSON_INT` (exact values are strings), ``-0``, float literals and
``NaN``/``Infinity`` are refused (and shown as written), nesting is bounded by :data:`~symverify.ir.limits.MAX_JSON_DEPTH`, and files must be
UTF-8. Every problem raises :class:`~symverify.errors.SerializationError` naming the field
(``layers[3].W.rects[0]``), what was expected and what was found; nothing is truncated, rounded
or ignored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from decimal import Decimal
from itertools import accumulate
from pathlib import Path
from typing import Any, Union

from symverify.errors import IRError, SerializationError
from symverify.ir import limits
from symverify.ir.bigint import safe_repr, show_int
from symverify.ir.files import file_path, read_file
from symverify.ir.jsonfields import (
    _check_size,
    _field,
    _float_literal,
    _found,
    _int,
    _int_field,
    _kind,
    _list,
    _obj,
    _pairs,
    _parse_constant,
    _parse_int,
    _text,
    scalar_from_json,
    scalar_to_json,
)
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.certificate import Certificate
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.ir.grid import Grid

__all__ = ["to_json", "from_json", "dumps", "loads", "dump_file", "load_file", "read_json_file", "json_value", "CIRCUIT_FORMAT", "MODEL_FORMAT"]

CIRCUIT_FORMAT = "symverify.circuit"
MODEL_FORMAT = "symverify.model"
VERSION = 1
Document = Union[Circuit, Model, Certificate]


def _version(data: dict[str, Any], where: str) -> None:
    if "version" not in data:
        raise SerializationError(f"{where}: missing field 'version'")
    version = data["version"]
    if type(version) is not int or version != VERSION:
        found = show_int(version) if type(version) is int else _kind(version)
        raise SerializationError(f"{where}.version: expected {VERSION}, found {found} (written by another symverify version?)")


# ---- grids ---------------------------------------------------------------------------------------
def _grid_to_json(g: Grid, where: str) -> dict[str, Any]:
    return {
        "shape": [g.rows, g.cols],
        "fill": scalar_to_json(g.fill, f"{where}.fill"),
        "rects": [[r0, r1, c0, c1, scalar_to_json(v, f"{where}.rects[{k}]")] for k, (r0, r1, c0, c1, v) in enumerate(g.rects)],
    }


def _grid_from_json(v: Any, where: str) -> Grid:
    _obj(v, where, ("shape", "rects"), ("fill",))
    shape = _list(v["shape"], f"{where}.shape")
    if len(shape) != 2:
        raise SerializationError(f"{where}.shape: expected [rows, cols], found a list of {len(shape)}")
    rows, cols = _int(shape[0], f"{where}.shape[0] (rows)"), _int(shape[1], f"{where}.shape[1] (cols)")
    out = []
    for k, r in enumerate(_list(v["rects"], f"{where}.rects")):
        at = f"{where}.rects[{k}]"
        if not isinstance(r, list) or len(r) != 5:
            raise SerializationError(f"{at}: expected [row_start, row_stop, col_start, col_stop, value], found {_found(r)}")
        bounds = [_int(r[i], f"{at}[{i}]") for i in range(4)]
        out.append((bounds[0], bounds[1], bounds[2], bounds[3], scalar_from_json(r[4], f"{at}[4]")))
    fill = scalar_from_json(v["fill"], f"{where}.fill") if "fill" in v else 0
    try:
        return Grid(rows, cols, fill, tuple(out))
    except IRError as e:
        raise SerializationError(f"{where}: {e}") from None


# ---- documents -----------------------------------------------------------------------------------
def _check_name(name: Any, where: str) -> str:
    if not isinstance(name, str):
        raise SerializationError(f"{where}: cannot write a name that is not a str (found {type(name).__name__})")
    return _text(name, where)


def to_json(obj: Document) -> dict[str, Any]:
    """The JSON document of a circuit, model or certificate (values exact, see the module doc).

    Raises:
        SerializationError: a value cannot be written exactly (a name that is not text, a size
            beyond ``MAX_JSON_INT``, an integer of more than ``MAX_INT_DIGITS`` digits).
    """
    if isinstance(obj, Circuit):
        _check_size(max(obj.n, obj.d), "circuit size")
        if obj.num_nodes - 1 > limits.MAX_JSON_INT:  # node ids below 2^63 are written as they are
            _check_size(max((a for g in obj.gates for a in g.args), default=0), "circuit node id")
            _check_size(max(obj.outputs, default=0), "circuit output node id")
        return {
            "format": CIRCUIT_FORMAT,
            "version": VERSION,
            "name": _check_name(obj.name, "circuit name"),
            "n": obj.n,
            "d": obj.d,
            "gates": [
                [g.op.value, list(g.args), [scalar_to_json(c, f"gate {k} coefficient") for c in g.coeffs]]
                for k, g in enumerate(obj.gates)
            ],
            "outputs": list(obj.outputs),
        }
    if isinstance(obj, Model):
        for fname in ("n", "d", "inner_n", "inner_d"):
            _check_size(getattr(obj, fname), f"model {fname}")
        return {
            "format": MODEL_FORMAT,
            "version": VERSION,
            "name": _check_name(obj.name, "model name"),
            "n": obj.n,
            "d": obj.d,
            "inner_n": obj.inner_n,
            "inner_d": obj.inner_d,
            "layers": [
                {"mode": layer.mode.value, **{name: _grid_to_json(g, f"layers[{i}].{name}") for name, g in layer.grids()}}
                for i, layer in enumerate(obj.layers)
            ],
        }
    if isinstance(obj, Certificate):
        return obj.to_json()
    hint = ("; a compiled object is saved as two files: dump_file(out.model, ...) and dump_file(out.certificate, ...)"
            if isinstance(getattr(obj, "model", None), Model) else "")
    raise SerializationError(f"to_json: expected a Circuit, Model or Certificate, found {type(obj).__name__}{hint}")


_CIRCUIT_KEYS = ("format", "version", "n", "d", "gates", "outputs")
_MODEL_KEYS = ("format", "version", "n", "d", "inner_n", "inner_d", "layers")


def from_json(data: Any) -> Document:
    """Rebuild a circuit, model or certificate from its JSON document (validated, see the module doc)."""
    fmt = _field(data, "format", str, "document")
    if fmt == "symverify.certificate":
        return Certificate.from_json(data)
    if fmt not in (CIRCUIT_FORMAT, MODEL_FORMAT):
        hint = {"symverify.proof-run": " (a run of `symverify prove --json`: `symverify report FILE` shows it)",
                "symverify.report": " (a verdict of `symverify verify --json`, not a side to verify)"}.get(fmt, "")
        raise SerializationError(
            f"document.format: expected one of {CIRCUIT_FORMAT!r}, {MODEL_FORMAT!r}, 'symverify.certificate'; found "
            f"{safe_repr(fmt)}{hint}"
        )
    _version(data, "document")
    _obj(data, "document", _CIRCUIT_KEYS if fmt == CIRCUIT_FORMAT else _MODEL_KEYS, ("name",))
    name = _text(data["name"], "document.name") if "name" in data else ""
    n, d = _int_field(data, "n", "document", 1), _int_field(data, "d", "document", 1)
    try:
        if fmt == CIRCUIT_FORMAT:
            gates = tuple(_gate(g, k, n * d) for k, g in enumerate(_list(data["gates"], "document.gates")))
            return Circuit(n, d, gates, tuple(_outputs(data, n * d, n * d + len(gates))), name)
        inner_n, inner_d = _int_field(data, "inner_n", "document", 1), _int_field(data, "inner_d", "document", 1)
        for inner, outer in (("inner_n", "n"), ("inner_d", "d")):
            if data[inner] < data[outer]:
                raise SerializationError(f"document.{inner}: expected an int ≥ {outer} = {show_int(data[outer])} (the state holds the "
                                         f"input), found {show_int(data[inner])}")
        layers = []
        for i, lj in enumerate(_list(data["layers"], "document.layers")):
            where = f"layers[{i}]"
            _obj(lj, where, ("mode", "W", "b1", "h", "b2"))
            mode = lj["mode"]
            if mode not in ("causal", "cyclic"):
                raise SerializationError(f"{where}.mode: expected 'causal' or 'cyclic', found {_kind(mode) if not isinstance(mode, str) else repr(mode)}")
            grids = {k: _grid_from_json(lj[k], f"{where}.{k}") for k in ("W", "b1", "h", "b2")}
            try:
                layer = Layer(grids["W"], grids["b1"], grids["h"], grids["b2"], Mode(mode))
            except IRError as e:
                raise SerializationError(f"{where}: {e}") from None
            if (layer.inner_n, layer.inner_d) != (inner_n, inner_d):
                raise SerializationError(
                    f"{where}: expected the shape inner_n × inner_d = {show_int(inner_n)}×{show_int(inner_d)} for b1, h and b2 "
                    f"(W: inner_d × inner_d), found b1, h and b2 of {show_int(layer.inner_n)}×{show_int(layer.inner_d)}")
            layers.append(layer)
        return Model(n, d, inner_n, inner_d, tuple(layers), name)
    except SerializationError:
        raise
    except IRError as e:
        raise SerializationError(f"document is well-formed JSON but not a valid {fmt}: {e}") from None


_ARITY = {"const": (0, 1), "lin": (2, 2), "mul": (2, 0)}  # docs/formats.md, the table of gates


def _gate(g: Any, k: int, inputs: int) -> Gate:
    """Gate ``k`` of a circuit with ``inputs = n·d`` inputs: it reads only nodes below ``n·d + k``."""
    where = f"gates[{k}]"
    if not isinstance(g, list) or len(g) != 3 or not isinstance(g[1], list) or not isinstance(g[2], list):
        raise SerializationError(f"{where}: expected [op, [args], [coeffs]], found {_found(g)}")
    ops = [o.value for o in Op]
    if not isinstance(g[0], str) or g[0] not in ops:
        raise SerializationError(f"{where}: unknown op {safe_repr(g[0])}; expected one of {ops}")
    nargs, ncoeffs = _ARITY[g[0]]
    if (len(g[1]), len(g[2])) != (nargs, ncoeffs):
        raise SerializationError(f"{where}: expected {nargs} args and {ncoeffs} coeffs for {g[0]!r}, "
                                 f"found {len(g[1])} args and {len(g[2])} coeffs")
    for j, a in enumerate(g[1]):
        if type(a) is not int:
            raise SerializationError(f"{where}.args[{j}]: expected node ids (ints), found {_kind(a)}")
        _int(a, f"{where}.args[{j}]")
        if a >= inputs + k:
            raise SerializationError(f"{where}.args[{j}]: expected a node id below n·d + {k} = {show_int(inputs + k)} "
                                     f"(an input or an earlier gate), found {show_int(a)}")
    return Gate(Op(g[0]), tuple(g[1]), tuple(scalar_from_json(c, f"{where}.coeffs[{i}]") for i, c in enumerate(g[2])))


def _outputs(data: Any, inputs: int, nodes: int) -> list[int]:
    """The outputs of a circuit with ``inputs = n·d`` inputs and ``nodes`` nodes: at most ``n·d`` node ids."""
    outs = _list(data["outputs"], "document.outputs")
    if len(outs) > inputs:
        raise SerializationError(f"document.outputs: expected at most n·d = {show_int(inputs)} node ids, found {len(outs)}")
    for k, o in enumerate(outs):
        if type(o) is not int:
            raise SerializationError(f"document.outputs: expected a list of node ids (ints), found {_kind(o)} at index {k}")
        _int(o, f"document.outputs[{k}]")
        if o >= nodes:
            raise SerializationError(f"document.outputs[{k}]: expected a node id below n·d + #gates = {show_int(nodes)}, "
                                     f"found {show_int(o)}")
    return outs


# ---- text and files ------------------------------------------------------------------------------
def dumps(obj: Document) -> str:
    """The compact JSON text of ``obj`` (ASCII only; see :func:`to_json`)."""
    return json.dumps(to_json(obj), separators=(",", ":"), allow_nan=False)


# a string, or an unterminated one up to the end of the text: every match attempt succeeds, so the
# scan is linear (a failed attempt from every quote of an unterminated run of escaped quotes cost
# the square of its length)
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\\?\Z)', re.S)
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def _check_depth(text: str) -> None:
    """Refuse nesting deeper than ``MAX_JSON_DEPTH`` before the (recursive) parser sees it."""
    if text.count("[") + text.count("{") <= limits.MAX_JSON_DEPTH:
        return
    brackets = _NOT_BRACKETS.sub("", _STRINGS.sub("", text))
    deepest = max(accumulate(map(_STEP.__getitem__, brackets)), default=0)
    if deepest > limits.MAX_JSON_DEPTH:
        raise SerializationError(
            f"JSON nested {deepest} levels deep, more than symverify.ir.limits.MAX_JSON_DEPTH = {limits.MAX_JSON_DEPTH}"
        )


def _check_bom(text: str) -> None:
    """Refuse a byte order mark by name (``json`` would call it invalid JSON, "truncated?")."""
    if text.startswith("\ufeff"):
        raise SerializationError("expected JSON text, found a byte order mark (U+FEFF) at offset 0; "
                                 "symverify files are UTF-8 JSON without one")


def loads(text: str | bytes) -> Document:
    """Parse and validate a document; ``bytes`` must be UTF-8. Every problem is a :class:`SerializationError`."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        raw = bytes(text)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise SerializationError(
                f"not UTF-8 text: byte {raw[e.start]:#04x} at offset {e.start} ({e.reason}); symverify files are UTF-8 JSON"
            ) from None
    if not isinstance(text, str):
        raise SerializationError(f"loads: expected JSON text (str or bytes), found {type(text).__name__}")
    _check_bom(text)
    _check_depth(text)
    try:
        data = json.loads(text, parse_int=_parse_int, parse_float=_float_literal, parse_constant=_parse_constant,
                          object_pairs_hook=_pairs)
    except json.JSONDecodeError as e:
        raise SerializationError(f"not valid JSON (truncated?): {e.msg} (line {e.lineno}, column {e.colno})") from None
    except RecursionError:
        raise SerializationError(f"JSON nested too deeply (more than symverify.ir.limits.MAX_JSON_DEPTH = {limits.MAX_JSON_DEPTH})") from None
    except ValueError as e:  # e.g. a float literal Python cannot read
        raise SerializationError(f"not valid JSON: {safe_repr(str(e), 120)}") from None
    return from_json(data)


def dump_file(obj: Document, path: str | Path) -> None:
    """Write ``obj`` as JSON to ``path`` (:class:`SerializationError` if it cannot be written)."""
    p = file_path(path, "write")
    text = dumps(obj)
    try:
        p.write_text(text, encoding="utf-8")
    except OSError as e:
        raise SerializationError(f"cannot write {p}: {e.strerror or e}") from None
    except ValueError:  # an embedded NUL (open's own error): no file has such a name
        raise SerializationError(f"cannot write {str(p)!r}: expected a file path, found one holding a NUL character") from None


def load_file(path: str | Path) -> Document:
    """Load a circuit, model or certificate from a UTF-8 JSON file (a regular file of at most
    ``symverify.ir.limits.MAX_FILE_BYTES`` bytes: :func:`symverify.ir.files.read_file`)."""
    raw = read_file(path)  # regular files of at most limits.MAX_FILE_BYTES only (not "": Path reads it as ".")
    try:
        return loads(raw)
    except SerializationError as e:
        raise SerializationError(f"{Path(path)}: {e}") from None


def _refuse_constant(text: str) -> Any:
    raise SerializationError(f"{text} is not a JSON number (symverify writes non-finite numbers as strings)")


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _nodes(v: Any, at: str) -> Iterator[tuple[Any, str]]:
    """Every value in the JSON value ``v``, keys included, with where it is. Iterative, each list or
    dict visited once: a value built in memory may nest deeper than any file or hold itself."""
    seen: set[int] = set()
    todo: list[tuple[Any, str]] = [(v, at)]
    while todo:
        x, where = todo.pop()
        yield x, where
        if isinstance(x, (dict, list)) and id(x) not in seen:
            seen.add(id(x))
            if isinstance(x, dict):
                for k, y in reversed(list(x.items())):
                    there = ((f"{where}." if where else "") + safe_repr(k, 40).strip("'\""))[:200]
                    todo += [(y, there), (k, f"{there} (the key)")]
            else:
                todo += [(y, f"{where}[{j}]"[:200]) for j, y in reversed(list(enumerate(x)))]


def _lone_surrogate(v: Any, at: str) -> tuple[str, str] | None:
    """Where in the JSON value ``v`` a string or key holds a lone surrogate, and which (None:
    nowhere)."""
    for x, where in _nodes(v, at):
        if isinstance(x, str):
            try:
                x.encode("utf-8")
            except UnicodeEncodeError as e:
                return where or "the top", f"\\u{ord(x[e.start]):04x}"
    return None


class _Inexact:
    """A float literal that is not the double it reads as (:func:`json_value` refuses it, saying where)."""

    __slots__ = ("text", "value")

    def __init__(self, text: str, value: float) -> None:
        self.text, self.value = text, value


def _parse_float(text: str) -> float | _Inexact:
    """A JSON float literal as the double it names: one whose decimal value is not that double's
    shortest decimal (``repr``) is marked: ``1.00000000000000001`` (1.0), ``1e400`` (inf), ``1e-400`` (0.0)."""
    value = float(text)
    try:
        if Decimal(text) == Decimal(repr(value)):
            return value
    except ArithmeticError:  # an exponent beyond the decimal module's range: no double's text
        pass
    return _Inexact(text, value)


class _LongInt:
    """An integer literal of more digits than Python's ``int`` reads (``sys.get_int_max_str_digits()``):
    :func:`json_value` refuses it, saying where, instead of ``json``'s bare "Exceeds the limit"."""

    __slots__ = ("digits",)

    def __init__(self, digits: int) -> None:
        self.digits = digits


def _parse_int_literal(text: str) -> int | _LongInt:
    """A JSON integer literal as its int, or a :class:`_LongInt` marker when it is too long to read."""
    try:
        return int(text)
    except ValueError:
        return _LongInt(len(text.lstrip("-")))


def json_value(text: str) -> Any:
    """The JSON value of ``text``, read as strictly as the documents above: no byte order mark,
    nesting within ``MAX_JSON_DEPTH``, no repeated key in an object, no ``NaN``/``Infinity``, no
    string or key holding a lone surrogate (``"\\ud800"``: valid JSON, but no text that can be
    printed or written as UTF-8).
    Numbers are read as Python's ``json`` reads them (proof runs hold 6-digit floats), except that a
    float literal must be the double it reads as, up to trailing zeros and exponent form (``1.5``,
    ``1.50``, ``15e-1``; what ``json.dumps`` writes always is): ``1.00000000000000001``, which would read
    as ``1.0`` within a bound of 1, ``1e400`` or ``1e-400`` are refused, naming where. The caller checks
    the fields. The one strict reader of JSON that is not a circuit, model or certificate:
    run files (:func:`read_json_file`), a script's result file, a sweep grid.

    Raises:
        SerializationError: saying what was wrong and where (also for ``text`` that is no ``str``).
    """
    if not isinstance(text, str):
        raise SerializationError(f"json_value: expected the text of a JSON document (a str), found {type(text).__name__}")
    _check_bom(text)
    _check_depth(text)
    found: set[type] = set()  # the kinds of refused literals read (_Inexact, _LongInt), each found again by _nodes below

    def noting(parse: Callable[[str], Any]) -> Callable[[str], Any]:
        def read(literal: str) -> Any:
            value = parse(literal)
            if isinstance(value, (_Inexact, _LongInt)):
                found.add(type(value))
            return value
        return read

    try:
        value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_refuse_constant,
                           parse_float=noting(_parse_float), parse_int=noting(_parse_int_literal))
    except json.JSONDecodeError as e:
        raise SerializationError(f"not valid JSON (truncated?): {e.msg} (line {e.lineno}, column {e.colno})") from None
    except (ValueError, RecursionError) as e:  # deep nesting
        raise SerializationError(f"not valid JSON: {safe_repr(str(e), 120)}") from None
    if _LongInt in found:
        import sys

        at, long = next((w, x) for x, w in _nodes(value, "") if isinstance(x, _LongInt))
        raise SerializationError(f"{at or 'the top'}: expected an integer of at most {sys.get_int_max_str_digits()} "
                                 f"digits (sys.get_int_max_str_digits()), found an integer literal of {long.digits} digits; "
                                 "symverify writes a number that long as an exact string")
    lone = _lone_surrogate(value, "") if _SURROGATE_ESCAPE.search(text) or not text.isascii() else None
    if lone is not None:
        raise SerializationError(f"not valid Unicode text: a lone surrogate {lone[1]} at {lone[0]}")
    if _Inexact in found:
        where, x = next((w, x) for x, w in _nodes(value, "") if isinstance(x, _Inexact))
        shown = x.text if len(x.text) <= 40 else x.text[:39] + "…"
        raise SerializationError(f"{where or 'the top'}: expected a float written as the double it reads as, found {shown} "
                                 f"(it reads as {x.value!r}); nothing is rounded on reading")
    return value


def read_json_file(path: str | Path, what: str) -> Any:
    """The JSON value in the file ``path`` (``what`` names it in messages: ``"the golden run"``):
    a regular file of at most ``MAX_FILE_BYTES`` bytes (:func:`symverify.ir.files.read_file`),
    UTF-8, read by :func:`json_value`.

    Raises:
        SerializationError: ``{path}: cannot read {what}: …``, saying what was wrong and where.
    """
    raw = read_file(path)
    p = Path(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SerializationError(f"{p}: cannot read {what}: not UTF-8 text: byte {raw[e.start]:#04x} at offset {e.start} "
                                 f"({e.reason})") from None
    try:
        return json_value(text)
    except SerializationError as e:
        raise SerializationError(f"{p}: cannot read {what}: {e}") from None

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
:data:`~symverify.ir.limits.MAX_JSON_INT` (exact values are strings), ``NaN``/``Infinity`` are
refused, nesting is bounded by :data:`~symverify.ir.limits.MAX_JSON_DEPTH`, and files must be
UTF-8. Every problem raises :class:`~symverify.errors.SerializationError` naming the field
(``layers[3].W.rects[0]``), what was expected and what was found; nothing is truncated, rounded
or ignored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from itertools import accumulate
from pathlib import Path
from typing import Any, Union

from symverify.errors import IRError, SerializationError
from symverify.ir import limits
from symverify.ir.baseconv import Layer, Mode, Model
from symverify.ir.bigint import parse_rational, rational_to_str, safe_repr, show_int
from symverify.ir.certificate import Certificate
from symverify.ir.circuit import Circuit, Gate, Op
from symverify.ir.grid import Grid
from symverify.ir.scalar import Scalar, Sym, sym

__all__ = ["to_json", "from_json", "dumps", "loads", "dump_file", "load_file", "CIRCUIT_FORMAT", "MODEL_FORMAT"]

CIRCUIT_FORMAT = "symverify.circuit"
MODEL_FORMAT = "symverify.model"
VERSION = 1
Document = Union[Circuit, Model, Certificate]


# ---- what the parser hands back for values that cannot be what any field expects ---------------
class _Literal:
    """A JSON literal symverify never accepts (an integer beyond MAX_JSON_INT, NaN, Infinity); kept
    as a marker so the field that holds it can be named in the error."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def describe(self) -> str:
        if self.text in ("NaN", "Infinity", "-Infinity"):
            return f"{self.text} (not a JSON number)"
        digits = len(self.text.lstrip("-"))
        return f"an integer literal of {digits} digits (beyond ±(2^63 − 1); exact values are strings such as '-1/2')"


def _kind(v: Any) -> str:
    """What a JSON value is, for 'found ...' in messages."""
    if isinstance(v, _Literal):
        return v.describe()
    if isinstance(v, float):
        return f"float {safe_repr(v)}"
    if isinstance(v, bool):
        return f"bool {'true' if v else 'false'}"
    return type(v).__name__


def _parse_int(text: str) -> Any:
    digits = len(text) - (text[0] == "-")
    if digits <= 18:
        return int(text)
    if digits > 19:
        return _Literal(text)
    v = int(text)
    return v if abs(v) <= limits.MAX_JSON_INT else _Literal(text)


def _parse_constant(text: str) -> Any:
    return _Literal(text)


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise SerializationError(f"duplicate key {safe_repr(k)} in a JSON object (JSON objects must not repeat a key)")
            seen.add(k)
    return out


# ---- typed field readers -------------------------------------------------------------------------
def _obj(v: Any, where: str, required: Iterable[str], optional: Iterable[str] = ()) -> dict[str, Any]:
    """``v`` as a JSON object with exactly the ``required`` keys and some of the ``optional`` ones."""
    if not isinstance(v, dict):
        raise SerializationError(f"{where}: expected a JSON object, found {_kind(v)}")
    required = tuple(required)
    for key in required:
        if key not in v:
            raise SerializationError(f"{where}: missing field {key!r}")
    allowed = set(required) | set(optional)
    unknown = [k for k in v if k not in allowed]
    if unknown:
        raise SerializationError(
            f"{where}: unknown field {safe_repr(unknown[0])}; expected only {sorted(allowed)}"
        )
    return v


def _field(obj: Any, key: str, typ: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(obj, dict):
        raise SerializationError(f"{where}: expected a JSON object, found {_kind(obj)}")
    if key not in obj:
        raise SerializationError(f"{where}: missing field {key!r}")
    val = obj[key]
    if not isinstance(val, typ) or isinstance(val, bool):
        tname = typ.__name__ if isinstance(typ, type) else "/".join(t.__name__ for t in typ)
        raise SerializationError(f"{where}.{key}: expected {tname}, found {_kind(val)}")
    return val


def _int(v: Any, where: str, least: int = 0) -> int:
    """A JSON integer ``≥ least`` (bools, floats and out-of-range literals refused)."""
    if type(v) is not int:
        raise SerializationError(f"{where}: expected int, found {_kind(v)}")
    if v < least or v > limits.MAX_JSON_INT:
        bound = "a positive int" if least == 1 else f"an int ≥ {least}"
        raise SerializationError(f"{where}: expected {bound}, found {show_int(v)}")
    return v


def _int_field(obj: dict[str, Any], key: str, where: str, least: int = 0) -> int:
    if key not in obj:
        raise SerializationError(f"{where}: missing field {key!r}")
    return _int(obj[key], f"{where}.{key}", least)


def _list(v: Any, where: str) -> list[Any]:
    if not isinstance(v, list):
        raise SerializationError(f"{where}: expected a list, found {_kind(v)}")
    return v


def _text(v: Any, where: str) -> str:
    """A string that is valid Unicode (no lone surrogates, which could not be printed or written)."""
    if not isinstance(v, str):
        raise SerializationError(f"{where}: expected str, found {_kind(v)}")
    try:
        v.encode("utf-8")
    except UnicodeEncodeError as e:
        raise SerializationError(f"{where}: not valid Unicode text (a lone surrogate \\u{ord(v[e.start]):04x} at character {e.start})") from None
    return v


def _version(data: dict[str, Any], where: str) -> None:
    if "version" not in data:
        raise SerializationError(f"{where}: missing field 'version'")
    version = data["version"]
    if type(version) is not int or version != VERSION:
        found = show_int(version) if type(version) is int else _kind(version)
        raise SerializationError(f"{where}.version: expected {VERSION}, found {found} (written by another symverify version?)")


# ---- scalars -------------------------------------------------------------------------------------
def scalar_to_json(x: Scalar, where: str = "value") -> Any:
    """``"-1/2"`` for a rational (exact, any size up to ``MAX_INT_DIGITS`` digits), ``{"sym": ...}`` for a Sym."""
    try:
        if isinstance(x, Sym):
            for m, _ in x.terms:
                for name, e in m:
                    if e > limits.MAX_JSON_INT:
                        raise SerializationError(f"{where}: the exponent of {name} has {len(bin(e)) - 2} bits, beyond 2^63 − 1")
            return {"sym": [[rational_to_str(c, where), dict(m)] for m, c in x.terms]}
        return rational_to_str(x, where)
    except IRError as e:
        raise SerializationError(f"cannot write {where} exactly: {e}") from None


def scalar_from_json(v: Any, where: str) -> Scalar:
    """A rational string (ASCII digits, any size up to ``MAX_INT_DIGITS`` digits, nonzero
    denominator) or ``{"sym": [[coeff, {name: exponent ≥ 1}], ...]}`` (repeated monomials add up)."""
    try:
        if isinstance(v, str):
            return parse_rational(v, where)
        if isinstance(v, dict):
            terms = _list(_obj(v, where, ("sym",))["sym"], f"{where}.sym")
            acc: dict[tuple[tuple[str, int], ...], Any] = {}
            for k, term in enumerate(terms):
                at = f"{where}.sym[{k}]"
                if not isinstance(term, list) or len(term) != 2:
                    raise SerializationError(f"{at}: expected [coeff, {{name: exponent}}], found {_kind(term)} {safe_repr(term)}")
                coeff = parse_rational(_text(term[0], f"{at}[0]"), f"{at}[0]")
                mono = term[1]
                if not isinstance(mono, dict):
                    raise SerializationError(f"{at}[1]: a symbolic term needs {{name: positive int exponent}}, found {_kind(mono)}")
                for name, e in mono.items():
                    sym(name)  # validates the name
                    _int(e, f"{at}[1].{name}", 1)
                key = tuple(sorted(mono.items()))
                acc[key] = acc.get(key, 0) + coeff
            from fractions import Fraction

            return Sym._make({m: Fraction(c) for m, c in acc.items()})
    except IRError as e:
        raise SerializationError(str(e)) from None
    raise SerializationError(
        f"{where}: expected a rational string such as '-1/2' or {{'sym': [...]}}, found {_kind(v)} {safe_repr(v, 60)}"
    )


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
            raise SerializationError(f"{at}: expected [row_start, row_stop, col_start, col_stop, value], found {_kind(r)} {safe_repr(r, 60)}")
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


def _check_size(v: int, where: str) -> int:
    if v > limits.MAX_JSON_INT:
        raise SerializationError(f"cannot write {where} = {show_int(v)}: sizes and node ids are JSON integers of at most 2^63 − 1")
    return v


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
    raise SerializationError(f"to_json: expected a Circuit, Model or Certificate, found {type(obj).__name__}")


_CIRCUIT_KEYS = ("format", "version", "n", "d", "gates", "outputs")
_MODEL_KEYS = ("format", "version", "n", "d", "inner_n", "inner_d", "layers")


def from_json(data: Any) -> Document:
    """Rebuild a circuit, model or certificate from its JSON document (validated, see the module doc)."""
    fmt = _field(data, "format", str, "document")
    if fmt == "symverify.certificate":
        return Certificate.from_json(data)
    if fmt not in (CIRCUIT_FORMAT, MODEL_FORMAT):
        raise SerializationError(
            f"document.format: expected one of {CIRCUIT_FORMAT!r}, {MODEL_FORMAT!r}, 'symverify.certificate'; found {safe_repr(fmt)}"
        )
    _version(data, "document")
    _obj(data, "document", _CIRCUIT_KEYS if fmt == CIRCUIT_FORMAT else _MODEL_KEYS, ("name",))
    name = _text(data["name"], "document.name") if "name" in data else ""
    n, d = _int_field(data, "n", "document", 1), _int_field(data, "d", "document", 1)
    try:
        if fmt == CIRCUIT_FORMAT:
            gates = tuple(_gate(g, k) for k, g in enumerate(_list(data["gates"], "document.gates")))
            return Circuit(n, d, gates, tuple(_outputs(data)), name)
        inner_n, inner_d = _int_field(data, "inner_n", "document", 1), _int_field(data, "inner_d", "document", 1)
        layers = []
        for i, lj in enumerate(_list(data["layers"], "document.layers")):
            where = f"layers[{i}]"
            _obj(lj, where, ("mode", "W", "b1", "h", "b2"))
            mode = lj["mode"]
            if mode not in ("causal", "cyclic"):
                raise SerializationError(f"{where}.mode: expected 'causal' or 'cyclic', found {_kind(mode) if not isinstance(mode, str) else repr(mode)}")
            grids = {k: _grid_from_json(lj[k], f"{where}.{k}") for k in ("W", "b1", "h", "b2")}
            try:
                layers.append(Layer(grids["W"], grids["b1"], grids["h"], grids["b2"], Mode(mode)))
            except IRError as e:
                raise SerializationError(f"{where}: {e}") from None
        return Model(n, d, inner_n, inner_d, tuple(layers), name)
    except SerializationError:
        raise
    except IRError as e:
        raise SerializationError(f"document is well-formed JSON but not a valid {fmt}: {e}") from None


def _gate(g: Any, k: int) -> Gate:
    where = f"gates[{k}]"
    if not isinstance(g, list) or len(g) != 3 or not isinstance(g[1], list) or not isinstance(g[2], list):
        raise SerializationError(f"{where}: expected [op, [args], [coeffs]], found {_kind(g)} {safe_repr(g, 60)}")
    ops = [o.value for o in Op]
    if not isinstance(g[0], str) or g[0] not in ops:
        raise SerializationError(f"{where}: unknown op {safe_repr(g[0])}; expected one of {ops}")
    for j, a in enumerate(g[1]):
        if type(a) is not int:
            raise SerializationError(f"{where}.args[{j}]: expected node ids (ints), found {_kind(a)}")
        _int(a, f"{where}.args[{j}]")
    return Gate(Op(g[0]), tuple(g[1]), tuple(scalar_from_json(c, f"{where}.coeffs") for c in g[2]))


def _outputs(data: Any) -> list[int]:
    outs = _list(data["outputs"], "document.outputs")
    for k, o in enumerate(outs):
        if type(o) is not int:
            raise SerializationError(f"document.outputs: expected a list of node ids (ints), found {_kind(o)} at index {k}")
        _int(o, f"document.outputs[{k}]")
    return outs


# ---- text and files ------------------------------------------------------------------------------
def dumps(obj: Document) -> str:
    """The compact JSON text of ``obj`` (ASCII only; see :func:`to_json`)."""
    return json.dumps(to_json(obj), separators=(",", ":"), allow_nan=False)


_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
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
    _check_depth(text)
    try:
        data = json.loads(text, parse_int=_parse_int, parse_constant=_parse_constant, object_pairs_hook=_pairs)
    except json.JSONDecodeError as e:
        raise SerializationError(f"not valid JSON (truncated?): {e.msg} (line {e.lineno}, column {e.colno})") from None
    except RecursionError:
        raise SerializationError(f"JSON nested too deeply (more than symverify.ir.limits.MAX_JSON_DEPTH = {limits.MAX_JSON_DEPTH})") from None
    except ValueError as e:  # e.g. a float literal Python cannot read
        raise SerializationError(f"not valid JSON: {safe_repr(str(e), 120)}") from None
    return from_json(data)


def dump_file(obj: Document, path: str | Path) -> None:
    """Write ``obj`` as JSON to ``path`` (:class:`SerializationError` if it cannot be written)."""
    text = dumps(obj)
    p = Path(path)
    try:
        p.write_text(text, encoding="utf-8")
    except OSError as e:
        raise SerializationError(f"cannot write {p}: {e.strerror or e}") from None


def load_file(path: str | Path) -> Document:
    """Load a circuit, model or certificate from a UTF-8 JSON file."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise SerializationError(f"cannot read {p}: {e.strerror or e}") from None
    try:
        return loads(raw)
    except SerializationError as e:
        raise SerializationError(f"{p}: {e}") from None

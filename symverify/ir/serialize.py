"""Versioned JSON for circuits, models and certificates; exact round trip.

Rationals are strings (``"-1/2"``); a symbolic scalar is ``{"sym": [[coeff, {name: exp}], ...]}``.
Every document carries ``"format"`` (``symverify.circuit``, ``symverify.model`` or
``symverify.certificate``) and ``"version"``. Malformed, truncated or wrong-version input raises
:class:`~symverify.errors.SerializationError` naming the field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Union

from symverify.errors import IRError, SerializationError
from symverify.ir.baseconv import Layer, Mode, Model
from symverify.ir.certificate import Certificate
from symverify.ir.circuit import Circuit, Gate, Op
from symverify.ir.grid import Grid
from symverify.ir.scalar import Scalar, Sym, as_scalar, sym

__all__ = ["to_json", "from_json", "dumps", "loads", "dump_file", "load_file", "CIRCUIT_FORMAT", "MODEL_FORMAT"]

CIRCUIT_FORMAT = "symverify.circuit"
MODEL_FORMAT = "symverify.model"
VERSION = 1
Document = Union[Circuit, Model, Certificate]


def scalar_to_json(x: Scalar) -> Any:
    if isinstance(x, Sym):
        return {"sym": [[str(c), dict(m)] for m, c in x.terms]}
    return str(x)


def scalar_from_json(v: Any, where: str) -> Scalar:
    try:
        if isinstance(v, str):
            return as_scalar(v, where)
        if isinstance(v, dict) and isinstance(v.get("sym"), list):
            total: Scalar = 0
            for c, mono in v["sym"]:
                if not isinstance(mono, dict) or not all(isinstance(e, int) and e > 0 for e in mono.values()):
                    raise SerializationError(f"{where}: a symbolic term needs {{name: positive int exponent}}, found {mono!r}")
                term: Scalar = as_scalar(c, where)
                for name, e in mono.items():
                    term = term * sym(name) ** e  # validates the name; repeated monomials add up
                total = total + term
            return total
    except IRError as e:
        raise SerializationError(str(e)) from None
    except (TypeError, ValueError):
        pass
    raise SerializationError(f"{where}: expected a rational string such as '-1/2' or {{'sym': [...]}}, found {v!r:.60}")


def _grid_to_json(g: Grid) -> dict[str, Any]:
    return {"shape": [g.rows, g.cols], "fill": scalar_to_json(g.fill), "rects": [[r0, r1, c0, c1, scalar_to_json(v)] for r0, r1, c0, c1, v in g.rects]}


def _grid_from_json(v: Any, where: str) -> Grid:
    shape = _field(v, "shape", list, where)
    rects = _field(v, "rects", list, where)
    if len(shape) != 2 or not all(isinstance(s, int) for s in shape):
        raise SerializationError(f"{where}.shape: expected [rows, cols], found {shape!r}")
    out = []
    for k, r in enumerate(rects):
        if not isinstance(r, list) or len(r) != 5 or not all(isinstance(i, int) for i in r[:4]):
            raise SerializationError(f"{where}.rects[{k}]: expected [row_start, row_stop, col_start, col_stop, value], found {r!r:.60}")
        out.append((r[0], r[1], r[2], r[3], scalar_from_json(r[4], f"{where}.rects[{k}]")))
    try:
        return Grid(shape[0], shape[1], scalar_from_json(v.get("fill", "0"), f"{where}.fill"), tuple(out))
    except IRError as e:
        raise SerializationError(f"{where}: {e}") from None


def _field(obj: Any, key: str, typ: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(obj, dict):
        raise SerializationError(f"{where}: expected a JSON object, found {type(obj).__name__}")
    if key not in obj:
        raise SerializationError(f"{where}: missing field {key!r}")
    val = obj[key]
    if not isinstance(val, typ) or isinstance(val, bool):
        tname = typ.__name__ if isinstance(typ, type) else "/".join(t.__name__ for t in typ)
        raise SerializationError(f"{where}.{key}: expected {tname}, found {type(val).__name__}")
    return val


def to_json(obj: Document) -> dict[str, Any]:
    """The JSON document of a circuit, model or certificate."""
    if isinstance(obj, Circuit):
        return {
            "format": CIRCUIT_FORMAT,
            "version": VERSION,
            "name": obj.name,
            "n": obj.n,
            "d": obj.d,
            "gates": [[g.op.value, list(g.args), [scalar_to_json(c) for c in g.coeffs]] for g in obj.gates],
            "outputs": list(obj.outputs),
        }
    if isinstance(obj, Model):
        return {
            "format": MODEL_FORMAT,
            "version": VERSION,
            "name": obj.name,
            "n": obj.n,
            "d": obj.d,
            "inner_n": obj.inner_n,
            "inner_d": obj.inner_d,
            "layers": [
                {"mode": layer.mode.value, **{name: _grid_to_json(g) for name, g in layer.grids()}} for layer in obj.layers
            ],
        }
    if isinstance(obj, Certificate):
        return obj.to_json()
    raise SerializationError(f"to_json: expected a Circuit, Model or Certificate, found {type(obj).__name__}")


def from_json(data: Any) -> Document:
    """Rebuild a circuit, model or certificate from its JSON document (validated)."""
    fmt = _field(data, "format", str, "document")
    if fmt == "symverify.certificate":
        return Certificate.from_json(data)
    if fmt not in (CIRCUIT_FORMAT, MODEL_FORMAT):
        raise SerializationError(f"document.format: expected one of {CIRCUIT_FORMAT!r}, {MODEL_FORMAT!r}, 'symverify.certificate'; found {fmt!r}")
    version = _field(data, "version", int, "document")
    if version != VERSION:
        raise SerializationError(f"document.version: expected {VERSION}, found {version} (written by another symverify version?)")
    name = data.get("name", "")
    n, d = _field(data, "n", int, "document"), _field(data, "d", int, "document")
    try:
        if fmt == CIRCUIT_FORMAT:
            return Circuit(n, d, tuple(_gate(g, k) for k, g in enumerate(_field(data, "gates", list, "document"))), tuple(_outputs(data)), name)
        layers = []
        for i, lj in enumerate(_field(data, "layers", list, "document")):
            where = f"layers[{i}]"
            mode = _field(lj, "mode", str, where)
            if mode not in ("causal", "cyclic"):
                raise SerializationError(f"{where}.mode: expected 'causal' or 'cyclic', found {mode!r}")
            grids = {k: _grid_from_json(_field(lj, k, dict, where), f"{where}.{k}") for k in ("W", "b1", "h", "b2")}
            layers.append(Layer(grids["W"], grids["b1"], grids["h"], grids["b2"], Mode(mode)))
        return Model(n, d, _field(data, "inner_n", int, "document"), _field(data, "inner_d", int, "document"), tuple(layers), name)
    except SerializationError:
        raise
    except IRError as e:
        raise SerializationError(f"document is well-formed JSON but not a valid {fmt}: {e}") from None


def _gate(g: Any, k: int) -> Gate:
    where = f"gates[{k}]"
    if not isinstance(g, list) or len(g) != 3 or not isinstance(g[1], list) or not isinstance(g[2], list):
        raise SerializationError(f"{where}: expected [op, [args], [coeffs]], found {g!r:.60}")
    try:
        op = Op(g[0])
    except ValueError:
        raise SerializationError(f"{where}: unknown op {g[0]!r}; expected one of {[o.value for o in Op]}") from None
    if not all(isinstance(a, int) and not isinstance(a, bool) for a in g[1]):
        raise SerializationError(f"{where}.args: expected node ids (ints), found {g[1]!r:.60}")
    return Gate(op, tuple(g[1]), tuple(scalar_from_json(c, f"{where}.coeffs") for c in g[2]))


def _outputs(data: Any) -> list[int]:
    outs = _field(data, "outputs", list, "document")
    if not all(isinstance(o, int) and not isinstance(o, bool) for o in outs):
        raise SerializationError("document.outputs: expected a list of node ids (ints)")
    return outs


def dumps(obj: Document) -> str:
    return json.dumps(to_json(obj), separators=(",", ":"))


def loads(text: str) -> Document:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise SerializationError(f"not valid JSON (truncated?): {e.msg} (line {e.lineno}, column {e.colno})") from None
    return from_json(data)


def dump_file(obj: Document, path: str | Path) -> None:
    Path(path).write_text(dumps(obj))


def load_file(path: str | Path) -> Document:
    """Load a circuit, model or certificate from a JSON file."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise SerializationError(f"cannot read {p}: {e.strerror}") from None
    try:
        return loads(text)
    except SerializationError as e:
        raise SerializationError(f"{p}: {e}") from None

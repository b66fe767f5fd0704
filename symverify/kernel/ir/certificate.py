"""Stage certificates: where a compiled model keeps the circuit's values (docs/theory.md §5).

A :class:`Certificate` is untrusted data attached to a compiled model. It cuts the layer stack
into stages by a list of :class:`Boundary` objects; boundary ``k`` sits after ``layer`` layers and
lists the nonzero cells of the state there. Each listed cell claims to hold an affine combination
of circuit nodes ``Σ coeff·node + const`` (usually one node with coefficient 1); every cell not
listed claims to be 0 (the clean-interface condition of Lemma H.11), except at the last boundary,
which claims only the ``N×d`` read-out block (the cells outside it are never read out). The checker in
:mod:`symverify.kernel.provers.compositional` derives each stage's function from the circuit's gates and
proves every claim on fresh variables, so a wrong certificate can only fail, never pass.

Rules: the first boundary is at layer 0 and lists exactly the embedded input (node i at
``(i // d, i % d)``); the last is at layer L and lists output k as the single node at
``(k // d, k % d)``; layers never decrease; no cell is listed twice at one boundary.

Construction checks the types (rows, columns, node ids and layers are non-negative ints, never
bools; coefficients are exact scalars; ``meta`` is text → text with distinct keys) and raises
:class:`~symverify.errors.IRError`; :meth:`Certificate.from_json` checks every field of the JSON
form (layers in non-decreasing order too: a file that breaks that rule is refused when read, while
an object made in memory reaches the checker, which refuses it) and raises
:class:`~symverify.errors.SerializationError` naming it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from symverify.errors import IRError, SerializationError
from symverify.ir.bigint import field_repr, safe_repr, short_name
from symverify.kernel.ir.affine import Affine
from symverify.kernel.ir.scalar import (
    Scalar,
    as_scalar,
    is_zero,
    param_names,
    plain_fields,
    plain_index,
    plain_items,
    plain_str,
)

__all__ = ["Cell", "Boundary", "Certificate", "FORMAT", "VERSION", "check_form", "field_kinds"]

FORMAT = "symverify.certificate"
VERSION = 1


def _index(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _plain(c: Cell) -> bool:
    """``c`` has non-negative ``int`` row and column, a tuple of ``(node, coefficient)`` tuples of
    ``int`` (nodes non-negative) and an ``int`` constant: every check of :class:`Cell` passes and
    normalises nothing (``as_scalar`` keeps an ``int``), so the cell is valid as given."""
    return (type(c.row) is int and type(c.col) is int and c.row >= 0 and c.col >= 0 and type(c.const) is int
            and type(c.terms) is tuple
            and all(type(t) is tuple and len(t) == 2 and type(t[0]) is int and t[0] >= 0 and type(t[1]) is int for t in c.terms))


_NEW, _SET = object.__new__, object.__setattr__  # Cell.node's direct construction


def _sequence(v: object) -> bool:
    """Whether ``v`` reads as an ordered sequence: not a str, bytes or mapping, iterable, and no 0-d
    array (numpy's has ``__iter__``, which raises ``TypeError``)."""
    return not isinstance(v, (str, bytes, Mapping)) and hasattr(v, "__iter__") and getattr(v, "ndim", None) != 0


@dataclass(frozen=True, slots=True)
class Cell:
    """Cell ``(row, col)`` holds ``Σ coeff·node + const``."""

    row: int
    col: int
    terms: tuple[tuple[int, Scalar], ...]
    const: Scalar = 0

    def __repr__(self) -> str:
        return field_repr(self)  # the generated repr, with huge integers abbreviated (never fails)

    def __post_init__(self) -> None:
        if _plain(self):
            return  # already in normal form: what the checks below would keep unchanged
        # an int subclass as its plain value: the checker compares, hashes and indexes with these
        # numbers, and a subclass could answer each differently (Boundary.layer likewise)
        plain_fields(self, "row", "col")
        if not (_index(self.row) and _index(self.col)):
            raise IRError(
                f"certificate cell: expected int row and column (non-negative), found ({safe_repr(self.row)}, {safe_repr(self.col)})"
            )
        where = f"certificate cell ({self.row}, {self.col})"
        if not _sequence(self.terms):
            raise IRError(f"{where}: expected a sequence of (node, coefficient) pairs, found {type(self.terms).__name__}")
        norm = []
        for t in plain_items(self.terms):  # a subclass as the items it stores (plain_items), each term too
            t = plain_items(t)
            if not isinstance(t, (tuple, list)) or len(t) != 2:
                raise IRError(f"{where}: expected (node, coefficient) pairs, found {safe_repr(t)}")
            node, co = t
            v = plain_index(node)
            if not _index(v):
                raise IRError(f"{where}: expected int node ids (non-negative), found {safe_repr(v)}")
            norm.append((v, as_scalar(co, f"{where} coefficient")))
        object.__setattr__(self, "terms", tuple(norm))
        object.__setattr__(self, "const", as_scalar(self.const, f"{where} constant"))

    def params(self) -> frozenset[str]:
        return param_names([co for _, co in self.terms] + [self.const])

    def form(self) -> Affine:
        """The cell's value as an affine form over circuit nodes (zero coefficients dropped)."""
        acc = Affine.constant(self.const)
        for v, co in self.terms:
            acc = acc + Affine({v: co}) if not is_zero(co) else acc
        return acc

    @staticmethod
    def of_form(row: int, col: int, f: Affine) -> Cell:
        """The cell ``(row, col)`` holding the affine form ``f`` (its terms sorted by node).

        When the cell is in normal form as given (:func:`_plain`: non-negative plain ``int`` row,
        column and nodes, plain ``int`` coefficients and constant) its fields are set directly, as
        :meth:`node` sets them: ``__post_init__`` would return at that same test and keep every
        field unchanged. Anything else goes through the constructor's checks (a compiled model's
        certificate builds a cell per tracked value, 166 000 in ``cor_h22_retnet``)."""
        terms = tuple(sorted(f.terms.items()))
        const = f.const
        if (type(row) is int and type(col) is int and row >= 0 and col >= 0 and type(const) is int
                and all(type(v) is int and v >= 0 and type(co) is int for v, co in terms)):
            c = _NEW(Cell)
            _SET(c, "row", row)
            _SET(c, "col", col)
            _SET(c, "terms", terms)
            _SET(c, "const", const)
            return c
        return Cell(row, col, terms, const)

    @staticmethod
    def node(row: int, col: int, node: int) -> Cell:
        """The cell ``(row, col)`` holding ``1·node``. Given three plain non-negative ``int`` s (what
        :func:`_plain` would find: the cell is valid as given and nothing is normalised) its fields
        are set directly, without the checks of ``__post_init__`` (a proof builds one per cell of a
        state, 360 000 in ``thm_h21_product_gadget``); anything else goes through them."""
        if type(row) is int and type(col) is int and type(node) is int and row >= 0 and col >= 0 and node >= 0:
            c = _NEW(Cell)
            _SET(c, "row", row)
            _SET(c, "col", col)
            _SET(c, "terms", ((node, 1),))
            _SET(c, "const", 0)
            return c
        return Cell(row, col, ((node, 1),), 0)

    def single_node(self) -> int | None:
        """The node when the cell holds exactly ``1·node``, else None."""
        if len(self.terms) == 1 and self.terms[0][1] == 1 and is_zero(self.const):
            return self.terms[0][0]
        return None

    def nodes(self) -> list[int]:
        return [v for v, _ in self.terms]


@dataclass(frozen=True, slots=True)
class Boundary:
    """The state after ``layer`` layers: the listed cells; all other cells are 0 (for the last
    boundary of a certificate: all other cells of the ``N×d`` read-out block)."""

    layer: int
    cells: tuple[Cell, ...]
    label: str = ""

    def __post_init__(self) -> None:
        plain_fields(self, "layer")
        if not _index(self.layer):
            raise IRError(f"certificate boundary: expected an int layer index (non-negative), found {safe_repr(self.layer)}")
        if not _sequence(self.cells):
            raise IRError(f"certificate boundary at layer {self.layer}: expected a sequence of Cells, found {type(self.cells).__name__}")
        object.__setattr__(self, "cells", tuple(plain_items(self.cells)))
        for c in self.cells:
            if type(c) is not Cell:  # a subclass could answer the checker's reads otherwise than its validation's
                sub = " (a subclass is not accepted)" if isinstance(c, Cell) else ""
                raise IRError(f"certificate boundary at layer {self.layer}: expected Cell objects, found {type(c).__name__}{sub}")
        if not isinstance(self.label, str):
            raise IRError(f"certificate boundary at layer {self.layer}: expected a str label, found {type(self.label).__name__}")
        if type(self.label) is not str:
            object.__setattr__(self, "label", plain_str(self.label))


@dataclass(frozen=True, slots=True)
class Certificate:
    """An ordered list of boundaries; stage k runs the layers between boundary k and k+1.

    ``meta`` is free text about the certificate's origin: ``(key, value)`` string pairs (a mapping
    is accepted and kept in its order) with distinct keys.
    """

    boundaries: tuple[Boundary, ...]
    meta: tuple[tuple[str, str], ...] = field(default=())

    def __post_init__(self) -> None:
        if not _sequence(self.boundaries):
            raise IRError(f"certificate: expected a sequence of Boundary objects, found {type(self.boundaries).__name__}")
        object.__setattr__(self, "boundaries", tuple(plain_items(self.boundaries)))
        for k, b in enumerate(self.boundaries):
            if type(b) is not Boundary:  # a subclass could answer the checker's reads otherwise than its validation's
                sub = " (a subclass is not accepted)" if isinstance(b, Boundary) else ""
                raise IRError(f"certificate boundary {k}: expected a Boundary, found {type(b).__name__}{sub}")
        meta = plain_items(self.meta)  # a dict, tuple or list subclass as the items it stores
        if isinstance(meta, Mapping):
            meta = tuple(meta.items())
        if not _sequence(meta):
            raise IRError(f"certificate meta: expected (key, value) string pairs, found {type(meta).__name__}")
        pairs = tuple(tuple(map(plain_str, p)) if isinstance(p, tuple) else p for p in map(plain_items, meta))
        seen: set[str] = set()
        for p in pairs:
            if not (isinstance(p, tuple) and len(p) == 2 and all(isinstance(x, str) for x in p)):
                raise IRError(f"certificate meta: expected (key, value) string pairs, found {safe_repr(p)}")
            if p[0] in seen:
                raise IRError(f"certificate meta: the key {p[0]!r} appears twice")
            seen.add(p[0])
        object.__setattr__(self, "meta", pairs)

    @property
    def num_stages(self) -> int:
        return max(0, len(self.boundaries) - 1)

    def __repr__(self) -> str:
        """A short summary (stages, cells, first and last labels); the full form is ``to_json``."""
        cells = sum(len(b.cells) for b in self.boundaries)
        labels = [b.label for b in self.boundaries if b.label]
        span = ("" if not labels else f", label {short_name(labels[0])}" if len(labels) == 1
                else f", labels {short_name(labels[0])} … {short_name(labels[-1])}")
        return f"Certificate({self.num_stages} stages, {len(self.boundaries)} boundaries, {cells} cells{span})"

    def _repr_html_(self) -> str:
        """A compact table for notebooks (:func:`symverify.viz.html.certificate_html`)."""
        from symverify.viz.html import certificate_html  # display is a lazily loaded view

        return certificate_html(self)

    # ---- JSON ---------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The JSON document: a cell is ``[row, col, node]`` when it holds one node with coefficient
        1, else ``[row, col, [[node, coeff], ...], const]``; coefficients are exact scalars in
        :mod:`symverify.ir.serialize`'s form (rational strings of any size, or ``{"sym": ...}``).

        Raises:
            SerializationError: an index beyond ``MAX_JSON_INT``, a meta string that is not valid
                Unicode, or an integer of more than ``MAX_INT_DIGITS`` digits.
        """
        from symverify.ir.jsonfields import _check_size, _text, scalar_to_json  # the file format (untrusted)

        def cell(c: Cell, where: str) -> list[Any]:
            for index in (c.row, c.col, *c.nodes()):
                _check_size(index, f"{where} index")
            node = c.single_node()
            if node is not None:
                return [c.row, c.col, node]
            terms = [[n, scalar_to_json(x, f"{where} coefficient")] for n, x in c.terms]
            return [c.row, c.col, terms, scalar_to_json(c.const, f"{where} constant")]

        bounds = []
        for k, b in enumerate(self.boundaries):
            where = f"certificate boundaries[{k}]"
            _check_size(b.layer, f"{where}.layer")
            bounds.append({"layer": b.layer, "label": _text(b.label, f"{where}.label"),
                           "cells": [cell(c, f"{where}.cells[{j}]") for j, c in enumerate(b.cells)]})
        return {
            "format": FORMAT,
            "version": VERSION,
            "meta": {_text(k, "certificate meta key"): _text(v, f"certificate meta[{k!r}]") for k, v in self.meta},
            "boundaries": bounds,
        }

    @staticmethod
    def from_json(data: Any) -> Certificate:
        """Rebuild a certificate from :meth:`to_json`'s form, checking every field.

        Raises:
            SerializationError: naming the field (``certificate boundaries[2].cells[5][0]``), what
                was expected and what was found.
        """
        from symverify.ir.jsonfields import _int, _kind, _list, _obj, _text, scalar_from_json  # the file format

        if not isinstance(data, dict):
            raise SerializationError(f"certificate: expected a JSON object, found {_kind(data)}")
        if data.get("format") != FORMAT:
            raise SerializationError(f"certificate field 'format': expected {FORMAT!r}, found {safe_repr(data.get('format'))}")
        version = data.get("version")
        if type(version) is not int or version != VERSION:
            raise SerializationError(f"certificate field 'version': expected {VERSION}, found {safe_repr(version)}")
        _obj(data, "certificate", ("format", "version", "boundaries"), ("meta",))
        bounds = data["boundaries"]
        if not isinstance(bounds, list):
            raise SerializationError(f"certificate field 'boundaries': expected a list, found {_kind(bounds)}")
        shape = "expected [row, col, node] or [row, col, [[node, coeff], ...], const]"
        out: list[Boundary] = []
        for k, b in enumerate(bounds):
            where = f"certificate boundaries[{k}]"
            if not isinstance(b, dict):
                raise SerializationError(f"{where}: expected {{'layer': int, 'cells': [...]}}, found {_kind(b)} {safe_repr(b)}")
            _obj(b, where, ("layer", "cells"), ("label",))
            layer = _int(b["layer"], f"{where}.layer")
            if out and layer < out[-1].layer:
                raise SerializationError(f"{where}.layer: expected a layer ≥ {out[-1].layer} (that of boundaries[{k - 1}]: "
                                         f"layers never decrease), found {layer}")
            label = _text(b["label"], f"{where}.label") if "label" in b else ""
            cells = []
            for j, c in enumerate(_list(b["cells"], f"{where}.cells")):
                at = f"{where}.cells[{j}]"
                if not isinstance(c, list) or len(c) not in (3, 4) or (len(c) == 3) != (not isinstance(c[2], list)):
                    raise SerializationError(f"{at}: {shape}, found {_kind(c)} {safe_repr(c)}")
                row, col = _int(c[0], f"{at}[0] (row)"), _int(c[1], f"{at}[1] (col)")
                # every field is checked here (ints ≥ 0, exact scalars: scalar_from_json raises
                # SerializationError), which is all that Cell checks: Cell raises no IRError
                if len(c) == 3:
                    cells.append(Cell.node(row, col, _int(c[2], f"{at}[2] (node)")))
                    continue
                terms = []
                for t, term in enumerate(c[2]):
                    if not isinstance(term, list) or len(term) != 2:
                        raise SerializationError(f"{at}[2][{t}]: expected [node, coeff], found {_kind(term)} {safe_repr(term)}")
                    terms.append((_int(term[0], f"{at}[2][{t}][0] (node)"), scalar_from_json(term[1], f"{at}[2][{t}][1]")))
                cells.append(Cell(row, col, tuple(terms), scalar_from_json(c[3], f"{at}[3] (const)")))
            out.append(Boundary(layer, tuple(cells), label))
        meta = data.get("meta", {})
        if not isinstance(meta, dict):
            raise SerializationError(f"certificate field 'meta': expected an object of strings, found {_kind(meta)}")
        pairs = tuple((_text(key, "certificate meta key"), _text(v, f"certificate meta[{safe_repr(key)}]")) for key, v in meta.items())
        return Certificate(tuple(out), pairs)


def check_form(cert: object) -> None:
    """Raise :class:`IRError` unless ``cert`` is a :class:`Certificate` itself whose containers are as
    its constructors make them: a ``tuple`` of :class:`Boundary` objects (each with a plain ``int``
    layer, a ``str`` label and a ``tuple`` of cells) and ``meta`` a ``tuple`` of ``(str, str)`` pairs.
    A model side takes its certificate only after this check
    (:class:`~symverify.kernel.provers.sides.ModelSide`), and the certificate checker asks it first
    (:func:`~symverify.kernel.provers.compositional.validate_certificate`, which checks the cells too):
    a field set after construction (``object.__setattr__`` skips the constructors' checks) is then
    this error, never a ``TypeError`` or a reading that differs from the stages'."""
    if type(cert) is not Certificate:
        sub = " (a subclass is not accepted)" if isinstance(cert, Certificate) else ""
        raise IRError(f"certificate: expected a Certificate, found {type(cert).__name__}{sub}")
    bs = cert.boundaries
    if type(bs) is not tuple:  # a subclass may index otherwise than it iterates
        raise IRError(f"certificate: expected its boundaries as a tuple, found {type(bs).__name__} "
                      "(a field set after construction?)")
    for k, b in enumerate(bs):
        if type(b) is not Boundary or type(b.layer) is not int or type(b.label) is not str or type(b.cells) is not tuple:
            raise IRError(f"certificate boundary {k}: expected a Boundary with an int layer, a str label and a tuple "
                          f"of cells, found {field_kinds(b, 'layer', 'label', 'cells')} (a field set after construction?)")
    meta = cert.meta
    if type(meta) is not tuple or not all(type(p) is tuple and len(p) == 2 and type(p[0]) is str and type(p[1]) is str
                                          for p in meta):
        raise IRError(f"certificate meta: expected a tuple of (key, value) str pairs, found {safe_repr(meta, 80)} "
                      "(a field set after construction?)")


def field_kinds(obj: object, *names: str) -> str:
    """``obj``'s type and the types of its fields ``names``, for an error message."""
    return f"{type(obj).__name__}(" + ", ".join(f"{n}: {type(getattr(obj, n, None)).__name__}" for n in names) + ")"

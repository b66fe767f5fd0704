"""Stage certificates: where a compiled model keeps the circuit's values (THEORY §5).

A :class:`Certificate` is untrusted data attached to a compiled model. It cuts the layer stack
into stages by a list of :class:`Boundary` objects; boundary ``k`` sits after ``layer`` layers and
lists the nonzero cells of the state there. Each listed cell claims to hold an affine combination
of circuit nodes ``Σ coeff·node + const`` (usually one node with coefficient 1); every cell not
listed claims to be 0 (the clean-interface condition of Lemma H.11). The checker in
:mod:`symverify.prove.compositional` derives each stage's function from the circuit's gates and
proves every claim on fresh variables, so a wrong certificate can only fail, never pass.

Rules: the first boundary is at layer 0 and lists exactly the embedded input (node i at
``(i // d, i % d)``); the last is at layer L and lists output k as the single node at
``(k // d, k % d)``; layers never decrease; no cell is listed twice at one boundary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from symverify.errors import IRError, SerializationError
from symverify.ir.scalar import Scalar, as_scalar, is_zero, param_names

__all__ = ["Cell", "Boundary", "Certificate", "FORMAT", "VERSION"]

FORMAT = "symverify.certificate"
VERSION = 1


@dataclass(frozen=True, slots=True)
class Cell:
    """Cell ``(row, col)`` holds ``Σ coeff·node + const``."""

    row: int
    col: int
    terms: tuple[tuple[int, Scalar], ...]
    const: Scalar = 0

    def __post_init__(self) -> None:
        if type(self.row) is not int or type(self.col) is not int:
            raise IRError(f"certificate cell: expected int row and column, found ({self.row!r}, {self.col!r})")
        terms = tuple(self.terms)
        for v, _ in terms:
            if type(v) is not int:
                raise IRError(f"certificate cell ({self.row}, {self.col}): expected int node ids, found {v!r}")
        norm = tuple((v, as_scalar(co, f"certificate cell ({self.row}, {self.col}) coefficient")) for v, co in terms)
        object.__setattr__(self, "terms", norm)
        object.__setattr__(self, "const", as_scalar(self.const, f"certificate cell ({self.row}, {self.col}) constant"))

    def params(self) -> frozenset[str]:
        return param_names([co for _, co in self.terms] + [self.const])

    @staticmethod
    def node(row: int, col: int, node: int) -> Cell:
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
    """The state after ``layer`` layers: the listed cells; all other cells are 0."""

    layer: int
    cells: tuple[Cell, ...]
    label: str = ""

    def __post_init__(self) -> None:
        if type(self.layer) is not int:
            raise IRError(f"certificate boundary: expected an int layer index, found {self.layer!r}")
        object.__setattr__(self, "cells", tuple(self.cells))
        for c in self.cells:
            if not isinstance(c, Cell):
                raise IRError(f"certificate boundary at layer {self.layer}: expected Cell objects, found {type(c).__name__}")


@dataclass(frozen=True, slots=True)
class Certificate:
    """An ordered list of boundaries; stage k runs the layers between boundary k and k+1."""

    boundaries: tuple[Boundary, ...]
    meta: tuple[tuple[str, str], ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "boundaries", tuple(self.boundaries))

    @property
    def num_stages(self) -> int:
        return max(0, len(self.boundaries) - 1)

    def __repr__(self) -> str:
        """A short summary (stages, cells, first and last labels); the full form is ``to_json``."""
        cells = sum(len(b.cells) for b in self.boundaries)
        labels = [b.label for b in self.boundaries if b.label]
        span = f", labels {labels[0]!r:.40} … {labels[-1]!r:.40}" if labels else ""
        return f"Certificate({self.num_stages} stages, {len(self.boundaries)} boundaries, {cells} cells{span})"

    def shifted(self, layers: int) -> Certificate:
        """The same certificate with every layer index moved by ``layers`` (for stacking)."""
        return Certificate(tuple(Boundary(b.layer + layers, b.cells, b.label) for b in self.boundaries), self.meta)

    # ---- JSON ---------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        def cell(c: Cell) -> list[Any]:
            v = c.single_node()
            if v is not None:
                return [c.row, c.col, v]
            return [c.row, c.col, [[n, str(x)] for n, x in c.terms], str(c.const)]

        return {
            "format": FORMAT,
            "version": VERSION,
            "meta": dict(self.meta),
            "boundaries": [{"layer": b.layer, "label": b.label, "cells": [cell(c) for c in b.cells]} for b in self.boundaries],
        }

    @staticmethod
    def from_json(data: Any) -> Certificate:
        if not isinstance(data, dict):
            raise SerializationError(f"certificate: expected a JSON object, found {type(data).__name__}")
        if data.get("format") != FORMAT:
            raise SerializationError(f"certificate field 'format': expected {FORMAT!r}, found {data.get('format')!r}")
        if data.get("version") != VERSION:
            raise SerializationError(f"certificate field 'version': expected {VERSION}, found {data.get('version')!r}")
        bounds = data.get("boundaries")
        if not isinstance(bounds, list):
            raise SerializationError("certificate field 'boundaries': expected a list")
        out = []
        for k, b in enumerate(bounds):
            where = f"certificate boundaries[{k}]"
            if not isinstance(b, dict) or not isinstance(b.get("layer"), int) or not isinstance(b.get("cells"), list):
                raise SerializationError(f"{where}: expected {{'layer': int, 'cells': [...]}}, found {b!r:.80}")
            cells = []
            for j, c in enumerate(b["cells"]):
                try:
                    if len(c) == 3 and isinstance(c[2], int):
                        cells.append(Cell.node(int(c[0]), int(c[1]), c[2]))
                    else:
                        terms = tuple((int(n), as_scalar(x, f"{where}.cells[{j}]")) for n, x in c[2])
                        cells.append(Cell(int(c[0]), int(c[1]), terms, as_scalar(c[3], f"{where}.cells[{j}]")))
                except (TypeError, ValueError, IndexError, IRError) as e:
                    raise SerializationError(f"{where}.cells[{j}]: expected [row, col, node] or [row, col, [[node, coeff], ...], const], found {c!r:.80} ({e})") from None
            out.append(Boundary(b["layer"], tuple(cells), str(b.get("label", ""))))
        meta = data.get("meta", {})
        return Certificate(tuple(out), tuple(sorted((str(k), str(v)) for k, v in meta.items())))

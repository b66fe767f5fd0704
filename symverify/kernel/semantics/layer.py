"""The BaseConv layer and the model loop, once, for every backend (docs/theory.md §1.1–§1.2).

One layer maps an ``N'×d'`` state ``x`` to

    y = (x·W + b1) ⊙ (h ⊛ x + b2)

(``⊛`` convolves each column along the rows, causal or cyclic); a model embeds its ``N×d`` input
in the top-left corner of a zero ``N'×d'`` state, applies its layers in order and reads the
top-left ``N×d`` block back. :func:`run_layer` and :func:`run_model` are the only statement of
this: they fix the steps, their order and when work may be skipped. A backend supplies the
numbers as an :class:`Arithmetic`: how it prepares a layer (its *plan*: weights converted,
structure found), the two branches, their product, the embedding and the crop.

The backends:

- :class:`~symverify.kernel.semantics.evaluate.RingArithmetic`: nested lists of values of any
  :class:`~symverify.kernel.semantics.rings.Ring` (exact rationals, residues, polynomials, degree
  bounds, z3 terms …), cell by cell;
- :mod:`symverify.kernel.provers.modular`: numpy object arrays of Python ints mod a batch of primes;
- :mod:`symverify.executors.torch_float`, :mod:`symverify.kernel.engines.torch_modular`: torch tensors
  in a float dtype, or int64 residues mod a prime below 2^31;
- :mod:`symverify.executors.numeric`: the float backend with a running error bound.

Order and skipping. The convolution branch ``h ⊛ x + b2`` is computed first. A branch that is
identically zero is ``None``; when the convolution branch is, the projection ``x·W + b1`` is not
computed at all, and :meth:`Arithmetic.combine` returns the zero state (the product is zero
whatever the other factor). A backend may skip more inside a branch (a cell whose convolution is
exactly zero needs no projection), never anything that could be nonzero.

``check`` (:mod:`symverify.deadline`) runs before every layer; backends that can run long inside
one layer check there too.

A toy backend shows the protocol (Python ints; causal layers without biases or padding only);
``h = e_0`` and ``W = I`` square the input:

>>> class Ints:
...     def prepare(self, layer): return layer.W.to_rows(), layer.h.to_rows()
...     def convolve(self, plan, x):
...         h = plan[1]
...         return [[sum(h[k][j] * x[i - k][j] for k in range(i + 1)) for j in range(len(row))] for i, row in enumerate(x)]
...     def project(self, plan, x, conv):
...         W = plan[0]
...         return [[sum(a * W[p][q] for p, a in enumerate(row)) for q in range(len(row))] for row in x]
...     def combine(self, plan, x, proj, conv):
...         return [[a * b for a, b in zip(r, s)] for r, s in zip(proj, conv)]
...     def embed(self, u, shape): return [list(row) for row in u]
...     def crop(self, x, shape): return x
...     def retire(self, old, new): pass
>>> from symverify.kernel.ir.baseconv import Layer, Model
>>> from symverify.kernel.ir.grid import Grid
>>> m = Model(2, 1, 2, 1, (Layer.make(2, 1, W=Grid.identity(1), h=Grid.from_rows([[1], [0]])),))
>>> run_model(m, m.layers, [[3], [-2]], Ints())
[[9], [4]]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, TypeVar

from symverify.deadline import Check

__all__ = ["Arithmetic", "Shape", "layer_parts", "run_layer", "run_layers", "run_model"]

LayerT = TypeVar("LayerT", contravariant=True)
PlanT = TypeVar("PlanT")
StateT = TypeVar("StateT")


class Shape(Protocol):
    """A model's sizes: input ``n×d`` inside an ``inner_n×inner_d`` state (a :class:`~symverify.kernel.ir.baseconv.Model` is one)."""

    @property
    def n(self) -> int: ...

    @property
    def d(self) -> int: ...

    @property
    def inner_n(self) -> int: ...

    @property
    def inner_d(self) -> int: ...


class Arithmetic(Protocol[LayerT, PlanT, StateT]):
    """What :func:`run_layer` and :func:`run_model` need from a backend.

    ``LayerT``: what the backend is given per layer (a :class:`~symverify.kernel.ir.baseconv.Layer`, or a
    plan built in advance); ``PlanT``: what it computes with; ``StateT``: an ``N'×d'`` state (or a
    batch of them). A branch is whatever the backend keeps (a tensor, a lazy stream of cells …);
    the loop only tells ``None`` (identically zero) from the rest.
    """

    def prepare(self, layer: LayerT) -> PlanT:
        """The layer in the form the backend computes with; called once per layer, after ``check``."""
        ...

    def convolve(self, plan: PlanT, x: StateT) -> Any:
        """``h ⊛ x + b2`` (causal or cyclic, per column); None when identically zero."""
        ...

    def project(self, plan: PlanT, x: StateT, conv: Any) -> Any:
        """``x·W + b1``, needed only where ``conv`` is not zero; None when identically zero."""
        ...

    def combine(self, plan: PlanT, x: StateT, proj: Any, conv: Any) -> StateT:
        """``proj ⊙ conv``, a new state shaped like ``x``; the zero state when a branch is None."""
        ...

    def embed(self, u: Any, shape: Shape) -> StateT:
        """The ``n×d`` input ``u`` in the top-left corner of a zero ``inner_n×inner_d`` state."""
        ...

    def crop(self, x: StateT, shape: Shape) -> StateT:
        """The top-left ``n×d`` block of ``x``."""
        ...

    def retire(self, old: StateT, new: StateT) -> None:
        """The loop no longer needs ``old`` (``new`` is live): a backend may recycle its storage."""
        ...


def layer_parts(plan: PlanT, x: StateT, arith: Arithmetic[Any, PlanT, StateT]) -> tuple[Any, Any]:
    """The two branches ``(x·W + b1, h ⊛ x + b2)`` of one layer (docs/theory.md §1.1); None for a branch
    that is identically zero. The convolution comes first, and the projection is not computed
    when the convolution branch is identically zero."""
    conv = arith.convolve(plan, x)
    return (None if conv is None else arith.project(plan, x, conv)), conv


def run_layer(plan: PlanT, x: StateT, arith: Arithmetic[Any, PlanT, StateT]) -> StateT:
    """One layer ``(x·W + b1) ⊙ (h ⊛ x + b2)`` on the state ``x`` (docs/theory.md §1.1)."""
    proj, conv = layer_parts(plan, x, arith)
    return arith.combine(plan, x, proj, conv)


def run_layers(layers: Iterable[LayerT], x: StateT, arith: Arithmetic[LayerT, Any, StateT],
               check: Check | None = None) -> StateT:
    """Apply ``layers`` in order to the state ``x``; ``check`` runs before every layer.

    The states the loop has finished with, ``x`` included, are handed to
    :meth:`Arithmetic.retire` (a backend that recycles buffers must own ``x``)."""
    for layer in layers:
        if check is not None:
            check()
        y = run_layer(arith.prepare(layer), x, arith)
        arith.retire(x, y)
        x = y
    return x


def run_model(shape: Shape, layers: Iterable[LayerT], u: Any, arith: Arithmetic[LayerT, Any, StateT],
              check: Check | None = None) -> StateT:
    """A model on the input ``u``: embed it in a zero state, apply every layer, crop (docs/theory.md §1.2).

    ``shape`` gives the sizes (usually the :class:`~symverify.kernel.ir.baseconv.Model` itself) and
    ``layers`` what :meth:`Arithmetic.prepare` takes (its layers, or their plans); ``check`` as in
    :func:`run_layers`."""
    return arith.crop(run_layers(layers, arith.embed(u, shape), arith, check), shape)

"""The two things ``verify`` compares, each read as a polynomial map ``F^{n×d} → F^{n×d}``.

A side is a circuit (docs/theory.md §2), a BaseConv model (docs/theory.md §1.2), or a kaleidoscope matrix
``M ∈ (BB*)^w_e`` (docs/theory.md §3), which acts on ``vec(u)`` row-major: ``vec(y) = M·vec(u)``. A
kaleidoscope takes the ``n×d`` shape of the other side when ``n·d`` equals its ``n``, else
``n×1``. A compiled object (anything with ``.model`` and ``.certificate``) is its model plus the
stage certificate. Every side evaluates over any ring of the interpreter protocol
(:mod:`symverify.kernel.semantics.evaluate`).

:data:`Side` is a closed union, one frozen dataclass per kind: :class:`CircuitSide`,
:class:`ModelSide`, :class:`KaleidoscopeSide`. What every side can do (``params``, ``evaluate``,
``cost``, ``describe``, ``label``) is a method of each class; code that treats kinds differently
dispatches with ``match`` and ends in :func:`assert_never`, so a new kind is a type error until
every such place handles it. ``kind`` (``"circuit"``, ``"model"``, ``"kaleidoscope"``) is each
class's fixed name, used in reports, labels and the randomized method's fingerprint.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal, NoReturn, TypeGuard

from symverify.deadline import Check
from symverify.errors import IRError, ShapeError
from symverify.kernel.ir.analysis import check_state, params_of, read_attribute
from symverify.kernel.ir.baseconv import Model
from symverify.kernel.ir.butterfly import Kaleidoscope
from symverify.kernel.ir.certificate import Certificate, check_form
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.scalar import param_names
from symverify.kernel.provers.fingerprint import check_plain
from symverify.kernel.semantics.evaluate import State, check_input, eval_circuit, eval_model
from symverify.kernel.semantics.straightline import program

if sys.version_info >= (3, 11):
    from typing import assert_never
else:  # pragma: no cover - Python 3.10

    def assert_never(arg: NoReturn, /) -> NoReturn:
        raise AssertionError(f"unhandled case: {arg!r}")


__all__ = ["Side", "CircuitSide", "ModelSide", "KaleidoscopeSide", "TorchSide", "as_side", "pair_sides",
           "certificate_of", "torch_executable", "assert_never"]


class _Shaped:
    """What every side shares: its ``n×d`` shape and its label (``kind``, name and shape)."""

    kind: ClassVar[str]
    obj: Any
    n: int
    d: int

    @property
    def shape(self) -> tuple[int, int]:
        return (self.n, self.d)

    @property
    def num_inputs(self) -> int:
        return self.n * self.d

    def label(self) -> str:
        name = getattr(self.obj, "name", "") or ""
        return f"{self.kind} {name}".strip() + f" ({self.n}×{self.d})"


@dataclass(frozen=True)
class CircuitSide(_Shaped):
    """An arithmetic circuit (docs/theory.md §2): its outputs, in row-major order, are the ``n×d`` map."""

    obj: Circuit
    n: int
    d: int
    kind: ClassVar[Literal["circuit"]] = "circuit"

    def params(self) -> frozenset[str]:
        """Names of the symbolic coefficients, read from the program's distinct coefficients
        (:func:`~symverify.kernel.semantics.straightline.program`, cached per circuit)."""
        return param_names(program(self.obj).scalars)

    def evaluate(self, u: Sequence[Sequence[Any]], ring: Any, check: Check | None = None) -> State:
        """The ``n×d`` output on input ``u`` over ``ring``; ``check`` (:mod:`symverify.deadline`)
        runs every few hundred operations and may raise ``DeadlineExceededError``."""
        return eval_circuit(self.obj, u, ring, check)

    def cost(self) -> int:
        """A rough operation count of one evaluation (for size guards): gates plus inputs."""
        return len(self.obj.gates) + self.num_inputs

    def describe(self) -> dict[str, Any]:
        """The statistics a report shows (``symverify info``): the circuit measures, ``O(gates)``, kept
        for the circuit :func:`as_side` checked."""
        from symverify.kernel.ir.analysis import checked_stats

        return {"kind": "circuit", "name": self.obj.name, **checked_stats(self.obj).to_json(), "symbols": sorted(self.params())}


@dataclass(frozen=True)
class ModelSide(_Shaped):
    """A BaseConv model (docs/theory.md §1.2), with the stage certificate that came with it, if any."""

    obj: Model
    n: int
    d: int
    certificate: Certificate | None = None
    kind: ClassVar[Literal["model"]] = "model"

    def __post_init__(self) -> None:
        if self.certificate is not None:  # every reader of the side reads it in its constructors' form
            check_form(self.certificate)

    def params(self) -> frozenset[str]:
        """Names of the symbolic weights."""
        return params_of(self.obj)

    def evaluate(self, u: Sequence[Sequence[Any]], ring: Any, check: Check | None = None) -> State:
        """As :meth:`CircuitSide.evaluate`, through the BaseConv interpreter."""
        return eval_model(self.obj, u, ring, check)

    def terms(self) -> tuple[int, int, int]:
        """``(L, cells, macs)`` of one evaluation: the layers, ``L·N'·d'`` state cells, and the
        nonzero entries of every ``W`` and ``h`` times ``N'`` (multiply-adds), from the grids'
        rectangles (never cell by cell)."""
        m = self.obj
        per = sum(layer.W.nonzero_count() + layer.h.nonzero_count() for layer in m.layers)
        return len(m.layers), len(m.layers) * m.inner_n * m.inner_d, per * m.inner_n

    def cost(self) -> int:
        """A rough operation count of one evaluation: cells plus multiply-adds (:meth:`terms`)."""
        _, cells, macs = self.terms()
        return cells + macs

    def describe(self) -> dict[str, Any]:
        """Signature and parameter counts, from the grids' rectangles: a model with ``N' = 10^9``
        is described at once."""
        m = self.obj
        out: dict[str, Any] = {
            "kind": "model",
            "name": m.name,
            "signature": list(m.signature),
            "layers": m.depth,
            "param_count": m.param_count(),
            "nonzero_params": m.nonzero_param_count(),
            "modes": sorted(mode.value for mode in m.modes()),
            "symbols": sorted(self.params()),
        }
        if self.certificate is not None:
            out["certificate_stages"] = self.certificate.num_stages
        return out


@dataclass(frozen=True)
class KaleidoscopeSide(_Shaped):
    """A kaleidoscope matrix ``M`` acting on ``vec(u)`` (docs/theory.md §3); ``n×d`` is the shape it is
    read in (``n·d = M.n``)."""

    obj: Kaleidoscope
    n: int
    d: int
    kind: ClassVar[Literal["kaleidoscope"]] = "kaleidoscope"

    def params(self) -> frozenset[str]:
        """Names of the symbolic weights."""
        from symverify.kernel.kaleidoscope.apply import params_of

        return frozenset(params_of(self.obj))

    def evaluate(self, u: Sequence[Sequence[Any]], ring: Any, check: Check | None = None) -> State:
        """``M·vec(u)``, reshaped to ``n×d``; ``u`` must be ``n`` rows of ``d`` values (as for the
        other kinds: :func:`~symverify.kernel.semantics.evaluate.check_input`, a :class:`ShapeError`
        otherwise), never any array with ``n·d`` entries in all."""
        from symverify.kernel.kaleidoscope.apply import apply

        u = check_input(u, self.n, self.d, "kaleidoscope")
        flat = apply(self.obj, [x for row in u for x in row], ring, check=check)
        return [flat[i * self.d : (i + 1) * self.d] for i in range(self.n)]

    def cost(self) -> int:
        """A rough operation count of one evaluation: factors times size."""
        k = self.obj
        return sum(len(g.factors) for g in k.groups) * k.size

    def describe(self) -> dict[str, Any]:
        k = self.obj
        return {"kind": "kaleidoscope", "n": k.n, "size": k.size, "width": k.width, "expansion": str(k.expansion),
                "shape": [self.n, self.d], "symbols": sorted(self.params())}


Side = CircuitSide | ModelSide | KaleidoscopeSide
"""One side of a comparison: the object, its ``n×d`` shape and (for a model) its certificate."""

TorchSide = CircuitSide | ModelSide
"""A side the torch executors run (:func:`torch_executable`)."""


def certificate_of(side: Side) -> Certificate | None:
    """The stage certificate attached to ``side`` (only a model has one)."""
    match side:
        case ModelSide(certificate=cert):
            return cert
        case CircuitSide() | KaleidoscopeSide():
            return None
        case _:
            assert_never(side)


def torch_executable(side: Side) -> TypeGuard[TorchSide]:
    """Whether the torch executors (float and int64 modular) run this side: models and circuits."""
    match side:
        case CircuitSide() | ModelSide():
            return True
        case KaleidoscopeSide():
            return False
        case _:
            assert_never(side)


_MISSING = object()


def as_side(obj: Any, what: str = "argument") -> Side:
    """Read ``obj`` as a side; anything that is not a circuit, model, kaleidoscope or compiled
    object raises :class:`IRError`, and so does one that is or holds an instance of a subclass of
    the IR's classes (:func:`~symverify.kernel.provers.fingerprint.check_plain`).

    ``.kaleidoscope``, ``.model`` and ``.certificate`` are each read once (properties may hand out
    a new object on every access: the side is what was read). An object with both a Kaleidoscope in
    ``.kaleidoscope`` and a Model in ``.model`` is ambiguous, and a ``.model`` that is not a
    :class:`Model` (a circuit, None) is not read as anything else: both raise :class:`IRError`."""
    side, where = _read_side(obj, what)
    check_plain(side.obj, where)
    return side


def _read_side(obj: Any, what: str) -> tuple[Side, str]:
    """:func:`as_side` before the side's check: the side read, and the name its check gives it. Every
    attribute and ``isinstance`` of ``obj`` that can run its own code is read here."""
    match obj:
        case Circuit():
            return CircuitSide(obj, obj.n, obj.d), what
        case Model():
            return ModelSide(obj, obj.n, obj.d), what
        case Kaleidoscope():
            return KaleidoscopeSide(obj, obj.n, 1), what
    k = read_attribute(obj, "kaleidoscope", None, what)  # a kaleidoscope Factorization
    model = read_attribute(obj, "model", _MISSING, what)  # a compiled object; each attribute is read once
    if isinstance(k, Kaleidoscope):
        if isinstance(model, Model):
            raise IRError(f"{what}: {type(obj).__name__} has both a .kaleidoscope and a .model; expected one of them "
                          "(a Factorization or a compiled object), pass the one to verify")
        return KaleidoscopeSide(k, k.n, 1), f"{what}.kaleidoscope"
    if isinstance(model, Model):
        cert = read_attribute(obj, "certificate", None, what)
        if cert is not None and not isinstance(cert, Certificate):
            raise IRError(f"{what}: the compiled object's certificate must be a Certificate, found {type(cert).__name__}")
        return ModelSide(model, model.n, model.d, cert), f"{what}.model"
    if model is not _MISSING:
        raise IRError(f"{what}: a compiled object's .model must be a Model, found {type(model).__name__} in the .model of "
                      f"{type(obj).__name__}")
    raise IRError(
        f"{what}: expected a Circuit, Model, Kaleidoscope (or Factorization) or compiled object (with .model and "
        ".certificate), "
        f"found {type(obj).__name__}"
    )


def _reshape(side: Side, other: Side) -> Side:
    """A kaleidoscope read in the other side's shape when ``n·d`` matches its ``n``."""
    match side, other:
        case (KaleidoscopeSide() as k, CircuitSide() | ModelSide()) if other.num_inputs == k.obj.n:
            return replace(k, n=other.n, d=other.d)
        case _:
            return side


def _attach(a: Side, b: Side, certificate: Certificate) -> tuple[Side, Side]:
    """Attach ``certificate`` to the model side. Two models are refused: a certificate places a
    circuit's node values in a model's cells, so with no circuit side no method would read it."""
    match a, b:
        case (ModelSide(), ModelSide()):
            raise IRError("verify certificate=: a stage certificate places a circuit's values in a model, so one side "
                          "must be the circuit; found two models (no method would read it)")
        case (_, ModelSide() as m):
            return a, replace(m, certificate=certificate)
        case (ModelSide() as m, _):
            return replace(m, certificate=certificate), b
        case _:
            raise IRError("verify certificate=: a stage certificate belongs to a model, but neither side is a model")


def pair_sides(lhs: Any, rhs: Any, certificate: Certificate | None = None) -> tuple[Side, Side]:
    """Both sides with equal shapes; a certificate attaches to the model side.

    Raises:
        ShapeError: the shapes differ (the message names both).
        IRError: an argument is not a verifiable object, or ``certificate`` has no model to go with.
        LimitError: a side has more inputs than ``MAX_INPUTS`` or a model state of more cells than
            ``MAX_CELLS`` (:mod:`symverify.ir.limits`); checked before anything is evaluated.
    """
    (a, where_a), (b, where_b) = _read_side(lhs, "lhs"), _read_side(rhs, "rhs")
    if certificate is not None and not isinstance(certificate, Certificate):
        raise IRError(f"verify certificate=: expected a Certificate, found {type(certificate).__name__}")
    # both sides are checked after everything of the caller's that can run code was read (a property, an
    # isinstance through __class__): such code rewriting a side checked before it ran would be read unseen
    check_plain(a.obj, where_a)
    check_plain(b.obj, where_b)
    for name, side in (("lhs", a), ("rhs", b)):
        check_state(side.obj, f"verify {name}")
    a, b = _reshape(a, b), _reshape(b, a)
    if a.shape != b.shape:
        raise ShapeError(
            f"verify: the two sides have different shapes: lhs {a.label()}, rhs {b.label()}"
        )
    if certificate is None:
        return a, b
    return _attach(a, b, certificate)

"""The two things ``verify`` compares, each read as a polynomial map ``F^{n×d} → F^{n×d}``.

A side is a circuit (THEORY §2), a BaseConv model (THEORY §1.2), or a kaleidoscope matrix
``M ∈ (BB*)^w_e`` (THEORY §3), which acts on ``vec(u)`` row-major: ``vec(y) = M·vec(u)``. A
kaleidoscope takes the ``n×d`` shape of the other side when ``n·d`` equals its ``n``, else
``n×1``. A compiled object (anything with ``.model`` and ``.certificate``) is its model plus the
stage certificate. Every side evaluates over any ring of the interpreter protocol
(:mod:`symverify.semantics.evaluate`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from symverify.deadline import Check
from symverify.errors import IRError, ShapeError
from symverify.ir.analysis import check_state
from symverify.ir.baseconv import Model
from symverify.ir.butterfly import Kaleidoscope
from symverify.ir.certificate import Certificate
from symverify.ir.circuit import Circuit
from symverify.semantics.evaluate import State, eval_circuit, eval_model

__all__ = ["Side", "as_side", "pair_sides"]


@dataclass(frozen=True)
class Side:
    """One side of a comparison: the object, its kind and its ``n×d`` shape."""

    obj: Any
    kind: str
    n: int
    d: int
    certificate: Certificate | None = None

    @property
    def shape(self) -> tuple[int, int]:
        return (self.n, self.d)

    @property
    def num_inputs(self) -> int:
        return self.n * self.d

    def params(self) -> frozenset[str]:
        """Names of the symbolic weights or coefficients."""
        if self.kind == "kaleidoscope":
            from symverify.kaleidoscope.apply import params_of

            return frozenset(params_of(self.obj))
        return frozenset(self.obj.params())

    def evaluate(self, u: Sequence[Sequence[Any]], ring: Any, check: Check | None = None) -> State:
        """The ``n×d`` output on input ``u`` over ``ring``; ``check`` (:mod:`symverify.deadline`)
        runs every few hundred operations and may raise ``DeadlineExceededError``."""
        if self.kind == "circuit":
            return eval_circuit(self.obj, u, ring, check)
        if self.kind == "model":
            return eval_model(self.obj, u, ring, check)
        from symverify.kaleidoscope.apply import apply

        flat = apply(self.obj, [x for row in u for x in row], ring, check=check)
        return [flat[i * self.d : (i + 1) * self.d] for i in range(self.n)]

    def cost(self) -> int:
        """A rough operation count of one evaluation (for size guards); computed from the sizes
        and the grids' rectangles, never cell by cell."""
        if self.kind == "circuit":
            return len(self.obj.gates) + self.num_inputs
        if self.kind == "model":
            m: Model = self.obj
            per = sum(layer.W.nonzero_count() + layer.h.nonzero_count() for layer in m.layers)
            return per * m.inner_n + len(m.layers) * m.inner_n * m.inner_d
        k: Kaleidoscope = self.obj
        return sum(len(g.factors) for g in k.groups) * k.size

    def describe(self) -> dict[str, Any]:
        """The statistics a report shows for this side (``symverify info``). It never expands
        inputs or grid cells: circuit measures cost ``O(gates)`` and model counts come from the
        grids' rectangles, so a model with ``N' = 10^9`` is described at once."""
        if self.kind == "circuit":
            from symverify.ir.analysis import stats

            out: dict[str, Any] = {"kind": "circuit", "name": self.obj.name, **stats(self.obj).to_json()}
        elif self.kind == "model":
            m = self.obj
            out = {
                "kind": "model",
                "name": m.name,
                "signature": list(m.signature),
                "layers": m.depth,
                "param_count": m.param_count(),
                "nonzero_params": m.nonzero_param_count(),
                "modes": sorted(mode.value for mode in m.modes()),
            }
        else:
            k = self.obj
            out = {"kind": "kaleidoscope", "n": k.n, "size": k.size, "width": k.width, "expansion": str(k.expansion),
                   "shape": [self.n, self.d]}
        out["symbols"] = sorted(self.params())
        if self.certificate is not None:
            out["certificate_stages"] = self.certificate.num_stages
        return out

    def label(self) -> str:
        name = getattr(self.obj, "name", "") or ""
        return f"{self.kind} {name}".strip() + f" ({self.n}×{self.d})"


def as_side(obj: Any, what: str = "argument") -> Side:
    """Read ``obj`` as a side; anything that is not a circuit, model, kaleidoscope or compiled
    object raises :class:`IRError`."""
    if isinstance(obj, Circuit):
        return Side(obj, "circuit", obj.n, obj.d)
    if isinstance(obj, Model):
        return Side(obj, "model", obj.n, obj.d)
    if isinstance(obj, Kaleidoscope):
        return Side(obj, "kaleidoscope", obj.n, 1)
    k = getattr(obj, "kaleidoscope", None)  # a kaleidoscope Factorization
    if isinstance(k, Kaleidoscope):
        return Side(k, "kaleidoscope", k.n, 1)
    model = getattr(obj, "model", None)
    if isinstance(model, Model):
        cert = getattr(obj, "certificate", None)
        if cert is not None and not isinstance(cert, Certificate):
            raise IRError(f"{what}: the compiled object's certificate must be a Certificate, found {type(cert).__name__}")
        return Side(model, "model", model.n, model.d, cert)
    raise IRError(
        f"{what}: expected a Circuit, Model, Kaleidoscope (or Factorization) or compiled object (with .model and "
        ".certificate), "
        f"found {type(obj).__name__}"
    )


def _reshape(side: Side, other: Side) -> Side:
    if side.kind == "kaleidoscope" and other.kind != "kaleidoscope" and other.num_inputs == side.obj.n:
        return Side(side.obj, side.kind, other.n, other.d, side.certificate)
    return side


def pair_sides(lhs: Any, rhs: Any, certificate: Certificate | None = None) -> tuple[Side, Side]:
    """Both sides with equal shapes; a certificate attaches to the model side.

    Raises:
        ShapeError: the shapes differ (the message names both).
        IRError: an argument is not a verifiable object, or ``certificate`` has no model to go with.
        LimitError: a side has more inputs than ``MAX_INPUTS`` or a model state of more cells than
            ``MAX_CELLS`` (:mod:`symverify.ir.limits`); checked before anything is evaluated.
    """
    a, b = as_side(lhs, "lhs"), as_side(rhs, "rhs")
    for name, side in (("lhs", a), ("rhs", b)):
        check_state(side.obj, f"verify {name}")
    a, b = _reshape(a, b), _reshape(b, a)
    if a.shape != b.shape:
        raise ShapeError(
            f"verify: the two sides have different shapes: lhs {a.label()}, rhs {b.label()}"
        )
    if certificate is not None:
        if not isinstance(certificate, Certificate):
            raise IRError(f"verify certificate=: expected a Certificate, found {type(certificate).__name__}")
        if b.kind == "model":
            b = Side(b.obj, b.kind, b.n, b.d, certificate)
        elif a.kind == "model":
            a = Side(a.obj, a.kind, a.n, a.d, certificate)
        else:
            raise IRError("verify certificate=: a stage certificate belongs to a model, but neither side is a model")
    return a, b

"""The result every compiler returns: a model, its stage certificate, resources and stated bounds."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from symverify.errors import CompileError, IRError
from symverify.kernel.ir.baseconv import Mode, Model
from symverify.kernel.ir.certificate import Certificate
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.frozen import ReadOnlyMapping
from symverify.kernel.ir.scalar import number_table, plain_items, plain_str

__all__ = ["Compiled", "MODEL_RESOURCES", "Number", "ReadOnlyMapping", "check_counts", "source_meta"]


def check_counts(where: str, **counts: object) -> None:
    """Refuse a count (a depth, a width, a length) that is not a non-negative ``int`` (a bool, a
    float, None, a list): :class:`CompileError` ``{where}: {name}: expected …, found …``. A numpy
    integer is read by its value."""
    from symverify.ir.bigint import safe_repr
    from symverify.kernel.ir.scalar import as_index

    for name, v in counts.items():
        i = as_index(v)
        if i is None or i < 0:
            raise CompileError(f"{where}: {name}: expected a non-negative int, found {type(v).__name__} {safe_repr(v, 40)}")


def source_meta(circuit: Circuit) -> tuple[tuple[str, str], ...]:
    """The ``meta`` pairs a compiler writes about the circuit it compiled: ``"circuit"``, its name
    (``''`` for an unnamed one), and ``"circuit_digest"``, the ``"sha256:<hex>"`` digest ``verify``
    reports for that circuit's side (its exact content, not its name), so that ``verify`` can note a
    certificate checked against another circuit of the same name (free text: it changes no verdict).
    A subclass of :class:`Circuit` has no side digest (it may evaluate otherwise than its fields say):
    its name alone is written. Anything but a circuit is a :class:`CompileError`."""
    if not isinstance(circuit, Circuit):
        raise CompileError(f"source_meta: expected a Circuit, found {type(circuit).__name__}")
    if type(circuit) is not Circuit:
        return (("circuit", circuit.name),)
    from symverify.kernel.provers.fingerprint import content_digest

    return (("circuit", circuit.name), ("circuit_digest", content_digest(circuit)))

Number = int | Fraction | float


def _check_numbers(d: Mapping[str, Any], what: str) -> ReadOnlyMapping[Number]:
    """``d`` as a read-only table of plain ``str`` keys and plain numbers
    (:func:`~symverify.kernel.ir.scalar.number_table`, the one reader of resources and bounds), since
    ``over_bound`` compares with ``>``; a refusal is a :class:`CompileError`."""
    try:
        return ReadOnlyMapping(number_table(d, f"Compiled {what}"))
    except IRError as e:
        raise CompileError(str(e)) from None


MODEL_RESOURCES: dict[str, str] = {
    "layers": "layers",
    "layers_thm": "layers",
    "layers_c21": "layers",
    "inner_n": "rows N'",
    "inner_d": "channels d'",
    "params": "dense parameters",
    "nonzero_params": "nonzero parameters",
    "cyclic_layers": "cyclic layers",
}
"""Resources that are functions of the model alone (key → what the model's own count is), which
:class:`Compiled` holds to at least the model's value."""


def _model_value(model: Model, key: str) -> int:
    """The model's own value of the resource ``key`` (a key of :data:`MODEL_RESOURCES`)."""
    if key in ("layers", "layers_thm", "layers_c21"):
        return len(model.layers)
    if key == "inner_n":
        return model.inner_n
    if key == "inner_d":
        return model.inner_d
    if key == "params":
        return Model.param_count(model)  # the IR's own counts, whatever a subclass answers
    if key == "nonzero_params":
        return Model.nonzero_param_count(model)
    return sum(1 for layer in model.layers if layer.mode is Mode.CYCLIC)


def _check_model_resources(model: Model, resources: Mapping[str, Number]) -> None:
    """Refuse a resource of :data:`MODEL_RESOURCES` stated below the model's own value: a bound is
    met by what the model has, so ``layers = 3`` for a model of 5 layers would make ``over_bound()``
    miss a bound the model exceeds. Stating more is conservative and allowed (it can only put a
    result over a bound)."""
    for key, what in MODEL_RESOURCES.items():
        if key in resources:
            actual = _model_value(model, key)
            if resources[key] < actual:
                raise CompileError(f"Compiled resources[{key!r}]: expected at least the model's {actual} {what}, "
                                   f"found {resources[key]} (a resource may not be stated below what the model has: state the "
                                   "model's own values, or verify the bare model)")


@dataclass(frozen=True)
class Compiled:
    """A compiled model with the evidence to prove it.

    ``resources`` are what the construction used (``layers``, ``inner_n``, ``inner_d``, ``params``,
    ``nonzero_params``, …); ``bounds`` the bounds the construction *states* for some of them
    (e.g. ``layers ≤ 2Δ + 5``), with the same keys. A resource that is a function of the model alone
    (:data:`MODEL_RESOURCES`: ``layers``, ``inner_n``, ``inner_d``, ``params``, ``nonzero_params``,
    ``cyclic_layers``, and ``layers_thm``, ``layers_c21``) may not be stated below the model's own
    value (:class:`CompileError`), so ``over_bound()`` never misses a bound the model exceeds. Both are stored as :class:`ReadOnlyMapping`
    copies of what was given (item assignment raises ``TypeError``), so a frozen result's resources,
    bounds and ``over_bound()`` cannot change after it is made; ``dataclasses.replace`` (which
    validates again) makes a changed copy. ``certificate`` is the stage certificate for
    :func:`symverify.kernel.provers.compositional.check_certificate` (untrusted: it can only make a check
    fail). ``method`` names the compiler. ``source`` is the circuit that was compiled, when known:
    :func:`symverify.compile` sets it (a compiler module called directly leaves it ``None``); the
    golden record of a compile result names the model and its source by their digests
    (:func:`symverify.testing.golden_record`).
    """

    model: Model
    certificate: Certificate | None
    resources: Mapping[str, Number]
    method: str
    bounds: Mapping[str, Number] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    source: Circuit | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        if not isinstance(self.model, Model):
            raise CompileError(f"Compiled model: expected a Model, found {type(self.model).__name__}")
        if self.source is not None and not isinstance(self.source, Circuit):
            raise CompileError(f"Compiled source: expected the Circuit that was compiled, or None, found "
                               f"{type(self.source).__name__}")
        if self.source is not None and (self.source.n, self.source.d) != (self.model.n, self.model.d):
            raise CompileError(f"Compiled source: expected a circuit of the model's shape n={self.model.n}, "
                               f"d={self.model.d}, found n={self.source.n}, d={self.source.d}")
        if self.certificate is not None and not isinstance(self.certificate, Certificate):
            raise CompileError(f"Compiled certificate: expected a Certificate or None, found {type(self.certificate).__name__}")
        if not isinstance(self.method, str) or not str.__len__(self.method):
            raise CompileError(f"Compiled method: expected a non-empty name, found {self.method!r}")
        object.__setattr__(self, "method", plain_str(self.method))  # a str subclass as its characters
        object.__setattr__(self, "resources", _check_numbers(self.resources, "resources"))
        _check_model_resources(self.model, self.resources)
        object.__setattr__(self, "bounds", _check_numbers(self.bounds, "bounds"))
        object.__setattr__(self, "notes", tuple(plain_items(self.notes)))

    def over_bound(self) -> list[str]:
        """Keys whose resource exceeds (or lacks a value for) its stated bound."""
        return [k for k, b in self.bounds.items() if k not in self.resources or self.resources[k] > b]

    def to_json(self) -> dict[str, Any]:
        """The result as JSON (``symverify compile --json``): method, signature, resources, bounds,
        keys over bound, notes, and ``model_digest`` (with ``source_digest`` when the source circuit
        is known): the ``"sha256:<hex>"`` digests ``verify`` reports for those sides, naming exactly
        which model (and circuit) the figures are about."""
        def num(v: Number) -> Any:
            return str(v) if isinstance(v, Fraction) and v.denominator != 1 else (int(v) if isinstance(v, Fraction) else v)

        return {
            "method": self.method,
            "signature": list(self.model.signature),
            "resources": {k: num(v) for k, v in self.resources.items()},
            "bounds": {k: num(v) for k, v in self.bounds.items()},
            "over_bound": self.over_bound(),
            "notes": list(self.notes),
            **self.digests(),
        }

    def digests(self, where: str = "") -> dict[str, str]:
        """``{"model_digest": …}``, with ``"source_digest"`` when the source circuit is known
        (:func:`symverify.compile` sets it; a compiler module called directly does not): the
        ``"sha256:<hex>"`` digests ``verify`` reports for those sides (``where`` prefixes the error
        naming a part that has none)."""
        from symverify.kernel.provers.sides import as_side
        from symverify.kernel.verification import side_digest

        out = {"model_digest": side_digest(as_side(self.model, f"{where}the compile result's model"))}
        if self.source is not None:
            out["source_digest"] = side_digest(as_side(self.source, f"{where}the compile result's source"))
        return out

    def __repr__(self) -> str:
        """A short summary; ``str()`` lists every resource against its bound."""
        over = [f"{k}={self.resources[k]} > {self.bounds[k]}" if k in self.resources else f"{k} (no value)"
                for k in self.over_bound()]
        stages = "no certificate" if self.certificate is None else f"{self.certificate.num_stages} certificate stages"
        return (f"Compiled({self.method!r}, {self.model!r}, {stages}, {len(self.resources)} resources, "
                f"{'over bound: ' + ', '.join(over) if over else 'within bounds'})")[:500]

    def _repr_html_(self) -> str:
        """A compact table for notebooks (:func:`symverify.viz.html.compiled_html`)."""
        from symverify.viz.html import compiled_html  # display is a lazily loaded view

        return compiled_html(self)

    def __str__(self) -> str:
        """One line: every resource, with ``(≤ b)`` after one within its stated bound ``b`` and
        ``(> b: over bound)`` after one that exceeds it; a stated bound without a resource is listed
        as ``k: no value (bound b)``, as :meth:`over_bound` counts it."""
        def shown(k: str, v: Number) -> str:
            if k not in self.bounds:
                return f"{k}={v}"
            b = self.bounds[k]
            return f"{k}={v} (> {b}: over bound)" if v > b else f"{k}={v} (≤ {b})"

        res = ", ".join([shown(k, v) for k, v in self.resources.items()]
                        + [f"{k}: no value (bound {b})" for k, b in self.bounds.items() if k not in self.resources])
        return f"{self.method} compilation → {self.model}: {res}"

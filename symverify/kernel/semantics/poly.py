"""Canonical polynomials of circuits and models (docs/theory.md §5, method *exact*).

A :class:`PolyRing` has one generator per input entry ``x0 … x{nd−1}`` (``x_{i·d+j} = u[i, j]``)
and one per symbolic parameter. Two objects are compared in the same ring, so equality of their
output polynomials is plain ``==`` on canonical sparse forms. python-flint (``fmpq_mpoly``) is the
fast path; sympy's ``ring()`` over QQ is the fallback. Both are imported lazily.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache, lru_cache
from typing import Any, ClassVar, Literal

from symverify.errors import BackendUnavailableError, IRError, ShapeError, UsageError
from symverify.kernel.ir.analysis import check_state, model_of
from symverify.kernel.ir.baseconv import Model
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.scalar import Scalar, Sym
from symverify.kernel.semantics.evaluate import State, eval_circuit, eval_model

__all__ = ["PolyRing", "polynomials", "flint_available", "reused_ring"]

PolyBackend = Literal["flint", "sympy"]


@cache
def flint_available() -> bool:
    """Whether python-flint is installed: found by the import system (``importlib.util.find_spec``),
    not imported, so choosing the exact engine costs nothing where flint is never used (the
    randomized method). An installation found but not importable is found here; the
    :class:`PolyRing` that then uses it raises :class:`BackendUnavailableError` saying how to
    install it or pass ``backend='sympy'``."""
    from importlib.util import find_spec

    try:
        return find_spec("flint") is not None
    except (ImportError, ValueError):  # a broken parent or a module without a spec in sys.modules
        return False


@dataclass
class PolyRing:
    """A polynomial ring over Q in the input variables and the parameters ``params`` (sorted)."""

    falsy_is_zero: ClassVar[bool] = True

    num_inputs: int
    params: tuple[str, ...] = ()
    backend: PolyBackend = "flint"
    _ctx: Any = field(default=None, repr=False)
    _gens: list[Any] = field(default_factory=list, repr=False)
    zero: Any = None

    def __post_init__(self) -> None:
        if self.backend not in ("flint", "sympy"):
            raise UsageError(f"polynomial ring backend: expected 'flint' or 'sympy', found {self.backend!r}")
        names = [f"x{i}" for i in range(self.num_inputs)] + [f"p_{p}" for p in self.params]
        if not names:
            names = ["_unused"]
        if self.backend == "flint":
            try:
                import flint
            except ImportError:
                raise BackendUnavailableError(
                    "the exact flint backend needs python-flint: pip install python-flint "
                    "(or pass backend='sympy')"
                ) from None
            self._ctx = flint.fmpq_mpoly_ctx.get(tuple(names), "deglex")
            self._gens = list(self._ctx.gens())
            self.zero = self._ctx.from_dict({})
            self._fmpq: Any = flint.fmpq
        else:
            from sympy import QQ
            from sympy.polys.rings import ring

            r, *gens = ring(",".join(names), QQ)
            self._ctx, self._gens, self.zero = r, list(gens), r.zero
            self._fmpq = lambda a, b: QQ(a, b)
        self._param_index = {p: self.num_inputs + k for k, p in enumerate(self.params)}

    def inputs(self) -> list[Any]:
        return self._gens[: self.num_inputs]

    def coerce(self, x: Scalar) -> Any:
        if isinstance(x, Sym):
            total = self.zero
            for mono, c in x.terms:
                term = self._const(c)
                for name, e in mono:
                    term = term * self._gens[self._param_index[name]] ** e
                total = total + term
            return total
        return self._const(x)

    def _const(self, x: int | Fraction) -> Any:
        if isinstance(x, int):
            return self.zero + x
        return self.zero + self._fmpq(x.numerator, x.denominator)

    def reduce(self, x: Any) -> Any:
        return x

    def grid_input(self, n: int, d: int) -> list[list[Any]]:
        g = self.inputs()
        return [g[i * d : (i + 1) * d] for i in range(n)]

    def nterms(self, p: Any) -> int:
        return len(p) if self.backend == "flint" else len(p.terms())

    def degree(self, p: Any) -> int:
        """Total degree; -1 for the zero polynomial."""
        if p == 0:
            return -1
        if self.backend == "flint":
            return int(p.total_degree())
        return max(sum(m) for m in p.monoms())

    def evaluate(self, p: Any, values: Sequence[Fraction | int]) -> Fraction:
        """``p`` at a rational point (inputs then parameters)."""
        if self.backend == "flint":
            v = p(*[self._fmpq(Fraction(x).numerator, Fraction(x).denominator) for x in values])
            return Fraction(int(v.p), int(v.q))
        v = p(*values) if values else p
        return Fraction(int(v.numerator), int(v.denominator)) if hasattr(v, "numerator") else Fraction(str(v))


REUSED_RING_MAX = 4096
"""The most generators a ring :func:`reused_ring` keeps (inputs and parameters): past it each ring is
built anew (its stage costs far more than building it)."""
REUSED_RING_SMALL = 512
"""The most generators of a ring kept among the last 64 (:func:`_flint_parts`); a larger one, up to
:data:`REUSED_RING_MAX`, is kept among the last 4 (:func:`_large_flint_parts`). A ring's memory grows
as the square of its generators (FLINT stores each generator's exponent vector in at least 8 bits
per variable: about 17 MiB for 4096), so the kept rings hold at most ``64·512² + 4·4096²``
exponent bytes, about 90 MiB with their overhead (64 rings of 4096 would hold over 1 GiB for the
life of the process)."""


def _build_parts(num_inputs: int, params: tuple[str, ...]) -> tuple[Any, tuple[Any, ...], Any, Any]:
    """The flint context, generators, zero and ``fmpq`` of :class:`PolyRing` ``(num_inputs, params)``,
    built as its ``__post_init__`` builds them (for :func:`reused_ring`)."""
    ring = PolyRing(num_inputs, params, "flint")
    return ring._ctx, tuple(ring._gens), ring.zero, ring._fmpq


_flint_parts = lru_cache(maxsize=64)(_build_parts)
""":func:`_build_parts` of the last 64 rings of at most :data:`REUSED_RING_SMALL` generators."""
_large_flint_parts = lru_cache(maxsize=4)(_build_parts)
""":func:`_build_parts` of the last 4 rings of more than :data:`REUSED_RING_SMALL` generators."""


def _rebinding_flint() -> bool:
    """Whether python-flint is imported and its ``fmpq_mpoly`` (the polynomials of a flint
    :class:`PolyRing`) defines no in-place operator, so that ``a += b`` binds ``a`` to a new
    polynomial and never changes the old one (the rule :func:`reused_ring` rests on). False when it is
    not imported (yet, or it cannot be: then ``PolyRing`` imports it and says why)."""
    flint = sys.modules.get("flint")
    if flint is None:
        return False
    return not any(hasattr(flint.fmpq_mpoly, op) for op in ("__iadd__", "__isub__", "__imul__", "__ipow__"))


def reused_ring(num_inputs: int, params: tuple[str, ...], backend: PolyBackend) -> PolyRing:
    """``PolyRing(num_inputs, params, backend)``, whose flint context, generators and zero are those
    of the last ring made here with the same ``num_inputs`` and ``params`` (kept for the last 64 of
    at most :data:`REUSED_RING_SMALL` generators and the last 4 of at most :data:`REUSED_RING_MAX`).

    The rule that makes sharing them safe: a python-flint polynomial is never changed by arithmetic
    (``+``, ``*``, ``**``, and ``+=``, ``*=``, which rebind a name to a new object); only its
    ``iadd``, ``isub``, ``imul`` methods and item assignment change it, and the caller must use none
    of them on the ring's polynomials nor hand them to code that might. The compositional checker's
    stage rings and the exact method's ring are such rings (they read their values and keep only
    their text, a degree or a point), and building ``num_inputs`` generators anew for every stage
    cost 3–6 % of a compiled model's check (a stage's frontier has up to thousands of nodes, and a
    model's stages share a few sizes).
    The sympy backend (whose polynomials are dicts, changed in place by some methods) builds a new ring,
    and so does a python-flint whose polynomial type defines an in-place operator (``__iadd__``,
    ``__isub__``, ``__imul__``, ``__ipow__``: some 0.7 pre-releases made ``+=`` change its left side),
    where ``+=`` anywhere would change a shared generator (:func:`_rebinding_flint`)."""
    size = num_inputs + len(params)
    if backend != "flint" or size > REUSED_RING_MAX or not _rebinding_flint():
        return PolyRing(num_inputs, params, backend)
    parts = _flint_parts if size <= REUSED_RING_SMALL else _large_flint_parts
    ctx, gens, zero, fmpq = parts(num_inputs, tuple(params))
    ring = PolyRing.__new__(PolyRing)  # the fields __post_init__ sets, from the ring built first
    ring.num_inputs, ring.params, ring.backend = num_inputs, tuple(params), backend
    ring._ctx, ring._gens, ring.zero, ring._fmpq = ctx, list(gens), zero, fmpq
    ring._param_index = {p: num_inputs + k for k, p in enumerate(ring.params)}
    return ring


def _params_of(objs: Iterable[Circuit | Model]) -> tuple[str, ...]:
    names: set[str] = set()
    for o in objs:
        names |= o.params()
    return tuple(sorted(names))


def polynomials(obj: Circuit | Model, ring: PolyRing | None = None, backend: PolyBackend = "flint") -> State:
    """The ``n×d`` output polynomials of a circuit or model.

    ``ring`` (default: a fresh one for ``obj``) must be a :class:`PolyRing` with at least ``n·d``
    input generators and a generator for every parameter of ``obj`` (:func:`shared_ring` builds
    one for several objects); anything else is refused (:class:`UsageError`, :class:`ShapeError`,
    :class:`IRError`) before evaluation. ``backend`` is ``'flint'`` or ``'sympy'``.

    >>> from symverify.kernel.ir.circuit import Circuit, Gate
    >>> c = Circuit(1, 2, (Gate.mul(0, 1),), (2,))
    >>> [[str(p) for p in row] for row in polynomials(c)]
    [['x0*x1', '0']]
    """
    obj = model_of(obj)  # a compiled object: its model
    if not isinstance(obj, (Circuit, Model)):
        raise IRError(f"polynomials: expected a Circuit, Model or compiled object, found {type(obj).__name__}")
    check_state(obj, "polynomials")
    if ring is None:
        ring = PolyRing(obj.n * obj.d, _params_of([obj]), backend)
    elif not isinstance(ring, PolyRing):
        raise UsageError(f"polynomials: ring: expected a PolyRing (shared_ring(...)), found {type(ring).__name__}; "
                         "a backend is passed as backend=...")
    elif ring.num_inputs < obj.n * obj.d:
        raise ShapeError(f"polynomials: the ring has {ring.num_inputs} input generators, the object reads n·d = {obj.n * obj.d}")
    else:
        missing = sorted(set(obj.params()) - set(ring.params))
        if missing:
            raise IRError(f"polynomials: the ring has no generator for the parameters {', '.join(missing)} (build it with shared_ring)")
    u = ring.grid_input(obj.n, obj.d)
    if isinstance(obj, Circuit):
        return eval_circuit(obj, u, ring)
    return eval_model(obj, u, ring)


def shared_ring(*objs: Circuit | Model, backend: PolyBackend = "flint") -> PolyRing:
    """One ring for several circuits or models: as many input generators as the largest of them
    reads (``max n·d``: each object's inputs are its first ``n·d`` generators) and one generator per
    parameter of any of them (a compiled object stands for its model). No object, or an object that
    is no circuit or model (a list of them passed as one argument), is a :class:`UsageError`."""
    if not objs:
        raise UsageError("shared_ring: expected one or more circuits or models, found none")
    objs = tuple(model_of(o) for o in objs)  # a compiled object stands for its model, as in polynomials
    for k, o in enumerate(objs):
        if not isinstance(o, (Circuit, Model)):
            hint = " (pass the objects as separate arguments: shared_ring(*objs))" if isinstance(o, (list, tuple)) else ""
            raise UsageError(f"shared_ring: argument {k}: expected a Circuit or Model, found {type(o).__name__}{hint}")
    return PolyRing(max(o.n * o.d for o in objs), _params_of(objs), backend)

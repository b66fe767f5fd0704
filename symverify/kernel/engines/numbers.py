"""Number kinds for execution plans, and the plan cache.

A plan converts every exact weight once, either to ``float`` (:class:`FloatNumbers`: the exact
value, parameters substituted, rounded to nearest float64) or to a residue mod p
(:class:`ModNumbers`). Plans are cached per (object identity, number kind).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, TypeVar

from symverify.errors import CompileError, IRError
from symverify.ir.bigint import safe_repr
from symverify.kernel.engines._torch import require_torch
from symverify.kernel.ir.analysis import params_of, reread_params
from symverify.kernel.ir.baseconv import Model
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.memo import IdentityMemo
from symverify.kernel.ir.scalar import Scalar, Sym, as_scalar, canonical
from symverify.kernel.semantics.rings import FractionRing, ModRing

__all__ = ["FloatNumbers", "ModNumbers", "Numbers", "float_numbers", "mod_numbers", "Converter", "cached", "check_params", "clear_cache"]

P = TypeVar("P")  # a plan type


def _params_key(params: Mapping[str, object] | None) -> tuple[tuple[str, Scalar], ...]:
    out = []
    if params is not None and (not isinstance(params, Mapping) or not all(isinstance(k, str) for k in params)):
        raise IRError(f"params: expected a mapping from weight names (str) to exact values, found {safe_repr(params, 60)}")
    for name, v in sorted((params or {}).items()):
        x = as_scalar(v, f"params[{name!r}]")
        if isinstance(x, Sym):  # a weight's value is a number: a symbol has no value in floats or mod p
            raise IRError(f"params[{name!r}]: expected an exact rational (int, Fraction or a string like '1/2'), "
                          f"found the symbolic value {safe_repr(x, 60)}")
        out.append((name, x))
    return tuple(out)


@dataclass(frozen=True)
class FloatNumbers:
    """Weights as floats: the exact value (parameters substituted) rounded to nearest float64.

    ``dtype`` names the format the weights are meant for (they reach float32 or bfloat16 through
    float64): a weight beyond float64's range is beyond that format's too, and the error names it.
    It is a label only: not part of the cache key, the conversion is the same."""

    params: tuple[tuple[str, Scalar], ...] = ()
    kind: str = "float"
    dtype: str = field(default="float64", compare=False)

    def exact(self, x: Scalar) -> int | Fraction:
        if isinstance(x, Sym):
            return FractionRing(dict(self.params)).coerce(x)
        return x

    def convert(self, x: Scalar) -> float:
        v = self.exact(x)
        try:
            return float(v)
        except OverflowError:
            from symverify.ir.bigint import show_rational

            raise CompileError(f"the weight {show_rational(v)} does not fit in {self.dtype}"
                               + ("" if self.dtype == "float64" else " (nor in float64, through which weights reach it)")) from None

    @property
    def torch_dtype(self) -> Any:
        return require_torch().float64


@dataclass(frozen=True)
class ModNumbers:
    """Weights as residues mod the prime ``p`` (``0 ≤ r < p < 2^31``)."""

    p: int
    params: tuple[tuple[str, Scalar], ...] = ()
    kind: str = "mod"

    def ring(self) -> ModRing:
        values = {}
        for name, v in self.params:
            try:
                values[name] = ModRing(self.p).coerce(v)
            except IRError as e:
                raise IRError(f"params[{name!r}]: {e}") from None
        return ModRing(self.p, values)

    def convert(self, x: Scalar) -> int:
        return self.ring().coerce(x)

    def exact(self, x: Scalar) -> int:
        return self.convert(x)

    @property
    def torch_dtype(self) -> Any:
        return require_torch().int64


Numbers = FloatNumbers | ModNumbers


class Converter:
    """Converts scalars once each and remembers the exact values it saw (for the error model)."""

    def __init__(self, numbers: Numbers, where: str) -> None:
        self.numbers, self.where = numbers, where
        self.cache: dict[tuple[type, Scalar], Any] = {}  # converted values, per (type, scalar)
        self.seen: set[int | Fraction] = set()
        self.fractional = False  # some bulk-read float weight is not an integer

    def __call__(self, x: Scalar) -> Any:
        if type(x) is not int:  # keyed by the canonical form: an int subclass whose == and hash lie is read as its value
            x = canonical(x, self.where)
        key = (type(x), x)
        if key not in self.cache:
            try:
                self.cache[key] = self.numbers.convert(x)
            except IRError as e:
                raise type(e)(f"{self.where}: {e}") from None
            self.seen.add(self.numbers.exact(x))
        return self.cache[key]

    def floats(self, cells: Any) -> Any:
        """The float64 values of a :class:`~symverify.kernel.ir.cellarray.CellArray`'s array cells, in bulk,
        when the numbers are floats (each is exactly its weight, so it is its own rounding); None
        for residues mod p. The error model learns whether they were all integers."""
        if not isinstance(self.numbers, FloatNumbers):
            return None
        self.fractional = self.fractional or not cells.is_integral()
        return cells.vals

    def integral(self) -> bool:
        return not self.fractional and all(isinstance(v, int) or v.denominator == 1 for v in self.seen)

    def exact_in_float64(self) -> bool:
        return all(Fraction(float(v)) == v for v in self.seen)


# ---- caches ----------------------------------------------------------------------------------

# The last few plans, per (object, numbers); each entry keeps its object alive, so an id is never
# reused while its plan is cached. clear_cache() drops them (and their device tensors).
_CACHE_SIZE = 8
_PLANS: IdentityMemo[Any] = IdentityMemo(_CACHE_SIZE, validate=True)  # execute's plans too


def clear_cache() -> None:
    """Forget every cached plan."""
    _PLANS.clear()


def cached(obj: Model | Circuit, numbers: Numbers, build: Callable[[], P]) -> P:
    """The plan of ``obj`` for ``numbers`` from the identity memo, or ``build()`` stored there."""
    result: P = _PLANS(obj, build, numbers)
    return result


def check_params(obj: Model | Circuit, numbers: Numbers) -> None:
    given = {k for k, _ in numbers.params}
    missing = sorted(params_of(obj) - given)
    if missing:  # the kept names may be of content rewritten in place since: read them again
        missing = sorted(reread_params(obj) - given)
    if missing:
        what = "model" if isinstance(obj, Model) else "circuit"
        raise IRError(
            f"the {what} has symbolic weights {', '.join(missing)}; pass their values, "
            f"e.g. params={{{', '.join(repr(m) + ': 1' for m in missing)}}}"
        )


def float_numbers(params: Mapping[str, object] | None, dtype: str = "float64") -> FloatNumbers:
    """Float numbers for ``params``; ``dtype`` names the target format in errors (:class:`FloatNumbers`)."""
    return FloatNumbers(_params_key(params), dtype=dtype)


def mod_numbers(p: int, params: Mapping[str, object] | None) -> ModNumbers:
    nums = ModNumbers(p, _params_key(params))
    nums.ring()  # every parameter must have a residue mod p
    return nums

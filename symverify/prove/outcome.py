"""What a prover returns: a :class:`Verdict`, evidence, and a re-checked :class:`Counterexample`.

THEORY §5 keeps three outcomes apart: ``proved`` (an exact argument, or a randomized test with a
stated error bound), ``refuted`` (with a counterexample input re-checked by exact evaluation of
both sides) and ``unknown`` (a budget or timeout ran out). :class:`MethodResult` is the internal
form one method hands to :func:`symverify.verify.verify`, which wraps it in a ``Report``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from fractions import Fraction
from typing import Any

from symverify.errors import UsageError

__all__ = ["Verdict", "Counterexample", "MethodResult", "UsageError", "jsonable"]


class Verdict(str, Enum):
    """The three outcomes of THEORY §5, str-valued.

    >>> Verdict.PROVED == "proved", str(Verdict.UNKNOWN)
    (True, 'unknown')
    """

    PROVED = "proved"
    REFUTED = "refuted"
    UNKNOWN = "unknown"

    def __str__(self) -> str:
        return self.value


def _q(x: int | Fraction) -> str:
    return str(x)


@dataclass(frozen=True)
class Counterexample:
    """An input (and parameter values) on which the two sides differ, re-checked exactly.

    ``inputs`` is the ``n×d`` rational input ``u``; ``params`` assigns every symbolic weight;
    ``cell`` is the first (row-major) output entry where the sides differ and ``lhs_value`` /
    ``rhs_value`` are the exact values there. ``stage`` names the first failing certificate stage
    when the compositional method found the difference.
    """

    inputs: tuple[tuple[Fraction | int, ...], ...]
    params: tuple[tuple[str, Fraction | int], ...]
    cell: tuple[int, int]
    lhs_value: Fraction | int
    rhs_value: Fraction | int
    stage: str | None = None
    found_by: str = ""

    def param_dict(self) -> dict[str, Fraction | int]:
        return dict(self.params)

    def to_json(self) -> dict[str, Any]:
        return {
            "inputs": [[_q(x) for x in row] for row in self.inputs],
            "params": {k: _q(v) for k, v in self.params},
            "cell": list(self.cell),
            "lhs_value": _q(self.lhs_value),
            "rhs_value": _q(self.rhs_value),
            "stage": self.stage,
            "found_by": self.found_by,
        }

    def __str__(self) -> str:
        rows = "; ".join(" ".join(_q(x) for x in row) for row in self.inputs)
        ps = ", ".join(f"{k}={_q(v)}" for k, v in self.params)
        extra = f" with {ps}" if ps else ""
        return f"u = [{rows}]{extra}: entry {self.cell} is {_q(self.lhs_value)} vs {_q(self.rhs_value)}"


@dataclass(frozen=True)
class MethodResult:
    """One method's outcome before it becomes a ``Report``."""

    verdict: Verdict
    method: str
    evidence: Mapping[str, Any] = field(default_factory=dict)
    counterexample: Counterexample | None = None
    notes: tuple[str, ...] = ()
    timings: Mapping[str, float] = field(default_factory=dict)


def jsonable(x: Any) -> Any:
    """``x`` with Fractions as strings, tuples as lists and enums as their values (for JSON)."""
    if isinstance(x, Enum):
        return x.value
    if isinstance(x, bool) or x is None or isinstance(x, (int, str)):
        return x
    if isinstance(x, float):
        return x if x == x and abs(x) != float("inf") else str(x)
    if isinstance(x, Fraction):
        return str(x)
    if isinstance(x, Mapping):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, set, frozenset)):
        items = sorted(x, key=str) if isinstance(x, (set, frozenset)) else x
        return [jsonable(v) for v in items]
    if hasattr(x, "to_json"):
        return jsonable(x.to_json())
    return str(x)

"""Circuit plans: a circuit grouped by level for batched evaluation (float or mod p)."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from symverify.errors import CompileError, IRError
from symverify.kernel.engines._torch import require_torch
from symverify.kernel.engines.numbers import Numbers, cached, check_params
from symverify.kernel.ir.analysis import levels
from symverify.kernel.ir.circuit import Circuit, Op
from symverify.kernel.ir.scalar import Scalar

# The public names; the other functions here are internal (importable by name, not checked for arguments).
__all__ = ["Step", "CircuitPlan"]


@dataclass
class Step:
    """One circuit level: its linear, product and constant gates (independent of each other)."""

    lin: tuple[Any, Any, Any, Any, Any]  # dst, a, b, alpha, beta
    mul: tuple[Any, Any, Any]  # dst, a, b
    const: tuple[Any, Any]  # dst, value
    lin_exact: tuple[Any, Any]  # (coefficients integral, coefficients exact in float64) per linear gate
    const_exact: tuple[Any, Any]


@dataclass
class CircuitPlan:
    """A circuit grouped by level (:func:`symverify.kernel.ir.analysis.levels`) for batched evaluation."""

    circuit: Circuit
    numbers: Any
    steps: list[Step]
    outputs: Any
    moved: dict[Any, CircuitPlan] = field(default_factory=dict, repr=False)

    def on(self, device: Any, dtype: Any) -> CircuitPlan:
        key = (str(device), str(dtype))
        if key not in self.moved:
            steps = [
                Step(
                    (*(t.to(device) for t in s.lin[:3]), s.lin[3].to(device, dtype), s.lin[4].to(device, dtype)),  # type: ignore[arg-type]
                    tuple(t.to(device) for t in s.mul),  # type: ignore[arg-type]
                    (s.const[0].to(device), s.const[1].to(device, dtype)),
                    s.lin_exact, s.const_exact,
                )
                for s in self.steps
            ]
            for s in steps:  # rounding a coefficient is the error model; an infinite one is not
                for what, t in (("linear gate coefficient", s.lin[3]), ("linear gate coefficient", s.lin[4]), ("constant", s.const[1])):
                    if t.is_floating_point() and bool(t.isinf().any()):
                        raise CompileError(f"circuit: a {what} is beyond the range of {str(t.dtype).removeprefix('torch.')} "
                                           "(it would run as an infinity); use float64 or scale it")
            self.moved[key] = CircuitPlan(self.circuit, self.numbers, steps, self.outputs.to(device))
        return self.moved[key]


def _plan_circuit(c: Circuit, numbers: Numbers) -> CircuitPlan:
    torch = require_torch()
    dt = numbers.torch_dtype
    lv = levels(c)
    nd = c.num_inputs
    groups: dict[int, dict[str, list[Any]]] = {}
    conv_cache: dict[tuple[type, Scalar], tuple[Any, bool, bool]] = {}  # per (type, scalar)

    def conv(x: Scalar, k: int) -> tuple[Any, bool, bool]:
        key = (type(x), x)
        if key not in conv_cache:
            try:
                val = numbers.convert(x)
            except IRError as e:
                raise type(e)(f"gate {k}: {e}") from None
            ex = numbers.exact(x)
            conv_cache[key] = (val, isinstance(ex, int) or ex.denominator == 1, Fraction(float(ex)) == ex)
        return conv_cache[key]

    for k, g in enumerate(c.gates):
        grp = groups.setdefault(lv[nd + k], {"lin": [], "mul": [], "const": []})
        if g.op is Op.MUL:
            grp["mul"].append((nd + k, g.args[0], g.args[1]))
        elif g.op is Op.LIN:
            (va, ia, ea), (vb, ib, eb) = conv(g.coeffs[0], k), conv(g.coeffs[1], k)
            grp["lin"].append((nd + k, g.args[0], g.args[1], va, vb, ia and ib, ea and eb))
        else:
            v, i_, e_ = conv(g.coeffs[0], k)
            grp["const"].append((nd + k, v, i_, e_))

    def col(rows: list[Any], j: int, dtype: Any) -> Any:
        return torch.tensor([r[j] for r in rows], dtype=dtype)

    steps = []
    for ell in sorted(groups):
        grp = groups[ell]
        L, M, C = grp["lin"], grp["mul"], grp["const"]
        steps.append(Step(
            (col(L, 0, torch.long), col(L, 1, torch.long), col(L, 2, torch.long), col(L, 3, dt), col(L, 4, dt)),
            (col(M, 0, torch.long), col(M, 1, torch.long), col(M, 2, torch.long)),
            (col(C, 0, torch.long), col(C, 1, dt)),
            (col(L, 5, torch.bool), col(L, 6, torch.bool)),
            (col(C, 2, torch.bool), col(C, 3, torch.bool)),
        ))
    return CircuitPlan(c, numbers, steps, torch.tensor(c.outputs, dtype=torch.long))


def circuit_plan(c: Circuit, numbers: Numbers) -> CircuitPlan:
    """The (cached) plan of a circuit for one number kind and one set of parameter values."""
    check_params(c, numbers)
    return cached(c, numbers, lambda: _plan_circuit(c, numbers))



"""Assertions for users' test suites, and the stable records their golden files hold.

:func:`assert_proved` and :func:`assert_refuted` run :func:`symverify.verify` and fail with
everything needed to read the outcome: the verdict, the method, the failure bound and, for a
refutation, the counterexample (the differing entry, both exact values and the input)::

    >>> import symverify as sv
    >>> from symverify.testing import assert_proved
    >>> c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
    >>> assert_proved(c, sv.compile(c).model).method
    'exact'

:func:`golden_record` turns a :class:`~symverify.verification.Report`, a compile result or a
proof-script instance into the stable, sorted JSON that the pytest plugin's ``symverify_golden``
fixture (:mod:`symverify.pytest_plugin`) stores: verdicts, methods, resources and bounds, never
timings or anything that depends on the machine.

The hypothesis strategies (:func:`circuits`, :func:`models`, :func:`coefficients`,
:func:`rational_inputs`) live in :mod:`symverify.strategies` and are re-exported here on use.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from symverify.strategies import circuits, coefficients, models, rational_inputs
    from symverify.verification import Report

__all__ = [
    "assert_proved",
    "assert_refuted",
    "explain",
    "golden_record",
    "golden_text",
    "coefficients",
    "circuits",
    "models",
    "rational_inputs",
]

_STRATEGIES = ("coefficients", "circuits", "models", "rational_inputs")


def __getattr__(name: str) -> Any:
    if name in _STRATEGIES:
        from symverify import strategies

        return getattr(strategies, name)
    raise AttributeError(f"module 'symverify.testing' has no attribute {name!r}")


def explain(report: Report) -> str:
    """Everything a failed assertion should show about ``report``: verdict, method, bound,
    counterexample (entry, both values, input), notes."""
    ev = report.evidence
    lines = [f"verdict: {report.verdict.value} (method {report.method})"]
    if "bound" in ev:
        lines.append(f"failure bound: {ev['bound']}")
    cx = report.counterexample
    if cx is not None:
        lines.append(f"counterexample: {cx}")
        if cx.stage:
            lines.append(f"first failing stage: {cx.stage}")
    for key in ("sides_differ_mod_p", "mismatch_prime", "mismatch_entry"):
        if key in ev:
            lines.append(f"{key}: {ev[key]}")
    lines.extend(f"note: {n}" for n in report.notes)
    return "\n".join(lines)


def assert_proved(lhs: Any, rhs: Any, **verify_kwargs: Any) -> Report:
    """``verify(lhs, rhs, **verify_kwargs)`` and its report, or an ``AssertionError`` that says
    what the verdict was and why (see :func:`explain`)."""
    from symverify.verification import verify

    report = verify(lhs, rhs, **verify_kwargs)
    if not report.proved:
        raise AssertionError(f"expected the two sides to be proved equal\n{explain(report)}")
    return report


def assert_refuted(lhs: Any, rhs: Any, **verify_kwargs: Any) -> Report:
    """``verify(lhs, rhs, **verify_kwargs)`` and its report when it is refuted (with a re-checked
    counterexample), else an ``AssertionError`` naming the verdict."""
    from symverify.verification import verify

    report = verify(lhs, rhs, **verify_kwargs)
    if not report.refuted:
        raise AssertionError(f"expected a refutation\n{explain(report)}")
    return report


def _stable(x: Any) -> Any:
    """JSON with one type per field: numbers as the proof-run JSON writes them
    (:func:`~symverify.scripts.protocol.stable_number`), mappings with sorted string keys."""
    from symverify.scripts.protocol import stable_number

    if isinstance(x, bool) or x is None or isinstance(x, str):
        return x
    if isinstance(x, (int, Fraction, float)):
        return stable_number(x)
    if isinstance(x, Mapping):
        return {str(k): _stable(v) for k, v in sorted(x.items(), key=lambda kv: str(kv[0]))}
    if isinstance(x, (list, tuple)):
        return [_stable(v) for v in x]
    if hasattr(x, "value") and isinstance(x.value, str):  # enums (Verdict, Mode)
        return x.value
    return str(x)


def golden_record(obj: Any) -> dict[str, Any]:
    """The stable record of a report, a compile result, a proof instance or result, or a mapping.

    Kept: verdicts, methods, the sides' statistics, resources, bounds, the failure bound and the
    counterexample. Left out: timings, engine choices, paths (they differ between machines).
    """
    from symverify.compiler.result import Compiled
    from symverify.scripts.protocol import Instance, ProofResult
    from symverify.verification import Report

    if isinstance(obj, Report):
        rec: dict[str, Any] = {"kind": "report", "verdict": obj.verdict, "method": obj.method, "lhs": obj.lhs, "rhs": obj.rhs}
        if "bound" in obj.evidence:
            rec["failure_bound"] = obj.evidence["bound"]
        if obj.counterexample is not None:
            rec["counterexample"] = obj.counterexample.to_json()
    elif isinstance(obj, Compiled):
        rec = {"kind": "compiled", "method": obj.method, "signature": obj.model.signature,
               "resources": obj.resources, "bounds": obj.bounds}
    elif isinstance(obj, Instance):
        rec = {"kind": "instance", "name": obj.name, "verdict": obj.verdict, "claim": obj.kind.value, "basis": obj.basis,
               "method": obj.method, "resources": obj.resources, "bounds": obj.bounds, "ok": obj.ok}
    elif isinstance(obj, ProofResult):
        rec = {"kind": "proof", "name": obj.name, "title": obj.title, "ok": obj.ok,
               "instances": [golden_record(i) for i in obj.instances]}
    elif isinstance(obj, Mapping):
        rec = dict(obj)
    else:
        raise TypeError(f"golden_record: expected a Report, Compiled, Instance, ProofResult or mapping, found {type(obj).__name__}")
    return _stable(rec)


def golden_text(obj: Any) -> str:
    """:func:`golden_record` as sorted, indented JSON with a final newline (diff-friendly)."""
    return json.dumps(golden_record(obj), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

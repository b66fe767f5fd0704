"""The protocol shared by the proof scripts in ``proofs/`` and the ``symverify prove`` runner.

A proof script is a module with a ``TITLE`` (the result it proves, e.g. ``"Lemma H.16"``) and a
function ``run(quick: bool = False) -> ProofResult``. Each :class:`Instance` is one checked claim:
its verdict (a :class:`~symverify.provers.outcome.Verdict`; scripts may pass ``"proved"``,
``"refuted"`` or ``"unknown"``), the method that decided it, the resources the construction used
and the bounds it states for them. A result is *ok* only when every instance is
proved and within every stated bound. Running a script alone (``python proofs/NAME.py
[--quick] [--json OUT]``) goes through :func:`script_main`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any

from symverify.errors import UsageError
from symverify.provers.outcome import Verdict

__all__ = ["Instance", "ProofResult", "script_main", "timed"]

Number = int | float | Fraction


@dataclass(frozen=True)
class Instance:
    """One checked claim of a proof script.

    ``verdict`` may be given as its string (``"proved"``, ``"refuted"``, ``"unknown"``); it is
    stored as a :class:`Verdict`, and anything else raises :class:`~symverify.errors.UsageError`.
    JSON and tables write its string.
    """

    name: str
    verdict: Verdict
    method: str
    resources: dict[str, Number] = field(default_factory=dict)
    bounds: dict[str, Number] = field(default_factory=dict)
    seconds: float = 0.0
    detail: str = ""

    def __post_init__(self) -> None:
        try:
            verdict = Verdict(self.verdict)
        except (ValueError, TypeError):
            raise UsageError(f"instance {self.name!r}: verdict: expected one of "
                             f"{', '.join(repr(v.value) for v in Verdict)} (or a Verdict), found {self.verdict!r}") from None
        object.__setattr__(self, "verdict", verdict)

    def over_bound(self) -> list[str]:
        """Names of resources that exceed their stated bound (or have no value)."""
        bad = []
        for key, bound in self.bounds.items():
            val = self.resources.get(key)
            if val is None or val > bound:
                bad.append(key)
        return bad

    @property
    def ok(self) -> bool:
        return self.verdict is Verdict.PROVED and not self.over_bound()

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["verdict"] = self.verdict.value
        d["resources"] = {k: _num(v) for k, v in self.resources.items()}
        d["bounds"] = {k: _num(v) for k, v in self.bounds.items()}
        d["over_bound"] = self.over_bound()
        d["ok"] = self.ok
        return d


def _num(v: Number) -> int | float | str:
    if isinstance(v, Fraction):
        return int(v) if v.denominator == 1 else str(v)
    return v


@dataclass
class ProofResult:
    """All instances a script checked for one result."""

    name: str
    title: str
    instances: list[Instance] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return bool(self.instances) and all(i.ok for i in self.instances)

    def counts(self) -> dict[str, int]:
        out = {v.value: 0 for v in Verdict}
        for i in self.instances:
            out[i.verdict.value] += 1
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "ok": self.ok,
            "counts": self.counts(),
            "seconds": round(self.seconds, 3),
            "instances": [i.to_json() for i in self.instances],
        }

    def table(self) -> str:
        """A plain-text table: one line per instance."""
        lines = [f"{self.title} ({self.name}): {'OK' if self.ok else 'FAILED'}  {self.counts()}"]
        for i in self.instances:
            res = ", ".join(f"{k}={_num(v)}" + (f"≤{_num(i.bounds[k])}" if k in i.bounds else "") for k, v in i.resources.items())
            flag = "" if i.ok else ("  <-- over bound: " + ",".join(i.over_bound()) if i.verdict is Verdict.PROVED else "  <--")
            lines.append(f"  {i.verdict.value:8s} {i.method:14s} {i.name:40s} {res} [{i.seconds:.2f}s]{flag}")
        return "\n".join(lines)


@contextmanager
def timed() -> Iterator[list[float]]:
    """``with timed() as t: ...`` then ``t[0]`` holds the elapsed seconds."""
    box = [0.0]
    start = time.perf_counter()
    try:
        yield box
    finally:
        box[0] = time.perf_counter() - start


def script_main(run: Callable[[bool], ProofResult], argv: list[str] | None = None) -> int:
    """Entry point for ``python proofs/NAME.py [--quick] [--json OUT]``; returns the exit code."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="the small tier run in CI")
    ap.add_argument("--json", metavar="OUT", help="write the result as JSON to OUT")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    result = run(args.quick)
    result.seconds = time.perf_counter() - start
    print(result.table())
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result.to_json(), fh, indent=2)
    code = 0 if result.ok else 1
    if __name__ != "__main__":
        sys.stdout.flush()
    return code

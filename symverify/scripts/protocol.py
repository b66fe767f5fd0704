"""The protocol shared by the proof scripts in ``proofs/`` and the ``symverify prove`` runner.

A proof script is a module with a ``TITLE`` (the result it proves, e.g. ``"Lemma H.16"``) and a
function ``run(quick: bool = False) -> ProofResult``. Each :class:`Instance` is one checked claim:
its verdict (a :class:`~symverify.provers.outcome.Verdict`; scripts may pass ``"proved"``,
``"refuted"`` or ``"unknown"``), the method that decided it, the resources the construction used
and the bounds it states for them. A result is *ok* only when every instance is
proved and within every stated bound. Running a script alone (``python -m symverify.proofs.NAME
[--quick] [--json OUT]``) goes through :func:`script_main`.

**Methods** come from a closed set: an instance's ``method`` is one of :data:`METHOD_TOKENS` or
several joined by ``+`` (``"compositional+exact"``); free text goes in ``detail``.

**Stable JSON.** Resources and bounds keep one JSON type per value kind: ``int`` stays an integer,
a ``Fraction`` is always its exact string (``"4/5"``, ``"3"``), a ``float`` is rounded to 6
significant digits; times are rounded to 0.1 s.

**Sharding.** A script whose instances are independent, one group per case, can declare
``SHARDABLE = True`` and loop ``for case in each(cases):``. ``script_main(--shard k/K)`` then runs
only the cases with index ``≡ k (mod K)``, tags every instance with its case index, and the
runner (``symverify prove -j N``) merges the shards into exactly the order of an unsharded run.
Instances made outside :func:`each` come from shard 0 only.
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

__all__ = ["METHOD_TOKENS", "Instance", "ProofResult", "each", "script_main", "timed"]

METHOD_TOKENS = frozenset({
    # the methods of symverify.verify
    "auto", "exact", "exact-sympy", "compositional", "randomized", "z3",
    # the matrix prover (symverify.provers.matrix)
    "exact-matrix", "garbage-free",
    # other exact arguments a script combines: the zero-support / dependence analysis, a cross-check
    # against the dense baseline, a stated lemma, counting, exact rank or degree computations, an
    # explicit witness construction, a lower-bound argument, input validation that must refuse
    "support", "dense", "lemma", "counting", "rank", "degree", "witness", "lower-bound", "validation",
})
"""The words an instance's ``method`` is made of (joined by ``+``)."""

_SHARD: tuple[int, int] = (0, 1)
_CASE: list[int | None] = [None]

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
        words = self.method.split("+") if isinstance(self.method, str) else [self.method]
        unknown = [w for w in words if w not in METHOD_TOKENS]
        if unknown:
            raise UsageError(f"instance {self.name!r}: method {self.method!r}: expected words from "
                             f"{', '.join(sorted(METHOD_TOKENS))} joined by '+'; found {', '.join(map(repr, unknown))}")

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
        d["seconds"] = round(self.seconds, 1)
        d["resources"] = {k: _num(v) for k, v in self.resources.items()}
        d["bounds"] = {k: _num(v) for k, v in self.bounds.items()}
        d["over_bound"] = self.over_bound()
        d["ok"] = self.ok
        return d


def _num(v: Number) -> int | float | str:
    """One JSON type per kind of value: int, exact string for a Fraction, 6-digit float."""
    if isinstance(v, Fraction):
        return str(v)
    if isinstance(v, float):
        return float(f"{v:.6g}")
    return v


class _Instances(list):  # type: ignore[type-arg]
    """A result's instance list that remembers which case (of :func:`each`) made each one."""

    def __init__(self, items: Any = ()) -> None:
        super().__init__()
        self.cases: list[int | None] = []
        for i in items:
            self.append(i)

    def append(self, item: Any) -> None:
        if _CASE[0] is None and _SHARD[0] != 0:
            return  # made outside each(): shard 0 keeps it
        super().append(item)
        self.cases.append(_CASE[0])

    def extend(self, items: Any) -> None:
        for item in items:
            self.append(item)

    def __iadd__(self, items: Any) -> _Instances:  # type: ignore[misc,override]
        self.extend(items)
        return self

    def insert(self, index: Any, item: Any) -> None:
        raise TypeError("a result's instances are only appended (their order is the order of the cases)")


def each(cases: Any) -> Iterator[Any]:
    """The cases of this shard (all of them unless the runner asked for ``--shard k/K``); every
    instance added while handling a case is tagged with the case's index."""
    k, K = _SHARD
    try:
        for index, case in enumerate(cases):
            if index % K != k:
                continue
            _CASE[0] = index
            yield case
    finally:
        _CASE[0] = None


@dataclass
class ProofResult:
    """All instances a script checked for one result."""

    name: str
    title: str
    instances: list[Instance] = field(default_factory=_Instances)
    seconds: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.instances, _Instances):
            self.instances = _Instances(self.instances)

    @property
    def ok(self) -> bool:
        return bool(self.instances) and all(i.ok for i in self.instances)

    def counts(self) -> dict[str, int]:
        out = {v.value: 0 for v in Verdict}
        for i in self.instances:
            out[i.verdict.value] += 1
        return out

    def to_json(self) -> dict[str, Any]:
        cases = getattr(self.instances, "cases", [None] * len(self.instances))
        instances = []
        for inst, case in zip(self.instances, cases):
            d = inst.to_json()
            if _SHARD[1] > 1:
                d["case"] = case
            instances.append(d)
        return {
            "name": self.name,
            "title": self.title,
            "ok": self.ok,
            "counts": self.counts(),
            "seconds": round(self.seconds, 1),
            "instances": instances,
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
    """Entry point for ``python -m symverify.proofs.NAME [--quick] [--json OUT]``; returns the exit code."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="the small tier run in CI")
    ap.add_argument("--json", metavar="OUT", help="write the result as JSON to OUT")
    ap.add_argument("--shard", metavar="K/N", help="only the cases with index ≡ K (mod N) (for SHARDABLE scripts)")
    args = ap.parse_args(argv)
    global _SHARD
    if args.shard:
        try:
            k, n = (int(x) for x in args.shard.split("/"))
        except ValueError:
            ap.error(f"--shard: expected K/N with 0 ≤ K < N, found {args.shard!r}")
        if not 0 <= k < n:
            ap.error(f"--shard: expected K/N with 0 ≤ K < N, found {args.shard!r}")
        _SHARD = (k, n)
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

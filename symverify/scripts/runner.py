"""The proof-script runner behind ``symverify prove``.

A proof script is ``proofs/NAME.py`` following :mod:`symverify.scripts.protocol` (``TITLE``,
``run(quick)``, ``script_main``). The runner discovers the scripts of a directory, runs each in its
own Python process (``python NAME.py [--quick] --json TMP`` from the directory's parent, so a
crash, even a FLINT abort, fails one row and the run goes on), and collects one
:class:`ScriptOutcome` per script: its :class:`~symverify.scripts.protocol.ProofResult` JSON, or why
there is none. A run is ok only when every script is ok: every instance proved and within every
bound it states, and no script crashed.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from symverify.provers.outcome import UsageError, Verdict

__all__ = ["ScriptOutcome", "RunSummary", "default_dir", "discover", "script_title", "run_script", "run_scripts"]


@dataclass(frozen=True)
class ScriptOutcome:
    """One script's row: ``status`` is ``ok``, ``failed`` (ran, not every instance ok) or ``crashed``."""

    name: str
    title: str
    status: str
    seconds: float
    result: dict[str, Any] | None = None
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def instances(self) -> list[dict[str, Any]]:
        return list((self.result or {}).get("instances", []))

    def counts(self) -> dict[str, int]:
        out = {v.value: 0 for v in Verdict}
        for inst in self.instances():
            out[inst.get("verdict", "unknown")] = out.get(inst.get("verdict", "unknown"), 0) + 1
        return out

    def over_bound(self) -> list[str]:
        """``instance: resource`` for every resource over its stated bound."""
        return [f"{i.get('name')}: {k}" for i in self.instances() for k in i.get("over_bound", [])]

    def tightest(self) -> str:
        """The resource closest to its stated bound, as ``key=value≤bound`` ('' without bounds)."""
        best: tuple[Fraction, str] | None = None
        for inst in self.instances():
            res = inst.get("resources", {})
            for key, bound in inst.get("bounds", {}).items():
                try:
                    val, bnd = Fraction(str(res[key])), Fraction(str(bound))
                except (KeyError, ValueError, ZeroDivisionError):
                    continue
                ratio = val / bnd if bnd else (Fraction(0) if val <= 0 else Fraction(10**9))
                if best is None or ratio > best[0]:
                    best = (ratio, f"{key}={res[key]}≤{bound}")
        return "" if best is None else best[1]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "status": self.status,
            "ok": self.ok,
            "seconds": round(self.seconds, 3),
            "counts": self.counts(),
            "over_bound": self.over_bound(),
            "error": self.error,
            "result": self.result,
        }


@dataclass(frozen=True)
class RunSummary:
    """All rows of one ``symverify prove`` run."""

    directory: str
    quick: bool
    outcomes: tuple[ScriptOutcome, ...] = field(default=())
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return bool(self.outcomes) and all(o.ok for o in self.outcomes)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": "symverify.provers-run",
            "version": 1,
            "directory": self.directory,
            "quick": self.quick,
            "ok": self.ok,
            "seconds": round(self.seconds, 3),
            "scripts": [o.to_json() for o in self.outcomes],
        }


def default_dir(cwd: str | Path | None = None) -> Path:
    """``./proofs`` if it exists, else the ``proofs/`` next to the package's source tree."""
    here = Path(cwd or os.getcwd()) / "proofs"
    if here.is_dir():
        return here
    return Path(__file__).resolve().parents[2] / "proofs"


def discover(directory: str | Path) -> dict[str, Path]:
    """``{NAME: path}`` for every ``NAME.py`` in ``directory`` (names starting with ``_`` skipped)."""
    d = Path(directory)
    if not d.is_dir():
        raise UsageError(f"proof directory {d} does not exist (pass --dir DIR)")
    return {p.stem: p for p in sorted(d.glob("*.py")) if not p.stem.startswith("_")}


def script_title(path: Path) -> str:
    """The script's ``TITLE`` read without importing it ('' when absent or unreadable)."""
    try:
        tree = ast.parse(path.read_text())
    except (OSError, SyntaxError, ValueError):
        return ""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "TITLE" for t in node.targets):
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                return node.value.value
    return ""


def select(available: dict[str, Path], names: Sequence[str]) -> list[str]:
    """The chosen names in order (``all`` or none: every script); unknown names raise UsageError."""
    if not names or list(names) == ["all"]:
        return list(available)
    unknown = [n for n in names if n not in available and n != "all"]
    if unknown:
        listing = ", ".join(available) or "(none)"
        raise UsageError(f"unknown proof script(s) {', '.join(unknown)}; available: {listing}")
    return list(available) if "all" in names else list(dict.fromkeys(names))


def _tail(text: str, lines: int = 6) -> str:
    return " | ".join(line for line in text.strip().splitlines()[-lines:] if line.strip())


def run_script(name: str, path: Path, *, quick: bool, timeout: float | None = None) -> ScriptOutcome:
    """Run one script in a fresh interpreter and read its JSON result."""
    title = script_title(path)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="symverify-prove-") as tmp:
        out = Path(tmp) / "result.json"
        cmd = [sys.executable, str(path.resolve()), "--json", str(out)] + (["--quick"] if quick else [])
        try:
            proc = subprocess.run(cmd, cwd=path.resolve().parent.parent, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return ScriptOutcome(name, title, "crashed", time.perf_counter() - start, error=f"timed out after {timeout} s")
        secs = time.perf_counter() - start
        data = None
        if out.exists():
            try:
                data = json.loads(out.read_text(encoding="utf-8"))
            except (OSError, ValueError, RecursionError) as e:  # ValueError: bad JSON, bad UTF-8, huge ints
                return ScriptOutcome(name, title, "crashed", secs, error=f"unreadable result JSON: {e}")
            if not isinstance(data, dict):
                return ScriptOutcome(name, title, "crashed", secs,
                                     error=f"result JSON: expected an object, found {type(data).__name__}")
    if data is None:
        why = _tail(proc.stderr, 2) or _tail(proc.stdout, 2) or "no output"
        return ScriptOutcome(name, title, "crashed", secs, error=f"exit code {proc.returncode}: {why}")
    status = "ok" if data.get("ok") and proc.returncode == 0 else "failed"
    err = "" if status == "ok" else (_tail(proc.stderr, 3) if proc.returncode not in (0, 1) else "")
    return ScriptOutcome(name, data.get("title") or title, status, secs, data, err)


def run_scripts(directory: str | Path, names: Sequence[str] = (), *, quick: bool = False, timeout: float | None = None,
                on_start: Callable[[str], None] | None = None,
                on_done: Callable[[ScriptOutcome], None] | None = None) -> RunSummary:
    """Run the selected scripts of ``directory`` one after another."""
    available = discover(directory)
    chosen = select(available, names)
    start = time.perf_counter()
    outcomes = []
    for name in chosen:
        if on_start:
            on_start(name)
        o = run_script(name, available[name], quick=quick, timeout=timeout)
        outcomes.append(o)
        if on_done:
            on_done(o)
    return RunSummary(str(directory), quick, tuple(outcomes), time.perf_counter() - start)

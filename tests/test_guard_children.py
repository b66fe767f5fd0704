"""The limited child (``symverify.kernel.provers.guard.run_limited``): what its messages name, and how
it stands up to bad limits, forks, signals and exceptions."""

from __future__ import annotations

import ast
import os
import pathlib
import signal

import symverify as sv
from symverify.kernel.provers import exact
from symverify.kernel.provers.guard import run_limited

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _killed() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_dead_child_is_named_by_what_it_was_doing():
    """Every child's death was "the expansion process", a z3 query's or a counterexample's re-check too."""
    out = run_limited(_killed, (), memory=1 << 30, timeout=60, what="the z3 query")
    assert out.status == "crashed", out
    assert out.detail.startswith("the process running the z3 query was killed by signal 9 "), out
    assert "expansion" not in out.detail, out


def test_every_kernel_caller_names_its_child():
    """Each ``run_limited`` call of the package says what its child does (``what=``)."""
    calls = []
    for path in sorted((ROOT / "symverify").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "run_limited":
                calls.append((path.relative_to(ROOT), node.lineno, {k.arg for k in node.keywords}))
    assert len(calls) >= 7, calls
    unnamed = [f"{p}:{line}" for p, line, keys in calls if "what" not in keys]
    assert not unnamed, f"run_limited without what=: {unnamed}"


def _killed_expansion(*args: object) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def test_an_expansion_killed_in_its_child_is_named_in_the_report(monkeypatch):
    monkeypatch.setattr(exact, "expand_compare", _killed_expansion)  # the fork inherits it
    c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][0]], n=1, d=1)
    report = sv.verify(c, c, method="exact", isolate=True, memory_limit=1 << 30)
    assert str(report.verdict) == "unknown", report
    (note,) = report.notes
    assert note.startswith("expansion stopped (crashed): the process running the expansion was killed by signal 9"), note

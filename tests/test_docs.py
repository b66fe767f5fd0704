"""Docs that run: every fenced ```python block of README.md and docs/*.md executes, and the README's pictures are
what docs/make_images.py draws today.

Each block runs on its own (a fresh namespace, in a temporary directory, matplotlib on Agg), so every block must be
self-contained. A block that genuinely cannot run here (it needs a GPU or a cluster) opts out with a first line
``# docs: skip (<why>)``; the reason is shown as the skip reason.
"""

from __future__ import annotations

import re
import runpy
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SKIP = re.compile(r"^#\s*docs:\s*skip\s*\((.+)\)\s*$")


def blocks(path: Path) -> list[tuple[int, str]]:
    """``(line, code)`` of every fenced python block of a Markdown file (line: where the code starts)."""
    out, lines = [], path.read_text(encoding="utf-8").splitlines()
    k = 0
    while k < len(lines):
        if lines[k].strip() == "```python":
            start, body = k + 2, []
            k += 1
            while k < len(lines) and lines[k].strip() != "```":
                body.append(lines[k])
                k += 1
            out.append((start, "\n".join(body) + "\n"))
        k += 1
    return out


CASES = [(p, line, code) for p in DOCS for line, code in blocks(p)]


def _skip_reason(code: str) -> str | None:
    first = code.lstrip().splitlines()[0] if code.strip() else ""
    m = SKIP.match(first)
    return m.group(1) if m else None


def test_the_docs_have_blocks_to_run():
    assert {p.name for p, _, _ in CASES} >= {"README.md", "formats.md"}
    # opting out is for the rare block that cannot run here; it must not become the rule
    skipped = [f"{p.name}:{line}" for p, line, code in CASES if _skip_reason(code) is not None]
    assert len(skipped) <= len(CASES) // 10, f"{len(skipped)} of {len(CASES)} blocks opt out: {skipped}"


@pytest.mark.parametrize("path, line, code", CASES, ids=[f"{p.name}:{line}" for p, line, _ in CASES])
def test_block_runs(path, line, code, tmp_path, monkeypatch):
    why = _skip_reason(code)
    if why is not None:
        pytest.skip(why)
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    compiled = compile(code, f"{path.relative_to(ROOT)}:{line}", "exec")
    namespace: dict[str, object] = {"__name__": "__docs__"}
    exec(compiled, namespace)
    unbound = _unbound_globals(namespace)
    assert not unbound, f"functions of the block read names it never defines: {', '.join(unbound)}"


def _unbound_globals(namespace: dict[str, object]) -> list[str]:
    """``function: name`` for every global a function defined by the block reads that neither the block
    nor builtins define (a body that would fail with NameError once called, e.g. by pytest)."""
    import builtins
    import dis
    import types

    out = []

    def walk(fn: str, code: types.CodeType) -> None:
        for ins in dis.get_instructions(code):
            if ins.opname == "LOAD_GLOBAL" and ins.argval not in namespace and not hasattr(builtins, ins.argval):
                out.append(f"{fn}: {ins.argval}")
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                walk(fn, c)

    for name, v in namespace.items():
        if isinstance(v, types.FunctionType) and v.__globals__ is namespace:
            walk(name, v.__code__)
    return sorted(set(out))


def test_the_pictures_are_what_make_images_draws(tmp_path):
    """README's pictures show README's example: docs/make_images.py draws them, and the committed files are what it
    draws today (the same size, and nearly the same pixels)."""
    pytest.importorskip("matplotlib")
    import numpy as np
    from matplotlib.image import imread

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    example = "sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[1][0], u[1][1]], n=2, d=2"
    assert example in readme and example in (ROOT / "docs" / "make_images.py").read_text(encoding="utf-8")
    env_out = tmp_path / "images"
    old_argv = sys.argv
    try:
        sys.argv = ["make_images.py", str(env_out)]
        with pytest.raises(SystemExit) as e:
            runpy.run_path(str(ROOT / "docs" / "make_images.py"), run_name="__main__")
        assert e.value.code == 0
    finally:
        sys.argv = old_argv
    for name in ("occupancy.png", "benes.png"):
        assert f"docs/images/{name}" in readme
        fresh, committed = imread(env_out / name), imread(ROOT / "docs" / "images" / name)
        hint = "run `python docs/make_images.py` and commit docs/images"
        assert fresh.shape == committed.shape, f"{name}: {committed.shape} committed, {fresh.shape} drawn; {hint}"
        assert float(np.abs(fresh - committed).mean()) < 0.01, f"{name} differs from what make_images draws; {hint}"

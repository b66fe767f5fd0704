"""Every private module-level name of symverify (``_NAME = ...``) is read: in its module, or by a
module importing it. A constant left behind unused (``dask_backend._ADDRESS``, a regular expression
that checked nothing) reads as a check that no code makes."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "symverify"


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "proofs" not in p.relative_to(PACKAGE).parts)


def test_every_private_module_level_name_is_read():
    trees = {p: ast.parse(p.read_text(encoding="utf-8")) for p in _modules()}
    imported = {a.name for t in trees.values() for n in ast.walk(t) if isinstance(n, ast.ImportFrom) for a in n.names}
    unread = []
    for path, tree in trees.items():
        read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
            for t in targets:
                if isinstance(t, ast.Name) and t.id.startswith("_") and not t.id.startswith("__") and t.id != "_" \
                        and t.id not in read and t.id not in imported:
                    unread.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {t.id}")
    assert not unread, f"private module-level names nothing reads: {unread}"


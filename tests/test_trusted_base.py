"""The trusted base as listed in docs/trusted-base.md agrees with the tree and the import contract.

The section "The trusted modules, listed" holds two tables: ``| module | lines | why trusted |`` and
``| module | why untrusted |``. The checks (each a pure function of the document's text, the
tree's ``.py`` files with their line counts and the contract's source modules, so a planted change
can be fed in directly):

* every listed module exists, and none is listed twice or in both tables;
* the trusted table lists exactly the modules under ``symverify/kernel/`` (its docstring-only
  ``__init__.py`` files aside), each with a line count within 10 % of its real one;
* every module under ``symverify/provers/`` and ``symverify/semantics/``, and every module of the
  package that a trusted module imports, is in one of the tables, each with a reason;
* the import-linter contract *the kernel is closed* (pyproject.toml) has ``symverify.kernel`` as
  its source and forbids every module of the package outside the kernel but the stated leaves
  (:data:`LEAVES`); each leaf imports nothing but other leaves, and every module the kernel
  imports directly is in the kernel, a leaf, or an edge the contract ignores.

``python tests/test_trusted_base.py --write`` rewrites the ``lines`` column from the tree.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "trusted-base.md"
SECTION = "## The trusted modules, listed"
CONTRACT = "the kernel is closed"
LEAVES = ("symverify.errors", "symverify.deadline", "symverify.progress", "symverify._version", "symverify.ir.limits",
          "symverify.ir.bigint", "symverify.ir.files", "symverify.provers.dask_address")
"""The modules outside the kernel that it may import (docs/trusted-base.md)."""
COMPLETE = ("symverify/kernel/", "symverify/provers/", "symverify/semantics/")
KERNEL = "symverify/kernel/"
TOLERANCE = 0.10

_TRUSTED_ROW = re.compile(r"^\| `(?P<module>[^`]+)` \| (?P<lines>[^|]*) \| (?P<why>.*) \|$")
_UNTRUSTED_ROW = re.compile(r"^\| `(?P<module>[^`]+)` \| (?P<why>.*) \|$")


def section(doc: str) -> str:
    """The text of the listing section, up to the next ``## `` heading."""
    start = doc.index(SECTION)
    end = doc.find("\n## ", start + len(SECTION))
    return doc[start : end if end >= 0 else len(doc)]


def tables(doc: str) -> tuple[dict[str, tuple[str, str]], dict[str, str], list[str]]:
    """The trusted rows (module → (lines text, why)), the untrusted rows (module → why) and problems
    found while reading them (duplicates, rows in both tables)."""
    trusted: dict[str, tuple[str, str]] = {}
    untrusted: dict[str, str] = {}
    problems: list[str] = []
    for line in section(doc).splitlines():
        if (m := _TRUSTED_ROW.match(line)) is not None:
            if m["module"] in trusted:
                problems.append(f"{m['module']}: listed twice as trusted")
            trusted[m["module"]] = (m["lines"].strip(), m["why"].strip())
        elif (m := _UNTRUSTED_ROW.match(line)) is not None:
            if m["module"] in untrusted:
                problems.append(f"{m['module']}: listed twice as untrusted")
            untrusted[m["module"]] = m["why"].strip()
    problems += [f"{mod}: listed both as trusted and as untrusted" for mod in sorted(trusted.keys() & untrusted.keys())]
    return trusted, untrusted, problems


def dotted(module: str) -> str:
    """``symverify/kernel/provers/exact.py`` → ``symverify.kernel.provers.exact`` (a package's ``__init__.py`` → the package)."""
    name = module.removesuffix(".py").replace("/", ".")
    return name.removesuffix(".__init__")


@dataclass(frozen=True)
class Contract:
    """The closed-kernel contract as pyproject.toml states it."""

    sources: tuple[str, ...]
    forbidden: tuple[str, ...]
    ignored: tuple[tuple[str, str], ...] = ()


def expected_forbidden(files: Mapping[str, int]) -> list[str]:
    """Every module of the package outside the kernel but the leaves: a top-level module or package
    as one name, a package holding a leaf as its other modules."""
    mods = {dotted(p) for p in files} - {"symverify"}
    out = set()
    for m in mods:
        if m == "symverify.kernel" or m.startswith("symverify.kernel.") or m in LEAVES:
            continue
        top = ".".join(m.split(".")[:2])
        if any(leaf.startswith(top + ".") for leaf in LEAVES):
            if m != top:
                out.add(".".join(m.split(".")[:3]))
        else:
            out.add(top)
    return sorted(out)


def check(doc: str, files: Mapping[str, int], contract: Contract,
          imports: Mapping[str, set[str]] | None = None) -> list[str]:
    """Every disagreement between the listing ``doc``, the tree (``files``: path → line count), the
    contract and ``imports`` (module → the package's modules it imports; left out, not checked)."""
    trusted, untrusted, problems = tables(doc)
    if not trusted:
        problems.append(f"{SECTION!r}: no trusted module listed")
    for mod, (stated, why) in trusted.items():
        if mod not in files:
            problems.append(f"{mod}: listed as trusted but does not exist")
            continue
        if not mod.startswith(KERNEL):
            problems.append(f"{mod}: listed as trusted but outside {KERNEL}")
        if not why:
            problems.append(f"{mod}: listed as trusted without a reason")
        if not stated.isdigit():
            problems.append(f"{mod}: expected a line count, found {stated!r}")
        elif abs(int(stated) - files[mod]) > TOLERANCE * files[mod]:
            problems.append(f"{mod}: stated {stated} lines, has {files[mod]} (more than 10 % off; "
                            f"run python tests/test_trusted_base.py --write)")
    for mod, why in untrusted.items():
        if mod not in files:
            problems.append(f"{mod}: listed as untrusted but does not exist")
        if mod.startswith(KERNEL):
            problems.append(f"{mod}: listed as untrusted but inside {KERNEL}")
        if not why:
            problems.append(f"{mod}: listed as untrusted without a reason")
    for path in sorted(files):
        if path.startswith(KERNEL) and path.endswith("/__init__.py"):
            continue  # docstring only (test_kernel_packages_hold_no_code)
        if path.startswith(KERNEL) and path not in trusted:
            problems.append(f"{path}: in the kernel but not listed as trusted")
        elif path.startswith(COMPLETE) and path not in trusted and path not in untrusted:
            problems.append(f"{path}: neither listed as trusted nor as untrusted with a reason")
    listed = {dotted(m) for m in trusted} | {dotted(m) for m in untrusted}
    for mod in sorted(dotted(m) for m in trusted):
        for imported in sorted((imports or {}).get(mod, set()) - listed):
            problems.append(f"{imported}: imported by trusted {mod}, but neither listed as trusted nor as untrusted")
    if list(contract.sources) != ["symverify.kernel"]:
        problems.append(f"import contract {CONTRACT!r}: source_modules should be ['symverify.kernel'], "
                        f"found {list(contract.sources)}")
    expected = expected_forbidden(files)
    if sorted(contract.forbidden) != expected:
        missing = sorted(set(expected) - set(contract.forbidden))
        extra = sorted(set(contract.forbidden) - set(expected))
        problems.append(f"import contract {CONTRACT!r}: forbidden_modules should be every module outside the kernel "
                        f"but the leaves; missing {missing}, not expected {extra}")
    ignored = set(contract.ignored)
    for mod, deps in sorted((imports or {}).items()):
        if mod in LEAVES:
            for dep in sorted(deps - set(LEAVES)):
                problems.append(f"{dep}: imported by the leaf {mod}; a leaf imports only other leaves")
        if mod == "symverify.kernel" or mod.startswith("symverify.kernel."):
            for dep in sorted(deps):
                if not (dep.startswith("symverify.kernel.") or dep in LEAVES or (mod, dep) in ignored):
                    problems.append(f"{dep}: imported by the kernel's {mod}, outside the kernel and its leaves")
    return problems


def tree_files(root: Path = ROOT) -> dict[str, int]:
    """Every ``.py`` file of the package, by path relative to ``root``, with its line count."""
    return {p.relative_to(root).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
            for p in sorted((root / "symverify").rglob("*.py"))}


def package_imports() -> dict[str, set[str]]:
    """Module → the package's modules it imports directly (function-level imports included)."""
    import grimp

    graph = grimp.build_graph("symverify")
    return {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}


def contract(root: Path = ROOT) -> Contract:
    """The closed-kernel contract, from pyproject.toml."""
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    for c in config["tool"]["importlinter"]["contracts"]:
        if c["name"] == CONTRACT:
            assert c["type"] == "forbidden"
            ignored = tuple(tuple(e.replace(" ", "").split("->")) for e in c.get("ignore_imports", ()))
            return Contract(tuple(c["source_modules"]), tuple(c["forbidden_modules"]), ignored)  # type: ignore[arg-type]
    raise AssertionError(f"pyproject.toml: no import-linter contract named {CONTRACT!r}")


def rewrite_counts(doc: str, files: Mapping[str, int]) -> str:
    """``doc`` with every trusted row's line count replaced by the real one."""
    start = doc.index(SECTION)
    end = doc.find("\n## ", start + len(SECTION))
    end = end if end >= 0 else len(doc)

    def fix(line: str) -> str:
        m = _TRUSTED_ROW.match(line)
        if m is None or m["module"] not in files:
            return line
        return f"| `{m['module']}` | {files[m['module']]} | {m['why']} |"

    body = "\n".join(fix(line) for line in doc[start:end].split("\n"))
    return doc[:start] + body + doc[end:]


# --- the tree as it is ------------------------------------------------------------------------------


def test_listing_agrees_with_tree_and_contract() -> None:
    problems = check(DOC.read_text(encoding="utf-8"), tree_files(), contract(), package_imports())
    assert not problems, "\n".join(problems)


def test_the_contract_closes_the_kernel() -> None:
    c = contract()
    assert c.sources == ("symverify.kernel",)
    for forbidden in ("symverify.compiler", "symverify.gadgets", "symverify.executors", "symverify.kaleidoscope",
                      "symverify.ir.serialize", "symverify.provers.engine_cost"):
        assert forbidden in c.forbidden
    assert not set(LEAVES) & set(c.forbidden)


def test_kernel_packages_hold_no_code() -> None:
    """The kernel's ``__init__.py`` files are docstrings only, so the listing need not name them."""
    import ast

    for path in sorted((ROOT / KERNEL).rglob("__init__.py")):
        body = ast.parse(path.read_text(encoding="utf-8")).body
        assert len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant), path


# --- planted changes are caught ---------------------------------------------------------------------


def _state() -> tuple[str, dict[str, int], Contract, tuple[()]]:
    return DOC.read_text(encoding="utf-8"), tree_files(), contract(), ()


def test_a_missing_trusted_module_is_caught() -> None:
    doc, files, c, _ = _state()
    del files["symverify/kernel/provers/outcome.py"]
    problems = check(doc, files, c)
    assert any("outcome.py: listed as trusted but does not exist" in p for p in problems)


def test_a_line_count_off_by_more_than_ten_percent_is_caught() -> None:
    doc, files, c, _ = _state()
    files["symverify/kernel/provers/exact.py"] = int(files["symverify/kernel/provers/exact.py"] * 1.2) + 1
    problems = check(doc, files, c)
    assert any(p.startswith("symverify/kernel/provers/exact.py: stated") for p in problems)


def test_a_line_count_within_ten_percent_passes() -> None:
    doc, files, c, _ = _state()
    files["symverify/kernel/provers/exact.py"] = int(files["symverify/kernel/provers/exact.py"] * 1.05)
    assert check(doc, files, c) == []


def test_an_unlisted_prover_module_is_caught() -> None:
    doc, files, c, _ = _state()
    files["symverify/provers/shortcut.py"] = 10
    problems = check(doc, files, c)
    assert problems[0] == "symverify/provers/shortcut.py: neither listed as trusted nor as untrusted with a reason"
    assert len(problems) == 2 and "missing ['symverify.provers.shortcut']" in problems[1]


def test_a_removed_row_is_caught() -> None:
    doc, files, c, _ = _state()
    planted = "\n".join(line for line in doc.split("\n") if not line.startswith("| `symverify/provers/engine_cost.py`"))
    problems = check(planted, files, c)
    assert problems == ["symverify/provers/engine_cost.py: neither listed as trusted nor as untrusted with a reason"]


def test_an_untrusted_row_without_reason_is_caught() -> None:
    doc, files, c, _ = _state()
    planted = re.sub(r"(\| `symverify/provers/dask_address.py` \|)[^\n]*", r"\1  |", doc)
    problems = check(planted, files, c)
    assert any("dask_address.py: listed as untrusted without a reason" in p for p in problems)


def test_a_module_in_both_tables_is_caught() -> None:
    doc, files, c, _ = _state()
    planted = doc.replace("| `symverify/provers/dask_address.py` |", "| `symverify/kernel/provers/outcome.py` |")
    problems = check(planted, files, c)
    assert any("outcome.py: listed both as trusted and as untrusted" in p for p in problems)


def test_a_contract_out_of_step_is_caught() -> None:
    doc, files, c, _ = _state()
    problems = check(doc, files, replace(c, forbidden=tuple(f for f in c.forbidden if f != "symverify.compiler")))
    assert len(problems) == 1 and "missing ['symverify.compiler']" in problems[0]
    problems = check(doc, files, replace(c, forbidden=(*c.forbidden, "symverify.ir.limits")))
    assert len(problems) == 1 and "not expected ['symverify.ir.limits']" in problems[0]
    problems = check(doc, files, replace(c, sources=("symverify.kernel.provers",)))
    assert len(problems) == 1 and "source_modules should be ['symverify.kernel']" in problems[0]


def test_a_new_module_outside_the_kernel_must_be_forbidden() -> None:
    doc, files, c, _ = _state()
    files["symverify/shortcut.py"] = 10
    problems = check(doc, files, c)
    assert len(problems) == 1 and "missing ['symverify.shortcut']" in problems[0]


def test_a_kernel_module_not_listed_as_trusted_is_caught() -> None:
    doc, files, c, _ = _state()
    files["symverify/kernel/provers/shortcut.py"] = 10
    assert check(doc, files, c) == ["symverify/kernel/provers/shortcut.py: in the kernel but not listed as trusted"]


def test_a_trusted_module_outside_the_kernel_is_caught() -> None:
    doc, files, c, _ = _state()
    planted = doc.replace("| `symverify/provers/engine_cost.py` | chooses", "| `symverify/provers/engine_cost.py` | 1 | chooses")
    files["symverify/provers/engine_cost.py"] = 1
    problems = check(planted, files, c)
    assert "symverify/provers/engine_cost.py: listed as trusted but outside symverify/kernel/" in problems


def test_a_kernel_import_of_an_untrusted_module_is_caught() -> None:
    doc, files, c, _ = _state()
    imports = package_imports()
    assert check(doc, files, c, imports) == []
    imports["symverify.kernel.provers.exact"] = imports["symverify.kernel.provers.exact"] | {"symverify.compiler"}
    problems = check(doc, files, c, imports)
    assert "symverify.compiler: imported by the kernel's symverify.kernel.provers.exact, outside the kernel and its leaves" in problems
    imports = package_imports()
    imports["symverify.ir.limits"] = imports["symverify.ir.limits"] | {"symverify.ir.serialize"}
    problems = check(doc, files, c, imports)
    assert problems == ["symverify.ir.serialize: imported by the leaf symverify.ir.limits; a leaf imports only other leaves"]


def test_an_unlisted_import_of_a_trusted_module_is_caught() -> None:
    doc, files, c, _ = _state()
    imports = package_imports()
    assert check(doc, files, c, imports) == []
    imports["symverify.kernel.provers.exact"] = imports["symverify.kernel.provers.exact"] | {"symverify.mutate"}
    problems = check(doc, files, c, imports)
    assert problems == ["symverify.mutate: imported by trusted symverify.kernel.provers.exact, but neither listed as trusted "
                        "nor as untrusted",
                        "symverify.mutate: imported by the kernel's symverify.kernel.provers.exact, outside the kernel and its leaves"]


def test_rewrite_counts_fixes_a_stale_count() -> None:
    doc, files, c, _ = _state()
    files["symverify/kernel/provers/exact.py"] *= 2
    assert check(doc, files, c)
    assert check(rewrite_counts(doc, files), files, c) == []


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/test_trusted_base.py --write  (refresh the line counts in docs/trusted-base.md)")
    DOC.write_text(rewrite_counts(DOC.read_text(encoding="utf-8"), tree_files()), encoding="utf-8")

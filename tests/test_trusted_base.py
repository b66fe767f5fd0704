"""The trusted base as listed in docs/trusted-base.md agrees with the tree and the import contract.

The section "The trusted modules, listed" holds two tables: ``| module | lines | why trusted |`` and
``| module | why untrusted |``. The checks (each a pure function of the document's text, the
tree's ``.py`` files with their line counts and the contract's source modules, so a planted change
can be fed in directly):

* every listed module exists, and none is listed twice or in both tables;
* a trusted module's stated line count is within 10 % of its real one;
* every module under ``symverify/provers/`` and ``symverify/semantics/``, and every module of the
  package that a trusted module imports, is in one of the tables, each with a reason;
* the import-linter contract *trusted base imports no untrusted construction* (pyproject.toml) has
  as sources exactly the trusted modules outside the packages it forbids.

``python tests/test_trusted_base.py --write`` rewrites the ``lines`` column from the tree.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "trusted-base.md"
SECTION = "## The trusted modules, listed"
CONTRACT = "trusted base imports no untrusted construction"
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


def check(doc: str, files: Mapping[str, int], contract_sources: list[str], forbidden: list[str],
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
        if not why:
            problems.append(f"{mod}: listed as untrusted without a reason")
    for path in sorted(files):
        if path.startswith(KERNEL) and path.endswith("/__init__.py"):
            continue  # docstring only (test_kernel_packages_hold_no_code)
        if path.startswith(COMPLETE) and path not in trusted and path not in untrusted:
            problems.append(f"{path}: neither listed as trusted nor as untrusted with a reason")
    listed = {dotted(m) for m in trusted} | {dotted(m) for m in untrusted}
    for mod in sorted(dotted(m) for m in trusted):
        for imported in sorted((imports or {}).get(mod, set()) - listed):
            problems.append(f"{imported}: imported by trusted {mod}, but neither listed as trusted nor as untrusted")
    expected = sorted(dotted(m) for m in trusted if not dotted(m).startswith(tuple(forbidden)))
    if sorted(contract_sources) != expected:
        missing = sorted(set(expected) - set(contract_sources))
        extra = sorted(set(contract_sources) - set(expected))
        problems.append(f"import contract {CONTRACT!r}: source_modules should be the trusted modules outside "
                        f"{', '.join(forbidden)}; missing {missing}, not trusted {extra}")
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


def contract(root: Path = ROOT) -> tuple[list[str], list[str]]:
    """The contract's source and forbidden modules, from pyproject.toml."""
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    for c in config["tool"]["importlinter"]["contracts"]:
        if c["name"] == CONTRACT:
            assert c["type"] == "forbidden"
            return list(c["source_modules"]), list(c["forbidden_modules"])
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
    sources, forbidden = contract()
    problems = check(DOC.read_text(encoding="utf-8"), tree_files(), sources, forbidden, package_imports())
    assert not problems, "\n".join(problems)


def test_the_contract_forbids_the_untrusted_constructions() -> None:
    _, forbidden = contract()
    assert set(forbidden) == {"symverify.compiler", "symverify.gadgets", "symverify.executors", "symverify.kaleidoscope"}


def test_kernel_packages_hold_no_code() -> None:
    """The kernel's ``__init__.py`` files are docstrings only, so the listing need not name them."""
    import ast

    for path in sorted((ROOT / KERNEL).rglob("__init__.py")):
        body = ast.parse(path.read_text(encoding="utf-8")).body
        assert len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant), path


# --- planted changes are caught ---------------------------------------------------------------------


def _state() -> tuple[str, dict[str, int], list[str], list[str]]:
    sources, forbidden = contract()
    return DOC.read_text(encoding="utf-8"), tree_files(), sources, forbidden


def test_a_missing_trusted_module_is_caught() -> None:
    doc, files, sources, forbidden = _state()
    del files["symverify/kernel/provers/outcome.py"]
    problems = check(doc, files, sources, forbidden)
    assert any("outcome.py: listed as trusted but does not exist" in p for p in problems)


def test_a_line_count_off_by_more_than_ten_percent_is_caught() -> None:
    doc, files, sources, forbidden = _state()
    files["symverify/kernel/provers/exact.py"] = int(files["symverify/kernel/provers/exact.py"] * 1.2) + 1
    problems = check(doc, files, sources, forbidden)
    assert any(p.startswith("symverify/kernel/provers/exact.py: stated") for p in problems)


def test_a_line_count_within_ten_percent_passes() -> None:
    doc, files, sources, forbidden = _state()
    files["symverify/kernel/provers/exact.py"] = int(files["symverify/kernel/provers/exact.py"] * 1.05)
    assert check(doc, files, sources, forbidden) == []


def test_an_unlisted_prover_module_is_caught() -> None:
    doc, files, sources, forbidden = _state()
    files["symverify/provers/shortcut.py"] = 10
    problems = check(doc, files, sources, forbidden)
    assert problems == ["symverify/provers/shortcut.py: neither listed as trusted nor as untrusted with a reason"]


def test_a_removed_row_is_caught() -> None:
    doc, files, sources, forbidden = _state()
    planted = "\n".join(line for line in doc.split("\n") if not line.startswith("| `symverify/provers/engine_cost.py`"))
    problems = check(planted, files, sources, forbidden)
    assert problems == ["symverify/provers/engine_cost.py: neither listed as trusted nor as untrusted with a reason"]


def test_an_untrusted_row_without_reason_is_caught() -> None:
    doc, files, sources, forbidden = _state()
    planted = re.sub(r"(\| `symverify/provers/dask_address.py` \|)[^\n]*", r"\1  |", doc)
    problems = check(planted, files, sources, forbidden)
    assert any("dask_address.py: listed as untrusted without a reason" in p for p in problems)


def test_a_module_in_both_tables_is_caught() -> None:
    doc, files, sources, forbidden = _state()
    planted = doc.replace("| `symverify/provers/dask_address.py` |", "| `symverify/kernel/provers/outcome.py` |")
    problems = check(planted, files, sources, forbidden)
    assert any("outcome.py: listed both as trusted and as untrusted" in p for p in problems)


def test_a_contract_out_of_step_is_caught() -> None:
    doc, files, sources, forbidden = _state()
    problems = check(doc, files, [s for s in sources if s != "symverify.kernel.provers.randomized"], forbidden)
    assert len(problems) == 1 and "missing ['symverify.kernel.provers.randomized']" in problems[0]
    problems = check(doc, files, [*sources, "symverify.cli"], forbidden)
    assert len(problems) == 1 and "not trusted ['symverify.cli']" in problems[0]


def test_an_unlisted_import_of_a_trusted_module_is_caught() -> None:
    doc, files, sources, forbidden = _state()
    imports = package_imports()
    assert check(doc, files, sources, forbidden, imports) == []
    imports["symverify.kernel.provers.exact"] = imports["symverify.kernel.provers.exact"] | {"symverify.mutate"}
    problems = check(doc, files, sources, forbidden, imports)
    assert problems == ["symverify.mutate: imported by trusted symverify.kernel.provers.exact, but neither listed as trusted "
                        "nor as untrusted"]


def test_rewrite_counts_fixes_a_stale_count() -> None:
    doc, files, sources, forbidden = _state()
    files["symverify/kernel/provers/exact.py"] *= 2
    assert check(doc, files, sources, forbidden)
    assert check(rewrite_counts(doc, files), files, sources, forbidden) == []


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/test_trusted_base.py --write  (refresh the line counts in docs/trusted-base.md)")
    DOC.write_text(rewrite_counts(DOC.read_text(encoding="utf-8"), tree_files()), encoding="utf-8")

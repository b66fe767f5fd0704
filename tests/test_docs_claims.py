"""Claims of the user documentation that tests/test_docs.py (blocks run), test_docs_refs.py (names, paths,
sections, flags, signatures with defaults) and test_docs_numbers.py (measured figures) do not check: the module
list of README's Layout table against the tree and the import contract, the choices a synopsis offers, the exit
codes, the environment variables, the stated size limits and pins, the positional names of the signatures the docs
write out, and what the docs promise about raising or lowering a limit.

Each scan of the text has a planted wrong claim that it must catch.
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest
import tomllib

from symverify.cli import _parser

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


# ---------------------------------------------------------------------------------------------------------------
# README, "Layout": every module named exists, and the rows are the import contract's layers, in its order

def _is_module(name: str) -> bool:
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


def _has(name: str) -> bool:
    """A module, or an attribute of one (``kernel.verification``'s ``verify``)."""
    if _is_module(name):
        return True
    parent, _, attr = name.rpartition(".")
    return bool(parent) and _is_module(parent) and hasattr(importlib.import_module(parent), attr)


def layout_rows(text: str) -> list[tuple[str, list[str], list[str]]]:
    """``(layer, top-level modules, problems)`` per row of the Layout table: a backticked name is a module of
    symverify; a name inside the parentheses after a module is that module's (or, failing that, an enclosing
    one's: ``h21 (...; circuit_to_baseconv ...)`` is the compiler's); capitalised names are classes, not modules."""
    table = text.split("\n## Layout\n", 1)[1].split("\n\n| layer |", 1)[1].split("\n\n", 1)[0]
    rows = []
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        layer, modules = cells[0], cells[1]
        tops: list[str] = []
        problems: list[str] = []
        stack: list[str] = ["symverify"]
        last = None
        for tok in re.finditer(r"`([^`]+)`|(\()|(\))", modules):
            name, opening, closing = tok.groups()
            if opening:
                stack.append(last or stack[-1])
                continue
            if closing:
                stack.pop()
                continue
            assert name is not None
            last = None
            if name[0].isupper() or " " in name or "()" in name:
                continue
            if name.endswith("/"):  # the top-level `proofs/`, shipped as symverify.proofs
                last = f"symverify.{name.rstrip('/')}"
                continue
            if name.startswith("symverify."):
                last = name
                if not _is_module(name):
                    problems.append(name)
                continue
            found = next((f"{p}.{name}" for p in reversed(stack) if _has(f"{p}.{name}")), None)
            if found is None:
                problems.append(f"{stack[-1]}.{name}")
                continue
            last = found
            if len(stack) == 1:
                tops.append(name)
        rows.append((layer, tops, problems))
    return rows


def _contract_layers() -> list[list[str]]:
    """The public modules of each layer of pyproject.toml's "symverify layers" contract, top first."""
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(c for c in conf["tool"]["importlinter"]["contracts"] if c["name"] == "symverify layers")
    return [[m.strip().removeprefix("symverify.") for m in re.split(r"[:|]", layer)
             if not m.strip().startswith("symverify._")] for layer in contract["layers"]]


def layout_problems(text: str) -> list[str]:
    rows = layout_rows(text)
    out = [f"{layer}: no module {p}" for layer, _, problems in rows for p in problems]
    where = {name: k for k, (_, tops, _) in enumerate(rows) for name in tops}
    contract = _contract_layers()
    in_contract = {m for layer in contract for m in layer}
    out += [f"{rows[k][0]}: `{name}` is no layer of the import contract" for name, k in where.items()
            if name not in in_contract]
    previous = -1
    for layer in contract:
        ks = {where.get(m) for m in layer}
        if None in ks:
            out.append(f"the contract's layer {' | '.join(layer)}: {[m for m in layer if m not in where]} not in the table")
        elif len(ks) > 1:
            out.append(f"the contract's layer {' | '.join(layer)} is split over rows {sorted(ks)}")  # type: ignore[type-var]
        elif (k := ks.pop()) is not None:
            if k <= previous:
                out.append(f"the contract's layer {' | '.join(layer)} is row {k + 1}, not below row {previous + 1}")
            previous = k
    if len(rows) != len(contract):
        out.append(f"{len(rows)} rows for the contract's {len(contract)} layers")
    return out


def test_the_layout_table_is_the_tree_and_the_import_contract():
    assert layout_problems(README) == []


def test_a_stale_layout_table_is_caught():
    # a module moved away (the methods live in symverify.kernel.provers, not symverify.provers)
    moved = README.replace("· `provers` (`engine_cost`,", "· `provers` (`registry`, `engine_cost`,")
    assert layout_problems(moved) == ["constructions and provers: no module symverify.provers.registry"]
    # a layer of the contract left out, and a row that is no layer
    no_kernel = re.sub(r"\n\| trusted base \|[^\n]*", "", README)
    assert any("['kernel'] not in the table" in p for p in layout_problems(no_kernel))
    alias_row = README.replace("| pictures |", "| verification | `verification` | `verify()` |\n| pictures |")
    assert "verification: `verification` is no layer of the import contract" in layout_problems(alias_row)
    # two rows in the wrong order
    lines = README.split("\n")
    k = next(i for i, line in enumerate(lines) if line.startswith("| semantics |"))
    lines[k], lines[k + 1] = lines[k + 1], lines[k]
    assert any("is row" in p for p in layout_problems("\n".join(lines)))


# ---------------------------------------------------------------------------------------------------------------
# README, "Command line": the choices a synopsis offers are the parser's

def _subparsers():
    parser = _parser()
    return next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction").choices


def choice_problems(synopsis: str) -> list[str]:
    """``COMMAND --flag`` for every ``[--flag a|b|c]`` of the synopsis whose alternatives (lower-case words) differ
    from the parser's choices (or that offers alternatives where the parser has none)."""
    subs, out, command = _subparsers(), [], None
    for line in synopsis.splitlines():
        if m := re.match(r"\s*symverify (\w+)", line):
            command = m.group(1)
        if command not in subs:
            continue
        for flag, alts in re.findall(r"\[(--[\w-]+) ([\w-]+(?:\|[\w-]+)+)\]", line):
            action = next((a for a in subs[command]._actions if flag in a.option_strings), None)
            if action is None or any(not re.fullmatch(r"[a-z][\w-]*", a) for a in alts.split("|")):
                continue  # an unknown flag (test_docs_refs.py's), or a metavariable among words: `S|fresh`, `OUT|-`
            if action.choices is None or set(alts.split("|")) != set(action.choices):
                out.append(f"{command} {flag}: {alts} (the parser: {sorted(action.choices or [])})")
    return out


def _synopsis() -> str:
    return README.split("## Command line", 1)[1].split("\nExit codes", 1)[0]


def test_the_synopsis_offers_the_parsers_choices():
    synopsis = _synopsis()
    assert len(re.findall(r"\[--[\w-]+ [\w-]+(?:\|[\w-]+)+\]", synopsis)) >= 4
    assert choice_problems(synopsis) == []


def test_a_stale_choice_is_caught():
    synopsis = _synopsis().replace("[--plan auto|exact|greedy]", "[--plan auto|exact|greedy|fast]")
    assert choice_problems(synopsis) == ["compile --plan: auto|exact|greedy|fast (the parser: ['auto', 'exact', 'greedy'])"]
    synopsis = _synopsis().replace("flint|sympy|torch|python", "flint|sympy|python")
    assert [p.split(":")[0] for p in choice_problems(synopsis)] == ["verify --backend"]


# ---------------------------------------------------------------------------------------------------------------
# exit codes: README, docs/formats.md and every --help say the same

def _help_codes() -> dict[int, str]:
    epilog = _parser().epilog or ""
    return {int(code): text for code, text in re.findall(r"^\s*(\d+)\s+(.+)$", epilog, re.M)}


def test_the_exit_codes_agree():
    codes = _help_codes()
    assert set(codes) == {0, 1, 2, 3, 130}
    formats = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8").split("## Exit codes", 1)[1]
    table = {int(c): t for c, t in re.findall(r"^\| (\d+) \| (.+) \|$", formats, re.M)}
    assert set(table) == set(codes)
    for word, code in (("proved", 0), ("refuted", 1), ("unknown", 2), ("usage", 3), ("interrupted", 130)):
        assert word in codes[code] and word in table[code], (word, code)
    verify = README.split("Exit codes of `symverify verify`:", 1)[1].split("\n\n", 1)[0]
    stated = dict((int(c), w) for c, w in re.findall(r"\*\*(\d+)\*\* (\w+)", verify))
    assert stated == {0: "proved", 1: "refuted", 2: "unknown", 3: "usage"}
    assert "130 when interrupted" in " ".join(verify.split())
    for name, sub in _subparsers().items():  # "Every `--help` ends with these codes"
        assert sub.epilog == _parser().epilog, name


@pytest.mark.parametrize("argv, code", [
    (["verify", "same"], 0), (["verify", "differ"], 1), (["verify", "missing"], 3), (["prove", "nosuch"], 3),
    (["info", "same", "--compile", "nosuch"], 3),
])
def test_the_exit_codes_are_what_they_say(argv, code, tmp_path, capsys):
    import symverify as sv
    from symverify.cli import main

    a = sv.Circuit.trace(lambda u: [(u[0][0] + u[0][1]) ** 2], n=1, d=2)
    b = sv.Circuit.trace(lambda u: [u[0][0] ** 2 + 2 * u[0][0] * u[0][1] + u[0][1] ** 2], n=1, d=2)
    c = sv.Circuit.trace(lambda u: [u[0][0] ** 2 + u[0][1] ** 2], n=1, d=2)
    for name, obj in (("a", a), ("b", b), ("c", c)):
        sv.dump_file(obj, str(tmp_path / f"{name}.json"))
    files = {"same": ["a", "b"], "differ": ["a", "c"], "missing": ["a", "nosuch"]}
    args = []
    for w in argv:
        args += [str(tmp_path / f"{f}.json") for f in files[w]][: 1 if argv[0] == "info" else 2] if w in files else [w]
    try:
        rc = main(args)
    except SystemExit as e:
        rc = e.code
    assert rc == code
    if code == 3:
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("symverify: error: "), err


# ---------------------------------------------------------------------------------------------------------------
# environment variables, limits and pins the docs state

ENV = re.compile(r"\b((?:SYMVERIFY|ZOOLOGY|BUTTERFLY|XDG|FORCE)_[A-Z_]+)\b")


def env_problems(texts: dict[str, str], code: str) -> list[str]:
    """Every environment variable the texts name that the code never reads."""
    read = set(ENV.findall(code))
    return sorted({f"{where}: {v}" for where, text in texts.items() for v in ENV.findall(text) if v not in read})


def _code() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for d in ("symverify", "benchmarks", "tests")
                     for p in sorted((ROOT / d).rglob("*.py")) if p.name != "test_docs_claims.py")


def test_every_environment_variable_the_docs_name_is_read():
    texts = {p.name: p.read_text(encoding="utf-8") for p in DOCS}
    assert {"SYMVERIFY_PROGRESS", "SYMVERIFY_NATIVE", "SYMVERIFY_TRACEBACK"} <= set(ENV.findall(README + texts["formats.md"]))
    code = _code()
    assert env_problems(texts, code) == []
    assert env_problems({"README.md": "set `SYMVERIFY_NATIV=0` to turn them off"}, code) == ["README.md: SYMVERIFY_NATIV"]


def test_the_stated_limits_are_the_limits():
    from symverify.ir import limits

    text = " ".join(README.split())
    stated = re.findall(r"`(MAX_[A-Z_]+)` \(2\^(\d+)\)", text.replace("`symverify.ir.limits.MAX_CELLS`", "`MAX_CELLS`"))
    assert {name for name, _ in stated} == {"MAX_CELLS", "MAX_INPUTS", "MAX_GATES", "MAX_TRIALS", "MAX_ERROR_BITS", "MAX_FILE_BYTES", "MAX_VALUE_BITS"}
    for name, power in stated:
        assert getattr(limits, name) == 1 << int(power), name
    assert "(up to 100 000 digits per integer)" in text and limits.MAX_INT_DIGITS == 100_000


def test_the_stated_torch_pin_is_the_pin():
    text = " ".join(README.split())
    pin = re.search(r"`constraints.txt` pins `torch==([\d.]+)`", text)
    asked = re.search(r"`pyproject.toml` only asks for `torch>=([\d.]+)`", text)
    assert pin and asked
    assert f"torch=={pin.group(1)}" in (ROOT / "constraints.txt").read_text(encoding="utf-8").split()
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    extras = conf["project"]["optional-dependencies"]
    assert {k for k, deps in extras.items() if f"torch>={asked.group(1)}" in deps} == {"torch", "all", "dev"}
    assert not any(d.startswith("torch") for d in conf["project"]["dependencies"])


# ---------------------------------------------------------------------------------------------------------------
# signatures written out with a `*`: their positional names are the function's

def _functions() -> dict[str, object]:
    import symverify as sv
    from symverify import library, testing
    from symverify.compiler import retnet
    from symverify.executors import execute, modular_eval, numeric_check
    from symverify.kaleidoscope import numeric

    out: dict[str, object] = {name: getattr(sv, name) for name in sv.__all__ if callable(getattr(sv, name))}
    out.update(retnet_stack_direct=retnet.retnet_stack_direct, retnet_stack=library.retnet_stack, execute=execute,
               numeric_check=numeric_check, modular_eval=modular_eval, compile_numpy=numeric.compile_numpy,
               compile_torch=numeric.compile_torch, assert_proved=testing.assert_proved,
               assert_refuted=testing.assert_refuted)
    return out


STARRED = re.compile(r"`(?:sv\.)?([A-Za-z_]\w*)\(([^`()]*,\s*\*\s*,[^`()]*)\)`")


def starred_problems(text: str, functions: dict[str, object]) -> list[str]:
    """For every ``name(a, b, *, k=...)`` in backticks (a signature, by its ``*``) of a known function: the
    positional names that are not the function's, and the keyword-only names it does not have."""
    out = []
    for m in STARRED.finditer(text):
        fn = functions.get(m.group(1))
        if fn is None:
            continue
        before, after = m.group(2).split("*", 1)
        positional = [a.split("=")[0].strip() for a in before.split(",") if a.strip()]
        keywords = [a.split("=")[0].strip() for a in after.split(",") if a.strip()]
        params = inspect.signature(fn).parameters  # type: ignore[arg-type]
        ordered = [p for p, v in params.items() if v.kind in (v.POSITIONAL_ONLY, v.POSITIONAL_OR_KEYWORD)]
        if positional != ordered[:len(positional)]:
            out.append(f"{m.group(1)}: positional {positional}, the function's {ordered}")
        missing = [k for k in keywords if k not in params]
        if missing:
            out.append(f"{m.group(1)}: no keyword {missing}")
    return out


def test_every_starred_signature_names_the_functions_parameters():
    functions, bad, seen = _functions(), [], 0
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        seen += sum(1 for m in STARRED.finditer(text) if m.group(1) in functions)
        bad += [f"{path.name}: {p}" for p in starred_problems(text, functions)]
    assert seen >= 3
    assert bad == []


def test_a_planted_wrong_positional_name_is_caught():
    functions = _functions()
    assert starred_problems("`retnet_stack_direct(N, d, layers, *, group=None, fuse=False)`", functions) == []
    assert starred_problems("`retnet_stack_direct(N, d, k, *, fuse=False)`", functions) == [
        "retnet_stack_direct: positional ['N', 'd', 'k'], the function's ['N', 'd', 'layers']"]
    assert starred_problems("`sv.retnet_direct(N, d, *, groups=None)`", functions) == [
        "retnet_direct: no keyword ['groups']"]


# ---------------------------------------------------------------------------------------------------------------
# "Every limit is ... read when it is checked" (README, "Timeouts, memory and limits"; symverify.ir.limits)

def test_compile_reads_max_cells_when_it_is_called(monkeypatch):
    """The kaleidoscope compiler's ``max_cells`` defaults to ``MAX_CELLS``: lowering the limit refuses a larger
    state (it was bound when the module was imported, so a 36-cell state passed a limit of 35), and its message
    names the limit in force."""
    import symverify as sv
    from symverify.compiler.kaleidoscope import compile_kaleidoscope
    from symverify.errors import CompileError
    from symverify.ir import limits

    c = sv.library.walsh_hadamard(8)
    assert sv.compile(c).model.inner_n * sv.compile(c).model.inner_d == 36
    monkeypatch.setattr(limits, "MAX_CELLS", 35)
    with pytest.raises(CompileError, match=r"36 cells \(N_k = 8\), more than max_cells = 35"):
        sv.compile(c)
    with pytest.raises(CompileError, match=r"more than max_cells = 35"):
        compile_kaleidoscope(c)
    monkeypatch.setattr(limits, "MAX_CELLS", 36)
    assert sv.compile(c).model.inner_n == 36
    assert sv.compile(c, max_cells=40).model.inner_n == 36  # an explicit bound is the caller's
    for fn in (sv.compile, compile_kaleidoscope):
        assert inspect.signature(fn).parameters["max_cells"].default is None


# ---------------------------------------------------------------------------------------------------------------
# the options the docs give a benchmark are the benchmark's

def benchmark_flag_problems(text: str) -> list[str]:
    """``NAME.py --flag`` for every ``--flag`` written after a mention of ``benchmarks/NAME.py`` (or ``NAME.py``,
    a script of benchmarks/), up to the next script mentioned or the end of the paragraph, that the script's
    source never names."""
    out = []
    mentions = [m for m in re.finditer(r"(?:benchmarks/)?(\w+)\.py\b", text) if (ROOT / "benchmarks" / f"{m.group(1)}.py").exists()]
    for k, m in enumerate(mentions):
        end = mentions[k + 1].start() if k + 1 < len(mentions) else len(text)
        paragraph = text.find("\n\n", m.end())
        span = text[m.end():min(end, paragraph if paragraph >= 0 else len(text))]
        source = (ROOT / "benchmarks" / f"{m.group(1)}.py").read_text(encoding="utf-8")
        out += [f"{m.group(1)}.py {f}" for f in sorted(set(re.findall(r"(?<![\w-])(--[a-z][\w-]*)", span)))
                if f'"{f}"' not in source and f"'{f}'" not in source]
    return out


def test_every_benchmark_option_the_docs_give_exists():
    bad = [f"{p.name}: {b}" for p in DOCS for b in benchmark_flag_problems(p.read_text(encoding="utf-8"))]
    assert bad == []


def test_a_planted_benchmark_option_is_caught():
    text = "`benchmarks/h21_unseen.py --prove` and `compile_verify.py` (`--huge`, `--giant`)\n\n`--giant` alone"
    assert benchmark_flag_problems(text) == ["compile_verify.py --giant"]


# ---------------------------------------------------------------------------------------------------------------
# defaults the docs state in words

def test_the_stated_defaults_are_the_defaults():
    from fractions import Fraction

    import symverify as sv
    from symverify.compiler.h21.planner import EXACT_PLAN_WORK
    from symverify.kernel.provers.options import DEFAULT_ERROR_BOUND

    text = " ".join(README.split())
    theory = " ".join((ROOT / "docs" / "theory.md").read_text(encoding="utf-8").split())
    forall = " ".join((ROOT / "docs" / "forall.md").read_text(encoding="utf-8").split())
    work = int(re.search(r"`\"auto\"` \(the default\) is exact when `N_k·\(Δ\+1\) ≤ (\d+)`", text).group(1))
    assert work == EXACT_PLAN_WORK and f"`N_k·(Δ+1) ≤ {work}`" in theory
    assert f"N_k·(depth+1) ≤ {work}" in " ".join((_subparsers()["compile"].format_help()).split())
    assert "(default 2^-100)" in text and DEFAULT_ERROR_BOUND == Fraction(1, 2**100)
    assert inspect.signature(sv.verify).parameters["seed"].default == 0
    assert "`timeout` (seconds, default 60;" in forall
    src = inspect.getsource(sv.prove_forall)
    assert '60.0 if timeout is None else timeout' in src


# ---------------------------------------------------------------------------------------------------------------
# "the library's builders [refuse more than MAX_GATES gates] before building anything" (README, "Timeouts, memory
# and limits")

def test_matvec_refuses_too_many_gates_before_building_any(monkeypatch):
    """``matvec``/``from_matrix`` counted nothing up front: a matrix over ``MAX_GATES`` was refused only when its
    adder trees had emitted ``MAX_GATES`` gates (about two minutes for a 4200×4200 matrix of ones)."""
    import symverify as sv
    import symverify.ir.build as build
    from symverify.errors import LimitError
    from symverify.ir import limits

    M = [[1, 1, 0, 2], [0, 0, 0, 0], [1, 0, 0, 0], [0, "1/2", 0, 0]]  # 2 + 1 + 0 + 1 gates
    assert len(sv.library.matvec(M, 4).gates) == 4
    calls = []
    real = build.sum_tree
    monkeypatch.setattr(build, "sum_tree", lambda *a: calls.append(1) or real(*a))
    monkeypatch.setattr(limits, "MAX_GATES", 3)
    with pytest.raises(LimitError, match=r"^from_matrix matvec: the adder trees of a 4×4 matrix: 4 gates is more than "
                                         r"symverify\.ir\.limits\.MAX_GATES = 3"):
        sv.library.matvec(M, 4)
    monkeypatch.setattr(limits, "MAX_GATES", 1)
    with pytest.raises(LimitError, match=r"^from_matrix: the adder trees of a 2×2 matrix: 2 gates"):
        sv.from_matrix([[sv.sym("a"), 0], [1, 1]], 1, 2)  # a symbolic single term takes a gate too
    assert calls == []
    monkeypatch.setattr(limits, "MAX_GATES", 4)
    assert len(sv.library.matvec(M, 4).gates) == 4  # exactly at the limit: built
    monkeypatch.setattr(limits, "MAX_GATES", 2)
    assert len(sv.from_matrix([[sv.sym("a"), 0], [1, 1]], 1, 2).gates) == 2


# ---------------------------------------------------------------------------------------------------------------
# README, "Proof scripts": the table is the built-in scripts, and the counts stated twice agree

def script_table_problems(text: str) -> list[str]:
    from symverify.scripts.runner import builtin_dir, discover

    builtin = set(discover(builtin_dir()))
    section = text.split("\n## Proof scripts\n", 1)[1].split("\n## ", 1)[0]
    table = section.split("| script | result |", 1)[1].split("\n\n", 1)[0]
    listed = [n for line in table.splitlines()[2:] for n in re.findall(r"`(\w+)`", line.split("|")[1])]
    out = [f"not a built-in script: {n}" for n in listed if n not in builtin]
    out += [f"not in the table: {n}" for n in sorted(builtin - set(listed))]
    out += [f"listed twice: {n}" for n in sorted({n for n in listed if listed.count(n) > 1})]
    flat = " ".join(text.split())
    across = re.search(r"every one of the (\d+) instances across the (\d+) scripts", flat)
    full = re.search(r"`symverify prove all`, two processes on two cores: (\d+) instances proved, (\d+) argued claims", flat)
    argued = re.search(r"\((\d+) further claims are argued", flat)
    if not (across and full and argued):
        return [*out, "the stated counts are no longer found"]
    if int(across.group(2)) != len(builtin):
        out.append(f"{across.group(2)} scripts stated, {len(builtin)} built in")
    if across.group(1) != full.group(1) or full.group(2) != argued.group(1):
        out.append(f"instances {full.group(1)} and {across.group(1)}, argued {full.group(2)} and {argued.group(1)}")
    return out


def test_the_proof_script_table_is_the_built_in_scripts():
    assert script_table_problems(README) == []


def test_a_stale_proof_script_table_is_caught():
    planted = README.replace("| `causal_limit` |", "| `causal_limits` |").replace("across the 18 scripts", "across the 17 scripts")
    assert script_table_problems(planted) == [
        "not a built-in script: causal_limits", "not in the table: causal_limit", "17 scripts stated, 18 built in"]
    assert script_table_problems(README.replace("1634 instances proved", "1632 instances proved")) == [
        "instances 1632 and 1634, argued 7 and 7"]


# ---------------------------------------------------------------------------------------------------------------
# docs/formats.md: the example files are files symverify reads (the proof run's example is its readers' section's)

def json_examples(text: str) -> list[str]:
    return [b for b in re.findall(r"```json\n(.*?)\n```", text, re.S)
            if '"symverify.proof-run"' not in b and '"symverify.report"' not in b]


def test_the_format_examples_load_and_round_trip():
    from symverify.ir.serialize import dumps, loads

    examples = json_examples((ROOT / "docs" / "formats.md").read_text(encoding="utf-8"))
    kinds = []
    for text in examples:
        obj = loads(text)
        kinds.append(type(obj).__name__)
        assert loads(dumps(obj)) == obj and dumps(loads(dumps(obj))) == dumps(obj)
    assert kinds == ["Circuit", "Model", "Certificate"]


def test_a_planted_wrong_format_example_is_caught():
    from symverify.errors import SerializationError
    from symverify.ir.serialize import loads

    text = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8").replace('"inner_d": 2,', '"inner_width": 2,', 1)
    with pytest.raises(SerializationError, match="inner_d"):
        loads(json_examples(text)[1])


def _run_example() -> dict:
    import json

    text = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"```json\n(.*?)\n```", text, re.S) if '"symverify.proof-run"' in b]
    return json.loads(block)


def run_example_problems(example: dict, run: dict) -> list[str]:
    """Where the proof-run example differs from ``run`` (a real run of the same script), titles and
    the instances after the first aside; and whether a reader takes it with the run's instances."""
    from symverify.errors import SerializationError
    from symverify.viz.run_format import check_run

    problems = [f"run.{k}: {example.get(k)!r} vs {run.get(k)!r}" for k in run if k != "scripts" and example.get(k) != run.get(k)]
    (ex,), (real,) = example["scripts"], run["scripts"]
    for k in real:
        if k not in ("title", "result") and ex.get(k) != real.get(k):
            problems.append(f"script.{k}: {ex.get(k)!r} vs {real.get(k)!r}")
    for k in real["result"]:
        if k not in ("title", "instances") and ex["result"].get(k) != real["result"].get(k):
            problems.append(f"result.{k}: {ex['result'].get(k)!r} vs {real['result'].get(k)!r}")
    if ex["result"]["instances"] != real["result"]["instances"][:1]:
        problems.append(f"instance: {ex['result']['instances']!r} vs {real['result']['instances'][:1]!r}")
    ex["result"]["instances"] = real["result"]["instances"]
    try:
        check_run(example, "example")
    except SerializationError as e:
        problems.append(f"reader: {e}")
    return problems


def test_the_proof_run_example_is_a_run_of_its_script(tmp_path, capsys):
    """docs/formats.md's proof-run example is what ``symverify prove --quick primitives --json`` writes
    (its counts, its first instance), and with the instances left out it is a file the readers take."""
    import json

    from symverify.cli import main

    assert main(["prove", "--quick", "-j", "1", "primitives", "--json", str(tmp_path / "run.json")]) == 0
    capsys.readouterr()
    run = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert run_example_problems(_run_example(), run) == []
    stale = _run_example()
    stale["scripts"][0]["counts"]["proved"] = 27
    first, reader = run_example_problems(stale, run)
    assert first == "script.counts: {'proved': 27, 'refuted': 0, 'unknown': 0, 'argued': 0} vs {'proved': 36, 'refuted': 0, 'unknown': 0, 'argued': 0}"
    assert reader.startswith("reader: example.scripts[0].counts: expected the counts of its instances")


def report_example_problems(text: str, report: dict) -> list[str]:
    """Where docs/formats.md's verify-report example and its field list differ from ``report``, a real
    ``Report.to_json()`` of a refutation with the numeric cross-check: the example's fields (top level and
    counterexample) and every field the text names in backticks."""
    import json

    section = text.split("## Verify report:", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```json\n(.*?)\n```", section, re.S)
    example = json.loads(block)
    problems = [f"example field {k}" for k in sorted(set(example) ^ set(report))]
    problems += [f"example counterexample field {k}"
                 for k in sorted(set(example["counterexample"]) ^ set(report["counterexample"]))]
    prose = section.split("```", 2)[2]
    named = set(re.findall(r"`([a-z_]+)`", prose))
    for k in (*report, *report["counterexample"], *report["numeric"]):
        if k not in named:
            problems.append(f"not described: {k}")
    return problems


def test_the_verify_report_format_is_what_verify_writes():
    import symverify as sv
    from symverify import Grid, Layer, Model

    square = sv.Circuit.trace(lambda u: [x * x for row in u for x in row], n=2, d=2)
    h = Grid.zeros(2, 2).paint(0, 1, 0, 2, 1)
    broken = Model(2, 2, 2, 2, [Layer.make(2, 2, W=Grid.identity(2).paint(1, 2, 1, 2, 2), h=h)])
    report = sv.verify(square, broken, numeric=True).to_json()
    assert report["verdict"] == "refuted" and report["numeric"] is not None
    text = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    assert report_example_problems(text, report) == []
    planted = dict(report, trials_run=3)
    assert report_example_problems(text, planted) == ["example field trials_run", "not described: trials_run"]


# ---------------------------------------------------------------------------------------------------------------
# exit code 3: "one line `symverify: error: ...`" that says where

class _ClosedPipe:
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_closed_standard_output_is_named(tmp_path, monkeypatch, capsys):
    """``symverify info f.json | head -1`` ended with ``symverify: error: : Broken pipe`` (no file name, so an empty
    one); a reader that has gone is now no error at all (the command's own code, nothing said), and an error
    without a file names nothing."""
    import sys

    import symverify as sv
    from symverify.cli import main

    sv.dump_file(sv.Circuit.trace(lambda u: [u[0][0]], n=1, d=1), str(tmp_path / "c.json"))
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    assert main(["info", str(tmp_path / "c.json")]) == 0
    assert capsys.readouterr().err == ""
    monkeypatch.undo()

    def full(*args: object, **kwargs: object) -> object:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("symverify.ir.serialize.load_file", full)
    assert main(["info", str(tmp_path / "c.json")]) == 3
    assert capsys.readouterr().err == "symverify: error: No space left on device\n"


def test_every_command_is_said_to_exit_130_when_interrupted():
    """The README's exit-code paragraph names every command for 130: SIGTERM stops each one as Ctrl-C does."""
    verify = " ".join(README.split("Exit codes of `symverify verify`:", 1)[1].split("\n\n", 1)[0].split())
    sentence = verify[verify.index("every command"):].split("130 when interrupted", 1)[0]
    assert set(_subparsers()) == set(re.findall(r"`(\w+)`", sentence))
    assert "SIGTERM" in verify.split("130 when interrupted", 1)[1].split(".", 1)[0]

"""The names the docs give a user exist: every ``symverify.<name>`` / ``sv.<name>`` written in README.md,
docs/*.md, the notebooks and examples/ci/README.md resolves; every repository path they mention exists; every
"docs/FILE.md §N" or 'FILE.md, "Section"' cross-reference (in the docs, the notebooks and the package's docstrings) names a section of that file; every
``symverify`` command line they show parses with its subcommand's parser; every signature written with its defaults
(``verify(lhs, rhs, *, method="auto", ...)``) names the function's own keywords and defaults.

Each check scans text with a regular expression, so each has a planted wrong reference that it must catch.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import shlex
from pathlib import Path

import pytest

from symverify.cli import _parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.py"))
USER_TEXTS = [*DOCS, *NOTEBOOKS, ROOT / "examples" / "ci" / "README.md"]
SOURCES = sorted(p for d in ("symverify", "proofs", "benchmarks", "tests") for p in (ROOT / d).rglob("*.py"))

# file-format names (docs/formats.md), not attributes
FORMAT_NAMES = {"symverify.circuit", "symverify.model", "symverify.certificate", "symverify.proof", "symverify.report"}


def _where(path: Path, text: str, pos: int) -> str:
    return f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, pos) + 1}"


# ---------------------------------------------------------------------------------------------------------------
# symverify.<name>

DOTTED = re.compile(r"(?<![\w.])(?:symverify|sv)(?:\.[A-Za-z_]\w*)+")


def dotted_names(text: str) -> list[tuple[int, str]]:
    """``(offset, name)`` of every ``symverify.a.b`` / ``sv.a.b`` in ``text``, with placeholders (``NAME``) and
    file-format names left out."""
    out = []
    for m in DOTTED.finditer(text):
        name = m.group(0)
        if re.search(r"\.[A-Z]+$", name) and name.split(".")[-1] in {"NAME", "FILE"}:
            continue
        if name in FORMAT_NAMES or text[m.end():m.end() + 1] == "-":  # symverify.proof-run
            continue
        out.append((m.start(), name))
    return out


def resolves(name: str) -> bool:
    """Whether ``name`` (``sv.`` read as ``symverify.``) is a module or an attribute reached from one."""
    parts = name.split(".")
    parts[0] = "symverify"
    obj = None
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        break
    if obj is None:
        return False
    for attr in parts[k:]:
        if not hasattr(obj, attr):
            return False
        obj = getattr(obj, attr)
    return True


def test_every_symverify_name_in_the_docs_resolves():
    bad = []
    for path in USER_TEXTS:
        text = path.read_text(encoding="utf-8")
        bad += [f"{_where(path, text, pos)}: {name}" for pos, name in dotted_names(text) if not resolves(name)]
    assert not bad, "names the docs give that do not exist:\n" + "\n".join(bad)


def test_every_symverify_name_in_the_package_docstrings_resolves():
    """The package's own docstrings and comments (and the proof scripts' and benchmarks'), which ``help()`` shows."""
    bad = []
    for path in SOURCES:
        if path.is_relative_to(ROOT / "tests"):
            continue
        text = path.read_text(encoding="utf-8")
        bad += [f"{_where(path, text, pos)}: {name}" for pos, name in dotted_names(text)
                if name.startswith("symverify.") and not resolves(name)]
    assert not bad, "names the docstrings give that do not exist:\n" + "\n".join(bad)


def test_a_planted_wrong_name_is_caught():
    text = "call `sv.verify` or `symverify.kernel.provers.registry.PROVERS`, not `sv.verfy` or `symverify.nosuch.mod`"
    names = [n for _, n in dotted_names(text)]
    assert names == ["sv.verify", "symverify.kernel.provers.registry.PROVERS", "sv.verfy", "symverify.nosuch.mod"]
    assert [resolves(n) for n in names] == [True, True, False, False]


# ---------------------------------------------------------------------------------------------------------------
# repository paths

PATH = re.compile(r"(?<![\w/.~-])((?:docs|benchmarks|proofs|tests|examples|notebooks|symverify|\.ci)/[\w./*-]*[\w*])")
# paths of other repositories, cited as sources
FOREIGN = {"tests/test_permutation.py", "tests/test_special.py"}


def repo_paths(text: str) -> list[tuple[int, str]]:
    """``(offset, path)`` of every repository path in ``text``; placeholders (``NAME``, ``FILE``, globs) left out."""
    return [(m.start(), m.group(1)) for m in PATH.finditer(text)
            if not re.search(r"NAME|FILE|DIR|\*", m.group(1)) and m.group(1) not in FOREIGN]


def test_every_path_in_the_docs_exists():
    bad = []
    for path in USER_TEXTS:
        text = path.read_text(encoding="utf-8")
        bad += [f"{_where(path, text, pos)}: {p}" for pos, p in repo_paths(text) if not (ROOT / p).exists()]
    assert not bad, "paths the docs mention that do not exist:\n" + "\n".join(bad)


def test_a_planted_wrong_path_is_caught():
    text = "see `docs/forall.md` and benchmarks/verify_methods.py, not docs/fourall.md or benchmarks/nosuch.py."
    found = [p for _, p in repo_paths(text)]
    assert found == ["docs/forall.md", "benchmarks/verify_methods.py", "docs/fourall.md", "benchmarks/nosuch.py"]
    assert [(ROOT / p).exists() for p in found] == [True, True, False, False]


# ---------------------------------------------------------------------------------------------------------------
# cross-references to sections

SECTION = re.compile(r"([a-z][\w-]*)\.md`?\s*§\s*(\d+(?:\.\d+)*)")
NAMED = re.compile(r"([a-z][\w-]*)\.md`?\)?,\s*\"([^\"\n]+)\"")


def _targets(name: str) -> list[str]:
    """The headings of docs/``name``, the first cells of its tables and its bold labels (``**Measured**``): what a
    cross-reference may name."""
    out = []
    for line in (ROOT / "docs" / name).read_text(encoding="utf-8").splitlines():
        if m := re.match(r"#{1,6}\s+(.+)", line):
            out.append(m.group(1).strip())
        elif m := re.match(r"\|\s*([^|]+?)\s*\|", line):
            out.append(m.group(1))
        out += re.findall(r"\*\*([^*]+)\*\*", line)
    return out


def bad_section_refs(text: str) -> list[tuple[int, str]]:
    """``(offset, reference)`` of every section reference in ``text`` whose target is missing."""
    bad = []
    for m in SECTION.finditer(text):
        name, number = f"{m.group(1)}.md", m.group(2)
        if not (ROOT / "docs" / name).exists() or not any(
                re.match(re.escape(number) + r"[.\s]", h) for h in _targets(name)):
            bad.append((m.start(), m.group(0)))
    for m in NAMED.finditer(text):
        name, title = f"{m.group(1)}.md", " ".join(m.group(2).split()).lower()
        if not (ROOT / "docs" / name).exists() or not any(title in " ".join(h.split()).lower() for h in _targets(name)):
            bad.append((m.start(), m.group(0)))
    return bad


def test_every_section_reference_names_a_section():
    bad = []
    for path in [*USER_TEXTS, *SOURCES]:
        if path.name == "test_docs_refs.py":
            continue
        text = path.read_text(encoding="utf-8")
        bad += [f"{_where(path, text, pos)}: {ref}" for pos, ref in bad_section_refs(text)]
    assert not bad, "cross-references to sections that do not exist:\n" + "\n".join(bad)


def test_a_planted_wrong_section_is_caught():
    good = 'docs/theory.md §1.1, `docs/forall.md` §4, (docs/formats.md, "Golden files"), docs/theory.md, "Measured"'
    assert bad_section_refs(good) == []
    wrong = 'docs/theory.md §9, docs/forall.md §4.7, docs/nosuch.md §1, (docs/formats.md, "Silver files")'
    assert [ref for _, ref in bad_section_refs(wrong)] == [
        "theory.md §9", "forall.md §4.7", "nosuch.md §1", 'formats.md, "Silver files"']


# ---------------------------------------------------------------------------------------------------------------
# command lines

def command_lines(text: str) -> list[tuple[int, str]]:
    """``(offset, line)`` of every ``symverify ...`` command shown in a code block, in the README's synopsis
    (indented by four spaces) or in backticks in the text; continuation lines (``\\``, or a synopsis line that does not start a command) are
    joined, comments dropped."""
    out: list[tuple[int, str]] = []
    pos, fenced, current = 0, False, None
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\n")
        if body.strip().startswith("```"):
            fenced = not fenced
        code = fenced or body.startswith("    ")
        cmd = re.sub(r"\s+#.*$", "", body).strip() if code else ""
        cmd = re.sub(r"^(?:\$\s+|\.venv/bin/)", "", cmd)
        if current is not None and code and cmd and not re.match(r"symverify\b|[a-z]", cmd) and \
                not cmd.startswith("`"):
            current = (current[0], current[1].rstrip("\\ ") + " " + cmd)
        else:
            if current is not None:
                out.append(current)
            current = (pos, cmd) if re.match(r"symverify (?:[a-z]|--)", cmd) else None
        if current is not None and not current[1].endswith("\\") and not code:
            out.append(current)
            current = None
        pos += len(line)
    if current is not None:
        out.append(current)
    out += [(m.start(), m.group(1)) for m in re.finditer(r"(?<!`)`(symverify (?:[a-z][^`]*|--[^`]*))`", text)]
    return sorted(out)


def unknown_flags(line: str) -> list[str]:
    """The ``--flags`` (and ``-x``) of a ``symverify SUBCOMMAND ...`` line that its subcommand's parser does not
    know."""
    line = re.sub(r"\[prove's options[^\]]*\]", "", line)  # the sweep's synopsis refers to prove's
    try:
        words = shlex.split(line.split("&&")[0])
    except ValueError:  # an unbalanced quote in a synopsis
        words = line.split("&&")[0].split()
    parser = _parser()
    if len(words) < 2 or words[1].startswith("-"):
        known = {s for a in parser._actions for s in a.option_strings}
    else:
        sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
        commands = words[1].split("/")  # `symverify compile/verify --progress`: both
        if any(c not in sub.choices for c in commands):
            return [c for c in commands if c not in sub.choices]
        known = set.intersection(*({s for a in sub.choices[c]._actions for s in a.option_strings} for c in commands))
    flags = []
    for w in words[2:]:
        for f in re.findall(r"(?:^|[\[|(])(--?[A-Za-z][\w-]*)", w):
            flags.append(f)
    return [f for f in flags if f not in known]


def test_every_command_line_in_the_docs_parses():
    bad, seen = [], 0
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for pos, line in command_lines(text):
            seen += 1
            if unknown := unknown_flags(line):
                bad.append(f"{_where(path, text, pos)}: {unknown} in {line!r}")
    assert seen >= 40, f"only {seen} command lines found: the scan no longer finds the README's synopsis"
    assert not bad, "options the docs show that the command does not have:\n" + "\n".join(bad)


def test_a_planted_wrong_flag_is_caught():
    text = ("```bash\nsymverify prove --quick --json run.json   # comment --nosuch\n"
            "symverify verify a.json b.json --metod exact\n"
            "symverify sweep thm_h21 --widths 4 \\\n    --depths 2 --sedes 0-3\n"
            "symverify prooove all\n```\n"
            "Run `symverify prove --dir DIR --quikc` or `symverify compile/verify --progress`.\n"
            "    symverify compile CIRCUIT.json [--method kaleidoscope|dense] [-o MODEL.json]\n"
            "                      [--certifcate CERT.json] [--json]\n")
    lines = [line for _, line in command_lines(text)]
    assert len(lines) == 7, lines
    assert [unknown_flags(line) for line in lines] == [
        [], ["--metod"], ["--sedes"], ["prooove"], ["--quikc"], [], ["--certifcate"]]


# ---------------------------------------------------------------------------------------------------------------
# signatures written with their defaults

def public_callables() -> dict[str, object]:
    """The public functions a signature in the docs may name: symverify's exports, and the functions of the modules
    the docs' signatures cite."""
    import symverify as sv
    from symverify import testing
    from symverify.compiler import retnet
    from symverify.executors import execute, modular_eval, numeric_check

    out: dict[str, object] = {name: getattr(sv, name) for name in sv.__all__ if callable(getattr(sv, name))}
    out.update(retnet_stack_direct=retnet.retnet_stack_direct, execute=execute, numeric_check=numeric_check,
               modular_eval=modular_eval, assert_proved=testing.assert_proved, assert_refuted=testing.assert_refuted)
    return out


SIGNATURE = re.compile(r"`((?:sv\.)?([A-Za-z_]\w*)\(([^`()]*(?:\([^`()]*\)[^`()]*)*)\))`")


def signature_problems(text: str, functions: dict[str, object]) -> list[tuple[int, str]]:
    """``(offset, problem)`` for every ``name(..., kw=default, ...)`` in backticks, ``name`` a known function, whose
    keywords or defaults differ from the function's own. Only written defaults are checked: a call shown with
    values (`compile(c, plan="exact")`) is also a ``kw=value``, so a signature is a span whose every keyword
    argument is one the function has and whose value is its default: a span is read as a signature when its
    positional arguments are the function's own parameter names and it has a ``*`` or two keywords or more."""
    out = []
    for m in SIGNATURE.finditer(text):
        name, args = m.group(2), m.group(3)
        fn = functions.get(name)
        if fn is None or "=" not in args:
            continue
        try:
            call = ast.parse(f"f({args.replace('*, ', '').replace(', *', '')})", mode="eval").body
        except SyntaxError:
            continue
        assert isinstance(call, ast.Call)
        params = inspect.signature(fn).parameters  # type: ignore[arg-type]
        names = [a.id if isinstance(a, ast.Name) else None for a in call.args]
        if names != list(params)[:len(names)] or ("*" not in args and len(call.keywords) < 2):
            continue  # a call with values (`verify(a, b, numeric=True)`), not a signature
        written = {k.arg: k.value for k in call.keywords if k.arg is not None}
        try:
            values = {k: ast.literal_eval(v) for k, v in written.items()}
        except ValueError:
            continue
        missing = [k for k in values if k not in params]
        wrong = [f"{k}={values[k]!r} (the default is {params[k].default!r})" for k in values
                 if k in params and params[k].default is not inspect.Parameter.empty and params[k].default != values[k]]
        star = re.search(r"(?:^|,)\s*\*\s*(?:,|$)", args)
        before_star = [k.arg for k in call.keywords if star is None or args.find(f"{k.arg}=") < star.start()]
        keyword_only = [k for k in before_star if k in params and params[k].kind is inspect.Parameter.KEYWORD_ONLY]
        if missing or wrong:
            out.append((m.start(), f"{name}: no keyword {missing}" if missing else f"{name}: {', '.join(wrong)}"))
        elif keyword_only:
            out.append((m.start(), f"{name}: {keyword_only} written before the '*' (keyword-only)"))
        elif len(values) >= 3:
            left_out = [k for k, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY and k not in values
                        and p.default is not inspect.Parameter.empty]
            if left_out and len(values) >= len([p for p in params.values()
                                                 if p.default is not inspect.Parameter.empty]) // 2:
                out.append((m.start(), f"{name}: the signature leaves out {left_out}"))
    return out


def test_every_signature_in_the_docs_matches_the_function():
    functions, bad = public_callables(), []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        bad += [f"{_where(path, text, pos)}: {p}" for pos, p in signature_problems(text, functions)]
    assert not bad, "signatures in the docs that differ from the code:\n" + "\n".join(bad)


def test_a_planted_wrong_signature_is_caught():
    def f(a, b, *, method="auto", seed=0, trials=None, timeout=None):
        return a, b, method, seed, trials, timeout

    functions = {"f": f}
    good = '`f(a, b, *, method="auto", seed=0, trials=None, timeout=None)` and `f(x, y, seed=3)`'
    assert signature_problems(good, functions) == []
    assert [p for _, p in signature_problems('`f(a, b, *, method="auto", seed=1, trials=None)`', functions)] == [
        "f: seed=1 (the default is 0)"]
    assert [p for _, p in signature_problems('`f(a, b, *, method="auto", sed=0)`', functions)] == [
        "f: no keyword ['sed']"]
    assert [p for _, p in signature_problems('`f(a, b, *, method="auto", seed=0, trials=None)`', functions)] == [
        "f: the signature leaves out ['timeout']"]
    assert [p for _, p in signature_problems('`f(a, b, method="auto", seed=0, trials=None, timeout=None)`',
                                             functions)] == [
        "f: ['method', 'seed', 'trials', 'timeout'] written before the '*' (keyword-only)"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_the_notebooks_are_scanned(path):
    """The notebooks' markdown cells are comment lines; the scans above read them whole."""
    assert path in USER_TEXTS and path.read_text(encoding="utf-8").count("# %%") >= 2


def synopsis_gaps(synopsis: str) -> list[str]:
    """``SUBCOMMAND OPTION`` for every option of the command's parser that the synopsis does not show (an option
    shown by one of its spellings, ``-o`` for ``--output``, counts; ``[prove's options]`` shows prove's)."""
    parser = _parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    lines = {name: " ".join(line for _, line in command_lines(synopsis) if line.startswith(f"symverify {name} "))
             for name in sub.choices}
    lines = {name: re.sub(r"\[prove's options[^\]]*\]", lambda _: lines["prove"], line) for name, line in lines.items()}
    gaps = []
    for name, p in sub.choices.items():
        for action in p._actions:
            spellings = [s for s in action.option_strings if s not in ("-h", "--help")]
            if spellings and not any(re.search(rf"(?<![\w-]){re.escape(s)}(?![\w-])", lines[name]) for s in spellings):
                gaps.append(f"{name} {spellings[-1]}")
    return gaps


def _readme_synopsis() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return readme.split("## Command line", 1)[1].split("\n## ", 1)[0].split("\nExit codes", 1)[0]


def test_the_readme_synopsis_shows_every_option():
    assert synopsis_gaps(_readme_synopsis()) == []


def test_a_planted_missing_option_is_caught():
    synopsis = _readme_synopsis()
    assert "[--plan auto|exact|greedy] " in synopsis
    assert synopsis_gaps(synopsis.replace("[--plan auto|exact|greedy] ", "")) == ["compile --plan"]

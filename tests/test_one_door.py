"""One door for verdicts: only :mod:`symverify.kernel.provers.outcome` makes them.

The scan reads every module of the package and every proof script (``proofs/*.py``, whatever
scripts exist) with :mod:`ast` and fails on:

* a call of ``MethodResult(...)`` (results come from ``outcome.proved``/``refuted``/``unknown``);
* a call of ``Verdict(...)`` (a verdict made from a string), and a member taken by its name or
  position (``Verdict["PROVED"]``, ``getattr(Verdict, …)``, ``next(iter(Verdict))``,
  ``list(Verdict)``, ``Verdict.__members__`` and the enum's other tables);
* a verdict member (``Verdict.PROVED``, ``Verdict.REFUTED``, ``Verdict.UNKNOWN``) anywhere but in a
  comparison, a dict key or a ``case`` pattern (so never passed, returned or assigned);
* the string ``"proved"`` anywhere but in a comparison, a dict key, a subscript, ``.get("proved")``,
  a docstring or an f-string (so never written as a verdict);
* a call of ``Instance(...)`` outside :mod:`symverify.scripts.protocol` (a proof script's claims
  come from ``Instance.from_report``, ``Instance.from_check``, ``Instance.computed`` or
  ``Instance.argued``).

Planted violations show that each rule fires.
"""

from __future__ import annotations

import ast
from fractions import Fraction
from pathlib import Path

import pytest

import symverify.kernel.provers.outcome as outcome
from symverify.errors import ProverError, UsageError
from symverify.kernel.provers.outcome import Counterexample, Verdict

ROOT = Path(__file__).resolve().parents[1]
DOOR = ROOT / "symverify" / "kernel" / "provers" / "outcome.py"
INSTANCE_DOOR = ROOT / "symverify" / "scripts" / "protocol.py"
MEMBERS = {"PROVED", "REFUTED", "UNKNOWN"}


ENUM_READERS = {"iter", "next", "list", "tuple", "sorted", "reversed", "set", "frozenset", "min", "max"}
"""Calls that hand out the members of an enum passed to them (``next(iter(Verdict))`` is ``PROVED``)."""
ENUM_MAPS = {"__members__", "_member_map_", "_value2member_map_", "_member_names_"}
"""An enum's own tables of its members, by name or value."""


def _is_verdict(node: ast.expr) -> bool:
    """``node`` is the name ``Verdict`` or an attribute ``….Verdict``."""
    return (isinstance(node, ast.Name) and node.id == "Verdict") or (isinstance(node, ast.Attribute) and node.attr == "Verdict")


def _name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _allowed_place(node: ast.AST, parents: dict[int, ast.AST], *, strings: bool) -> bool:
    parent = parents.get(id(node))
    if isinstance(parent, (ast.Tuple, ast.List, ast.Set)) and isinstance(parents.get(id(parent)), ast.Compare):
        return True  # x in ("proved", ...)
    if isinstance(parent, (ast.Compare, ast.MatchValue)):
        return True
    if isinstance(parent, ast.Dict) and any(k is node for k in parent.keys):
        return True
    if strings:
        if isinstance(parent, ast.JoinedStr) or (isinstance(parent, ast.FormattedValue) and parent.format_spec is node):
            return True
        if isinstance(parent, ast.Subscript) and parent.slice is node:
            return True
        if isinstance(parent, ast.Call) and _name(parent.func) == "get" and parent.args and parent.args[0] is node:
            return True
    return False


def scan(source: str, path: str = "<planted>", *, instance_door: bool = False) -> list[str]:
    """The violations of the one-door rules in ``source``, one line each (``path:line: what``)."""
    tree = ast.parse(source)
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    docs = _docstrings(tree)
    out = []
    for node in ast.walk(tree):
        where = f"{path}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Call):
            name = _name(node.func)
            if name == "MethodResult":
                out.append(f"{where}: MethodResult(...) outside symverify/kernel/provers/outcome.py")
            elif name == "Verdict":
                out.append(f"{where}: Verdict(...) made from a value outside symverify/kernel/provers/outcome.py")
            elif name == "Instance" and not instance_door:
                out.append(f"{where}: Instance(...) outside symverify/scripts/protocol.py (use its constructors)")
            elif (name == "getattr" and node.args and _is_verdict(node.args[0])) or (
                    name in ENUM_READERS and any(_is_verdict(a) for a in node.args)):
                out.append(f"{where}: a verdict member taken by {name}(Verdict, ...) outside symverify/kernel/provers/outcome.py")
        elif isinstance(node, ast.Subscript) and _is_verdict(node.value):
            out.append(f"{where}: Verdict[...] (a member by its name) outside symverify/kernel/provers/outcome.py")
        elif isinstance(node, ast.Attribute) and node.attr in ENUM_MAPS and _is_verdict(node.value):
            out.append(f"{where}: Verdict.{node.attr} (the members by name or value) outside symverify/kernel/provers/outcome.py")
        elif (isinstance(node, ast.Attribute) and node.attr in MEMBERS and isinstance(node.value, ast.Name)
              and node.value.id == "Verdict" and not _allowed_place(node, parents, strings=False)):
            out.append(f"{where}: Verdict.{node.attr} used outside a comparison")
        elif (isinstance(node, ast.Constant) and node.value == "proved" and id(node) not in docs
              and not _allowed_place(node, parents, strings=True)):
            out.append(f"{where}: the string 'proved' written outside a comparison")
    return out


def _sources() -> list[Path]:
    files = sorted((ROOT / "symverify").rglob("*.py")) + sorted((ROOT / "proofs").glob("*.py"))
    return [f for f in files if f != DOOR]


def test_the_tree_has_one_door() -> None:
    found = []
    for f in _sources():
        found += scan(f.read_text(encoding="utf-8"), str(f.relative_to(ROOT)), instance_door=f == INSTANCE_DOOR)
    assert not found, "verdicts made outside their constructors:\n" + "\n".join(found)


def test_the_scan_covers_the_provers_and_every_script() -> None:
    names = {f.relative_to(ROOT).as_posix() for f in _sources()}
    assert "symverify/kernel/provers/randomized.py" in names and "symverify/kernel/verification.py" in names
    assert {f"proofs/{p.name}" for p in (ROOT / "proofs").glob("*.py")} <= names


@pytest.mark.parametrize("planted, rule", [
    ("r = MethodResult(Verdict.UNKNOWN, 'exact', notes=('x',))", "MethodResult"),
    ("from symverify.provers import outcome as o\nr = o.MethodResult(o.Verdict.PROVED, 'exact')", "MethodResult"),
    ("v = Verdict('proved')", "Verdict(...)"),
    ("v = Verdict.PROVED", "Verdict.PROVED"),
    ("def f(ok):\n    return Verdict.PROVED if ok else Verdict.REFUTED", "Verdict.PROVED"),
    ("def f(ok):\n    return 'proved' if ok else 'unknown'", "'proved'"),
    ("row = {'verdict': 'proved'}", "'proved'"),
    ("inst = Instance('x', 'proved', 'exact')", "Instance"),
    ("inst = make(name, verdict='proved')", "'proved'"),
    ("v = Verdict['PROVED']", "Verdict[...]"),
    ("from symverify.kernel.provers import outcome as o\nv = o.Verdict['PROVED']", "Verdict[...]"),
    ("v = getattr(Verdict, 'PROVED')", "getattr(Verdict"),
    ("v = next(iter(Verdict))", "iter(Verdict"),
    ("v = list(Verdict)[0]", "list(Verdict"),
    ("v = Verdict.__members__['PROVED']", "Verdict.__members__"),
    ("v = Verdict._value2member_map_['proved']", "Verdict._value2member_map_"),
])
def test_a_planted_violation_is_found(planted: str, rule: str) -> None:
    found = scan(planted)
    assert found and any(rule in line for line in found), found


def test_reading_a_verdict_is_allowed() -> None:
    clean = '''
"""Docstring saying 'proved'."""
def f(report, counts, inst):
    """A docstring: "proved"."""
    if report.verdict is Verdict.PROVED or inst.get("verdict") == "proved":
        counts["proved"] += 1
    match report.verdict:
        case Verdict.REFUTED:
            pass
    codes = {Verdict.PROVED: 0, Verdict.UNKNOWN: 2}
    return f"{counts['proved']} proved", codes, report.verdict in (Verdict.PROVED,)
'''
    assert scan(clean) == []


def test_proved_enforces_the_error_bound() -> None:
    assert outcome.proved("exact").failure_bound == 0
    assert outcome.proved("randomized", failure_bound=Fraction(1, 8), error_bound=Fraction(1, 8)).failure_bound == Fraction(1, 8)
    with pytest.raises(ProverError, match="above the requested error_bound"):
        outcome.proved("randomized", failure_bound=Fraction(1, 4), error_bound=Fraction(1, 8))
    with pytest.raises(ProverError, match="must state the error_bound"):
        outcome.proved("randomized", failure_bound=Fraction(1, 4))
    with pytest.raises(ProverError, match=r"failure bound in \[0, 1\)"):
        outcome.proved("randomized", failure_bound=Fraction(1), error_bound=Fraction(2))


def test_refuted_needs_a_counterexample_that_differs() -> None:
    cex = Counterexample(((1,),), (), (0, 0), 1, 2)
    assert outcome.refuted("exact", {}, cex).verdict is Verdict.REFUTED
    with pytest.raises(ProverError, match="needs a counterexample, found NoneType"):
        outcome.refuted("exact", {}, None)  # type: ignore[arg-type]
    with pytest.raises(ProverError, match="two sides agree"):
        outcome.refuted("exact", {}, Counterexample(((1,),), (), (0, 0), 3, 3))


def test_unknown_needs_a_reason() -> None:
    assert outcome.unknown("z3", notes=("timeout",)).notes == ("timeout",)
    with pytest.raises(ProverError, match="needs a note saying why"):
        outcome.unknown("z3", notes=())


def test_exact_comparison_takes_only_a_decision() -> None:
    assert [outcome.exact_comparison(x) for x in (True, False, None)] == [Verdict.PROVED, Verdict.REFUTED, Verdict.UNKNOWN]
    with pytest.raises(UsageError, match="expected True, False or None, found int 1"):
        outcome.exact_comparison(1)  # type: ignore[arg-type]


def test_every_argued_claim_cites_a_docs_section_that_exists() -> None:
    from symverify.scripts.protocol import _CITATION

    cites = {node.value for f in sorted((ROOT / "proofs").glob("*.py")) for node in ast.walk(ast.parse(f.read_text(encoding="utf-8")))
             if isinstance(node, ast.Constant) and isinstance(node.value, str) and _CITATION.fullmatch(node.value)}
    assert cites, "no proof script cites a hand proof"
    for cite in cites:
        path, _, section = cite.partition(" §")
        text = (ROOT / path).read_text(encoding="utf-8")
        assert section.strip() in text, f"{cite}: no section {section.strip()!r} in {path}"


# ---- the door at run time: sealed results and reports ----------------------------------------


def test_hand_built_results_and_reports_are_refused() -> None:
    from symverify.kernel.provers.outcome import MethodResult
    from symverify.kernel.verification import Report

    with pytest.raises(ProverError, match=r"proved MethodResult is made only by outcome\.proved/refuted/unknown"):
        MethodResult(Verdict.PROVED, "exact")
    with pytest.raises(ProverError, match="proved Report is made only by verify"):
        Report(Verdict.PROVED, "exact")
    with pytest.raises(ProverError, match="must be a Verdict, found str"):
        Report("proved", "exact")  # type: ignore[arg-type]


def test_replacing_a_deciding_field_breaks_the_seal() -> None:
    import pickle
    from dataclasses import replace

    import symverify as sv
    from symverify import library as lib

    c = lib.determinant(2)
    rep = sv.verify(c, c)
    assert rep.proved
    assert replace(rep, timings={"total": 1.0}).proved  # the times may change (everything else shown is sealed)
    assert pickle.loads(pickle.dumps(rep)) == rep
    for change in ({"verdict": Verdict.REFUTED}, {"method": "randomized"}):
        with pytest.raises(ProverError, match="had its verdict, method, failure bound or counterexample replaced"):
            replace(rep, **change)
    res = outcome.unknown("exact", notes=("budget",))
    assert replace(res, notes=("other",)).notes == ("other",)
    with pytest.raises(ProverError, match="proved MethodResult is made only by"):
        replace(res, verdict=Verdict.PROVED)
    low = outcome.proved("randomized", failure_bound=Fraction(1, 8), error_bound=Fraction(1, 4))
    with pytest.raises(ProverError, match="made only by"):
        replace(low, failure_bound=Fraction(0))


def test_a_forged_report_cannot_reach_a_proof_script() -> None:
    from symverify.kernel.verification import Report
    from symverify.scripts.protocol import Instance

    with pytest.raises(ProverError, match="made only by verify"):
        Instance.from_report("forged", Report(Verdict.PROVED, "exact"))


@pytest.mark.parametrize("make", ["compositional", "fragment", "matrix", "forall"])
def test_hand_built_prover_outcomes_do_not_count(make: str) -> None:
    """Each prover's own outcome class is sealed where the prover makes it: a hand-built one (or a
    ``replace`` copy) is refused by ``Instance.from_report``; the prover's own is accepted."""
    from dataclasses import replace

    from symverify.kernel.provers.compositional import CompositionalResult
    from symverify.kernel.provers.forall import ForallResult
    from symverify.kernel.provers.fragment import FragmentProof
    from symverify.kernel.provers.matrix import KaleidoscopeCheck
    from symverify.scripts.protocol import Instance

    forged = {
        "compositional": lambda: CompositionalResult(True, 3, 3),
        "fragment": lambda: FragmentProof("f", True, True),
        "matrix": lambda: KaleidoscopeCheck(Verdict.PROVED, "exact-matrix", 2, 2, 1, False),
        "forall": lambda: ForallResult("g", Verdict.PROVED, "N ∈ [1, 8]"),
    }[make]()
    assert forged.verdict is Verdict.PROVED
    with pytest.raises(ProverError, match="was not made by its prover"):
        Instance.from_report("forged", forged, method="exact")
    real = _real_outcome(make)
    assert real.verdict is Verdict.PROVED and Instance.from_report("real", real, method="exact").verdict is Verdict.PROVED
    with pytest.raises(ProverError, match="was not made by its prover"):
        Instance.from_report("copied", replace(real), method="exact")


def _real_outcome(make: str):  # type: ignore[no-untyped-def]
    import symverify as sv
    from symverify import library as lib

    if make == "compositional":
        from symverify.kernel.provers.compositional import check_certificate

        c = lib.determinant(2)
        out = sv.compile(c)
        return check_certificate(c, out.model, out.certificate)
    if make == "matrix":
        from symverify.kaleidoscope.permutation import permutation_to_kaleidoscope
        from symverify.kernel.provers.matrix import verify_permutation

        return verify_permutation(permutation_to_kaleidoscope([1, 0, 3, 2]), [1, 0, 3, 2])
    if make == "forall":
        from symverify.parametric import library as plib

        return sv.prove_forall(plib.shift_down(), ranges={"N": (1, 8)})
    from symverify.gadgets.primitives import shift_down
    from symverify.kernel.provers.fragment import prove_fragment

    return prove_fragment(shift_down(4, 2, 1))

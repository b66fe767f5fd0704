"""Adversarial proof scripts: a user's script (``symverify prove --dir``) cannot mint ``proved``
without a prover's outcome, and the runner does not take a result file's word for ``ok``."""

from __future__ import annotations

import json
import textwrap
from types import SimpleNamespace
from typing import Any

import pytest

from symverify.errors import UsageError
from symverify.kernel.provers.outcome import Verdict
from symverify.scripts.protocol import Instance
from symverify.scripts.runner import discover, run_scripts


class _Looks:
    """Has a verdict and a method, like a Report, but no prover made it."""

    verdict = Verdict.PROVED
    method = "exact"


@pytest.mark.parametrize("fake", [_Looks(), SimpleNamespace(verdict=Verdict.PROVED, method="exact")])
def test_from_report_refuses_look_alike_outcomes(fake: Any) -> None:
    with pytest.raises(UsageError, match="expected a prover's outcome"):
        Instance.from_report("forged", fake)
    with pytest.raises(UsageError, match="expected a prover's outcome"):
        Instance.from_report("forged", fake, method="exact")


def _inst(**kw: Any) -> dict[str, Any]:
    base = {"name": "x", "verdict": "proved", "method": "exact", "resources": {}, "bounds": {}, "seconds": 0.0,
            "detail": "", "kind": "prover", "basis": "", "checks": None, "over_bound": [], "ok": True}
    if kw.get("kind", "prover") == "prover":  # a prover's claim names what it is about (run format version 4)
        base["digests"] = [{"lhs": "sha256:" + "0" * 64, "rhs": "sha256:" + "1" * 64}]
    base.update(kw)
    return {k: v for k, v in base.items() if v is not _DROP}


_DROP = object()

FORGED = {
    # an argued claim written as proved: refused (crashed row)
    "argued_proved": ([_inst(kind="argued", basis="docs/theory.md § 1")], "crashed"),
    # no kind at all: the JUnit writer used to take it for a prover's claim
    "no_kind": ([_inst(kind=_DROP)], "crashed"),
    "bad_verdict": ([_inst(verdict="PROVED!")], "crashed"),
    # "ok" claimed for claims that are not proved / over their bound / argued with failing checks
    "unknown_ok": ([_inst(verdict="unknown")], "failed"),
    "over_ok": ([_inst(over_bound=["layers"])], "crashed"),  # over_bound names no bound
    "argued_failed_checks": ([_inst(kind="argued", verdict="unknown", checks=False)], "failed"),
    "empty_ok": ([], "failed"),
    # a prover's claim that names no digests: every prover outcome names what it is about
    "no_digests": ([_inst(digests=_DROP)], "crashed"),
}

SCRIPT = '''
TITLE = "A result file written by hand"
import json, sys
out = sys.argv[sys.argv.index("--json") + 1]
json.dump({{"format": "symverify.proof-result", "version": 1, "name": "{name}", "title": TITLE, "ok": True, "counts": {{}}, "seconds": 0, "instances": {instances}}}, open(out, "w"))
'''


def test_forged_result_files_never_count_as_proved(tmp_path):
    d = tmp_path / "forged"
    d.mkdir()
    for name, (instances, _) in FORGED.items():
        (d / f"{name}.py").write_text(textwrap.dedent(SCRIPT.format(name=name, instances=repr(json.loads(json.dumps(instances))))), encoding="utf-8")
    scripts = discover(d)
    rows = {o.name: o for o in run_scripts(scripts, list(scripts), jobs=2).outcomes}
    for name, (_, status) in FORGED.items():
        assert rows[name].status == status, (name, rows[name].status, rows[name].error)
        assert not rows[name].ok
    assert "argued claim" in rows["argued_proved"].error and "kind" in rows["no_kind"].error
    assert "instances[0].digests: a prover's claim in a run of version 4 names what it is about" in rows["no_digests"].error


def test_an_argued_claim_is_shown_as_argued_not_proved(tmp_path):
    d = tmp_path / "argued"
    d.mkdir()
    (d / "lemma.py").write_text(textwrap.dedent('''
        TITLE = "A hand proof"
        from symverify.scripts.protocol import Instance, ProofResult, script_main

        def run(quick=False):
            return ProofResult("lemma", TITLE, [Instance.argued("it holds", "docs/theory.md § 1", checks=True)])

        if __name__ == "__main__":
            raise SystemExit(script_main(run))
    '''), encoding="utf-8")
    scripts = discover(d)
    row = run_scripts(scripts, ["lemma"]).outcomes[0]
    assert row.ok and row.counts() == {"proved": 0, "refuted": 0, "unknown": 0, "argued": 1}
    assert row.instances()[0]["kind"] == "argued" and row.instances()[0]["verdict"] == "unknown"

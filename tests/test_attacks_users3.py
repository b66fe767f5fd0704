"""Attacks on user-facing surfaces: golden runs of `symverify prove`, and the other user tools."""

from __future__ import annotations

import textwrap
from pathlib import Path

from symverify.cli import main

ARGUED = '''
TITLE = "A hand proof {name}"
from symverify.scripts.protocol import Instance, ProofResult, script_main

def run(quick=False):
    return ProofResult("{name}", TITLE, [Instance.argued("it holds", "docs/theory.md § 1", checks=True)])

if __name__ == "__main__":
    raise SystemExit(script_main(run))
'''


def _scripts(d: Path, *names: str) -> None:
    d.mkdir(exist_ok=True)
    for name in names:
        (d / f"{name}.py").write_text(textwrap.dedent(ARGUED.format(name=name)), encoding="utf-8")


def test_a_script_gone_from_a_run_of_every_script_differs_from_the_golden_run(tmp_path, capsys):
    d, golden = tmp_path / "proofs", str(tmp_path / "golden.json")
    _scripts(d, "alpha", "beta")
    assert main(["prove", "--dir", str(d), "-j", "1", "--golden", golden, "--update-golden"]) == 0
    (d / "beta.py").unlink()  # a proof script deleted (or renamed): its claims are no longer run
    capsys.readouterr()
    assert main(["prove", "--dir", str(d), "-j", "1", "--golden", golden]) == 1
    out = capsys.readouterr().out
    assert "differs from the golden run" in out and 'beta: script: "beta" → (none)' in out
    # named scripts are still compared with their part of the golden run
    assert main(["prove", "--dir", str(d), "alpha", "-j", "1", "--golden", golden]) == 0


def test_a_golden_record_of_an_argued_claim_keeps_whether_its_checks_ran():
    from symverify.scripts.protocol import Instance, ProofResult
    from symverify.testing import golden_record

    held = Instance.argued("it holds", "docs/theory.md § 1", checks=True)
    not_run = Instance.argued("it holds", "docs/theory.md § 1")  # still ok: nothing failed, nothing was checked
    assert held.ok and not_run.ok
    assert golden_record(held)["checks"] is True and "checks" not in golden_record(not_run)
    assert golden_record(ProofResult("p", "t", [held])) != golden_record(ProofResult("p", "t", [not_run]))
    assert golden_record({"claim": held}) != golden_record({"claim": not_run})

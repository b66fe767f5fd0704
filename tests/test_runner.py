"""``symverify prove``: discovery, one process per script, failed/over-bound/crashed rows, JSON, exit codes."""

import json
import textwrap

import pytest

from symverify.cli import main
from symverify.provers.outcome import UsageError
from symverify.scripts.runner import default_dir, discover, run_scripts, script_title

TEMPLATE = '''
from symverify.scripts.protocol import Instance, ProofResult, script_main

TITLE = "{title}"


def run(quick=False):
    {body}
    r = ProofResult("{name}", TITLE)
    r.instances.append(Instance("{name} instance", "{verdict}", "exact", {{"layers": {layers}}}, {{"layers": 2}}, 0.0,
                                "quick" if quick else "full"))
    return r


if __name__ == "__main__":
    raise SystemExit(script_main(run))
'''

SCRIPTS = {
    "good": dict(title="A result that holds", verdict="proved", layers=2, body="pass"),
    "refuted": dict(title="A false claim", verdict="refuted", layers=1, body="pass"),
    "overbound": dict(title="Proved but too big", verdict="proved", layers=5, body="pass"),
    "crashing": dict(title="A script with a bug", verdict="proved", layers=1, body="raise RuntimeError('boom in run')"),
}


@pytest.fixture
def proof_dir(tmp_path):
    d = tmp_path / "proofs"
    d.mkdir()
    for name, kw in SCRIPTS.items():
        (d / f"{name}.py").write_text(textwrap.dedent(TEMPLATE.format(name=name, **kw)))
    (d / "_helper.py").write_text("X = 1\n")
    return d


def test_discovery_and_titles(proof_dir):
    found = discover(proof_dir)
    assert list(found) == ["crashing", "good", "overbound", "refuted"]
    assert script_title(found["good"]) == "A result that holds"
    with pytest.raises(UsageError, match="does not exist"):
        discover(proof_dir / "nowhere")


def test_rows_for_every_outcome(proof_dir):
    seen = []
    summary = run_scripts(proof_dir, quick=True, on_start=seen.append)
    rows = {o.name: o for o in summary.outcomes}
    assert seen == ["crashing", "good", "overbound", "refuted"]
    assert rows["good"].status == "ok" and rows["good"].instances()[0]["detail"] == "quick"
    assert rows["refuted"].status == "failed" and rows["refuted"].counts()["refuted"] == 1
    assert rows["overbound"].status == "failed" and rows["overbound"].over_bound() == ["overbound instance: layers"]
    assert rows["crashing"].status == "crashed" and "boom in run" in rows["crashing"].error
    assert rows["crashing"].title == "A script with a bug"
    assert not summary.ok
    assert run_scripts(proof_dir, ["good"]).ok


def test_cli_prove_exit_codes_table_and_json(proof_dir, tmp_path, capsys):
    out_json = tmp_path / "run.json"
    code = main(["prove", "--dir", str(proof_dir), "--quick", "--json", str(out_json)])
    out = capsys.readouterr().out
    assert code == 1
    for word in ("good", "refuted", "overbound", "crashing", "CRASHED", "FAILED", "1 over: overbound instance: layers",
                 "1/4 scripts ok"):
        assert word in out, word
    data = json.loads(out_json.read_text())
    assert data["ok"] is False and [s["status"] for s in data["scripts"]] == ["crashed", "ok", "failed", "failed"]
    assert main(["prove", "good", "--dir", str(proof_dir)]) == 0
    assert main(["prove", "all", "--dir", str(proof_dir)]) == 1


def test_unknown_name_lists_the_available_ones(proof_dir, capsys):
    assert main(["prove", "good", "nosuch", "--dir", str(proof_dir)]) == 3
    err = capsys.readouterr().err
    assert "unknown proof script(s) nosuch; available: crashing, good, overbound, refuted" in err


def test_default_directory(tmp_path, monkeypatch):
    (tmp_path / "proofs").mkdir()
    assert default_dir(tmp_path) == tmp_path / "proofs"
    fallback = default_dir(tmp_path / "elsewhere")
    assert fallback.name == "proofs" and (fallback / "primitives_handwritten.py").exists()


def test_repository_script_runs_through_the_runner():
    summary = run_scripts(default_dir(), ["primitives_handwritten"], quick=True)
    (row,) = summary.outcomes
    assert row.ok and row.counts()["proved"] == len(row.instances()) >= 14, row.error

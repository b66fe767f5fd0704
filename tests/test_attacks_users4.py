"""Attacks on user-facing surfaces: golden-file names in the pytest plugin, the mutation campaign's
verdict, CLI options the chosen method never reads, random_circuit's size, edited BaseConv weights."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

from symverify import library

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _load_campaign():
    spec = importlib.util.spec_from_file_location("mutation_campaign", ROOT / "benchmarks" / "mutation_campaign.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up by name
    spec.loader.exec_module(mod)
    return mod


def test_a_verify_call_that_crashes_on_a_mutant_fails_the_campaign(monkeypatch, capsys):
    campaign = _load_campaign()
    c = library.poly_mult(2)
    case = campaign.Case("gate", "poly_mult(2)", "coefficient 1 -> 2", c, c, None, ("exact",))
    crashed = campaign.Outcome(0, "exact", "error", 0.01, "RuntimeError: boom", True)
    summary = campaign.Summary([case], [crashed], 0.1)
    assert summary.errors == [crashed]
    assert not summary.ok
    assert campaign.Summary([case], [campaign.Outcome(0, "exact", "proved (invisible)", 0.01, "", True)], 0.1).ok
    monkeypatch.setattr(campaign, "run_campaign", lambda *a, **k: summary)
    assert campaign.main(["--quick"]) == 1
    out = capsys.readouterr().out
    assert "RuntimeError: boom" in out and "1 verify calls that crashed" in out


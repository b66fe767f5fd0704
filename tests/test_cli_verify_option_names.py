"""``symverify verify`` names an option that ``verify`` refused by its flag: ``--seed 2^70`` said
``seed: expected an int within ±(2^63 − 1)``, the keyword of the Python call, not the flag the user
typed."""

from __future__ import annotations

from pathlib import Path

import pytest

import symverify as sv
from symverify.cli import main


@pytest.fixture
def pair(tmp_path: Path) -> tuple[str, str]:
    c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
    sv.dump_file(c, str(tmp_path / "c.json"))
    sv.dump_file(sv.compile(c).model, str(tmp_path / "m.json"))
    return str(tmp_path / "c.json"), str(tmp_path / "m.json")


@pytest.mark.parametrize("seed", [str(2**70), str(-(2**63))])
def test_a_seed_out_of_range_is_named_by_its_flag(pair, capsys, seed):
    assert main(["verify", *pair, "--seed", seed]) == 3
    err = capsys.readouterr().err
    assert err.startswith("symverify: error: --seed: expected an int within ±(2^63 − 1)"), err


def test_a_seed_in_range_still_decides(pair, capsys):
    assert main(["verify", *pair, "--seed", str(2**63 - 1)]) == 0
    assert capsys.readouterr().out.startswith("PROVED")


def test_too_many_trials_are_named_by_the_flag(pair, capsys):
    assert main(["verify", *pair, "--method", "randomized", "--trials", str(10**20)]) == 3
    assert capsys.readouterr().err.startswith("symverify: error: --trials: expected at most symverify.ir.limits.MAX_TRIALS")

"""``symverify prove --list`` runs no script, so a run option given with it (``--quick``, ``-j``,
``--timeout``, ``--scheduler``, ``--details``, …) was ignored without a word; it is refused, naming
each, as ``--json`` already was."""

from __future__ import annotations

import pytest

from symverify.cli import main


@pytest.mark.parametrize(("extra", "named"), [
    (["--quick"], "--quick"), (["-j", "4"], "-j"), (["--timeout", "5"], "--timeout"), (["--details"], "--details"),
    (["--wide"], "--wide"), (["--scheduler", "local"], "--scheduler"),
    (["--scheduler", "local", "--cases-per-task", "3"], "--scheduler, --cases-per-task"),
    (["--quick", "-j", "2", "--wide"], "--quick, -j, --wide"),
])
def test_a_run_option_with_list_is_refused_naming_it(capsys, extra, named):
    assert main(["prove", "--list", *extra]) == 3
    err = capsys.readouterr().err
    assert err == ("symverify: error: --list prints the scripts and runs none, so it reads only --dir and the names: "
                   f"leave out {named}\n"), err


def test_list_with_names_and_dir_still_lists(tmp_path, capsys):
    d = tmp_path / "d"
    d.mkdir()
    (d / "mine.py").write_text("TITLE = 'a claim of mine'\n", encoding="utf-8")
    assert main(["prove", "--list", "--dir", str(d), "mine"]) == 0
    assert capsys.readouterr().out.split() == ["mine", "d", "a", "claim", "of", "mine"]  # an absolute --dir by its last part

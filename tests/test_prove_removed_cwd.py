"""``symverify prove`` run from a directory that was removed meanwhile (``rm -rf`` of the build
directory in another shell) made every row ``crashed: the runner failed on this script's process:
FileNotFoundError``: the import path of the script processes read the current directory even where
every ``PYTHONPATH`` entry is absolute. It is read only for a relative entry, and then a missing one
is a usage error saying what to do."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from symverify.cli import main
from symverify.errors import UsageError
from symverify.scripts.tasks import own_import_path

TINY = '''from symverify.scripts.protocol import Instance, ProofResult, script_main


def run(quick=False):
    return ProofResult("tiny", "one computed claim", [Instance.computed("one", True, "a comparison", "exact")])


if __name__ == "__main__":
    raise SystemExit(script_main(run))
'''


@pytest.fixture
def removed_cwd(tmp_path: Path, monkeypatch) -> Path:
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    return gone


def test_prove_from_a_removed_directory_runs_with_an_absolute_import_path(tmp_path, removed_cwd, monkeypatch, capsys):
    d = tmp_path / "d"
    d.mkdir()
    (d / "tiny.py").write_text(TINY, encoding="utf-8")
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (path or "").split(os.pathsep) if os.path.isabs(p)))
    assert main(["prove", "--dir", str(d), "tiny"]) == 0, capsys.readouterr()


def test_a_relative_entry_read_from_a_removed_directory_is_a_usage_error(removed_cwd):
    assert own_import_path(os.path.abspath(os.sep)).split(os.pathsep)[-1] == os.path.abspath(os.sep)
    with pytest.raises(UsageError, match=r"PYTHONPATH entry 'src' is read from the current directory, which no longer "
                                         r"exists \(removed while in use\): cd to an existing directory"):
        own_import_path(os.pathsep.join([os.path.abspath(os.sep), "src"]))

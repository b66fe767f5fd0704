"""``symverify prove``: only regular files ``NAME.py`` (or links to one) are proof scripts. A
directory, a FIFO or a broken link with such a name is not listed by ``--list``, and asked for by
name (``--dir DIR NAME`` or the path ``DIR/NAME.py``) it is a one-line usage error (exit 3) saying
what it is."""

from __future__ import annotations

import os
import threading

import pytest

from symverify.cli import main
from symverify.scripts import runner


@pytest.fixture
def scripts_dir(tmp_path):
    d = tmp_path / "proofs"
    d.mkdir()
    (d / "real.py").write_text('TITLE = "a real script"\n')
    (d / "folder.py").mkdir()
    (d / "broken.py").symlink_to(tmp_path / "nowhere.py")
    (d / "linked.py").symlink_to(d / "real.py")
    return d


def _usage_error(capsys, argv) -> str:
    assert main(argv) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("symverify: error: "), err
    return err


def test_only_regular_files_are_listed(scripts_dir, capsys):
    assert sorted(runner.discover(scripts_dir)) == ["linked", "real"]
    assert main(["prove", "--list", "--dir", str(scripts_dir)]) == 0
    listed = {line.split()[0] for line in capsys.readouterr().out.splitlines()}
    assert {"real", "linked"} <= listed and not listed & {"folder", "broken"}


@pytest.mark.parametrize(("name", "what"), [("folder", "a directory"), ("broken", "a broken symbolic link")])
@pytest.mark.parametrize("listing", [True, False])
def test_a_name_that_is_no_file_is_a_usage_error(scripts_dir, capsys, name, what, listing):
    flags = ["--list"] if listing else []
    err = _usage_error(capsys, ["prove", "--dir", str(scripts_dir), name, *flags])
    assert f"proof script {name}: {scripts_dir / (name + '.py')} is {what}, not a proof script file" in err
    path = str(scripts_dir / f"{name}.py")
    err = _usage_error(capsys, ["prove", path, *flags])
    assert f"{path}: expected a proof script file NAME.py, found {what}" in err


def test_a_missing_path_is_still_no_such_file(scripts_dir, capsys):
    path = str(scripts_dir / "nope.py")
    assert f"{path}: no such proof script file" in _usage_error(capsys, ["prove", path])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_never_opened(scripts_dir, capsys):
    """Reading a FIFO's constants would block until something writes to it: it is no script."""
    os.mkfifo(scripts_dir / "pipe.py")
    found: list[object] = []
    t = threading.Thread(target=lambda: found.append(sorted(runner.discover(scripts_dir))), daemon=True)
    t.start()
    t.join(120)  # generous: without the check, discover blocks on the FIFO forever
    assert found == [["linked", "real"]]
    assert runner.not_a_script(scripts_dir / "pipe.py") == "a special file (a FIFO, a socket or a device)"
    err = _usage_error(capsys, ["prove", "--dir", str(scripts_dir), "pipe"])
    assert "pipe.py is a special file (a FIFO, a socket or a device), not a proof script file" in err


def test_a_directory_named_like_a_module_shadows_nothing(scripts_dir, capsys):
    """Only a file ``json.py`` would be imported in place of the standard library's ``json``; a
    directory of that name is neither a module nor the package ``json``."""
    (scripts_dir / "json.py").mkdir()
    assert main(["prove", "--list", "--dir", str(scripts_dir)]) == 0
    assert "json" not in {line.split()[0] for line in capsys.readouterr().out.splitlines()}
    (scripts_dir / "json.py").rmdir()
    (scripts_dir / "json.py").write_text("")
    assert "json.py: expected a module name of its own, found 'json'" in _usage_error(
        capsys, ["prove", "--list", "--dir", str(scripts_dir)])

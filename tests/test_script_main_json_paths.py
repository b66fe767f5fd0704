"""``python NAME.py --json OUT`` (``script_main``) as a careless user types it: ``--json -`` wrote a
file named ``-`` (``symverify prove --json -`` means standard output), and ``--json NAME.py``
replaced the proof script with its own result JSON (through a symbolic or a hard link too). Both
are refused before the run (exit 2, one line naming the path), and the file is left as it was."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from symverify.scripts.protocol import script_main

SCRIPT = """from symverify.scripts.protocol import Instance, ProofResult

RAN = []


def run(quick=False):
    RAN.append(quick)
    return ProofResult("mine", "one computed claim", [Instance.computed("one", True, "a comparison", "exact")])
"""


def _script(tmp_path: Path) -> tuple[Path, dict]:
    """The script file and its namespace (``run`` compiled from that file, as ``python NAME.py`` runs it)."""
    path = tmp_path / "mine.py"
    path.write_text(SCRIPT, encoding="utf-8")
    namespace: dict = {}
    exec(compile(SCRIPT, str(path), "exec"), namespace)
    return path, namespace


def _refused(capsys, namespace: dict, out: str, monkeypatch, cwd: Path) -> str:
    monkeypatch.chdir(cwd)
    with pytest.raises(SystemExit) as stopped:
        script_main(namespace["run"], ["--json", out])
    assert stopped.value.code == 2 and namespace["RAN"] == []  # before the run
    return " ".join(capsys.readouterr().err.split())


def test_json_dash_is_refused_and_writes_no_file_named_dash(tmp_path, capsys, monkeypatch):
    _, namespace = _script(tmp_path)
    err = _refused(capsys, namespace, "-", monkeypatch, tmp_path)
    assert "--json '-': expected a file path, found '-', which is not standard output here" in err
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize("how", ["itself", "relative", "symlink", "hardlink"])
def test_json_naming_the_script_itself_is_refused_and_leaves_it(tmp_path, capsys, monkeypatch, how):
    path, namespace = _script(tmp_path)
    out = {"itself": str(path), "relative": "./mine.py", "symlink": str(tmp_path / "link.py"),
           "hardlink": str(tmp_path / "hard.py")}[how]
    if how == "symlink":
        os.symlink(path, out)
    if how == "hardlink":
        os.link(path, out)
    err = _refused(capsys, namespace, out, monkeypatch, tmp_path)
    assert f"--json '{out}': names the proof script {path} itself, which writing the result would replace" in err
    assert path.read_text(encoding="utf-8") == SCRIPT


def test_another_path_is_written(tmp_path, capsys, monkeypatch):
    _, namespace = _script(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert script_main(namespace["run"], ["--json", "result.json"]) == 0
    assert '"name": "mine"' in (tmp_path / "result.json").read_text(encoding="utf-8")


# ---- script_main wrote --json with open(path, "w"): the previous file was emptied first, so a full disk
# or an interruption while writing left a file cut short (or empty) where a complete result had been ---------
def test_a_failed_write_leaves_the_previous_result_whole(tmp_path, capsys, monkeypatch):
    from symverify.scripts import whole_file

    _, namespace = _script(tmp_path)
    out = tmp_path / "result.json"
    out.write_text('{"previous": "result"}\n', encoding="utf-8")
    os.chmod(out, 0o600)

    def full(fd: int, data: bytes) -> None:
        os.write(fd, data[:10])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(whole_file, "write_all", full)
    with pytest.raises(SystemExit) as stopped:
        script_main(namespace["run"], ["--json", str(out)])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.endswith(f"error: --json {out}: cannot write there (No space left on device)\n")
    assert out.read_text(encoding="utf-8") == '{"previous": "result"}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.py", "result.json"]  # no temporary file left
    monkeypatch.undo()
    assert script_main(namespace["run"], ["--json", str(out)]) == 0
    assert '"name": "mine"' in out.read_text(encoding="utf-8") and os.stat(out).st_mode & 0o777 == 0o600


def test_a_symbolic_link_is_followed_and_kept(tmp_path, capsys):
    _, namespace = _script(tmp_path)
    real = tmp_path / "real.json"
    real.write_text("old\n", encoding="utf-8")
    link = tmp_path / "link.json"
    os.symlink(real, link)
    assert script_main(namespace["run"], ["--json", str(link)]) == 0
    assert link.is_symlink() and '"name": "mine"' in real.read_text(encoding="utf-8")

"""One whole-file write (``symverify.scripts.whole_file``) behind ``symverify prove``/``compile``/
``report`` outputs and a proof script's ``--json``. It existed twice, and the script's copy was the
weaker one: a temporary name already taken failed the write after the whole run, a hard-linked
result file was replaced without a word, and a loop of symbolic links was not named."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symverify.errors import UsageError
from symverify.scripts import whole_file
from symverify.scripts.protocol import script_main

SCRIPT = """from symverify.scripts.protocol import Instance, ProofResult


def run(quick=False):
    return ProofResult("mine", "one computed claim", [Instance.computed("one", True, "a comparison", "exact")])
"""


def _run(tmp_path: Path):
    path = tmp_path / "mine.py"
    path.write_text(SCRIPT, encoding="utf-8")
    namespace: dict = {}
    exec(compile(SCRIPT, str(path), "exec"), namespace)
    return namespace["run"]


@pytest.mark.parametrize("others", [1, 2])
def test_a_script_json_with_other_hard_links_is_replaced_with_the_warning_prove_gives(tmp_path, capsys, others):
    run = _run(tmp_path)
    out = tmp_path / "result.json"
    out.write_text("old\n", encoding="utf-8")
    for k in range(others):
        os.link(out, tmp_path / f"latest{k}.json")
    assert script_main(run, ["--json", str(out)]) == 0
    keep = "its other hard link keeps" if others == 1 else f"its {others} other hard links keep"
    assert f"symverify: warning: --json {out}: written whole as a new file; {keep} the previous content" in (
        capsys.readouterr().err)
    assert '"name": "mine"' in out.read_text(encoding="utf-8")
    assert all((tmp_path / f"latest{k}.json").read_text(encoding="utf-8") == "old\n" for k in range(others))


def test_a_taken_temporary_name_is_drawn_again_for_a_script_json(tmp_path, capsys, monkeypatch):
    """A file (or link) already under the first name drawn is never written through; another name is drawn."""
    import secrets

    run = _run(tmp_path)
    out = tmp_path / "result.json"
    names = iter(["aaaaaaaa", "bbbbbbbb"])
    monkeypatch.setattr(secrets, "token_hex", lambda n: next(names))
    planted = tmp_path / f".result.json.{os.getpid()}.aaaaaaaa.tmp"
    planted.write_text("planted\n", encoding="utf-8")
    assert script_main(run, ["--json", str(out)]) == 0, capsys.readouterr().err
    assert '"name": "mine"' in out.read_text(encoding="utf-8")
    assert planted.read_text(encoding="utf-8") == "planted\n"


def test_a_loop_of_symbolic_links_is_named_for_both_callers(tmp_path, capsys):
    run = _run(tmp_path)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    os.symlink(b, a)
    os.symlink(a, b)
    with pytest.raises(SystemExit) as stopped:
        script_main(run, ["--json", str(a)])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.endswith(f"error: --json {a}: cannot write there (a loop of symbolic links)\n")
    with pytest.raises(UsageError, match=r"^-o .*a\.json: cannot write there \(a loop of symbolic links\)$"):
        whole_file.write_whole(str(a), "x", "-o")
    assert a.is_symlink() and b.is_symlink()


def test_an_interruption_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    out = tmp_path / "out.json"
    out.write_text("old\n", encoding="utf-8")

    def interrupted(fd: int, data: bytes) -> None:
        os.write(fd, data[:3])
        raise KeyboardInterrupt

    monkeypatch.setattr(whole_file, "write_all", interrupted)
    with pytest.raises(KeyboardInterrupt):
        whole_file.write_whole(str(out), "new content\n", "--json")
    assert out.read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_a_path_with_control_characters_is_shown_on_one_line(tmp_path):
    missing = tmp_path / "no\ndir" / "out\x1b[2J.json"
    with pytest.raises(UsageError, match=r"--json .*no\\ndir/out\\x1b\[2J\.json: cannot write there \("):
        whole_file.write_whole(str(missing), "x", "--json")


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=200), mode=st.sampled_from([0o600, 0o640, 0o644]))
def test_the_text_is_written_whole_with_the_mode_kept(tmp_path, text, mode):
    out = tmp_path / "out.txt"
    out.write_text("previous", encoding="utf-8")
    os.chmod(out, mode)
    whole_file.write_whole(str(out), text, "-o")
    assert out.read_bytes() == text.encode("utf-8") and os.stat(out).st_mode & 0o777 == mode
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]

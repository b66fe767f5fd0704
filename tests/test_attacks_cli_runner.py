"""Attacks on ``symverify prove``/``report`` as a careless or hostile user drives them: the text of
a user's proof script (its ``TITLE``, its file name) and the result files a script writes."""

from __future__ import annotations

from pathlib import Path

from test_attacks_cli import exit_code

HOSTILE_TITLE = 'TITLE = "evil\\x1b[31mRED\\x07\\nOK  a forged line"\n'
SCRIPT_BODY = (
    "from symverify.scripts.protocol import ProofResult, script_main\n"
    "def run(quick):\n"
    "    return ProofResult({name!r}, TITLE)\n"
    "if __name__ == '__main__':\n"
    "    raise SystemExit(script_main(run))\n"
)


# ---- prove --list printed a script's TITLE as it is: an ESC sequence reached the terminal, and a
# line break in it printed a second line that reads as another script -------------------------------
def test_list_shows_a_scripts_title_on_its_one_line_escaped(tmp_path: Path, capsys) -> None:
    d = tmp_path / "d"
    d.mkdir()
    (d / "hostile.py").write_text(HOSTILE_TITLE + SCRIPT_BODY.format(name="hostile"), encoding="utf-8")
    code, out, err = exit_code(capsys, "prove", "--dir", str(d), "--list")
    assert code == 0, err
    assert out.count("\n") == 1 and "\x1b" not in out and "\x07" not in out, repr(out)
    assert out.split()[0] == "hostile" and "evil\\x1b[31mRED\\x07\\nOK  a forged line" in out, repr(out)

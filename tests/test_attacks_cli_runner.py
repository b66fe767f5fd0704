"""Attacks on ``symverify prove``/``report`` as a careless or hostile user drives them: the text of
a user's proof script (its ``TITLE``, its file name) and the result files a script writes."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_attacks_cli import exit_code

HOSTILE_TITLE = 'TITLE = "evil\\x1b[31mRED\\x07\\nOK  a forged line"\n'


def proof_script(name: str, *, title: str = "TITLE = 'one computed claim'\n", claim: str | None = "'c'",
                 how: str = "a comparison", head: str = "", setup: str = "") -> str:
    """The text of a user's proof script ``name``: ``head`` lines, then its ``title`` line, and ``run``
    (``setup`` lines first) returning one computed claim whose case is the expression ``claim`` (no
    instance for None)."""
    instances = "" if claim is None else f", [Instance.computed({claim}, True, {how!r}, 'exact')]"
    return (f"{head}from symverify.scripts.protocol import Instance, ProofResult, script_main\n{title}"
            f"def run(quick):\n{setup}    return ProofResult({name!r}, TITLE{instances})\n"
            "if __name__ == '__main__':\n    raise SystemExit(script_main(run))\n")


def two_scripts(tmp_path: Path) -> tuple[Path, Path]:
    """A directory ``d`` of the two user scripts ``first`` and ``second`` (one computed claim each) and
    the path of a golden run beside it (not written)."""
    d = tmp_path / "d"
    d.mkdir()
    for name in ("first", "second"):
        (d / f"{name}.py").write_text(proof_script(name), encoding="utf-8")
    return d, tmp_path / "golden.json"



# ---- prove --list printed a script's TITLE as it is: an ESC sequence reached the terminal, and a
# line break in it printed a second line that reads as another script -------------------------------
def test_list_shows_a_scripts_title_on_its_one_line_escaped(tmp_path: Path, capsys) -> None:
    d = tmp_path / "d"
    d.mkdir()
    (d / "hostile.py").write_text(proof_script("hostile", title=HOSTILE_TITLE, claim=None), encoding="utf-8")
    code, out, err = exit_code(capsys, "prove", "--dir", str(d), "--list")
    assert code == 0, err
    assert out.count("\n") == 1 and "\x1b" not in out and "\x07" not in out, repr(out)
    assert out.split()[0] == "hostile" and "evil\\x1b[31mRED\\x07\\nOK  a forged line" in out, repr(out)


# ---- symverify report on one part's result file (--shard K/N, --cases) showed the script "all ok" as
# if its whole run had passed: the cases of the other parts never ran ------------------------------
def _three_cases(quick: bool = False):
    from symverify.scripts.protocol import Instance, ProofResult, each

    made = [Instance.computed(f"case {k}", True, "a comparison", "exact") for k in each(range(3))]
    return ProofResult("three", "Three cases", made)


def _result_file(tmp_path: Path, *argv: str) -> Path:
    from symverify.scripts.protocol import script_main

    out = tmp_path / f"result{len(list(tmp_path.iterdir()))}.json"
    assert script_main(_three_cases, ["--json", str(out), *argv]) == 0
    return out


def test_report_of_one_parts_result_file_says_it_is_a_part(tmp_path: Path, capsys) -> None:
    from symverify.viz.report import report_page
    from symverify.viz.resources import load_run

    for argv, cases in ((("--shard", "1/2"), "case 1"), (("--cases", "0,2"), "cases 0, 2")):
        path = _result_file(tmp_path, *argv)
        mark = f"[a part of the script, not its whole run (--shard or --cases): instances of {cases}, of 3 cases in all]"
        assert load_run(path)["scripts"][0]["title"] == f"{mark} Three cases"
        page = report_page(path)
        assert "only a part of the run of three (--shard or --cases): its other cases did not run" in page
        assert f"<td>{mark} Three cases</td>" in page
        code, _, err = exit_code(capsys, "report", str(path), "-o", str(tmp_path / "page.html"))
        assert code == 0, err
        assert "only a part of the run of three" in (tmp_path / "page.html").read_text(encoding="utf-8")
    whole = report_page(_result_file(tmp_path))
    assert "a part of" not in whole and "<td>Three cases</td>" in whole


# ---- a built-in script's own file (`prove proofs/primitives.py` in a checkout) or directory (`--dir
# proofs`) was read as a user's directory and refused as "proof script causal_limit in proofs has the
# name of a built-in script; rename it": the first script of it, not the one asked for ----------------
def test_a_builtin_scripts_own_path_or_directory_names_the_builtin_script(capsys) -> None:
    from symverify.scripts.runner import builtin_dir

    here = builtin_dir()
    for argv in ((str(here / "primitives.py"),), ("--dir", str(here), "primitives"), ("--dir", str(here / "."), "primitives")):
        code, out, err = exit_code(capsys, "prove", "--list", *argv)
        assert code == 0 and err == "", err
        assert out.split()[:2] == ["primitives", "builtin"], out
    code, out, err = exit_code(capsys, "prove", "--list", "--dir", str(here))
    assert code == 0 and "primitives" in out.split() and "rename it" not in err, err


# ---- an integer literal longer than Python reads (sys.get_int_max_str_digits()) in a run file, a
# result file or a sweep grid was "not valid JSON: 'Exceeds the limit...increase the limit'": it
# said neither where nor what was expected --------------------------------------------------------
def test_a_too_long_integer_in_a_run_is_named_where_it_is(tmp_path: Path, capsys) -> None:
    import json
    import sys

    from symverify.scripts.protocol import script_main

    out = tmp_path / "result.json"
    assert script_main(_three_cases, ["--json", str(out)]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    digits = sys.get_int_max_str_digits() + 1
    text = json.dumps(data).replace('"resources": {}', '"resources": {"layers": ' + "9" * digits + "}", 1)
    out.write_text(text, encoding="utf-8")
    code, _, err = exit_code(capsys, "report", str(out), "-o", str(tmp_path / "page.html"))
    assert code == 3 and err.count("\n") == 1, err
    assert (f"instances[0].resources.layers: expected an integer of at most {digits - 1} digits "
            f"(sys.get_int_max_str_digits()), found an integer literal of {digits} digits") in err, err


# ---- SIGTERM (a CI job's timeout) stopped only prove and sweep as the exit-code table says (130,
# "symverify: interrupted"); verify, compile, info and report died by the signal: no line, code 143 --
TERMINATED_VERIFY = """
import os, signal, sys
import symverify.kernel.verification as verification
from symverify.cli import main

def verify(*args, **kwargs):  # a long verification that the CI job's timeout ends
    os.kill(os.getpid(), signal.SIGTERM)
    signal.sigtimedwait([], 60)  # never reached with the fix: the handler raises at once
    raise AssertionError("SIGTERM did not stop verify")

verification.verify = verify
sys.exit(main(["verify", sys.argv[1], sys.argv[1], "--method", "exact"]))
"""


def test_sigterm_stops_verify_as_ctrl_c_does(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    import symverify as sv

    circuit = tmp_path / "c.json"
    sv.dump_file(sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2), str(circuit))
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", TERMINATED_VERIFY, str(circuit)], capture_output=True, text=True,
                          env=env, timeout=120)
    assert (done.returncode, done.stderr) == (130, "symverify: interrupted\n"), (done.returncode, done.stderr)


# ---- script_main --shard read K/N with int(): '1_0/2_0' as 10/20, ' 0/2' and Arabic-Indic digits as
# numbers, and an empty --shard '' was no shard at all (the whole script ran) -------------------------
def test_script_main_shard_takes_ascii_digits_only(capsys) -> None:
    import pytest

    from symverify.scripts.protocol import script_main

    for shard in ("1_0/2_0", " 0/2", "0/2 ", "+0/2", "١/٢", "", "0/" + "9" * 5000):
        with pytest.raises(SystemExit) as e:
            script_main(_three_cases, [f"--shard={shard}"])
        err = capsys.readouterr().err
        assert e.value.code == 2 and "--shard: expected K/N, two numbers of digits 0-9 with 0 ≤ K < N, found" in err, err
        assert len(err.strip().splitlines()[-1]) < 300, err
    assert script_main(_three_cases, ["--shard=1/2"]) == 0


# ---- prove printed the --golden path as it is ("golden run written to …", "matches the golden run …"):
# an ESC in it reached the terminal, a line break split the line; the differ line escaped it ----------
PASSING_SCRIPT = proof_script("passing")


def test_the_golden_path_is_shown_escaped(tmp_path: Path, capsys) -> None:
    d = tmp_path / "d"
    d.mkdir()
    (d / "passing.py").write_text(PASSING_SCRIPT, encoding="utf-8")
    golden = tmp_path / "g\x1b[2J\nx.json"
    for extra, said in ((["--update-golden"], "golden run written to "), ([], "matches the golden run ")):
        code, out, err = exit_code(capsys, "prove", "--dir", str(d), "passing", "-j", "1", "--golden", str(golden), *extra)
        assert code == 0, err
        assert "\x1b" not in out and f"{said}{tmp_path}/g\\x1b[2J\\nx.json\n" in out, repr(out)
    import json

    run = json.loads(golden.read_text(encoding="utf-8"))
    run["scripts"][0]["result"]["instances"][0]["name"] = "another claim"
    golden.write_text(json.dumps(run), encoding="utf-8")
    code, out, err = exit_code(capsys, "prove", "--dir", str(d), "passing", "-j", "1", "--golden", str(golden))
    assert code == 1 and "\x1b" not in out, err
    assert f"this run differs from the golden run {tmp_path}/g\\x1b[2J\\nx.json (--update-golden" in out, repr(out)


# ---- `prove … 2>&1 | head -1`: once the reader of standard error had gone, rich's console ended the
# run with SystemExit(1), a failed run's exit code, before --json was written, every script ok --------
def test_a_gone_reader_of_standard_error_neither_fails_the_run_nor_loses_its_files(tmp_path: Path) -> None:
    import json
    import os
    import subprocess
    import sys

    d = tmp_path / "d"
    d.mkdir()
    (d / "passing.py").write_text(PASSING_SCRIPT, encoding="utf-8")
    out = tmp_path / "run.json"
    read, write = os.pipe()
    os.close(read)  # the reader has gone before the first line
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    try:
        done = subprocess.run([sys.executable, "-m", "symverify", "prove", "--dir", str(d), "passing", "-j", "1",
                               "--json", str(out)], stdout=subprocess.DEVNULL, stderr=write, env=env, timeout=300)
    finally:
        os.close(write)
    assert done.returncode == 0
    assert json.loads(out.read_text(encoding="utf-8"))["ok"] is True


# ---- `verify --progress` once the reader of standard error had gone: rich's spinner ended the process
# with SystemExit(1), refuted's exit code, for an identity that is proved (and printed no report) ------
def test_a_gone_reader_of_the_spinner_does_not_make_verify_say_refuted(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    import symverify as sv

    c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
    sv.dump_file(c, str(tmp_path / "c.json"))
    sv.dump_file(sv.compile(c).model, str(tmp_path / "m.json"))
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    for command in (["verify", str(tmp_path / "c.json"), str(tmp_path / "m.json")],
                    ["compile", str(tmp_path / "c.json"), "-o", str(tmp_path / "out.json")]):
        read, write = os.pipe()
        os.close(read)  # the reader has gone
        try:
            done = subprocess.run([sys.executable, "-m", "symverify", *command, "--progress"], stdout=subprocess.PIPE,
                                  stderr=write, env=env, timeout=300, text=True)
        finally:
            os.close(write)
        assert done.returncode == 0, (command[0], done.returncode, done.stdout)
    assert done.stdout and (tmp_path / "out.json").is_file()


# ---- symverify report made the whole page (plots included) before finding that -o cannot be written,
# and wrote it in place (an interruption left half a page where the last whole one was) ---------------
def test_report_checks_its_output_before_making_the_page(tmp_path: Path, capsys, monkeypatch) -> None:
    import symverify.viz.report as report

    path = _result_file(tmp_path)

    def made(*args, **kwargs):
        raise AssertionError("the page was made before -o was checked")

    monkeypatch.setattr(report, "report_page", made)
    missing = tmp_path / "missing" / "page.html"
    code, _, err = exit_code(capsys, "report", str(path), "-o", str(missing))
    assert code == 3 and err == f"symverify: error: -o {missing}: the directory {missing.parent} does not exist\n", err
    monkeypatch.undo()
    page = tmp_path / "page.html"
    page.write_text("the last whole page", encoding="utf-8")
    code, out, err = exit_code(capsys, "report", str(path), "-o", str(page))
    assert code == 0 and out == f"wrote {page}\n" and page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>"), err
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".page.html")] == []  # no temporary file left


# ---- symverify compile -o wrote the model in place: a full disk (or an interruption) midway left a
# model file cut short where the previous whole one was -------------------------------------------------
def test_compile_writes_its_files_whole_or_not_at_all(tmp_path: Path, capsys, monkeypatch) -> None:
    import symverify as sv

    circuit = tmp_path / "c.json"
    sv.dump_file(sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2), str(circuit))
    model, cert = tmp_path / "m.json", tmp_path / "k.json"
    model.write_text("the previous model", encoding="utf-8")
    cert.write_text("the previous certificate", encoding="utf-8")
    import os

    from symverify.scripts import whole_file

    def full_disk(fd: int, data: bytes) -> None:
        os.write(fd, data[:10])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(whole_file, "write_all", full_disk)
    code, _, err = exit_code(capsys, "compile", str(circuit), "-o", str(model), "--certificate", str(cert))
    monkeypatch.undo()
    assert code == 3 and "No space left on device" in err, err
    assert model.read_text(encoding="utf-8") == "the previous model"
    assert cert.read_text(encoding="utf-8") == "the previous certificate"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json", "k.json", "m.json"]
    code, _, err = exit_code(capsys, "compile", str(circuit), "-o", str(model), "--certificate", str(cert))
    assert code == 0 and isinstance(sv.load_file(str(model)), sv.Model), err


# ---- run from a checkout (`python -m symverify prove` there), the script processes imported another
# symverify (site-packages, PYTHONPATH): the run showed the verdicts of other code as this one's -----
WHICH_SCRIPT = proof_script(
    "which", title="TITLE = 'which symverify'\nfrom pathlib import Path\n", claim="found", how="an import", head="import symverify\n",
    setup="    found = str(Path(symverify.__file__).resolve())  # the file, whatever link led to it\n")
FROM_A_CHECKOUT = """
import sys
sys.path.insert(0, sys.argv[1])  # this checkout first, as `python -m symverify` run inside it has it
from symverify.cli import main
sys.exit(main(["prove", "--dir", sys.argv[2], "which", "-j", "1", "--json", sys.argv[3]]))
"""


def test_script_processes_import_the_symverify_of_the_run(tmp_path: Path) -> None:
    import json
    import os
    import subprocess
    import sys

    import symverify

    decoy = tmp_path / "other" / "symverify"  # another symverify, first on the import path of every process
    decoy.mkdir(parents=True)
    (decoy / "__init__.py").write_text("raise ImportError('the other symverify')\n", encoding="utf-8")
    d = tmp_path / "d"
    d.mkdir()
    (d / "which.py").write_text(WHICH_SCRIPT, encoding="utf-8")
    out = tmp_path / "run.json"
    root = str(Path(symverify.__file__).resolve().parents[1])
    done = subprocess.run([sys.executable, "-c", FROM_A_CHECKOUT, root, str(d), str(out)], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(decoy.parent)}, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    claim = json.loads(out.read_text(encoding="utf-8"))["scripts"][0]["result"]["instances"][0]
    assert claim["name"] == str(Path(symverify.__file__).resolve())


# ---- `symverify verify A B | grep -q PROVED`: when the reader had gone before the report was printed,
# verify exited 3 ("standard output: Broken pipe"), an input error's code, in place of its verdict's --
class _GonePipe:
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def test_verify_keeps_its_verdicts_exit_code_when_the_reader_has_gone(tmp_path: Path, capsys, monkeypatch) -> None:
    import sys

    from cases import SQUARE_C, SQUARE_M

    import symverify as sv
    from symverify.cli import main

    c, m = str(tmp_path / "c.json"), str(tmp_path / "m.json")
    sv.dump_file(SQUARE_C, c)
    sv.dump_file(SQUARE_M, m)
    monkeypatch.setattr(sys, "stdout", _GonePipe())
    for flags in ([], ["--json"]):
        assert main(["verify", c, m, *flags]) == 0
    monkeypatch.undo()
    assert capsys.readouterr().err == ""


# ---- `prove a --golden G --update-golden` is compared with a's part of G only, but wrote this run over
# all of G: the stored records of every other script were lost without a word, and the next run of all
# of them differed --------------------------------------------------------------------------------------
def test_updating_the_golden_run_of_named_scripts_keeps_the_others(tmp_path: Path, capsys) -> None:
    import json

    d, golden = two_scripts(tmp_path)
    base = ["prove", "--dir", str(d), "-j", "1", "--golden", str(golden)]
    assert exit_code(capsys, *base, "--update-golden")[0] == 0
    code, out, err = exit_code(capsys, *base, "first", "--update-golden")
    assert code == 0 and f"golden run written to {golden} (its other scripts kept: second)" in out, out + err
    stored = json.loads(golden.read_text(encoding="utf-8"))
    assert [s["name"] for s in stored["scripts"]] == ["first", "second"] and stored["ok"] is True
    code, out, err = exit_code(capsys, *base)  # every script against the golden run: nothing was lost
    assert code == 0 and f"matches the golden run {golden}" in out, out + err
    code, out, err = exit_code(capsys, "report", str(golden), "-o", str(tmp_path / "page.html"))
    assert code == 0, err
    from symverify.scripts.runner import golden_update

    mine = {**stored, "scripts": stored["scripts"][:1]}
    assert golden_update(mine, golden) == (stored, ["second"], "")
    golden.write_text(json.dumps({**stored, "quick": True}), encoding="utf-8")  # the other tier: replaced whole
    assert golden_update(mine, golden) == (mine, [], "the stored run, of the quick tier, replaced whole: its scripts "
                                                     "second dropped")
    assert golden_update(mine, tmp_path / "missing.json") == (mine, [], "")


# ---- `prove a --golden G --update-golden` with G of the other tier wrote this run over all of G: the
# stored records of every other script were lost, and the line said only "golden run written" ---------
def test_updating_a_golden_run_of_the_other_tier_says_what_it_drops(tmp_path: Path, capsys) -> None:
    import json

    d, golden = two_scripts(tmp_path)
    base = ["prove", "--dir", str(d), "-j", "1", "--golden", str(golden)]
    assert exit_code(capsys, *base, "--update-golden")[0] == 0
    code, out, err = exit_code(capsys, *base, "--quick", "first", "--update-golden")
    assert code == 0, out + err
    assert (f"golden run written to {golden} (the stored run, of the full tier, replaced whole: its scripts second "
            "dropped)") in out, out
    assert [s["name"] for s in json.loads(golden.read_text(encoding="utf-8"))["scripts"]] == ["first"]


# ---- an output path that is a symbolic link to a file not written yet (latest.json -> runs/today.json)
# was refused as "cannot write there (File exists)", though the write replaces the file it points to ----
def test_an_output_link_to_a_file_not_written_yet_is_written_through(tmp_path: Path, capsys) -> None:
    import symverify as sv

    circuit = tmp_path / "c.json"
    sv.dump_file(sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2), str(circuit))
    link, target = tmp_path / "latest.json", tmp_path / "runs" / "today.json"
    target.parent.mkdir()
    link.symlink_to(target)
    code, _, err = exit_code(capsys, "compile", str(circuit), "-o", str(link))
    assert code == 0, err
    assert link.is_symlink() and isinstance(sv.load_file(str(target)), sv.Model)
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    code, _, err = exit_code(capsys, "compile", str(circuit), "-o", str(tmp_path / "a"))
    assert code == 3 and err == f"symverify: error: -o {tmp_path / 'a'}: cannot write there (a loop of symbolic links)\n"


# ---- `prove … >&-` or `2>&-`: with standard output or error closed Python has None there, and prove
# asked it isatty(): "internal error … AttributeError: 'NoneType' object has no attribute 'isatty'" ---
def test_prove_with_closed_standard_streams(tmp_path: Path, capsys, monkeypatch) -> None:
    import sys
    import xml.etree.ElementTree as ET

    from symverify.cli import main

    d = tmp_path / "d"
    d.mkdir()
    (d / "passing.py").write_text(PASSING_SCRIPT, encoding="utf-8")
    junit = tmp_path / "j.xml"
    for stream in ("stdout", "stderr"):
        monkeypatch.setattr(sys, stream, None)
        try:
            out = "-" if stream == "stderr" else str(tmp_path / "run.json")  # --json - to a closed stdout: refused
            code = main(["prove", "--dir", str(d), "passing", "-j", "1", "--json", out, "--junit", str(junit)])
        finally:
            monkeypatch.undo()
        assert code == 0, capsys.readouterr()
        assert ET.parse(junit).getroot().get("tests") == "1"
        junit.unlink()


# ---- the atomic writes of compile -o, --certificate, report -o, prove --json/--golden made their
# temporary file under a name known in advance (.NAME.PID.tmp), opened through whatever was there: a
# link planted under that name had the file it names overwritten -------------------------------------
def test_an_output_is_never_written_through_a_file_planted_at_its_temporary_name(tmp_path: Path, capsys,
                                                                                monkeypatch) -> None:
    import os
    import secrets

    import symverify as sv

    circuit = tmp_path / "c.json"
    sv.dump_file(sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2), str(circuit))
    victim = tmp_path / "victim.txt"
    victim.write_text("not to be touched", encoding="utf-8")
    drawn = iter(["0000", "0000", "0001"])
    monkeypatch.setattr(secrets, "token_hex", lambda n=None: next(drawn))
    for name in (f".m.json.{os.getpid()}.tmp", f".m.json.{os.getpid()}.0000.tmp"):
        (tmp_path / name).symlink_to(victim)
    code, _, err = exit_code(capsys, "compile", str(circuit), "-o", str(tmp_path / "m.json"))
    assert code == 0, err
    assert victim.read_text(encoding="utf-8") == "not to be touched"
    assert isinstance(sv.load_file(str(tmp_path / "m.json")), sv.Model) and not (tmp_path / "m.json").is_symlink()
    assert not (tmp_path / f".m.json.{os.getpid()}.0001.tmp").exists()


def test_an_output_whose_name_is_near_the_file_system_limit_is_written(tmp_path: Path, capsys) -> None:
    """The temporary name added 12 or more characters to the output's: a name of 250 characters,
    which the file system takes, was "cannot write there (File name too long)"."""
    import symverify as sv

    circuit = tmp_path / "c.json"
    sv.dump_file(sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2), str(circuit))
    model = tmp_path / ("m" * 245 + ".json")
    code, _, err = exit_code(capsys, "compile", str(circuit), "-o", str(model))
    assert code == 0, err
    assert isinstance(sv.load_file(str(model)), sv.Model)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json", model.name]


# ---- the file an atomic write renamed over the output took the umask's mode, not the replaced file's:
# a private (chmod 600) model, certificate or run file became readable by every user -----------------
def test_an_output_keeps_the_permissions_of_the_file_it_replaces(tmp_path: Path, capsys) -> None:
    import os
    import stat

    import symverify as sv

    circuit = tmp_path / "c.json"
    sv.dump_file(sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2), str(circuit))
    model, cert = tmp_path / "m.json", tmp_path / "k.json"
    old = os.umask(0o022)
    try:
        model.write_text("the previous model", encoding="utf-8")
        model.chmod(0o600)
        code, _, err = exit_code(capsys, "compile", str(circuit), "-o", str(model), "--certificate", str(cert))
    finally:
        os.umask(old)
    assert code == 0, err
    assert isinstance(sv.load_file(str(model)), sv.Model)
    assert stat.S_IMODE(model.stat().st_mode) == 0o600  # replaced, and as private as before
    assert stat.S_IMODE(cert.stat().st_mode) == 0o644  # a new file: 0o666 less the umask
    model.chmod(0o4750)  # a set-user-id bit is not carried over to the file written in its place
    code, _, err = exit_code(capsys, "compile", str(circuit), "-o", str(model))
    assert code == 0 and stat.S_IMODE(model.stat().st_mode) == 0o750, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json", "k.json", "m.json"]


# ---- the script processes had the checkout holding symverify first on their import path, so its other
# top-level names (proofs, tests, examples, setup) shadowed a user's modules of those names: a script
# importing its project's own `proofs` package (on PYTHONPATH) got the checkout's and crashed ---------
USES_ITS_PROJECT = proof_script("uses", title="TITLE = 'a script of a project'\n", claim="VALUE",
                                head="from proofs.common import VALUE\n")


def test_a_users_package_is_not_shadowed_by_the_checkout(tmp_path: Path, capsys, monkeypatch) -> None:
    import json

    project = tmp_path / "project"
    (project / "proofs").mkdir(parents=True)
    (project / "proofs" / "__init__.py").write_text("", encoding="utf-8")
    (project / "proofs" / "common.py").write_text("VALUE = 'from the project'\n", encoding="utf-8")
    d = tmp_path / "d"
    d.mkdir()
    (d / "uses.py").write_text(USES_ITS_PROJECT, encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(project))
    out = tmp_path / "run.json"
    code, _, err = exit_code(capsys, "prove", "--dir", str(d), "uses", "-j", "1", "--json", str(out))
    script = json.loads(out.read_text(encoding="utf-8"))["scripts"][0]
    assert code == 0 and script["status"] == "ok", (err, script["error"])
    assert script["result"]["instances"][0]["name"] == "from the project"


def test_the_import_path_of_a_script_names_only_symverify(tmp_path: Path) -> None:
    import os

    import symverify
    from symverify.scripts.tasks import own_import_path

    root = str(Path(symverify.__file__).resolve().parents[1])
    path = own_import_path(os.pathsep.join(["/a", root, "/b"]), tmp_path).split(os.pathsep)
    if path[0] != str(tmp_path):  # installed in site-packages: found there by every process, the path kept
        assert path == ["/a", root, "/b"]
        return
    assert path == [str(tmp_path), "/a", "/b"]  # the user's entries after it
    assert [p.name for p in tmp_path.iterdir()] == ["symverify"]
    assert (tmp_path / "symverify").resolve() == Path(symverify.__file__).resolve().parent


def test_an_import_directory_that_pythonpath_cannot_name_is_refused(tmp_path: Path) -> None:
    """``PYTHONPATH`` splits at ``os.pathsep``: a directory holding it would be read as two others,
    and the script processes would import whatever symverify they find instead of this one."""
    import os

    import pytest

    from symverify.errors import UsageError
    from symverify.scripts.tasks import own_import_path

    odd = tmp_path / f"a{os.pathsep}b"
    odd.mkdir()
    if own_import_path(None, tmp_path) == "":
        pytest.skip("symverify is installed in site-packages: nothing is put on the import path")
    with pytest.raises(UsageError, match=rf"import symverify from '.*a{os.pathsep}b', which holds '{os.pathsep}': "
                                         "PYTHONPATH cannot name it"):
        own_import_path(None, odd)


# ---- the script processes run in a temporary directory, where a relative PYTHONPATH entry (`.`, `src`,
# or an empty one: the current directory) names another place than where prove was started: a script
# importing a module of the user's project found on that path crashed -------------------------------
@pytest.mark.parametrize("installed", [False, True], ids=["checkout", "site-packages"])
def test_a_relative_pythonpath_means_where_prove_was_started(tmp_path: Path, capsys, monkeypatch, installed) -> None:
    import json
    import os
    import site

    import symverify

    if installed:  # this symverify as if in site-packages, where every process finds it
        sites = [*site.getsitepackages(), str(Path(symverify.__file__).resolve().parents[1])]
        monkeypatch.setattr(site, "getsitepackages", lambda: sites)

    (tmp_path / "src" / "proofs").mkdir(parents=True)
    (tmp_path / "src" / "proofs" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "src" / "proofs" / "common.py").write_text("VALUE = 'from the project'\n", encoding="utf-8")
    d = tmp_path / "d"
    d.mkdir()
    (d / "uses.py").write_text(USES_ITS_PROJECT, encoding="utf-8")
    monkeypatch.chdir(tmp_path / "src")
    root = str(Path(symverify.__file__).resolve().parents[1])  # for the child to find symverify when "installed"
    for entry in (".", "", "../src"):
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join([entry, "/nonexistent"] + ([root] if installed else [])))
        out = tmp_path / "run.json"
        code, _, err = exit_code(capsys, "prove", "--dir", str(d), "uses", "-j", "1", "--json", str(out))
        script = json.loads(out.read_text(encoding="utf-8"))["scripts"][0]
        assert code == 0 and script["status"] == "ok", (entry, err, script["error"])


# ---- an existing output file is replaced through a new file beside it, which its directory must take:
# a writable file in a directory that is not (or is full of names) passed the check made before the
# work, and the write failed after it (compile's whole run lost) ------------------------------------
def test_an_output_directory_that_takes_no_new_file_is_refused_before_the_work(tmp_path: Path, capsys,
                                                                               monkeypatch) -> None:
    import symverify as sv
    from symverify import cli
    from symverify.scripts import whole_file

    circuit = tmp_path / "c.json"
    sv.dump_file(sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2), str(circuit))
    model = tmp_path / "m.json"
    model.write_text("the previous model", encoding="utf-8")

    def refused(p: Path):
        raise PermissionError(13, "Permission denied")

    def compiled(*args, **kwargs):
        raise AssertionError("compiled before the output was found unwritable")

    monkeypatch.setattr(whole_file, "new_temporary", refused)
    monkeypatch.setattr(cli, "_compile_file", compiled)
    code, _, err = exit_code(capsys, "compile", str(circuit), "-o", str(model))
    assert code == 3, err
    assert err == (f"symverify: error: -o {model}: cannot write there: the file is replaced whole through a new file "
                   f"in {tmp_path}, which cannot be made there (Permission denied)\n")
    assert model.read_text(encoding="utf-8") == "the previous model"


def test_a_symverify_imported_from_a_zip_file_is_named_by_the_zip(tmp_path: Path, monkeypatch) -> None:
    """A link cannot lead into a zip file (zipimport): the import path names the zip itself."""
    import os

    from symverify.scripts import tasks

    archive = tmp_path / "symverify.zip"
    archive.write_bytes(b"PK\x05\x06" + bytes(18))  # an empty zip archive
    monkeypatch.setattr(tasks, "__file__", str(archive / "symverify" / "scripts" / "tasks.py"))
    links = tmp_path / "links"
    links.mkdir()
    assert tasks.own_import_path("/a", links) == f"{archive}{os.pathsep}/a"
    assert list(links.iterdir()) == []


IGNORED_TERM_VERIFY = """
import os, signal, sys, time
import symverify.kernel.verification as verification
from symverify.cli import main

real = verification.verify

def verify(*args, **kwargs):  # a SIGTERM sent to a process started to ignore it
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(0.2)
    print("survived", signal.getsignal(signal.SIGTERM) is signal.SIG_IGN, flush=True)
    return real(*args, **kwargs)

verification.verify = verify
sys.exit(main(["verify", sys.argv[1], sys.argv[1], "--method", "exact"]))
"""


def test_sigterm_ignored_by_the_parent_stays_ignored(tmp_path: Path) -> None:
    """A process started with SIGTERM ignored (``nohup``-like wrappers, a parent asking it to outlive
    a SIGTERM) kept it only until the command installed its handler: the SIGTERM then stopped
    ``verify`` with exit 130. An inherited ``SIG_IGN`` is kept: the run goes on to its verdict."""
    import os
    import signal
    import subprocess
    import sys

    import symverify as sv

    circuit = tmp_path / "c.json"
    sv.dump_file(sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2), str(circuit))
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", IGNORED_TERM_VERIFY, str(circuit)], capture_output=True, text=True,
                          env=env, timeout=120, preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_IGN))
    assert done.returncode == 0 and "survived True" in done.stdout, (done.returncode, done.stdout, done.stderr)


def test_sigterm_handler_only_replaces_the_default() -> None:
    """``_catch_sigterm`` installs the interrupting handler over ``SIG_DFL`` only; ``SIG_IGN`` or an
    embedding program's own handler is left as it is (and nothing is returned to restore)."""
    import signal

    from symverify import cli

    def own(signum, frame):  # an embedding program's handler
        pass

    before = signal.getsignal(signal.SIGTERM)
    try:
        for kept in (signal.SIG_IGN, own):
            signal.signal(signal.SIGTERM, kept)
            assert cli._catch_sigterm() is None and signal.getsignal(signal.SIGTERM) is kept
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        assert cli._catch_sigterm() is signal.SIG_DFL and signal.getsignal(signal.SIGTERM) is cli._interrupt
    finally:
        signal.signal(signal.SIGTERM, before)


# ---- `prove a --golden G --update-golden --timings` kept the partial run's top-level seconds, jobs and
# scheduler over a file whose other scripts another run wrote: one run's time and setup stated of all ----
def test_a_merged_golden_runs_top_level_times_are_true_of_the_whole_file(tmp_path: Path, capsys) -> None:
    import json

    from symverify.scripts.runner import golden_update, load_run

    d, golden = two_scripts(tmp_path)
    base = ["prove", "--dir", str(d), "--golden", str(golden), "--timings", "--update-golden"]
    assert exit_code(capsys, *base, "-j", "1")[0] == 0
    whole = json.loads(golden.read_text(encoding="utf-8"))
    assert whole["jobs"] == 1 and "seconds" in whole
    code, out, err = exit_code(capsys, *base, "-j", "2", "first")
    assert code == 0 and "its other scripts kept: second" in out, out + err
    merged = load_run(golden)  # still a valid run file
    assert "jobs" not in merged and "scheduler" not in merged  # this run had 2, the stored one 1
    assert merged["seconds"] == round(sum(s["seconds"] for s in merged["scripts"]), 1)
    # the same jobs and scheduler on both sides are kept; a run or a stored script without times states none
    first = {**whole, "scripts": whole["scripts"][:1], "seconds": 999.0}
    golden.write_text(json.dumps(whole), encoding="utf-8")
    got = golden_update(first, golden)[0]
    assert got["jobs"] == 1 and got["seconds"] == round(sum(s["seconds"] for s in whole["scripts"]), 1) != 999.0
    dask = {**first, "scheduler": "dask local"}
    assert "jobs" not in golden_update(dask, golden)[0] and "scheduler" not in golden_update(dask, golden)[0]
    untimed = {**whole, "scripts": [whole["scripts"][0], {k: v for k, v in whole["scripts"][1].items() if k != "seconds"}]}
    golden.write_text(json.dumps(untimed), encoding="utf-8")
    assert "seconds" not in golden_update(first, golden)[0]


def test_a_merged_golden_runs_seconds_are_never_infinite(tmp_path: Path, capsys) -> None:
    """Each stored script's ``seconds`` is a finite float below 2^1024, their sum need not be: it was
    written as ``Infinity``, which no reader of a run file takes."""
    import json

    from symverify.scripts.runner import golden_update

    d, golden = two_scripts(tmp_path)
    assert exit_code(capsys, "prove", "--dir", str(d), "--golden", str(golden), "--timings", "--update-golden", "-j", "1")[0] == 0
    whole = json.loads(golden.read_text(encoding="utf-8"))
    for s in whole["scripts"]:
        s["seconds"] = 1.5e308
    golden.write_text(json.dumps(whole), encoding="utf-8")
    merged = golden_update({**whole, "scripts": whole["scripts"][:1]}, golden)[0]
    assert "seconds" not in merged
    json.dumps(merged, allow_nan=False)

"""A reader of standard output that has gone (``symverify prove --list | head -1``) ends the command
quietly with its own exit code: ``info``, ``compile``, ``report`` and ``prove --list`` exited 3 with
``symverify: error: standard output: Broken pipe``, the code of an input error, after the work was
done (``compile -o`` and ``report`` had written their files)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import symverify as sv

ROOT = Path(__file__).resolve().parents[1]


def _closed_reader(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """``symverify ARGV`` whose standard output is a pipe with no reader left (every write: EPIPE)."""
    read, write = os.pipe()
    os.close(read)
    try:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        return subprocess.run([sys.executable, "-m", "symverify", *argv], stdout=write, stderr=subprocess.PIPE,
                              text=True, cwd=tmp_path, env=env, timeout=120)
    finally:
        os.close(write)


@pytest.fixture
def circuit(tmp_path: Path) -> Path:
    path = tmp_path / "c.json"
    sv.dump_file(sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2), str(path))
    return path


@pytest.mark.parametrize("argv", [["prove", "--list"], ["info", "c.json"], ["info", "c.json", "--json"],
                                  ["compile", "c.json"], ["compile", "c.json", "-o", "m.json"]])
def test_a_reader_gone_ends_the_command_quietly_with_its_own_code(tmp_path, circuit, argv):
    done = _closed_reader(tmp_path, *argv)
    assert done.returncode == 0, done.stderr
    assert "error" not in done.stderr and "Broken pipe" not in done.stderr, done.stderr
    if "-o" in argv:  # the file was written before the line that says so
        assert sv.load_file(str(tmp_path / "m.json")).n == 1


def test_verify_keeps_its_verdict_and_report_writes_its_page(tmp_path, circuit):
    sv.dump_file(sv.compile(sv.load_file(str(circuit))).model, str(tmp_path / "m.json"))
    done = _closed_reader(tmp_path, "verify", "c.json", "m.json")
    assert (done.returncode, done.stderr) == (0, "")
    run = ROOT / "tests" / "data" / "run-0.1.0.json"
    done = _closed_reader(tmp_path, "report", str(run), "-o", "page.html")
    assert (done.returncode, done.stderr) == (0, "")
    assert (tmp_path / "page.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_a_full_disk_is_still_an_error_naming_the_stream(tmp_path, circuit):
    """Only a reader that has gone is quiet: ``> /dev/full`` is an error that says where."""
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    with open("/dev/full", "w") as full:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        done = subprocess.run([sys.executable, "-m", "symverify", "info", "c.json"], stdout=full, stderr=subprocess.PIPE,
                              text=True, cwd=tmp_path, env=env, timeout=120)
    assert done.returncode == 3
    assert done.stderr == "symverify: error: standard output: No space left on device\n"

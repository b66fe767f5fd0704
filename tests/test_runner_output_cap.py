"""A proof script's output (``symverify.scripts.tasks.Processes.run``): kept as its first and last
``OUTPUT_BYTES // 2`` bytes of each stream, the rest counted and said, never written to disk (a
``--dir`` script that prints without end filled the disk with its temporary files)."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.scripts import tasks
from symverify.scripts.tasks import Processes, Task, execute

PRINTS = """
import sys
from pathlib import Path
sys.stdout.write("HEAD" + "o" * 300_000 + "TAIL")
sys.stderr.write("first" + "e" * 300_000 + "Traceback (most recent call last):\\n  File \\"x.py\\", line 3\\nValueError: last\\n")
sys.stdout.flush(); sys.stderr.flush()
raise SystemExit(3)
"""


def test_each_output_keeps_its_start_and_end_and_says_what_was_cut(tmp_path, monkeypatch):
    monkeypatch.setattr(tasks, "OUTPUT_BYTES", 1000)
    ran = Processes().run([sys.executable, "-c", PRINTS], tmp_path, 60)
    assert ran.code == 3
    assert ran.stdout.startswith("HEAD") and ran.stdout.endswith("TAIL"), ran.stdout[:80]
    assert ran.stderr.startswith("first") and ran.stderr.endswith("ValueError: last\n")
    assert len(ran.stdout) < 1100 and len(ran.stderr) < 1100
    assert "[... 299008 bytes left out ...]" in ran.stdout
    assert "its standard output was cut: 299008 bytes of 300008 left out (the first 500 and last 500 kept)" in ran.cut
    assert "its standard error was cut:" in ran.cut


def test_nothing_is_cut_below_the_limit(tmp_path):
    ran = Processes().run([sys.executable, "-c", "print('a' * 1000); import sys; print('b', file=sys.stderr)"],
                          tmp_path, 60)
    assert (ran.code, ran.stdout, ran.stderr, ran.cut) == (0, "a" * 1000 + "\n", "b\n", "")


ENDLESS = """
import sys
from pathlib import Path
block = "x" * 65536
while True:
    sys.stdout.write(block)
"""


def test_a_script_printing_without_end_ends_at_its_timeout_with_its_output_cut(tmp_path, monkeypatch):
    """The run's row says the output was cut; at most OUTPUT_BYTES of it were ever held."""
    monkeypatch.setattr(tasks, "OUTPUT_BYTES", 4096)
    script = tmp_path / "loud.py"
    script.write_text(ENDLESS, encoding="utf-8")
    row = execute(Task("loud", source=str(tmp_path), path=str(script), timeout=3.0))
    assert row["status"] == "timeout"
    assert row["error"].startswith("timed out after 3.0 s (its standard output was cut: ")
    assert "(the first 2048 and last 2048 kept)" in row["error"]


def test_a_crash_quotes_the_end_of_its_traceback_and_says_its_output_was_cut(tmp_path, monkeypatch):
    monkeypatch.setattr(tasks, "OUTPUT_BYTES", 1000)
    script = tmp_path / "noisy.py"
    script.write_text(PRINTS, encoding="utf-8")
    row = execute(Task("noisy", source=str(tmp_path), path=str(script), timeout=60.0))
    assert row["status"] == "crashed"
    assert row["error"].startswith("exit code 3: x.py:3: ValueError: last (its standard output was cut: 299008 bytes")
    assert "its standard error was cut:" in row["error"]


@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=3000), keep=st.integers(0, 700))
def test_kept_holds_the_first_and_last_bytes_and_counts_the_rest(data, keep):
    """_Kept: head = the first keep//2 bytes, tail = the last keep - keep//2 of the rest, cut = the others."""
    r, w = os.pipe()
    kept = tasks._Kept(os.fdopen(r, "rb", buffering=0), "output", keep)
    for i in range(0, len(data), 97):
        os.write(w, data[i:i + 97])
    os.close(w)
    kept.finish()
    head = data[:keep // 2]
    tail = data[len(head):][-(keep - keep // 2):] if keep - keep // 2 else b""
    assert bytes(kept.head) == head and bytes(kept.tail) == tail
    assert kept.cut == len(data) - len(head) - len(tail)
    assert (kept.note() == "") == (kept.cut == 0)


EARLY_TRACEBACK = """
import sys
from pathlib import Path
sys.stderr.write('Traceback (most recent call last):\\n  File "x.py", line 3, in <module>\\nValueError: early\\n')
sys.stderr.write("e" * 300_000 + "\\nthe end\\n")
raise SystemExit(1)
"""


def test_a_frame_in_the_kept_start_is_not_taken_for_the_end_s_error(tmp_path, monkeypatch):
    monkeypatch.setattr(tasks, "OUTPUT_BYTES", 1000)
    script = tmp_path / "early.py"
    script.write_text(EARLY_TRACEBACK, encoding="utf-8")
    row = execute(Task("early", source=str(tmp_path), path=str(script), timeout=60.0))
    assert row["status"] == "crashed"
    assert row["error"].startswith("exit code 1: ") and "x.py:3" not in row["error"], row["error"]
    assert "the end" in row["error"] and "its standard error was cut" in row["error"]


FINISHES_LOUDLY = """
import sys
from pathlib import Path
from symverify.scripts.protocol import Instance, ProofResult, script_main


def run(quick=False):
    sys.stdout.write("HEAD" + "o" * 300_000 + "TAIL")
    sys.stdout.flush()
    return ProofResult("loudok", "prints much, then finishes", [Instance.computed("one", True, "a comparison", "exact")])


if __name__ == "__main__":
    raise SystemExit(script_main(run))
"""


def test_a_finished_script_whose_output_was_cut_says_so_in_its_row_the_run_json_and_the_summary(
        tmp_path, monkeypatch, capsys):
    """A script that finished ok never has its output shown: the cut was said only with an error,
    so a run whose ok script printed 300 kB said nothing about the bytes left out of it."""
    from symverify.cli import main
    from symverify.viz.run_format import check_run

    monkeypatch.setattr(tasks, "OUTPUT_BYTES", 1000)
    d = tmp_path / "scripts"
    d.mkdir()
    (d / "loudok.py").write_text(FINISHES_LOUDLY, encoding="utf-8")
    part = execute(Task("loudok", source=str(d), path=str(d / "loudok.py"), timeout=120.0))
    assert (part["status"], part["error"]) == ("done", "")
    assert re.fullmatch(r"its standard output was cut: 29\d{4} bytes of 30\d{4} left out \(the first 500 and last "
                        r"500 kept\)", part["cut"]), part["cut"]
    out = tmp_path / "run.json"
    assert main(["prove", "--dir", str(d), "loudok", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "loudok: output cut: its standard output was cut: 29" in " ".join(printed.split())
    assert "o" * 2000 not in printed  # the output itself is not shown
    run = json.loads(out.read_text(encoding="utf-8"))
    (row,) = run["scripts"]
    assert (row["status"], row["error"]) == ("ok", "")
    assert row["output_cut"] == part["cut"]
    check_run(run, "run")  # the format reads it back


def test_a_row_of_parts_names_each_part_whose_output_was_cut():
    from symverify.scripts.runner import Script, merge

    result = {"name": "s", "title": "t", "ok": True,
              "instances": [{"name": "one", "verdict": "proved", "method": "exact", "kind": "computed",
                             "basis": "a comparison", "ok": True, "case": 0}]}
    parts = [{"status": "done", "result": result, "error": "", "seconds": 0.0, "cases": 1, "part": "shard 1/2",
              "cut": "its standard output was cut: 5 bytes of 10 left out"},
             {"status": "done", "result": {**result, "instances": [{**result["instances"][0], "name": "two",
                                                                    "case": 1}]},
              "error": "", "seconds": 0.0, "cases": 1, "part": "shard 2/2"}]
    row = merge(Script("s", Path("s.py"), "d"), parts)
    assert row.status == "ok", row.error
    assert row.output_cut == "part shard 1/2: its standard output was cut: 5 bytes of 10 left out"
    assert row.to_json()["output_cut"] == row.output_cut
    assert "output_cut" not in merge(Script("s", Path("s.py"), "d"), parts[1:]).to_json()

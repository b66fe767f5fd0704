"""Attacks on user proof scripts across the process boundary: broken scripts (syntax errors, raising
at import, never calling the protocol, garbage output, early exits, sleeping past the timeout,
forking, writing another script's result), shards that do not agree (``-j 2`` against ``-j 1``),
odd file names and directories, and sweep grids.

Every bad input ends in one line: exit 3 for a usage error, a ``crashed`` row naming the cause for a
broken script; ``-j 2`` gives the rows of ``-j 1``. The in-process tests drive ``script_main`` and
``merge`` directly; a few tests start real script processes (tiny scripts, no circuits).
"""

from __future__ import annotations

import json
import re
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.cli import main
from symverify.errors import UsageError
from symverify.scripts.protocol import SWEEP_ENV, Instance, ProofResult, each, parse_indices, script_main
from symverify.scripts.runner import Script, available, merge, run_scripts
from symverify.scripts.tasks import Task, execute

HEAD = "from symverify.scripts.protocol import Instance, ProofResult, each, script_main, sweep_grid\n"
TAIL = '\nif __name__ == "__main__":\n    raise SystemExit(script_main(run))\n'


def _script(d: Path, name: str, body: str, head: str = HEAD, tail: str = TAIL) -> Path:
    path = d / f"{name}.py"
    path.write_text(head + textwrap.dedent(body) + tail, encoding="utf-8")
    return path


def _rows(summary: Any) -> dict[str, Any]:
    return {o.name: o for o in summary.outcomes}


def _names(row: Any) -> list[str]:
    return [i["name"] for i in row.instances()]


# ---- in process: how a part of a run tags its instances (protocol.script_main) --------------------------------


def _part(run: Any, *argv: str) -> dict[str, Any]:
    """What ``execute`` returns for ``run`` run with ``argv`` (in this process)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        code = script_main(run, ["--json", str(out), *argv])
        data = json.loads(out.read_text(encoding="utf-8"))
    assert code in (0, 1)
    assert (data.pop("format"), data.pop("version")) == ("symverify.proof-result", 2)  # as execute reads them
    met = data.pop("cases", None)
    return {"status": "done", "result": data, "error": "", "seconds": 0.0, **({"cases": met} if met is not None else {})}


def _late(quick: bool = False) -> ProofResult:
    """Instances made in the cases, handed to the result after the loop (case 3 is false)."""
    made = [Instance.computed(f"case {k}", k != 3, "a comparison", "exact") for k in each(range(4))]
    return ProofResult("late", "made in cases, added at the end", made)


def test_instances_handed_over_after_the_loop_keep_their_case_in_every_shard():
    """ProofResult(..., instances) after the loop: shard 1 dropped the instances of its cases as if
    made outside each(), so -j 2 merged cases 0 and 2 only, an ok row where -j 1 fails (case 3)."""
    one = merge(Script("late", Path("late.py"), "d"), [_part(_late)])
    two = merge(Script("late", Path("late.py"), "d"), [_part(_late, "--shard", "0/2"), _part(_late, "--shard", "1/2")])
    assert _names(one) == _names(two) == [f"case {k}" for k in range(4)]
    assert one.status == two.status == "failed"


def _assigned(quick: bool = False) -> ProofResult:
    r = ProofResult("assigned", "a list assigned to instances")
    made = [Instance.computed("setup", True, "a comparison", "exact")]
    made += [Instance.computed(f"case {k}", True, "a comparison", "exact") for k in each(range(4))]
    r.instances = made
    return r


def test_a_list_assigned_to_the_instances_is_tagged():
    """r.instances = [...]: a plain list was written untagged (every instance 'outside each()'), so
    shard 1 repeated the setup instance and the merge put case 1 before case 0. Every part keeps
    the instances made outside each(); the merge keeps one copy."""
    shard1 = _part(_assigned, "--shard", "1/2")
    assert [(i["name"], i["case"]) for i in shard1["result"]["instances"]] == [("setup", None), ("case 1", 1),
                                                                               ("case 3", 3)]
    two = merge(Script("assigned", Path("a.py"), "d"), [_part(_assigned, "--shard", "0/2"), shard1])
    assert _names(two) == _names(merge(Script("assigned", Path("a.py"), "d"), [_part(_assigned)]))
    assert _names(two) == ["setup"] + [f"case {k}" for k in range(4)]


def _reordered(quick: bool = False) -> ProofResult:
    r = ProofResult("reordered", "instances reversed")
    for k in each(range(4)):
        r.instances.append(Instance.computed(f"case {k}", True, "a comparison", "exact"))
    r.instances.reverse()
    return r


@pytest.mark.parametrize("argv", [(), ("--shard", "1/2"), ("--cases", "0,2")])
def test_instances_out_of_the_order_of_their_cases_are_refused_in_every_run(argv):
    """A reordered list cannot be merged back from shards into the order of one process: it is
    refused whole or sharded alike (before, -j 1 and -j 2 gave different orders silently)."""
    with pytest.raises(UsageError, match=r"made in case \d\) is added after .* in the order of the cases"):
        _part(_reordered, *argv)


def _nested(quick: bool = False) -> ProofResult:
    r = ProofResult("nested", "each() in each()")
    for a in each(range(3)):
        for b in each(range(2)):
            r.instances.append(Instance.computed(f"{a}.{b}", True, "a comparison", "exact"))
    return r


@pytest.mark.parametrize("argv", [(), ("--shard", "0/2")])
def test_nested_loops_of_each_are_refused_in_every_run(argv):
    """each() inside each(): shard 1 skipped outer case 0 and so never met its inner cases, the
    shards numbered the cases differently (7 against 5), and -j 2 crashed where -j 1 was ok."""
    with pytest.raises(UsageError, match=r"each\(\) inside the handling of case 0 of another each\(\)"):
        _part(_nested, *argv)


def test_a_part_says_how_many_cases_it_met():
    """script_main --shard: the part's JSON carries the number of cases it met, which the runner
    compares across shards; a whole run writes none (its JSON is unchanged)."""
    assert _part(_late, "--shard", "1/3")["cases"] == 4
    assert "cases" not in _part(_late)


def _listed(quick: bool = False) -> ProofResult:
    """The cases taken as a list first: every instance is made outside each() (case 3 is false)."""
    r = ProofResult("listed", "instances made after list(each())")
    for k in list(each(range(4))):
        r.instances.append(Instance.computed(f"case {k}", k != 3, "a comparison", "exact"))
    return r


def _summary(quick: bool = False) -> ProofResult:
    """A summary of the cases made after the loop (case 3 is bad, though its own instance is proved)."""
    r, bad = ProofResult("summary", "a summary instance"), []
    for k in each(range(4)):
        bad += [k] if k == 3 else []
        r.instances.append(Instance.computed(f"case {k}", True, "a comparison", "exact"))
    r.instances.append(Instance.computed("no bad case", not bad, "a comparison", "exact"))
    return r


def _sliced(quick: bool = False) -> ProofResult:
    """An instance made outside each() put in by slice assignment (no append)."""
    r = ProofResult("sliced", "slice assignment")
    setup = Instance.computed("setup", True, "a comparison", "exact")
    for k in each(range(4)):
        r.instances.append(Instance.computed(f"case {k}", True, "a comparison", "exact"))
    r.instances[:0] = [setup]
    return r


@pytest.mark.parametrize("run", [_listed, _summary])
@pytest.mark.parametrize("argv", [("--shard", "{k}/2"), ("--cases", "{k},{k2}")])
def test_instances_outside_each_that_depend_on_the_parts_cases_crash_the_row(run, argv):
    """Instances made outside each() came only from the part running case 0: after list(each()) it
    kept cases 0 and 2 (refuted case 3 dropped), a summary after the loop saw cases 0 and 2 only;
    both rows were ok where -j 1 fails. Every part now keeps them and parts that disagree crash."""
    script = Script(run.__name__, Path("x.py"), "d", shardable=True)
    assert merge(script, [_part(run)]).status == "failed"
    two = merge(script, [_part(run, argv[0], argv[1].format(k=k, k2=k + 2)) for k in (1, 0)])
    assert two.status == "crashed"
    assert "made different instances outside each()" in two.error and "must not depend on the cases" in two.error


def test_an_instance_put_in_by_slice_assignment_is_merged_once():
    """r.instances[:0] = [setup]: shard 1 did not filter it (no append), so -j 2 showed it twice."""
    script = Script("sliced", Path("x.py"), "d", shardable=True)
    two = merge(script, [_part(_sliced, "--shard", "1/2"), _part(_sliced, "--shard", "0/2")])
    assert _names(two) == _names(merge(script, [_part(_sliced)])) == ["setup"] + [f"case {k}" for k in range(4)]


PLAN = st.lists(st.one_of(st.tuples(st.just("outside"), st.integers(0, 2)),
                          st.tuples(st.sampled_from(["loop", "listed", "raising"]), st.lists(st.integers(0, 2), max_size=4)),
                          st.tuples(st.just("summary"), st.just(0))), max_size=4)


@settings(max_examples=60, deadline=None)
@given(plan=PLAN, how=st.sampled_from(["append", "given", "assigned", "sliced"]), k=st.integers(2, 3))
def test_shards_merge_into_the_rows_of_one_process(plan, how, k):
    """Differential: any mix of loops and instances outside them, added one by one, handed to
    ProofResult, assigned as a list or by slice; the merged shards (and case groups) are the
    one-process row. Instances that depend on the cases a part ran (made after ``list(each())``, a
    summary of the cases after a loop, or one made where a case's exception is caught after its
    loop) may instead crash the row, never change it. A case with 2 instances has its second
    refuted (and raises in a ``raising`` loop: a loop left in a case is a UsageError in one process and
    in the part that runs that case)."""
    def run(quick: bool = False) -> ProofResult:
        made: list[Instance] = []
        bad: list[int] = []
        for at, (step, arg) in enumerate(plan):
            if step == "outside":
                made += [Instance.computed(f"out {at}.{j}", True, "c", "exact") for j in range(arg)]
            elif step == "summary":
                made.append(Instance.computed(f"summary {at}", not bad, "c", "exact"))
            elif step == "raising":
                try:
                    for case in each(range(len(arg))):
                        if arg[case] == 2:
                            raise ArithmeticError(case)
                        made += [Instance.computed(f"in {at}.{case}.{j}", True, "c", "exact") for j in range(arg[case])]
                except ArithmeticError:
                    made.append(Instance.computed(f"raised {at}", False, "c", "exact"))
            else:
                cases = each(range(len(arg))) if step == "loop" else iter(list(each(range(len(arg)))))
                for case in cases:
                    bad += [case] if arg[case] == 2 else []
                    made += [Instance.computed(f"in {at}.{case}.{j}", arg[case] != 2 or j == 0, "c", "exact")
                             for j in range(arg[case])]
        if how == "given":
            return ProofResult("s", "t", made)
        r = ProofResult("s", "t")
        if how == "assigned":
            r.instances = made
        elif how == "sliced":
            r.instances[:] = made
        else:
            for inst in made:
                r.instances.append(inst)
        return r

    script = Script("s", Path("s.py"), "d", shardable=True)
    try:
        whole = merge(script, [_part(run)])
    except UsageError as e:  # a case's exception caught outside its loop: every run refuses it (a crashed row)
        assert "the loop of each() was left in case" in str(e) and any(step == "raising" for step, _ in plan)
        whole = None
    dependent = any(step in ("listed", "summary", "raising") for step, _ in plan)

    def same(argvs: list[str]) -> None:
        try:
            row = merge(script, [_part(run, argv) for argv in argvs])
        except SystemExit:  # --cases: a case the part never met (its loop raised first): exit 2, a crashed row
            assert dependent
            return
        except UsageError as e:  # the part that runs the raising case refuses it, as the one process does
            assert whole is None and "the loop of each() was left in case" in str(e)
            return
        assert whole is not None, "one process left a loop of each() in a case; some part must too"
        if dependent and row.status == "crashed":
            assert "made different instances outside each()" in row.error or "met different numbers" in row.error
            return
        assert (_names(row), row.status) == (_names(whole), whole.status)

    same([f"--shard={i}/{k}" for i in reversed(range(k))])
    n = sum(len(arg) for step, arg in plan if step not in ("outside", "summary"))  # the Dask backend: case groups by --cases
    groups = [",".join(map(str, range(g, n, k))) for g in range(k) if range(g, n, k)]
    if groups:
        same([f"--cases={g}" for g in reversed(groups)])


# ---- in process: the index lists of --cases and of sweep grids ------------------------------------------------


@pytest.mark.parametrize("text", ["1_0", "+3", "٣", "0x10", " ", "1 2", "3-", "1-2-3", "²"])
def test_indices_are_ascii_digits_only(text):
    """parse_indices: int() reads '1_0' as 10, '+3' as 3 and '٣' (Arabic-Indic three) as 3; a grid
    or --cases list of such text was silently read as another number."""
    with pytest.raises(UsageError, match=r"--seeds: expected non-negative integers and ranges like 0,3,5-9 "):
        parse_indices(text, "--seeds")


def test_indices_of_more_digits_than_int_reads_are_a_usage_error():
    with pytest.raises(UsageError, match="--widths: a number of 5,000 digits"):
        parse_indices("9" * 5000, "--widths")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 5)), min_size=1, max_size=6))
def test_indices_round_trip(ranges):
    """Differential against the set the ranges name, spaces around numbers allowed."""
    text = ", ".join(f"{a} - {a + n}" if n else f" {a}" for a, n in ranges)
    assert parse_indices(text) == sorted({v for a, n in ranges for v in range(a, a + n + 1)})


# ---- real processes: broken scripts give one crashed row each ----------------------------------------------------


BROKEN = {
    "syntax_err": ("TITLE = 'x'\ndef run(:\n", "", ""),
    "import_err": ("TITLE = 'x'\nraise ValueError('bad at import')\n", "", ""),
    "no_protocol": ("TITLE = 'x'\nprint('hello')\n", "", ""),
    "noisy": (HEAD, """
        import sys
        TITLE = 'noisy'
        def run(quick=False):
            print('garbage \\x1b[31m {not json')
            sys.stderr.write('E' * 3_000_000)
            r = ProofResult('noisy', TITLE)
            r.instances.append(Instance.computed('x', True, 'a comparison', 'exact'))
            return r
        """, TAIL),
    "exits": (HEAD, "import sys\nTITLE = 'x'\ndef run(quick=False):\n    sys.exit(0)\n", TAIL),
    "os_exits": (HEAD, "import os\nTITLE = 'x'\ndef run(quick=False):\n    os._exit(0)\n", TAIL),
    "sleeper": (HEAD, "import time\nTITLE = 'x'\ndef run(quick=False):\n    time.sleep(60)\n", TAIL),
    "forker": (HEAD, """
        import subprocess, sys
        TITLE = 'x'
        def run(quick=False):
            subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])
            r = ProofResult('forker', TITLE)
            r.instances.append(Instance.computed('x', True, 'a comparison', 'exact'))
            return r
        """, TAIL),
    "impostor": (HEAD, """
        TITLE = 'x'
        def run(quick=False):
            r = ProofResult('noisy', 'another script')
            r.instances.append(Instance.computed('x', True, 'a comparison', 'exact'))
            return r
        """, TAIL),
}


def test_broken_scripts_are_one_crashed_row_each_naming_the_cause(tmp_path):
    """One run of every broken script: each row says why in one line; the result of another script's
    name ('impostor' writing 'noisy') was taken as its own, and an early sys.exit(0) was blamed on a
    missing main guard."""
    for name, (head, body, tail) in BROKEN.items():
        _script(tmp_path, name, body, head, tail)
    summary = run_scripts(available([tmp_path]), list(BROKEN), jobs=2, timeout=3)
    rows = _rows(summary)
    expected = {
        "syntax_err": ("crashed", "exit code 1: syntax_err.py:2: SyntaxError: "),
        "import_err": ("crashed", "exit code 1: import_err.py:2: ValueError: bad at import"),
        "no_protocol": ("crashed", "exit code 0 without a result: the script exited before script_main wrote one"),
        "noisy": ("ok", ""),
        "exits": ("crashed", "exit code 0 without a result: the script exited before script_main wrote one "
                             "(sys.exit or os._exit in run)"),
        "os_exits": ("crashed", "exit code 0 without a result: the script exited before script_main wrote one"),
        "sleeper": ("timeout", "timed out after 3 s"),
        "forker": ("ok", ""),
        "impostor": ("crashed", "result JSON: name: expected 'impostor' (the script's own name: "
                                "ProofResult('impostor', TITLE)), found 'noisy'"),
    }
    for name, (status, error) in expected.items():
        assert (rows[name].status, rows[name].error[:len(error)]) == (status, error), name
        assert "\n" not in rows[name].error
    assert rows["impostor"].result is None and not summary.ok


def test_a_process_that_cannot_start_is_a_crashed_row(tmp_path):
    """An environment string over the system's limit (E2BIG): Popen's OSError escaped execute and
    ended the whole run with 'python: Argument list too long'."""
    path = _script(tmp_path, "big_env", "TITLE = 'x'\n")
    answer = execute(Task("big_env", source="d", path=str(path), env=((SWEEP_ENV, "[" + "1," * 100_000 + "1]"),)))
    assert answer["status"] == "crashed"
    assert answer["error"].startswith("could not start the script's process: Argument list too long (its command line")


FORGE = """
import os, sys
TITLE = "writes its own result file"
SHARDABLE = True
out = sys.argv[sys.argv.index("--json") + 1]
INSTANCE = ('{"name": "x", "verdict": "proved", "kind": "computed", "method": "exact", "basis": "b", '
            '"resources": {}, "bounds": {}, "over_bound": [], "ok": true, "seconds": 0, "case": 0}')
"""

FORGED = {
    "nan": ("open(out, 'w').write('{\"format\": \"symverify.proof-result\", \"version\": 1, \"name\": \"nan\", \"title\": \"t\", \"instances\": ['"
            " + INSTANCE.replace('\"resources\": {}', '\"resources\": {\"layers\": NaN}') + ']}')",
            "unreadable result JSON: NaN is not a JSON number"),
    "repeated": ("open(out, 'w').write('{\"format\": \"symverify.proof-result\", \"version\": 1, \"name\": \"repeated\", \"title\": \"t\", \"instances\": ['"
                 " + INSTANCE.replace('\"verdict\"', '\"verdict\": \"refuted\", \"verdict\"') + ']}')",
                 "unreadable result JSON: duplicate key 'verdict'"),
    "text_seconds": ("open(out, 'w').write('{\"format\": \"symverify.proof-result\", \"version\": 1, \"name\": \"text_seconds\", \"title\": \"t\", \"seconds\": "
                     "\"abc\", \"instances\": [' + INSTANCE + ']}')",
                     'result JSON: seconds: expected a number, found "abc"'),
    "list_title": ("open(out, 'w').write('{\"format\": \"symverify.proof-result\", \"version\": 1, \"name\": \"list_title\", \"title\": [1], \"instances\": [' + INSTANCE"
                   " + ']}')", "result JSON: title: expected text, found list"),
    "fifo": ("os.mkfifo(out)", "result JSON: expected a regular file of at most 1073741824 bytes, found a special file"),
    "zeros": ("os.symlink('/dev/zero', out)",
              "result JSON: expected a regular file of at most 1073741824 bytes, found a symbolic link"),
}


def test_result_files_a_script_writes_itself_are_read_strictly(tmp_path):
    """A script controls its result path: NaN (written to the run JSON, which --golden then refused
    to read back), a repeated key (the last one counted), seconds as text (-j 2 ended in an
    internal error summing them), a FIFO (the runner blocked forever, even on SIGTERM) and a link
    to /dev/zero (read until memory ran out) are crashed rows."""
    for name, (body, _) in FORGED.items():
        (tmp_path / f"{name}.py").write_text(FORGE + body + "\n", encoding="utf-8")
    rows = _rows(run_scripts(available([tmp_path]), list(FORGED), jobs=2, timeout=20))
    for name, (_, error) in FORGED.items():
        assert (rows[name].status, rows[name].error[:len(error)]) == ("crashed", error), name


def test_the_result_file_limit_is_read_at_each_run(tmp_path, monkeypatch):
    """The size limit on a script's result file is ``limits.MAX_FILE_BYTES`` as it is when the
    script ends (it was copied at import: lowering the limit left the first check at 2^30)."""
    from symverify.ir import limits

    (tmp_path / "wordy.py").write_text(FORGE + "open(out, 'w').write('{\"format\": \"symverify.proof-result\", \"version\": 1, \"name\": \"wordy\", \"title\": \"t\", "
                                       "\"instances\": [' + INSTANCE + ']}')\n", encoding="utf-8")
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", 64)
    answer = execute(available([tmp_path])["wordy"].task(False))
    assert answer["status"] == "crashed"
    assert re.fullmatch(r"result JSON: expected a regular file of at most 64 bytes, found \d{3} bytes", answer["error"])


def test_a_shipped_directory_keeps_every_byte_and_skips_what_is_no_file(tmp_path):
    """Script.task(shipped=True) (Dask runs): a Latin-1 support module made ship() raise
    UnicodeDecodeError ('internal error' on the command line), a directory named x.py
    IsADirectoryError; the module now arrives byte for byte and the script imports it."""
    (tmp_path / "_latin.py").write_bytes(b'# -*- coding: latin-1 -*-\nX = "\xe9"\n')
    (tmp_path / "not_a_file.py").mkdir()
    _script(tmp_path, "uses_latin", """
        import sys
        sys.path.insert(0, __import__('os').path.dirname(__file__))
        from _latin import X
        TITLE = 'imports a Latin-1 module'
        def run(quick=False):
            r = ProofResult('uses_latin', TITLE)
            r.instances.append(Instance.computed('module read as written', X == '\\xe9', 'a comparison', 'exact'))
            return r
        """)
    task = available([tmp_path])["uses_latin"].task(False, shipped=True)
    assert [name for name, _ in task.files] == ["_latin.py", "uses_latin.py"]
    answer = execute(task)
    assert answer["status"] == "done", answer["error"]
    assert answer["result"]["ok"] is True


SHARDS = {
    "late": """
        TITLE = 'late'
        SHARDABLE = True
        def run(quick=False):
            made = [Instance.computed(f'case {k}', k != 3, 'a comparison', 'exact') for k in each(range(4))]
            return ProofResult('late', TITLE, made)
        """,
    "hashed": """
        TITLE = 'cases from a set of strings'
        SHARDABLE = True
        def run(quick=False):
            r = ProofResult('hashed', TITLE)
            for k in each({'alpha', 'beta', 'gamma', 'delta', 'eps', 'zeta', 'eta', 'theta'}):
                r.instances.append(Instance.computed(f'case {k}', k != 'beta', 'a comparison', 'exact'))
            return r
        """,
    "by_shard": """
        import sys
        TITLE = 'more cases in shard 1'
        SHARDABLE = True
        def run(quick=False):
            r = ProofResult('by_shard', TITLE)
            n = 5 if any(a.startswith('--shard=1/') for a in sys.argv) else 4
            for k in each(range(n)):
                r.instances.append(Instance.computed(f'case {k}', True, 'a comparison', 'exact'))
            return r
        """,
}


def test_two_jobs_give_the_rows_of_one_or_say_why_not(tmp_path):
    """-j 2 against -j 1: instances handed over after the loop (shard 1 dropped them: an ok row for a
    false claim), cases from a set of strings (each process had its own hash seed: a case run twice,
    another never), and a script meeting more cases in one shard (merged silently)."""
    for name, body in SHARDS.items():
        _script(tmp_path, name, body)
    scripts = available([tmp_path])
    one = _rows(run_scripts(scripts, list(SHARDS), jobs=1))
    two = {}  # each alone: -j 2 splits a script into shards only when it is more than half the run
    for name in SHARDS:
        two.update(_rows(run_scripts(scripts, [name], jobs=2)))
    for name in ("late", "hashed"):
        assert _names(one[name]) == _names(two[name]) and one[name].status == two[name].status == "failed", name
        assert len(set(_names(two[name]))) == len(_names(two[name]))
    assert one["by_shard"].status == "ok"
    assert two["by_shard"].status == "crashed" and two["by_shard"].error.startswith(
        "the shards met different numbers of cases (shard 0/2: 4, shard 1/2: 5): a SHARDABLE script must meet the "
        "same cases")


def test_parts_that_did_not_meet_the_counted_cases_are_not_merged():
    """The Dask backend counts a script's cases in one task, then runs groups of them: a group
    that met another number of cases (a process-dependent script) must not be merged silently."""
    from symverify.scripts.runner import Script, merge

    sc = Script("s", Path("s.py"), "builtin", "T")
    inst = {"name": "x", "verdict": "proved", "method": "exact", "kind": "prover", "ok": True, "case": 0,
            "digests": [{"lhs": "sha256:" + "0" * 64, "rhs": "sha256:" + "1" * 64}]}

    def part(label: str, met: int) -> dict[str, Any]:
        return {"status": "done", "seconds": 0.1, "error": "", "part": label, "cases": met,
                "result": {"name": "s", "title": "T", "ok": True, "instances": [inst]}}

    same = [part("cases 0,2", 4), part("cases 1,3", 4)]
    assert merge(sc, same, cases=4).status == "ok" and merge(sc, same).status == "ok"
    row = merge(sc, same, cases=5)
    assert row.status == "crashed" and row.error.startswith(
        "the shards met different numbers of cases (the count: 5, cases 0,2: 4, cases 1,3: 4)"), row.error
    assert merge(sc, [part("shard 0/2", 4), part("shard 1/2", 5)]).status == "crashed"


# ---- the command line: directories, paths and sweep grids ---------------------------------------------------------


GOOD = """
    TITLE = 'fine'
    def run(quick=False):
        r = ProofResult(__import__('pathlib').Path(__file__).stem, TITLE)
        r.instances.append(Instance.computed('x', True, 'a comparison', 'exact'))
        return r
    """


def _cli(capsys: Any, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_directory_given_twice_counts_once(tmp_path, capsys):
    """--dir D --dir D/: the scripts of D clashed with themselves ('has the name of a script in D')."""
    _script(tmp_path, "mine", GOOD)
    code, out, err = _cli(capsys, "prove", "--dir", str(tmp_path), "--dir", f"{tmp_path}/", "--dir", str(tmp_path / "."),
                          "--list")
    assert (code, out.split()[:2], err) == (0, ["mine", tmp_path.name], "")


def test_a_symlinked_script_is_found_in_its_own_directory(tmp_path, capsys):
    """prove A/good.py B/link.py with B/link.py → A/good.py: B was never added (the link was resolved
    to A, already seen), so 'link' was an unknown script."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    _script(a, "good", GOOD)
    (b / "link.py").symlink_to(a / "good.py")
    code, out, err = _cli(capsys, "prove", str(a / "good.py"), str(b / "link.py"), "--list")
    assert code == 0 and [line.split()[0] for line in out.splitlines()] == ["good", "link"], err


@pytest.mark.parametrize("name", ["ünï", "with space", "da-sh", "do.t", "1digit", "class"])
def test_odd_file_names_run_by_path(tmp_path, capsys, name):
    """File names that are no Python identifiers still run as scripts (by path, never imported)."""
    _script(tmp_path, name, GOOD)
    code, out, err = _cli(capsys, "prove", str(tmp_path / f"{name}.py"), "--json", "-")
    assert code == 0, err
    assert [s["name"] for s in json.loads(out)["scripts"]] == [name]


def test_a_support_module_path_is_not_a_script(tmp_path, capsys):
    """prove D/_support.py: discovery skips '_' files, so this said 'unknown proof script(s) _support'."""
    _script(tmp_path, "_support", GOOD)
    code, _, err = _cli(capsys, "prove", str(tmp_path / "_support.py"))
    assert code == 3 and err.strip().endswith("a file whose name starts with '_' is a support module of its "
                                              "directory, never run as a script (rename it)")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("where", ["missing", "file"])
def test_a_directory_that_is_missing_or_a_file(tmp_path, capsys, where):
    target = tmp_path / "nowhere"
    if where == "file":
        target.write_text("x", encoding="utf-8")
    code, _, err = _cli(capsys, "prove", "--dir", str(target), "--list")
    assert code == 3 and ("does not exist" if where == "missing" else "found a file") in err


def test_a_name_of_a_builtin_is_refused(tmp_path, capsys):
    _script(tmp_path, "primitives", GOOD)
    code, _, err = _cli(capsys, "prove", "--dir", str(tmp_path), "--list")
    assert code == 3 and "proof script primitives in" in err and "has the name of a built-in script" in err


def test_a_directory_without_scripts_is_a_usage_error(tmp_path, capsys):
    """prove --dir D with only support modules in D printed an empty table and exited 1."""
    _script(tmp_path, "_support", GOOD)
    code, out, err = _cli(capsys, "prove", "--dir", str(tmp_path))
    assert (code, out) == (3, "")
    assert err.strip().endswith("expected proof scripts NAME.py (names starting with '_' are support modules), found none")


def test_a_script_named_all_is_refused(tmp_path, capsys):
    """all.py could never run alone: `prove --dir D all` ran every script, built-in ones included."""
    _script(tmp_path, "all", GOOD)
    code, _, err = _cli(capsys, "prove", "--dir", str(tmp_path), "all", "--list")
    assert code == 3 and err.strip().endswith("'all' on the command line means every script; rename it")


@pytest.fixture
def no_run(monkeypatch):
    """symverify sweep never gets to run a script in these tests."""
    import symverify.scripts.runner as runner

    def refuse(*a: Any, **k: Any) -> Any:
        raise AssertionError("the sweep ran")

    monkeypatch.setattr(runner, "run_scripts", refuse)


@pytest.mark.parametrize(("flag", "text", "message"), [
    ("--seeds", "5-2", "ranges A-B with A ≤ B; found '5-2'"),
    ("--seeds", "0-10**9", "found '0-10**9'"),
    ("--seeds", "0-1000000000", "names more than 10^6 values"),
    ("--widths", ",", "found ','"),
    ("--widths", "1,,2", "found '1,,2'"),
    ("--depths", "-1", "found '-1'"),
    ("--widths", "1_0", "(digits 0-9); found '1_0'"),
    ("--seeds", "+3", "(digits 0-9); found '+3'"),
    ("--widths", "٣", "(digits 0-9); found '٣'"),
    ("--widths", "0", "expected positive integers"),
    ("--compilers", "dense,", "expected kaleidoscope and/or dense"),
    ("--seeds", "0-40000", "expected a grid that fits in the environment variable SYMVERIFY_SWEEP"),
])
def test_bad_sweep_grids_are_usage_errors(capsys, no_run, flag, text, message):
    """Each bad grid is one line and exit 3 before any script runs: '1_0', '+3' and '٣' were read as
    10, 3 and 3, and a grid of 40001 seeds failed to start the process ('Argument list too long')."""
    code, _, err = _cli(capsys, "sweep", "thm_h21", flag, text)
    assert code == 3 and message in err and len(err.strip().splitlines()) == 1, err


def test_a_family_that_is_not_a_sweep(capsys, no_run):
    code, _, err = _cli(capsys, "sweep", "primitives")
    assert code == 3 and "no sweep 'primitives'; available: thm_h21" in err


def test_a_sweep_variable_left_in_the_shell_does_not_reach_prove(tmp_path, capsys, monkeypatch):
    """SYMVERIFY_SWEEP set by hand (malformed here) crashed every sweep script of `symverify prove`,
    and a well-formed one silently replaced their default grids."""
    _script(tmp_path, "tiny_sweep", """
        TITLE = 'tiny'
        SWEEP = True
        SHARDABLE = True
        def run(quick=False):
            r = ProofResult('tiny_sweep', TITLE)
            for s in each(sweep_grid({'seeds': [0, 1]})['seeds']):
                r.instances.append(Instance.computed(f'seed {s}', True, 'a comparison', 'exact'))
            return r
        """)
    monkeypatch.setenv(SWEEP_ENV, "{not json")
    code, out, err = _cli(capsys, "prove", "--dir", str(tmp_path), "-j", "1", "--json", "-")
    assert code == 0, err
    assert [i["name"] for i in json.loads(out)["scripts"][0]["result"]["instances"]] == ["seed 0", "seed 1"]
    monkeypatch.setenv(SWEEP_ENV, '{"seeds": [7]}')
    code, out, err = _cli(capsys, "sweep", "tiny", "--dir", str(tmp_path), "-j", "1", "--seeds", "3", "--json", "-")
    assert code == 0 and [i["name"] for i in json.loads(out)["scripts"][0]["result"]["instances"]] == ["seed 3"]



@pytest.mark.parametrize(("text", "message"), [
    ('{"seeds": [0], "seeds": [1]}', "duplicate key 'seeds'"),
    ('{"seeds": [NaN]}', "NaN is not a JSON number"),
    ("[" * 100_000 + "]" * 100_000, "JSON nested 100000 levels deep, more than symverify.ir.limits.MAX_JSON_DEPTH"),
])
def test_a_sweep_grid_set_by_hand_is_strict_json(monkeypatch, text, message):
    """sweep_grid read a repeated key as its last value, NaN as a float, and deep nesting ended in a
    RecursionError traceback (a script run by hand with SYMVERIFY_SWEEP set)."""
    from symverify.scripts.protocol import sweep_grid

    monkeypatch.setenv(SWEEP_ENV, text)
    with pytest.raises(UsageError, match=r"SYMVERIFY_SWEEP: expected a JSON object, found .*" + re.escape(message)):
        sweep_grid({"seeds": [0]})


def test_a_real_sweep_gives_the_same_run_with_one_or_three_processes(tmp_path, capsys):
    """thm_h21 on a tiny grid with repeated and unordered values: -j 3 writes the run JSON of -j 1,
    one instance per distinct grid point, in grid order."""
    argv = ["sweep", "thm_h21", "--widths", " 3,1,3", "--depths", "1", "--seeds", "0", "--compilers",
            "dense, dense,kaleidoscope"]
    assert _cli(capsys, *argv, "-j", "1", "--json", str(tmp_path / "one.json"))[0] == 0
    assert _cli(capsys, *argv, "-j", "3", "--json", str(tmp_path / "three.json"))[0] == 0
    one = (tmp_path / "one.json").read_text(encoding="utf-8")
    assert one == (tmp_path / "three.json").read_text(encoding="utf-8")
    assert [i["name"] for i in json.loads(one)["scripts"][0]["result"]["instances"]] == [
        f"w={w} Δ=1 seed=0 {c}" for w in (1, 3) for c in ("dense", "kaleidoscope")]


def test_a_scripts_control_characters_never_reach_the_terminal(tmp_path, capsys):
    """A script's error text, instance names and details are shown with their control characters
    written as \\xNN (an ESC sequence clearing the screen or colouring the rest of the log used
    to be printed raw)."""
    _script(tmp_path, "loud", """
        TITLE = 'loud\\x1b[2J'
        def run(quick=False):
            raise RuntimeError('boom\\x1b[2J\\x1b[31m')
        """)
    _script(tmp_path, "sly", """
        TITLE = 'sly'
        def run(quick=False):
            r = ProofResult('sly', TITLE)
            r.instances.append(Instance.computed('x\\x1b[8m', False, 'a comparison\\x07', 'exact', detail='d\\x9b1m'))
            return r
        """)
    code, out, err = _cli(capsys, "prove", "--dir", str(tmp_path), "loud", "sly", "--details", "-j", "1")
    assert code == 1
    shown = out + err
    assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown, repr(shown)
    assert "boom\\x1b[2J" in shown and "x\\x1b[8m" in shown and "d\\x9b1m" in shown, shown


def test_junit_dash_is_standard_output_and_golden_dash_is_refused(tmp_path, capsys, monkeypatch):
    """--junit - wrote a file named '-' in the working directory (--json - is standard output); it is
    standard output too (the table goes to stderr), one of the two at most; --golden - is refused."""
    import xml.etree.ElementTree as ET

    monkeypatch.chdir(tmp_path)
    _script(tmp_path, "good", GOOD)
    code, out, err = _cli(capsys, "prove", str(tmp_path / "good.py"), "--junit", "-")
    assert code == 0, err
    assert not (tmp_path / "-").exists()
    root = ET.fromstring(out)
    assert root.tag == "testsuites" and [s.get("name") for s in root] == ["good"]
    assert "good" in err  # the table, on stderr
    code, _, err = _cli(capsys, "prove", str(tmp_path / "good.py"), "--junit", "-", "--json", "-")
    assert code == 3 and "found both" in err
    code, _, err = _cli(capsys, "prove", str(tmp_path / "good.py"), "--golden", "-", "--update-golden")
    assert code == 3 and "--golden: expected a file path, found '-'" in err
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize("how", ["script", "prove", "prove-json-dash"])
def test_a_reader_gone_ends_neither_the_run_nor_its_files(tmp_path, how):
    """``python NAME.py | head`` ended in a BrokenPipeError traceback (exit 1, a failed run's code);
    ``symverify prove … | head`` exited 1 quietly (rich's default) before writing --json and --junit.
    With the pipe's reader gone before anything is printed, the run writes its files and exits with
    its verdict's code (0), no traceback."""
    import subprocess
    import sys

    path = _script(tmp_path, "good", GOOD)
    out = tmp_path / "out.json"
    cli = [sys.executable, "-c", "import sys; from symverify.cli import main; sys.exit(main(sys.argv[1:]))"]
    cmd = {"script": [sys.executable, str(path), "--json", str(out)],
           "prove": [*cli, "prove", str(path), "--json", str(out), "--junit", str(tmp_path / "j.xml")],
           "prove-json-dash": [*cli, "prove", str(path), "--json", "-", "--junit", str(tmp_path / "j.xml")]}[how]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader has gone before the first line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    if how != "prove-json-dash":
        assert json.loads(out.read_text())
    if how != "script":
        assert (tmp_path / "j.xml").read_text().startswith("<?xml")

"""More attacks on proof scripts and ``symverify prove``: claims whose fields are not the types the
protocol compares (a numpy ``False`` as an argued claim's checks, a float32 NaN as a resource), a
script process that fails after its result is written, a grandchild that outlives its script, a
loop of :func:`each` left early (ok with one process, crashed with two), and empty paths on the
command line that were silently ignored (``--golden ''`` skipped the comparison).

Each attack asserts the outcome the protocol promises: a :class:`UsageError` saying what was
expected and found, a ``crashed`` row naming the cause, or one line ``symverify: error: …`` and
exit 3.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import textwrap
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.cli import main
from symverify.errors import UsageError
from symverify.kernel.provers.outcome import Verdict
from symverify.scripts import runner as runner_module
from symverify.scripts.protocol import ClaimKind, Instance, ProofResult, each, script_main
from symverify.scripts.runner import available, run_scripts

HEAD = "from symverify.scripts.protocol import Instance, ProofResult, each, script_main\n"
TAIL = '\nif __name__ == "__main__":\n    raise SystemExit(script_main(run))\n'
CITE = "docs/theory.md § 1"


def _script(d: Path, name: str, body: str, tail: str = TAIL) -> Path:
    path = d / f"{name}.py"
    path.write_text(HEAD + textwrap.dedent(body) + tail, encoding="utf-8")
    return path


def _one(name: str, holds: str = "True") -> str:
    """The body of a script ``name`` with one computed claim."""
    return f"""
        TITLE = 'x'
        def run(quick=False):
            r = ProofResult({name!r}, TITLE)
            r.instances.append(Instance.computed('x', {holds}, 'a comparison', 'exact'))
            return r
        """


def _rows(summary: Any) -> dict[str, Any]:
    return {o.name: o for o in summary.outcomes}


# ---- an argued claim's checks: a numpy False (np.all(...) == ...) is not False, and counted as holding ----------
@pytest.mark.parametrize("checks", [np.False_, np.True_, 0, 1, "no", "", [False]])
def test_an_argued_claims_checks_are_true_false_or_none(checks):
    """``checks=np.False_`` (what ``(a == b).all()`` returns) made the claim ok: ``checks is not
    False`` held, so ``python NAME.py`` printed OK and exited 0 for a failed check."""
    with pytest.raises(UsageError, match=r"instance 'x': checks: expected True, False or None .*found"):
        Instance.argued("x", CITE, checks=checks)


def test_an_argued_claim_with_failed_checks_is_not_ok_alone_or_in_a_script(tmp_path):
    assert not Instance.argued("x", CITE, checks=False).ok
    assert Instance.argued("x", CITE, checks=True).ok and Instance.argued("x", CITE).ok

    def run(quick: bool = False) -> ProofResult:
        return ProofResult("numpy_checks", "x", [Instance.argued("x", CITE, checks=np.array([1, 2]).sum() == 4)])

    with pytest.raises(UsageError, match="checks: expected True, False or None"):
        script_main(run, [])


# ---- resources and bounds: exact numbers or finite floats, named by text --------------------------------------
@pytest.mark.parametrize("part", ["resources", "bounds"])
@pytest.mark.parametrize("value", [np.float32("nan"), np.float32("inf"), np.float32(1.5), "3", True, np.True_,
                                   complex(1, 0), Decimal("1"), Decimal("NaN"), None, float("nan")],
                         ids=lambda v: f"{type(v).__name__}({v!r})")
def test_resources_and_bounds_are_ints_fractions_or_finite_floats(part, value):
    """A float32 NaN resource was within every bound (NaN > b is false) and the claim ok; a string
    or complex raised TypeError deep in to_json; ``True`` was written as a JSON ``true`` that the
    runner then refused. (A numpy integer is read by its value: the next test.)"""
    other = {"resources": "bounds", "bounds": "resources"}[part]
    kw = {part: {"layers": value}, other: {"layers": 2}}
    found = "finite number, found nan" if value != value and type(value) is float else (
        rf"number, found {type(value).__name__} .*\(an int, a Fraction or a finite float\)")
    with pytest.raises(UsageError, match=rf"^instance 'x': {part}\['layers'\]: expected a {found}$"):
        Instance.computed("x", True, "a comparison", "exact", **kw)


class _Liar(int):
    def __gt__(self, other):
        return False


@pytest.mark.parametrize("value, plain", [(np.int64(3), 3), (np.uint64(2**64 - 1), 2**64 - 1), (_Liar(3), 3),
                                          (np.float64(2.5), 2.5), (Fraction(np.int64(3), np.int64(2)), Fraction(3, 2))],
                         ids=["int64", "uint64", "int-subclass", "float64", "Fraction-of-int64"])
def test_an_instance_reads_resources_and_bounds_by_their_plain_values(value, plain):
    """``Instance`` kept its own copy of the rule: a numpy integer was refused where ``Compiled`` and the IR
    read it by value, and an ``int`` subclass was kept and compared by its own ``>`` (a resource of 3 over a
    bound of 1 was within it, the claim ok). Instances read both tables by the one rule, as plain values."""
    inst = Instance.computed("x", True, "a comparison", "exact", resources={"layers": value}, bounds={"layers": 1})
    assert inst.resources == {"layers": plain} and type(inst.resources["layers"]) is type(plain)
    assert inst.over_bound() == ["layers"] and not inst.ok
    within = Instance.computed("x", True, "a comparison", "exact", resources={"layers": 1}, bounds={"layers": value})
    assert type(within.bounds["layers"]) is type(plain) and within.ok


@pytest.mark.parametrize("table", [[("layers", 1)], 3, None])
def test_a_resource_table_that_is_no_mapping_is_refused(table):
    from symverify.kernel.provers.outcome import Verdict

    with pytest.raises(UsageError, match=r"^instance 'x': resources: expected a mapping of names to numbers, found"):
        Instance("x", Verdict.PROVED, "exact", table, kind="computed", basis="a comparison")


@pytest.mark.parametrize("key", [1, None, ("a",), b"layers"])
def test_resource_names_are_text(key):
    """``{1: 3}`` was written as ``"1"``: ``{1: 3, "1": 4}`` gave a file with a repeated key."""
    with pytest.raises(UsageError, match=r"instance 'x': resources: expected names that are text, found"):
        Instance.computed("x", True, "a comparison", "exact", resources={key: 3})


@pytest.mark.parametrize("field, value, message", [
    ("seconds", float("nan"), "seconds: expected a finite number ≥ 0"),
    ("seconds", float("inf"), "seconds: expected a finite number ≥ 0"),
    ("seconds", -1.0, "seconds: expected a finite number ≥ 0"),
    ("seconds", "1", "seconds: expected a finite number ≥ 0"),
    ("seconds", True, "seconds: expected a finite number ≥ 0"),
    ("detail", 5, "detail: expected text"),
    ("name", 5, "name: expected text"),
])
def test_seconds_detail_and_name_are_checked_where_the_claim_is_made(field, value, message):
    """NaN seconds were written as ``NaN`` (not JSON): the script's file was refused, far from the cause."""
    kw: dict[str, Any] = {"name": "x", "holds": True, "computation": "a comparison", "method": "exact", field: value}
    with pytest.raises(UsageError, match=message):
        Instance.computed(**kw)


_EXACT = st.one_of(st.integers(-10**30, 10**30), st.fractions(max_denominator=10**6),
                   st.floats(allow_nan=False, allow_infinity=False, width=64))


@settings(max_examples=200, deadline=None)
@given(_EXACT, _EXACT)
def test_a_claim_is_within_its_bound_exactly_when_the_numbers_say_so(resource, bound):
    """Differential: ``ok`` against the exact comparison of the two numbers, and the JSON agrees."""
    inst = Instance.computed("x", True, "a comparison", "exact", resources={"r": resource}, bounds={"r": bound})
    within = Fraction(resource) <= Fraction(bound)
    assert inst.ok is within and (inst.over_bound() == []) is within
    d = inst.to_json()
    assert d["ok"] is within and json.loads(json.dumps(d))["ok"] is within


# ---- a script process that fails after its result is written -------------------------------------------------
AFTER = {
    # a check after script_main raised: exit 1, though the result said ok
    "after_raise": ("code = script_main(run)\n    raise AssertionError('a later check failed')\n", "exit code 1"),
    # an exit code script_main never returns
    "after_exit3": ("script_main(run)\n    raise SystemExit(3)\n", "exit code 3"),
    # killed by a signal (a FLINT abort at interpreter exit)
    "after_abort": ("script_main(run)\n    import os\n    os.abort()\n", "SIGABRT"),
}


def test_a_process_that_fails_after_writing_its_result_is_crashed(tmp_path):
    """The result file was taken as the row (ok) whatever the process did next: an exception after
    script_main (exit 1), ``sys.exit(3)``, or an abort (SIGABRT) gave an ok row."""
    for name, (after, _) in AFTER.items():
        _script(tmp_path, name, _one(name), tail=f'\nif __name__ == "__main__":\n    {after}')
    _script(tmp_path, "plain_fail", _one("plain_fail", "False"))  # exit 1 with a result that says not ok
    summary = run_scripts(available([tmp_path]), [*AFTER, "plain_fail"], jobs=2, timeout=60)
    rows = _rows(summary)
    for name, (_, why) in AFTER.items():
        assert rows[name].status == "crashed", (name, rows[name].status, rows[name].error)
        assert why in rows[name].error and "\n" not in rows[name].error, (name, rows[name].error)
    assert "after writing its result" in rows["after_exit3"].error
    assert "a later check failed" in rows["after_raise"].error
    assert rows["plain_fail"].status == "failed" and rows["plain_fail"].error == ""
    assert not summary.ok


# ---- a grandchild that leaves the script's session and writes into its working directory --------------------
ESCAPER = """
    import os, time
    TITLE = 'x'
    def run(quick=False):
        r = ProofResult('escaper', TITLE)
        r.instances.append(Instance.computed('x', True, 'a comparison', 'exact'))
        return r
    """
ESCAPER_TAIL = """
if __name__ == "__main__":
    code = script_main(run)
    if os.fork() == 0:
        os.setsid()  # out of the process group the runner kills
        end = time.monotonic() + 1.5
        i = 0
        while time.monotonic() < end:
            try:
                os.makedirs(f"d{i}", exist_ok=True)
                open(f"d{i}/f", "w").close()
            except OSError:
                pass
            i += 1
        os._exit(0)
    time.sleep(0.05)
    raise SystemExit(code)
"""


def test_a_grandchild_writing_into_the_working_directory_does_not_end_the_run(tmp_path):
    """Removing the script's temporary directory failed (``work: Directory not empty``) and the
    OSError ended the whole run: exit 3, no table, no files."""
    _script(tmp_path, "escaper", ESCAPER, tail=ESCAPER_TAIL)
    _script(tmp_path, "fine", _one("fine"))
    summary = run_scripts(available([tmp_path]), ["escaper", "fine"], jobs=2, timeout=60)
    rows = _rows(summary)
    assert rows["fine"].status == "ok" and rows["escaper"].status == "ok", rows["escaper"].error


def test_a_task_that_raises_in_the_runner_is_one_crashed_row(tmp_path, monkeypatch):
    """Any exception of one task (here: execute itself) ended the run with it; now it is that row's
    ``crashed`` with the exception named, and the other rows stand."""
    _script(tmp_path, "fine", _one("fine"))
    _script(tmp_path, "broken", _one("broken"))
    real = runner_module.execute

    def execute(task: Any, procs: Any) -> Any:
        if task.name == "broken":
            raise OSError(39, "Directory not empty", "work")
        return real(task, procs)

    monkeypatch.setattr(runner_module, "execute", execute)
    summary = run_scripts(available([tmp_path]), ["fine", "broken"], jobs=2)
    rows = _rows(summary)
    assert rows["fine"].status == "ok"
    assert rows["broken"].status == "crashed" and "OSError" in rows["broken"].error
    assert "Directory not empty" in rows["broken"].error and not summary.ok


# ---- a loop of each() left early: ok with -j 1, crashed with -j 2 ----------------------------------------------
LEFT = {
    "breaker": """
        for c in each(range(6)):
            r.instances.append(Instance.computed(f'case {c}', True, 'a comparison', 'exact'))
            if c == 2:
                break
        """,
    "returner": """
        for c in each(range(6)):
            r.instances.append(Instance.computed(f'case {c}', True, 'a comparison', 'exact'))
            if c == 2:
                return r
        """,
    "catcher": """
        try:
            for c in each(range(6)):
                if c == 2:
                    raise ValueError
                r.instances.append(Instance.computed(f'case {c}', True, 'a comparison', 'exact'))
        except ValueError:
            pass
        """,
}


def _left_script(name: str, loop: str) -> str:
    return (f"TITLE = 'x'\nSHARDABLE = True\ndef run(quick=False):\n    r = ProofResult({name!r}, TITLE)\n"
            + textwrap.indent(textwrap.dedent(loop), "    ") + "    return r\n")


@pytest.mark.parametrize("name", sorted(LEFT))
@pytest.mark.parametrize("argv", [[], ["--shard", "0/2"], ["--cases", "2,3"]])
def test_a_loop_of_each_left_in_a_case_is_refused_in_every_run(tmp_path, name, argv):
    """A shard that does not run case 2 never leaves the loop, so it meets more cases than one
    process does: ``-j 1`` said ok and ``-j 2`` crashed. Now every run that leaves the loop refuses
    it, naming the case, and writes no result."""
    ns: dict[str, Any] = {}
    exec(compile(HEAD + _left_script(name, LEFT[name]), f"{name}.py", "exec"), ns)
    out = tmp_path / "r.json"
    with pytest.raises(UsageError, match=r"the loop of each\(\) was left in case 2 .*break, return"):
        script_main(ns["run"], ["--json", str(out), *argv])
    assert not out.exists()


def test_every_job_count_gives_the_same_row_for_a_loop_left_early(tmp_path):
    for name, loop in LEFT.items():
        (tmp_path / f"{name}.py").write_text(HEAD + _left_script(name, loop) + TAIL, encoding="utf-8")
    scripts = available([tmp_path])
    for jobs in (1, 2):
        if jobs == 1:
            rows = _rows(run_scripts(scripts, list(LEFT), jobs=jobs, timeout=60))
        else:  # each alone, so that -j 2 splits it into shards (it would not split one of several equal scripts)
            rows = {}
            for name in LEFT:
                rows.update(_rows(run_scripts(scripts, [name], jobs=jobs, timeout=60)))
        for name in LEFT:
            assert rows[name].status == "crashed", (jobs, name, rows[name].status)
            assert "each() was left in case 2" in rows[name].error or "different numbers of cases" in rows[name].error
        if jobs == 1:
            assert all("each() was left in case 2" in rows[n].error for n in LEFT), {n: rows[n].error for n in LEFT}


def test_loops_that_run_to_their_end_are_not_flagged():
    """Controls: a whole loop, an empty one, a second loop after the first, and a filter before each()."""
    def run(quick: bool = False) -> ProofResult:
        r = ProofResult("fine", "x")
        for c in each(range(3)):
            r.instances.append(Instance.computed(f"a {c}", True, "a comparison", "exact"))
        for _ in each([]):
            raise AssertionError("no case")
        for c in each(c for c in range(5) if c < 2):
            r.instances.append(Instance.computed(f"b {c}", True, "a comparison", "exact"))
        return r

    assert script_main(run, []) == 0
    assert script_main(run, ["--shard", "1/2"]) == 0
    assert script_main(run, ["--count-cases"]) == 0


# ---- the command line: an empty path was skipped, not refused ------------------------------------------------
def _exit(capsys: Any, *argv: str) -> tuple[Any, str]:
    try:
        code = main(list(argv))
    except SystemExit as e:
        code = e.code
    return code, capsys.readouterr().err


@pytest.mark.parametrize("command", [("prove", "--quick", "primitives_handwritten"), ("sweep", "thm_h21")])
@pytest.mark.parametrize("flag", ["--golden", "--scheduler", "--dir", "--json", "--junit"])
def test_an_empty_path_is_a_usage_error(capsys, command, flag):
    """``--golden ''`` (an unset ``$GOLDEN`` in CI) ran without comparing and exited 0;
    ``--scheduler ''`` ran here; ``--dir ''`` read the scripts of the current directory (``setup.py``)."""
    code, err = _exit(capsys, *command, f"{flag}=")
    assert code == 3 and err.count("\n") == 1 and "Traceback" not in err, (code, err)
    assert err.startswith(f"symverify: error: {flag}: expected ") and "found an empty string" in err, err


def test_update_golden_with_an_empty_path_is_a_usage_error(capsys):
    code, err = _exit(capsys, "prove", "--quick", "primitives_handwritten", "--golden=", "--update-golden")
    assert code == 3 and "--golden: expected" in err and "found an empty string" in err, err



# ---- a script run alone: its --json path ---------------------------------------------------------------------
def _ran(quick: bool = False) -> ProofResult:
    ran.append(1)
    return ProofResult("alone", "x", [Instance.computed("x", True, "a comparison", "exact")])


ran: list[int] = []


@pytest.mark.parametrize("where, message", [
    ("", "expected a file path, found an empty string"),
    ("{tmp}", "expected a file path, found a directory"),
    ("{tmp}/missing/r.json", "the directory {tmp}/missing does not exist"),
])
def test_a_json_path_that_cannot_be_written_is_refused_before_the_run(tmp_path, capsys, where, message):
    """``python NAME.py --json ''`` wrote nothing and exited 0; ``--json DIR/missing/r.json`` ran the whole
    script, then ended in a FileNotFoundError traceback."""
    ran.clear()
    with pytest.raises(SystemExit) as e:
        script_main(_ran, ["--json", where.format(tmp=tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert e.value.code == 2 and not ran, (e.value.code, ran)
    assert err.endswith(message.format(tmp=tmp_path)) and "--json" in err and "Traceback" not in err, err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_json_write_that_fails_after_the_run_is_one_line(capsys):
    with pytest.raises(SystemExit) as e:
        script_main(_ran, ["--json", "/dev/full"])
    err = capsys.readouterr().err.strip()
    assert e.value.code == 2 and err.endswith("--json /dev/full: cannot write there (No space left on device)"), err
    assert "Traceback" not in err and err.count("\n") == 0, err


# ---- a module of a user's directory named like one the script processes import ---------------------------------
@pytest.mark.parametrize("name, what", [("symverify.py", "symverify"), ("json.py", "a module of the standard library"),
                                        ("numpy.py", "a dependency of symverify"), ("_fractions.py", None),
                                        ("fractions.py", "a module of the standard library"),
                                        ("re/__init__.py", "a module of the standard library")])
def test_a_module_named_like_one_the_scripts_import_is_refused(tmp_path, capsys, name, what):
    """``symverify.py`` in ``--dir DIR`` made every script of DIR crash with "'symverify' is not a
    package", ``json.py`` with a circular import; now one line names the file (a ``_NAME.py``
    support module of another name stays allowed)."""
    _script(tmp_path, "fine", _one("fine"))
    (tmp_path / name).parent.mkdir(exist_ok=True)
    (tmp_path / name).write_text("X = 1\n", encoding="utf-8")
    code, err = _exit(capsys, "prove", "--dir", str(tmp_path))
    if what is None:
        assert code == 0, err
        return
    shown = tmp_path / name.removesuffix("/__init__.py")
    assert code == 3 and err.count("\n") == 1 and "Traceback" not in err, (code, err)
    assert err.startswith(f"symverify: error: {shown}: expected a module name of its own") and what in err, err


@pytest.mark.parametrize("name", ["test.py", "test/__init__.py", "this.py", "idlelib.py",
                                  *(["time.py"] if "time" in sys.builtin_module_names else [])])
def test_a_module_named_like_one_no_script_imports_is_allowed(tmp_path, capsys, name):
    """A ``this.py`` or ``idlelib.py`` (standard-library programs no library imports) or a module
    built into the interpreter (found before any directory) was refused like ``json.py``, though no
    script process would import it; the scripts run, with the file beside them, and the run is ok
    (``test``, CPython's test suite, is pinned as allowed too)."""
    _script(tmp_path, "fine", _one("fine"))
    if name.endswith("/__init__.py"):  # a package: every script process that imported it would stop here
        (tmp_path / name).parent.mkdir()
        (tmp_path / name).write_text("raise SystemExit('imported in place of the standard one')\n", encoding="utf-8")
    else:  # a script of that name
        _script(tmp_path, name.removesuffix(".py"), _one(name.removesuffix(".py")))
    code, err = _exit(capsys, "prove", "--dir", str(tmp_path))
    assert code == 0 and "expected a module name of its own" not in err, (code, err)


def test_a_module_named_like_one_importing_torch_imports_is_refused(tmp_path, capsys):
    """``typing_extensions.py`` broke every script that imports torch (which imports it at once)."""
    _script(tmp_path, "fine", _one("fine"))
    (tmp_path / "typing_extensions.py").write_text("X = 1\n", encoding="utf-8")
    code, err = _exit(capsys, "prove", "--dir", str(tmp_path))
    assert code == 3 and "'typing_extensions', the name of a dependency of symverify" in err, (code, err)


# ---- a prover's claim made without a prover -------------------------------------------------------------------
def _refuted() -> Instance:
    """A prover's refutation: ``u⊙u`` against ``u ↦ u⊙u⊙u⊙u`` by the exact method."""
    from cases import QUARTIC_M, SQUARE_C

    from symverify import verify

    inst = Instance.from_report("squares", verify(SQUARE_C, QUARTIC_M, method="exact"))
    assert inst.verdict is Verdict.REFUTED and not inst.ok
    return inst


@pytest.mark.parametrize("forge", ["constructor", "replace"])
def test_a_provers_claim_is_made_only_from_a_provers_outcome(forge):
    """``Instance("x", Verdict.PROVED, "exact", kind="prover")`` in a user's script was a prover's
    proof that no prover gave (ok, counted as proved, exit 0), and ``dataclasses.replace`` turned a
    prover's refutation into a proof; only the source scan of the project's own scripts stood in the way."""
    with pytest.raises(UsageError, match=r"instance 'x': a prover's claim is made by Instance.from_report .*found one "
                                         r"\(proved\) built directly"):
        if forge == "constructor":
            Instance("x", Verdict.PROVED, "exact", kind=ClaimKind.PROVER)
        else:
            dataclasses.replace(_refuted(), name="x", verdict=Verdict.PROVED, counterexample=None)


def test_renamed_keeps_what_the_prover_said():
    inst = _refuted()
    again = inst.renamed("all squares", seconds=2.5, detail="worst of 3")
    assert (again.name, again.seconds, again.detail) == ("all squares", 2.5, "worst of 3")
    assert (again.verdict, again.kind, again.method, again.counterexample) == (inst.verdict, inst.kind, inst.method,
                                                                               inst.counterexample)
    assert inst.renamed().to_json() == inst.to_json() and not again.ok
    with pytest.raises(UsageError, match="seconds: expected a finite number ≥ 0"):
        inst.renamed(seconds=float("nan"))
    # computed and argued claims are made by their constructors from the script's own values: replace stays open
    assert dataclasses.replace(Instance.computed("c", True, "a comparison", "exact"), name="d").ok


class _LooksOk:
    """Answers like an ok claim, but is not one."""

    ok = True
    proved = True
    name = "forged"


@pytest.mark.parametrize("how", ["append", "given", "assigned", "sliced", "indexed", "extended"])
@pytest.mark.parametrize("item", ["report", "look-alike"])
def test_a_results_instances_are_instances(how, item):
    """A ``Report`` appended as it is ended in ``AttributeError: 'Report' object has no attribute
    'ok'``; any object with ``ok = True`` made the result ok (``python NAME.py`` exited 0)."""
    from cases import SQUARE_C, SQUARE_M

    from symverify import verify

    thing = verify(SQUARE_C, SQUARE_M, method="exact") if item == "report" else _LooksOk()
    real = Instance.computed("real", True, "a comparison", "exact")
    message = (r"a result's instances: expected an Instance \(Instance.from_report, computed or argued\), found "
               + ("Report; make a claim of it: Instance.from_report" if item == "report" else "_LooksOk$"))
    with pytest.raises(UsageError, match=message):
        if how == "given":
            ProofResult("r", "t", [real, thing])
            return
        r = ProofResult("r", "t", [real])
        if how == "append":
            r.instances.append(thing)
        elif how == "assigned":
            r.instances = [thing]
        elif how == "sliced":
            r.instances[:] = [real, thing]
        elif how == "indexed":
            r.instances[0] = thing
        else:
            r.instances += [thing]


# ---- a golden run: an argued claim whose checks are no longer run --------------------------------------------
def test_a_golden_run_compares_an_argued_claims_checks():
    """``checks: true`` in the golden run and ``null`` now (the script stopped checking): both ok,
    and the golden comparison said the runs match."""
    from symverify.scripts.runner import Script, golden_diff, merge

    def run_of(checks: bool | None) -> dict[str, Any]:
        inst = Instance.argued("lemma", CITE, checks=checks)
        result = json.loads(json.dumps(ProofResult("s", "t", [inst]).to_json()))
        row = merge(Script("s", Path("s.py"), "d"), [{"status": "done", "seconds": 0.0, "error": "", "result": result}])
        assert row.ok
        return runner_module.RunSummary(True, (row,)).to_json()

    assert golden_diff(run_of(True), run_of(True)) == ""
    diff = golden_diff(run_of(None), run_of(True))
    assert "s: lemma: checks: true → null" in diff, diff
    old = run_of(None)
    for inst in old["scripts"][0]["result"]["instances"]:
        del inst["checks"]  # a run of 0.1.0 writes none: compared as null
    assert golden_diff(run_of(None), old) == ""

"""Proof runs as tasks: case selection and merging (``--cases``, ``--count-cases``), the Dask backend
on a LocalCluster (the same JSON as the serial run and the process pool, a killed worker, lost tasks
retried once then failed rows, Ctrl-C), and ``symverify sweep``."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from symverify.cli import main
from symverify.errors import UsageError
from symverify.scripts import dask_backend
from symverify.scripts.protocol import SWEEP_ENV, parse_indices, script_main, sweep_grid
from symverify.scripts.runner import available, golden_diff, merge, run_scripts
from symverify.scripts.tasks import execute

# Two each() loops (indices go on across them) and instances made outside each(): before, between
# and after the loops.
LOOPS = '''
from symverify.scripts.protocol import Instance, ProofResult, each, script_main

TITLE = "Two loops"
SHARDABLE = True


def run(quick=False):
    r = ProofResult("loops", TITLE)
    r.instances.append(Instance.computed("setup", True, "a test's comparison", "lemma"))
    for k in each(range(4)):
        for part in range(k % 3):
            r.instances.append(Instance.computed(f"first {k}.{part}", True, "a test's comparison", "exact", resources={"k": k}, bounds={"k": 9}))
    r.instances.append(Instance.computed("between", True, "a test's comparison", "lemma"))
    for k in each("abc"):
        r.instances.append(Instance.computed(f"second {k}", True, "a test's comparison", "exact"))
    r.instances.append(Instance.computed("summary", True, "a test's comparison", "counting"))
    return r


if __name__ == "__main__":
    raise SystemExit(script_main(run))
'''

# Case 1 records (worker pid, own pid, file) and, on its first attempt, sleeps until the test kills its worker.
VICTIM = '''
import os, pathlib, time
from symverify.scripts.protocol import Instance, ProofResult, each, script_main

TITLE = "Survives a killed worker"
SHARDABLE = True
MARK = pathlib.Path({mark!r})


def run(quick=False):
    r = ProofResult("victim", TITLE)
    for k in each(range(3)):
        if k == 1:
            attempts = MARK.read_text(encoding="utf-8").splitlines() if MARK.exists() else []  # lines: paths may hold spaces
            tmp = MARK.with_suffix(".tmp")
            tmp.write_text("\\n".join(attempts + [f"{{os.getppid()}}:{{os.getpid()}}:{{__file__}}"]), encoding="utf-8")
            os.replace(tmp, MARK)  # the test reads it whole
            if not attempts:
                time.sleep(120)
        r.instances.append(Instance.computed(f"case {{k}}", True, "a test's comparison", "exact", resources={{"k": k}}, bounds={{"k": 2}}))
    return r


if __name__ == "__main__":
    raise SystemExit(script_main(run))
'''

# Kills its worker (KILLER) or itself (SUICIDE) on every attempt, counting attempts in MARK.
LOSER = '''
import os, pathlib, signal, sys, time
from symverify.scripts.protocol import ProofResult, script_main

TITLE = "Lost every time"
MARK = pathlib.Path({mark!r})


def run(quick=False):
    with MARK.open("a") as fh:
        fh.write("x")
    wait = pathlib.Path({wait!r})  # let another script finish and report before a worker dies
    for _ in range(100):
        if wait.exists():
            break
        time.sleep(0.1)
    time.sleep(1)
    os.kill({target}, signal.SIGKILL)
    time.sleep(60)
    return ProofResult("lost", TITLE)


if __name__ == "__main__":
    raise SystemExit(script_main(run))
'''

SIMPLE = '''
import os, pathlib, time
from symverify.scripts.protocol import Instance, ProofResult, script_main

TITLE = "{title}"


def run(quick=False):
    {body}
    r = ProofResult("{name}", TITLE)
    r.instances.append(Instance.computed("{name} instance", True, "a test's comparison", "exact", resources={{"layers": 1}}, bounds={{"layers": 2}}))
    return r


if __name__ == "__main__":
    raise SystemExit(script_main(run))
'''


def _write(d: Path, name: str, text: str) -> None:
    d.mkdir(exist_ok=True)
    (d / f"{name}.py").write_text(textwrap.dedent(text), encoding="utf-8")


# ---- cases without Dask ---------------------------------------------------------------------------


def test_cases_and_shards_merge_into_the_order_of_one_process(tmp_path):
    _write(tmp_path / "p", "loops", LOOPS)
    scripts = available([tmp_path / "p"])
    s = scripts["loops"]
    one = run_scripts(scripts, ["loops"], jobs=1)
    names = [i["name"] for i in one.outcomes[0].instances()]
    assert names == ["setup", "first 1.0", "first 2.0", "first 2.1", "between", "second a", "second b", "second c", "summary"]
    assert run_scripts(scripts, ["loops"], jobs=3).to_json() == one.to_json()
    count = execute(s.task(False, count=True))
    assert count["status"] == "done" and count["result"] == {"cases": 7}
    for groups in ([[i] for i in range(7)], [[0, 3, 6], [1, 4], [2, 5]], [[5, 1], [0, 2, 3, 4, 6]]):
        parts = [execute(s.task(False, cases=g, shipped=True)) for g in groups]
        assert all(p["status"] == "done" for p in parts)
        assert merge(s, parts).to_json() == one.outcomes[0].to_json(), groups


def test_script_main_cases_count_and_bad_selections(tmp_path, capsys):
    _write(tmp_path / "p", "loops", LOOPS)
    import importlib.util

    spec = importlib.util.spec_from_file_location("loops_mod", tmp_path / "p" / "loops.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = tmp_path / "out.json"
    assert script_main(mod.run, ["--count-cases", "--json", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8")) == {"format": "symverify.proof-result", "version": 2, "cases": 7}
    assert script_main(mod.run, ["--cases", "4,6", "--json", str(out)]) == 0
    got = json.loads(out.read_text(encoding="utf-8"))["instances"]
    assert [(i["name"], i["case"]) for i in got] == [("setup", None), ("between", None), ("second a", 4),
                                                     ("second c", 6), ("summary", None)]  # every part keeps the others
    assert script_main(mod.run, ["--cases", "0", "--json", str(out)]) == 0
    assert [i["name"] for i in json.loads(out.read_text(encoding="utf-8"))["instances"]] == ["setup", "between", "summary"]
    for argv, message in ((["--cases", "2,9"], "the script has 7 case(s) in this tier; no case 9"),
                          (["--cases", "1-x"], "--cases: expected non-negative integers"),
                          (["--cases", "3", "--shard", "0/2"], "not allowed with argument")):
        capsys.readouterr()
        with pytest.raises(SystemExit) as e:
            script_main(mod.run, argv)
        assert e.value.code == 2 and message in capsys.readouterr().err, argv
    assert mod.run().ok  # the selection does not outlive script_main


def test_parse_indices_and_sweep_grid(monkeypatch):
    assert parse_indices("3, 0-2,2") == [0, 1, 2, 3]
    for bad in ("", "a", "5-3", "-1", "1.5"):
        with pytest.raises(UsageError, match="--seeds"):
            parse_indices(bad, "--seeds")
    default = {"widths": [8], "seeds": [0]}
    monkeypatch.delenv(SWEEP_ENV, raising=False)
    assert sweep_grid(default) == default
    monkeypatch.setenv(SWEEP_ENV, '{"seeds": [4, 5]}')
    assert sweep_grid(default) == {"widths": [8], "seeds": [4, 5]}
    monkeypatch.setenv(SWEEP_ENV, '{"colours": [1]}')
    with pytest.raises(UsageError, match=r"unknown parameter\(s\) colours; expected widths, seeds"):
        sweep_grid(default)
    monkeypatch.setenv(SWEEP_ENV, "[1]")
    with pytest.raises(UsageError, match="expected a JSON object"):
        sweep_grid(default)


def test_a_worker_with_another_version_makes_a_crashed_row(tmp_path):
    _write(tmp_path / "p", "good", SIMPLE.format(name="good", title="Fine", body="pass"))
    s = available([tmp_path / "p"])["good"]
    part = execute(s.task(False))
    assert merge(s, [part], local_version=part["version"]).ok
    row = merge(s, [{**part, "version": "0.0.0", "host": "far"}], local_version=part["version"])
    assert row.status == "crashed" and "a worker (far) has symverify 0.0.0" in row.error


@pytest.mark.parametrize("build", ["0123456789ab" + "0" * 52, None, 7])
def test_a_worker_with_another_build_of_this_version_makes_a_crashed_row(tmp_path, build):
    """A worker's rows were taken when its version string was this machine's: another build of the
    trusted base under one version (an edited checkout, a development install) passed as this one."""
    from symverify.kernel.build import build_identity

    _write(tmp_path / "p", "good", SIMPLE.format(name="good", title="Fine", body="pass"))
    s = available([tmp_path / "p"])["good"]
    part = execute(s.task(False))
    assert part["build"] == build_identity()
    assert merge(s, [part], local_version=part["version"], local_build=build_identity()).ok
    far = {**part, "host": "far", **({"build": build} if build is not None else {})}
    if build is None:
        del far["build"]
    row = merge(s, [far], local_version=part["version"], local_build=build_identity())
    assert row.status == "crashed" and f"a worker (far) has symverify {part['version']} of another build" in row.error
    assert f"this machine build {build_identity()[:12]}" in row.error and "install the same build everywhere" in row.error


def test_the_process_pool_does_not_import_dask():
    code = ("import sys\nfrom symverify.cli import main\n"
            "code = main(['prove', 'primitives_handwritten', '--quick', '-j', '1'])\n"
            "print(code, 'distributed' in sys.modules, 'dask' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split()[-3:] == ["0", "False", "False"], out.stderr


# ---- the Dask backend -----------------------------------------------------------------------------


def test_local_cluster_gives_the_serial_run():
    scripts = available()
    names = ["primitives_handwritten", "cor_h20_linear"]
    serial = run_scripts(scripts, names, quick=True, jobs=1)
    assert serial.ok and len(serial.outcomes[1].instances()) >= 6
    pool = run_scripts(scripts, names, quick=True, jobs=2)
    seen, started = [], []
    dask = dask_backend.run_scripts(scripts, names, scheduler="local", quick=True, workers=2, on_done=seen.append,
                                    on_start=started.append)
    assert dask.where == "dask local (2 workers)" and dask.jobs == 2
    assert sorted(o.name for o in seen) == sorted(names)
    assert started == ["cor_h20_linear", "primitives_handwritten"]  # submitted costliest first (COST)
    assert pool.to_json() == serial.to_json()
    assert dask.to_json() == serial.to_json()  # verdicts, methods, resources, bounds, details, order
    assert golden_diff(dask.to_json(), serial.to_json()) == ""


def test_rows_from_workers_of_another_build_are_crashed_on_a_cluster(tmp_path, monkeypatch):
    """The workers' build is read in their processes; this machine's is patched to another one: every
    row, a counted SHARDABLE script's too, is crashed, naming both builds."""
    _write(tmp_path / "p", "good", SIMPLE.format(name="good", title="Fine", body="pass"))
    _write(tmp_path / "p", "loops", LOOPS)
    scripts = available([tmp_path / "p"])
    names = ["good", "loops"]
    assert scripts["loops"].shardable
    monkeypatch.setattr(dask_backend, "build_identity", lambda: "fedcba987654" + "0" * 52)
    summary = dask_backend.run_scripts(scripts, names, scheduler="local", quick=True, workers=2)
    assert [o.status for o in summary.outcomes] == ["crashed", "crashed"], [o.error for o in summary.outcomes]
    for o in summary.outcomes:
        assert "of another build (" in o.error and "this machine build fedcba987654" in o.error, o.error


def test_a_killed_worker_loses_no_result(tmp_path):
    mark = tmp_path / "attempts"
    _write(tmp_path / "p", "victim", VICTIM.format(mark=str(mark)))
    scripts = available([tmp_path / "p"])
    killed: list[int] = []

    def kill_the_worker() -> None:
        deadline = time.monotonic() + 60
        while not mark.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        if mark.exists():
            worker = int(mark.read_text(encoding="utf-8").splitlines()[0].split(":")[0])
            os.kill(worker, signal.SIGKILL)
            killed.append(worker)

    killer = threading.Thread(target=kill_the_worker, daemon=True)
    killer.start()
    summary = dask_backend.run_scripts(scripts, ["victim"], scheduler="local", workers=2)
    killer.join(5)
    (row,) = summary.outcomes
    assert killed, "case 1 never started"
    assert row.ok, row.error
    assert [i["name"] for i in row.instances()] == ["case 0", "case 1", "case 2"]
    attempts = [a.split(":", 2) for a in mark.read_text(encoding="utf-8").splitlines()]
    assert len(attempts) == 2 and int(attempts[0][0]) == killed[0] and attempts[1][0] != attempts[0][0]
    assert not attempts[0][2].startswith(str(tmp_path))  # the script travelled with its task
    first = int(attempts[0][1])  # the interrupted attempt's process died with its worker
    assert _gone(first), f"process {first} of the killed worker is still running"
    assert summary.to_json() == run_scripts(scripts, ["victim"], jobs=1).to_json()


def _gone(pid: int, wait: float = 10.0) -> bool:
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.1)
    return False


def test_lost_tasks_are_retried_once_then_failed_rows(tmp_path):
    d = tmp_path / "p"
    good = tmp_path / "good.done"  # the losers wait for it: a worker killed while "good" runs there would lose it too
    # the worker: the script's parent, or on Linux its grandparent (the reaper in front of the script between)
    worker = ("(int(open(f'/proc/{os.getppid()}/stat').read().rsplit(')', 1)[1].split()[1]) "
              "if sys.platform.startswith('linux') else os.getppid())")
    _write(d, "killer", LOSER.format(mark=str(tmp_path / "killer"), target=worker, wait=str(good)))
    _write(d, "suicide", LOSER.format(mark=str(tmp_path / "suicide"), target="os.getpid()", wait=str(good)))
    _write(d, "good", SIMPLE.format(name="good", title="Fine", body=f"pathlib.Path({str(good)!r}).write_text('done')"))
    scripts = available([d])
    summary = dask_backend.run_scripts(scripts, ["killer", "suicide", "good"], scheduler="local", workers=2)
    rows = {o.name: o for o in summary.outcomes}
    assert rows["good"].ok and not summary.ok and not summary.interrupted
    assert rows["killer"].status == "crashed" and "killer (all): lost: the 2 workers that ran it died" in rows["killer"].error
    assert rows["suicide"].status == "crashed" and "killed by SIGKILL (retried once)" in rows["suicide"].error
    assert (tmp_path / "killer").read_text(encoding="utf-8") == "xx" and (tmp_path / "suicide").read_text(encoding="utf-8") == "xx"


def test_ctrl_c_stops_the_tasks_on_a_cluster_that_stays_up(tmp_path):
    from distributed import LocalCluster

    d = tmp_path / "p"
    pid_file = tmp_path / "slow.pid"
    _write(d, "good", SIMPLE.format(name="good", title="Fine", body="pass"))
    _write(d, "slow", SIMPLE.format(name="slow", title="Slow", body=f"pathlib.Path({str(pid_file)!r}).write_text(str(os.getpid())); "
                                                                   "time.sleep(120)"))
    out_json = tmp_path / "part.json"
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None, silence_logs=50) as cluster:
        cmd = [sys.executable, "-m", "symverify.cli", "prove", "good", "slow", "--dir", str(d), "--scheduler",
               cluster.scheduler_address, "--json", str(out_json)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        line = ""
        while time.monotonic() < deadline and not line.startswith("good:"):
            line = proc.stderr.readline()
        assert line.startswith("good:"), line
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, (out, err)
        assert "Traceback" not in err + out and "interrupted" in err and f"dask {cluster.scheduler_address}" in out
        data = json.loads(out_json.read_text(encoding="utf-8"))
        assert data["interrupted"] is True and [s["status"] for s in data["scripts"]] == ["ok", "interrupted"]
        # the cluster is still up: the task itself killed its process when the run set its stop event
        assert _gone(int(pid_file.read_text(encoding="utf-8"))), "the slow script's process outlived the run"
        assert cluster.status.name == "running"


def test_a_cluster_started_as_the_readme_says(tmp_path):
    """``dask scheduler --scheduler-file`` and ``dask worker`` on this machine, then
    ``symverify sweep --scheduler FILE``: the serial run's JSON."""
    sched_file = tmp_path / "sched.json"
    dask = [sys.executable, "-m", "dask"]
    procs = [subprocess.Popen([*dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                               "--scheduler-file", str(sched_file)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        deadline = time.monotonic() + 60
        while not (sched_file.exists() and sched_file.read_text(encoding="utf-8").strip().endswith("}")) and time.monotonic() < deadline:
            time.sleep(0.1)
        procs.append(subprocess.Popen([*dask, "worker", "--scheduler-file", str(sched_file), "--nthreads", "2",
                                       "--no-dashboard", "--host", "127.0.0.1"], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL))
        grid = ["sweep", "thm_h21", "--widths", "8,16", "--depths", "2", "--seeds", "0-1"]
        cmd = [sys.executable, "-m", "symverify.cli", *grid, "--json", str(tmp_path / "dask.json"), "--scheduler", str(sched_file)]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, res.stdout + res.stderr
        assert "(1 worker)" in res.stdout
    finally:
        for proc in reversed(procs):
            proc.terminate()
            proc.wait(timeout=30)
    assert main([*grid, "-j", "1", "--json", str(tmp_path / "serial.json")]) == 0
    assert (tmp_path / "dask.json").read_text(encoding="utf-8") == (tmp_path / "serial.json").read_text(encoding="utf-8")


def test_unreachable_or_malformed_schedulers_are_usage_errors(tmp_path, capsys):
    with pytest.raises(UsageError, match=r"--scheduler tcp://127\.0\.0\.1:9: cannot connect"):
        dask_backend.run_scripts(available(), ["primitives_handwritten"], scheduler="tcp://127.0.0.1:9", connect_timeout=0.5)
    for bad, message in (("not an address!", "expected 'local', an address such as tcp://HOST:8786"),
                         (str(tmp_path / "missing.json"), "no such scheduler file")):
        assert main(["prove", "primitives_handwritten", "--quick", "--scheduler", bad]) == 3
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
    assert main(["prove", "--quick", "--cases-per-task", "2"]) == 3
    assert "--cases-per-task is for Dask runs" in capsys.readouterr().err
    with pytest.raises(UsageError, match="cases_per_task: expected a positive int"):
        dask_backend.run_scripts(available(), ["primitives_handwritten"], cases_per_task=0)


# ---- symverify sweep ------------------------------------------------------------------------------


def test_sweep_is_the_same_serially_on_the_pool_and_on_dask(tmp_path, capsys):
    grid = ["--widths", "8,12", "--depths", "2", "--seeds", "0-1", "--compilers", "kaleidoscope,dense"]
    runs = {}
    golden = tmp_path / "serial.json"
    for label, where in (("serial", ["-j", "1"]), ("pool", ["-j", "2", "--golden", str(golden)]),
                         ("dask", ["--scheduler", "local", "-j", "2", "--cases-per-task", "3", "--golden", str(golden)])):
        path = tmp_path / f"{label}.json"
        assert main(["sweep", "thm_h21", *grid, *where, "--json", str(path)]) == 0, capsys.readouterr()
        assert label == "serial" or "matches the golden run" in capsys.readouterr().out
        runs[label] = path.read_text(encoding="utf-8")
    assert runs["serial"] == runs["pool"] == runs["dask"]
    data = json.loads(runs["dask"])
    (row,) = data["scripts"]
    names = [i["name"] for i in row["result"]["instances"]]
    assert row["name"] == "thm_h21_sweep" and len(names) == 8 and names[:2] == ["w=8 Δ=2 seed=0 kaleidoscope",
                                                                                 "w=8 Δ=2 seed=0 dense"]
    assert all(i["resources"]["width"] == int(i["name"].split()[0][2:]) for i in row["result"]["instances"])
    from symverify.viz import plot_resources

    assert plot_resources(data).axes  # the sweep's output plots like any proof run


@pytest.mark.parametrize("argv, message", [
    (["sweep", "nosuch"], "no sweep 'nosuch'; available: thm_h21"),
    (["sweep", "thm_h21", "--widths", "0,8"], "--widths: expected positive integers"),
    (["sweep", "thm_h21", "--seeds", "3-1"], "--seeds: expected non-negative integers and ranges A-B with A ≤ B"),
    (["sweep", "thm_h21", "--compilers", "dense,fast"], "--compilers: expected kaleidoscope and/or dense"),
    (["sweep", "thm_h21_general"], "no sweep 'thm_h21_general'"),
])
def test_sweep_refuses_bad_input(argv, message, capsys):
    assert main(argv) == 3
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err

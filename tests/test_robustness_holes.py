"""Robustness attacks on ``verify``, the reports, the loaders and ``prove --dir``, one test per attack.

Each input below once crashed the process, ignored the timeout or hung. Every one must now end,
within its timeout plus :data:`SLACK`, in a clear verdict (``proved`` only when true; ``refuted``
with a re-checked counterexample; ``unknown`` with a note) or a :class:`SymverifyError`. The
wall-clock limits are correctness checks of the deadline, not performance asserts.
"""

from __future__ import annotations

import functools
import math
import subprocess
import sys
import textwrap
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from symverify import Circuit, sym
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.grid import Grid
from symverify.kernel.provers.bound_rules import scalar_rows
from symverify.kernel.provers.bounds import structure_bounds
from symverify.kernel.provers.bounds_vector import usable
from symverify.kernel.provers.counterexample import affordable
from symverify.kernel.provers.sides import pair_sides
from symverify.kernel.verification import verify

TESTS = str(Path(__file__).resolve().parent)
"""This directory, for the child interpreters that import this module (pytest may run from any directory)."""

SLACK = 4.0
METHODS = ("exact", "randomized", "auto", "z3")


def squared_constant(k: int) -> Circuit:
    """``2^(2^k)·x0``: the constant 2 squared ``k`` times (``k + 2`` gates, one monomial, a
    coefficient of ``2^k + 1`` bits)."""

    def f(u):
        c = u[0][0] * 0 + 2
        for _ in range(k):
            c = c * c
        return [c * u[0][0]]

    return Circuit.trace(f, n=1, d=1, name=f"two_squared_{k}_times")


THREE_X = Circuit.trace(lambda u: [u[0][0] * 3], n=1, d=1, name="three_x")


def timed(lhs, rhs, **kw):
    t = time.monotonic()
    report = verify(lhs, rhs, **kw)
    return report, time.monotonic() - t


# ---- 1. a constant squared 64 times: FLINT aborted the process (the guard counted monomials only) ----


def test_huge_constant_does_not_abort_the_process():
    """In a fresh interpreter (an abort would kill the test run): exact and auto end ``unknown``
    and say why; the peak height bound sees the ``2^64``-bit coefficient."""
    script = textwrap.dedent("""
        import sys
        sys.path.insert(0, TESTS)
        from test_robustness_holes import THREE_X, squared_constant
        from symverify.kernel.verification import verify
        c = squared_constant(64)
        for method in ("exact", "auto"):
            r = verify(c, THREE_X, method=method, timeout=20)
            print(method, r.verdict.value, " | ".join(r.notes))
    """).replace("TESTS", repr(TESTS))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines())
    assert lines["exact"].startswith("unknown") and "coefficients of up to 2^64+ bits" in lines["exact"]
    assert lines["auto"].startswith("unknown")


def test_a_coarse_certificate_over_a_huge_constant_does_not_abort_auto():
    """One certificate stage over the whole compiled model: stages are sized by monomials, so where
    the bounds see the ``2^64``-bit coefficient (``auto``'s, or the circuit's and, for long stages,
    the model's under ``compositional``) the check runs in the limited child. The compiler's own
    certificate (a stage per gate) still proves the pair exactly."""
    script = textwrap.dedent("""
        import sys
        sys.path.insert(0, TESTS)
        import symverify as sv
        from symverify.kernel.ir.certificate import Certificate
        from test_robustness_holes import squared_constant
        c = squared_constant(64)
        comp = sv.compile(c)
        coarse = Certificate((comp.certificate.boundaries[0], comp.certificate.boundaries[-1]))
        for method in ("auto", "compositional"):
            r = sv.verify(c, comp.model, certificate=coarse, method=method, timeout=3)
            print(r.verdict.value, " | ".join(r.notes))
            r = sv.verify(c, comp, method=method, timeout=30)
            print(r.verdict.value, r.method)
    """).replace("TESTS", repr(TESTS))
    t = time.monotonic()
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    assert len(lines) == 4, out.stdout
    for coarse, fine in (lines[0:2], lines[2:4]):
        assert coarse.startswith("unknown") and "certificate check stopped" in coarse
        assert fine == "proved compositional"
    assert time.monotonic() - t < 60


def test_peak_height_counts_values_that_never_reach_an_output():
    """``(2^(2^40))·0 + x0``: the output has height 0, the way there a ``2^40``-bit constant."""

    def f(u):
        c = u[0][0] * 0 + 2
        for _ in range(40):
            c = c * c
        return [c * 0 + u[0][0]]

    c = Circuit.trace(f, n=1, d=1)
    a, b = pair_sides(c, c)
    bounds = structure_bounds(a, b)
    assert bounds.height_bits <= 2 and bounds.peak_height_bits > 2**40
    assert not affordable([[0]], {}, 1, bounds.peak_height_bits)


# ---- 2. the same family with a timeout: 116 s for timeout=2 ----


@pytest.mark.parametrize("method", ("exact", "randomized", "auto"))
def test_huge_constant_respects_the_timeout(method):
    report, seconds = timed(squared_constant(32), THREE_X, method=method, timeout=2)
    assert not report.proved and seconds < 2 + SLACK, (seconds, report)
    assert report.verdict.value == "unknown" and report.notes


# ---- 3. the numpy bounds pass: inf + (−inf) = NaN slipped past `max ≥ 2^51` ----


def test_usable_rejects_nan_and_inf():
    ok = np.array([[3.0, 0.0, 5.0, 1.0], [-math.inf] * 4])
    assert usable(ok)
    for bad in ([math.nan, 0, 0, 0], [0, 0, math.nan, 0], [0, 0, math.inf, 0], [0, 0, 0, math.nan], [2.0**51, 0, 0, 0]):
        assert not usable(np.vstack([ok, [bad]]))


def squaring_model(layers: int, n: int = 4) -> Model:
    """``u ⊙ u`` repeated: ``u^(2^layers)`` at every cell (BaseConv with ``W = I``, ``h = δ``)."""
    W = Grid.from_rows([[int(i == j) for j in range(n)] for i in range(n)])
    h = Grid.from_rows([[int(k == 0) for _ in range(n)] for k in range(n)])
    return Model(n, n, n, n, tuple([Layer.make(n, n, W=W, h=h)] * layers), f"square_{layers}")


@pytest.mark.parametrize("method", METHODS)
def test_1100_squaring_layers_give_a_verdict(method):
    m = squaring_model(1100)
    ident = Circuit.trace(lambda u: [[u[i][j] for j in range(4)] for i in range(4)], n=4, d=4)
    report, seconds = timed(m, ident, method=method, timeout=3)
    assert not report.proved and seconds < 3 + SLACK, (seconds, report)


# ---- 4. a weight sym("a")**(2**1030): OverflowError converting its degree to float ----


def test_scalar_rows_of_a_huge_power_are_not_usable():
    rows = scalar_rows([sym("a") ** (2**1030)])
    assert rows[0, 0] == math.inf and not usable(rows)


def test_affordable_takes_degrees_beyond_float_range():
    assert not affordable([[2]], {}, 2**1030)
    assert affordable([[1, -1, 0]], {}, 2**1030)


@pytest.mark.parametrize("method", METHODS)
def test_huge_power_of_a_weight_gives_a_verdict(method):
    c = Circuit.trace(lambda u: [u[0][0] * sym("a") ** (2**1030)], n=1, d=1)
    report, seconds = timed(c, THREE_X, method=method, timeout=2)
    assert not report.proved and seconds < 2 + SLACK, (seconds, report)
    assert len(str(report)) < 1000  # the 311-digit degree bound is printed abbreviated


# ---- 5. numeric=True: an output beyond float64 lost the verdict; the cross-check ignored the deadline ----


def test_numeric_cross_check_reports_a_float_overflow_and_keeps_the_verdict():
    pytest.importorskip("torch")
    c = squared_constant(11)  # 2^2048·x0: beyond float64
    report = verify(c, c, method="exact", numeric=True, timeout=60)
    assert report.proved
    assert report.numeric is not None and any("beyond the range of float64" in s for s in report.numeric.skipped)


def test_numeric_cross_check_is_skipped_when_exact_evaluation_is_too_large():
    c = squared_constant(25)  # a 2^25-bit coefficient: exact evaluation at the points is over budget
    report, _ = timed(c, c, method="exact", numeric=True, timeout=30)
    assert report.proved and report.numeric is None
    assert any("numeric cross-check skipped" in n for n in report.notes)


def test_numeric_cross_check_is_skipped_after_the_timeout():
    c = squared_constant(20)
    report, _ = timed(c, squared_constant(19), method="randomized", numeric=True, timeout=1e-9)
    assert not report.proved
    assert any("numeric cross-check skipped" in n for n in report.notes)


# ---- 7. reports with huge values: to_json took 368 s, str() minutes; 3328 inputs printed in full ----


@functools.lru_cache(maxsize=1)
def huge_report():
    from symverify.kernel.provers.outcome import Counterexample, Verdict, fields_text, seal
    from symverify.kernel.verification import Report

    x = (3 << 16_800_000) + 123_456_789  # 16.8 million bits, 5 million digits
    cex = Counterexample(inputs=((2,) + (0,) * 3326 + (-1,),), params=(), cell=(0, 0), lhs_value=x, rhs_value=1 - x,
                         found_by="exact")
    sealed = seal("Report", Verdict.REFUTED, "exact", Fraction(0), cex,  # as verify seals it (Report.SEALED)
                  fields_text(({"value": x}, {}, {}, (), 0, None)))
    return x, Report(Verdict.REFUTED, "exact", {"value": x}, cex, _seal=sealed)


def test_huge_report_prints_abbreviated_and_sparse_quickly():
    x, report = huge_report()
    t = time.monotonic()
    text = str(report)
    assert time.monotonic() - t < SLACK
    assert len(text) < 2000
    assert f"<{x.bit_length()}-bit integer ≡ {x % 10**9} mod 10^9>" in text
    assert "<1×3328, 2 nonzero: u[0][0]=2, u[0][3327]=-1>" in text


def test_huge_report_json_is_exact_and_linear(monkeypatch):
    import json

    from symverify.ir import limits
    from symverify.ir.bigint import parse_rational

    x, report = huge_report()
    t = time.monotonic()
    doc = json.loads(json.dumps(report.to_json()))
    assert time.monotonic() - t < SLACK
    cex = doc["counterexample"]
    assert cex["lhs_value"].startswith("0x") and doc["evidence"]["value"].startswith("0x")
    monkeypatch.setattr(limits, "MAX_INT_DIGITS", 6_000_000)  # documents stop at 100 000 digits; this is a report
    assert parse_rational(cex["lhs_value"]) == x and parse_rational(cex["rhs_value"]) == 1 - x


def test_digit_count_is_exact_near_powers_of_ten():
    from symverify.ir.bigint import digit_count

    for k in (480, 481, 1000, 4301):
        for v, n in ((10**k - 1, k), (10**k, k + 1), (10**k + 1, k + 1), (2 * 10**k, k + 1)):
            assert digit_count(v) == n == digit_count(-v)


# ---- 8. `symverify info /dev/zero` never returned: loaders read any file, without a byte limit ----


def _special_files(tmp_path):
    import os

    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    return {"/dev/zero": "a character device", str(fifo): "a FIFO", str(tmp_path): "a directory"}


@pytest.mark.skipif(sys.platform == "win32", reason="device files and FIFOs")
def test_cli_info_refuses_files_that_are_not_regular(tmp_path, capsys):
    from symverify.cli import main

    for path, kind in _special_files(tmp_path).items():
        t = time.monotonic()
        code = main(["info", path])
        err = capsys.readouterr().err
        assert code == 3 and time.monotonic() - t < SLACK
        assert err.startswith("symverify: error: ") and f"expected a regular file, found {kind}" in err and path in err


@pytest.mark.skipif(sys.platform == "win32", reason="device files and FIFOs")
def test_loaders_refuse_special_and_oversized_files(tmp_path, monkeypatch):
    from symverify.errors import SerializationError
    from symverify.ir import limits
    from symverify.ir.serialize import dump_file, load_file
    from symverify.scripts.runner import load_run

    for path in _special_files(tmp_path):
        for load in (load_file, load_run):
            with pytest.raises(SerializationError, match="expected a regular file"):
                load(path)
    good = tmp_path / "good.json"
    dump_file(THREE_X, good)
    assert load_file(good) == THREE_X
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", good.stat().st_size - 1)
    with pytest.raises(SerializationError, match=r"bytes is more than symverify.ir.limits.MAX_FILE_BYTES = \d+ bytes"):
        load_file(good)


# ---- 6. `prove --dir`: a script that exits but leaves a grandchild holding stdout hung the run ----

LINGERING = '''
import subprocess
import sys

from symverify.scripts.protocol import ProofResult, script_main

TITLE = "Leaves a grandchild holding stdout and stderr"


def run(quick=False):
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # inherits stdout and stderr
    raise RuntimeError("the script fails after starting a grandchild")


if __name__ == "__main__":
    raise SystemExit(script_main(run))
'''


@pytest.mark.skipif(sys.platform == "win32", reason="process groups")
def test_prove_dir_does_not_wait_for_a_lingering_grandchild(tmp_path):
    from symverify.scripts.runner import available, run_scripts

    d = tmp_path / "lingering"
    d.mkdir()
    (d / "lingering.py").write_text(LINGERING, encoding="utf-8")
    t = time.monotonic()
    summary = run_scripts(available([d]), ["lingering"], timeout=40)
    seconds = time.monotonic() - t
    row = summary.outcomes[0]
    assert seconds < 20, seconds  # the grandchild sleeps 60 s; the run ends when the script exits
    assert row.status == "crashed" and "timed out" not in row.error
    assert "the script fails after starting a grandchild" in row.error


@pytest.mark.skipif(sys.platform == "win32", reason="process groups")
def test_processes_kill_the_whole_group_on_timeout_and_after_exit(tmp_path):
    import os

    from symverify.scripts.tasks import Processes

    pidfile = tmp_path / "pid"
    spawn = (f"import subprocess, sys; p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
             f"open({str(pidfile)!r}, 'w').write(str(p.pid)); sys.stdout.write('started'); sys.stdout.flush()")
    for tail, timeout, expect in (("; sys.exit(1)", 30, 1), ("; import time; time.sleep(60)", 2, None)):
        t = time.monotonic()
        code, out, _, timed_out, _ = Processes().run([sys.executable, "-c", spawn + tail], tmp_path, timeout)
        assert time.monotonic() - t < timeout + SLACK and code == expect and out == "started"
        assert timed_out is (expect is None)
        grandchild = int(pidfile.read_text(encoding="utf-8"))
        for _ in range(50):  # killed with the group; reaped by init soon after
            try:
                os.kill(grandchild, 0)
            except ProcessLookupError:
                break
            with open(f"/proc/{grandchild}/stat") as fh:
                if fh.read().split(") ")[1].startswith("Z"):
                    break
            time.sleep(0.1)
        else:
            raise AssertionError("the grandchild outlived the run")

"""Coverage of ``symverify/kernel/provers/guard.py`` and ``z3_backend.py`` paths the suite never ran
in the measured process.

``z3_backend._solve``/``_decide`` and ``_rational`` always run in the guarded child of
:func:`~symverify.kernel.provers.guard.run_limited`, where coverage does not look; here they are
called in-process, and every verdict is checked against an independent oracle: ``proved`` against a
sympy expansion of both sides, ``refuted`` by evaluating both sides exactly at the returned
counterexample. ``guard._child`` itself only runs in the child (it redirects fds 1/2 and lowers
``RLIMIT_AS`` of its own process), so it is left to the child-process tests.
"""

from __future__ import annotations

import signal
from fractions import Fraction

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.provers import guard
from symverify.kernel.provers import z3_backend as zb
from symverify.kernel.provers.options import Options
from symverify.kernel.provers.sides import pair_sides
from symverify.kernel.semantics.rings import FractionRing
from symverify.kernel.verification import Verdict

z3 = pytest.importorskip("z3")


# ---- guard.py ----------------------------------------------------------------------------------


def test_vm_size_reads_proc_status() -> None:
    """guard.py ``_vm_size``: the address-space size the child's limit is added to; a reader that
    missed the ``VmSize`` line would return 0 and the child's limit would be the budget alone."""
    try:
        with open("/proc/self/status") as fh:
            has = any(line.startswith("VmSize:") for line in fh)
    except OSError:
        has = False
    if not has:
        pytest.skip("no /proc/self/status VmSize line on this system")
    assert guard._vm_size() > 1 << 20  # a Python process maps more than a MiB


def _output(data: bytes, keep: int = guard.OUTPUT_BYTES) -> guard._Output:
    """``data`` read as a child's output is, through a pipe, into an :class:`guard._Output`."""
    import os
    import threading

    r, w = os.pipe()
    out = guard._Output(r, keep)

    def write() -> None:
        os.write(w, data)
        os.close(w)

    writer = threading.Thread(target=write)
    writer.start()
    while not out.ended:
        out.read()
    writer.join()
    os.close(r)
    return out


def test_tail_quotes_the_last_two_lines() -> None:
    """guard.py ``_tail``: no output, no tail; else its last two non-empty lines, their last 200 characters."""
    assert guard._tail(_output(b"")) == ""
    assert guard._tail(_output(b"\n  first line\n\nsecond line\n  Unable   to allocate\n\n")) == ": second line Unable to allocate"
    assert guard._tail(_output(b"a" * 300 + b"z\n")) == ": …" + "a" * 198 + "z"  # the end kept, the cut marked


def test_tail_of_a_large_output_reads_its_end_and_says_what_was_cut() -> None:
    """guard.py ``_Output``, ``_tail``: of 4 MB, the first and last 32 KiB are kept, the line cut at
    the start of the end left out of the quote, FLINT's message quoted, the rest counted."""
    data = "é".encode() * 3 + b"noise " * 50 + b"\n" + (b"x" * 99 + b"\n") * 40_000 + \
        b"Exception (FLINT memory_manager). Unable to allocate memory (1234 bytes).\n"
    out = _output(data)
    assert len(out.head) + len(out.tail) == guard.OUTPUT_BYTES and out.cut == len(data) - guard.OUTPUT_BYTES
    assert guard._tail(out) == (": " + "x" * 99 + " Exception (FLINT memory_manager). Unable to allocate memory (1234 bytes)."
                                f"; its output was cut: {out.cut} bytes of {len(data)} left out (the first 32768 and last "
                                "32768 kept)")
    assert out.text().startswith("ééénoise") and out.text().endswith("(1234 bytes).\n")


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=5000), st.integers(0, 6000), st.lists(st.integers(1, 3000), min_size=1, max_size=8))
def test_output_keeps_its_head_and_tail_and_counts_the_rest(data, keep, sizes) -> None:
    """guard.py ``_Output``: however the output comes in pieces, the first ``keep // 2`` bytes and
    the last ``keep - keep // 2`` are kept, and exactly the bytes between them are counted as cut."""
    import os

    r, w = os.pipe()
    out = guard._Output(r, keep)
    rest, i = data, 0
    while rest:
        piece, rest = rest[:sizes[i % len(sizes)]], rest[sizes[i % len(sizes)]:]
        os.write(w, piece)
        out.drain()
        i += 1
    os.close(w)
    out.drain()
    os.close(r)
    head = data[:keep // 2]
    assert bytes(out.head) == head
    if len(data) <= keep:
        assert bytes(out.head + out.tail) == data and out.cut == 0
    else:
        assert bytes(out.tail) == data[len(data) - (keep - keep // 2):] and out.cut == len(data) - keep


def test_death_messages_name_the_cause() -> None:
    """guard.py ``_death``: a child killed by another signal than SIGABRT, and one that exited with a code."""
    assert "killed by signal 9 " in guard._death(-signal.SIGKILL, 100, "the expansion")
    assert "SIGABRT" in guard._death(-signal.SIGABRT, 100, "the expansion")
    msg = guard._death(3, 100, "the z3 query")
    assert msg.startswith("the process running the z3 query exited with code 3") and "100 bytes" in msg


def _raise_unpicklable() -> None:
    raise ValueError(lambda: 0)  # its argument cannot be pickled back to the parent


def test_unpicklable_child_error_is_reported() -> None:
    """guard.py ``run_limited``: the child's exception cannot be sent back, so its repr is: the
    caller still gets an error (never a result)."""
    with pytest.raises(RuntimeError, match=r"the process running the computation failed: ValueError\(<function"):
        guard.run_limited(_raise_unpicklable, (), memory=1 << 30, timeout=60)


# ---- z3_backend.py -----------------------------------------------------------------------------


def _distrib() -> tuple[Circuit, Circuit]:
    """``x0·(x1 + x2)`` and ``x0·x1 + x0·x2`` on a 1×3 input: equal polynomials, different terms."""
    a = Circuit(1, 3, (Gate.add(1, 2), Gate.mul(0, 3)), (4, 4, 4))
    b = Circuit(1, 3, (Gate.mul(0, 1), Gate.mul(0, 2), Gate.add(3, 4)), (5, 5, 5))
    return a, b


def _sympy_equal(a: Circuit, b: Circuit) -> bool:
    xs = sympy.symbols(f"x0:{a.num_inputs}")

    class R:
        falsy_is_zero = False
        zero = sympy.Integer(0)

        @staticmethod
        def coerce(x):
            return sympy.Rational(x.numerator, x.denominator) if isinstance(x, Fraction) else sympy.Integer(x)

        @staticmethod
        def reduce(x):
            return x

    from symverify.kernel.semantics.evaluate import eval_circuit

    u = [list(xs[i * a.d : (i + 1) * a.d]) for i in range(a.n)]
    pa, pb = eval_circuit(a, u, R()), eval_circuit(b, u, R())
    return all(sympy.expand(x - y) == 0 for ra, rb in zip(pa, pb) for x, y in zip(ra, rb))


def test_decide_unsat_is_proved_and_sympy_agrees() -> None:
    """z3_backend.py ``_decide``: different terms, z3 answers unsat, the verdict is proved; sympy's
    expansion is the oracle (a ``proved`` on the next test's pair would fail it)."""
    a, b = _distrib()
    assert _sympy_equal(a, b)
    res = zb._solve(*pair_sides(a, b), Options(), 2)
    assert res.verdict is Verdict.PROVED
    assert res.evidence["result"] == "unsat" and res.evidence["disequalities"] == 3


def test_decide_identical_terms() -> None:
    """z3_backend.py ``_decide``: the same circuit on both sides gives equal terms and no query."""
    a, _ = _distrib()
    res = zb._solve(*pair_sides(a, a), Options(), 2)
    assert res.verdict is Verdict.PROVED and res.evidence["result"] == "syntactically equal terms"


def test_decide_sat_gives_a_confirmed_counterexample() -> None:
    """z3_backend.py ``_decide`` and ``_rational``: sides that differ (``x0·x1 + x0·x2 + 1/2``); the
    model is rational and re-checked; the oracle evaluates both sides exactly at it."""
    a, _ = _distrib()
    b = Circuit(1, 3, (Gate.mul(0, 1), Gate.mul(0, 2), Gate.add(3, 4), Gate.const(Fraction(1, 2)), Gate.add(5, 6)),
                (7, 7, 7))
    assert not _sympy_equal(a, b)
    res = zb._solve(*pair_sides(a, b), Options(), 2)
    assert res.verdict is Verdict.REFUTED
    cex = res.counterexample
    assert cex is not None
    from symverify.kernel.semantics.evaluate import eval_circuit

    u = [list(row) for row in cex.inputs]
    va, vb = eval_circuit(a, u, FractionRing()), eval_circuit(b, u, FractionRing())
    i, j = cex.cell
    assert va[i][j] == cex.lhs_value and vb[i][j] == cex.rhs_value and va[i][j] != vb[i][j]


def test_rational_reads_int_and_rejects_irrational() -> None:
    """z3_backend.py ``_rational``: a model value that is an integer sort, and one that is algebraic
    (``sqrt 2``): the latter is not rational, so no exact re-check is attempted from it."""
    assert zb._rational(z3, z3.IntVal(-7)) == Fraction(-7)
    assert zb._rational(z3, z3.RealVal("3/4")) == Fraction(3, 4)
    x = z3.Real("x")
    s = z3.Solver()
    s.add(x * x == 2, x > 0)
    assert s.check() == z3.sat
    assert zb._rational(z3, s.model().eval(x)) is None


class _Expired(Options):
    """No deadline for the term builder, but none left for the solver."""

    def remaining(self) -> float | None:
        return -1.0


def test_decide_deadline_passed_before_the_query() -> None:
    """z3_backend.py ``_decide``: the deadline passes between building the terms and the query:
    ``unknown``, never a solver call without a time limit."""
    a, b = _distrib()
    res = zb._solve(*pair_sides(a, b), _Expired(), 2)
    assert res.verdict is Verdict.UNKNOWN and "deadline passed" in res.notes[0]


def test_solve_deadline_while_building_terms() -> None:
    """z3_backend.py ``_solve``: an already-passed deadline stops the interpreter (DeadlineExceededError)."""
    import time

    a, b = _distrib()
    res = zb._solve(*pair_sides(a, b), Options(deadline=time.monotonic() - 1.0), 2)
    assert res.verdict is Verdict.UNKNOWN and res.evidence == {"result": "timeout"}


def test_run_z3_degree_guard() -> None:
    """z3_backend.py ``run_z3``: a certified degree bound above MAX_Z3_DEGREE is refused before z3 runs."""
    a, b = _distrib()
    res = zb.run_z3(*pair_sides(a, b), Options(), degree=zb.MAX_Z3_DEGREE + 1)
    assert res.verdict is Verdict.UNKNOWN and res.evidence["degree_bound"] == zb.MAX_Z3_DEGREE + 1


def _differing() -> tuple[Circuit, Circuit]:
    a, _ = _distrib()
    b = Circuit(1, 3, (Gate.mul(0, 1), Gate.mul(0, 2), Gate.add(3, 4), Gate.const(Fraction(1, 2)), Gate.add(5, 6)),
                (7, 7, 7))
    return a, b


def test_decide_with_a_deadline_sets_the_solver_timeout() -> None:
    """z3_backend.py ``_decide``: with time left, the query runs under z3's own timeout and still decides."""
    import time

    a, b = _distrib()
    res = zb._solve(*pair_sides(a, b), Options(deadline=time.monotonic() + 120.0), 2)
    assert res.verdict is Verdict.PROVED and res.evidence["result"] == "unsat"


def test_irrational_model_falls_back_to_the_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """z3_backend.py ``_decide``: a model with a value that is not rational (simulated: every value
    reads as irrational) is not re-checked; the small-integer search finds a counterexample, which
    the oracle re-evaluates."""
    a, b = _differing()
    monkeypatch.setattr(zb, "_rational", lambda z3, v: None)
    res = zb._solve(*pair_sides(a, b), Options(), 2)
    assert res.verdict is Verdict.REFUTED
    cex = res.counterexample
    assert cex is not None and "search" in cex.found_by
    from symverify.kernel.semantics.evaluate import eval_circuit

    u = [list(row) for row in cex.inputs]
    i, j = cex.cell
    assert eval_circuit(a, u, FractionRing())[i][j] != eval_circuit(b, u, FractionRing())[i][j]


def test_sat_without_a_counterexample_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    """z3_backend.py ``_decide``: z3 says sat but neither its model nor the search gives an exactly
    re-checked counterexample: ``unknown``, never ``refuted`` on z3's word alone."""
    a, b = _differing()
    monkeypatch.setattr(zb, "_rational", lambda z3, v: None)
    monkeypatch.setattr(zb, "search_or_stop", lambda *args, **kw: None)
    res = zb._solve(*pair_sides(a, b), Options(), 2)
    assert res.verdict is Verdict.UNKNOWN and res.evidence["result"] == "sat"


def test_symbolic_weights_become_z3_parameters() -> None:
    """z3_backend.py ``Z3Ring.coerce`` (of a symbol): ``w·x0 + (2w²)·x1`` against the same sum
    written ``w·(x0 + 2w·x1)``: proved; with ``w²`` replaced by ``w`` the sides differ, and the
    refutation's parameter value is checked by exact evaluation (a coerce that dropped the exponents
    would prove the second pair)."""
    from symverify.kernel.ir.scalar import sym
    from symverify.kernel.semantics.evaluate import eval_circuit

    w = sym("w")
    a = Circuit(1, 2, (Gate.lin(0, w, 1, 2 * w * w),), (2, 2))
    b = Circuit(1, 2, (Gate.lin(0, 1, 1, 2 * w), Gate.const(w), Gate.mul(2, 3)), (4, 4))
    res = zb._solve(*pair_sides(a, b), Options(), 3)
    assert res.verdict is Verdict.PROVED and res.evidence["result"] == "unsat"
    c = Circuit(1, 2, (Gate.lin(0, w, 1, 2 * w),), (2, 2))
    res = zb._solve(*pair_sides(c, b), Options(), 3)
    assert res.verdict is Verdict.REFUTED and res.counterexample is not None
    cex = res.counterexample
    ring = FractionRing(cex.param_dict())
    u = [list(row) for row in cex.inputs]
    assert eval_circuit(c, u, ring)[0][0] != eval_circuit(b, u, ring)[0][0]

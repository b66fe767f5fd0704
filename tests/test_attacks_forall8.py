"""Attacks on the ∀-prover, round 8 (docs/forall.md §3): concurrency and the edges of the ranges."""

from __future__ import annotations

import itertools
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable

import pytest

pytest.importorskip("z3")

from symverify.kernel.ir.baseconv import Model
from symverify.kernel.ir.scalar import sym
from symverify.kernel.parametric.concrete import instantiate
from symverify.kernel.parametric.expr import Cond, ParametricError, fam, inp, ite, lt, pred, predicates, var, where
from symverify.kernel.parametric.gadget import Gadget, Param, PLayer, tap
from symverify.kernel.provers import forall
from symverify.kernel.provers.forall import prove_forall
from symverify.kernel.semantics.evaluate import eval_model
from symverify.kernel.semantics.rings import ScalarRing

i, q, N, d, s = (var(x) for x in "iqNds")
RANGES = (Param("N", 1, 2**40), Param("d", 1, 2**20), Param("s", 0, 2**40 - 1))


def _shift(lag: object) -> Gadget:
    return Gadget("shift", RANGES, N, d, (PLayer(b1=1, h=(tap(lag),), mode="cyclic"),), inp((i + N - s) % N, q),
                  where=lt(s, N))


_THREADS = textwrap.dedent("""
    import threading
    from symverify.kernel.parametric.expr import ParametricError, inp, lt, var
    from symverify.kernel.parametric.gadget import Gadget, Param, PLayer, tap
    from symverify.kernel.provers.forall import prove_forall

    i, q, N, d, s = (var(x) for x in "iqNds")
    R = (Param("N", 1, 2**40), Param("d", 1, 2**20), Param("s", 0, 2**40 - 1))

    def shift(lag, spec_row):
        return Gadget("shift", R, N, d, (PLayer(b1=1, h=(tap(lag),), mode="cyclic"),), inp(spec_row, q), where=lt(s, N))

    cases = [(shift(s, (i + N - s) % N), "proved"), (shift((s + 1) % N, (i + N - s) % N), "refuted"),
             (shift(s, i - s), "refused")]  # i - s is below 0 at i < s: refused, an exception in its thread
    bad = []
    for g, want in cases[:2]:  # z3 set up in the main thread first (else the first calls happened not to overlap)
        assert str(prove_forall(g).verdict) == want

    def work(g, want):
        for _ in range(6):
            try:
                got = str(prove_forall(g, timeout=60).verdict)
            except ParametricError:
                got = "refused"
            if got != want:
                bad.append((want, got))

    ts = [threading.Thread(target=work, args=c) for c in cases]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print("BAD", bad)
""")


def test_threads_proving_at_once_neither_crash_nor_hang() -> None:
    """z3's Python API shares one context, which is not thread-safe: three threads calling
    ``prove_forall`` at once (a proof, a refutation, a refusal) crashed the process with a segmentation
    fault or hung it past every timeout. The calls are decided one at a time; run in a child process so
    that a crash is a failed assertion here."""
    try:
        r = subprocess.run([sys.executable, "-c", _THREADS], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("three threads calling prove_forall at once hung")
    assert r.returncode == 0, f"crashed (rc {r.returncode}): {r.stderr[-2000:]}"
    assert "BAD []" in r.stdout, r.stdout[-2000:]


def test_a_call_waiting_for_another_threads_proof_is_unknown_at_its_deadline() -> None:
    """A call that cannot start before its budget runs out (another thread holds z3) is unknown, saying
    why; it is never decided beside the other one."""
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with forall._Z3_LOCK:
            held.set()
            release.wait(30)

    t = threading.Thread(target=hold)
    t.start()
    try:
        assert held.wait(30)
        r = prove_forall(_shift(s), timeout=0.2)
    finally:
        release.set()
        t.join()
    assert r.verdict == "unknown" and "another prove_forall" in r.detail, str(r)
    assert prove_forall(_shift(s)).verdict == "proved"


def test_a_refusal_keeps_its_message_and_lines() -> None:
    """The frames of a refusal are cleared of their z3 terms before the lock is released: the message
    and the traceback's lines stay."""
    with pytest.raises(ParametricError, match=r"undefined or out of range") as err:
        prove_forall(Gadget("sub", RANGES, N, d, (PLayer(b1=1, h=(tap(s),), mode="cyclic"),), inp(i - s, q), where=lt(s, N)))
    assert any(fr.name == "_decide" for fr in __import__("traceback").extract_tb(err.value.__traceback__))


def _keep() -> Gadget:
    """Proved: the output is the input wherever the placement keeps ``P`` false (``assume``), and twice it
    where ``P`` holds."""
    return Gadget("keep", (Param("N", 1, 2**20),), N, 1, (PLayer(b1=where(pred("P", i, q), 2, 1), h=(tap(0),), mode="cyclic"),),
                  inp(i, q), assume=~pred("P", i, q))


def _flaky() -> Callable[[int, int], bool]:
    """False at its first 4 reads (the check of ``assume`` at the 4 cells of a 4×1 state), true after."""
    calls = itertools.count()
    return lambda r, c: next(calls) >= 4


@pytest.mark.parametrize("how", ["placement", "block"])
def test_a_placement_is_built_from_the_answers_checked_against_assume(how: str) -> None:
    """A placement callable answering a point otherwise at a second read passed ``instantiate``'s check
    against ``assume`` (``P`` false at every cell) and built the layers from ``P`` true: output ``2·u``
    against the proved ``u``, an instance outside the ∀ theorem. Each point is now read once."""
    g = _keep()
    assert prove_forall(g).verdict == "proved"
    if how == "placement":
        layers = instantiate(g, {"N": 4}, placement={"P": _flaky()})
    else:
        with predicates({"P": _flaky()}):
            layers = instantiate(g, {"N": 4})
    model = Model(4, 1, 4, 1, layers)
    u = [[sym(f"u{r}")] for r in range(4)]
    assert eval_model(model, u, ScalarRing()) == u


def test_a_placement_read_once_still_refuses_a_violation_and_bad_answers() -> None:
    g = _keep()
    with pytest.raises(ParametricError, match=r"violates not P\(i, q\) at cell \(2, 0\)"):
        instantiate(g, {"N": 4}, placement={"P": lambda r, c: r == 2})
    with pytest.raises(ParametricError, match=r"placement P at \(0, 0\): expected True or False, found NoneType"):
        instantiate(g, {"N": 4}, placement={"P": lambda r, c: None})


class _Name(str):
    """A name spelling ``N``, a key of its own in a dict beside ``"N"``."""

    def __hash__(self) -> int:
        return 7

    def __eq__(self, other: object) -> bool:
        return other is self


@pytest.mark.parametrize("ranges", [[("N", (1, 5)), ("N", (3, 4))], {"N": (1, 5), _Name("N"): (3, 4)}],
                         ids=["list", "mapping"])
def test_a_range_given_twice_is_refused(ranges: object) -> None:
    """``prove_forall(g, ranges=[("N", (1, 5)), ("N", (3, 4))])`` kept the last range silently (and a
    ``str`` subclass spelling ``N`` beside ``"N"`` did the same in a mapping)."""
    with pytest.raises(ParametricError, match=r"ranges: parameter 'N' given twice; expected one range per parameter"):
        prove_forall(_shift(s), ranges=ranges)  # type: ignore[arg-type]
    assert prove_forall(_shift(s), ranges=[("N", (3, 4))]).ranges.startswith("N ∈ [3, 4]")


def test_a_family_member_has_one_value_in_an_instance() -> None:
    """``B[0]`` read on every channel (a tap's value): a callable drawing a new value at each read gave
    the member several values in one instance, which no value of the family ∀-proved about makes."""
    g = Gadget("bcast", (Param("d", 1, 8),), 1, d, (PLayer(W=(tap(q, fam("B", 0)),), h=(tap(0),), mode="cyclic"),),
               fam("B", 0) * inp(i, q) * inp(i, q), families={"B": (1,)})
    assert prove_forall(g).verdict == "proved"
    draws = itertools.count(1)
    (layer,) = instantiate(g, {"d": 3}, families={"B": lambda p: next(draws)})
    assert layer.W.nonzero() == {(c, c): 1 for c in range(3)}


def test_a_placement_failing_at_a_row_only_it_has_is_no_placement() -> None:
    """The state has ``ite(Z, N, N + 1)`` rows and ``assume = ¬Z ∧ i < N``: ``Z`` true fails ``¬Z`` at every
    cell and ``Z`` false fails ``i < N`` at the row only it has, so no placement exists at any size. The
    vacuity check counts a cell a placement lacks against it: so this is refused, and a true claim under
    ``assume = Z()`` on that state is refused too (a check cell by cell cannot tell the two apart)."""
    rows = ite(pred("Z"), N, N + 1)

    def g(assume: Cond) -> Gadget:
        return Gadget("zrows", (Param("N", 2, 2**20), Param("d", 1, 4)), rows, d, (PLayer(b1=1, h=(tap(0),), mode="cyclic"),),
                      inp(i, q), assume=assume)

    with pytest.raises(ParametricError, match=r"vacuous statement: its assumptions \(not Z\(\) and i < N\) hold for no placement"):
        prove_forall(g(~pred("Z") & lt(i, N)))
    with pytest.raises(ParametricError, match=r"vacuous statement: its assumptions Z\(\) hold for no placement"):
        prove_forall(g(pred("Z")))

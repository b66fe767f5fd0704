"""The compositional stage checks as Dask tasks: ``verify(..., scheduler=ADDRESS|"local")``.

Once the certificate fixes the boundaries, stage ``k`` (boundary ``k → k+1``, Lemma H.11) is a
claim about the layers ``[b_k.layer, b_{k+1}.layer)`` alone: it reads the circuit, the model and
its two boundaries, nothing another stage computes. So the stages are checked independently, on
any worker, and the proof is the conjunction of their results, exactly as in the one-process
loop of :func:`~symverify.kernel.provers.compositional.check_certificate`:

1. the certificate's structure is validated here (:func:`~symverify.kernel.provers.compositional.validate_certificate`);
2. the circuit is sent to every worker once (``scatter(broadcast=True)``); the model is not: each
   task carries only the layers its stages read (a :class:`LayerWindow`, at their own indices) and
   its boundaries, so a worker never holds the whole model (a model too large for one process's
   memory is checked by workers that each hold a part of it);
3. the stages are cut into contiguous runs of about equal layer count, ``4×`` as many runs as the
   cluster has threads (or ``stages_per_task`` stages each), and each run is one task
   (:func:`check_stages`): it checks its stages in order with
   :meth:`~symverify.kernel.provers.compositional.StageRun.stage` (the same planning, memory guard,
   isolation and deadline as locally) and stops at its first stage that does not prove; where
   coefficients may exceed :data:`~symverify.kernel.provers.exact.IN_PROCESS_BITS` bits (``verify``
   passes its bound, ``peak_height_bits``), the task runs them in a memory-limited child process
   (:func:`guarded_stages`), as the local check then runs whole in one;
4. each task answers with the symverify version it ran and the build of its trusted base
   (:func:`versioned_stages`, :func:`~symverify.kernel.build.build_identity`: a SHA-256 of ``symverify/kernel``'s source
   files, so an edited checkout or another development install under one version string is told
   apart): the stages a worker with another version or build checked rest on another trusted base,
   so they count as a stage that ``stopped`` (``"crashed"``, naming both versions or both builds),
   never as proved, and so does an answer of another shape, or one whose stages are not those of
   its run in order (:func:`_answered`);
5. the runs' outcomes are read in stage order and combined by
   :func:`~symverify.kernel.provers.compositional.combine`, the function the local loop uses, up to the first
   stage that did not prove; the runs after it are cancelled.

So the result (verdict, stages checked, first failing stage and cell, notes, and the ``digests`` of
the circuit and model, computed here from the objects given, never by a worker) is the local run's;
only the seconds differ. **Failures.** A task is retried once when it raises, and the scheduler
moves a task whose worker died to another one (its ``allowed-failures``; Dask's default is 3, and
the local cluster's too): a killed worker is survived. A run lost after that counts as a stage
that ``stopped`` (``"crashed"``, with the reason): the verdict is ``unknown``, never ``proved``.
An exception a task's stage check raised itself (twice: it is retried once) is raised to the
caller, as the local loop raises it (an internal error, exit 3 on the command line), never read as
``unknown``; a task that could not be loaded or run on its worker (a worker whose older symverify
lacks :func:`versioned_stages` fails to unpickle it: ``ImportError``, ``AttributeError``, a pickling
error) stops the check at its first stage, ``crashed`` with that error, ``unknown``. So does an
exception of the stage check that does not pickle (Dask sends ``Exception(repr(e))`` in its place,
unmarked): the note names its type and message
(:func:`~symverify.provers.dask_address.text_only_error`).
**Deadline.** The deadline is sent as wall-clock time and turned back into the worker's own
monotonic clock (so clocks that disagree shift it by their difference); the wait here stops at
the deadline too, waiting at most :data:`WAIT_SLICE` seconds at a time (a deadline beyond what one
wait can take, ``math.inf`` included, is waited for, never read as a lost task). A scheduler not
reached (connected, with a worker) by the deadline stops the check there with ``"timeout"``, as the
local check at its deadline; without a deadline, or before it, that is a ``UsageError``. With
``scheduler="local"`` starting the cluster's processes is not bounded by the deadline (seconds on
a loaded machine), and its workers are killed after :data:`~symverify.provers.dask_address.STOP_WAIT` s on
closing, so a check past its deadline ends about that much later.

Only this module imports ``distributed`` (``pip install 'symverify[dask]'``), and only when a
scheduler is given.
"""

from __future__ import annotations

import math
import pickle
import time
import uuid
import warnings
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from typing import Any, cast

import symverify._version
from symverify._version import __version__
from symverify.deadline import Deadline, DeadlineExceededError
from symverify.errors import UsageError
from symverify.ir.bigint import safe_repr
from symverify.kernel.build import build_identity
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.certificate import Boundary, Cell, Certificate
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.scalar import plain_index
from symverify.kernel.provers.compositional import (
    CompositionalResult,
    StageFailure,
    StageOutcome,
    StageRun,
    certificate_meta_note,
    check_settings,
    claim_digests,
    combine,
    validate_certificate,
)
from symverify.kernel.provers.exact import IN_PROCESS_BITS
from symverify.kernel.provers.options import DEFAULT_MAX_MONOMIALS
from symverify.kernel.semantics.poly import PolyBackend
from symverify.provers.dask_address import check_address, is_client, open_client, text_only_error

__all__ = ["build_identity", "check_address", "check_certificate_dask", "check_stages", "guarded_stages", "versioned_stages",
           "stage_runs", "pack", "unpack",
           "LayerWindow", "TASKS_PER_THREAD"]

TASKS_PER_THREAD = 4
"""Runs of stages per worker thread when ``stages_per_task`` is not given: enough to balance
stages of uneven cost, few enough that the ~1 ms of scheduling per task stays small."""

@contextmanager
def _client(scheduler: Any, workers: int | None, timeout: float) -> Iterator[Any]:
    """A client for ``scheduler``: the given ``distributed.Client`` (left open), or a new one for an
    address or scheduler file, or a LocalCluster of ``workers`` one-thread processes (default: the
    cores) for ``"local"``; new ones are closed on exit. Waits ``timeout`` s for a worker."""
    if is_client(scheduler):
        yield scheduler
        return
    with open_client(scheduler, workers, timeout, wait_for=1) as client:
        yield client


def stage_runs(bs: Sequence[Boundary], tasks: int, stages_per_task: int | None = None) -> list[tuple[int, int]]:
    """Contiguous stage ranges ``[a, b)`` covering every stage of the boundaries ``bs``: with
    ``stages_per_task``, that many stages each; else about ``tasks`` runs of about equal layer
    count (a stage's check costs about its layers × the state size), never an empty run.

    >>> from symverify.kernel.ir.certificate import Boundary
    >>> stage_runs([Boundary(layer=k, cells=()) for k in (0, 1, 2, 10, 11)], 2)
    [(0, 3), (3, 4)]
    """
    total = len(bs) - 1
    if total <= 0:
        return []
    if stages_per_task is not None:
        return [(a, min(a + stages_per_task, total)) for a in range(0, total, stages_per_task)]
    layers = bs[-1].layer - bs[0].layer
    share = max(layers / max(tasks, 1), 1e-9)
    runs: list[tuple[int, int]] = []
    a = 0
    for k in range(total):
        if k + 1 == total or bs[k + 1].layer - bs[a].layer >= share * 0.999:
            runs.append((a, k + 1))
            a = k + 1
    return runs


@dataclass(frozen=True)
class LayerWindow:
    """The layers ``[lo, lo + len(window))`` of a model, read at their own indices: what a stage
    check reads of the model (``model.layers[b0.layer:b1.layer]``, ``inner_n``, ``inner_d``), so
    one task's stages are checked, with the same layer numbers in every outcome and note, without
    the rest of the model. A slice reaching outside the window raises ``IndexError`` (never a
    silently shorter list)."""

    inner_n: int
    inner_d: int
    lo: int
    window: tuple[Layer, ...]

    @property
    def layers(self) -> _Window:
        return _Window(self.lo, self.window)

    @staticmethod
    def of(model: Model, lo: int, hi: int) -> LayerWindow:
        """The layers ``[lo, hi)`` of ``model``."""
        return LayerWindow(model.inner_n, model.inner_d, lo, tuple(model.layers[lo:hi]))


@dataclass(frozen=True)
class _Window:
    lo: int
    window: tuple[Layer, ...]

    def __getitem__(self, s: slice) -> tuple[Layer, ...]:
        if not isinstance(s, slice) or s.step not in (None, 1) or s.start is None or s.stop is None:
            raise IndexError(f"a layer window is read by [lo:hi] slices only, found {s!r}")
        a, b = s.start - self.lo, s.stop - self.lo
        if not 0 <= a <= b <= len(self.window):
            raise IndexError(f"layers [{s.start}, {s.stop}) are outside this window "
                             f"[{self.lo}, {self.lo + len(self.window)})")
        return self.window[a:b]


_Packed = tuple[tuple[int, str, tuple[tuple[int, int, Any, Any], ...]], ...]


def pack(bs: Sequence[Boundary]) -> bytes:
    """Boundaries as the pickle of plain tuples ``(layer, label, ((row, col, terms, const), …))``:
    made in a fraction of the time the frozen slotted dataclasses take (their pickling looks
    their fields up per object), and opaque bytes that Dask does not walk looking for futures."""
    plain: _Packed = tuple((b.layer, b.label, tuple((c.row, c.col, c.terms, c.const) for c in b.cells)) for b in bs)
    return pickle.dumps(plain, protocol=pickle.HIGHEST_PROTOCOL)


def unpack(packed: bytes) -> tuple[Boundary, ...]:
    """The boundaries :func:`pack` took apart. Their cells were validated (and their terms
    normalised) when the certificate was made and again by ``validate_certificate`` before any
    task, so they are rebuilt field by field without running the validation a third time."""
    new, put = object.__new__, object.__setattr__
    out = []
    plain: _Packed = pickle.loads(packed)  # bytes made by pack() in the process that submitted the task
    for layer, label, cells in plain:
        rebuilt = []
        for row, col, terms, const in cells:
            c = new(Cell)
            put(c, "row", row)
            put(c, "col", col)
            put(c, "terms", terms)
            put(c, "const", const)
            rebuilt.append(c)
        out.append(Boundary(layer, tuple(rebuilt), label))
    return tuple(out)


def check_stages(circuit: Circuit, model: Model | LayerWindow, first: int, packed: bytes, last_stage: int,
                 run: StageRun, wall_deadline: float | None) -> list[StageOutcome]:
    """One task: the stages ``first, first + 1, …`` whose boundaries are ``packed`` (:func:`pack`;
    one more than the stages), in order, up to the first that does not prove; ``last_stage`` is
    the certificate's final stage (its read-out rule). ``model`` is the model or the
    :class:`LayerWindow` of the layers these stages read. ``wall_deadline`` (``time.time()``)
    becomes this process's monotonic deadline."""
    bounds = unpack(packed)
    if isinstance(model, LayerWindow):  # the stage check reads only layers, inner_n and inner_d
        model = cast(Model, model)
    deadline = None if wall_deadline is None else time.monotonic() + (wall_deadline - time.time())
    run = replace(run, deadline=deadline)
    check = Deadline.at(deadline)
    shapes: dict[Any, Any] = {}
    out = []
    for j in range(len(bounds) - 1):
        k = first + j
        o = run.stage(circuit, model, k, bounds[j], bounds[j + 1], k == last_stage, check, shapes)
        out.append(o)
        if not o.ok:
            break
    return out


def guarded_stages(circuit: Circuit, model: Model | LayerWindow, first: int, packed: bytes, last_stage: int,
                   run: StageRun, wall_deadline: float | None) -> list[StageOutcome]:
    """:func:`check_stages` in a child process limited to ``run.memory`` bytes and the deadline
    (:func:`~symverify.kernel.provers.guard.run_limited`), as the local check runs whole where
    coefficients may exceed :data:`~symverify.kernel.provers.exact.IN_PROCESS_BITS` bits: a FLINT
    abort or an exhausted memory ends that child, never the worker. A child that does not answer
    stops the run at its first stage (``timeout``, or the child's status with its detail)."""
    from symverify.kernel.provers.guard import run_limited

    remaining = None if wall_deadline is None else max(wall_deadline - time.time(), 0.0)
    n = len(unpack(packed)) - 1
    lim = run_limited(check_stages, (circuit, model, first, packed, last_stage, run, wall_deadline), memory=run.memory,
                      timeout=remaining, what=f"the check of stages [{first}, {first + n})")
    if lim.status == "ok":
        return cast(list[StageOutcome], lim.value)
    if lim.status == "timeout":
        return [StageOutcome(first, stopped="timeout", note="timeout")]
    return [StageOutcome(first, stopped=lim.status, note=(
        f"stages [{first}, {first + n}) ran in a memory-limited process (their coefficients may exceed "
        f"2^{IN_PROCESS_BITS.bit_length() - 1} bits) that stopped ({lim.status}): {lim.detail}"))]


def versioned_stages(circuit: Circuit, model: Model | LayerWindow, first: int, packed: bytes, last_stage: int,
                     run: StageRun, wall_deadline: float | None,
                     guard: bool = False) -> tuple[str, str, list[StageOutcome]]:
    """The task a worker runs: :func:`check_stages` (:func:`guarded_stages` with ``guard``), with the
    version of symverify that ran it and its trusted base's
    :func:`~symverify.kernel.build.build_identity` (both read when it
    runs, in the worker's process), for the caller to compare with its own. The build is read
    before the check, outside what marks its errors (:data:`RAISED_HERE`): a worker that cannot read
    its kernel's sources ran no stage check of a known build, and the caller stops at ``unknown``."""
    check = guarded_stages if guard else check_stages
    build = build_identity()
    try:
        return symverify._version.__version__, build, check(circuit, model, first, packed, last_stage, run, wall_deadline)
    except Exception as e:  # the stage check's own error: marked, so the caller raises it (see _collect)
        try:
            setattr(e, RAISED_HERE, True)
        except Exception:  # an exception without attributes stays unmarked: a task not run, unknown
            pass
        raise


RAISED_HERE = "_symverify_stage_task_raised"
"""The attribute :func:`versioned_stages` sets on an exception its stage check raised (it travels
with the exception's pickled ``__dict__``): an error a future raises without it did not come from
the stage check of this version (the task could not be loaded or run on the worker: an older
symverify without :func:`versioned_stages`, a pickle that does not load there), and stops the
check as ``unknown``, never raised and never proved."""


def check_certificate_dask(circuit: Circuit, model: Model, cert: Certificate, *, scheduler: Any = "local",
                           workers: int | None = None, backend: PolyBackend = "flint", deadline: float | None = None,
                           max_monomials: int = DEFAULT_MAX_MONOMIALS, memory_limit: int | None = None,
                           isolate: bool | None = None, stages_per_task: int | None = None,
                           connect_timeout: float = 10.0, peak_height_bits: int | None = None) -> CompositionalResult:
    """:func:`~symverify.kernel.provers.compositional.check_certificate` with the stages run as Dask
    tasks on ``scheduler`` (see the module docstring): the same result, the seconds apart (its
    ``meta_note`` too, when the certificate's ``meta`` names another circuit).

    ``peak_height_bits`` (a bound on the coefficient bits the stages can meet, as ``verify`` knows
    it: :func:`~symverify.kernel.provers.certified.stage_peak_bits`): beyond
    :data:`~symverify.kernel.provers.exact.IN_PROCESS_BITS`, unless ``isolate=False``, each task
    checks its stages in a child process limited to ``memory_limit`` bytes (:func:`guarded_stages`),
    the rule of the local check, which then runs whole in such a child: stages are planned by monomial
    counts, blind to coefficient size, so a huge constant would otherwise abort the worker (and,
    retried, the next ones) instead of ending as ``unknown``. None (a direct call) guards nothing,
    as :func:`~symverify.kernel.provers.compositional.check_certificate` called directly.

    Raises:
        IRError: the certificate is structurally malformed (checked here, before any task).
        UsageError: a bad ``scheduler``, ``workers`` or ``stages_per_task``, or a setting
            :func:`~symverify.kernel.provers.compositional.check_settings` refuses (``workers`` with another
            scheduler than ``"local"``, which it would not size); no connection or no
            worker within ``connect_timeout`` seconds (with a ``deadline`` before that, the wait
            stops there and the result is stopped by ``"timeout"``); a ``connect_timeout`` that is no
            positive finite number of seconds; ``distributed`` not installed.
    """
    check_address(scheduler)
    deadline, max_monomials, memory_limit, isolate = check_settings(deadline, max_monomials, memory_limit, isolate)
    connect_timeout = _seconds(connect_timeout)
    workers, stages_per_task = plain_index(workers), plain_index(stages_per_task)  # type: ignore[assignment]
    for what, value in (("workers", workers), ("stages_per_task", stages_per_task)):
        if value is not None and (type(value) is not int or value < 1):
            raise UsageError(f"{what}: expected a positive int, found {value!r}")
    if workers is not None and not (isinstance(scheduler, str) and scheduler == "local"):
        raise UsageError(f"workers={workers}: the size of the local cluster, for scheduler='local' only; a running "
                         f"scheduler's workers are its own (found scheduler {safe_repr(scheduler, 60)})")
    start = time.perf_counter()
    check = Deadline.at(deadline)
    try:
        validate_certificate(circuit, model, cert, check)
    except DeadlineExceededError:  # check_certificate's answer: a timeout before stage 0, not an exception
        digests = claim_digests(circuit, model)
        return combine([StageOutcome(0, stopped="timeout", note="timeout")], cert.num_stages, time.perf_counter() - start,
                       digests=digests, meta_note=certificate_meta_note(circuit, cert, digests[0]))
    digests = claim_digests(circuit, model)  # what the check is about: the local check's digests, computed here once
    note = certificate_meta_note(circuit, cert, digests[0])  # the local check's advisory note, the same
    run = StageRun.of(circuit, model, backend=backend, deadline=None, max_monomials=max_monomials,
                      memory_limit=memory_limit, isolate=isolate)
    guard = peak_height_bits is not None and peak_height_bits > IN_PROCESS_BITS and isolate is not False
    bs = cert.boundaries
    total = len(bs) - 1
    wall = None if deadline is None else time.time() + (deadline - time.monotonic())
    with ExitStack() as stack:
        wait = connect_timeout if check is None else min(connect_timeout, max(check.remaining(), 0.001))
        try:
            client = stack.enter_context(_client(scheduler, workers, wait))
        except UsageError:  # not connected by the deadline: the check stopped there, as the local one would
            if check is not None and check.expired():
                return combine([StageOutcome(0, stopped="timeout", note="timeout")], total, time.perf_counter() - start,
                               digests=digests, meta_note=note)
            raise
        threads = sum(int(w.get("nthreads", 1)) for w in client.scheduler_info().get("workers", {}).values()) or 1
        runs = stage_runs(bs, TASKS_PER_THREAD * threads, stages_per_task)
        (fc,) = client.scatter([circuit], broadcast=True, hash=False)
        token = uuid.uuid4().hex[:12]
        with warnings.catch_warnings():
            # Each task carries its layers and boundaries inside the graph on purpose: the scheduler
            # keeps them, so a killed worker's task can run again elsewhere (scattered data would
            # die with its worker). Dask's hint about large graphs is expected here, not a problem.
            warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
            futures = [client.submit(versioned_stages, fc, LayerWindow.of(model, bs[a].layer, bs[b].layer), a,
                                     pack(bs[a:b + 1]), total - 1, run, wall, guard, pure=False, retries=1,
                                     key=f"symverify-stages-{token}-{a}-{b}") for a, b in runs]
        try:
            outcomes = _collect(futures, runs, deadline)
        finally:  # an error a task raised is raised here too: the other runs are not waited for
            client.cancel(futures)
    return combine(outcomes, total, time.perf_counter() - start, digests=digests, meta_note=note)


def _seconds(timeout: object) -> float:
    """``connect_timeout`` as a float: a positive finite number of seconds (the rule of ``verify``'s
    ``timeout``, :func:`~symverify.kernel.provers.options.timeout_seconds`, without ``math.inf``: the
    wait for a scheduler ends); anything else is a :class:`UsageError` naming it, never handed to
    Dask, whose complaint would read as a failed connection."""
    from symverify.kernel.provers.options import timeout_seconds

    t = timeout_seconds(timeout)
    f = None if t is None or (type(t) is int and t.bit_length() > 1023) else float(t)
    if f is None or f == math.inf:
        raise UsageError(f"connect_timeout: expected a positive finite number of seconds, found {safe_repr(timeout, 60)}")
    return f


def _collect(futures: list[Any], runs: list[tuple[int, int]], deadline: float | None) -> list[StageOutcome]:
    """The runs' outcomes in stage order, up to the first stage that did not prove: a run lost for
    good (its workers died, ``KilledWorker``; the future cancelled or its connection lost), or still
    running at the deadline, stops there (``crashed`` / ``timeout``), and so does a run a worker with
    another symverify version or build answered, or answered malformed (``crashed``: :func:`_answered`), and a
    task that could not be loaded or run on its worker (the future erred with an exception not marked
    :data:`RAISED_HERE`: an ``ImportError`` or ``AttributeError`` unpickling the task on a worker
    whose symverify lacks :func:`versioned_stages`, a pickling error). An exception the stage check
    itself raised (on its retry too; marked by :func:`versioned_stages`) is raised here, as the local
    loop raises it: an error in a stage check is an error wherever it runs, never hidden as ``unknown``."""
    from distributed import KilledWorker
    from distributed import TimeoutError as DaskTimeout

    outcomes: list[StageOutcome] = []
    for fut, (a, b) in zip(futures, runs):
        try:
            answer = _result(fut, deadline)
        except (DaskTimeout, TimeoutError):
            outcomes.append(StageOutcome(a, stopped="timeout", note="timeout"))
            break
        except Exception as e:  # a lost worker (after the scheduler's retries), or a task that raised twice
            erred = getattr(fut, "status", None) == "error" and not isinstance(e, KilledWorker)
            if erred and getattr(e, RAISED_HERE, False) is True:
                raise  # the stage check's own exception (twice): the local check raises it too
            why = " ".join(str(e).split())[:300] or "no detail"
            text = text_only_error(e) if erred else None
            if text is not None:  # an exception that does not pickle: Dask sent its text only, unmarked
                kind, said = (" ".join(t.split())[:300] for t in text)
                outcomes.append(StageOutcome(a, stopped="crashed", note=(
                    f"stages [{a}, {b}) ran as a Dask task that raised {kind}: {said or 'no message'} (on its worker; "
                    "an exception that does not pickle, so Dask sent only its text and it is not raised here); "
                    "the check did not finish")))
                break
            outcomes.append(StageOutcome(a, stopped="crashed", note=(
                f"stages [{a}, {b}) ran as a Dask task that could not be loaded or run on its worker "
                f"({type(e).__name__}: {why}); is the same symverify installed on every worker? "
                "the check did not finish") if erred else (
                f"stages [{a}, {b}) ran as a Dask task that was lost ({type(e).__name__}: {why}); "
                "the check did not finish")))
            break
        part = _answered(answer, a, b)
        if isinstance(part, str):
            outcomes.append(StageOutcome(a, stopped="crashed", note=part))
            break
        outcomes.extend(part)
        if not part[-1].ok:
            break
    return outcomes


def _answered(answer: Any, a: int, b: int) -> list[StageOutcome] | str:
    """The outcomes of stages ``[a, b)`` in a task's ``answer``, or why it is not taken (the note
    of a stage ``stopped`` as ``"crashed"``). Taken is only what :func:`versioned_stages` of this
    version and build returns: a triple (this version's string, this process's
    :func:`~symverify.kernel.build.build_identity`, a list of :class:`StageOutcome`) whose outcomes
    are stages ``a, a + 1, …`` in order (a failure, where given, a :class:`StageFailure` of its
    stage; a stop reason text), not past ``b - 1``, every one proved but the last, and the
    last proved only at ``b - 1`` (a run stops at its first stage that does not prove). Another
    version or build, another shape, a stage of another run, a stage left out or a short answer is refused
    here: :func:`~symverify.kernel.provers.compositional.combine` raised ``ProverError`` (or an
    ``AttributeError`` escaped) on some of them, and no such answer is evidence."""
    where = f"stages [{a}, {b}) ran as a Dask task"
    if (type(answer) is tuple or type(answer) is list) and len(answer) == 2 and not (type(answer[0]) is str and answer[0] == __version__):
        answer = (answer[0], None, answer[1])  # (version, outcomes) of a worker before builds: named by its version
    if not (type(answer) is tuple or type(answer) is list) or len(answer) != 3:
        return (f"{where} whose answer is malformed: expected (version, build, outcomes), found "
                f"{safe_repr(answer, 60)}; the check did not finish")
    version, build, part = answer
    if type(version) is not str or version != __version__:
        return (f"stages [{a}, {b}) ran on a worker with symverify {' '.join(str(version).split())[:40]}, this process "
                f"has {__version__}: those checks rest on another version's trusted base, so they are not taken; "
                "install one version on every worker")
    mine = build_identity()
    if type(build) is not str or build != mine:
        theirs = build[:12] if type(build) is str and build else safe_repr(build, 40)
        return (f"stages [{a}, {b}) ran on a worker whose trusted base (symverify/kernel) is build {theirs}, this "
                f"process's is build {mine[:12]} (both symverify {__version__}): those checks rest on another "
                "build's trusted base (an edited checkout, another development install), so they are not taken; "
                "install one build on every worker")
    why = ""
    if type(part) is not list or not part:
        why = f"expected a non-empty list of stage outcomes, found {safe_repr(part, 60)}"
    else:
        for j, o in enumerate(part):
            if type(o) is not StageOutcome:
                why = f"expected a stage outcome at place {j}, found {safe_repr(o, 60)}"
            elif type(o.stage) is not int or o.stage != a + j or o.stage >= b:
                why = f"expected stage {a + j} at place {j}" + (f" (the run ends at stage {b - 1})" if a + j >= b else "") \
                      + f", found stage {safe_repr(o.stage, 40)}"
            elif o.failure is not None and (type(o.failure) is not StageFailure or o.failure.stage != o.stage):
                why = f"stage {o.stage} failed with {safe_repr(o.failure, 60)}, no failure of that stage"
            elif o.stopped is not None and type(o.stopped) is not str:
                why = f"stage {o.stage} stopped by {safe_repr(o.stopped, 40)}, no reason in words"
            elif j < len(part) - 1 and not o.ok:
                why = f"stage {o.stage} did not prove, yet the answer goes on"
            if why:
                break
        else:
            if part[-1].ok and part[-1].stage != b - 1:
                gone = part[-1].stage + 1
                why = (f"stage {gone} is missing" if gone == b - 1 else f"stages {gone} to {b - 1} are missing") \
                    + f" (the answer ends at stage {part[-1].stage}, proved)"
    return f"{where} whose answer is malformed: {why}; the check did not finish" if why else part


WAIT_SLICE = 3600.0
"""The longest single wait for a task's result, in seconds: a deadline further away (``math.inf``,
a ``timeout`` of 10^10 s) is waited for in slices of this length, since one wait that long is
refused by Dask and the threading clock (``threading.TIMEOUT_MAX``, about 292 years)."""


def _result(fut: Any, deadline: float | None) -> Any:
    """The result of the future ``fut``, waited for until the ``time.monotonic()`` ``deadline``
    (None: no limit) in waits of at most :data:`WAIT_SLICE` seconds; raises ``TimeoutError`` once
    the deadline has passed with the task unfinished, or what the task raised."""
    from distributed import TimeoutError as DaskTimeout

    while True:
        left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
        try:
            return fut.result(timeout=None if left is None else min(left, WAIT_SLICE))
        except (DaskTimeout, TimeoutError):
            if left is None or left <= WAIT_SLICE or fut.done():  # the deadline, or the task's own error
                raise

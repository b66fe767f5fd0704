"""The *compositional* method (docs/theory.md §5) as a verification method with a verdict.

:func:`symverify.kernel.provers.compositional.check_certificate` proves ``model ≡ circuit`` stage by stage
(Lemma H.11) from an untrusted stage certificate. When every stage checks, the verdict is
``proved``. When a stage fails, the failure alone proves nothing (the certificate may be wrong
about a correct model), so a counterexample is searched for: found → ``refuted`` with the first
failing stage named; not found → ``unknown`` with the failing stage. Never ``proved`` on failure.

Guarantees: ``opts.deadline`` is polled inside every stage and during the counterexample search,
so the method returns within milliseconds of it (one polynomial operation, or the start of a
memory-limited process, excepted); no stage is expanded in this process unless its certified size
is small (larger stages run in a child process limited to ``opts.memory()`` bytes, or are refused
beyond ``STAGE_REFUSE_FACTOR × opts.max_monomials``), so a coarse certificate gives ``unknown``
with a note, never a FLINT abort (:func:`~symverify.kernel.provers.compositional.check_certificate`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from fractions import Fraction
from itertools import pairwise
from typing import Any

from symverify.deadline import DeadlineExceededError
from symverify.kernel.ir.baseconv import Model
from symverify.kernel.ir.certificate import Certificate
from symverify.kernel.ir.scalar import Sym
from symverify.kernel.provers import outcome
from symverify.kernel.provers.compositional import certificate_meta_note, check_certificate
from symverify.kernel.provers.counterexample import search_or_stop, stopped_note
from symverify.kernel.provers.exact import IN_PROCESS_BITS, bits_text
from symverify.kernel.provers.guard import run_limited
from symverify.kernel.provers.options import Options
from symverify.kernel.provers.outcome import MethodResult, UsageError
from symverify.kernel.provers.sides import CircuitSide, ModelSide, Side, certificate_of

__all__ = ["run_compositional", "certified_pair", "meta_circuit_note", "stage_peak_bits", "large_number_bits",
           "SHORT_STAGE_LAYERS", "SHORT_WEIGHT_BITS"]


def certified_pair(lhs: Side, rhs: Side) -> tuple[CircuitSide, ModelSide] | None:
    """``(circuit side, model side with its certificate)``, or None if the pair has none."""
    match lhs, rhs:
        case (CircuitSide() as c, ModelSide(certificate=Certificate()) as m):
            return c, m
        case (ModelSide(certificate=Certificate()) as m, CircuitSide() as c):
            return c, m
        case _:
            return None


def meta_circuit_note(lhs: Side, rhs: Side) -> str | None:
    """For a (circuit, model with a certificate) pair, the note of
    :func:`~symverify.kernel.provers.compositional.certificate_meta_note` (the certificate's ``meta``
    names another circuit, by name or digest); None without such a pair. ``verify`` asks for it only
    under a method that reads the certificate (``compositional``, ``auto``): another checks no stage.
    It changes no verdict."""
    pair = certified_pair(lhs, rhs)
    if pair is None:
        return None
    circuit, model = pair
    cert = model.certificate
    return certificate_meta_note(circuit.obj, cert) if isinstance(cert, Certificate) else None


SHORT_STAGE_LAYERS = 8
"""Stages of at most this many layers cannot square a value into a huge coefficient: each layer at
most doubles the bits (plus a weight's), so 8 layers of weights within the file limits stay
below ``2^28``-bit coefficients."""


SHORT_WEIGHT_BITS = IN_PROCESS_BITS >> (SHORT_STAGE_LAYERS + 1)
"""The largest weight or certificate coefficient (bits of a numerator, denominator or symbol's
coefficient) that :data:`SHORT_STAGE_LAYERS` layers cannot raise past
:data:`~symverify.kernel.provers.exact.IN_PROCESS_BITS` by size alone: ``k`` layers of
``(x·W)·(h ⊛ x)`` raise a number to at most the power ``2^(k+1) − 2 < 2^9`` (``2^11`` bits)."""


def _bits(x: Any) -> int:
    """Bits of the largest integer an exact scalar stores (an int, a Fraction's numerator or
    denominator, a symbol's coefficients)."""
    if isinstance(x, Sym):
        return max((_bits(co) for _, co in x.terms), default=0)
    if isinstance(x, Fraction):
        return max(x.numerator.bit_length(), x.denominator.bit_length())
    return int(x).bit_length()


def large_number_bits(model: Model, cert: Certificate) -> int:
    """A size estimate for stages over large numbers: 0 when every weight of ``model`` and every
    coefficient and constant of ``cert`` has at most :data:`SHORT_WEIGHT_BITS` bits; else ``b``,
    the most bits of one, times ``2^(SHORT_STAGE_LAYERS + 1)`` (the power a short stage can raise it
    to), which is above :data:`~symverify.kernel.provers.exact.IN_PROCESS_BITS`: the certificate
    check then runs in the memory-limited child (:func:`run_compositional`). Models and
    certificates read from files stay below it (:data:`~symverify.ir.limits.MAX_INT_DIGITS`); one
    built in Python may not, and :func:`stage_peak_bits` reads the circuit alone for short stages."""
    from symverify.kernel.provers.bounds import _model_rects

    small = 1 << SHORT_WEIGHT_BITS  # an int strictly between -small and small has at most SHORT_WEIGHT_BITS bits
    most = 0
    for x in _model_rects(model).values:
        if not (type(x) is int and -small < x < small):
            most = max(most, _bits(x))
    for b in cert.boundaries:
        for c in b.cells:
            k = c.const
            if not (type(k) is int and -small < k < small):
                most = max(most, _bits(k))
            for _, co in c.terms:
                if not (type(co) is int and -small < co < small):
                    most = max(most, _bits(co))
    return most << (SHORT_STAGE_LAYERS + 1) if most > SHORT_WEIGHT_BITS else 0


def stage_peak_bits(circuit: Side, model: Side, opts: Options) -> int:
    """A bound on the coefficient bits the certificate check can meet, without the model's bounds
    pass where that is not needed: the circuit's peak height (a stage expands circuit values from
    its frontier: a constant squared 64 times would be computed there), and, when a stage spans
    more than :data:`SHORT_STAGE_LAYERS` layers, the model's as well (the pair's
    :func:`~symverify.kernel.provers.bounds.structure_bounds`, under the deadline)."""
    from symverify.kernel.provers.bounds import structure_bounds

    bits = structure_bounds(circuit, circuit, deadline=opts.checker()).peak_height_bits
    cert = certificate_of(model)
    bs = cert.boundaries if cert is not None else ()
    if max((b1.layer - b0.layer for b0, b1 in pairwise(bs)), default=0) > SHORT_STAGE_LAYERS:
        bits = max(bits, structure_bounds(circuit, model, deadline=opts.checker()).peak_height_bits)
    return bits


def _check_all(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """:func:`check_certificate` (the target of the memory-limited child process)."""
    return check_certificate(*args, **kwargs)


def run_compositional(lhs: Side, rhs: Side, opts: Options, *, degree: int | Callable[[], int] = 1,
                      peak_height_bits: int | None = None,
                      sizes: Callable[[], tuple[int, int]] | None = None) -> MethodResult:
    """Check the certificate; on failure search for a counterexample (see the module docstring).

    ``peak_height_bits`` (the pair's :class:`~symverify.kernel.provers.bounds.Bounds`, as ``auto`` knows
    them; else :func:`stage_peak_bits`; at least :func:`large_number_bits`, so a weight or a
    certificate coefficient of more than :data:`SHORT_WEIGHT_BITS` bits counts): where values may have coefficients of more than
    :data:`~symverify.kernel.provers.exact.IN_PROCESS_BITS` bits, the whole certificate check runs in the
    memory-limited child process (:func:`~symverify.kernel.provers.guard.run_limited`; unless
    ``isolate=False``), since stages are sized by monomial counts, which do not see coefficient
    size (a coarse certificate over a constant squared 64 times would abort this process); a stage
    planned into its own memory-limited process runs in one there too. ``sizes`` (``(peak height
    bits, peak degree)`` of the pair's :func:`~symverify.kernel.provers.bounds.structure_bounds`, as
    ``verify``'s lazily computed bounds give them) is handed to the counterexample search after a
    failed stage, which otherwise computes the same pass of the same two sides again. With a scheduler the same
    rule holds per task: each checks its stages in such a child on its worker
    (:func:`~symverify.kernel.provers.stages_dask.check_certificate_dask`).

    Raises:
        UsageError: the pair is not (circuit, model with a certificate).
        IRError: the certificate is structurally malformed for this circuit and model.
    """
    pair = certified_pair(lhs, rhs)
    if pair is None:
        found = f"{lhs.kind} and {rhs.kind}"
        if certificate_of(lhs) is None and certificate_of(rhs) is None:
            found += " without a certificate"
        raise UsageError(
            "method 'compositional' needs a circuit and a model with a stage certificate "
            f"(certificate= or a compiled object); found {found}"
        )
    circuit, model = pair
    start = time.perf_counter()
    if peak_height_bits is None:
        peak_height_bits = stage_peak_bits(circuit, model, opts)
    if isinstance(model.certificate, Certificate):  # always (certified_pair); read for the type
        peak_height_bits = max(peak_height_bits, large_number_bits(model.obj, model.certificate))
    backend = opts.backend if opts.backend in ("flint", "sympy") else "flint"
    args = (circuit.obj, model.obj, model.certificate)
    kwargs = dict(backend=backend, deadline=opts.deadline, max_monomials=opts.max_monomials,
                  memory_limit=opts.memory_limit, isolate=opts.isolate)
    if opts.scheduler is not None:  # the same stage checks as Dask tasks, the same result
        from symverify.kernel.provers.stages_dask import check_certificate_dask

        res = check_certificate_dask(*args, scheduler=opts.scheduler, peak_height_bits=peak_height_bits, **kwargs)  # type: ignore[arg-type]
    elif peak_height_bits is not None and peak_height_bits > IN_PROCESS_BITS and opts.isolate is not False:
        remaining = opts.remaining()
        # the stages the plan isolates get their own child there too (run_limited starts one from a
        # daemonic process): the same stages isolated, and the same outcome, as with a scheduler
        lim = run_limited(_check_all, (args, kwargs), memory=opts.memory(),
                          timeout=None if remaining is None else max(remaining, 0.0), what="the certificate check")
        if lim.status != "ok":
            return outcome.unknown("compositional", {"peak_height_bits": bits_text(peak_height_bits), "ran": "subprocess"},
                                   notes=(f"certificate check stopped ({lim.status}): {lim.detail}",),
                                   timings={"stages": time.perf_counter() - start})
        res = lim.value
    else:
        res = check_certificate(*args, **kwargs)  # type: ignore[arg-type]
    secs = time.perf_counter() - start
    ev: dict[str, Any] = {
        "stages_checked": res.stages_checked,
        "stages_total": res.stages_total,
        "max_stage_layers": res.max_stage_layers,
        "monomials_compared": res.monomials,
        "backend": backend,
        "largest_stage_estimate": res.largest_estimate,
        "stages_isolated": res.stages_isolated,
    }
    if res.ok:
        return outcome.proved("compositional", ev, timings={"stages": secs})
    if res.failure is None:
        ev["stopped"] = res.stopped
        why = "timeout" if res.stopped == "timeout" else "; ".join(res.notes) or "stopped"
        return outcome.unknown("compositional", ev, notes=(f"certificate check stopped ({why}) after "
                                                                          f"{res.stages_checked} of {res.stages_total} stages",),
                            timings={"stages": secs})
    failure = str(res.failure)
    ev["failed_stage"] = res.failure.stage
    ev["failure"] = failure

    def unknown(why: str) -> MethodResult:
        return outcome.unknown("compositional", ev, notes=(f"the certificate does not check ({failure}) and {why}",),
                            timings={"stages": secs})

    late = "the timeout ran out before a counterexample was found"
    if opts.expired():
        return unknown(late)
    try:
        deg = degree() if callable(degree) else degree
    except DeadlineExceededError:
        return unknown(late)
    try:
        cex = search_or_stop(lhs, rhs, opts, found_by="compositional (search after a failed stage)", degree=deg, stage=failure,
                             sizes=None if sizes is None else sizes())
    except DeadlineExceededError as e:  # the timeout, or a confirmation child's memory limit or crash
        return unknown(stopped_note(opts, e, "while a counterexample was searched for"))
    if cex is not None:
        return outcome.refuted("compositional", ev, cex, timings={"stages": secs})
    return unknown(late if opts.expired() else "no counterexample was found")

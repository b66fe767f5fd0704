"""Prove a fragment's claim: compositionally (its stage certificate) and by exact polynomials.

:func:`prove_fragment` builds the standalone circuit/model/certificate of
:func:`symverify.kernel.gadgets.fragment.standalone` and checks it twice, independently:

* *compositional*: :func:`symverify.kernel.provers.compositional.check_certificate` proves every stage on
  fresh variables, including the clean entry/exit interfaces (all unlisted cells are 0);
* *exact*: the model's and the spec circuit's output polynomials (in the whole state and every
  weight symbol) are expanded in one ring and compared entry by entry, under the exact method's
  guard (:mod:`symverify.kernel.provers.exact`): in this process when the certified size bounds
  are small, in a memory-limited child process when they are large, not at all (``exact`` None,
  the reason in ``failure``) beyond the budget, so that a deep fragment cannot exhaust memory.

Both are exact; a fragment is proved when both hold (:attr:`FragmentProof.verdict`). The prover
modules are imported inside the function, so importing :mod:`symverify.gadgets` does not load them.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING

from symverify.errors import IRError, ProverError, UsageError
from symverify.ir.bigint import safe_repr
from symverify.kernel.gadgets.fragment import Fragment, standalone
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.provers.fingerprint import content_digest
from symverify.kernel.provers.outcome import Sealed, Verdict, exact_comparison, seal_outcome

if TYPE_CHECKING:
    from symverify.kernel.ir.certificate import Certificate
    from symverify.kernel.provers.compositional import CompositionalResult
    from symverify.kernel.provers.options import Options

__all__ = ["FragmentProof", "prove_fragment"]

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


@dataclass(frozen=True)
class FragmentProof(Sealed):
    """The outcome of :func:`prove_fragment`; ``failure`` says what did not hold.

    ``compositional``: the certificate checked; ``exact``: the exact polynomials are equal (None
    when not compared); anything but a bool (or None for ``exact``) raises :class:`ProverError`, and
    so do a checked certificate with differing polynomials (both checks are exact: their
    disagreement is a defect, never a verdict).
    :attr:`verdict` combines them. The hash leaves out ``resources`` and ``bounds`` (dicts);
    ``==`` and the hash leave out ``seconds`` (the time taken, not sealed): two runs of one proof compare equal.
    ``digests`` names what was proved: the digests of the fragment's spec circuit and model as the
    provers check them (:func:`~symverify.kernel.provers.fingerprint.content_digest` of
    :func:`~symverify.kernel.gadgets.fragment.standalone`'s circuit and model), set by
    :func:`prove_fragment` and sealed with the rest (None: an outcome made otherwise states none).
    """

    name: str
    compositional: bool
    exact: bool | None
    failure: str = ""
    seconds: float = field(default=0.0, compare=False)
    resources: dict[str, int] = field(default_factory=dict, hash=False)
    bounds: dict[str, int | Fraction] = field(default_factory=dict, hash=False)
    digests: tuple[str, str] | None = field(default=None, kw_only=True)
    _seal: str = field(default="", init=False, repr=False, compare=False)  # set by seal_outcome
    SEALED = ("name", "compositional", "exact", "failure", "resources", "bounds", "digests")  # all but the time

    def __post_init__(self) -> None:
        d = self.digests
        if d is not None and not (type(d) is tuple and len(d) == 2
                                  and all(type(h) is str and _DIGEST.fullmatch(h) for h in d)):
            raise ProverError(f"fragment proof {self.name!r}: digests: expected None or (circuit, model) digests "
                              f"'sha256:<64 hex digits>', found {d!r:.100}")
        if type(self.compositional) is not bool or not (self.exact is None or type(self.exact) is bool):
            raise ProverError(f"fragment proof {self.name!r}: expected compositional a bool and exact a bool or None, found "
                              f"{type(self.compositional).__name__} {self.compositional!r:.40} and "
                              f"{type(self.exact).__name__} {self.exact!r:.40}")
        if self.compositional and self.exact is False:
            raise ProverError(f"fragment proof {self.name!r}: the certificate check held but the exact polynomials differ "
                              f"({self.failure or 'no detail'}); two exact checks disagree, which is a prover defect: "
                              "expected them to agree")

    @property
    def proved(self) -> bool:
        return self.compositional and self.exact is not False

    @property
    def verdict(self) -> Verdict:
        """``PROVED`` when both checks hold (the exact one when it ran); ``REFUTED`` when the exact
        polynomials differ (a difference of canonical polynomials, not a re-checked counterexample;
        the certificate check then failed too);
        ``UNKNOWN`` when only the certificate check failed (a certificate may be wrong about a
        correct model)."""
        if self.proved:
            return exact_comparison(True)
        return exact_comparison(False if self.exact is False else None)

    @property
    def ok(self) -> bool:
        """Proved and within every stated bound."""
        return self.proved and all(self.resources.get(k, b + 1) <= b for k, b in self.bounds.items())


def prove_fragment(frag: Fragment, *, exact: bool = True, backend: str = "flint", timeout: float | None = None,
                   max_monomials: int | None = None, memory_limit: int | None = None) -> FragmentProof:
    """Check ``frag``'s claim for all clean inputs (and all values of its weight symbols).

    ``frag`` must be a :class:`Fragment` itself (else :class:`IRError`): a subclass could answer
    :meth:`~Fragment.resources` or :meth:`~Fragment.spec` otherwise than the layers proved; so must
    its fields be as its constructor makes them (:func:`_check_fields`), the fields that
    :meth:`~Fragment.resources` counts.

    The budget is the exact method's (``verify(..., method="exact")``), for both checks together:
    ``timeout`` seconds (default: none), ``max_monomials`` per polynomial (default
    :data:`~symverify.kernel.provers.options.DEFAULT_MAX_MONOMIALS`) and ``memory_limit`` bytes for
    a check run in a child process (default: a quarter of physical memory), each checked as
    ``verify`` checks it (:class:`~symverify.errors.UsageError`). A check the budget stops is not
    decided: the certificate check's ``compositional`` is False, the exact comparison's ``exact``
    None, and ``failure`` says which stopped and why. The verdict is ``unknown`` when the certificate
    check did not hold; when it held and only the exact comparison stopped, the verdict is ``proved``
    by the certificate alone (a compositional proof), ``exact`` None and the reason in ``failure``.

    >>> from symverify.gadgets.primitives import shift_down
    >>> prove_fragment(shift_down(3, 1, 1)).proved
    True
    """
    if type(frag) is not Fragment:  # a subclass could state other resources, or another spec, than it is proved on
        sub = " (a subclass is not accepted)" if isinstance(frag, Fragment) else ""
        raise IRError(f"prove_fragment: expected a Fragment, found {type(frag).__name__}{sub}")
    _check_fields(frag)
    if type(exact) is not bool:
        raise UsageError(f"prove_fragment exact: expected True or False, found {type(exact).__name__} {exact!r:.40}")
    from symverify.kernel.provers.options import Options

    opts = Options.from_call("exact", backend=backend, timeout=timeout, max_monomials=max_monomials, memory_limit=memory_limit)
    start = time.perf_counter()
    circuit, model, cert = standalone(frag)
    comp = _check_certificate(circuit, model, cert, opts, memory_limit)
    if comp.ok:
        failure = ""
    elif comp.failure is not None:
        failure = f"certificate: {comp.failure}"
    else:
        failure = f"certificate: check stopped ({comp.stopped}): {'; '.join(comp.notes)}"
    same: bool | None = None
    if exact:
        same, note = (None, "exact: not compared (the timeout passed)") if opts.expired() else _compare_exactly(circuit, model, opts)
        if note:
            failure = (failure + "; " if failure else "") + note
    # the certificate check names the pair it checked by these digests (claim_digests); only the
    # checker's code has run on this pair since, so they are the pair's digests now
    digests = comp.digests if comp.digests is not None else (content_digest(circuit), content_digest(model))
    return seal_outcome(FragmentProof(frag.name, comp.ok, same, failure, time.perf_counter() - start, frag.resources(),
                                      dict(frag.bounds), digests=digests))



def _check_certificate(circuit: Circuit, model: Model, cert: Certificate, opts: Options,
                       memory_limit: int | None) -> CompositionalResult:
    """:func:`~symverify.kernel.provers.compositional.check_certificate` under the rule of the
    ``compositional`` method (:func:`~symverify.kernel.provers.certified.run_compositional`): where
    coefficients may exceed :data:`~symverify.kernel.provers.exact.IN_PROCESS_BITS` bits
    (:func:`~symverify.kernel.provers.certified.stage_peak_bits`,
    :func:`~symverify.kernel.provers.certified.large_number_bits`), the whole check runs in the
    memory-limited child, and a child that stops is a check stopped for its reason (never proved)."""
    from symverify.deadline import DeadlineExceededError
    from symverify.kernel.provers import guard
    from symverify.kernel.provers.certified import _check_all, large_number_bits, stage_peak_bits
    from symverify.kernel.provers.compositional import StageOutcome, check_certificate, claim_digests, combine
    from symverify.kernel.provers.exact import IN_PROCESS_BITS
    from symverify.kernel.provers.sides import CircuitSide, ModelSide

    kwargs = dict(backend=opts.backend, deadline=opts.deadline, max_monomials=opts.max_monomials, memory_limit=memory_limit)
    start = time.perf_counter()
    try:
        bits = max(stage_peak_bits(CircuitSide(circuit, circuit.n, circuit.d), ModelSide(model, model.n, model.d, cert), opts),
                   large_number_bits(model, cert))
    except DeadlineExceededError:
        stop = StageOutcome(0, stopped="timeout", note="timeout")
    else:
        if bits <= IN_PROCESS_BITS or opts.isolate is False:
            return check_certificate(circuit, model, cert, **kwargs)  # type: ignore[arg-type]
        remaining = opts.remaining()
        lim = guard.run_limited(_check_all, ((circuit, model, cert), kwargs), memory=opts.memory(),
                                timeout=None if remaining is None else max(remaining, 0.0), what="the certificate check")
        if lim.status == "ok":
            return lim.value  # type: ignore[no-any-return]
        stop = StageOutcome(0, stopped=lim.status, note=lim.detail if lim.status != "timeout" else "timeout")
    return combine([stop], cert.num_stages, time.perf_counter() - start, digests=claim_digests(circuit, model))


def _check_fields(frag: Fragment) -> None:
    """Refuse (:class:`IRError`) a fragment whose name, sizes, layers or interfaces are not in the
    form its constructor gives them: a plain ``str``, plain ``int`` sizes, a ``tuple`` of
    :class:`Layer` objects, ``frozenset`` interfaces. :meth:`Fragment.resources` counts those fields
    and the proof states the count; a field set after construction (``object.__setattr__`` skips the
    checks) could count otherwise than the layers proved (a tuple whose ``len`` says 1 for three)."""
    fields = (("name", str), ("inner_n", int), ("inner_d", int), ("layers", tuple), ("entry", frozenset), ("exit", frozenset))
    bad = [name for name, kind in fields if type(getattr(frag, name)) is not kind]
    if not bad and any(type(layer) is not Layer for layer in frag.layers):
        bad = ["layers"]
    if bad:
        found = ", ".join(f"{name}: {type(getattr(frag, name)).__name__}" for name in bad)
        raise IRError(f"prove_fragment: fragment {safe_repr(frag.name, 60)}: expected its fields as its constructor makes "
                      f"them (name a str, sizes ints, layers a tuple of Layers, interfaces frozensets), found {found} "
                      "(a field set after construction?)")


def _compare_exactly(circuit: Circuit, model: Model, opts: Options) -> tuple[bool | None, str]:
    """Whether the model's and the circuit's expanded polynomials are equal (None: not compared),
    and a note: the first differing cell, or why the comparison did not run. The exact method's
    guard decides where the expansion runs (see the module docstring)."""
    from symverify.kernel.provers.bounds import structure_bounds
    from symverify.kernel.provers.exact import _too_large, bits_text, expand_guarded
    from symverify.kernel.provers.guard import Limited
    from symverify.kernel.provers.sides import as_side

    lhs, rhs = as_side(model, "fragment model"), as_side(circuit, "fragment spec")
    bounds = structure_bounds(lhs, rhs)
    refused = _too_large(bounds, opts)
    if refused is not None:
        return None, f"exact: not compared ({refused})"
    out, _ = expand_guarded(lhs, rhs, opts, bounds, 0, isolate=None, what="the expansion of the fragment")
    if isinstance(out, Limited):
        return None, (f"exact: expansion stopped ({out.status}) in a process limited to {opts.memory()} bytes "
                      f"(certified estimate {bounds.peak_monomials} monomials, {bits_text(bounds.peak_height_bits)} bits): {out.detail}")
    if out.verdict is Verdict.UNKNOWN:
        return None, f"exact: expansion stopped ({out.stopped}): {out.detail}"
    if out.verdict is Verdict.PROVED:
        return True, ""
    return False, f"exact: cell {out.cell} differs (model − spec is {out.difference})"

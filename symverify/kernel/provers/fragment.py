"""Prove a fragment's claim: compositionally (its stage certificate) and by exact polynomials.

:func:`prove_fragment` builds the standalone circuit/model/certificate of
:func:`symverify.kernel.gadgets.fragment.standalone` and checks it twice, independently:

* *compositional*: :func:`symverify.kernel.provers.compositional.check_certificate` proves every stage on
  fresh variables, including the clean entry/exit interfaces (all unlisted cells are 0);
* *exact*: the model's and the spec circuit's output polynomials (in the whole state and every
  weight symbol) are expanded in one ring and compared entry by entry.

Both are exact; a fragment is proved when both hold (:attr:`FragmentProof.verdict`). The prover
modules are imported inside the function, so importing :mod:`symverify.gadgets` does not load them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction

from symverify.errors import IRError, ProverError, UsageError
from symverify.kernel.gadgets.fragment import Fragment, standalone
from symverify.kernel.provers.outcome import Verdict, exact_comparison, seal_outcome

__all__ = ["FragmentProof", "prove_fragment"]


@dataclass(frozen=True)
class FragmentProof:
    """The outcome of :func:`prove_fragment`; ``failure`` says what did not hold.

    ``compositional``: the certificate checked; ``exact``: the exact polynomials are equal (None
    when not compared); anything but a bool (or None for ``exact``) raises :class:`ProverError`.
    :attr:`verdict` combines them. The hash leaves out ``resources`` and ``bounds`` (dicts).
    """

    name: str
    compositional: bool
    exact: bool | None
    failure: str = ""
    seconds: float = 0.0
    resources: dict[str, int] = field(default_factory=dict, hash=False)
    bounds: dict[str, int | Fraction] = field(default_factory=dict, hash=False)
    _seal: str = field(default="", init=False, repr=False, compare=False)  # set by seal_outcome

    def __post_init__(self) -> None:
        if type(self.compositional) is not bool or not (self.exact is None or type(self.exact) is bool):
            raise ProverError(f"fragment proof {self.name!r}: expected compositional a bool and exact a bool or None, found "
                              f"{type(self.compositional).__name__} {self.compositional!r:.40} and "
                              f"{type(self.exact).__name__} {self.exact!r:.40}")

    @property
    def proved(self) -> bool:
        return self.compositional and self.exact is not False

    @property
    def verdict(self) -> Verdict:
        """``PROVED`` when both checks hold (the exact one when it ran); ``REFUTED`` when the exact
        polynomials differ (a difference of canonical polynomials, not a re-checked counterexample);
        ``UNKNOWN`` when only the certificate check failed (a certificate may be wrong about a
        correct model)."""
        if self.proved:
            return exact_comparison(True)
        return exact_comparison(False if self.exact is False else None)

    @property
    def ok(self) -> bool:
        """Proved and within every stated bound."""
        return self.proved and all(self.resources.get(k, b + 1) <= b for k, b in self.bounds.items())


def prove_fragment(frag: Fragment, *, exact: bool = True, backend: str = "flint") -> FragmentProof:
    """Check ``frag``'s claim for all clean inputs (and all values of its weight symbols).

    >>> from symverify.gadgets.primitives import shift_down
    >>> prove_fragment(shift_down(3, 1, 1)).proved
    True
    """
    from symverify.kernel.provers.compositional import check_certificate
    from symverify.kernel.semantics.poly import polynomials, shared_ring

    if not isinstance(frag, Fragment):
        raise IRError(f"prove_fragment: expected a Fragment, found {type(frag).__name__}")
    if type(exact) is not bool:
        raise UsageError(f"prove_fragment exact: expected True or False, found {type(exact).__name__} {exact!r:.40}")
    start = time.perf_counter()
    circuit, model, cert = standalone(frag)
    comp = check_certificate(circuit, model, cert, backend=backend)  # type: ignore[arg-type]
    failure = "" if comp.ok else f"certificate: {comp.failure}"
    same: bool | None = None
    if exact:
        ring = shared_ring(circuit, model, backend=backend)  # type: ignore[arg-type]
        got, want = polynomials(model, ring), polynomials(circuit, ring)
        same = got == want
        if not same:
            cell = next((i, j) for i in range(len(got)) for j in range(len(got[0])) if got[i][j] != want[i][j])
            failure = (failure + "; " if failure else "") + f"exact: cell {cell} differs: model {got[cell[0]][cell[1]]}, spec {want[cell[0]][cell[1]]}"
    return seal_outcome(FragmentProof(frag.name, comp.ok, same, failure, time.perf_counter() - start, frag.resources(), dict(frag.bounds)))


"""Adapters from the matrix and fragment provers to proof-script instances.

Each adapter runs no check of its own: it copies a prover's verdict, the construction's resources
and the bounds its result states into a :class:`~symverify.scripts.protocol.Instance`.
"""

from __future__ import annotations

from fractions import Fraction

from symverify.errors import UsageError
from symverify.kernel.gadgets.fragment import Fragment
from symverify.kernel.kaleidoscope.factorization import Factorization
from symverify.kernel.parametric.gadget import Gadget
from symverify.kernel.provers.fingerprint import content_digest
from symverify.kernel.provers.fragment import prove_fragment
from symverify.kernel.provers.matrix import KaleidoscopeCheck
from symverify.scripts.protocol import Instance

__all__ = ["kaleidoscope_instance", "fragment_instance", "forall_instance"]


def kaleidoscope_instance(name: str, f: Factorization, check: KaleidoscopeCheck, seconds: float = 0.0) -> Instance:
    """The matrix prover's ``check`` of ``f`` as an instance: its verdict, the factorization's
    resources and the bounds its theorem states.

    Raises:
        UsageError: ``f`` is no :class:`Factorization` (exactly: a subclass could answer its
            resources and its kaleidoscope otherwise), or ``check`` was made on another kaleidoscope
            than ``f``'s (other sizes ``n``, ``N`` or ``w``, or other content: the check's sealed
            digest of what it checked differs from ``f.kaleidoscope``'s): its verdict is not about
            ``f``, whose resources the instance would record; or ``f``'s resources ``w``, ``N``, ``n``,
            ``e`` are not its kaleidoscope's (a kaleidoscope set after construction by
            ``object.__setattr__``: the resources stated would be another kaleidoscope's).
    """
    if type(f) is not Factorization:
        sub = " (a subclass of Factorization: its resources may not be its kaleidoscope's)" if isinstance(f, Factorization) else ""
        raise UsageError(f"kaleidoscope instance {name!r}: expected a Factorization, found {type(f).__name__}{sub}")
    k = f.kaleidoscope
    stated = tuple(f.resources.get(key) for key in ("w", "N", "n", "e"))
    if stated != (k.width, k.size, k.n, k.expansion):  # the resources are read off the kaleidoscope when made
        raise UsageError(f"kaleidoscope instance {name!r}: the factorization's resources state (w, N, n, e) = "
                         f"{tuple(map(str, stated))}, its kaleidoscope has {tuple(map(str, (k.width, k.size, k.n, k.expansion)))} "
                         "(a kaleidoscope set after construction?): the instance would record resources of another kaleidoscope")
    if isinstance(check, KaleidoscopeCheck) and (check.n, check.size, check.width) != (f.kaleidoscope.n, f.N, f.w):
        raise UsageError(f"kaleidoscope instance {name!r}: the check is of a kaleidoscope with n={check.n}, N={check.size}, "
                         f"w={check.width}; the factorization has n={f.kaleidoscope.n}, N={f.N}, w={f.w} "
                         "(a check of another kaleidoscope, with these resources recorded)")
    if isinstance(check, KaleidoscopeCheck) and check.digests is not None and check.digests[0] != content_digest(f.kaleidoscope):
        raise UsageError(f"kaleidoscope instance {name!r}: the check is of another kaleidoscope of the same sizes "
                         f"(digest {check.digests[0]}, the factorization's {content_digest(f.kaleidoscope)})")
    return Instance.from_report(name, check, resources=f.resources, bounds=f.bounds, seconds=seconds, detail=str(check))


def fragment_instance(frag: Fragment, name: str | None = None, bounds: dict[str, int | Fraction] | None = None, *, exact: bool = True) -> Instance:
    """Prove ``frag`` (:func:`~symverify.kernel.provers.fragment.prove_fragment`) and report it as an
    instance.

    The verdict is the proof's (:attr:`~symverify.kernel.provers.fragment.FragmentProof.verdict`):
    ``proved`` when both checks hold, ``refuted`` when the exact polynomials differ, and
    ``unknown`` when only the certificate check failed. ``bounds`` add to the fragment's own; where
    both bound a resource the smaller holds, so a script's bound never loosens the fragment's.
    """
    p = prove_fragment(frag, exact=exact)
    method = "compositional+exact" if exact else "compositional"
    merged = dict(p.bounds)
    for key, value in (bounds or {}).items():
        merged[key] = min(merged[key], value) if key in merged else value
    return Instance.from_report(name or frag.name, p, method=method, resources=p.resources, bounds=merged,
                                seconds=p.seconds, detail=p.failure)



def forall_instance(gadget: Gadget, timeout_s: float = 60.0) -> Instance:
    """The ∀ row of a proof script: :func:`~symverify.kernel.provers.forall.prove_forall` on a parametric
    gadget (within ``timeout_s``), named with the ranges it holds for (method ``z3``; a refutation is
    re-checked by instantiating the gadget). The detail of a proof states its hypotheses (the gadget's
    ``entry`` and ``assume`` where not true), which the name leaves out."""
    from symverify.kernel.provers.forall import prove_forall

    r = prove_forall(gadget, timeout_s=timeout_s)
    detail = (f"given {r.hypotheses}" if r.hypotheses else "") if r.proved else str(r)
    return Instance.from_report(f"∀ {gadget.name}: {r.ranges}", r, method="z3", resources={"layers": len(gadget.layers)},
                                seconds=r.seconds, detail=detail)

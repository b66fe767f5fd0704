"""Mutation campaign: no verification method may prove a pair that differs.

Run ``python benchmarks/mutation_campaign.py [--quick] [--timeout S] [--jobs J] [--z3-max-cost C]``.
Circuits from :mod:`symverify.library` are compiled by both compilers (``dense`` and
``kaleidoscope``); then :mod:`symverify.mutate` makes single-change mutants, one family at a time:

* ``weight/<compiler>``: one weight (or one layer's mode) of the compiled model changes; the pair is
  ``(circuit, mutant model)`` and the methods that take a certificate get the *original* one, so a
  stale certificate must not carry the mutant through;
* ``gate``: one gate of the circuit changes (op, coefficient, operand, output order); the pair is
  ``(mutant circuit, original compiled model with its certificate)``, or the original circuit for
  every third mutant;
* ``certificate``: one interior cell of the certificate changes, on the original model or on a
  single-weight mutant (only ``compositional`` and ``auto`` read certificates).

Each (mutant, method) with ``verify(..., timeout=S)`` is classified against ground truth from this
file's own reference interpreter (docs/theory.md §1–§2 written out again, independent of
``symverify.semantics``) run over sympy's polynomial ring (independent of the flint engine):

* ``refuted``: the counterexample was confirmed twice, by ``sv.evaluate`` and by the reference
  interpreter in Fraction arithmetic (the stated entry differs and both values are as claimed);
* ``proved (invisible)``: the mutant computes the same polynomials, so ``proved`` is right;
* ``unknown (differs)`` / ``unknown (invisible)``; ``rejected``: ``IRError``/``UsageError`` (e.g. a
  certificate that no longer names the circuit's outputs); ``error``: any other exception (a crash
  of ``verify``);
* ``FALSE PROOF``: proved although the polynomials differ; ``BAD CEX``: a refutation whose
  counterexample does not re-check. Either, or any ``error``, makes the exit status 1
  (:attr:`Summary.ok` is false) and is listed after the tables.

It prints a table per method (rows: mutant families), the totals and the run's time. ``--quick`` is
the CI tier (a few seconds; ``tests/test_soundness_properties.py`` runs it through
:func:`run_campaign`); the full tier makes over 1000 weight and gate mutants from 17 circuits.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import symverify as sv
from symverify import library, mutate
from symverify.errors import IRError, UsageError
from symverify.kernel.ir.baseconv import Mode, Model
from symverify.kernel.ir.certificate import Certificate
from symverify.kernel.ir.circuit import Circuit, Op
from symverify.kernel.ir.scalar import Scalar, Sym

METHODS = ("exact", "compositional", "randomized", "z3", "auto")
TORCH = "randomized-torch"  # the randomized method forced onto its torch engine (full tier, when torch is installed)
CLASSES = ("refuted", "proved (invisible)", "unknown (differs)", "unknown (invisible)", "rejected", "error",
           "FALSE PROOF", "BAD CEX")
COMPILERS = ("dense", "kaleidoscope")
Z3_MAX_COST = 4000  # z3 runs on pairs whose one evaluation costs at most this (Side.cost of both sides)


# ---- the reference interpreter (independent of symverify.semantics) ---------------------------


def _ref_model(m: Model, u: Sequence[Sequence[Any]], scalar: Callable[[Scalar], Any], zero: Any) -> list[list[Any]]:
    """``y = (x·W + b1) ⊙ (h ⊛ x + b2)`` layer by layer on the ``N'×d'`` state (docs/theory.md §1)."""
    nn, dd = m.inner_n, m.inner_d
    x = [[zero] * dd for _ in range(nn)]
    for i in range(m.n):
        for j in range(m.d):
            x[i][j] = u[i][j]
    for layer in m.layers:
        proj = [[scalar(v) for v in row] for row in layer.b1.to_rows()]
        for (a, b), w in layer.W.nonzero().items():
            wv = scalar(w)
            for i in range(nn):
                proj[i][b] = proj[i][b] + x[i][a] * wv
        conv = [[scalar(v) for v in row] for row in layer.b2.to_rows()]
        for (k, j), hv in layer.h.nonzero().items():
            h = scalar(hv)
            for i in range(nn):
                src = i - k
                if src < 0:
                    if layer.mode is not Mode.CYCLIC:
                        continue
                    src += nn
                conv[i][j] = conv[i][j] + h * x[src][j]
        x = [[proj[i][j] * conv[i][j] for j in range(dd)] for i in range(nn)]
    return [row[: m.d] for row in x[: m.n]]


def _ref_circuit(c: Circuit, u: Sequence[Sequence[Any]], scalar: Callable[[Scalar], Any], zero: Any) -> list[list[Any]]:
    """Node values in order (docs/theory.md §2); outputs row-major into ``y``, the rest 0."""
    vals = [x for row in u for x in row]
    for g in c.gates:
        if g.op is Op.CONST:
            vals.append(scalar(g.coeffs[0]))
        elif g.op is Op.MUL:
            vals.append(vals[g.args[0]] * vals[g.args[1]])
        else:
            vals.append(scalar(g.coeffs[0]) * vals[g.args[0]] + scalar(g.coeffs[1]) * vals[g.args[1]])
    flat = [vals[o] for o in c.outputs] + [zero] * (c.num_inputs - len(c.outputs))
    return [flat[i * c.d : (i + 1) * c.d] for i in range(c.n)]


def reference(obj: Circuit | Model, u: Sequence[Sequence[Any]], scalar: Callable[[Scalar], Any], zero: Any) -> list[list[Any]]:
    return (_ref_circuit if isinstance(obj, Circuit) else _ref_model)(obj, u, scalar, zero)  # type: ignore[arg-type]


def _params(*objs: Any) -> list[str]:
    names: set[str] = set()
    for o in objs:
        names |= o.params()
    return sorted(names)


def same_polynomials(a: Circuit | Model, b: Circuit | Model) -> bool:
    """Ground truth: the reference interpreter over sympy's ``QQ[x…, params…]`` on both sides."""
    from sympy import QQ
    from sympy.polys.rings import ring

    names = _params(a, b)
    nd = a.n * a.d
    R, *gens = ring(",".join([f"x{i}" for i in range(nd)] + [f"p_{k}" for k in names]), QQ)
    pg = dict(zip(names, gens[nd:]))

    def scalar(x: Scalar) -> Any:
        if isinstance(x, Sym):
            total = R.zero
            for mono, c in x.terms:
                term = R(QQ(c.numerator, c.denominator))
                for name, e in mono:
                    term = term * pg[name] ** e
                total = total + term
            return total
        q = Fraction(x)
        return R(QQ(q.numerator, q.denominator))

    u = [gens[i * a.d : (i + 1) * a.d] for i in range(a.n)]
    return reference(a, u, scalar, R.zero) == reference(b, u, scalar, R.zero)


def confirm_counterexample(a: Circuit | Model, b: Circuit | Model, cex: Any) -> str | None:
    """None when both ``sv.evaluate`` and the reference interpreter (Fractions) confirm ``cex``;
    otherwise what went wrong."""
    u = [list(r) for r in cex.inputs]
    ps = cex.param_dict()
    missing = [k for k in _params(a, b) if k not in ps]
    if missing:
        return f"no values for the parameters {missing}"
    i, j = cex.cell

    def scalar(x: Scalar) -> Any:
        if isinstance(x, Sym):
            total = Fraction(0)
            for mono, c in x.terms:
                term = Fraction(c)
                for name, e in mono:
                    term *= Fraction(ps[name]) ** e
                total += term
            return total
        return Fraction(x)

    fu = [[Fraction(x) for x in row] for row in u]
    for how, ya, yb in (("sv.evaluate", sv.evaluate(a, u, cex.params_for(a)), sv.evaluate(b, u, cex.params_for(b))),
                        ("reference", reference(a, fu, scalar, Fraction(0)), reference(b, fu, scalar, Fraction(0)))):
        if ya[i][j] == yb[i][j]:
            return f"{how}: entry {cex.cell} is {ya[i][j]} on both sides"
        if (Fraction(ya[i][j]), Fraction(yb[i][j])) != (Fraction(cex.lhs_value), Fraction(cex.rhs_value)):
            return f"{how}: entry {cex.cell} is {ya[i][j]} vs {yb[i][j]}, the report says {cex.lhs_value} vs {cex.rhs_value}"
    return None


# ---- subjects and cases ------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One mutant pair: ``verify(lhs, rhs, certificate=certificate)``; ``methods`` that apply."""

    family: str
    subject: str
    mutation: str
    lhs: Circuit
    rhs: Circuit | Model
    certificate: Certificate | None
    methods: tuple[str, ...]
    operator: str = ""

    def label(self) -> str:
        return f"{self.family} {self.subject}: {self.mutation}"


def subjects(quick: bool) -> list[Circuit]:
    """The circuits the mutants come from: small enough for every method, exact expansion included."""
    lib = library
    if quick:
        return [lib.poly_mult(2), lib.determinant(2), lib.random_circuit(2, 1, 6, 3, seed=2), lib.symbolic_mixing(2)]
    out = [lib.walsh_hadamard(4), lib.walsh_hadamard(2, 2), lib.poly_mult(2), lib.poly_mult(3), lib.determinant(2),
           lib.determinant(3), lib.product_tree(4), lib.prefix_sums(4), lib.elementary_symmetric(3),
           lib.matvec_bilinear(2), lib.symbolic_mixing(3)]
    out += [lib.random_circuit(2, 2, 8, 3, seed=s) for s in (1, 2, 3)]
    out += [lib.random_circuit(2, 1, 6, 3, seed=s) for s in (4, 5, 6)]
    return out


def _cost(lhs: Any, rhs: Any) -> int:
    from symverify.kernel.provers.sides import as_side

    return as_side(lhs).cost() + as_side(rhs).cost()


def _methods(lhs: Any, rhs: Any, cert: Certificate | None, z3_max_cost: int, only: Sequence[str] = METHODS) -> tuple[str, ...]:
    out = []
    for m in only:
        if m == "compositional" and cert is None:
            continue
        if m == "z3" and _cost(lhs, rhs) > z3_max_cost:
            continue
        out.append(m)
    return tuple(out)


def default_methods(quick: bool) -> tuple[str, ...]:
    """:data:`METHODS`, plus the torch engine of ``randomized`` in the full tier when torch is installed."""
    import importlib.util

    return METHODS if quick or importlib.util.find_spec("torch") is None else (*METHODS, TORCH)


def _subject_cases(c: Circuit, nw: int, ng: int, nc: int, z3_max_cost: int, only: tuple[str, ...]) -> list[Case]:
    """The mutant pairs of one circuit: weight and certificate mutants per compiler, then gate mutants."""
    cases: list[Case] = []

    def add(family: str, what: str, op: str, lhs: Circuit, rhs: Circuit | Model, cert: Certificate | None,
            methods: Sequence[str] = only) -> None:
        ms = _methods(lhs, rhs, cert, z3_max_cost, methods)
        if ms:
            cases.append(Case(family, c.name, what, lhs, rhs, cert, ms, op))

    compiled = {m: sv.compile(c, method=m) for m in COMPILERS}
    symbols = ["m", *sorted(c.params())]  # a new weight, or one the circuit already has
    for comp_name, comp in compiled.items():
        model, cert = comp.model, comp.certificate
        nz = mutate.weight_sites(model)

        def weight(s: int, model: Model = model, nz: list[mutate.WeightSite] = nz) -> mutate.Mutation:
            return mutate.weight_mutant(model, s, tuple(mutate.WEIGHT_OPERATORS), symbol=symbols[s % len(symbols)], nonzero=nz)

        for mu in mutate.mutants(weight, nw, fewer=True):
            add(f"weight/{comp_name}", str(mu), mu.operator, c, mu.obj, cert)
        if cert is None:
            continue

        def certificate(s: int, cert: Certificate = cert) -> mutate.Mutation:
            return mutate.certificate_mutant(cert, c.num_nodes, s)

        for k, cm in enumerate(mutate.mutants(certificate, nc, fewer=True)):
            if k % 2:  # a stale certificate that also lies, on a mutant model
                wm = weight(10_000 + k)
                add(f"certificate/{comp_name}", f"{cm} + {wm}", f"{cm.operator}+{wm.operator}", c, wm.obj, cm.obj,
                    [m for m in only if m in ("compositional", "auto")])
            else:
                add(f"certificate/{comp_name}", str(cm), cm.operator, c, model, cm.obj,
                    [m for m in only if m in ("compositional", "auto")])

    def gate(s: int) -> mutate.Mutation:
        return mutate.gate_mutant(c, s, tuple(mutate.GATE_OPERATORS), symbol=symbols[s % len(symbols)], live=True)

    for k, mu in enumerate(mutate.mutants(gate, ng, fewer=True)):
        if k % 3 == 2:
            add("gate/vs-circuit", str(mu), mu.operator, mu.obj, c, None)
        else:
            comp = compiled[COMPILERS[k % 3]]
            add(f"gate/vs-{COMPILERS[k % 3]}", str(mu), mu.operator, mu.obj, comp.model, comp.certificate)
    return cases


def build_cases(quick: bool, *, weights: int | None = None, gates: int | None = None, certs: int | None = None,
                z3_max_cost: int = Z3_MAX_COST, methods: Sequence[str] | None = None) -> list[Case]:
    """The campaign's mutant pairs (deterministic): per subject circuit and compiler ``weights``
    weight mutants and ``certs`` certificate mutants, and per subject ``gates`` gate mutants, each
    distinct (:func:`symverify.mutate.mutants`), fewer where a small subject has no more (the totals
    line of the report counts what ran); ``methods`` defaults to :func:`default_methods`."""
    only = tuple(methods) if methods is not None else default_methods(quick)
    nw = weights if weights is not None else (5 if quick else 34)
    ng = gates if gates is not None else (5 if quick else 32)
    nc = certs if certs is not None else (3 if quick else 10)
    return [case for c in subjects(quick) for case in _subject_cases(c, nw, ng, nc, z3_max_cost, only)]


# ---- running -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    case: int
    method: str
    cls: str
    seconds: float
    detail: str = ""
    equal: bool = False  # the ground truth: the pair computes the same polynomials


def run_case(index: int, case: Case, timeout: float) -> list[Outcome]:
    """Every applicable method on one case, classified against ground truth."""
    equal = same_polynomials(case.lhs, case.rhs)
    out = []
    for method in case.methods:
        kwargs: dict[str, Any] = {"method": method, "timeout": timeout, "seed": index}
        if method == TORCH:
            kwargs.update(method="randomized", backend="torch")
        if method in ("compositional", "auto") and case.certificate is not None:
            kwargs["certificate"] = case.certificate
        t = time.perf_counter()
        try:
            rep = sv.verify(case.lhs, case.rhs, **kwargs)
        except (IRError, UsageError) as e:
            out.append(Outcome(index, method, "rejected", time.perf_counter() - t, f"{type(e).__name__}: {e}"[:300], equal))
            continue
        except Exception as e:  # a crash is a finding, not a reason to stop the campaign
            out.append(Outcome(index, method, "error", time.perf_counter() - t, f"{type(e).__name__}: {e}"[:300], equal))
            continue
        secs = time.perf_counter() - t
        detail = "" if secs <= timeout + 5 else f"ran {secs:.1f} s with timeout={timeout}"
        if rep.proved:
            cls = "proved (invisible)" if equal else "FALSE PROOF"
            if not equal:
                detail = str(rep).replace("\n", " | ")
        elif rep.refuted:
            problem = confirm_counterexample(case.lhs, case.rhs, rep.counterexample)
            cls = "refuted" if problem is None else "BAD CEX"
            if problem is not None:
                detail = f"{problem}; report: {rep.counterexample}"
            elif equal:  # both evaluations confirm a difference the ground truth says is not there
                cls, detail = "BAD CEX", f"the reference expansion says the sides are equal; report: {rep.counterexample}"
        else:
            cls = "unknown (invisible)" if equal else "unknown (differs)"
            detail = detail or "; ".join(rep.notes)[:200]
        out.append(Outcome(index, method, cls, secs, detail, equal))
    return out


_CASES: list[Case] = []
_TIMEOUT = 10.0


def _work(index: int) -> list[Outcome]:
    return run_case(index, _CASES[index], _TIMEOUT)


@dataclass
class Summary:
    """What :func:`run_campaign` found: per (method, family) class counts, the failures, the time."""

    cases: list[Case]
    outcomes: list[Outcome]
    seconds: float
    counts: dict[str, dict[str, Counter[str]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for o in self.outcomes:
            fam = self.cases[o.case].family
            self.counts.setdefault(o.method, {}).setdefault(fam, Counter())[o.cls] += 1

    def total(self, cls: str, method: str | None = None) -> int:
        return sum(c[cls] for m, fams in self.counts.items() if method in (None, m) for c in fams.values())

    @property
    def mutants(self) -> Counter[str]:
        return Counter(c.family.split("/")[0] for c in self.cases)

    @property
    def false_proofs(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.cls == "FALSE PROOF"]

    @property
    def bad_counterexamples(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.cls == "BAD CEX"]

    @property
    def errors(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.cls == "error"]

    @property
    def ok(self) -> bool:
        """No false proof, no counterexample that fails to re-check and no crash (``error``) of ``verify``."""
        return not self.false_proofs and not self.bad_counterexamples and not self.errors

    def invisible(self) -> int:
        """Pairs whose two sides compute the same polynomials (semantically invisible mutants)."""
        return len({o.case for o in self.outcomes if o.equal})

    def report(self) -> str:
        short = {"refuted": "refuted", "proved (invisible)": "proved=", "unknown (differs)": "unk≠",
                 "unknown (invisible)": "unk=", "rejected": "rejected", "error": "error", "FALSE PROOF": "FALSE",
                 "BAD CEX": "BADCEX"}
        lines = []
        head = f"{'family':<24}{'runs':>6}" + "".join(f"{short[c]:>9}" for c in CLASSES) + f"{'mean s':>9}{'max s':>8}"
        for method in (*METHODS, TORCH):
            fams = self.counts.get(method, {})
            if not fams:
                continue
            lines += ["", f"method {method}", head, "-" * len(head)]
            times: dict[str, list[float]] = {}
            for o in self.outcomes:
                if o.method == method:
                    times.setdefault(self.cases[o.case].family, []).append(o.seconds)
            for fam in sorted(fams):
                c, ts = fams[fam], times[fam]
                lines.append(f"{fam:<24}{sum(c.values()):>6}" + "".join(f"{c[k]:>9}" for k in CLASSES)
                             + f"{sum(ts) / len(ts):>9.3f}{max(ts):>8.2f}")
            tot: Counter[str] = sum(fams.values(), Counter())
            ts = [o.seconds for o in self.outcomes if o.method == method]
            lines.append(f"{'all':<24}{sum(tot.values()):>6}" + "".join(f"{tot[k]:>9}" for k in CLASSES)
                         + f"{sum(ts) / len(ts):>9.3f}{max(ts):>8.2f}")
        muts = self.mutants
        lines += ["", "totals: " + ", ".join(f"{n} {fam} mutants" for fam, n in sorted(muts.items()))
                  + f" ({len(self.cases)} pairs, {self.invisible()} semantically invisible), {len(self.outcomes)} verify calls",
                  "        " + ", ".join(f"{k}: {self.total(k)}" for k in CLASSES)]
        gaps: Counter[tuple[str, str]] = Counter(
            (o.method, f"{self.cases[o.case].family.split('/')[0]}.{self.cases[o.case].operator}")
            for o in self.outcomes if o.cls == "unknown (differs)")
        if gaps:
            lines.append("unknown on differing pairs, by method and operator: "
                         + ", ".join(f"{m} {op} {n}" for (m, op), n in sorted(gaps.items())))
        why: Counter[str] = Counter(f"{o.method}: {o.detail[:90]}" for o in self.outcomes if o.cls == "rejected")
        if why:
            lines.append("rejected (IRError/UsageError), by message:")
            lines += [f"  {n:>4} × {msg}" for msg, n in why.most_common(6)]
        for title, items in (("FALSE PROOFS", self.false_proofs), ("BAD COUNTEREXAMPLES", self.bad_counterexamples),
                             ("errors", self.errors)):
            if items:
                lines.append(f"{title} ({len(items)}):")
                lines += [f"  [{o.method}] {self.cases[o.case].label()}: {o.detail}" for o in items[:20]]
        slow = [o for o in self.outcomes if o.detail.startswith("ran ")]
        if slow:
            lines.append(f"calls that overran their timeout by more than 5 s: {len(slow)}")
            lines += [f"  [{o.method}] {self.cases[o.case].label()}: {o.detail}" for o in slow[:10]]
        lines.append(f"time: {self.seconds:.1f} s")
        return "\n".join(lines)


def run_campaign(quick: bool = True, *, timeout: float | None = None, jobs: int = 1, z3_max_cost: int = Z3_MAX_COST,
                 methods: Sequence[str] | None = None, progress: Callable[[int, int], None] | None = None,
                 **sizes: int) -> Summary:
    """Build the cases, run every applicable method on each and classify (see the module docstring).

    ``sizes`` may override the mutants per subject: ``weights`` (per compiler), ``gates``, ``certs``
    (per compiler). ``jobs > 1`` spreads the cases over forked worker processes.
    """
    global _CASES, _TIMEOUT
    start = time.perf_counter()
    cases = build_cases(quick, z3_max_cost=z3_max_cost, methods=methods, **sizes)
    _CASES, _TIMEOUT = cases, timeout if timeout is not None else (5.0 if quick else 10.0)
    outcomes: list[Outcome] = []
    if jobs > 1:
        # not a multiprocessing.Pool: its workers are daemonic, and z3 runs in a child process
        with ProcessPoolExecutor(jobs, mp_context=mp.get_context("fork")) as pool:
            for k, res in enumerate(pool.map(_work, range(len(cases)), chunksize=4)):
                outcomes += res
                if progress:
                    progress(k + 1, len(cases))
    else:
        for k in range(len(cases)):
            outcomes += _work(k)
            if progress:
                progress(k + 1, len(cases))
    return Summary(cases, outcomes, time.perf_counter() - start)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the CI tier (seconds)")
    ap.add_argument("--timeout", type=float, default=None, help="seconds per verify call (default 5 quick, 10 full)")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--z3-max-cost", type=int, default=Z3_MAX_COST, help="run z3 only on pairs this cheap to evaluate")
    ap.add_argument("--methods", default=None, help=f"comma-separated subset of {', '.join((*METHODS, TORCH))}")
    args = ap.parse_args(argv)
    methods = None if args.methods is None else tuple(m.strip() for m in args.methods.split(","))
    unknown = [m for m in methods or () if m not in (*METHODS, TORCH)]
    if unknown:
        ap.error(f"--methods: unknown {unknown}")

    def progress(done: int, total: int) -> None:
        if done % 100 == 0 or done == total:
            print(f"  {done}/{total} pairs", file=sys.stderr, flush=True)

    summary = run_campaign(args.quick, timeout=args.timeout, jobs=args.jobs, z3_max_cost=args.z3_max_cost,
                           methods=methods, progress=None if args.quick else progress)
    print(f"mutation campaign ({'quick' if args.quick else 'full'} tier)")
    print(summary.report())
    if not summary.ok:
        print(f"CAMPAIGN FAILURE: {len(summary.false_proofs)} false proofs, "
              f"{len(summary.bad_counterexamples)} counterexamples that do not re-check, "
              f"{len(summary.errors)} verify calls that crashed (listed above)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

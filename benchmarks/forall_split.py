"""Benchmark: the ∀-prover's strategies on the Lemma H.16 sequence axis, measured in one run.

Run ``python benchmarks/forall_split.py [--all]``. It proves ``butterfly_sequence`` (with ``--all``
also ``factor_sequence``, every compiled form: a few minutes) three ways, one after the other:

* ``one query``: z3's default solver, the whole range in one query (``cases = ()``,
  ``BV_TACTIC = ()``);
* ``split``: the default solver, one query per case of the definition's split (``Gadget.cases``)
  and one for the cells no case covers;
* ``split+tactic``: the split with bit-vector queries decided by the tactic pipeline
  ``BV_TACTIC`` (simplify, bit-blast, SAT) — the prover's default. Queries with free predicates
  (``factor_sequence``) always use the default solver, so its last two columns coincide.

It prints the CPU time of this process (z3 runs in it; on a shared machine wall-clock time
varies with the load, CPU time much less), the ratio of the default to ``one query`` and the phases of the default
(wall-clock: definedness, the two small-size searches, each part of the whole range). Every run must prove;
asserts nothing about time.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from typing import Any

from symverify.kernel.provers import forall
from symverify.kernel.provers.forall import prove_forall
from symverify.parametric import library as lib


def _run(g: Any, tactic: tuple[str, ...]) -> tuple[float, dict[str, float]]:
    saved = forall.BV_TACTIC
    forall.BV_TACTIC = tactic
    try:
        t = time.process_time()
        res = prove_forall(g, timeout_s=900)
    finally:
        forall.BV_TACTIC = saved
    if res.verdict != "proved":
        raise SystemExit(f"{res}")
    return time.process_time() - t, dict(res.stats.get("timings", {}))


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--all", action="store_true", help="also factor_sequence (minutes)")
    args = ap.parse_args()
    makes = [lib.butterfly_sequence] + ([lib.factor_sequence] if args.all else [])
    tactic = forall.BV_TACTIC
    print(f"{'gadget':<20}{'one query s':>13}{'split s':>9}{'split+tactic s':>16}{'ratio':>7}  phases (split+tactic)")
    for make in makes:
        g = make()
        t0, _ = _run(dataclasses.replace(g, cases=()), ())
        t1, _ = _run(g, ())
        t2, ph = _run(g, tactic)
        phases = ", ".join(f"{k} {v:.1f}" for k, v in ph.items())
        print(f"{g.name:<20}{t0:>13.1f}{t1:>9.1f}{t2:>16.1f}{t2 / t0:>7.2f}  {phases}", flush=True)


if __name__ == "__main__":
    main()

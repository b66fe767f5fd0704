"""Benchmark: the ∀-prover's strategies on the Lemma H.16 sequence axis, measured in one run.

Run ``python benchmarks/forall_split.py [--all]``. It proves ``butterfly_sequence`` (with ``--all``
also ``factor_sequence``, every compiled form: a few minutes) four ways, one after the other:

* ``one query``: z3's default solver, the whole range in one query (``cases = ()``,
  ``BV_TACTIC = ()``);
* ``split``: the default solver, one query per case of the definition's split (``Gadget.cases``)
  and one for the cells no case covers;
* ``split+tactic``: the split with bit-vector queries decided by the tactic pipeline
  ``BV_TACTIC`` (simplify, ackermannize, bit-blast, SAT), with ``WIDTH``-bit (64-bit) vectors only
  (queries with free predicates, ``factor_sequence``, ackermannized first);
* ``48 bits``: as ``split+tactic``, with ``NARROW_WIDTH``-bit (48-bit) vectors first (every bound
  fits, so the narrow width decides);
* ``default``: the prover's default, as ``48 bits`` with the least width first that holds the bounds
  and the state's size at the top of the ranges (41 bits on the sequence axis,
  ``forall._narrow_widths``);
* ``no ack``: as ``default`` with ``ackermannize_bv`` left out of the pipeline, so the queries with
  free predicates go to z3's default solver (the prover's strategy before; the same as ``default``
  for a gadget without predicates).

Measured on the shared 2-core machine (under load), one run of ``--all``: ``butterfly_sequence``
5.9 s at 64 bits, 3.9 s at 48 (0.66); ``factor_sequence`` 22.0 s and 15.7 s (0.72). The least width,
measured alone against 48 bits (CPU, interleaved runs): ``butterfly_sequence`` 3.4 → 2.6 s,
``factor_sequence`` 11.8 → 10.2–10.6 s. Ackermannized against the default solver for the queries
with predicates, ``factor_sequence`` (CPU): 22.7 s against 25.3 s in one ``--all`` run under load
(0.90), 15.8 and 14.6 s against 20.9 and 19.5 s in interleaved runs alone (0.75).

It prints the CPU time of this process (z3 runs in it; on a shared machine wall-clock time
varies with the load, CPU time much less), the ratio of the default to ``one query`` and the phases of the default
(wall-clock: definedness, each part of the whole range), the ratio of ``48 bits`` to
``split+tactic`` (the narrow width's gain), of the default to ``48 bits`` (the least width's) and of
the default to ``no ack`` (ackermannization's). Every run must prove;
asserts nothing about time.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections.abc import Callable
from typing import Any

from symverify.kernel.provers import forall
from symverify.kernel.provers.forall import prove_forall
from symverify.parametric import library as lib


def _run(g: Any, tactic: tuple[str, ...], widths: Callable[..., list[int]] = lambda g, b: []) -> tuple[float, dict[str, float]]:
    """CPU seconds of ``prove_forall(g)`` with ``BV_TACTIC = tactic`` and the narrow widths ``widths``
    (none: 64-bit vectors only), and its phases."""
    saved = forall.BV_TACTIC, forall._narrow_widths
    forall.BV_TACTIC, forall._narrow_widths = tactic, widths
    try:
        t = time.process_time()
        res = prove_forall(g, timeout_s=900)
    finally:
        forall.BV_TACTIC, forall._narrow_widths = saved
    if res.verdict != "proved":
        raise SystemExit(f"{res}")
    return time.process_time() - t, dict(res.stats.get("timings", {}))


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--all", action="store_true", help="also factor_sequence (minutes)")
    args = ap.parse_args()
    makes = [lib.butterfly_sequence] + ([lib.factor_sequence] if args.all else [])
    tactic, least = forall.BV_TACTIC, forall._narrow_widths
    print(f"{'gadget':<20}{'one query s':>13}{'split s':>9}{'split+tactic s':>16}{'48 bits s':>11}{'default s':>11}{'no ack s':>11}"
          f"{'ratio':>7}{'48/64':>7}{'least/48':>10}{'ack/no':>9}  phases (default)")
    for make in makes:
        g = make()
        t0, _ = _run(dataclasses.replace(g, cases=()), ())
        t1, _ = _run(g, ())
        t2, _ = _run(g, tactic)
        t3, _ = _run(g, tactic, lambda g, b: [forall.NARROW_WIDTH])
        t4, ph = _run(g, tactic, least)
        t5, _ = _run(g, tuple(x for x in tactic if x != "ackermannize_bv"), least) if g.predicate_names else (t4, {})
        phases = ", ".join(f"{k} {v:.1f}" for k, v in ph.items())
        print(f"{g.name:<20}{t0:>13.1f}{t1:>9.1f}{t2:>16.1f}{t3:>11.1f}{t4:>11.1f}{t5:>11.1f}{t4 / t0:>7.2f}{t3 / t2:>7.2f}"
              f"{t4 / t3:>10.2f}{t4 / t5:>9.2f}  {phases}", flush=True)

if __name__ == "__main__":
    main()

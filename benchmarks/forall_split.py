"""Benchmark: the ∀-prover with and without a gadget's case split (``Gadget.cases``).

Run ``python benchmarks/forall_split.py [--all]``. For the Lemma H.16 sequence-axis gadget
(``butterfly_sequence``; with ``--all`` also ``factor_sequence``, every compiled form, a few minutes)
it proves the statement twice in one run — with ``cases = ()`` (one query for the whole range) and
with the definition's split (one query per case and one for the cells no case covers) — and prints
both times, the phases of each (definedness, the two small-size searches, the whole range) and the
ratio split / unsplit. Both must be proved; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

from symverify.parametric import library as lib
from symverify.provers.forall import prove_forall


def _run(g: object) -> tuple[float, dict[str, float]]:
    t = time.perf_counter()
    res = prove_forall(g, timeout_s=900)  # type: ignore[arg-type]
    if res.verdict != "proved":
        raise SystemExit(f"{res}")
    return time.perf_counter() - t, dict(res.stats.get("timings", {}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--all", action="store_true", help="also factor_sequence (minutes)")
    args = ap.parse_args()
    makes = [lib.butterfly_sequence] + ([lib.factor_sequence] if args.all else [])
    print(f"{'gadget':<20}{'unsplit s':>11}{'split s':>9}{'ratio':>7}  phases (split)")
    for make in makes:
        g = make()
        t0, _ = _run(dataclasses.replace(g, cases=()))
        t1, ph = _run(g)
        phases = ", ".join(f"{k} {v:.1f}" for k, v in ph.items())
        print(f"{g.name:<20}{t0:>11.1f}{t1:>9.1f}{t1 / t0:>7.2f}  {phases}", flush=True)


if __name__ == "__main__":
    main()

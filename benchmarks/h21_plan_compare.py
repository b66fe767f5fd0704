"""Benchmark: Theorem H.21's compiler, layers and compile time per circuit set, this tree beside a baseline.

Run ``python benchmarks/h21_plan_compare.py [--baseline DIR] [--sets sweeps,unseen,worst] [--plan auto] [--quick]``
from the repository root. The sets:

* ``sweeps``: every H.21 circuit of the proof scripts ``thm_h21_sweep`` and ``thm_h21_general``
  (``--quick``: their quick tier only, else both tiers);
* ``unseen``: :func:`symverify.library.wired_circuit`, every wiring, ``w ∈ {2, 4, …, 64}`` (``--quick``:
  ``≤ 16``), ``Δ ∈ {1, 2, 4}`` (``--quick``: ``{1, 2}``), seed 0, and the families ``w = k·d`` for
  ``d ∈ {3, 5, 6, 7, 12}``, ``k ∈ {1, 2}`` (``benchmarks/h21_unseen.py``);
* ``worst``: the set of ``benchmarks/h21_worst_widths.py`` (``d ∈ {3, 5, 6, 7, 12}``, ``k ∈ {1, 2, 4}``,
  ``Δ ∈ {1, 2, 4}``; ``--quick``: ``Δ ∈ {1, 2}``).

Every circuit is compiled by ``method="kaleidoscope"`` with ``--plan`` once, every memo of the
compiler cleared before (so each time includes its own routing). Printed per set, for this tree
and, with ``--baseline DIR`` (the repository root of another checkout, e.g. ``git archive`` of an
earlier commit, run in a subprocess), for that tree beside it, all measured in this one run: the
circuits, the total layers, how many circuits have more / fewer layers than the baseline, the
largest ``L/(Δ·⌈log2 w⌉)`` (``Δ = 1`` and ``Δ ≥ 2`` apart), the total compile time and its ratio,
and the circuits whose layers differ. Asserts nothing; models are not proved here (the proof
scripts and ``h21_worst_widths.py`` do that).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from typing import Any

DS = (3, 5, 6, 7, 12)


def _script(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, os.path.join(os.getcwd(), "proofs", f"{name}.py"))
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def circuits(which: str, quick: bool) -> list[Any]:
    """The circuits of one set (module docstring)."""
    from symverify.library import WIRINGS, wired_circuit

    if which == "sweeps":
        sweep, general = _script("thm_h21_sweep"), _script("thm_h21_general")
        tiers = (True,) if quick else (True, False)
        out = [sweep.layered_circuit(w, dep, seed) for q in tiers for w, dep, seed, comp in sweep.cases(q) if comp == "kaleidoscope"]
        return out + [c for q in tiers for c in general.circuits(q)]
    if which == "unseen":
        widths = [w for w in (2, 4, 8, 16, 32, 64) if not quick or w <= 16]
        depths = (1, 2) if quick else (1, 2, 4)
        out = [wired_circuit(w, dep, wi) for w in widths for dep in depths for wi in WIRINGS]
        return out + [wired_circuit(k * d, dep, wi, d=d) for d in DS for k in (1, 2) for dep in depths for wi in WIRINGS]
    if which == "worst":
        sys.path.insert(0, os.path.join(os.getcwd(), "benchmarks"))
        from h21_worst_widths import alternating

        depths = (1, 2) if quick else (1, 2, 4)
        return [wired_circuit(k * d, dep, wi, d=d) for d in DS for k in (1, 2, 4) for dep in depths for wi in WIRINGS] + \
            [alternating(20, d) for d in DS]
    raise SystemExit(f"--sets: expected sweeps, unseen or worst, found {which!r}")


def _clear_memos() -> None:
    """Every memo of the compiler's modules (a fresh start for each timing)."""
    for name, mod in list(sys.modules.items()):
        if not name.startswith(("symverify.compiler", "symverify.kaleidoscope")):
            continue
        for obj in list(vars(mod).values()):
            clear = getattr(obj, "cache_clear", None)
            if callable(clear):
                clear()


def measure(sets: list[str], plan: str, quick: bool) -> dict[str, list[tuple[str, int, int, int, float]]]:
    """``{set: [(name, layers, depth, a, seconds)]}`` for this interpreter's ``symverify``."""
    from symverify.compiler import compile

    out: dict[str, list[tuple[str, int, int, int, float]]] = {}
    for which in sets:
        rows = []
        for k, c in enumerate(circuits(which, quick)):
            _clear_memos()
            t0 = time.perf_counter()
            res = compile(c, method="kaleidoscope", plan=plan)
            secs = time.perf_counter() - t0
            r = res.resources
            a = max(1, (max(r["width"], 2) - 1).bit_length())
            rows.append((f"{k}:{c.name}", len(res.model.layers), int(r["depth"]), a, secs))
        out[which] = rows
    return out


def _worst(rows: list[tuple[str, int, int, int, float]], deep: bool) -> str:
    sub = [(L / (max(dep, 1) * a), name) for name, L, dep, a, _ in rows if (dep >= 2) == deep]
    return f"{max(sub)[0]:.2f}" if sub else "-"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", help="repository root of the tree to compare with")
    ap.add_argument("--sets", default="sweeps,unseen,worst")
    ap.add_argument("--plan", default="auto", choices=("auto", "exact", "greedy"))
    ap.add_argument("--quick", action="store_true", help="the quick tier of the sweeps, unseen widths ≤ 16")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # the baseline's own run
    args = ap.parse_args(argv)
    sets = [s for s in args.sets.split(",") if s]
    flags = ["--sets", args.sets, "--plan", args.plan] + (["--quick"] if args.quick else [])
    base: dict[str, list[list[Any]]] = {}
    if args.baseline:
        env = dict(os.environ, PYTHONPATH=os.path.abspath(args.baseline))
        res = subprocess.run([sys.executable, os.path.abspath(__file__), "--json", *flags], capture_output=True, text=True,
                             env=env, cwd=os.path.abspath(args.baseline), check=True)
        base = json.loads(res.stdout.strip().splitlines()[-1])
    here = measure(sets, args.plan, args.quick)
    if args.json:
        print(json.dumps(here))
        return
    print(f"plan={args.plan}{' (quick)' if args.quick else ''}; L/(Δ·⌈log2 w⌉) max for Δ = 1 | Δ ≥ 2")
    print(f"{'set':8s} {'count':>5s} {'layers':>7s} {'Δ=1':>6s} {'Δ≥2':>6s} {'time s':>7s}"
          + (f" {'base L':>7s} {'more':>4s} {'fewer':>5s} {'base Δ=1':>8s} {'base Δ≥2':>8s} {'base s':>7s} {'time ratio':>10s}" if base else ""))
    for which in sets:
        rows = here[which]
        line = (f"{which:8s} {len(rows):5d} {sum(r[1] for r in rows):7d} {_worst(rows, False):>6s} {_worst(rows, True):>6s} "
                f"{sum(r[4] for r in rows):7.2f}")
        if base:
            brows = [tuple(r) for r in base[which]]
            more = [(r, b) for r, b in zip(rows, brows) if r[1] > b[1]]
            fewer = [(r, b) for r, b in zip(rows, brows) if r[1] < b[1]]
            bt = sum(float(b[4]) for b in brows)  # type: ignore[arg-type]
            line += (f" {sum(int(b[1]) for b in brows):7d} {len(more):4d} {len(fewer):5d} {_worst(brows, False):>8s} "  # type: ignore[arg-type, call-overload]
                     f"{_worst(brows, True):>8s} {bt:7.2f} {sum(r[4] for r in rows) / bt:10.2f}")  # type: ignore[arg-type]
            print(line)
            for r, b in more + fewer:
                print(f"    {r[0]:40s} layers {b[1]} → {r[1]}, time {float(b[4]):.2f} → {r[4]:.2f} s")  # type: ignore[arg-type]
        else:
            print(line)


if __name__ == "__main__":
    main()

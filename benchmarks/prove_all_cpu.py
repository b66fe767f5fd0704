"""Benchmark: the CPU time of every built-in proof script, one process each, as ``symverify prove`` runs it.

Run ``python benchmarks/prove_all_cpu.py [NAME ...] [--quick] [--json OUT] [--compare OLD.json]``.

Each script runs alone, one after another, as the runner starts it (``python -m
symverify.proofs.NAME --json TMP``); its CPU time is the user + system time of that process and its
children (``getrusage(RUSAGE_CHILDREN)`` before and after), which the load of other work on the
machine changes far less than wall time. Printed per script: CPU seconds, wall seconds, instances
and whether every instance is ok; then the total. With ``--compare OLD.json`` (an earlier ``--json``
of this benchmark) it prints both runs side by side with the ratio old ÷ new per script, and checks
that every script has the same instances with the same verdicts, kinds, methods and bounds (the
claims) in both. Nothing is asserted about time.

A run of the start-up alone (``python -c "import symverify.proofs.NAME"``) is printed too: the part
of each script's CPU that is interpreter start-up and imports.

Measured on a shared 2-core machine (load about 2.5), ``--compare`` of the same 1640 rows with the
same claims: 165.3 s of CPU in all before the ∀-prover's key order (keys in non-decreasing tag
order) and query order (small-size searches only on the way to a refutation), the C-level factor
plans of ``materialize``, the sparse grids of the randomized prover and the normal-form fast paths
of ``Cell`` and ``Gate``; 141.4 s after (1.17×). Per script: ``lemma_h16_butterfly`` 45.6 → 29.6 s
(``factor_sequence`` about 30 → 17 s), ``thm_h21_general`` 21.8 → 17.3 s, ``cor_h22_retnet``
17.6 → 15.8 s, ``thm_h21_product_gadget`` 7.8 → 6.8 s, the rest within the noise (±10 %).

The butterfly-family scripts, measured in interleaved runs of the code before and after (one
process per script, best of 2, the same shared machine, load about 5: both sides slower than on
an idle machine, compare the ratios), with a kaleidoscope's diagonals encoded run by run and small
ints from a table (the same bytes and digests), identity diagonals skipped in the plans of
``materialize``, ``Sym * int`` coefficient by coefficient and the bounds reading a ``Sym``'s
coefficients as they are: ``thm_h19_linear_circuits`` 8.1 → 5.8 s, ``dao_thm3_sparse`` 3.3 →
2.5 s, ``cor_h20_linear`` 5.3 → 4.7 s, ``lemma_h16_butterfly`` 20.9 → 18.1 s (its 150 symbolic
factors 5.9 → 4.0 s; its five ∀ rows, about two thirds of it, are z3's and unchanged),
``dao_thm2_permutations`` 6.2 → 6.4 s and ``lemma_h18_kaleidoscope`` 3.1 → 3.2 s within the
noise; the claims the same (``--compare``).

The compiler-family scripts again, on the same machine under a load of 4–5 (three runs of the code
before, five after, medians of each script's CPU), before and after the scripts' collector thresholds
(``SCRIPT_GC_THRESHOLDS``), the reused stage and exact rings (``reused_ring``), ``Cell.node``'s
direct construction and ``prune_layer``'s single pass: ``cor_h22_retnet`` 12.8 → 11.7 s,
``thm_h21_sweep`` 10.0 → 8.5 s, ``thm_h21_general`` 9.6 → 9.3 s, ``hyena_direct`` 9.2 → 8.7 s,
``thm_h21_product_gadget`` 8.1 → 7.9 s, ``h3_direct`` 6.3 → 6.0 s; 56.0 → 52.2 s in all (1.07×),
the same claims. Single runs moved by up to ±15 % at that load; paired runs of one script, the
old and new code one after the other, are steadier (their figures are in CHANGELOG.md).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from symverify.scripts.runner import available, select


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _run(argv: list[str], cwd: Path) -> tuple[float, float, int]:
    c0, t0 = _cpu(), time.perf_counter()
    rc = subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE).returncode
    return _cpu() - c0, time.perf_counter() - t0, rc


def claims(result: dict[str, Any]) -> list[dict[str, Any]]:
    """What a comparison looks at: per instance its name, verdict, kind, method, resources, bounds, ok."""
    keys = ("name", "verdict", "kind", "method", "resources", "bounds", "ok")
    return [{k: i.get(k) for k in keys} for i in result.get("instances", [])]


def measure(names: list[str], quick: bool) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="symverify-bench-") as tmp:
        cwd = Path(tmp)
        for name in names:
            out = cwd / f"{name}.json"
            argv = [sys.executable, "-m", f"symverify.proofs.{name}", "--json", str(out)] + (["--quick"] if quick else [])
            cpu, wall, rc = _run(argv, cwd)
            start_cpu, _, _ = _run([sys.executable, "-c", f"import symverify.proofs.{name}"], cwd)
            result = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
            insts = claims(result)
            rows[name] = {"cpu": round(cpu, 2), "wall": round(wall, 2), "startup_cpu": round(start_cpu, 2),
                          "rc": rc, "instances": len(insts), "ok": bool(insts) and all(i["ok"] for i in insts),
                          "claims": insts}
            print(f"{name:32s} cpu {cpu:7.2f} s  wall {wall:7.2f} s  start-up {start_cpu:5.2f} s  "
                  f"{len(insts):5d} instances  {'ok' if rows[name]['ok'] else 'NOT OK'}", flush=True)
    return {"quick": quick, "scripts": rows}


def compare(old: dict[str, Any], new: dict[str, Any]) -> bool:
    print(f"\n{'script':32s} {'old cpu':>9s} {'new cpu':>9s} {'old/new':>8s}  claims")
    same_all = True
    tot_old = tot_new = 0.0
    for name, row in new["scripts"].items():
        o = old["scripts"].get(name)
        if o is None:
            print(f"{name:32s} {'—':>9s} {row['cpu']:9.2f}")
            continue
        same = o["claims"] == row["claims"]
        same_all &= same
        tot_old += o["cpu"]
        tot_new += row["cpu"]
        ratio = o["cpu"] / row["cpu"] if row["cpu"] else float("inf")
        print(f"{name:32s} {o['cpu']:9.2f} {row['cpu']:9.2f} {ratio:7.2f}×  {'same' if same else 'DIFFERENT'}")
    ratio = tot_old / tot_new if tot_new else float("inf")
    print(f"{'total':32s} {tot_old:9.2f} {tot_new:9.2f} {ratio:7.2f}×  {'same' if same_all else 'DIFFERENT'}")
    return same_all


def _warn_other_checkout() -> None:
    """A warning when the scripts measured are not this checkout's: ``python -m symverify.proofs.NAME``
    runs the package the import system finds, which an editable install of another checkout (a git
    worktree with a shared virtual environment) maps to that checkout's ``proofs/``."""
    import symverify
    from symverify.scripts.runner import builtin_dir

    here = Path(symverify.__file__).resolve().parents[1] / "proofs"
    found = builtin_dir().resolve()
    if here.is_dir() and found != here:
        print(f"warning: symverify.proofs is {found}, not this checkout's {here}: the scripts measured are that "
              "checkout's (run each script by path to measure these)", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", help="write the measurements (and every instance's claim) here")
    ap.add_argument("--compare", help="an earlier --json of this benchmark to print side by side")
    a = ap.parse_args(argv)
    _warn_other_checkout()
    scripts = available()
    names = select(scripts, a.names)
    run = measure(names, a.quick)
    total = sum(r["cpu"] for r in run["scripts"].values())
    startup = sum(r["startup_cpu"] for r in run["scripts"].values())
    n = sum(r["instances"] for r in run["scripts"].values())
    print(f"{'total':32s} cpu {total:7.2f} s  (start-up {startup:.2f} s)  {n} instances")
    if a.json:
        Path(a.json).write_text(json.dumps(run, indent=1) + "\n", encoding="utf-8")
    ok = all(r["ok"] for r in run["scripts"].values())
    if a.compare:
        old = json.loads(Path(a.compare).read_text(encoding="utf-8"))
        ok &= compare(old, run)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

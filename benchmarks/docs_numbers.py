"""The construction's figures that the docs state, measured: writes ``docs/measured.json``.

Run ``python benchmarks/docs_numbers.py [--check]`` from the repository root. It compiles, by
``method="kaleidoscope"`` (Theorem H.21) and with the default plan:

* ``walsh_hadamard(n, d)`` on ``P = n·d ∈ {16, 64, 256, 1024}`` points for ``d ∈ {1, 2, 4}``: the
  layers, and their excess over ``2·log2 P`` (README, "constants");
* ``retnet(N, d)`` for ``N ∈ {1, 2, 4, 8, 16}`` and ``d ∈ {1, 2, 3, 4}`` (docs/retnet.md, the
  H.21 route): ``L/(N·log2(2d))`` (its least and largest value, 2 decimals) and ``d'``;
* every H.21 instance of the proof scripts ``thm_h21_sweep`` and ``thm_h21_general``, both tiers
  (docs/theory.md, "Measured"): the largest ``L/(max(Δ,1)·log2 w)``, ``L/(max(Δ,1)·⌈log2 w⌉)``,
  ``(L − 3)/((Δ+1)(a+2))``, ``N_k/2^a``, ``N'·tw/2^a`` and ``N'/w`` (``a = ⌈log2 max(w, 2)⌉``,
  2 decimals), and whether every instance was proved;
* the circuits of ``thm_h21_sweep``'s quick grid (``w ∈ {8, 16}``, ``Δ ∈ {2, 4}``, seeds 0 and 1)
  with ``plan="greedy"`` and ``plan="exact"``: the layers of each, their totals and how many per
  cent fewer the exact plan takes in all (README, "Compiling").

With ``--unseen`` (about 20 minutes on one core) it also measures the circuits the sweeps do not
contain, the set of ``benchmarks/h21_unseen.py --prove`` (seven wirings of
:func:`symverify.library.wired_circuit`, ``w = 2 … 256`` and ``w = k·d`` for ``d ∈ {3, 5, 6, 7,
12}``, ``k ∈ {1, 2, 4}``, ``Δ ∈ {1, 2, 4, 8}``, two seeds): the largest ``L/(Δ·log2 w)`` for
powers of two and ``L/(Δ·⌈log2 w⌉)`` per ``d`` (README, docs/theory.md), ``Δ = 1`` and
``Δ ≥ 2`` apart, with the circuit where each occurs; without it that entry is kept from the
committed file.

Every model is proved by its certificate (``check_certificate``), so no figure comes from an
unproved model. ``tests/test_docs_numbers.py`` compares the committed JSON with the texts that
state these figures and re-measures a few entries. ``--check`` compares a fresh measurement with
the committed file instead of writing it (non-zero exit on a difference).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "docs" / "measured.json"
WH_POINTS = (16, 64, 256, 1024)
WH_D = (1, 2, 4)
RETNET_N = (1, 2, 4, 8, 16)
RETNET_D = (1, 2, 3, 4)


def compiled_layers(c: object, plan: str = "auto") -> tuple[int, int]:
    """``(layers, d')`` of the proved H.21 model of ``c`` (compiled with ``plan``)."""
    from symverify.compiler import compile
    from symverify.kernel.provers.compositional import check_certificate

    out = compile(c, method="kaleidoscope", plan=plan)  # type: ignore[arg-type]
    res = check_certificate(c, out.model, out.certificate)  # type: ignore[arg-type]
    if not res.ok:
        raise SystemExit(f"{getattr(c, 'name', c)}: the compiled model is not proved: {res.failure}")
    return len(out.model.layers), out.model.inner_d


def walsh_hadamard_entry(points: int, d: int) -> dict[str, int]:
    from symverify.library import walsh_hadamard

    layers, _ = compiled_layers(walsh_hadamard(points // d, d))
    return {"points": points, "d": d, "layers": layers, "excess": layers - 2 * int(math.log2(points))}


def retnet_entry(N: int, d: int) -> dict[str, object]:
    from symverify.library import retnet

    layers, inner_d = compiled_layers(retnet(N, d))
    return {"N": N, "d": d, "layers": layers, "inner_d": inner_d, "ratio": round(layers / (N * math.log2(2 * d)), 2)}


def _proof_script(script: str) -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location(script, Path(__file__).resolve().parents[1] / "proofs" / f"{script}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def plan_entry(w: int, depth: int, seed: int) -> dict[str, int]:
    """The layers of ``thm_h21_sweep``'s circuit ``(w, Δ, seed)`` with the greedy and the exact plan."""
    c = _proof_script("thm_h21_sweep").layered_circuit(w, depth, seed)
    return {"w": w, "depth": depth, "seed": seed,
            "greedy": compiled_layers(c, "greedy")[0], "exact": compiled_layers(c, "exact")[0]}


def plan_comparison() -> dict[str, object]:
    """Greedy against exact plans on the circuits of ``thm_h21_sweep``'s quick grid."""
    quick = _proof_script("thm_h21_sweep").QUICK
    rows = [plan_entry(w, depth, seed) for w in quick["widths"] for depth in quick["depths"] for seed in quick["seeds"]]
    greedy, exact = sum(r["greedy"] for r in rows), sum(r["exact"] for r in rows)
    return {"circuits": rows, "greedy_layers": greedy, "exact_layers": exact,
            "fewer_percent": round(100 * (greedy - exact) / greedy)}


def sweep_maxima() -> dict[str, object]:
    """The largest ratios over the H.21 instances of both proof scripts, both tiers."""
    import importlib.util
    from fractions import Fraction

    from symverify.compiler.layout import track_width

    rows: list[dict[str, object]] = []
    proved = True
    for script in ("thm_h21_sweep", "thm_h21_general"):
        spec = importlib.util.spec_from_file_location(script, Path(__file__).resolve().parents[1] / "proofs" / f"{script}.py")
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for quick in (True, False):
            for inst in mod.run(quick).instances:
                if "L_over_delta_log2_w" in inst.resources:
                    rows.append(inst.resources)
                    proved = proved and inst.verdict == "proved"

    def worst(f: object) -> float:
        return round(float(max(f(r) for r in rows)), 2)  # type: ignore[operator]

    def a(r: dict[str, object]) -> int:
        return max(1, (max(int(r["width"]), 2) - 1).bit_length())  # type: ignore[call-overload]

    def delta(r: dict[str, object]) -> int:
        return max(int(r["depth"]), 1)  # type: ignore[call-overload]

    return {
        "instances": len(rows),
        "all_proved": proved,
        "L_over_delta_log2_w": worst(lambda r: r["layers"] / (delta(r) * math.log2(max(r["width"], 2)))),
        "L_over_delta_ceil_log2_w": worst(lambda r: Fraction(r["layers"], delta(r) * a(r))),
        "two_term_ratio": worst(lambda r: Fraction(r["layers"] - 3, (r["depth"] + 1) * (a(r) + 2))),
        "N_k_over_2a": worst(lambda r: Fraction(r["N_k"], 1 << a(r))),
        "inner_n_tw_over_2a": worst(lambda r: Fraction(r["inner_n"] * track_width(r["inner_d"]), 1 << a(r))),
        "inner_n_over_w": worst(lambda r: Fraction(r["inner_n"], r["width"])),
    }


UNSEEN_DS = (3, 5, 6, 7, 12)


def unseen_maxima() -> dict[str, object]:
    """The maxima of ``benchmarks/h21_unseen.py --prove`` at its defaults (module docstring)."""
    import importlib.util

    from symverify.library import WIRINGS

    spec = importlib.util.spec_from_file_location("h21_unseen", Path(__file__).resolve().parent / "h21_unseen.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    depths, seeds = (1, 2, 4, 8), range(2)
    pow2 = [mod.measure(w, dep, wiring, s, True) for wiring in WIRINGS for w in (2, 4, 8, 16, 32, 64, 128, 256)
            for dep in depths for s in seeds]
    by_d = {d: [mod.measure(k * d, dep, wiring, s, True, d) for k in (1, 2, 4) for dep in depths for wiring in WIRINGS
                for s in seeds] for d in UNSEEN_DS}

    def top(rows: list[dict[str, object]], key: str) -> dict[str, object]:
        r = max(rows, key=lambda r: r[key])  # type: ignore[arg-type, return-value]
        return {"max": round(float(r[key]), 2), "at": r["name"]}  # type: ignore[arg-type]

    def split(rows: list[dict[str, object]], key: str) -> dict[str, object]:
        return {"delta_1": top([r for r in rows if r["depth"] == 1], key),
                "delta_2_or_more": top([r for r in rows if int(r["depth"]) >= 2], key)}  # type: ignore[call-overload]

    every = pow2 + [r for rows in by_d.values() for r in rows]
    return {
        "circuits": len(every),
        "all_proved": all(r["proved"] for r in every),
        "over_bound": sum(1 for r in every if r["over"]),
        "powers_of_two_L_over_delta_log2_w": split(pow2, "ratio"),
        "by_d_L_over_delta_ceil_log2_w": {str(d): split(rows, "ceil_ratio") for d, rows in by_d.items()},
    }


def measure() -> dict[str, object]:
    wh = [walsh_hadamard_entry(p, d) for p in WH_POINTS for d in WH_D]
    rn = [retnet_entry(N, d) for N in RETNET_N for d in RETNET_D]
    ratios = [float(r["ratio"]) for r in rn]  # type: ignore[arg-type]
    return {
        "walsh_hadamard": wh,
        "walsh_hadamard_excess_by_d": {str(d): sorted({e["excess"] for e in wh if e["d"] == d}) for d in WH_D},
        "retnet": rn,
        "retnet_ratio_range": [min(ratios), max(ratios)],
        "retnet_inner_d_is_d": all(r["inner_d"] == r["d"] for r in rn),
        "h21_sweeps": sweep_maxima(),
        "h21_plan_quick_grid": plan_comparison(),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with docs/measured.json instead of writing it")
    ap.add_argument("--unseen", action="store_true", help="also measure the unseen circuits (about 20 minutes); else keep that entry")
    args = ap.parse_args(argv)
    got = measure()
    if args.unseen:
        got["h21_unseen"] = unseen_maxima()
    elif OUT.exists() and "h21_unseen" in (stored := json.loads(OUT.read_text(encoding="utf-8"))):
        got["h21_unseen"] = stored["h21_unseen"]
    text = json.dumps(got, indent=1, sort_keys=True) + "\n"
    if args.check:
        same = OUT.read_text(encoding="utf-8") == text
        print("docs/measured.json is up to date" if same else "docs/measured.json differs from a fresh measurement")
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}: Walsh–Hadamard excess by d {got['walsh_hadamard_excess_by_d']}, "
          f"retnet L/(N·log2 2d) in {got['retnet_ratio_range']}; H.21 sweeps {got['h21_sweeps']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

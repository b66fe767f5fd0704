"""The construction's figures in the docs are those measured by ``benchmarks/docs_numbers.py``:
the committed ``docs/measured.json`` against the texts, and a few entries re-measured."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("docs_numbers", ROOT / "benchmarks" / "docs_numbers.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


MEASURED = json.loads((ROOT / "docs" / "measured.json").read_text(encoding="utf-8"))


def _flat(path: str) -> str:
    return " ".join((ROOT / path).read_text(encoding="utf-8").split())


def test_readme_states_the_measured_walsh_hadamard_layers():
    wh = MEASURED["walsh_hadamard"]
    at_1 = [e for e in wh if e["d"] == 1]
    layers = ", ".join(str(e["layers"]) for e in at_1)
    points = ", ".join(str(e["points"]) for e in at_1)
    text = _flat("README.md")
    assert f"{layers} layers for N = {points}" in text
    assert all(e["excess"] == 0 for e in at_1)  # "2·log2 N layers at d = 1"
    excess = MEASURED["walsh_hadamard_excess_by_d"]
    assert all(len(v) == 1 for v in excess.values()), excess  # one excess per d, as the text says
    ds = sorted(excess, key=int)
    assert f"excess {', '.join(str(excess[d][0]) for d in ds)} for d = {', '.join(ds)}" in text
    assert all(excess[d][0] == int(d).bit_length() - 1 for d in ds)  # "+ log2 d"


def test_retnet_doc_states_the_measured_ratio_range():
    lo, hi = MEASURED["retnet_ratio_range"]
    text = _flat("docs/retnet.md")
    assert f"lies between {lo} and {hi}" in text
    assert MEASURED["retnet_inner_d_is_d"] and "`d' = d`" in text
    assert "3·2^⌈log2 d⌉" not in text


def _one_decimal(x: float) -> str:
    return f"{round(x, 1):g}"


def test_theory_states_the_measured_h21_sweep_maxima():
    """docs/theory.md, "Measured": each maximum over both tiers of both H.21 proof scripts, as the
    text rounds it (one decimal), from instances that were all proved."""
    m = MEASURED["h21_sweeps"]
    assert m["all_proved"] and m["instances"] > 0
    text = _flat("docs/theory.md")
    assert f"`L/(max(Δ,1)·log2 w) ≤ {_one_decimal(m['L_over_delta_log2_w'])}`" in text
    assert f"`N_k/2^a ≤ {_one_decimal(m['N_k_over_2a'])}`" in text
    assert f"`N'·tw/2^a ≤ {_one_decimal(m['inner_n_tw_over_2a'])}`" in text
    assert f"`N'/w ≤ {_one_decimal(m['inner_n_over_w'])}`" in text
    assert f"`(L − 3)/((Δ+1)(a+2))` is at most {_one_decimal(m['two_term_ratio'])} on the sweeps" in text
    assert f"the measured `L/(Δ·⌈log2 w⌉)` ({_one_decimal(m['L_over_delta_ceil_log2_w'])})" in text


@pytest.mark.parametrize("points,d", [(16, 1), (16, 4)])
def test_walsh_hadamard_entries_re_measured(points, d):
    got = _bench().walsh_hadamard_entry(points, d)
    assert got in MEASURED["walsh_hadamard"]


@pytest.mark.parametrize("N,d", [(1, 3), (2, 1)])
def test_retnet_entries_re_measured(N, d):
    got = _bench().retnet_entry(N, d)
    assert got in MEASURED["retnet"]


def test_docs_state_the_measured_unseen_maxima():
    """README and docs/theory.md state the maxima of ``benchmarks/h21_unseen.py --prove`` as
    ``benchmarks/docs_numbers.py --unseen`` measured them: every model proved, none over a bound."""
    m = MEASURED["h21_unseen"]
    assert m["all_proved"] and m["over_bound"] == 0 and m["circuits"] == 1288
    pow2 = m["powers_of_two_L_over_delta_log2_w"]
    one, more = pow2["delta_1"]["max"], pow2["delta_2_or_more"]["max"]
    theory = (ROOT / "docs" / "theory.md").read_text(encoding="utf-8")
    flat_theory, readme = " ".join(theory.split()), _flat("README.md")
    assert f"at most **{more:.1f} for Δ ≥ 2**" in flat_theory and f"and {one:.1f} for Δ = 1 (none above 8" in flat_theory
    assert f"{more:.1f} for Δ ≥ 2 and {one:.1f} for Δ = 1;" in readme
    by_d = m["by_d_L_over_delta_ceil_log2_w"]
    for d, row in by_d.items():
        a, b = row["delta_1"], row["delta_2_or_more"]
        assert f"| {d} | {a['max']:.2f} | `{a['at']}` | {b['max']:.2f} | `{b['at']}` |" in theory, d
    worst_one = max((row["delta_1"] for row in by_d.values()), key=lambda r: r["max"])
    worst_more = max(row["delta_2_or_more"]["max"] for row in by_d.values())
    assert worst_one["max"] <= 9  # the target of the worst widths
    assert (f"at most {worst_more:.1f} for Δ ≥ 2 and {worst_one['max']:.2f} for Δ = 1 (at `{worst_one['at']}`"
            in readme)


def test_readme_states_the_measured_plan_comparison():
    """README, "Compiling": the exact plan against the greedy one on ``thm_h21_sweep``'s quick grid,
    as ``benchmarks/docs_numbers.py`` measured it (never more layers, per circuit)."""
    m = MEASURED["h21_plan_quick_grid"]
    rows = m["circuits"]
    assert len(rows) == 8 and all(r["exact"] <= r["greedy"] for r in rows)
    assert m["greedy_layers"] == sum(r["greedy"] for r in rows) and m["exact_layers"] == sum(r["exact"] for r in rows)
    first = next(r for r in rows if (r["w"], r["depth"], r["seed"]) == (8, 2, 0))
    text = _flat("README.md")
    assert (f"{m['fewer_percent']} % fewer in all, {m['exact_layers']} layers instead of {m['greedy_layers']}, "
            f"e.g. {first['exact']} instead of {first['greedy']} for its w = 8, Δ = 2, seed 0 circuit") in text


def test_plan_comparison_entry_re_measured():
    got = _bench().plan_entry(8, 2, 0)
    assert got in MEASURED["h21_plan_quick_grid"]["circuits"]

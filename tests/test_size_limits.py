"""Stated size limits: huge objects are measured from their structure, and refused (naming the
limit) before anything would allocate one value per input, cell or digit."""

import json
import time
from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

import symverify as sv
from symverify import Circuit, Gate, Grid, Layer, Model
from symverify.cli import main
from symverify.errors import CompileError, IRError, LimitError
from symverify.ir import limits
from symverify.kernel.ir.analysis import cut_width, degree_bounds, depth, levels, live_sets, stats
from symverify.kernel.ir.baseconv import Mode
from symverify.kernel.ir.circuit import Op
from symverify.kernel.ir.scalar import is_zero
from symverify.kernel.provers.sides import as_side
from symverify.testing import circuits

G = 10**9
HUGE_CIRCUIT = Circuit(G, 1, (Gate.mul(0, 1), Gate.add(G, 5), Gate.const(3)), (G + 1, 7, G + 2), "huge")
MASK = Grid.zeros(G, 1).paint(0, G, 0, 1, 1)
HUGE_MODEL = Model(1, 1, G, 1, (Layer(Grid.identity(1), MASK, MASK.paint(3, 5, 0, 1, 0), MASK),), "tall")
SQUARE = Grid.zeros(10**5, 10**5).paint(0, 10**5, 0, 10**5, 1)


def test_limits_are_stated():
    assert (limits.MAX_CELLS, limits.MAX_INPUTS, limits.MAX_PAINT) == (1 << 22, 1 << 22, 1 << 26)
    assert (limits.MAX_INT_DIGITS, limits.MAX_JSON_INT, limits.MAX_JSON_DEPTH) == (100_000, 2**63 - 1, 64)
    assert issubclass(LimitError, IRError) and sv.LimitError is LimitError
    assert limits.MAX_GATES == 1 << 24


def test_generated_circuits_are_limited_in_gates(monkeypatch):
    """A size typed by mistake is refused at once (it ran until the timeout)."""
    import importlib

    from symverify.library import random_circuit, wired_circuit

    with pytest.raises(LimitError, match=r"random_circuit: 100000000000000000000 gates is more than symverify.ir.limits.MAX_GATES"):
        random_circuit(2, 2, 10**20, 3)
    with pytest.raises(LimitError, match=r"random_circuit\(n=1000000, d=1000000\): 1000000000000 inputs is more than symverify.ir.limits.MAX_INPUTS"):
        random_circuit(10**6, 10**6, 10, 3)
    with pytest.raises(LimitError, match=r"wired_circuit of width 4 and depth 10000000: 40000000 gates"):
        wired_circuit(4, 10**7, "below")
    sweep = importlib.import_module("proofs.thm_h21_sweep")
    with pytest.raises(LimitError, match=r"layered_circuit of width 8 and depth 3000000: 24000000 gates"):
        sweep.layered_circuit(8, 3 * 10**6, 0)
    monkeypatch.setattr(limits, "MAX_GATES", 8)
    with pytest.raises(LimitError, match="MAX_GATES = 8"):
        random_circuit(2, 2, 9, 3)
    assert random_circuit(2, 2, 8, 3).size == 8


# ---- grids: counts from rectangles -------------------------------------------------------------
def test_huge_grid_is_counted_not_expanded():
    t = time.perf_counter()
    g = SQUARE.paint(5, 7, 5, 6, 0).paint(6, 7, 5, 6, "1/2")
    assert g.nonzero_count() == 10**10 - 1 and not g.is_zero()
    assert (g.get(5, 5), g.get(6, 5), g.get(0, 0), g.get(99_999, 99_999)) == (0, Fraction(1, 2), 1, 1)
    assert Grid.full(10**9, 10**9, 2).nonzero_count() == 10**18 and Grid.zeros(10**9, 10**9).is_zero()
    assert time.perf_counter() - t < 2


@pytest.mark.parametrize(
    "call, limit",
    [
        (lambda: SQUARE.cells(), r"the cells of a 100000×100000 grid with 1 rectangles: 10000000000 cells is more than symverify.ir.limits.MAX_PAINT = 67108864"),
        (lambda: SQUARE.nonzero(), r"MAX_PAINT = 67108864"),
        (lambda: SQUARE.to_rows(), r"Grid.to_rows of a 100000×100000 grid: 10000000000 cells is more than symverify.ir.limits.MAX_CELLS = 4194304"),
        (lambda: Grid.full(10**5, 10**5, 1).nonzero(), r"MAX_CELLS = 4194304"),
        (lambda: Grid.identity(10**9), r"Grid.identity\(1000000000\): 1000000000 cells is more than symverify.ir.limits.MAX_CELLS"),
        (lambda: Grid.symbolic("W", 10**4, 10**4), r"Grid.symbolic\('W', 10000, 10000\): 100000000 cells"),
    ],
)
def test_grid_expansions_are_refused(call, limit):
    with pytest.raises(LimitError, match=limit):
        call()


def test_heavily_overlapping_rectangles_are_refused_not_hung():
    g = Grid.zeros(10**6, 10**6)
    for k in range(3000):  # nested squares: resolving them takes ~ 3000³/3 block visits
        g = g.paint(k, 10**6 - k, k, 10**6 - k, k % 2)
    with pytest.raises(LimitError, match=r"counting the nonzero cells of a 1000000×1000000 grid with 3000 overlapping rectangles"):
        g.nonzero_count()


@st.composite
def painted_grids(draw):
    rows, cols = draw(st.integers(0, 7)), draw(st.integers(0, 7))
    g = Grid(rows, cols, draw(st.sampled_from([0, 0, 1, "1/2"])))
    if rows and cols:
        for _ in range(draw(st.integers(0, 8))):
            r0, c0 = draw(st.integers(0, rows - 1)), draw(st.integers(0, cols - 1))
            g = g.paint(r0, draw(st.integers(r0 + 1, rows)), c0, draw(st.integers(c0 + 1, cols)), draw(st.sampled_from([0, 1, -2, 0])))
    return g


@given(painted_grids())
def test_counts_from_rectangles_match_the_dense_matrix(g):
    dense = g.to_rows()
    assert g.nonzero_count() == sum(1 for row in dense for v in row if not is_zero(v))
    assert g.is_zero() == all(is_zero(v) for row in dense for v in row)


@given(painted_grids())
def test_lookup_without_expansion_matches(g):
    dense = g.to_rows()
    old = limits.MAX_PAINT
    limits.MAX_PAINT = -1  # force the rectangle scan in get()
    try:
        assert [[g.get(i, j) for j in range(g.cols)] for i in range(g.rows)] == dense
    finally:
        limits.MAX_PAINT = old


# ---- circuit measures without listing the inputs ------------------------------------------------
def _reference_stats(c):
    """The measures as docs/theory.md §2 defines them, computed the slow, explicit way."""
    nd = c.num_inputs
    lv = [0] * nd
    deg = [1] * nd
    for g in c.gates:
        lv.append(1 + max(lv[a] for a in g.args) if g.args else 0)
        if g.op is Op.CONST:
            deg.append(-1 if is_zero(g.coeffs[0]) else 0)
        elif g.op is Op.MUL:
            a, b = deg[g.args[0]], deg[g.args[1]]
            deg.append(-1 if a < 0 or b < 0 else a + b)
        else:
            deg.append(max([deg[a] for a, co in zip(g.args, g.coeffs) if not is_zero(co)], default=-1))
    delta = max((lv[o] for o in c.outputs), default=0)
    last = [-1] * c.num_nodes
    for k, g in enumerate(c.gates):
        for a in g.args:
            last[a] = max(last[a], lv[nd + k])
    sets = [set() for _ in range(delta + 1)]
    sets[0].update(range(nd))
    for v in range(c.num_nodes):
        if lv[v] > delta:
            continue
        hi = delta if v in set(c.outputs) else min(last[v] - 1, delta)
        for ell in range(lv[v], hi + 1):
            sets[ell].add(v)
    per_level = Counter(lv[nd + k] for k, g in enumerate(c.gates) if g.op is not Op.CONST)
    return {"levels": lv, "depth": delta, "live": [frozenset(s) for s in sets], "width": max(len(s) for s in sets),
            "gate_width": max(per_level.values(), default=0), "degree": deg,
            "degree_bound": max((deg[o] for o in c.outputs), default=-1)}


@given(circuits(max_n=3, max_d=3, max_gates=16, allow_sym=True))
def test_measures_match_the_explicit_definition(c):
    ref = _reference_stats(c)
    s = stats(c)
    assert levels(c) == ref["levels"] and depth(c) == s.depth == ref["depth"]
    assert live_sets(c) == ref["live"]
    assert cut_width(c) == s.width == ref["width"]
    assert s.gate_width == ref["gate_width"] and degree_bounds(c) == ref["degree"] and s.degree_bound == ref["degree_bound"]


def test_stats_of_a_billion_inputs_is_immediate():
    t = time.perf_counter()
    s = stats(HUGE_CIRCUIT)
    assert (s.inputs, s.size, s.depth, s.width, s.degree_bound) == (G, 2, 2, G + 1, 2)  # the constant output is live too
    assert time.perf_counter() - t < 1
    small = Circuit(4, 1, (Gate.mul(0, 1), Gate.add(4, 5 - 2), Gate.const(3)), (5, 3, 6))
    assert stats(small).width == _reference_stats(small)["width"]


@pytest.mark.parametrize("fn", [levels, live_sets, degree_bounds])
def test_per_node_lists_are_refused_beyond_max_inputs(fn):
    with pytest.raises(LimitError, match=rf"{fn.__name__}: circuit huge \(one entry per input\): 1000000000 inputs is more than symverify.ir.limits.MAX_INPUTS = 4194304"):
        fn(HUGE_CIRCUIT)


# ---- models: counts, describe, cost ------------------------------------------------------------
def test_huge_model_is_described_from_its_rectangles():
    t = time.perf_counter()
    side = as_side(HUGE_MODEL)
    info = side.describe()
    assert info["signature"] == [1, 1, 1, G, 1]
    assert info["param_count"] == 1 + 3 * G and info["nonzero_params"] == 1 + 3 * G - 2
    assert side.cost() > G
    assert time.perf_counter() - t < 1


# ---- refusals before allocating -----------------------------------------------------------------
@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: sv.verify(HUGE_CIRCUIT, HUGE_CIRCUIT), r"verify lhs: circuit huge has n·d = 1000000000·1: 1000000000 inputs is more than symverify.ir.limits.MAX_INPUTS"),
        (lambda: sv.verify(HUGE_MODEL, HUGE_MODEL), r"verify lhs: model tall has state N'·d' = 1000000000·1: 1000000000 cells is more than symverify.ir.limits.MAX_CELLS"),
        (lambda: sv.compile(HUGE_CIRCUIT), r"compile: circuit huge has n·d = 1000000000·1"),
        (lambda: sv.compile(HUGE_CIRCUIT, method="dense"), r"MAX_INPUTS = 4194304"),
        (lambda: sv.evaluate(HUGE_MODEL, [[1]]), r"evaluate: model tall has state N'·d' = 1000000000·1"),
        (lambda: sv.polynomials(HUGE_MODEL), r"polynomials: model tall"),
        (lambda: sv.execute(HUGE_MODEL, [[1]]), r"execute: model tall"),
    ],
)
def test_refused_before_allocating(call, match):
    t = time.perf_counter()
    with pytest.raises(LimitError, match=match):
        call()
    assert time.perf_counter() - t < 5


def test_limits_are_read_when_checked(monkeypatch):
    c = sv.library.prefix_sums(8)
    m = sv.compile(c, method="dense").model
    monkeypatch.setattr(limits, "MAX_CELLS", m.inner_n * m.inner_d - 1)
    with pytest.raises(LimitError, match=rf"verify rhs: model .* state N'·d' = {m.inner_n}·{m.inner_d}: .*MAX_CELLS = {m.inner_n * m.inner_d - 1}"):
        sv.verify(c, m)
    with pytest.raises(LimitError, match=r"compile\(method='dense'\) prefix_sums_8: the state N'·d' ≥ n·\(n·d\): 64 cells .*MAX_CELLS = 63"):
        sv.compile(c, method="dense")
    wide = Circuit(1, 2, (Gate.mul(0, 1), Gate.add(0, 1), Gate.sub(0, 1), Gate.mul(0, 0), Gate.mul(2, 3), Gate.mul(4, 5),
                          Gate.mul(6, 7)), (8,), "wide")
    assert sv.compile(wide, method="dense").model.inner_d == 6
    monkeypatch.setattr(limits, "MAX_CELLS", 5)  # n·(n·d) = 2 passes; the layered form needs d' = 6
    with pytest.raises(LimitError, match=r"compile\(method='dense'\) wide: the state N'·d' = 1·6: 6 cells is more than .*MAX_CELLS = 5"):
        sv.compile(wide, method="dense")
    monkeypatch.setattr(limits, "MAX_INPUTS", 7)
    with pytest.raises(LimitError, match=r"evaluate: circuit .* has n·d = 8·1: 8 inputs is more than symverify.ir.limits.MAX_INPUTS = 7"):
        sv.evaluate(c, [[1]] * 8)


def test_kaleidoscope_max_cells_defaults_to_the_stated_limit():
    from symverify.compiler.kaleidoscope import MAX_CELLS

    assert MAX_CELLS == limits.MAX_CELLS
    with pytest.raises(CompileError, match=r"more than max_cells = 4"):
        sv.compile(sv.library.prefix_sums(8), max_cells=4)


def test_the_python_engine_reads_the_cell_limit_at_each_call(monkeypatch):
    """The randomized method's python engine makes a weight grid a dense array mod p only within
    ``limits.MAX_CELLS`` as it is at the call (it was read at import); beyond it, ``W`` is read by
    its nonzero cells (column updates), so a lowered limit changes how, never whether, it runs."""
    W = Grid.from_rows([[(i * 8 + j) % 5 - 2 for j in range(8)] for i in range(8)])
    m = Model(1, 8, 1, 8, (Layer(W, Grid.from_rows([[1] * 8]), Grid.from_rows([[2] * 8]), Grid.from_rows([[1] * 8]), Mode.CAUSAL),))
    from symverify.kernel.provers.modular import BatchModRing

    dense: list[tuple[int, int]] = []
    made = BatchModRing._grid
    monkeypatch.setattr(BatchModRing, "_grid", lambda ring, g: dense.append((g.rows, g.cols)) or made(ring, g))
    assert sv.verify(m, m, method="randomized", backend="python").verdict.value == "proved"
    assert (8, 8) in dense
    dense.clear()
    monkeypatch.setattr(limits, "MAX_CELLS", 32)
    assert sv.verify(m, m, method="randomized", backend="python").verdict.value == "proved"
    assert (8, 8) not in dense, dense


# ---- the command line ---------------------------------------------------------------------------
@pytest.fixture
def huge_files(tmp_path):
    paths = {}
    for name, obj in {"circuit": HUGE_CIRCUIT, "model": HUGE_MODEL}.items():
        paths[name] = str(tmp_path / f"{name}.json")
        sv.dump_file(obj, paths[name])
    square = {"format": "symverify.model", "version": 1, "name": "square", "n": 1, "d": 1, "inner_n": 10**5, "inner_d": 10**5,
              "layers": [{"mode": "cyclic", **{k: {"shape": [10**5, 10**5], "rects": [[0, 10**5, 0, 10**5, "1"]]} for k in ("W", "b1", "h", "b2")}}]}
    paths["square"] = str(tmp_path / "square.json")
    (tmp_path / "square.json").write_text(json.dumps(square), encoding="utf-8")
    paths["out"] = str(tmp_path / "out.json")
    return paths


@pytest.mark.parametrize("name, expect", [("circuit", "width: 1000000001"), ("model", "nonzero_params: 2999999999"),
                                           ("square", "nonzero_params: 40000000000")])
def test_cli_info_on_huge_files(huge_files, capsys, name, expect):
    t = time.perf_counter()
    assert main(["info", huge_files[name]]) == 0
    assert expect in capsys.readouterr().out
    assert main(["info", huge_files[name], "--json"]) == 0
    json.loads(capsys.readouterr().out)
    assert time.perf_counter() - t < 5


@pytest.mark.parametrize(
    "argv, message",
    [
        (["compile", "{circuit}", "-o", "{out}"], "compile: circuit huge has n·d = 1000000000·1: 1000000000 inputs is more than symverify.ir.limits.MAX_INPUTS"),
        (["info", "{circuit}", "--compile", "dense"], "MAX_INPUTS = 4194304"),
        (["verify", "{circuit}", "{circuit}"], "verify lhs: circuit huge"),
        (["verify", "{model}", "{model}"], "verify lhs: model tall has state N'·d' = 1000000000·1"),
        (["verify", "{square}", "{square}"], "state N'·d' = 100000·100000: 10000000000 cells is more than symverify.ir.limits.MAX_CELLS"),
    ],
)
def test_cli_refuses_huge_work_with_exit_3(huge_files, capsys, argv, message):
    code = main([a.format(**huge_files) for a in argv])
    out = capsys.readouterr()
    assert code == 3 and out.err.startswith("symverify: error: ") and out.err.count("\n") == 1
    assert message in out.err and "Traceback" not in out.err


def test_sweep_grid_refuses_circuits_beyond_max_gates(monkeypatch):
    """The tier's widths with a given depth: refused by the script before any circuit is built."""
    import importlib

    from symverify.errors import UsageError
    from symverify.scripts.protocol import SWEEP_ENV

    sweep = importlib.import_module("proofs.thm_h21_sweep")
    monkeypatch.setenv(SWEEP_ENV, '{"depths": [200000]}')
    with pytest.raises(UsageError, match=r"width 128 and depth 200000 has 25600000 gates, more than symverify.ir.limits.MAX_GATES"):
        sweep.grid(False)
    monkeypatch.setenv(SWEEP_ENV, '{"depths": [100000]}')
    assert max(sweep.grid(False)["depths"]) == 100000

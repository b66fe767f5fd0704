"""The BaseConv primitives of docs/appendix-h.md §2.3 (lemma `primitives`), written by hand.

Each primitive is one BaseConv layer ``y = (u·W + b1) ⊙ (h ⊛ u + b2)`` with the weights of the
notes' table (two layers for ``add``), checked against a circuit that states what it computes.
Every check is the *exact* method on symbolic inputs; where the statement is "for all weights"
(linear map ``u·W``, convolution ``h ⊛ u``, fixed gate ``B ⊙ u``, constant ``R``, product of
features ``(u·W)_q · u[:, q]``) the weights are symbolic parameters, so one check covers every
value. Shifts follow the notes' corrections: ``shift_down(s)`` uses the kernel ``e_s`` (causal);
``shift_up(s)`` uses the cyclic kernel ``e_{(−s) mod N}`` with the row mask ``i + s < N`` (one
layer; the printed three-layer proof is wrong); the cyclic rotation drops the mask. ``add`` is
the two-layer running sum of prop `prim-add`. Stated bounds: the layer count of the table
(1, or 2 for ``add``) and inner size ``N' = N``, ``d' = d`` (no padding).
"""

from __future__ import annotations

from collections.abc import Callable

from symverify.ir.build import CircuitBuilder, Wire, sum_tree
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import sym
from symverify.kernel.verification import verify
from symverify.scripts.protocol import Instance, ProofResult, script_main, timed

TITLE = "docs/appendix-h.md §2.3: the BaseConv primitives (hand-written; one layer each, two for add), for all weights"
COST = 0.5  # CPU seconds of the full tier, measured (orders and splits a parallel run)

Built = tuple[Model, Circuit]


def _sym_grid(rows: int, cols: int, name: str) -> Grid:
    return Grid.symbolic(name, rows, cols)


def _impulse(n: int, d: int, lag: int) -> Grid:
    return Grid.zeros(n, d).paint(lag, lag + 1, 0, d, 1)


def _model(n: int, d: int, name: str, *layers: Layer) -> Model:
    return Model(n, d, n, d, layers, name)


def _circuit(n: int, d: int, name: str, cell: Callable[[CircuitBuilder, list[list[Wire]], int, int], object]) -> Circuit:
    b = CircuitBuilder(n, d)
    u = b.inputs()
    return b.build([cell(b, u, i, j) for i in range(n) for j in range(d)], name)


def linear_map(n: int, d: int) -> Built:
    """``u·W``: W = W, b1 = 0, h = 0, b2 = 1."""
    layer = Layer.make(n, d, W=_sym_grid(d, d, "W"), b2=Grid.full(n, d, 1))
    c = _circuit(n, d, "u·W", lambda b, u, i, q: sum_tree(b, [(sym(f"W[{p}][{q}]"), u[i][p]) for p in range(d)]))
    return _model(n, d, "linear map", layer), c


def identity(n: int, d: int) -> Built:
    """``u``: W = I, b1 = 0, h = 0, b2 = 1 (the padding layer)."""
    layer = Layer.make(n, d, W=Grid.identity(d), b2=Grid.full(n, d, 1))
    return _model(n, d, "identity", layer), _circuit(n, d, "u", lambda b, u, i, j: u[i][j])


def convolution(n: int, d: int, mode: Mode) -> Built:
    """``h ⊛ u``: W = 0, b1 = 1, h = h, b2 = 0 (causal, or cyclic with indices mod N)."""
    layer = Layer.make(n, d, b1=Grid.full(n, d, 1), h=_sym_grid(n, d, "h"), mode=mode)

    def cell(b: CircuitBuilder, u: list[list[Wire]], i: int, j: int) -> object:
        ks = range(n) if mode is Mode.CYCLIC else range(i + 1)
        return sum_tree(b, [(sym(f"h[{k}][{j}]"), u[(i - k) % n][j]) for k in ks])

    return _model(n, d, f"convolution ({mode.value})", layer), _circuit(n, d, "h ⊛ u", cell)


def fixed_gate(n: int, d: int) -> Built:
    """``B ⊙ u``: W = 0, b1 = B, h = e_0, b2 = 0."""
    layer = Layer.make(n, d, b1=_sym_grid(n, d, "B"), h=_impulse(n, d, 0))
    return _model(n, d, "fixed gate", layer), _circuit(n, d, "B ⊙ u", lambda b, u, i, j: u[i][j] * sym(f"B[{i}][{j}]"))


def constant(n: int, d: int) -> Built:
    """``R``: W = 0, b1 = R, h = 0, b2 = 1."""
    layer = Layer.make(n, d, b1=_sym_grid(n, d, "R"), b2=Grid.full(n, d, 1))
    return _model(n, d, "constant", layer), _circuit(n, d, "R", lambda b, u, i, j: b.const(sym(f"R[{i}][{j}]")))


def shift_down(n: int, d: int, s: int) -> Built:
    """``y[i] = u[i − s]`` (0 for i < s): W = 0, b1 = 1, h = e_s, b2 = 0, causal."""
    layer = Layer.make(n, d, b1=Grid.full(n, d, 1), h=_impulse(n, d, s))
    c = _circuit(n, d, f"shift_down {s}", lambda b, u, i, j: u[i - s][j] if i >= s else b.const(0))
    return _model(n, d, f"shift_down({s})", layer), c


def shift_up(n: int, d: int, s: int) -> Built:
    """``y[i] = u[i + s]`` (0 for i + s ≥ N): W = 0, b1 = mask(i + s < N), h = e_{(−s) mod N}, cyclic."""
    layer = Layer.make(n, d, b1=Grid.zeros(n, d).paint(0, n - s, 0, d, 1), h=_impulse(n, d, (-s) % n), mode=Mode.CYCLIC)
    c = _circuit(n, d, f"shift_up {s}", lambda b, u, i, j: u[i + s][j] if i + s < n else b.const(0))
    return _model(n, d, f"shift_up({s})", layer), c


def rotate_up(n: int, d: int, s: int) -> Built:
    """``y[i] = u[(i + s) mod N]``: W = 0, b1 = 1, h = e_{(−s) mod N}, cyclic."""
    layer = Layer.make(n, d, b1=Grid.full(n, d, 1), h=_impulse(n, d, (-s) % n), mode=Mode.CYCLIC)
    c = _circuit(n, d, f"rotate_up {s}", lambda b, u, i, j: u[(i + s) % n][j])
    return _model(n, d, f"cyclic shift_up({s})", layer), c


def feature_product(n: int, d: int) -> Built:
    """``y[:, q] = (u·W)_q · u[:, q]``: W = W, b1 = 0, h = e_0, b2 = 0."""
    layer = Layer.make(n, d, W=_sym_grid(d, d, "W"), h=_impulse(n, d, 0))

    def cell(b: CircuitBuilder, u: list[list[Wire]], i: int, q: int) -> object:
        return sum_tree(b, [(sym(f"W[{p}][{q}]"), u[i][p]) for p in range(d)]) * u[i][q]

    return _model(n, d, "product of features", layer), _circuit(n, d, "(u·W) ⊙ u", cell)


def add(n: int, d: int) -> Built:
    """Running sum on rows ``[x; S]`` (N = 2n): rows [0, n) become 1, rows [n, 2n) become S + x.

    Layer 1: W = 0, h = e_0 + e_n, b1 = 1 on rows [n, 2n), b2 = 0. Layer 2: W = 0, h = e_0, b1 = 1,
    b2 = 1 on rows [0, n).
    """
    N = 2 * n
    one = Layer.make(N, d, b1=Grid.zeros(N, d).paint(n, N, 0, d, 1), h=_impulse(N, d, 0).paint(n, n + 1, 0, d, 1))
    two = Layer.make(N, d, b1=Grid.full(N, d, 1), h=_impulse(N, d, 0), b2=Grid.zeros(N, d).paint(0, n, 0, d, 1))
    c = _circuit(N, d, "add", lambda b, u, i, j: b.const(1) if i < n else u[i][j] + u[i - n][j])
    return _model(N, d, "add (running sum)", one, two), c


def _check(built: Built, layers: int) -> Instance:
    model, circuit = built
    with timed() as t:
        report = verify(circuit, model, method="exact")
    resources = {"layers": model.depth, "inner_n": model.inner_n, "inner_d": model.inner_d,
                 "nonzero_params": model.nonzero_param_count(), "symbols": len(model.params())}
    bounds = {"layers": layers, "inner_n": model.n, "inner_d": model.d}
    detail = f"{report.evidence.get('monomials_compared')} monomials compared"
    if report.counterexample is not None:
        detail = f"counterexample {report.counterexample}"
    name = f"{model.name} N={model.n} d={model.d}"
    return Instance.from_report(name, report, resources=resources, bounds=bounds, seconds=t[0], detail=detail)


def _suite(n: int, d: int) -> list[tuple[Built, int]]:
    items: list[tuple[Built, int]] = [
        (linear_map(n, d), 1),
        (identity(n, d), 1),
        (convolution(n, d, Mode.CAUSAL), 1),
        (convolution(n, d, Mode.CYCLIC), 1),
        (fixed_gate(n, d), 1),
        (constant(n, d), 1),
        (feature_product(n, d), 1),
        (add(n, d), 2),
    ]
    for s in sorted({1, n - 1}):
        items += [(shift_down(n, d, s), 1), (shift_up(n, d, s), 1), (rotate_up(n, d, s), 1)]
    return items


def run(quick: bool = False) -> ProofResult:
    result = ProofResult("primitives_handwritten", TITLE)
    for n, d in [(3, 2)] if quick else [(3, 2), (4, 3), (8, 2)]:
        result.instances.extend(_check(built, layers) for built, layers in _suite(n, d))
    return result


if __name__ == "__main__":
    raise SystemExit(script_main(run))

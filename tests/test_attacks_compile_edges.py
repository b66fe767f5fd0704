"""Edge-case circuits through both compilers and every plan, and the library builders' arguments.

Every valid circuit compiles (``dense``, ``kaleidoscope`` with each plan) to a model within its
stated bounds that ``verify`` proves, by its certificate and by exact expansion, and that agrees with
the circuit at a random rational point by exact evaluation; bad builder arguments are a
``SymverifyError`` naming the argument (tests/test_attacks_compile.py holds the compiler's options)."""

from __future__ import annotations

import math
import random
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify import library, library_gated
from symverify.errors import IRError, ShapeError, UsageError
from symverify.gadgets.primitives import affine_map
from symverify.kernel.ir.analysis import stats
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.grid import Grid

ROUTES = [("dense", None), ("kaleidoscope", "auto"), ("kaleidoscope", "exact"), ("kaleidoscope", "greedy")]
ROUTE_IDS = ["dense", "auto", "exact", "greedy"]


def _point(c: Circuit, rng: random.Random) -> tuple[list[list[Fraction]], dict[str, Fraction]]:
    u = [[Fraction(rng.randint(-9, 9), rng.choice((1, 2, 3))) for _ in range(c.d)] for _ in range(c.n)]
    return u, {p: Fraction(rng.randint(-5, 5), rng.choice((1, 7))) for p in sorted(c.params())}


def _compile(c: Circuit, method: str, plan: str | None, **kw: Any) -> Any:
    return sv.compile(c, method, **kw) if plan is None else sv.compile(c, method, plan=plan, **kw)


def _check(c: Circuit, method: str, plan: str | None, seed: int = 0) -> Any:
    """Compile ``c``; the model is within its bounds, proved by its certificate and by exact
    expansion, and computes the circuit's values at a random point."""
    out = _compile(c, method, plan)
    assert out.over_bound() == []
    assert (out.model.n, out.model.d) == (c.n, c.d)
    assert sv.verify(c, out).proved
    assert sv.verify(c, out.model, method="exact").proved
    u, params = _point(c, random.Random(seed))
    mine = out.model.params()
    assert sv.evaluate(out, u, params={k: v for k, v in params.items() if k in mine}) == sv.evaluate(c, u, params=params)
    return out


a, b = sv.sym("a"), sv.sym("b")


def _chain(k: int) -> Circuit:
    """``x ↦ x_k`` with ``x_{i+1} = x_i·x_i + x_i`` on one input: depth 2k, width 1."""
    gates: list[Gate] = []
    node = 0
    for _ in range(k):
        gates.append(Gate.mul(node, node))
        gates.append(Gate.lin(len(gates), 1, node, 1))
        node = len(gates)
    return Circuit(1, 1, tuple(gates), (node,))


EDGE = {
    # outputs that are inputs, in odd orders, repeated, with constants between them
    "inputs reversed": Circuit(2, 4, (), tuple(range(7, -1, -1))),
    "inputs reversed, d = 3": Circuit(3, 3, (), tuple(range(8, -1, -1))),
    "last input only": Circuit(4, 2, (), (7,)),
    "one input nine times": Circuit(3, 3, (), (4,) * 9),
    "constant 0 then 1 then an input": Circuit(1, 3, (Gate.const(0), Gate.const(1)), (3, 4, 0)),
    "constants 1, 0, 1 interleaved": Circuit(2, 2, (Gate.const(1), Gate.const(0)), (4, 5, 4, 1)),
    "a constant squared": Circuit(1, 2, (Gate.const(7), Gate.mul(2, 2)), (3, 2)),
    "the zero polynomial from a product": Circuit(1, 2, (Gate.const(0), Gate.mul(0, 2)), (3, 3)),
    # gates no output reads
    "dead products": Circuit(1, 2, (Gate.mul(0, 1), Gate.mul(2, 2), Gate.mul(3, 3)), (1,)),
    "dead gates, no outputs": Circuit(2, 2, (Gate.mul(0, 1), Gate.lin(4, 2, 3, 1)), ()),
    # coefficients: zero, cancelling, huge, tiny, symbolic
    "zero coefficients": Circuit(1, 2, (Gate.lin(0, 0, 1, 0), Gate.mul(2, 0)), (2, 3)),
    "x − x": Circuit(1, 2, (Gate.lin(0, 1, 0, -1), Gate.mul(2, 1)), (3, 2)),
    "a·x − a·x": Circuit(1, 2, (Gate.lin(0, a, 0, -a), Gate.lin(2, 1, 1, 1)), (3,)),
    "10^300 then 10^-300": Circuit(1, 2, (Gate.lin(0, 10**300, 1, -(10**300)), Gate.lin(2, Fraction(1, 10**300), 0, 0)), (3,)),
    "-10^300 squared": Circuit(1, 1, (Gate.lin(0, -(10**300), 0, 0), Gate.mul(1, 1)), (2,)),
    "denominator 7^400": Circuit(1, 2, (Gate.lin(0, Fraction(3, 7**400), 1, Fraction(-1, 7**400)),), (2,)),
    "symbolic constant gate": Circuit(1, 2, (Gate.const(a * b), Gate.mul(2, 0)), (3, 2)),
    # shapes: n = 1, d = 1, n·d not a power of two, deep and narrow, wide and shallow
    "d = 1, n = 6": Circuit(6, 1, (Gate.mul(0, 5), Gate.lin(1, 1, 4, -1)), (7, 6, 2)),
    "n = 1, d = 7": Circuit(1, 7, (Gate.mul(0, 6), Gate.mul(7, 3)), (8, 7, 0)),
    "d = 5, one output": Circuit(2, 5, (Gate.mul(9, 0),), (10,)),
    "deep narrow chain": _chain(6),
    "wide shallow products": Circuit(4, 4, tuple(Gate.mul(i, 15 - i) for i in range(16)), tuple(range(16, 32))),
    "wide shallow, outputs shuffled": Circuit(2, 4, tuple(Gate.lin(i, 1, (i + 3) % 8, 2) for i in range(8)),
                                              (11, 8, 15, 9, 14, 10, 13, 12)),
    "m much smaller than n·d": Circuit(4, 4, tuple(Gate.mul(i, i + 1) for i in range(15)), (30,)),
}


@pytest.mark.parametrize(("method", "plan"), ROUTES, ids=ROUTE_IDS)
@pytest.mark.parametrize("name", sorted(EDGE))
def test_edge_circuits_compile_to_proved_models_by_every_route(name: str, method: str, plan: str | None) -> None:
    _check(EDGE[name], method, plan)


def test_the_zero_polynomial_and_the_constant_one_are_told_apart() -> None:
    """A model of ``[0, 1]`` is refuted against ``[1, 0]`` and ``[1, 1]``: outputs of constants are
    compiled where they belong, not as one shared value."""
    zero_one = Circuit(1, 2, (Gate.const(0), Gate.const(1)), (2, 3))
    for method, plan in ROUTES:
        model = _compile(zero_one, method, plan).model
        assert sv.evaluate(model, [[5, 6]]) == [[0, 1]]
        for other in ((3, 2), (3, 3)):
            assert sv.verify(Circuit(1, 2, zero_one.gates, other), model).refuted


def test_an_output_order_is_compiled_not_sorted() -> None:
    c = EDGE["inputs reversed"]
    for method, plan in ROUTES:
        model = _compile(c, method, plan).model
        assert sv.evaluate(model, [[1, 2, 3, 4], [5, 6, 7, 8]]) == [[8, 7, 6, 5], [4, 3, 2, 1]]
        assert sv.verify(Circuit(2, 4, (), tuple(range(8))), model).refuted


def test_traced_functions_with_python_numbers_compile() -> None:
    F = Fraction

    def fn(u: Any) -> list[Any]:
        x, y, z = u[0][0], u[0][1], u[1][0]
        return [3 - x / 4 + F(1, 3) * y * y, 0, 1, x * x * x - x ** 3, "2/5" * z + 10**300, F(-7, 10**50), x, x]

    c = sv.Circuit.trace(fn, n=2, d=4)
    assert sv.evaluate(c, [[2, 3, 5, 0], [0, 0, 0, 0]])[0] == [F(11, 2), 0, 1, 0]
    for method, plan in ROUTES:
        _check(c, method, plan, seed=3)


@pytest.mark.parametrize("name", ["", " ", "a\nb", "\x00", "é✓ model", "x" * 5000, "../../etc/passwd"])
@pytest.mark.parametrize("method", ["dense", "kaleidoscope"])
def test_odd_model_names_are_kept_as_given(name: str, method: str, tmp_path: Any) -> None:
    c = Circuit(1, 2, (Gate.mul(0, 1),), (2,), name="c")
    out = sv.compile(c, method, name=name)
    assert out.model.name == (name or {"dense": "dense(c)", "kaleidoscope": "c_kaleidoscope"}[method])
    assert sv.verify(c, out).proved
    path = tmp_path / "m.json"
    sv.dump_file(out.model, str(path))
    assert sv.load_file(str(path)) == out.model


def test_max_cells_at_the_exact_size_compiles_and_one_less_is_refused() -> None:
    c = library.random_circuit(2, 3, 10, 3, seed=5, num_outputs=6)
    for plan in ("auto", "exact", "greedy"):
        out = sv.compile(c, plan=plan)
        cells = out.model.inner_n * out.model.inner_d
        assert sv.compile(c, plan=plan, max_cells=cells).model == out.model
        with pytest.raises(sv.errors.CompileError, match=rf"= {cells} cells .*more than max_cells = {cells - 1}"):
            sv.compile(c, plan=plan, max_cells=cells - 1)


# ---- random small circuits of the edge shapes ---------------------------------------------------
COEFFS = [0, 1, -1, 2, Fraction(1, 3), Fraction(-5, 2), 10**300, Fraction(1, 7**200), a, a * b, a - a]


@st.composite
def edge_circuits(draw: Any) -> Circuit:
    n, d = draw(st.integers(1, 3)), draw(st.integers(1, 5))
    nd = n * d
    shape = draw(st.sampled_from(["any", "chain", "wide"]))
    gates: list[Gate] = []
    for k in range(draw(st.integers(0, 10))):
        top = nd + k
        lo = max(0, top - 2) if shape == "chain" else 0
        hi = nd if shape == "wide" else top
        kind = draw(st.sampled_from(["const", "lin", "mul", "square"]))
        if kind == "const":
            gates.append(Gate.const(draw(st.sampled_from(COEFFS))))
        elif kind == "lin":
            gates.append(Gate.lin(draw(st.integers(lo, hi - 1)), draw(st.sampled_from(COEFFS)),
                                  draw(st.integers(0, hi - 1)), draw(st.sampled_from(COEFFS))))
        elif kind == "mul":
            gates.append(Gate.mul(draw(st.integers(lo, hi - 1)), draw(st.integers(0, hi - 1))))
        else:
            x = draw(st.integers(lo, hi - 1))
            gates.append(Gate.mul(x, x))
    nodes = nd + len(gates)
    outs = draw(st.lists(st.integers(0, nodes - 1), max_size=nd))
    return Circuit(n, d, tuple(gates), tuple(outs))


@settings(max_examples=25, deadline=None)
@given(c=edge_circuits(), seed=st.integers(0, 2**16))
def test_random_edge_circuits_compile_to_proved_models_by_every_route(c: Circuit, seed: int) -> None:
    for method, plan in ROUTES:
        _check(c, method, plan, seed)


# ---- library builders: arguments ------------------------------------------------------------------
@pytest.mark.parametrize(("kw", "match"), [
    ({"num_outputs": 2.0}, r"expected an int num_outputs \(or None\), found float 2\.0"),
    ({"num_outputs": True}, r"expected an int num_outputs \(or None\), found bool True"),
    ({"seed": None}, r"expected an int seed, found NoneType None"),
    ({"seed": 1.5}, r"expected an int seed, found float 1\.5"),
    ({"seed": True}, r"expected an int seed, found bool True"),
    ({"seed": [1]}, r"expected an int seed, found list \[1\]"),
    ({"consts": "no"}, r"expected consts True or False, found str 'no'"),
    ({"consts": 0}, r"expected consts True or False, found int 0"),
])
def test_random_circuit_arguments_of_the_wrong_type_are_refused(kw: dict[str, Any], match: str) -> None:
    """``num_outputs=2.0`` raised Python's TypeError from a slice and ``True`` meant one output;
    ``seed=None`` drew a circuit no one could rebuild (named ``…_seedNone``); ``consts="no"`` added
    constants."""
    with pytest.raises(IRError, match=r"random_circuit: " + match):
        library.random_circuit(2, 2, 5, 3, **kw)


def test_random_circuit_int_arguments_still_work() -> None:
    c = library.random_circuit(2, 2, 5, 3, seed=-4, num_outputs=0, consts=False)
    assert c.outputs == () and stats(c).size == 5
    assert library.random_circuit(2, 2, 5, 3, seed=7) == library.random_circuit(2, 2, 5, 3, seed=7)


@pytest.mark.parametrize(("kw", "match"), [
    ({"d": True}, r"d: expected a positive divisor of w = 4, found True"),
    ({"seed": 1.5}, r"expected an int seed, found float 1\.5"),
    ({"seed": None}, r"expected an int seed, found NoneType None"),
    ({"shuffle_outputs": "yes"}, r"expected shuffle_outputs True or False, found str 'yes'"),
    ({"shuffle_outputs": 1}, r"expected shuffle_outputs True or False, found int 1"),
])
def test_wired_circuit_arguments_of_the_wrong_type_are_refused(kw: dict[str, Any], match: str) -> None:
    with pytest.raises(UsageError, match=r"wired_circuit: " + match):
        library.wired_circuit(4, 2, "below", **kw)


def test_h3_refuses_an_unknown_weight_by_name() -> None:
    """``h3(N, d, W_Q=...)`` raised Python's TypeError from ``h3_weights``."""
    with pytest.raises(IRError, match=r"h3: unknown weights \['W_Q', 'foo'\]; expected only \['W_q', "):
        library_gated.h3(2, 1, W_Q=[[1]], foo=1)


def test_h3_passes_on_exactly_the_weights_h3_weights_takes() -> None:
    import inspect

    taken = [p.name for p in inspect.signature(library_gated.h3_weights).parameters.values() if p.kind is p.KEYWORD_ONLY]
    assert sorted(taken) == sorted(library_gated._H3_WEIGHTS)
    c = library_gated.h3(2, 1, W_q=[[2]], D=[0], prefix="p.")
    assert "p.W_k[0][0]" in c.params() and "p.W_q[0][0]" not in c.params()


@pytest.mark.parametrize(("call", "match"), [
    (lambda: library_gated.gated_conv_weights(2, 1, kind=3), r"gated_conv_weights: expected a str kind, found int 3"),
    (lambda: library_gated.hyena_weights(2, 1, prefix=b"x"), r"gated_conv_weights: expected a str prefix, found bytes b'x'"),
    (lambda: library_gated.hyena_weights(2, 1, in_proj=[[1, 1, 1]], prefix=None), r"expected a str prefix, found NoneType None"),
    (lambda: library_gated.h3_weights(2, 1, prefix=3), r"h3_weights: expected a str prefix, found int 3"),
])
def test_gated_names_must_be_str(call: Any, match: str) -> None:
    with pytest.raises(IRError, match=match):
        call()


def test_affine_map_rows_must_be_a_list_not_an_iterator_or_mapping() -> None:
    """Rows given as a generator were used up by the type check, so every row was dropped (a
    layer computing 0); a dict was read as its keys."""
    with pytest.raises(ShapeError, match=r"affine_map rows: expected a list of ints, found generator"):
        affine_map(Grid.identity(2), 3, rows=(r for r in [0, 1]))  # type: ignore[arg-type]
    with pytest.raises(ShapeError, match=r"affine_map rows: expected a list of ints, found dict"):
        affine_map(Grid.identity(2), 3, rows={0: 5})  # type: ignore[arg-type]
    for rows in ([0, 2], (2, 0), range(0, 3, 2), {0, 2}):
        assert sorted(affine_map(Grid.identity(2), 3, rows=rows).exit) == [(0, 0), (0, 1), (2, 0), (2, 1)]


# ---- library builders: the polynomials their docstrings state ----------------------------------
def _flat(c: Circuit, x: list[Fraction], params: dict[str, Fraction] | None = None) -> list[Fraction]:
    u = [x[i * c.d:(i + 1) * c.d] for i in range(c.n)]
    return [v for row in sv.evaluate(c, u, params=params or {}) for v in row][:len(c.outputs)]


def _xs(k: int, seed: int) -> list[Fraction]:
    rng = random.Random(seed)
    return [Fraction(rng.randint(-9, 9), rng.choice((1, 2, 5))) for _ in range(k)]


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_symbolic_mixing_is_its_two_levels(n: int) -> None:
    x, av, bv = _xs(n, n), Fraction(3, 2), Fraction(-2)
    y = [av * x[i] + bv * x[(i + 1) % n] for i in range(n)]
    assert _flat(library.symbolic_mixing(n), x, {"a": av, "b": bv}) == [y[i] + av * bv * y[(i + 1) % n] for i in range(n)]


@pytest.mark.parametrize(("N", "d"), [(1, 1), (3, 1), (5, 2), (1, 6), (3, 3)])
def test_prefix_sums_and_product_tree_with_d_above_one(N: int, d: int) -> None:
    x = _xs(N * d, N + 7 * d)
    assert _flat(library.prefix_sums(N, d), x) == [sum(x[:k + 1], Fraction(0)) for k in range(N * d)]
    assert _flat(library.product_tree(N, d), x) == [math.prod(x)]
    depth = math.ceil(math.log2(N * d))
    assert stats(library.prefix_sums(N, d)).depth == depth == stats(library.product_tree(N, d)).depth


@pytest.mark.parametrize(("n", "d"), [(1, 1), (1, 4), (4, 1), (2, 4)])
def test_walsh_hadamard_is_sylvester_for_every_split_of_n_times_d(n: int, d: int) -> None:
    N = n * d
    x = _xs(N, N + d)
    assert _flat(library.walsh_hadamard(n, d), x) == [sum((x[j] * (-1) ** bin(i & j).count("1") for j in range(N)), Fraction(0))
                                                      for i in range(N)]
    assert stats(library.walsh_hadamard(n, d)).depth == N.bit_length() - 1


@pytest.mark.parametrize(("N", "d"), [(1, 1), (4, 1), (3, 2), (2, 3), (2, 4)])
def test_retnet_depth_is_its_docstring_formula(N: int, d: int) -> None:
    lg = math.ceil(math.log2(d)) if d > 1 else 0
    assert stats(library.retnet(N, d)).depth == N + 1 + max(1, lg) + lg


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
@pytest.mark.parametrize("part", ["resources", "bounds"])
def test_a_compiled_result_refuses_non_finite_numbers(part: str, bad: float) -> None:
    """``resources={"layers": nan}`` was never over its bound, so ``over_bound()`` was empty and the
    result printed "within bounds"."""
    from symverify.compiler.result import Compiled

    out = sv.compile(Circuit(1, 2, (Gate.mul(0, 1),), (2,)))
    numbers = {**getattr(out, part), "layers": bad}
    kw = {"resources": out.resources, "bounds": out.bounds, part: numbers}
    with pytest.raises(sv.errors.CompileError, match=rf"Compiled {part}\['layers'\]: expected a finite number, found {bad}"):
        Compiled(out.model, out.certificate, kw["resources"], "kaleidoscope", kw["bounds"])
    assert Compiled(out.model, out.certificate, {**out.resources, "layers": 1e9}, "kaleidoscope", out.bounds).over_bound() == ["layers"]


@pytest.mark.parametrize("method", ["dense", "kaleidoscope"])
@pytest.mark.parametrize("option", ["plan", "max_cells", "name"])
def test_options_given_as_arrays_are_refused_by_name(method: str, option: str) -> None:
    """An option compared with its default by ``!=`` was an array, whose truth value raised
    Python's ValueError ("ambiguous") instead of the option's error."""
    np = pytest.importorskip("numpy")
    c = Circuit(1, 2, (Gate.mul(0, 1),), (2,))
    value = {"plan": np.array(["auto", "exact"]), "max_cells": np.array([5, 6]), "name": np.array(["a", "b"])}[option]
    match = {"plan": r"plan: expected one of", "max_cells": r"max_cells: expected a positive int",
             "name": r"name: expected a str, found ndarray"}[option]
    if method == "dense" and option != "name":
        match = rf"compile\(method='dense'\): unknown options \['{option}'\]"
    with pytest.raises(sv.errors.CompileError, match=match):
        sv.compile(c, method, **{option: value})


def test_a_method_given_as_an_array_is_refused_by_name() -> None:
    np = pytest.importorskip("numpy")
    with pytest.raises(sv.errors.CompileError, match=r"compile: unknown method array\(\['dense', 'x'\]"):
        sv.compile(Circuit(1, 2, (Gate.mul(0, 1),), (2,)), np.array(["dense", "x"]))  # type: ignore[arg-type]


@pytest.mark.parametrize("quick", ["no", 0, None])
def test_standard_library_quick_must_be_a_bool(quick: object) -> None:
    """``standard_library("no")`` was the quick tier (any truthy value)."""
    with pytest.raises(UsageError, match=r"standard_library: expected quick True or False, found "):
        library.standard_library(quick)  # type: ignore[arg-type]
    assert [c.name for c in library.standard_library(False)] != [c.name for c in library.standard_library(True)]


# ---- gadgets: sizes and channel lists ------------------------------------------------------------
def _remember_cases() -> list[tuple[Any, str]]:
    from symverify.gadgets.compose import pad
    from symverify.gadgets.primitives import shift_down
    from symverify.gadgets.remember import ChannelF, ConstF, remember_channels, remember_rows

    one, row = Grid.from_rows([[1]]), Grid.from_rows([[1, 1]])
    return [
        (lambda: remember_rows("4", 2, 1, 0, row, ConstF(row)), r"remember_rows: expected a positive int inner_n, found '4'"),
        (lambda: remember_rows(4, 2.0, 1, 0, row, ConstF(row)), r"remember_rows: expected a positive int inner_d, found 2\.0"),
        (lambda: remember_rows(4, 2, 1, 0, row, ConstF(row), cols={0: 1, 1: 1}),
         r"remember_rows cols: expected a list of channels, found dict"),
        (lambda: remember_channels("2", 2, 1, 1, one, ConstF(one)), r"remember_channels: expected a positive int inner_n, found '2'"),
        (lambda: remember_channels(2, True, 1, 0, one, ConstF(one)), r"remember_channels: expected a positive int inner_d, found True"),
        (lambda: ChannelF(2), r"ChannelF expected a list of channels, found int 2"),  # type: ignore[arg-type]
        (lambda: ChannelF({2: 0}), r"ChannelF expected a list of channels, found dict"),  # type: ignore[arg-type]
        (lambda: pad(shift_down(2, 1, 1), "3", 1), r"pad: expected a positive int inner_n, found '3'"),
        (lambda: pad(shift_down(2, 1, 1), 2, True), r"pad: expected a positive int inner_d, found True"),
    ]


@pytest.mark.parametrize("case", range(len(_remember_cases())))
def test_gadget_sizes_and_channel_lists_of_the_wrong_type_are_refused(case: int) -> None:
    """A str size raised Python's TypeError from a comparison, ``ChannelF(2)`` "'int' object is not
    iterable", a dict of channels was read as its keys and ``pad(frag, 2, True)`` took True for 1."""
    call, match = _remember_cases()[case]
    with pytest.raises(ShapeError, match=match):
        call()


def test_remember_and_pad_with_int_sizes_still_prove() -> None:
    from symverify.gadgets.compose import pad
    from symverify.gadgets.primitives import shift_down
    from symverify.gadgets.remember import ChannelF, remember_channels, remember_rows
    from symverify.kernel.provers.fragment import prove_fragment

    assert ChannelF(range(2, 4)).cols == (2, 3)
    for frag in (remember_rows(4, 2, 1, 1, Grid.from_rows([[1]]), ChannelF([1]), cols=[0]),
                 remember_channels(2, 3, 1, 1, Grid.from_rows([[1]]), ChannelF((2,))),
                 pad(shift_down(2, 1, 1), 3, 2)):
        assert prove_fragment(frag).ok

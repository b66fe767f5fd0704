"""Numpy scalars, bools and other near-ints at the public constructors of the IR and the library:
each is read as the plain value it stands for, or refused with an error naming what was expected."""

from __future__ import annotations

import numpy as np
import pytest

from symverify.errors import IRError
from symverify.kernel.ir.circuit import Circuit, Gate


@pytest.mark.parametrize("make", [
    lambda i: Gate.mul(i, 1),
    lambda i: Gate.lin(i, 2, 1, 3),
    lambda i: Gate.add(1, i),
    lambda i: Gate.sub(i, 1),
    lambda i: Gate.scale(i, 5),
    lambda i: Gate(Gate.mul(0, 1).op, np.array([i, 1])),
])
def test_a_numpy_integer_node_id_is_stored_as_a_plain_int(make):
    """``Gate.mul(np.int64(0), 1)`` kept the numpy integer, which ``Circuit`` then refused; a node id is read
    by its value, as a grid position or a permutation entry is (``as_index``)."""
    g = make(np.int64(0))
    assert all(type(a) is int for a in g.args), g.args
    assert g == make(0)
    assert Circuit(1, 2, (g,), (2,)).gates == (make(0),)


@pytest.mark.parametrize("make", [
    lambda i: Gate.mul(0, i),
    lambda i: Gate.lin(i, 2, 1, 3),
    lambda i: Gate.add(1, i),
    lambda i: Gate.scale(i, 5),
    lambda i: Gate(Gate.mul(0, 1).op, [0, i]),
])
@pytest.mark.parametrize("bad, shown, kind", [(True, "True", "bool"), (np.True_, r"np\.True_", "bool"),
                                              (1.0, r"1\.0", "float"), (np.float64(1.0), r"np\.float64\(1\.0\)", "float64")])
def test_a_bool_or_float_node_id_is_refused_by_the_gate_naming_its_type(make, bad, shown, kind):
    """``Gate.mul(0, True)`` equalled (and hashed as) ``Gate.mul(0, 1)`` until a ``Circuit`` refused it, so a set
    or dict of gates took one for the other; the gate refuses a truth value or a float as a node id itself
    (``True`` is an int to Python, not here)."""
    with pytest.raises(IRError, match=rf"args: argument {shown} is not a node id \(a {kind}, not an int\)$"):
        make(bad)


def test_a_gate_holding_a_bool_node_id_is_still_refused_by_the_circuit():
    """The circuit's own check stays: a gate whose fields were written past its constructor is refused there."""
    g = Gate.mul(0, 1)
    object.__setattr__(g, "args", (True, 1))
    with pytest.raises(IRError, match=r"gate 0 \(node %2\): argument True is not a node id"):
        Circuit(1, 2, (g,), (2,))


def test_grid_paint_cells_reads_an_integer_array_as_one_triple_a_row():
    """``paint_cells(np.array([[0, 1, 5], [2, 2, 7]]))`` was refused as "expected (i, j, value) triples, found
    array([0, 1, 5])"; ``from_rows`` and ``from_cells`` read numpy integers by value, so each row is a triple."""
    from symverify.kernel.ir.grid import Grid

    for dtype in (np.int64, np.uint8, object):
        g = Grid.zeros(3, 3).paint_cells(np.array([[0, 1, 5], [2, 2, 7]], dtype=dtype))
        assert g == Grid.zeros(3, 3).paint_cells([(0, 1, 5), (2, 2, 7)])
        assert all(type(x) is int for rect in g.rects for x in rect), g.rects
    assert Grid.zeros(2, 2).paint_cells(np.zeros((0, 3), dtype=np.int64)) == Grid.zeros(2, 2)


@pytest.mark.parametrize("bad, found", [
    (np.array([[0, 1, 0.5]]), r"shape \(1, 3\) and dtype float64"),
    (np.array([0, 1, 5]), r"shape \(3,\) and dtype int64"),
    (np.array([[0, 1], [1, 0]]), r"shape \(2, 2\) and dtype int64"),
])
def test_grid_paint_cells_refuses_a_float_or_misshapen_array_saying_what_it_expects(bad, found):
    from symverify.kernel.ir.grid import Grid

    with pytest.raises(IRError, match=r"Grid.paint_cells: expected \(i, j, value\) triples or an integer array of shape "
                                      rf"\(k, 3\), found an array of {found}"):
        Grid.zeros(3, 3).paint_cells(bad)


def test_from_zoology_reads_a_numpy_integer_seq_len_by_its_value_and_refuses_a_bool():
    """``from_zoology(z, seq_len=np.int64(3))`` was refused ("expected a positive int") though library sizes
    and grid positions read numpy integers by value; ``True`` stays refused (a truth value is no length)."""
    pytest.importorskip("torch")
    from symverify.errors import ShapeError
    from symverify.executors.zoology import ZoologyBaseConv, from_zoology

    z = ZoologyBaseConv(2, 4)
    m = from_zoology(z, seq_len=np.int64(3))
    assert m == from_zoology(z, seq_len=3) and type(m.n) is int and m.n == 3
    for bad, shown in ((True, "True"), (np.True_, r"np\.True_"), (3.0, r"3\.0"), (0, "0")):
        with pytest.raises(ShapeError, match=rf"seq_len: expected a positive int, found {shown}"):
            from_zoology(z, seq_len=bad)


@pytest.mark.parametrize("name", ["SYMVERIFY_PROGRESS", "SYMVERIFY_TRACEBACK"])
def test_both_switches_take_exactly_the_on_and_off_words(monkeypatch, name):
    """One parser (``env_switch``) for both settings: the on and off words in any case and spacing, empty or
    unset as None, and anything else (``maybe`` counted as on for the traceback) refused, naming the variable,
    the value and the accepted words. ``wanted`` raises it; the command line warns and hides the traceback."""
    from symverify.errors import UsageError
    from symverify.progress import env_switch

    def read():
        return env_switch(name, "on", "off", "default")

    monkeypatch.delenv(name, raising=False)
    assert read() is None
    for value, want in (("1", True), (" Yes", True), ("ON ", True), ("true", True), ("0", False), ("No", False),
                        (" off", False), ("FALSE", False), ("", None), ("  ", None)):
        monkeypatch.setenv(name, value)
        assert read() is want, value
    monkeypatch.setenv(name, "maybe")
    with pytest.raises(UsageError, match=rf"^{name}: expected 1, true, yes or on \(on\), 0, false, no or off \(off\), "
                                         r"or empty \(default\), found 'maybe' in the environment$"):
        read()


@pytest.mark.parametrize("name, read, default", [
    ("SYMVERIFY_NATIVE", lambda: __import__("symverify._native", fromlist=["x"]).enabled(), True),
    ("SYMVERIFY_CUDA_GRAPHS", lambda: __import__("symverify.executors.cuda_graph", fromlist=["x"]).enabled(), False),
])
def test_the_native_and_cuda_graph_switches_are_read_by_the_one_parser(monkeypatch, name, read, default):
    """``SYMVERIFY_NATIVE`` and ``SYMVERIFY_CUDA_GRAPHS`` kept parsers of their own beside ``env_switch``:
    they are read by it too, so the words, the default and the refusal (its wording included) are one rule."""
    from symverify.errors import UsageError

    monkeypatch.delenv(name, raising=False)
    assert read() is default
    for value, want in ((" Yes", True), ("OFF ", False), ("", default), ("  ", default)):
        monkeypatch.setenv(name, value)
        assert read() is want, value
    monkeypatch.setenv(name, "maybe")
    with pytest.raises(UsageError, match=rf"^{name}: expected 1, true, yes or on \(.+\), 0, false, no or off \(.+\), "
                                         r"or empty \(.+\), found 'maybe' in the environment$"):
        read()


def test_a_randomized_verify_does_not_import_flint():
    """Choosing the exact engine imported python-flint (0.12 s) on every first ``verify``, even for
    ``method='randomized'``, which never uses it; ``flint_available`` now asks the import system only."""
    import subprocess
    import sys

    code = ("import sys, symverify as sv\n"
            "c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)\n"
            "assert sv.verify(c, c, method='randomized').proved\n"
            "print('flint' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "False", out


def test_a_broken_flint_install_is_found_then_refused_where_it_is_used(monkeypatch):
    """flint found by ``find_spec`` but failing to import: the exact engine is flint, and the polynomial
    ring that uses it raises ``BackendUnavailableError`` saying how to install it or to pass backend='sympy'."""
    import importlib.util
    import sys

    import symverify as sv
    from symverify.errors import BackendUnavailableError
    from symverify.kernel.semantics.poly import PolyRing, flint_available

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object() if name == "flint" else real(name, *a))
    monkeypatch.setitem(sys.modules, "flint", None)  # ``import flint`` raises ImportError
    flint_available.cache_clear()
    try:
        assert flint_available()
        with pytest.raises(BackendUnavailableError, match=r"the exact flint backend needs python-flint: pip install "
                                                          r"python-flint \(or pass backend='sympy'\)"):
            PolyRing(2)
        c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
        with pytest.raises(BackendUnavailableError, match=r"pip install python-flint \(or pass backend='sympy'\)"):
            sv.verify(c, c, method="exact", isolate=False)
        assert sv.verify(c, c, method="exact", backend="sympy", isolate=False).proved
    finally:
        flint_available.cache_clear()


def test_flint_not_found_chooses_the_sympy_engine(monkeypatch):
    import importlib.util

    import symverify as sv
    from symverify.kernel.semantics.poly import flint_available

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "flint" else real(name, *a))
    flint_available.cache_clear()
    try:
        assert not flint_available()
        c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
        r = sv.verify(c, c, method="exact", isolate=False)
        assert r.proved and r.method == "exact-sympy"
    finally:
        flint_available.cache_clear()


def test_a_grid_rectangle_reads_numpy_integer_bounds_as_paint_does():
    """``Grid(4, 4, 0, ((0, np.int64(3), 0, 1, 1),))`` was refused ("expected int bounds") though
    ``paint(0, np.int64(3), 0, 1, 1)`` builds that grid; both read an integer bound by its value."""
    from symverify.kernel.ir.grid import Grid

    g = Grid(4, 4, 0, ((0, np.int64(3), np.uint8(0), 1, 1),))
    assert g == Grid.zeros(4, 4).paint(0, np.int64(3), 0, 1, 1) == Grid(4, 4, 0, ((0, 3, 0, 1, 1),))
    assert all(type(x) is int for x in g.rects[0])
    for bad in (True, np.True_, 3.0):
        with pytest.raises(IRError, match=r"grid rectangle 0: expected int bounds, found \(0, "):
            Grid(4, 4, 0, ((0, bad, 0, 1, 1),))


@pytest.mark.parametrize("build, size", [
    (lambda v: __import__("symverify").library.walsh_hadamard(v), 4),
    (lambda v: __import__("symverify").library.prefix_sums(v, d=v), 2),
    (lambda v: __import__("symverify").library.determinant(v), 2),
    (lambda v: __import__("symverify").library.elementary_symmetric(3, v), 2),
    (lambda v: __import__("symverify").library.random_circuit(2, 1, v, 2, seed=1), 4),
    (lambda v: __import__("symverify").library.retnet_stack(2, 1, v), 2),
    (lambda v: __import__("symverify").library.symbolic_mixing(v), 3),
])
def test_a_library_size_given_as_a_numpy_integer_is_read_by_its_value(build, size):
    """``walsh_hadamard(np.int64(4))`` and ``random_circuit(2, 1, np.int64(4), 2)`` were refused ("expected an
    int n") though the same builders read a numpy integer ``seed`` or ``num_outputs`` by its value."""
    c = build(np.int64(size))
    assert c == build(size) and type(c.n) is int and type(c.d) is int
    with pytest.raises(IRError, match=r"expected an int .*found np\.True_|expected a layer count .*found bool"):
        build(np.True_)


def test_a_sparse_matrix_entry_reads_a_numpy_integer_position_by_its_value():
    """``SparseMatrix(3, 3, ((np.int64(0), 1, 1),))`` said "position (np.int64(0), 1) is outside 3×3" though
    ``from_dict`` reads the same key by its value; a bool or float position is refused, its type named."""
    from symverify.errors import ShapeError
    from symverify.kernel.kaleidoscope.matrix import SparseMatrix

    m = SparseMatrix(3, 3, ((np.int64(0), np.uint8(1), 1),))
    assert m == SparseMatrix.from_dict(3, 3, {(np.int64(0), 1): 1}) and all(type(x) is int for x in m.entries[0])
    with pytest.raises(ShapeError, match=r"position \(True, 1\) is outside 3×3 \(True is a bool, not an int\)"):
        SparseMatrix(3, 3, ((True, 1, 1),))
    with pytest.raises(ShapeError, match=r"position \(0, 1\.0\) is outside 3×3 \(1\.0 is a float, not an int\)"):
        SparseMatrix(3, 3, ((0, 1.0, 1),))


def test_grid_get_reads_a_numpy_integer_index_by_its_value():
    """``g.get(np.int64(0), 1)`` was refused ("expected a cell of the 2×2 grid") though ``paint`` and
    ``paint_cells`` take that cell; a bool or float index is still refused."""
    from symverify.errors import ShapeError
    from symverify.kernel.ir.grid import Grid

    g = Grid.zeros(2, 2).paint(0, 1, 1, 2, 5)
    assert g.get(np.int64(0), np.uint8(1)) == 5 and g.get(np.int64(1), 1) == 0
    for bad in ((True, 1), (0, 1.0), (np.True_, 0)):
        with pytest.raises(ShapeError, match=r"Grid.get: expected a cell of the 2×2 grid"):
            g.get(*bad)


def test_a_fraction_of_numpy_integers_is_read_by_their_values():
    """``Fraction(np.int64(1), 3)`` keeps the numpy integer as its numerator; ``Gate.const`` and the other
    readers of exact values crashed on it (``TypeError`` from ``int.__index__``) instead of reading 1/3."""
    from fractions import Fraction

    from symverify.kernel.ir.grid import Grid
    from symverify.kernel.ir.scalar import as_scalar, sym

    third = Fraction(np.int64(1), 3)
    assert type(third.numerator) is not int  # what the reader is given
    g = Gate.const(third)
    assert g == Gate.const(Fraction(1, 3)) and type(g.coeffs[0].numerator) is int
    assert Grid.full(1, 1, Fraction(np.int64(2), np.int64(4))).fill == Fraction(1, 2)
    assert as_scalar(Fraction(np.int64(6))) == 6 and type(as_scalar(Fraction(np.int64(6)))) is int
    assert sym("a") + third == sym("a") + Fraction(1, 3)
    odd = Fraction.__new__(Fraction)
    odd._numerator, odd._denominator = 1.5, 2  # only reachable by writing the slots
    with pytest.raises(IRError, match=r"gate 0 alpha: expected a Fraction of integers, found one of float / int"):
        as_scalar(odd, "gate 0 alpha")


def test_a_compile_result_keeps_an_integral_fraction_a_fraction():
    """Reading a resource table as plain numbers must not change a value's kind: ``Fraction(8)`` is written
    ``"8"`` by the golden records and ``8`` as an int, so collapsing it changed every stored compile result."""
    from fractions import Fraction

    from symverify.compiler.result import Compiled
    from symverify.kernel.ir.baseconv import Model

    c = Compiled(Model(1, 1, 1, 1, ()), None, {"e": Fraction(72, 9), "n": 3}, "m", {"e": Fraction(np.int64(9), 1)})
    assert type(c.resources["e"]) is Fraction and c.resources["e"] == 8 and type(c.resources["n"]) is int
    assert type(c.bounds["e"]) is Fraction and type(c.bounds["e"].numerator) is int and c.over_bound() == []


def test_a_numpy_integer_flag_is_still_refused_by_a_builder_naming_its_type():
    """A builder reads a numpy integer by its value only where the parameter is an int (a size, a count, a
    seed); given for a flag it is refused as what it is."""
    import symverify as sv

    with pytest.raises(IRError, match=r"expected consts True or False, found int64 np\.int64\(1\)"):
        sv.library.random_circuit(2, 1, 4, 2, consts=np.int64(1))


@pytest.mark.parametrize("table", [{10**5000: 1}, {"layers": [10**5000]}, {"layers": float("nan")}, {"layers": True}])
@pytest.mark.parametrize("owner", ["Compiled", "factorization"])
def test_a_resource_table_is_read_by_one_rule_whose_refusal_never_fails(owner, table):
    """``Compiled`` and ``Factorization`` each kept a copy of the table reader, and each printed a refused
    key with its own ``repr``: a key of 10^5000 raised Python's ValueError (4300-digit limit) in place of
    the refusal. One reader; a refusal names the table, the key and what it found, shortened."""
    from symverify.errors import CompileError
    from symverify.kernel.kaleidoscope.factorization import Factorization

    def build_compiled(resources):
        from symverify.compiler.result import Compiled
        from symverify.kernel.ir.baseconv import Model

        return Compiled(Model(1, 1, 1, 1, ()), None, resources, "m", {})

    def build_factorization(resources):
        from symverify.kernel.ir.butterfly import Kaleidoscope

        return Factorization(Kaleidoscope.identity(2), "t", True, resources, {})

    build, error = (build_compiled, CompileError) if owner == "Compiled" else (build_factorization, IRError)
    key = next(iter(table))
    found = (r"keys must be strings, found int <5001-digit integer" if key != "layers" else
             r"\['layers'\]: expected a finite number, found nan" if type(table["layers"]) is float else
             r"\['layers'\]: expected a number, found "
             + {list: r"list \[<5001-digit integer", bool: "bool True"}[type(table["layers"])])
    with pytest.raises(error, match=rf"^{owner} resources(: |){found}"):
        build(table)


def _ir_sizes():
    """Each IR constructor reading a size or an index, as ``build(v)`` with ``v`` in that place, and the
    message with which it refuses a bool or a float there."""
    from symverify.kernel.ir.baseconv import Model
    from symverify.kernel.ir.butterfly import Kaleidoscope
    from symverify.kernel.ir.certificate import Boundary, Cell
    from symverify.kernel.ir.grid import Grid
    from symverify.kernel.kaleidoscope.matrix import SparseMatrix

    return [
        (lambda v: Circuit(v, 2, (Gate.mul(0, 1),), (2,)), 1, r"circuit n: expected a positive int, found"),
        (lambda v: Circuit(1, v, (Gate.mul(0, 1),), (2,)), 2, r"circuit d: expected a positive int, found"),
        (lambda v: Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=v), 2,
         r"circuit size: expected positive ints n, d; found n=1, d="),
        (lambda v: Grid(v, 3), 2, r"a grid needs non-negative integer sizes; found rows = "),
        (lambda v: Grid.zeros(2, v), 3, r"a grid needs non-negative integer sizes; found cols = "),
        (lambda v: Grid.symbolic("W", v, 2), 2, r"a grid needs non-negative integer sizes; found rows = "),
        (lambda v: Model(v, 1, 2, 1, ()), 2, r"model n: expected a positive int, found"),
        (lambda v: Model(2, 1, 2, v, ()), 1, r"model inner_d: expected a positive int, found"),
        (lambda v: Kaleidoscope(3, v, ()), 4, r"kaleidoscope size: expected a power of two, found"),
        (lambda v: Kaleidoscope(v, 4, ()), 3, r"kaleidoscope: expected 1 ≤ n ≤ size = 4, found n = "),
        (lambda v: Kaleidoscope.identity(v), 3, r"kaleidoscope identity: expected an int n ≥ 1, found n = "),
        (lambda v: SparseMatrix(v, 3, ((0, 1, 2),)), 2, r"sparse matrix rows: expected a non-negative int, found"),
        (lambda v: SparseMatrix(2, v, ((0, 1, 2),)), 3, r"sparse matrix cols: expected a non-negative int, found"),
        (lambda v: Cell(v, 0, ((1, 2),), 0), 1, r"certificate cell: expected int row and column \(non-negative\)"),
        (lambda v: Cell(0, 1, ((v, 2),), 0), 3, r"certificate cell \(0, 1\): expected int node ids \(non-negative\)"),
        (lambda v: Boundary(v, ()), 2, r"certificate boundary: expected an int layer index \(non-negative\)"),
    ]


@pytest.mark.parametrize("k", range(16))
def test_an_ir_size_or_index_reads_a_numpy_integer_by_its_value(k):
    """``Circuit(np.int64(1), 2, ...)``, ``Grid(np.int64(2), 3)``, ``Model``, ``Kaleidoscope``, ``SparseMatrix`` sizes
    and certificate indices refused a numpy integer ("expected a positive int") though gate node ids, outputs,
    grid positions and library sizes read it by its value (``as_index``); all read it so now, as a plain int,
    while a bool or a float is refused with the message it had."""
    from symverify.errors import ShapeError

    build, size, message = _ir_sizes()[k]
    want = build(size)
    for v in (np.int64(size), np.uint8(size), np.uint64(size)):
        got = build(v)
        assert got == want and repr(got) == repr(want)
        assert all(type(getattr(got, f, 0)) is int for f in ("n", "d", "rows", "cols", "size", "inner_d", "row", "layer"))
    for bad in (True, np.True_, float(size)):
        with pytest.raises((IRError, ShapeError), match=message):
            build(bad)


def test_an_ir_size_read_from_a_numpy_integer_is_exact_and_still_held_to_the_limits():
    """``np.uint64`` beyond 2^63 is read as the exact Python int (not wrapped to a negative int64), and the
    limits the plain int meets apply to it (``Grid.symbolic``'s ``MAX_CELLS``, a kaleidoscope's size)."""
    from symverify.errors import LimitError, ShapeError
    from symverify.kernel.ir.butterfly import Kaleidoscope
    from symverify.kernel.ir.grid import Grid

    big = np.uint64(2**64 - 1)
    g = Grid(big, 1)
    assert g.rows == 2**64 - 1 and type(g.rows) is int
    with pytest.raises(LimitError, match=r"Grid.symbolic\('W', 18446744073709551615, 1\): .* more than symverify.ir.limits.MAX_CELLS"):
        Grid.symbolic("W", big, 1)
    with pytest.raises(LimitError, match=r"kaleidoscope of size 9223372036854775808: 9223372036854775808 cells is more than symverify\.ir\.limits\.MAX_CELLS"):
        Kaleidoscope(3, np.uint64(2**63), ())
    with pytest.raises(ShapeError, match=r"kaleidoscope size: expected a power of two, found 18446744073709551615"):
        Kaleidoscope(3, big, ())
    with pytest.raises(IRError, match=r"circuit n: expected a positive int, found 0"):
        Circuit(np.uint64(0), 2, (), ())


@pytest.mark.parametrize("name, value, read", [
    ("seed", np.int64(7), 7), ("seed", np.uint64(2**63 - 1), 2**63 - 1), ("trials", np.int64(3), 3),
    ("trials", np.uint8(40), 40), ("max_monomials", np.int64(1000), 1000), ("memory_limit", np.int64(1 << 30), 1 << 30),
])
def test_verify_options_read_a_numpy_integer_by_its_value(name, value, read):
    """``verify(..., seed=np.int64(7))`` (or ``trials``, ``max_monomials``) was refused ("expected an int") though
    the IR reads a numpy integer by its value; the option holds the plain int."""
    from symverify.kernel.provers.options import Options

    method = "exact" if name == "max_monomials" else "randomized"
    opts = Options.from_call(method, **{name: value})
    assert getattr(opts, name) == read and type(getattr(opts, name)) is int


@pytest.mark.parametrize("name, bad, message", [
    ("seed", True, r"seed: expected an int \(or None for fresh randomness\), found True"),
    ("seed", np.True_, r"seed: expected an int \(or None for fresh randomness\), found np\.True_"),
    ("seed", 7.0, r"seed: expected an int \(or None for fresh randomness\), found 7\.0"),
    ("seed", np.uint64(2**64 - 1), r"seed: expected an int within ±\(2\^63 − 1\) .*found one of 64 bits"),
    ("trials", np.True_, r"trials: expected a positive int, found np\.True_"),
    ("trials", 3.0, r"trials: expected a positive int, found 3\.0"),
    ("trials", np.int64(0), r"trials: expected a positive int, found 0"),
    ("max_monomials", np.False_, r"max_monomials: expected an int ≥ 0, found np\.False_"),
    ("max_monomials", np.float64(5.0), r"max_monomials: expected an int ≥ 0, found np\.float64\(5\.0\)"),
])
def test_verify_options_still_refuse_a_bool_or_float_and_a_seed_past_its_range(name, bad, message):
    """A numpy bool or float stays refused with its message; ``np.uint64(2**64 - 1)`` is read exactly, so it is
    past the seed's range (an int64 reading would have wrapped it to -1, a valid seed)."""
    from symverify.errors import UsageError
    from symverify.kernel.provers.options import Options

    with pytest.raises(UsageError, match=message):
        Options.from_call("exact" if name == "max_monomials" else "randomized", **{name: bad})


def test_a_trials_count_above_max_trials_is_refused_at_once_naming_the_limit(monkeypatch):
    """``verify(..., trials=10**400)`` with no timeout ran forever (each trial is done before the count is
    compared); a caller's trials only add to those ``error_bound`` needs, at most 108 for any float bound, so
    a count above ``MAX_TRIALS`` is a ``UsageError`` naming the limit. The limit is read at the call."""
    import symverify as sv
    from symverify.errors import UsageError
    from symverify.ir import limits
    from symverify.kernel.provers.options import Options

    assert limits.MAX_TRIALS == 1 << 16
    assert Options.from_call("randomized", trials=limits.MAX_TRIALS).trials == limits.MAX_TRIALS
    c = Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
    for big, shown in ((10**400, r"<401-digit integer ≡ 0 mod 10\^9>"), (np.uint64(2**64 - 1), "18446744073709551615"),
                       (limits.MAX_TRIALS + 1, "65537")):
        with pytest.raises(UsageError, match=r"^trials: expected at most symverify\.ir\.limits\.MAX_TRIALS = 65536 randomized "
                                             rf"trials \(error_bound sets how many a proof needs\), found {shown}$"):
            sv.verify(c, c, method="randomized", trials=big)
    monkeypatch.setattr(limits, "MAX_TRIALS", 3)
    with pytest.raises(UsageError, match=r"MAX_TRIALS = 3 randomized trials .*found 4$"):
        sv.verify(c, c, method="auto", trials=4)
    assert sv.verify(c, c, method="randomized", trials=3).proved


def test_the_command_line_refuses_a_trials_count_above_max_trials(tmp_path, capsys):
    """``symverify verify A B --trials 99999999999999999999`` ran without end; it is one line and exit 3."""
    from cases import SQUARE_C, SQUARE_M

    from symverify.cli import main
    from symverify.ir.serialize import dump_file

    dump_file(SQUARE_C, str(tmp_path / "c.json"))
    dump_file(SQUARE_M, str(tmp_path / "m.json"))
    code = main(["verify", str(tmp_path / "c.json"), str(tmp_path / "m.json"), "--trials", "99999999999999999999"])
    err = capsys.readouterr().err
    assert code == 3 and err.count("\n") == 1, err
    assert err.startswith("symverify: error: --trials: expected at most symverify.ir.limits.MAX_TRIALS = 65536 "), err
    assert err.rstrip().endswith("found 99999999999999999999"), err


@pytest.mark.parametrize("owner", ["Compiled", "factorization"])
def test_a_resource_table_reads_a_numpy_integer_by_its_value_and_refuses_numpy_bools_and_float32(owner):
    """``Compiled`` and ``Factorization`` refused ``np.int64(3)`` (found int64), where the IR reads a numpy
    integer by its value; they read it as the plain int, and still refuse a numpy bool or a float32 naming its type."""
    from symverify.errors import CompileError
    from symverify.kernel.kaleidoscope.factorization import Factorization

    def build(resources, bounds):
        if owner == "Compiled":
            from symverify.compiler.result import Compiled
            from symverify.kernel.ir.baseconv import Model

            return Compiled(Model(1, 1, 1, 1, ()), None, resources, "m", bounds)
        from symverify.kernel.ir.butterfly import Kaleidoscope

        return Factorization(Kaleidoscope.identity(2), "t", True, resources, bounds)

    made = build({"layers": np.int64(3), "big": np.uint64(2**64 - 1)}, {"layers": np.int8(2)})
    assert made.resources["layers"] == 3 and type(made.resources["layers"]) is int
    assert made.resources["big"] == 2**64 - 1 and type(made.resources["big"]) is int
    assert type(made.bounds["layers"]) is int and made.over_bound() == ["layers"]
    error = CompileError if owner == "Compiled" else IRError
    for bad, shown in ((np.True_, r"bool np\.True_"), (np.float32(1.5), r"float32 np\.float32\(1\.5\)")):
        with pytest.raises(error, match=rf"^{owner} resources\['layers'\]: expected a number, found {shown} "
                                        r"\(an int, a Fraction or a finite float\)$"):
            build({"layers": bad}, {})

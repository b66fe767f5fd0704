"""Attacks on the kaleidoscope API and the executors' converters with objects of the right shape
but the wrong kind: mappings, sets and iterators where an ordered sequence is read, meta tensors,
integer tensors beyond float64's exact range, unsigned 64-bit residues, inputs beyond a float
format's range. Each ended in a wrong object (proved, or run) or in a bare Python exception; each
now ends in the right result or a clear ``SymverifyError`` (tests/test_attacks_kaleidoscope.py and
tests/test_attacks_executors.py hold the earlier attacks)."""

from fractions import Fraction

import numpy as np
import pytest

import symverify as sv
from symverify.errors import CompileError, IRError
from symverify.kaleidoscope import (
    SparseMatrix,
    apply,
    circuit_matrix,
    compile_numpy,
    linear_circuit_to_kaleidoscope,
    permutation_to_kaleidoscope,
    route_permutation,
)
from symverify.kaleidoscope.selection import direct_route, selection_route, selection_size
from symverify.kernel.ir.butterfly import ButterflyFactor, Kaleidoscope
from symverify.kernel.provers.matrix import verify_permutation

torch = pytest.importorskip("torch")

from symverify.executors import ZoologyBaseConv, execute, from_torch, from_zoology, to_torch  # noqa: E402
from symverify.kaleidoscope import compile_torch  # noqa: E402


# ---- permutations, diagonals and positions given as mappings, sets or iterators ----------------
def test_a_dict_is_no_permutation_and_is_never_proved():
    """``{0: 1, 1: 0}`` (the swap) was read as its keys, the identity: ``verify_permutation`` proved
    the identity kaleidoscope equal to it, and ``permutation_to_kaleidoscope`` built the identity."""
    swap = {0: 1, 1: 0}
    with pytest.raises(IRError, match=r"permutation: expected a sequence of ints, found dict; pass \[m\[i\] for i in range"):
        verify_permutation(Kaleidoscope.identity(2), swap)
    for make in (permutation_to_kaleidoscope, route_permutation, SparseMatrix.permutation):
        with pytest.raises(IRError, match=r"expected a sequence of ints, found dict"):
            make(swap)
    assert not verify_permutation(Kaleidoscope.identity(2), [1, 0]).proved
    assert apply(permutation_to_kaleidoscope([1, 0]).kaleidoscope, ["a", "b"]) == ["b", "a"]


@pytest.mark.parametrize("diag, found", [({0: 1, 1: 2}, "dict"), ({2, 1}, "set"), ("12", "str"), (b"12", "bytes"), (None, "NoneType"), (3, "int")])
def test_butterfly_diagonals_must_be_ordered_sequences(diag, found):
    """A dict diagonal ``{0: 1, 1: 2}`` became ``(0, 1)`` (its keys), the str ``"12"`` became
    ``(1, 2)`` (its characters), a set took its iteration order; ``None`` raised TypeError."""
    with pytest.raises(IRError, match=rf"butterfly factor d1: expected a sequence of entries in order, found {found}"):
        ButterflyFactor(4, 1, diag, (0, 0), (0, 0), (1, 1))


def test_butterfly_diagonals_of_other_sequences_keep_their_order():
    f = ButterflyFactor(4, 1, [3, Fraction(1, 2)], np.array([5, 6]), iter((7, 8)), range(2))
    assert (f.d1, f.d2, f.d3, f.d4) == ((3, Fraction(1, 2)), (5, 6), (7, 8), (0, 1))


@pytest.mark.parametrize("make", [selection_route, selection_size, direct_route])
@pytest.mark.parametrize("pos, found", [(iter((3, 2)), "tuple_iterator"), ({0: 3, 1: 2}, "dict"), ({3, 2}, "set"), (None, "NoneType")])
def test_selection_positions_must_be_ordered_sequences(make, pos, found):
    """An iterator ``in_pos`` was used up by the position check, so the route was built for no
    positions (size 2 instead of 4); a dict was read as its keys; ``None`` raised TypeError."""
    with pytest.raises(CompileError, match=rf"selection route in_pos: expected a sequence of positions in order, found {found}"):
        make({(0, 1): 1}, in_pos=pos)
    assert selection_size({(0, 1): 1}, in_pos=(3, 2)) == 4


@pytest.mark.parametrize("bad", ["x", None, 3])
def test_linear_circuit_functions_refuse_what_is_no_circuit(bad):
    """Each raised AttributeError (``'str' object has no attribute 'gates'``)."""
    with pytest.raises(CompileError, match=rf"linear circuit: expected a Circuit, found {type(bad).__name__}"):
        linear_circuit_to_kaleidoscope(bad)
    with pytest.raises(CompileError, match=rf"linear circuit: expected a Circuit, found {type(bad).__name__}"):
        circuit_matrix(bad)


# ---- from_torch: weights it cannot read exactly -------------------------------------------------
@pytest.fixture(scope="module")
def model():
    c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[1][0], u[1][1]], n=2, d=2)
    return sv.compile(c, method="dense").model


def _with(model, name, value):
    module = to_torch(model)
    setattr(module.layers[0], name, value)
    return module


def test_from_torch_refuses_complex_weights(model):
    """The imaginary parts were dropped (only torch's warning said so): another model, read back as exact."""
    W = model.layers[0].W
    module = _with(model, "W", torch.nn.Parameter(to_torch(model).layers[0].W.to(torch.complex128) + 1j, requires_grad=False))
    with pytest.raises(CompileError, match=r"layer 0 W: expected real numbers, found a torch\.complex128 tensor \(reading it as real would drop"):
        from_torch(module)
    assert from_torch(to_torch(model)).layers[0].W == W


def test_from_torch_refuses_integer_weights_that_float64_would_round(model):
    """An int64 weight ``2^53 + 1`` was read as ``2^53`` (through float64)."""
    shape = to_torch(model).layers[0].W.shape
    big = torch.full(shape, 2**53 + 1, dtype=torch.int64)
    with pytest.raises(CompileError, match=r"layer 0 W: a torch\.int64 entry beyond ±2\^53 would be rounded in float64"):
        from_torch(_with(model, "W", torch.nn.Parameter(big, requires_grad=False)))
    exact = torch.full(shape, -(2**53), dtype=torch.int64)
    assert from_torch(_with(model, "W", torch.nn.Parameter(exact, requires_grad=False))).layers[0].W.get(0, 0) == -(2**53)


def test_from_torch_refuses_meta_weights_a_missing_weight_and_an_unknown_mode(model):
    """A meta weight raised NotImplementedError ("Cannot copy out of meta tensor"), a mode ``'foo'``
    ValueError; a weight ``None`` was blamed as "a 2-d tensor, found shape ()"."""
    shape = to_torch(model).layers[0].W.shape
    with pytest.raises(CompileError, match=r"layer 0 W: a meta tensor of shape \(4, 4\) has no values"):
        from_torch(_with(model, "W", torch.nn.Parameter(torch.empty(shape, device="meta"))))
    with pytest.raises(CompileError, match=r"layer 0 W: expected a tensor, found NoneType"):
        from_torch(_with(model, "W", None))
    with pytest.raises(CompileError, match=r"layer 0 mode: expected one of 'causal', 'cyclic', found 'foo'"):
        from_torch(_with(model, "mode", "foo"))


# ---- from_zoology and the gated converter ---------------------------------------------------------
@pytest.fixture(scope="module")
def zoo():
    torch.manual_seed(0)
    return {k: torch.randn_like(v) for k, v in ZoologyBaseConv(2, 4).eval().state_dict().items()}


@pytest.mark.parametrize("key", ["projection.weight", "projection.bias", "conv.filter"])
def test_from_zoology_refuses_meta_and_uint64_weights(zoo, key):
    """A meta weight raised NotImplementedError or RuntimeError (``Tensor.item()``), a uint64 one
    NotImplementedError (``"max_all" not implemented for 'UInt64'``)."""
    shape = zoo[key].shape
    for dtype in (torch.float32, torch.int64):
        with pytest.raises(CompileError, match=rf"from_zoology: layer 0 {key}: a meta tensor of shape .* has no values"):
            from_zoology(dict(zoo, **{key: torch.empty(shape, device="meta", dtype=dtype)}))
    with pytest.raises(CompileError, match=rf"from_zoology: layer 0 {key}: a torch\.uint64 entry beyond ±2\^53 would be rounded"):
        from_zoology(dict(zoo, **{key: torch.full(shape, 2**63 + 5, dtype=torch.uint64)}))
    small = from_zoology(dict(zoo, **{key: torch.full(shape, 3, dtype=torch.uint64)}))
    assert small == from_zoology(dict(zoo, **{key: torch.full(shape, 3.0, dtype=torch.float64)}))


def test_the_gated_converter_refuses_meta_and_rounded_integer_weights():
    """``.double()`` read an int64 ``2^60 + 1`` as ``2^60``; a meta weight raised NotImplementedError."""
    from symverify.executors.zoology_gated import _exact

    with pytest.raises(CompileError, match=r"from zoology: in_proj\.weight: a torch\.int64 entry beyond ±2\^53 would be rounded"):
        _exact(torch.tensor([[2**60 + 1]]), "in_proj.weight")
    with pytest.raises(CompileError, match=r"from zoology: in_proj\.weight: a meta tensor of shape \(1, 1\) has no values"):
        _exact(torch.empty(1, 1, device="meta"), "in_proj.weight")
    assert _exact(torch.tensor([[2**53, -3]]), "w") == [[2**53, -3]]


# ---- execute and the torch module -------------------------------------------------------------------
@pytest.fixture(scope="module")
def pair():
    c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[1][0], u[1][1]], n=2, d=2)
    return c, sv.compile(c).model


@pytest.mark.parametrize("side", [0, 1])
def test_uint64_residues_are_not_wrapped(pair, side):
    """A uint64 input ``2^63 + 5`` was cast to int64 (``−2^63 + 5``) before reduction: the modular
    backend returned 6 mod 2^31 − 1 where the exact value ``2^63 + 8`` is 10."""
    u = torch.tensor([[2**63 + 5, 1], [3, 4]], dtype=torch.uint64)
    got = execute(pair[side], u, backend="modular")
    exact = execute(pair[side], u.tolist())
    assert got.tolist() == [[int(v) % (2**31 - 1) for v in row] for row in exact]
    assert got[0, 0].item() == 10


@pytest.mark.parametrize("backend", ["exact", "torch", "modular"])
@pytest.mark.parametrize("side", [0, 1])
def test_meta_inputs_are_refused(pair, backend, side):
    """Each backend raised NotImplementedError ("Cannot copy out of meta tensor; no data!")."""
    dtype = torch.float64 if backend == "torch" else torch.int64
    with pytest.raises(IRError, match=r"input: expected values, found a meta tensor of shape \(1, 2, 2\)"):
        execute(pair[side], torch.empty(1, 2, 2, device="meta", dtype=dtype), backend=backend)


def test_the_torch_module_refuses_meta_inputs_and_weights(pair):
    """The module raised RuntimeError ("Tensor.item() cannot be called on meta tensors")."""
    m = pair[1]
    with pytest.raises(IRError, match=r"input: the input is a meta tensor, which has no values"):
        to_torch(m)(torch.empty(2, 2, device="meta", dtype=torch.float64))
    with pytest.raises(IRError, match=r"input: a weight is a meta tensor, which has no values"):
        to_torch(m).to("meta")(torch.ones(2, 2, dtype=torch.float64))
    assert to_torch(m)(torch.tensor([[2.0, 3.0], [5.0, 7.0]], dtype=torch.float64)).tolist() == [[11.0, 7.0], [0.0, 0.0]]


# ---- the butterfly programs: inputs beyond the float range ---------------------------------------
@pytest.mark.parametrize("x", [[10**400, 1, 1, 1], [Fraction(10**400, 3), 1, 1, 1]])
def test_the_numpy_program_refuses_exact_inputs_beyond_float64(x):
    """An object array holding ``10^400`` raised OverflowError ("int too large to convert to float")."""
    prog = compile_numpy(permutation_to_kaleidoscope([1, 0, 3, 2]))
    with pytest.raises(IRError, match=r"numpy butterfly apply: entry \[0, 0\] .* is beyond the range of float64"):
        prog.apply(np.array([x], dtype=object))
    assert prog.apply(np.array([[Fraction(1, 4), 2, 3, 4]], dtype=object)).tolist() == [[2.0, 0.25, 4.0, 3.0]]


def test_float32_programs_refuse_inputs_that_overflow_the_cast():
    """``1e300`` became ``inf`` in float32, and the swap ``[1, 0, 3, 2]`` returned ``[nan, inf, 1, 1]``
    (``0·inf`` is NaN): an overflow before the first stage, not a rounding error."""
    f = permutation_to_kaleidoscope([1, 0, 3, 2])
    with pytest.raises(IRError, match=r"numpy butterfly apply: entry \[0, 0\] .*1e\+300.* is beyond the range of float32"):
        compile_numpy(f, dtype="float32").apply(np.array([[1e300, 1, 1, 1]]))
    module = compile_torch(f, dtype="float32")
    for x in (torch.tensor([[1e300, 1, 1, 1]], dtype=torch.float64), torch.tensor([[[1e300, 1, 1]]], dtype=torch.float64)):
        odd = compile_torch(permutation_to_kaleidoscope([1, 0, 2]), dtype="float32")
        with pytest.raises(IRError, match=r"torch butterfly apply: entry \[0, 0\] \(1e\+300\) is beyond the range of torch\.float32"):
            (module if x.shape[-1] == 4 else odd)(x)
    assert module(torch.tensor([[1e30, 1, 2, 3]], dtype=torch.float64)).tolist() == [[1.0, pytest.approx(1e30), 3.0, 2.0]]


@pytest.mark.parametrize("side", [0, 1])
def test_modular_eval_refuses_meta_points(pair, side):
    """The residue check raised RuntimeError ("Tensor.item() cannot be called on meta tensors")."""
    from symverify.executors import modular_eval

    with pytest.raises(IRError, match=r"points: expected residues, found a meta tensor of shape \(1, 2, 2\)"):
        modular_eval(pair[side], torch.empty(1, 2, 2, dtype=torch.int64, device="meta"), 7)
    assert modular_eval(pair[side], torch.tensor([[[2, 3], [5, 6]]]), 7).tolist() == [[[4, 6], [0, 0]]]


# ---- from_matrix and from_sympy: rows, expressions and inputs read in order ------------------------
@pytest.mark.parametrize("M, found", [([{0: 5, 1: 7}], "dict"), (["12"], "str"), ([{1, 2}], "set"), ([iter([1, 2])], "list_iterator")])
def test_from_matrix_rows_must_be_ordered_sequences(M, found):
    """The row ``{0: 5, 1: 7}`` became ``[0, 1]`` (its keys: the circuit output ``x1``, not
    ``5·x0 + 7·x1``), ``"12"`` became ``[1, 2]``; an iterator raised TypeError."""
    from symverify.ir.build import from_matrix

    with pytest.raises(IRError, match=rf"from_matrix: matrix row 0: expected a sequence \(a list, tuple or array\), found {found}"):
        from_matrix(M, 1, 2)
    with pytest.raises(IRError, match=r"from_matrix: the matrix \(its rows\): expected a sequence .*found dict"):
        from_matrix({0: [1, 2]}, 1, 2)
    assert sv.evaluate(from_matrix(np.array([[5, 7]]), 1, 2), [[1, 10]]) == [[75, 0]]


def test_from_sympy_reads_expressions_and_inputs_in_order():
    """``{0: x*y}`` was read as its key (the constant 0); the inputs ``[x, 2]`` made every literal 2
    the input ``y``, ``[x, x]`` left the second input unread and a set of inputs took any order."""
    import sympy

    from symverify.ir.build import from_sympy

    x, y = sympy.symbols("x y")
    with pytest.raises(IRError, match=r"from_sympy: the expressions: expected a sequence .*found dict"):
        from_sympy({0: x * y}, [x, y], 1, 2)
    with pytest.raises(IRError, match=r"from_sympy: the input symbols: expected a sequence .*found set"):
        from_sympy([x * y], {x, y}, 1, 2)
    with pytest.raises(IRError, match=r"from_sympy: input 1: expected a sympy Symbol, found 2"):
        from_sympy([2 * x], [x, 2], 1, 2)
    with pytest.raises(IRError, match=r"from_sympy: inputs 0 and 1 are both x; expected n·d distinct symbols"):
        from_sympy([x * y], [x, x], 1, 2)
    assert sv.evaluate(from_sympy([2 * x + y, x * y], ["x", "y"], 1, 2), [[3, 5]]) == [[11, 15]]


# ---- the IR constructors: node ids, coefficients and rows read in order ----------------------------
@pytest.mark.parametrize("make, match", [
    (lambda: sv.Circuit(1, 2, (sv.Gate.mul(0, 1),), {2: 0, 0: 1}), r"circuit outputs: expected a sequence, found dict"),
    (lambda: sv.Circuit(1, 2, (sv.Gate.mul(0, 1),), {2, 0}), r"circuit outputs: expected a sequence, found set"),
    (lambda: sv.Gate(sv.Op.LIN, (0, 1), {0: 5, 1: 7}), r"lin coefficients: expected a sequence, found dict"),
    (lambda: sv.Gate(sv.Op.MUL, {1: 0, 0: 1}, ()), r"mul args: expected a sequence of node ids, found dict"),
    (lambda: sv.Grid.from_rows([{0: 5, 1: 7}]), r"Grid\.from_rows: row 0: expected a sequence, found dict"),
    (lambda: sv.Grid.from_rows(["57"]), r"Grid\.from_rows: row 0: expected a sequence, found str"),
    (lambda: sv.Grid.from_rows({0: [1, 2]}), r"Grid\.from_rows: rows: expected a sequence, found dict"),
    (lambda: sv.Model(2, 1, 2, 1, {sv.Layer.make(2, 1, W=sv.Grid.identity(1))}), r"model layers: expected a sequence of layers in order, found set"),
    (lambda: sv.Model(2, 1, 2, 1, None), r"model layers: expected a sequence of layers in order, found NoneType"),
])
def test_ir_constructors_refuse_mappings_sets_and_strings(make, match):
    """Each was read as its keys or characters: the coefficients ``{0: 5, 1: 7}`` became ``(0, 1)``,
    the row ``"57"`` became ``[5, 7]``, outputs ``{2: 0, 0: 1}`` became ``(2, 0)``, a set of layers
    ran in its own order; the dict of rows and ``layers=None`` raised TypeError."""
    with pytest.raises(IRError, match=match):
        make()
    assert sv.Gate(sv.Op.LIN, [0, 1], iter([5, 7])).coeffs == (5, 7)

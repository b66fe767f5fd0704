"""The construction libraries' flag and label arguments: a value that is not what the argument
takes is refused with a :class:`~symverify.errors.SymverifyError` naming the argument, never read
by its truth value (``fuse="no"`` fusing) nor failing later with a message about something else."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import symverify as sv
from symverify.compiler.gated import gated_conv_direct
from symverify.compiler.kaleidoscope import compile_kaleidoscope
from symverify.compiler.retnet import direct_layout, retnet_direct, retnet_stack_direct
from symverify.errors import CompileError, IRError, ShapeError
from symverify.gadgets.compose import compose, pad
from symverify.gadgets.primitives import affine_map, identity, impulse, shift_down, shift_up
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.grid import Grid
from symverify.kernel.verification import verify
from symverify.library import retnet, retnet_layout, retnet_weights
from symverify.library_gated import gated_conv_weights, hyena


@pytest.mark.parametrize("fuse", ["no", "", 0, 1, None, 2.0, [True]])
def test_retnet_stack_direct_refuses_a_fuse_that_is_not_a_bool(fuse: object) -> None:
    with pytest.raises(CompileError, match=r"retnet_stack_direct: fuse: expected True or False, found"):
        retnet_stack_direct(2, 1, 2, fuse=fuse)


@pytest.mark.parametrize("fuse", [False, True, np.bool_(True), np.bool_(False)])
def test_retnet_stack_direct_takes_a_bool_fuse_by_its_value(fuse: object) -> None:
    out = retnet_stack_direct(2, 1, 2, fuse=fuse)
    assert out.resources["layers"] == (7 if fuse else 8)  # k·3G + 1 fused, k·(3G + 1) not


@pytest.mark.parametrize("flag", ["no", "", 0, None, [False]])
def test_compose_refuses_a_check_interfaces_that_is_not_a_bool(flag: object) -> None:
    """``check_interfaces="no"`` read as true (and ``0`` as false, skipping the clean-interface check)."""
    with pytest.raises(IRError, match=r"compose: check_interfaces: expected True or False, found"):
        compose(identity(2, 1), identity(2, 1), check_interfaces=flag)


def test_compose_takes_a_numpy_bool_check_interfaces_by_its_value() -> None:
    parts = (shift_down(2, 1, 1), identity(2, 1))
    assert compose(*parts, check_interfaces=np.bool_(True)).depth == 2
    assert compose(*parts, check_interfaces=np.bool_(False)).depth == 2


@pytest.mark.parametrize("method", [3, None, b"gated", ["gated"], ""])
def test_gated_conv_direct_refuses_a_method_that_is_not_a_name(method: object) -> None:
    """``method=3`` failed in the certificate's meta ("expected (key, value) string pairs"), naming
    neither the function nor the argument."""
    with pytest.raises(CompileError, match=r"gated_conv_direct: method: expected a non-empty str .*found"):
        gated_conv_direct(2, gated_conv_weights(2, 1), method=method)


def test_gated_conv_direct_names_its_result_by_method() -> None:
    out = gated_conv_direct(2, gated_conv_weights(2, 1), method="mine")
    assert out.method == "mine" and ("construction", "mine") in out.certificate.meta


@pytest.mark.parametrize("size", [np.int64(2), np.int32(2), np.uint8(2)])
def test_retnet_direct_reads_numpy_sizes_as_retnet_does(size: object) -> None:
    """``library.retnet(np.int64(2), 2)`` builds the circuit; its direct model refused the same size."""
    want = retnet_direct(2, 2, group=1)
    for out in (retnet_direct(size, 2, group=1), retnet_direct(2, size, group=1), retnet_direct(2, 2, group=np.int64(1))):
        assert out.model == want.model and out.certificate == want.certificate
    assert retnet_stack_direct(size, 1, size).model == retnet_stack_direct(2, 1, 2).model
    assert direct_layout(size, size) == direct_layout(2, 2)
    assert verify(retnet(size, 2), retnet_direct(size, 2)).proved


@pytest.mark.parametrize("call, where", [
    (lambda: retnet_stack_direct(0, 1, 1), "retnet_stack_direct"),
    (lambda: retnet_stack_direct(2, 2, 1, group=3), "retnet_stack_direct"),
    (lambda: retnet_direct(0, 1), "retnet_direct"),
    (lambda: retnet_direct(2, 1, group=2.0), "retnet_direct"),
])
def test_retnet_direct_size_errors_name_the_function_called(call: Any, where: str) -> None:
    with pytest.raises(CompileError, match=rf"^{where}: (N must be a positive int|group must be an int in \[1, d\])"):
        call()


@pytest.mark.parametrize("args, error, match", [
    ((4, 2, -1), ShapeError, r"^impulse: expected a lag with 0 ≤ lag < inner_n = 4, found -1"),
    ((4, 2, 4), ShapeError, r"^impulse: expected a lag with 0 ≤ lag < inner_n = 4, found 4"),
    ((4, 2, True), ShapeError, r"^impulse: expected an int lag, found True"),
    ((4, 2, 1.0), ShapeError, r"^impulse: expected an int lag, found 1.0"),
    ((4, 2, 1, [2]), ShapeError, r"^impulse cols: expected columns in \[0, 2\), found \[2\]"),
    ((4, 2, 1, [-1]), ShapeError, r"^impulse cols: expected columns in \[0, 2\), found \[-1\]"),
    ((4, 2, 1, []), ShapeError, r"^impulse cols: expected a non-empty list of ints"),
    ((0, 2, 0), ShapeError, r"^impulse: expected a positive int inner_n, found 0"),
])
def test_impulse_refuses_bad_arguments_naming_itself(args: tuple[Any, ...], error: type[Exception], match: str) -> None:
    """``impulse(4, 2, -1)`` failed in the grid ("grid rectangle 0: rows [-1, 0) … do not fit") and
    ``impulse(4, 2, True)`` read the bool as row 1 of a cell; neither named impulse or its lag."""
    with pytest.raises(error, match=match):
        impulse(*args)


def test_impulse_is_e_lag_on_its_columns() -> None:
    assert impulse(4, 3, 2, [0, 2]) == Grid.from_cells(4, 3, {(2, 0): 1, (2, 2): 1})


@pytest.mark.parametrize("make", [shift_down, shift_up])
@pytest.mark.parametrize("s, typename", [(np.int64(1), "int64"), (1.0, "float"), (True, "bool")])
def test_shift_gadgets_name_the_type_of_a_shift_that_is_not_an_int(make: Any, s: object, typename: str) -> None:
    """A shift of 1 given as a numpy integer, float or bool was refused as if out of range
    ("expected a shift s with 0 ≤ s < N' = 4, found 1.0")."""
    with pytest.raises(IRError, match=rf"{make.__name__}: expected an int shift s with 0 ≤ s < N' = 4, found {typename} "):
        make(4, 2, s)


@pytest.mark.parametrize("call, error, match", [
    (lambda: affine_map(None, 2), IRError, r"^affine_map W: expected a Grid, found NoneType"),
    (lambda: affine_map([[1, 0], [0, 1]], 2), IRError, r"^affine_map W: expected a Grid, found list"),
    (lambda: pad("x", 2, 2), IRError, r"^pad: expected a Fragment, found str"),
    (lambda: retnet_layout(2, 1, 2), IRError, r"^retnet: expected a sequence of RetNetWeights .*found int 2"),
    (lambda: retnet_layout(2, 1, {retnet_weights(1)}), IRError, r"^retnet: expected a sequence of RetNetWeights .*found set"),
    (lambda: retnet_layout(2, None, [retnet_weights(1)]), IRError, r"^retnet: expected a positive int d, found NoneType"),
    (lambda: retnet_layout(2, 1.0, [retnet_weights(1)]), IRError, r"^retnet: expected a positive int d, found float 1.0"),
    (lambda: retnet_layout(2, 1, [retnet_weights(1)], name=3), IRError, r"^retnet: expected a str name or None, found int 3"),
])
def test_builders_refuse_arguments_of_the_wrong_kind(call: Any, error: type[Exception], match: str) -> None:
    """Each of these failed with an ``AttributeError`` or ``TypeError`` (``'int' object is not iterable``)."""
    with pytest.raises(error, match=match):
        call()


def test_retnet_layout_is_the_circuit_retnet_returns() -> None:
    w = retnet_weights(1)
    circuit, nodes = retnet_layout(2, 1, [w])
    assert circuit == retnet(2, 1) and len(nodes) == 1


@pytest.mark.parametrize("prefix", [True, float("nan"), 3, None, b"L"])
def test_retnet_weights_refuses_a_prefix_that_is_not_a_str(prefix: object) -> None:
    """``prefix=True`` named the weights ``Truegamma``, ``TrueW_A[0][0]``, … without a word."""
    with pytest.raises(IRError, match=r"^retnet_weights: expected a str prefix, found"):
        retnet_weights(1, prefix=prefix)


def test_retnet_weights_names_its_symbols_by_a_str_prefix() -> None:
    assert str(retnet_weights(1, prefix="L0.").gamma) == "L0.gamma"


@pytest.mark.parametrize("build", [
    lambda: gated_conv_weights(3, 1, long_skip=[None]),
    lambda: gated_conv_weights(3, 2, order=3, long_skip=[[1, 2], None]),
    lambda: hyena(3, 1, filter_bias=[None]),
])
def test_a_skip_vector_given_as_none_inside_long_skip_is_refused(build: Any) -> None:
    """``long_skip=[None]`` made the skip symbolic (``D1[0]``): only a whole argument left None is
    symbolic, a row inside a given argument must be given (as for ``W_in=[None]``)."""
    with pytest.raises(IRError, match=r"long_skip\[\d\]: expected \d entries, found None \(None makes a whole weight "
                                      r"argument symbolic; a row inside a given argument must be given\)"):
        build()


def test_long_skip_left_none_is_symbolic_and_given_rows_are_read() -> None:
    assert str(gated_conv_weights(3, 1).long_skip[0][0]) == "D1[0]"
    assert gated_conv_weights(3, 1, long_skip=[[5]]).long_skip == ((5,),)


@pytest.mark.parametrize("cells", [np.int64(10**6), np.int32(1000), np.uint64(10**6)])
def test_compile_reads_a_numpy_max_cells_by_its_value(cells: object) -> None:
    """``compile(c, max_cells=np.int64(10**6))`` was refused ("expected a positive int, found
    np.int64(1000000)") though every size and index elsewhere reads a numpy integer by its value."""
    c = Circuit(1, 2, (Gate.mul(0, 1),), (2,))
    assert sv.compile(c, max_cells=cells).model == sv.compile(c, max_cells=int(cells)).model  # type: ignore[call-overload]
    assert compile_kaleidoscope(c, max_cells=cells).model == sv.compile(c).model  # type: ignore[arg-type]


@pytest.mark.parametrize("cells", [np.int64(1), np.bool_(True), np.float64(100.0), True])
def test_compile_still_refuses_a_max_cells_that_is_too_small_or_no_integer(cells: object) -> None:
    with pytest.raises(CompileError, match=r"max_cells"):
        sv.compile(Circuit(1, 2, (Gate.mul(0, 1),), (2,)), max_cells=cells)  # type: ignore[arg-type]


def test_dense_still_refuses_a_numpy_max_cells() -> None:
    with pytest.raises(CompileError, match=r"compile\(method='dense'\): unknown options \['max_cells'\]"):
        sv.compile(Circuit(1, 2, (Gate.mul(0, 1),), (2,)), method="dense", max_cells=np.int64(100))  # type: ignore[arg-type]

"""symverify.executors._native_program: every operation the interpreter cannot describe (another
dtype, an operand that is not a tensor or does not broadcast, more than three axes, an empty
tensor, a matrix product of other shapes, a gather it cannot copy, a function or method it does
not know) stays a torch call, and a program mixing such calls with native runs computes what the
torch calls alone compute.

The oracle is the same operations run by torch on copies of the buffers; a descriptor built for an
operation the interpreter cannot run would write other values (or crash), and fails it.
"""

from __future__ import annotations

from functools import partial

import pytest

torch = pytest.importorskip("torch")

from symverify.executors import _native_program as npg  # noqa: E402

needs_native = pytest.mark.skipif(npg.library() is None, reason="no native kernels here")
F64 = torch.float64


def t(*shape, dtype=F64, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


@pytest.mark.parametrize("case", [
    "other dtype", "scalar operand", "not broadcastable", "four axes", "empty", "dst dtype",
])
def test_descriptor_refuses_what_the_interpreter_cannot_run(case):
    """_descriptor: None for these operands."""
    out = t(3, 2)
    args = {
        "other dtype": (t(3, 2, dtype=torch.float32), t(3, 2)),
        "scalar operand": (t(3, 2), 2.0),
        "not broadcastable": (t(3, 2), t(2, 3)),
        "four axes": (t(1, 2, 3, 2), t(1, 2, 3, 2)),
        "empty": (t(0, 2), t(0, 2)),
        "dst dtype": (t(3, 2), t(3, 2)),
    }[case]
    if case == "four axes":
        out = t(1, 2, 3, 2)
    elif case == "empty":
        out = t(0, 2)
    elif case == "dst dtype":
        out = t(3, 2, dtype=torch.float32)
    assert npg._descriptor(npg.ADD, out, args, F64) is None
    assert npg._describe(partial(torch.add, out=out), args, F64) is None


def test_descriptor_of_a_transposed_operand_collapses_to_three_axes():
    """_collapse: a 3-d operand stepping unevenly keeps three axes (never more: the padded shape has
    three), and the descriptor names them."""
    out, a = t(2, 3, 4), t(4, 3, 2).permute(2, 1, 0)
    row = npg._descriptor(npg.COPY, out, (a,), F64)
    assert row is not None and row[1:4] == [2, 3, 4]


@pytest.mark.parametrize("a, b, out", [
    (t(2, 3), t(3, 4), t(2, 4, dtype=torch.float32)),  # _mm: another dtype
    (t(2, 3, 1), t(3, 4), t(2, 4)),  # _mm: not 2-d
    (t(2, 3), t(2, 4), t(2, 4)),  # _mm: inner sizes differ
    (t(2, 3), t(3, 4), t(4, 2)),  # _mm: out of another shape
    (t(0, 3), t(3, 4), t(0, 4)),  # _mm: empty
])
def test_mm_refuses_other_shapes(a, b, out):
    """_mm: None unless out = a @ b are 2-d of one dtype with matching, nonempty shapes."""
    assert npg._mm(out, a, b, F64) is None


def test_describe_keeps_unknown_calls_as_torch_calls():
    """_describe: partials with positional arguments or no out, other torch functions, callables
    that are not tensor methods, tensor methods it does not know, gathers it cannot copy row by
    row."""
    out, a, b = t(3, 2), t(3, 2), t(3, 2, seed=1)
    assert npg._describe(partial(torch.add, a, out=out), (b,), F64) is None
    assert npg._describe(partial(torch.add), (a, b), F64) is None
    assert npg._describe(partial(torch.sub, out=out), (a, b), F64) is None
    assert npg._describe(lambda x: x, (a,), F64) is None
    assert npg._describe(out.sub_, (a,), F64) is None
    assert npg._describe(out.add_, (a,), F64) is not None
    src, dst = t(4, 2, 3), t(2, 2, 3)
    varying = torch.tensor([0, 1]).view(2, 1, 1).expand(2, 2, 3).clone()
    varying[0, 1, 0] = 3  # not one index per channel
    assert npg._describe(partial(torch.gather, out=dst), (src, 0, varying), F64) is None
    too_far = torch.tensor([7, 0]).view(2, 1, 1).expand(2, 2, 3)  # one index per channel, but past the source
    assert npg._describe(partial(torch.gather, out=dst), (src, 0, too_far), F64) is None
    fine = torch.tensor([3, 0]).view(2, 1, 1).expand(2, 2, 3)
    assert npg._describe(partial(torch.gather, out=dst), (src, 0, fine), F64) is not None


@needs_native
def test_a_program_mixing_native_runs_and_torch_calls_computes_the_torch_result():
    """segments: an operation without a descriptor ends the native run and is called as is; the next
    ones start a new run. The buffers equal those of the torch calls alone."""
    def program(bufs):
        x, y, z = bufs
        return [(x.add_, (y,)), (x.sub_, (z,)), (partial(torch.mul, out=y), (x, z)), (y.addcmul_, (x, z)),
                (partial(torch.sub, out=z), (y, x)), (z.mul_, (x,))]

    base = [t(4, 3, seed=k) for k in range(3)]
    mine, ref = [b.clone() for b in base], [b.clone() for b in base]
    calls = npg.segments(program(mine), F64)
    assert calls is not None and len(calls) == 5  # native, sub_, native (mul, addcmul), torch.sub, native
    for c in calls:
        c()
    for f, args in program(ref):
        f(*args)
    for a, b in zip(mine, ref):
        assert torch.equal(a, b)


@needs_native
def test_a_program_ending_in_a_torch_call_has_no_empty_native_run():
    """segments (its inner flush): the last flush finds no pending run and adds no empty call."""
    x, y = t(4, 3), t(4, 3, seed=1)
    calls = npg.segments([(x.sub_, (y,))], F64)
    assert calls is not None and len(calls) == 1 and calls[0].func == x.sub_

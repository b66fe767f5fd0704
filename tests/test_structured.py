"""Structured linear maps: one butterfly factor per level, packed into BB* (kaleidoscope.structured)."""

import random

import pytest

from symverify import library as lib
from symverify.errors import CompileError
from symverify.kaleidoscope import linear_circuit_to_kaleidoscope
from symverify.kaleidoscope.structured import pack_bbstars
from symverify.kernel.ir.butterfly import ButterflyFactor, FactorList
from symverify.kernel.kaleidoscope.apply import apply
from symverify.kernel.provers.matrix import verify_circuit


@pytest.mark.parametrize("N", [2, 4, 16, 64, 256])
def test_walsh_hadamard_is_one_bbstar_of_log2_n_factors(N):
    c = lib.walsh_hadamard(N)
    f = linear_circuit_to_kaleidoscope(c, "structured")
    assert f.resources["w"] == 1 and f.resources["factors"] == N.bit_length() - 1 and f.resources["N"] == N
    assert all(f.resources[k] <= b for k, b in f.bounds.items())
    assert verify_circuit(f, c).proved


def test_a_map_without_butterfly_levels_falls_back_to_the_live_route():
    c = lib.prefix_sums(8, 1)
    structured, live = linear_circuit_to_kaleidoscope(c, "structured"), linear_circuit_to_kaleidoscope(c, "live")
    assert structured.theorem == live.theorem and structured.resources == live.resources
    assert verify_circuit(structured, c).proved


def test_outputs_out_of_place_are_routed():
    c = lib.walsh_hadamard(8)
    reordered = type(c)(c.n, c.d, c.gates, tuple(reversed(c.outputs)), "reversed WHT")
    f = linear_circuit_to_kaleidoscope(reordered, "structured")
    assert f.resources["factors"] > 3 and verify_circuit(f, reordered).proved


def test_a_wrong_factor_is_refuted():
    c = lib.walsh_hadamard(8)
    f = linear_circuit_to_kaleidoscope(c, "structured")
    other = lib.walsh_hadamard(8)
    bad = type(other)(other.n, other.d, (*other.gates[:-1], type(other.gates[-1]).add(*other.gates[-1].args)), other.outputs)
    assert verify_circuit(f, bad).verdict.value == "refuted"


def test_packing_keeps_the_product():
    rng = random.Random(5)
    size = 16
    strides = [1, 2, 4, 8]
    for _ in range(20):
        fs = []
        for _ in range(rng.randrange(1, 9)):
            s = rng.choice(strides)
            blocks = [((rng.randint(-3, 3), rng.randint(-3, 3)), (rng.randint(-3, 3), rng.randint(-3, 3))) for _ in range(size // 2)]
            fs.append(ButterflyFactor.from_blocks(size, s, blocks))
        x = [rng.randint(-5, 5) for _ in range(size)]
        groups = pack_bbstars(fs, size)
        assert apply(FactorList(size, tuple(fs)), x) == apply(FactorList.from_bbstars(size, groups), x)
        assert len(groups) <= len(fs)


def test_unknown_mode_is_refused():
    with pytest.raises(CompileError, match="mode must be 'live', 'size' or 'structured', found 'fast'"):
        linear_circuit_to_kaleidoscope(lib.walsh_hadamard(4), "fast")  # type: ignore[arg-type]

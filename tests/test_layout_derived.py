"""The kaleidoscope layout's derived sizes (``tw``, ``R``, ``S``), computed once per :class:`Layout`.

The compiler reads them for every cell it places; they are fields set in ``__post_init__``. These
tests pin them to their definitions (module docstring of :mod:`symverify.compiler.layout`), keep
equality, hashing and the repr those of ``(n, d, size)``, and check that compiled models are the
ones the layout produced when it recomputed the sizes on every read.
"""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify import library as lib
from symverify.compiler.kaleidoscope import compile_kaleidoscope
from symverify.compiler.layout import Layout, track_width
from symverify.errors import CompileError
from symverify.ir.serialize import dumps


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 40), st.integers(1, 40), st.integers(0, 6))
def test_derived_sizes_match_their_definitions(n: int, d: int, extra: int) -> None:
    lay = Layout.choose(n, d, 2 ** extra)
    tw = 1 << (d.bit_length() - 1)
    assert lay.tw == tw == track_width(d) and tw <= d < 2 * tw
    assert lay.track_rows == lay.size // tw
    assert lay.gap == lay.track_rows // 2
    assert lay.block == lay.track_rows + lay.gap
    assert lay.rows == 3 * lay.block
    for p in (0, lay.size - 1):
        assert lay.cell(p, 2) == (2 * lay.block + p // tw, p % tw)
        assert lay.position(lay.cell(p, 1)) == (p, 1)


def test_equality_hash_and_repr_stay_those_of_n_d_size() -> None:
    a, b = Layout(2, 3, 16), Layout(2, 3, 16)
    assert a == b and hash(a) == hash(b) and a != Layout(2, 3, 32)
    assert repr(a) == "Layout(n=2, d=3, size=16)"


def test_derived_sizes_are_not_constructor_arguments() -> None:
    with pytest.raises(TypeError, match="positional"):
        Layout(2, 3, 16, 2)  # type: ignore[call-arg]


def test_invalid_layout_still_refused() -> None:
    with pytest.raises(CompileError, match=r"power-of-two size ≥ 8 .*found n = 2, d = 3, size = 12"):
        Layout(2, 3, 12)


# sha256 prefixes of ``dumps(model)``, ``dumps(certificate)`` recorded from the compiler while the
# layout recomputed ``tw``, ``R`` and ``S`` on every read. A deliberate change of the compiler's
# output changes these: re-record them then, from a tree whose output is known good.
# The certificates were re-recorded when their meta began to name the source circuit ("circuit",
# "circuit_digest"); the models' prefixes did not change.
RECORDED = {
    "walsh_hadamard(16)": ("99b0e39c9e2f688a", "f671c06a9a051287"),
    "wired_circuit(8, 3, 'random')": ("5ea52b4f4bed3d9e", "189dab70919ee0d8"),
    # re-recorded when the gather stopped moving the input cells the circuit does not read
    # (tests/test_gather_read_cells.py): the model and certificate differ in those cells only
    "random_circuit(3, 3, 24, 4)": ("0cc5a7c7a2bbe515", "29e9ad1cf098b649"),
}
CIRCUITS = {
    "walsh_hadamard(16)": lambda: lib.walsh_hadamard(16),
    "wired_circuit(8, 3, 'random')": lambda: lib.wired_circuit(8, 3, "random", seed=1),
    "random_circuit(3, 3, 24, 4)": lambda: lib.random_circuit(3, 3, 24, 4, seed=2, num_outputs=4),
}


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@pytest.mark.parametrize("name", sorted(CIRCUITS))
def test_compiled_models_unchanged(name: str) -> None:
    c = CIRCUITS[name]()
    first = compile_kaleidoscope(c)
    again = compile_kaleidoscope(CIRCUITS[name]())  # a fresh computation: same model, same certificate
    assert first.model == again.model and first.certificate == again.certificate
    assert (_digest(dumps(first.model)), _digest(dumps(first.certificate))) == RECORDED[name]

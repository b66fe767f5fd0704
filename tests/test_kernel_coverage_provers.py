"""Coverage of rare branches of ``challenge.py``, ``bound_rules.py`` and ``modular.py`` in
``symverify/kernel/provers/``; each test names the function it is for and why its assertion bites.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.provers import bound_rules as br
from symverify.kernel.provers.challenge import ChallengeError, Transcript, _part
from symverify.kernel.provers.sides import as_side


def _stream():
    return Transcript("coverage", 0).stream("trial", 1)


def test_transcript_part_refuses_a_bool() -> None:
    """challenge.py ``_part``: ``True`` would otherwise be absorbed as the int 1, so two different
    purposes (a flag and a count) could share a stream."""
    assert _part(1) != _part("1")
    with pytest.raises(ChallengeError, match="may not be a bool"):
        _part(True)


def test_stream_bounds_are_checked() -> None:
    """challenge.py ``Stream.below`` and ``Stream.array``: a bound below 1 has no uniform value;
    ``array`` is int64 and accepts at most ``2^62``. Just inside the limits every value is in
    range."""
    s = _stream()
    with pytest.raises(ValueError, match="expected a bound ≥ 1, an int, found 0"):
        s.below(0)
    with pytest.raises(ValueError, match=r"expected 1 ≤ bound ≤ 2\^62, an int, found 0"):
        s.array(0, 4)
    with pytest.raises(ValueError, match=r"expected 1 ≤ bound ≤ 2\^62"):
        s.array((1 << 62) + 1, 4)
    assert s.below(1) == 0
    arr = s.array(1 << 62, 64)
    assert arr.dtype == np.int64 and int(arr.min()) >= 0 and int(arr.max()) < 1 << 62


def test_ub_add_with_a_zero_mantissa() -> None:
    """bound_rules.py ``ub_add``'s ``mx == 0`` return at nonzero exponents: ``0·2^0 + 5·2^10`` is
    exactly ``5·2^10`` (the general path would round up and lose the exact value)."""
    assert br.ub_add(0, 0, 5, 10) == (5, 10)
    assert br.ub_add(0, 7, 3, 2) == (3, 2)
    m, e = br.ub_add(3, 4, 5, 10)
    assert m * 2**e >= 3 * 2**4 + 5 * 2**10


def test_round_up_relative_and_absolute_steps() -> None:
    """bound_rules.py ``round_up``: the relative step only where ``rel`` is nonzero, the absolute
    one always (its ``absolute=None`` form had no caller and was removed); ``−∞`` stays ``−∞``."""
    x = np.array([1.0, 8.0, -math.inf])
    br.round_up(x, 2.0**-50, 0.0)
    assert x[0] == 1.0 + 2.0**-50 and x[1] == 8.0 * (1.0 + 2.0**-50) and x[2] == -math.inf
    y = np.array([1.0, -math.inf])
    br.round_up(y, 0.0, np.array([0.25, 0.25]))
    assert y[0] == 1.25 and y[1] == -math.inf


def test_torch_first_mismatch_polls_the_check() -> None:
    """modular.py ``TorchEngine.first_mismatch``: the torch engine polls ``check`` before each
    side's evaluation of every chunk (and inside); a check that raises stops it before any result,
    and the mismatch it finds with a counting check is the one the Python engine finds."""
    pytest.importorskip("torch")
    from symverify.kernel.provers.modular import PythonEngine, TorchEngine

    a = as_side(Circuit(1, 2, (Gate.mul(0, 1),), (2, 1)))
    b = as_side(Circuit(1, 2, (Gate.mul(0, 0),), (2, 1)))  # x0·x1 against x0²: differ where x0 ≠ x1
    p = 2**31 - 1
    pts = np.array([[[3, 3]], [[4, 4]], [[5, 6]], [[7, 7]]], dtype=np.int64)
    calls = []
    eng = TorchEngine(chunk=1)
    hit = eng.first_mismatch(a, b, pts, p, {}, check=lambda: calls.append(1))
    assert hit == PythonEngine().first_mismatch(a, b, pts.tolist(), p, {})
    assert hit is not None and hit[0] == 2
    assert len(calls) >= 6  # two polls per chunk for the three chunks read

    class StopError(Exception):
        pass

    def stop() -> None:
        raise StopError

    with pytest.raises(StopError):
        eng.first_mismatch(a, b, pts, p, {}, check=stop)

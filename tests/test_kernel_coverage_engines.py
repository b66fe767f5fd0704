"""Coverage of ``symverify/kernel/engines/`` (kernels.py, numbers.py, plan.py, torch_modular.py): the
cyclic convolution whose length has no block size (run as a causal one over ``[x; x]``), checked
against the exact ring interpreter mod p; the plan builder's deadline poll; the refusal of params
that are not a mapping; and a circuit weight with no value mod p.
"""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from symverify.errors import IRError
from symverify.kernel.ir.baseconv import Layer, Model
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.grid import Grid
from symverify.kernel.semantics.evaluate import eval_model
from symverify.kernel.semantics.rings import ModRing

torch = pytest.importorskip("torch")

from symverify.kernel.engines.kernels import block_size  # noqa: E402
from symverify.kernel.engines.modular import modular_eval  # noqa: E402
from symverify.kernel.engines.numbers import clear_cache, float_numbers, mod_numbers  # noqa: E402
from symverify.kernel.engines.plan import model_plan  # noqa: E402
from symverify.kernel.engines.torch_modular import run_circuit_mod  # noqa: E402

P = 2**31 - 1


def test_block_size_for_cyclic_lengths() -> None:
    """kernels.py ``block_size``: a cyclic length above 64 takes its largest divisor ≤ 64 when that
    is at least 16 (96 → 48, 128 → 64), else none (67 is prime); causal lengths take min(N', 64)."""
    assert [block_size(n, True) for n in (128, 96, 67, 64)] == [64, 48, None, 64]
    assert block_size(200, False) == 64


def test_cyclic_convolution_without_a_block_size_is_exact_mod_p() -> None:
    """kernels.py ``conv_blocked``: ``N' = 67`` cyclic with a dense filter runs as the causal
    convolution of ``[x; x]`` read from row N'; the oracle is the ring interpreter mod p on the same
    points (a wrong offset or a missing wrap-around changes every row)."""
    rng = random.Random(1)
    n = 67
    h = Grid.from_rows([[rng.randrange(1, 50), rng.randrange(1, 50)] for _ in range(n)])
    m = Model(n, 2, n, 2, (Layer.make(n, 2, W=Grid.from_rows([[1, 2], [3, 4]]), h=h, b1=Grid.full(n, 2, 1), mode="cyclic"),))
    x = torch.tensor([[[rng.randrange(P) for _ in range(2)] for _ in range(n)] for _ in range(2)], dtype=torch.int64)
    got = modular_eval(m, x, P, params={})
    for b in range(2):
        assert got[b].tolist() == eval_model(m, x[b].tolist(), ModRing(P))


def test_model_plan_polls_the_check_per_layer() -> None:
    """plan.py ``model_plan`` (its inner ``layer``): ``check`` runs before each layer is planned;
    one that raises stops the build."""
    clear_cache()  # numbers.py clear_cache: the plan cache is rebuilt, not read
    one = Layer.make(2, 2, W=Grid.identity(2), b2=Grid.full(2, 2, 1))
    m = Model(2, 2, 2, 2, (one, one, one))
    calls: list[int] = []
    plan = model_plan(m, float_numbers(None), check=lambda: calls.append(1))
    assert len(calls) == 3 and len(plan.layers) == 3

    class StopError(Exception):
        pass

    def stop() -> None:
        raise StopError

    clear_cache()
    with pytest.raises(StopError):
        model_plan(m, float_numbers(None), check=stop)


@pytest.mark.parametrize("params", ["w=1", {1: 2}])
def test_params_must_map_names_to_values(params) -> None:
    """numbers.py ``_params_key``."""
    with pytest.raises(IRError, match="params: expected a mapping from weight names"):
        float_numbers(params)


def test_circuit_coefficient_without_a_value_mod_p() -> None:
    """torch_modular.py ``run_circuit_mod``: the coefficient ``1/p`` has no value mod p; the error
    names the circuit and p. With ``1/2`` the output is ``x0/2 + x1`` mod p."""
    c = Circuit(1, 2, (Gate.lin(0, Fraction(1, P), 1, 1),), (2,), "c")
    with pytest.raises(IRError, match=rf"circuit c, a weight mod {P}: "):
        run_circuit_mod(c, torch.zeros((1, 1, 2), dtype=torch.int64), mod_numbers(P, None))
    half = Circuit(1, 2, (Gate.lin(0, Fraction(1, 2), 1, 1),), (2,), "half")
    ok = run_circuit_mod(half, torch.tensor([[[3, 4]]], dtype=torch.int64), mod_numbers(P, None))
    assert int(ok[0, 0, 0]) == (3 * pow(2, -1, P) + 4) % P

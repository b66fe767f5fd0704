"""symverify.executors.numeric and torch_float: the numeric check's JSON and its raising form, and
the per-layer entry points ``run_layer`` / ``layer_parts`` (public, used by no other module).

The oracle for the layer functions is exact evaluation of the one-layer model; for the check,
the fields of a real ``numeric_check`` and a failed check made from it.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")

from symverify.errors import NumericMismatchError  # noqa: E402
from symverify.executors import execute, numeric_check  # noqa: E402
from symverify.executors import torch_float as tf  # noqa: E402
from symverify.kernel.engines.numbers import float_numbers  # noqa: E402
from symverify.kernel.engines.plan import model_plan  # noqa: E402
from symverify.kernel.ir.baseconv import Layer, Model  # noqa: E402
from symverify.kernel.ir.grid import Grid  # noqa: E402

LAYER = Layer.make(3, 2, W=Grid.from_rows([[1, 2], [0, -1]]), b1=Grid.full(3, 2, 1),
                   h=Grid.from_rows([[1, 0], [2, 1], [0, 0]]), b2=Grid.from_cells(3, 2, {(1, 1): 3}))
MODEL = Model(3, 2, 3, 2, (LAYER,))
U = torch.tensor([[[1.0, -2.0], [3.0, 0.0], [-1.0, 4.0]]], dtype=torch.float64)


def test_numeric_check_json_and_raise():
    """NumericCheck.to_json and raise_if_failed: the JSON holds every field; a passing check returns
    itself, a failing one raises with its text."""
    chk = numeric_check(MODEL, U.long().tolist())
    assert chk.ok and chk.raise_if_failed() is chk
    js = chk.to_json()
    assert js["ok"] is True and js["points"] == 1 and js["dtype"] == "float64" and set(js) >= {"max_abs_err", "tolerance"}
    bad = replace(chk, ok=False, max_abs_err=1.0)
    with pytest.raises(NumericMismatchError, match="EXCEEDS the bound"):
        bad.raise_if_failed()


def test_run_layer_and_layer_parts_equal_exact_evaluation():
    """torch_float.run_layer and layer_parts: one layer equals the exact model; its two branches
    multiply to it."""
    plan = model_plan(MODEL, float_numbers(None)).on(U.device, U.dtype)
    exact = torch.tensor(execute(MODEL, U.long().tolist(), backend="exact").tolist(), dtype=torch.float64)
    out = tf.run_layer(plan[0], U.clone())
    assert torch.equal(out, exact)
    proj, conv = tf.layer_parts(plan[0], U.clone())
    assert torch.equal(proj * conv, exact)

"""Parametric gadgets: BaseConv gadgets defined once for all sizes (docs/forall.md).

:mod:`~symverify.kernel.parametric.expr` (index and value expressions), :mod:`~symverify.kernel.parametric.gadget`
(layers and gadgets), :mod:`~symverify.kernel.parametric.concrete` (the gadget at given sizes as ordinary
layers), :mod:`~symverify.kernel.parametric.symbolic` (every output cell as guarded terms in the symbolic
sizes), :mod:`~symverify.parametric.library` (the appendix's building blocks). The ∀-prover is
:func:`symverify.kernel.provers.forall.prove_forall` (``symverify.prove_forall``).
"""

from symverify.kernel.parametric.concrete import instance_model, instantiate, read_once
from symverify.kernel.parametric.expr import (
    ParametricError,
    all_of,
    any_of,
    bit,
    eq,
    fam,
    ge,
    gt,
    inp,
    ite,
    le,
    lit,
    lt,
    mod_pow2,
    ne,
    pow2,
    pred,
    var,
    where,
)
from symverify.kernel.parametric.gadget import Gadget, Param, PLayer, tap

__all__ = [
    "Gadget", "Param", "PLayer", "tap", "instantiate", "instance_model", "read_once", "ParametricError",
    "var", "lit", "pow2", "mod_pow2", "ite", "bit", "lt", "le", "gt", "ge", "eq", "ne", "all_of", "any_of",
    "inp", "fam", "where", "pred",
]

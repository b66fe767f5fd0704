"""Circuits to BaseConv through kaleidoscopes (Corollary H.20, Theorem H.21): kept for compatibility.

The compiler lives in :mod:`symverify.compiler.h21`, one module per stage of its pipeline
(stages → placement → routes → planner → emit); this module re-exports its public names.
"""

from __future__ import annotations

from symverify.compiler.h21 import (
    EXACT_PLAN_WORK,
    PLANS,
    Build,
    Prepared,
    Route,
    StagePlan,
    StageRoute,
    build_model,  # noqa: F401 (importable by name)
    compact_product_layout,  # noqa: F401 (importable by name)
    mul_layers,  # noqa: F401 (importable by name)
    packed_product_layout,  # noqa: F401 (importable by name)
    plan_stages,  # noqa: F401 (importable by name)
    planned_size,  # noqa: F401 (importable by name)
    prepare,  # noqa: F401 (importable by name)
    smallest_shift,  # noqa: F401 (importable by name)
    stage_factors,  # noqa: F401 (importable by name)
    stage_matrix,  # noqa: F401 (importable by name)
    stage_route,  # noqa: F401 (importable by name)
    stated_size,  # noqa: F401 (importable by name)
)

# The public names. The other builders here are internal (the compiler calls them with its own objects,
# checked once at its entry): still importable by name, not checked for arguments of other types.
__all__ = ["StagePlan", "Build", "Prepared", "PLANS", "EXACT_PLAN_WORK", "StageRoute", "Route"]

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
    build_model,
    compact_product_layout,
    mul_layers,
    packed_product_layout,
    plan_stages,
    planned_size,
    prepare,
    smallest_shift,
    stage_factors,
    stage_matrix,
    stage_route,
    stated_size,
)

__all__ = ["StagePlan", "Build", "Prepared", "prepare", "plan_stages", "PLANS", "EXACT_PLAN_WORK", "stage_factors",
           "stage_matrix", "stage_route", "StageRoute", "Route", "build_model", "planned_size", "mul_layers",
           "compact_product_layout", "packed_product_layout", "smallest_shift", "stated_size"]

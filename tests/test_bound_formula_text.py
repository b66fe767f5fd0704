"""The formula a randomized report states (``bound_formula``) evaluates to the bound it uses.

:meth:`TrialPlan.formula` is the text a report gives under ``bound_formula``; ``per_trial_bound``
is the number. The text is evaluated here as written (``^`` a power, ``ceil``, ``floor``, ``log2`` and
``bit_length`` as named) at the plan's ``D``, ``H``, ``Q`` and ``B``, and must give exactly the
plan's ``ε``: with ``ceil(log2(Q)/L)`` the text said one prime fewer may divide ``Q`` than the
bound counts (``Q = 1`` or a power of two), a formula whose value was below the bound stated.
"""

from __future__ import annotations

import math
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from symverify.kernel.provers.bounds import M61, Bounds
from symverify.kernel.provers.randomized import trial_plan


def _evaluate(text: str, bounds: Bounds, batch: int) -> Fraction:
    """The per-trial part of ``text`` (before ``)^k``), evaluated exactly."""
    head, _, tail = text.partition(", beta = ")
    per = head.removesuffix("^k")
    assert per.startswith("(") and per.endswith(")"), text
    env = {
        "ceil": lambda x: Fraction(math.ceil(x)), "floor": lambda x: Fraction(math.floor(x)), "log2": math.log2,
        "bit_length": lambda q: q.bit_length(), "D": Fraction(bounds.degree), "H": Fraction(bounds.height_bits),
        "Q": bounds.denominator, "B": batch, "p": M61, "Fraction": Fraction,
    }
    if tail:
        beta_text = tail.split(" (0 when ")[0]
        beta = Fraction(0) if bounds.height_bits <= int(tail.split("H <= ")[1].rstrip(")")) else \
            eval(_exact(beta_text), {"__builtins__": {}}, env)
        env["beta"] = Fraction(beta)
    return Fraction(eval(_exact(per), {"__builtins__": {}}, env))


def _exact(expr: str) -> str:
    """Python for the formula: ``^`` is a power, and integer literals are exact Fractions."""
    import re

    return re.sub(r"\b(\d+)\b", r"Fraction(\1)", expr.replace("^", "**")).replace("Fraction(2)**Fraction(", "Fraction(2)**(")


@given(st.integers(1, 2**20), st.integers(0, 400), st.sampled_from([1, 2, 3, 4, 2**30, 2**31 - 1, 3**50, 2**64]),
       st.sampled_from([30, 61, 64, 96, 128]))
def test_stated_formula_is_the_bound(degree: int, height: int, q: int, bits: int) -> None:
    bounds = Bounds(degree, height, height < 61, 0, 0, 6, q)
    for target in (None, Fraction(1, 2**100)):
        plan = trial_plan(bounds, bits, target=target)
        if plan.per_trial >= 1:
            continue
        value = _evaluate(plan.formula(), bounds, plan.batch)
        assert value == plan.per_trial, (plan.formula(), value, plan.per_trial)


def test_q_one_counts_the_prime_the_bound_counts() -> None:
    bounds = Bounds(4, 100, False, 0, 0, 6, 1)
    plan = trial_plan(bounds, 30)
    assert plan.bad == Fraction(4, 2**25 - 1)  # ⌈100/30⌉ / (N_30 − ⌈bit_length(1)/30⌉)
    assert _evaluate(plan.formula(), bounds, plan.batch) == plan.per_trial


def test_fixed_prime_formula() -> None:
    bounds = Bounds(4, 20, True, 0, 0, 6, 1)
    plan = trial_plan(bounds, 61, fixed=M61)
    assert plan.formula() == "(D/p)^k"
    assert _evaluate("(D/p)^k", bounds, 1) == plan.per_trial

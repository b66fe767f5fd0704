"""The memory-limited child (``symverify.kernel.provers.guard.run_limited``): its budget when it is
started from another limited child, and a limit too large to set."""

from __future__ import annotations

from symverify.kernel.provers.guard import run_limited

MIB = 1 << 20


def _alloc(n: int) -> int:
    return len(bytes(n))  # calloc'd: address space, no pages touched


def _alloc_then_nested(held: int, more: int, memory: int) -> str:
    block = bytes(held)
    inner = run_limited(_alloc, (more,), memory=memory, timeout=60)
    del block
    return inner.status


def test_a_nested_limited_child_gets_what_is_left_of_the_outer_budget():
    """A limited child that starts a limited child of its own (a certificate checked whole in a child,
    its stages in children of it): the inner one got the whole budget again, so the pair used up to
    twice ``memory_limit``; it now gets at most what is left of its parent's."""
    budget = 512 * MIB
    alone = run_limited(_alloc, (384 * MIB,), memory=budget, timeout=60)
    assert (alone.status, alone.value) == ("ok", 384 * MIB), alone
    out = run_limited(_alloc_then_nested, (384 * MIB, 384 * MIB, budget), memory=budget, timeout=60)
    assert (out.status, out.value) == ("ok", "memory"), out
    out = run_limited(_alloc_then_nested, (64 * MIB, 64 * MIB, budget), memory=budget, timeout=60)
    assert (out.status, out.value) == ("ok", "ok"), out


def test_a_memory_limit_beyond_what_the_system_can_set_is_no_limit():
    """``memory_limit=2**200`` ended the child with an ``OverflowError`` before it ran (an ``unknown``
    verdict naming a crash); a limit that large is none."""
    out = run_limited(_alloc, (MIB,), memory=2**200, timeout=60)
    assert (out.status, out.value) == ("ok", MIB), out

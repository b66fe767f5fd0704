"""An exhaustive row of ``dao_thm2_permutations`` claims every permutation of its length, and names
them all: one pair of digests combining, in the order of ``itertools.permutations``, every
permutation's kaleidoscope digest and permutation digest (``combined_digest``). The row carried the
first permutation's digests alone, so a run whose later permutations were routed to other
kaleidoscopes named the same objects."""

from __future__ import annotations

import hashlib
import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.kaleidoscope import permutation_to_kaleidoscope
from symverify.kernel.provers.matrix import verify_permutation
from symverify.scripts.protocol import Instance, combined_digest


def _script():
    from test_proof_bounds_audit import _script as load

    return load("dao_thm2_permutations")


def _checks(n: int) -> list:
    return [verify_permutation(permutation_to_kaleidoscope(p), p) for p in itertools.permutations(range(n))]


def test_the_row_names_every_permutation_by_one_pair_recomputed_as_documented():
    mod = _script()
    row = mod._exhaustive(3)
    checks = _checks(3)
    assert row.ok and len(row.digests) == 1
    lhs = "sha256:" + hashlib.sha256("\n".join(c.digests[0] for c in checks).encode()).hexdigest()
    rhs = "sha256:" + hashlib.sha256("\n".join(c.digests[1] for c in checks).encode()).hexdigest()
    assert row.digests == ((lhs, rhs),) == ((combined_digest(c.digests[0] for c in checks),
                                             combined_digest(c.digests[1] for c in checks)),)
    assert row.to_json()["digests"] == [{"lhs": lhs, "rhs": rhs}]
    assert row.digests[0] != checks[0].digests  # not the first permutation's alone


def test_a_row_whose_later_permutation_is_routed_otherwise_names_other_objects(monkeypatch):
    """A kaleidoscope of another permutation's routing (here: (1, 0, 2)'s routing, padded the other
    way) for one later permutation: its row is not ok, and its digests differ."""
    mod = _script()
    good = mod._exhaustive(3)
    real = mod.permutation_to_kaleidoscope
    monkeypatch.setattr(mod, "permutation_to_kaleidoscope", lambda p: real((0, 1, 2) if tuple(p) == (2, 1, 0) else p))
    bad = mod._exhaustive(3)
    assert not bad.ok and bad.digests != good.digests


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_a_change_to_any_one_permutation_s_object_changes_the_pair(data):
    checks = _checks(3)
    k = data.draw(st.integers(0, len(checks) - 1))
    other = data.draw(st.sampled_from([c for c in checks if c.digests != checks[k].digests]))
    changed = [*checks[:k], other, *checks[k + 1:]]
    one = Instance.from_report("all", *checks, one_digest=True)
    two = Instance.from_report("all", *changed, one_digest=True)
    assert one.digests != two.digests and len(one.digests) == len(two.digests) == 1


@given(st.lists(st.text(alphabet="0123456789abcdef", min_size=64, max_size=64), min_size=1, max_size=6), st.data())
def test_combined_digest_changes_with_any_one_digest_or_the_order(hexes, data):
    digests = ["sha256:" + h for h in hexes]
    k = data.draw(st.integers(0, len(digests) - 1))
    new = "sha256:" + data.draw(st.text(alphabet="0123456789abcdef", min_size=64, max_size=64).filter(lambda h: h != hexes[k]))
    assert combined_digest(digests) != combined_digest([*digests[:k], new, *digests[k + 1:]])
    if len(set(digests)) > 1:
        assert combined_digest(digests) != combined_digest(digests[::-1]) or digests == digests[::-1]

"""ValueMemo and typed_key: equal arguments of equal types share one built circuit, nothing else does."""

from __future__ import annotations

from fractions import Fraction

import pytest

from symverify.compiler.gated import hyena_direct
from symverify.compiler.retnet import retnet_direct
from symverify.errors import IRError, UsageError
from symverify.ir.value_memo import ValueMemo, typed_key
from symverify.library import retnet, retnet_layout, retnet_weights
from symverify.library_gated import gated_conv_layout, hyena, hyena_weights


def test_typed_key_tells_equal_values_of_other_types_apart():
    assert typed_key(2, (1, 0)) == typed_key(2, (1, 0))
    assert typed_key(2, (1, 0)) != typed_key(2, (Fraction(1), 0))
    assert typed_key(2, (1, 0)) != typed_key(2, (True, 0))
    assert typed_key([1, 2]) == typed_key([1, 2]) != typed_key((1, 2))
    with pytest.raises(TypeError):
        typed_key({1: 2})


def test_value_memo_keeps_the_last_entries_and_nothing_that_raised():
    memo: ValueMemo[int] = ValueMemo(2)
    assert memo(typed_key(1), lambda: 10) == 10 and memo(typed_key(1), lambda: 11) == 10
    with pytest.raises(ZeroDivisionError):
        memo(typed_key(2), lambda: 1 // 0)
    assert len(memo) == 1
    memo(typed_key(2), lambda: 20)
    memo(typed_key(3), lambda: 30)  # evicts 1, the least recently used
    assert memo(typed_key(1), lambda: 12) == 12
    with pytest.raises(UsageError, match="expected an int ≥ 1, found int 0"):
        ValueMemo(0)


def test_a_construction_and_its_reference_share_one_circuit():
    c = hyena(4, 2)
    w = hyena_weights(4, 2)
    assert gated_conv_layout(4, w)[0] is c
    assert hyena_direct(4, 2).notes  # built from the same layout, proved against it elsewhere
    assert retnet_layout(3, 2, [retnet_weights(2)])[0] is retnet(3, 2)
    assert retnet_direct(3, 2).model.depth >= 1


def test_weights_are_keyed_by_their_canonical_values():
    """Weights are canonical scalars (Fraction(1) is stored as 1), so equal weights share a circuit
    and different weights do not."""
    ints = hyena_weights(2, 1, in_proj=[[1, 1, 1]])
    fracs = hyena_weights(2, 1, in_proj=[[Fraction(1), Fraction(1), Fraction(1)]])
    other = hyena_weights(2, 1, in_proj=[[1, 2, 1]])
    assert typed_key(2, ints, None) == typed_key(2, fracs, None)
    assert gated_conv_layout(2, ints)[0] is gated_conv_layout(2, fracs)[0]
    assert gated_conv_layout(2, other)[0] != gated_conv_layout(2, ints)[0]


def test_bad_arguments_are_still_refused():
    with pytest.raises(IRError, match="expected GatedConvWeights"):
        gated_conv_layout(2, "weights")  # type: ignore[arg-type]
    with pytest.raises(IRError, match="positive int N"):
        retnet_layout(0, 2, [retnet_weights(2)])
    with pytest.raises(IRError, match="at least one layer"):
        retnet_layout(2, 2, [])


def test_an_identity_memo_lookup_never_meets_an_eviction_half_done():
    """``verify`` from several threads shares the kernel's memos (the plain-side check, the
    fingerprints, the grids): a lookup that found its entry, then met another thread's eviction
    before ``move_to_end``, raised ``KeyError``. Every read and write holds the memo's lock, so the
    other thread's eviction waits until the lookup is done."""
    import threading
    from collections import OrderedDict

    from symverify.kernel.ir.memo import IdentityMemo

    memo: IdentityMemo[int] = IdentityMemo(1)
    a, b = [1], [2]
    memo(a, lambda: 10)
    evictor = threading.Thread(target=lambda: memo.put(b, 20))

    class Interleaved(OrderedDict):  # another thread evicts ``a`` right after the lookup found it
        def get(self, k, default=None):
            hit = super().get(k, default)
            if not evictor.is_alive() and evictor.ident is None:
                evictor.start()
                evictor.join(0.5)  # returns at once without the lock; waits out 0.5 s with it
            return hit

    memo._entries = Interleaved(memo._entries)
    assert memo.get(a) == 10
    evictor.join()
    assert memo.get(a) is None and memo.get(b) == 20


def test_memos_pickle_empty():
    """A memo travels (inside a plan sent to a Dask worker) as an empty memo of its size: its
    entries are found by ``id``, which means nothing in another process."""
    import pickle

    from symverify.kernel.ir.memo import IdentityMemo

    a = [1]
    idm: IdentityMemo[int] = IdentityMemo(3)
    idm(a, lambda: 5)
    vm: ValueMemo[int] = ValueMemo(4)
    vm("k", lambda: 6)
    idm2, vm2 = pickle.loads(pickle.dumps(idm)), pickle.loads(pickle.dumps(vm))
    assert (len(idm2), idm2.size, len(vm2), vm2.size) == (0, 3, 0, 4)
    assert idm2(a, lambda: 7) == 7 and vm2("k", lambda: 8) == 8

"""Attacks on the helpers users put in their own tests, second round: hypothesis strategies with odd
arguments, mutation operators on drawn models and circuits, golden records of odd values and golden
files written by several pytest-xdist workers. Each attack ends in a clear ``SymverifyError`` (or a
failed test naming the problem), never in a bare Python exception or a record that lets a changed
value pass (tests/test_attacks_testing.py and test_attacks_user_api.py hold the first rounds)."""

from __future__ import annotations

import collections
import importlib.util

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify import mutate
from symverify.errors import LimitError, UsageError
from symverify.strategies import circuits, models, rational_inputs
from symverify.testing import golden_record, golden_text

pytest_plugins = ["pytester"]

_FEW = settings(max_examples=25, database=None, derandomize=True, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ---- strategies with odd arguments --------------------------------------------------------------
@pytest.mark.parametrize("make, error, message", [
    (lambda: circuits(max_n=np.int64(2)), UsageError, r"circuits\(max_n\): expected an int ≥ 1, found np.int64\(2\)"),
    (lambda: circuits(max_n=10**40), LimitError,
     r"circuits\(max_n=10{40}, max_d=2\): 20{40} inputs is more than symverify.ir.limits.MAX_INPUTS"),
    (lambda: circuits(max_n=2**1000, max_d=2**1000), LimitError, r"about 2\^2000 inputs is more than"),
    (lambda: models(max_n=1, max_d=1, pad=2**40), LimitError, r"pad=1099511627776\): the inner state .* cells is more than"),
    (lambda: rational_inputs(True, 2), UsageError, r"rational_inputs\(n\): expected an int ≥ 1, found True"),
    (lambda: models(modes=iter(["causal"])), UsageError, r"models\(modes\): expected a non-empty tuple of modes"),
    (lambda: circuits(max_n=1, max_d=1, min_outputs=2), UsageError, r"at most max_n·max_d = 1 outputs fit, found 2"),
])
def test_odd_strategy_arguments_are_refused_when_made(make, error, message):
    """A numpy integer, a size of 10^40 or 2^1000, a pad beyond the cell limit, a bool, an iterator
    of modes: each is refused with the argument named, before hypothesis draws anything."""
    with pytest.raises(error, match=message):
        make()


def test_circuits_at_the_input_limit_draw_valid_circuits():
    """``max_n·max_d`` exactly at ``MAX_INPUTS`` is accepted and draws (references read relative
    nodes of a span of 4 million; outputs a list of at most 4 million)."""
    seen = []

    @_FEW
    @given(circuits(max_n=2048, max_d=2048, max_gates=2**24, min_outputs=3))
    def run(c):
        assert all(0 <= a < c.n * c.d + k for k, g in enumerate(c.gates) for a in g.args)
        assert len(c.outputs) >= min(3, c.n * c.d) and all(0 <= o < c.num_nodes for o in c.outputs)
        seen.append(c.n * c.d)

    run()
    assert len(seen) == 25 and max(seen) > 10_000


def test_huge_max_layers_draws_small_models():
    seen = []

    @_FEW
    @given(models(max_n=2, max_d=2, max_layers=10**40, pad=0))
    def run(m):
        seen.append(len(m.layers))

    run()
    assert len(seen) == 25 and max(seen) < 1000


@_FEW
@given(circuits(max_n=2, max_d=2, max_gates=4, linear=True, allow_sym=True))
def test_linear_circuits_never_multiply_nor_hold_constants(c):
    """``linear=True`` promises LIN gates only (a constant gate is not linear in ``u``)."""
    assert all(g.op is sv.Circuit.trace(lambda u: [u[0][0] + u[0][0]], n=1, d=1).gates[0].op for g in c.gates)


@_FEW
@given(models(max_n=2, max_d=2, max_layers=2, pad=0, modes=("causal", "causal")))
def test_repeated_modes_are_allowed_and_kept(m):
    assert all(layer.mode is sv.Mode.CAUSAL for layer in m.layers)


# ---- mutation operators on drawn objects --------------------------------------------------------
@settings(max_examples=40, database=None, derandomize=True, deadline=None)
@given(models(max_n=2, max_d=2, max_layers=2, pad=1), st.integers(0, 2**64))
def test_weight_mutants_of_drawn_models_change_the_model_or_refuse(model, seed):
    """On any drawn model (no layers, all-zero grids, one layer) ``weight_mutant`` makes a model
    that differs from the original, or refuses with a UsageError; it never returns the model itself."""
    try:
        m = mutate.weight_mutant(model, seed)
    except UsageError as e:
        assert "weight_mutant" in str(e)
        return
    assert m.obj != model and isinstance(m.obj, sv.Model) and m.operator and m.site


@settings(max_examples=40, database=None, derandomize=True, deadline=None)
@given(circuits(max_n=2, max_d=2, max_gates=4, min_outputs=0), st.integers(0, 2**64))
def test_gate_mutants_of_drawn_circuits_change_the_circuit_or_refuse(circuit, seed):
    try:
        m = mutate.gate_mutant(circuit, seed)
    except UsageError as e:
        assert "gate_mutant" in str(e)
        return
    assert m.obj != circuit and isinstance(m.obj, sv.Circuit)


def test_mutate_gate_on_a_gateless_circuit_names_the_count():
    c = sv.Circuit(1, 2, (), (0,))
    with pytest.raises(UsageError, match=r"mutate_gate: the circuit has 0 gates, found gate 0"):
        mutate.mutate_gate(c, 0, "op")
    with pytest.raises(UsageError, match=r"gate_mutant: none of the operators"):
        mutate.gate_mutant(c, 0, operators=("op",))


# ---- golden records of odd values ---------------------------------------------------------------
def test_a_list_holding_itself_is_refused_not_a_recursion_error():
    """``l.append(l)`` recursed until Python's RecursionError (no SymverifyError, no message)."""
    loop: list = []
    loop.append(loop)
    with pytest.raises(UsageError, match=r"golden_record: values nested more than symverify.ir.limits.MAX_JSON_DEPTH = 64 "
                                         r"levels deep \(a list or mapping that holds itself\?\)"):
        golden_record({"l": loop})
    d: dict = {}
    d["d"] = d
    with pytest.raises(UsageError, match=r"MAX_JSON_DEPTH"):
        golden_record(d)


def test_deep_but_finite_nesting_is_recorded():
    x: list = [1]
    for _ in range(60):
        x = [x]
    rec = golden_record({"x": x})
    for _ in range(62):  # the key, then 61 lists
        rec = rec["x"] if isinstance(rec, dict) else rec[0]
    assert rec == 1


def test_numpy_object_arrays_are_recorded_item_by_item():
    """An object array of circuits was stored as its text (``[Circuit(…) Circuit(…)]``, counts only);
    its items are recorded one by one, so a circuit among them is refused like a circuit alone."""
    c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
    arr = np.empty(2, dtype=object)
    arr[0], arr[1] = c, c
    with pytest.raises(UsageError, match=r"found a Circuit"):
        golden_record({"a": arr})
    assert golden_record({"a": np.array([[1, 2], [3, 4]], dtype=object)}) == {"a": [[1, 2], [3, 4]]}


@pytest.mark.parametrize("value", [collections.deque([1, 2]), {1: 2}.keys(), lambda: 0, (x for x in ()), type("T", (), {})()])
def test_containers_and_objects_without_an_exact_record_are_refused(value):
    """A deque, a dict view, a function, a generator, an instance of a user class: each was stored as
    its text (a deque as ``deque([1, 2])``, an instance by its address); each is refused, naming its type."""
    with pytest.raises(UsageError, match=rf"found a {type(value).__name__}; its text may elide values"):
        golden_record({"v": value})


def test_str_subclasses_are_recorded_by_their_characters():
    """A str subclass whose ``__str__`` lies is recorded by the characters it holds."""
    class Liar(str):
        def __str__(self):
            return "other"

    assert golden_record({"s": Liar("kept")}) == {"s": "kept"}
    assert '"kept"' in golden_text({"s": Liar("kept")})


def test_int_and_float_subclasses_are_recorded_by_their_values():
    class Int(int):
        def __str__(self):
            return "lie"

    class Flt(float):
        def __repr__(self):
            return "lie"

    rec = golden_record({"i": Int(7), "f": Flt(0.5)})
    assert rec == {"i": 7, "f": 0.5}


# ---- golden files under pytest-xdist ------------------------------------------------------------
_XDIST = importlib.util.find_spec("xdist") is not None

_USER = '''
import pytest
import symverify as sv
from symverify.testing import assert_proved

X = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
VALUE = {value}


@pytest.mark.parametrize("k", range(6))
def test_p(symverify_golden, k):
    symverify_golden.check({{"k": k, "v": VALUE, "r": assert_proved(X, X, method="exact")}})
'''


@pytest.mark.skipif(not _XDIST, reason="needs pytest-xdist")
def test_golden_files_written_by_two_workers_are_complete_and_compared(pytester):
    """Six parametrized tests on two xdist workers: ``--symverify-update`` writes six files, each
    once; a later run passes; a changed value fails every test that holds it, on both workers."""
    pytester.makepyfile(test_user=_USER.format(value=1))
    res = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", "--symverify-update")
    res.assert_outcomes(passed=6)
    files = sorted((pytester.path / "golden" / "test_user").glob("*.json"))
    assert len(files) == 6 and all(f.read_text(encoding="utf-8").endswith("}\n") for f in files)
    res.stdout.fnmatch_lines(["*6 written*"])
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2").assert_outcomes(passed=6)
    pytester.makepyfile(test_user=_USER.format(value=2))
    res = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2")
    res.assert_outcomes(failed=6)
    res.stdout.fnmatch_lines(["*golden mismatch*"])


def test_golden_check_of_an_unknown_type_fails_the_test_and_writes_nothing(pytester):
    """A record holding a value of an unknown type errors the test in both modes and no file appears."""
    pytester.makepyfile(test_user='''
class Shown:
    def __str__(self):
        return "[0 ... 999]"

def test_x(symverify_golden):
    symverify_golden.check({"v": Shown()})
''')
    for args in (("--symverify-update",), ()):
        res = pytester.runpytest("-p", "no:cacheprovider", *args)
        res.assert_outcomes(failed=1)
        res.stdout.fnmatch_lines(["*UsageError: golden_record: expected values of the supported types*found a Shown*"])
    assert not list((pytester.path / "golden").rglob("*.json"))


def test_a_write_that_fails_midway_leaves_the_old_golden_file_whole(tmp_path, monkeypatch):
    """``--symverify-update`` wrote with ``Path.write_text``, which truncates the file first: a write
    failing midway (a full disk) left half a file, and a second run reading it while another wrote saw
    half a record. The file is written beside and renamed over: the old one stays whole, no
    temporary file is left, and the test fails naming the reason."""
    import errno

    from _pytest.outcomes import Failed

    from symverify import pytest_plugin
    from symverify.pytest_plugin import GoldenFile

    GoldenFile(tmp_path, "t", True).check({"a": 1})
    before = (tmp_path / "t.json").read_bytes()

    def half_then_full(fd, data):
        if len(data) > 4:
            import os

            return os.write(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pytest_plugin, "_write_chunk", half_then_full)
    with pytest.raises(Failed, match=r"cannot write the golden file .*t.json: No space left on device"):
        GoldenFile(tmp_path, "t", True).check({"a": 2, "b": "x" * 100})
    assert (tmp_path / "t.json").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]
    monkeypatch.undo()
    GoldenFile(tmp_path, "t", True).check({"a": 2})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"] and b'"a": 2' in (tmp_path / "t.json").read_bytes()


class _Lying(int):
    """An int whose products and comparisons lie (1 and False)."""

    def __mul__(self, other):
        return 1

    __rmul__ = __mul__

    def __lt__(self, other):
        return False

    def __gt__(self, other):
        return False


def test_int_subclass_sizes_are_read_as_their_plain_values():
    """``circuits(max_n=_Lying(2**30))``: the limit check multiplied with the subclass's ``*`` (1) and
    let a size of 2^31 inputs through; sizes are read as plain ints."""
    with pytest.raises(LimitError, match=r"circuits\(max_n=1073741824, max_d=2\): 2147483648 inputs is more than"):
        circuits(max_n=_Lying(2**30))
    with pytest.raises(LimitError, match=r"models\(max_n=1073741824, max_d=2, pad=1\)|models\(max_n=1073741824, max_d=2\)"):
        models(max_n=_Lying(2**30))
    with pytest.raises(UsageError, match=r"circuits\(max_gates\): expected an int ≥ 0, found -1"):
        circuits(max_gates=_Lying(-1))

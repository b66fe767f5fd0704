"""Adversarial and careless inputs to the parametric language's public evaluation functions
(``IExpr.eval``, ``Cond.eval``, ``instantiate``, ``spec_at``, ``cell_value``, ``failing_cells``):
each is refused with a :class:`ParametricError` saying what was expected, what was found and
where — never computed with as something outside the language, never a bare Python exception."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.kernel.parametric import bulk
from symverify.kernel.parametric.concrete import cell_value, entry_state, eval_value, failing_cells, spec_at
from symverify.kernel.parametric.expr import nesting, predicates
from symverify.kernel.parametric.symbolic import MAX_TERM_NESTING, output_terms
from symverify.kernel.provers.forall import prove_forall
from symverify.parametric import (
    Gadget,
    Param,
    ParametricError,
    PLayer,
    fam,
    ge,
    inp,
    instance_model,
    instantiate,
    ite,
    library,
    lit,
    lt,
    pow2,
    pred,
    read_once,
    tap,
    var,
    where,
)
from symverify.scripts.instances import forall_instance

i, q, N, s = var("i"), var("q"), var("N"), var("s")
SHIFT = {"N": 4, "d": 1, "s": 1}


# ---- the values of an assignment are the language's integers ------------------------------------
@pytest.mark.parametrize("value, found", [(-5, "int -5"), (0.5, "float 0.5"), (True, "bool True"),
                                          (2**64, f"int {2**64}"), (np.int64(2**63 - 1), "int64")])
def test_an_index_expression_refuses_a_value_outside_its_integers(value: Any, found: str) -> None:
    # ``i + 1`` at i = -5 was -4, at 0.5 was 1.5, and at numpy's 2^63 - 1 wrapped to -2^63
    with pytest.raises(ParametricError, match=rf"index variable i: expected an int in \[0, 2\^64\) as its value, found {found}"):
        (i + 1).eval({"i": value})


def test_a_condition_refuses_a_value_outside_the_integers() -> None:
    # ``i < 1`` at i = 0.5 was True: a cell between two rows
    with pytest.raises(ParametricError, match=r"index variable i: expected an int .* found float 0.5"):
        lt(i, 1).eval({"i": 0.5})


def test_an_int_subclass_is_read_as_its_plain_value() -> None:
    class Lying(int):
        def __add__(self, o: object) -> int:
            return 99

    assert (i + 1).eval({"i": Lying(3)}) == 4


def test_an_assignment_that_is_not_a_mapping_is_refused() -> None:
    with pytest.raises(ParametricError, match=r"variable assignment: expected a mapping .* found str 'x'"):
        eval_value(inp(i, 0), "x", state=lambda r, c: 1)  # type: ignore[arg-type]
    with pytest.raises(ParametricError, match=r"variable assignment: expected a mapping .* found list"):
        (i + 1).eval([("i", 1)])  # type: ignore[arg-type]


def test_the_bulk_evaluation_refuses_a_value_as_the_cell_by_cell_one_does() -> None:
    rows, chans = np.arange(3, dtype=np.int64), np.zeros(3, dtype=np.int64)
    with pytest.raises(ParametricError, match=r"index variable s: expected an int .* found float 1.5"):
        bulk.index(i + s, {"s": 1.5}, rows, chans, {})


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**64 - 1), st.integers(0, 63))
def test_every_value_in_range_evaluates_as_the_integers(x: int, k: int) -> None:
    e = ite(lt(i, pow2(k)), i, i >> k)
    assert e.eval({"i": x}) == (x if x < 2**k else x >> k)
    assert e.eval({"i": np.uint64(x).item()}) == e.eval({"i": x})


# ---- the parameter values of an instance ---------------------------------------------------------
def test_parameters_of_several_key_types_are_named_not_a_type_error() -> None:
    # sorting the unknown names {1, "x"} raised TypeError: '<' not supported between 'str' and 'int'
    with pytest.raises(ParametricError, match=r"gadget cyclic_shift: unknown parameters 'x', 1 \(parameters: N, d, s\)"):
        instantiate(library.cyclic_shift(), {**SHIFT, 1: 2, "x": 3})  # type: ignore[dict-item]


def test_a_missing_parameter_is_named_missing_with_its_range() -> None:
    # was "parameter s needs an int value, found None", as if None had been given
    with pytest.raises(ParametricError, match=r"parameter s is missing; expected an int in \[0, 1099511627775\] \(given: 'N', 'd'\)"):
        instantiate(library.cyclic_shift(), {"N": 4, "d": 1})
    with pytest.raises(ParametricError, match=r"parameter s needs an int value, found None"):
        instantiate(library.cyclic_shift(), {**SHIFT, "s": None})


# ---- the input state and the state's size --------------------------------------------------------
@pytest.mark.parametrize("state, found", [(None, "NoneType None"), ([[1], [2]], r"list \[\[1\], \[2\]\]"), (5, "int 5")])
def test_an_input_state_that_is_not_a_callable_is_refused(state: Any, found: str) -> None:
    # functools.cache raised a bare TypeError ("the first argument must be callable")
    g = library.cyclic_shift()
    for call in (lambda: spec_at(g, SHIFT, 0, 0, state), lambda: cell_value(g, SHIFT, 0, 0, state)):
        with pytest.raises(ParametricError, match=rf"gadget cyclic_shift: state: expected a callable on cells \(r, c\) .* found {found}"):
            call()
    if state is not None:  # eval_value's None is no state: reading an input cell is then the error
        with pytest.raises(ParametricError, match=rf"eval_value: state: expected a callable .* found {found}"):
            eval_value(inp(i, 0), {"i": 0}, state=state)


@pytest.mark.parametrize("nn, dd, found", [(-1, 2, "-1×2"), (2.0, 2, "2.0×2"), (2, True, "2×True")])
def test_failing_cells_refuses_a_state_size_that_is_no_count(nn: Any, dd: Any, found: str) -> None:
    # numpy raised ValueError("negative dimensions are not allowed"), a float TypeError
    with pytest.raises(ParametricError, match=rf"gadget mul_stage: failing_cells: expected the state's rows and columns as ints ≥ 0, found {found}"):
        failing_cells(library.mul_stage(), {}, nn, dd, {"V1": set(), "V3": set()})


# ---- the gadget's name heads its verdicts ----------------------------------------------------------
def _copy(name: str) -> Gadget:
    return Gadget(name, (Param("N", 1, 8), Param("d", 1, 4)), N, var("d"), (PLayer(b1=1, h=(tap(0),)),), inp(i, q))


@pytest.mark.parametrize("name", ["other: N ∈ [1, 2^40]", "a\nb", "", "shift down", "x.", ".x", "a..b", "1x"])
def test_a_gadget_name_that_could_write_a_verdict_is_refused(name: str) -> None:
    # "other: N ∈ [1, 2^40]" made the ∀ row of a proof for N ∈ [1, 8] read "∀ other: N ∈ [1, 2^40]: N ∈ [1, 8], …"
    with pytest.raises(ParametricError, match=r"gadget name: expected an identifier, or identifiers joined by dots \(lib.shift\), found"):
        _copy(name)


@pytest.mark.parametrize("name", ["shift", "lib.shift", "a.b.c", "αshift", "_x"])
def test_identifiers_and_dotted_names_are_kept(name: str) -> None:
    assert _copy(name).name == name


def test_a_gadget_name_is_read_as_its_characters() -> None:
    # a str subclass printed as another name in the verdict and the ∀ row, under the seal
    class Other(str):
        def __str__(self) -> str:
            return "trusted"

        def __format__(self, spec: str) -> str:
            return "trusted"

    g = _copy(Other("evil"))
    assert type(g.name) is str and g.name == "evil"
    r = prove_forall(g, timeout=60)
    assert r.proved and str(r).startswith("evil: proved for all N ∈ [1, 8], d ∈ [1, 4]")
    assert forall_instance(g).name == "∀ evil: N ∈ [1, 8], d ∈ [1, 4]"


# ---- a gadget changed after it was built -----------------------------------------------------------
def test_a_field_changed_after_the_build_is_checked_by_prove_forall() -> None:
    # object.__setattr__ skipped the constructor's checks: an assume reading no predicate (true at no
    # cell) was ignored, and the wrong spec "refuted" under a hypothesis no input satisfies
    g = _copy("g")
    object.__setattr__(g, "spec", inp(i, q) + 1)
    object.__setattr__(g, "assume", lt(i, 0))
    with pytest.raises(ParametricError, match=r"gadget g assume: i < 0 constrains free predicates, and the gadget has none"):
        prove_forall(g, timeout=60)


def test_predicate_names_cached_before_a_change_are_not_read_by_prove_forall() -> None:
    # the names cached by the gadget before ``assume`` was replaced said it had no predicate: the
    # contradictory assume was never checked, and the claim was refuted instead of refused as vacuous
    g = _copy("g")
    object.__setattr__(g, "spec", inp(i, q) + 1)
    assert g.predicate_names == frozenset()
    object.__setattr__(g, "assume", pred("P", i, q) & ~pred("P", i, q))
    with pytest.raises(ParametricError, match=r"gadget g: its assumptions \(P\(i, q\) and not P\(i, q\)\) hold for no placement"):
        prove_forall(g, timeout=60)


# ---- instances at the top of the 64-bit range --------------------------------------------------------
@pytest.mark.parametrize("n", [2**62, 2**63 - 1, 2**63, 2**63 + 5, 2**64 - 1])
def test_a_state_of_2_to_the_63_rows_or_more_is_built(n: int) -> None:
    # a bias of more than 16 blocks is evaluated in bulk over int64 arrays of its bounds: numpy raised
    # OverflowError ("Python int too large to convert to C long") at N' ≥ 2^63, a size in the declared range
    d = var("d")
    sizes_ = (Param("N", 1, 2**64 - 1), Param("d", 1, 64))
    g = Gadget("top", sizes_, N, d, (PLayer(b1=where(lt(i, N - 1), fam("B", q)), h=(tap(0),)),),
               where(lt(i, N - 1), fam("B", q) * inp(i, q)))
    (layer,) = instantiate(g, {"N": n, "d": 20})
    assert layer.b1.rows == n
    assert [r[:4] for r in layer.b1.rects] == [(0, n - 1, c, c + 1) for c in range(20)]
    assert [str(r[4]) for r in layer.b1.rects] == [f"B[{c}]" for c in range(20)]


# ---- declared family sizes ------------------------------------------------------------------------------
class _SecondReadDiffers(Mapping[object, tuple[object, ...]]):
    """Names ``B`` at the first iteration, ``B``, ``a b`` and ``3`` at every later one."""

    def __init__(self) -> None:
        self.reads = 0

    def __getitem__(self, k: object) -> tuple[object, ...]:
        return (N,)

    def __len__(self) -> int:
        return 1

    def __iter__(self) -> Iterator[object]:
        self.reads += 1
        return iter(["B"] if self.reads == 1 else ["B", "a b", 3])


def _copy_with(families: object) -> Gadget:
    return Gadget("g", (Param("N", 1, 4),), N, 1, (PLayer(b1=1, h=(tap(0),)),), inp(i, q), families=families)  # type: ignore[arg-type]


def test_the_declared_families_are_read_once() -> None:
    # the names were checked at one iteration and kept from another: "a b" and 3 were declared families
    assert dict(_copy_with(_SecondReadDiffers()).families) == {"B": (N,)}


def test_a_family_named_in_or_declared_twice_is_refused() -> None:
    with pytest.raises(ParametricError, match=r"families: expected identifier names other than 'in' \(the input cells\), found 'in'"):
        _copy_with({"in": (N,)})

    class Name(str):
        def __hash__(self) -> int:
            return 7

    # two keys of one name (a str subclass hashing otherwise): one size was dropped silently
    with pytest.raises(ParametricError, match="family B declared twice; expected one size per family"):
        _copy_with({"B": (N,), Name("B"): (lit(2),)})


@pytest.mark.parametrize("preds, found", [("V1", "str 'V1'"), ({(0, 0)}, r"set \{\(0, 0\)\}"), (3, "int 3")])
def test_failing_cells_refuses_a_placement_that_is_not_a_mapping(preds: Any, found: str) -> None:
    # was AttributeError: 'str' object has no attribute 'items'
    with pytest.raises(ParametricError, match=rf"gadget mul_stage: failing_cells: expected the placement as a mapping .* found {found}"):
        failing_cells(library.mul_stage(), {}, 2, 2, preds)


# ---- a set of cells in a ``predicates`` block ---------------------------------------------------------
def test_a_set_in_a_predicates_block_holds_at_its_members_as_in_the_bulk_evaluation() -> None:
    # Cond.eval called the set ("'set' object is not callable") where the bulk evaluation reads it as
    # its members, and entry_state, which reads entry cell by cell, failed inside such a block
    c = pred("P", i, q) & ~pred("P", i + 1, q)
    cells = {(1, 0), (2, 0), (5, 1)}
    rows, chans = np.repeat(np.arange(7, dtype=np.int64), 2), np.tile(np.arange(2, dtype=np.int64), 7)
    with predicates({"P": cells}):
        by_cell = [c.eval({"i": r, "q": k}) for r, k in zip(rows.tolist(), chans.tolist())]
        assert by_cell == bulk.cond(c, {}, rows, chans, {}).tolist()
    assert [(r, k) for (r, k), hit in zip(zip(rows.tolist(), chans.tolist()), by_cell) if hit] == [(2, 0), (5, 1)]


def test_entry_state_reads_a_set_placement_of_the_block() -> None:
    g = Gadget("placed", (Param("N", 1, 8),), N, 2, (PLayer(b1=1, h=(tap(0),)),), inp(i, q), entry=pred("IN", i, q))
    with predicates({"IN": {(0, 1), (3, 0)}}):
        u = entry_state(g, {"N": 4}, lambda r, c: 10 * r + c + 1)
        assert [[u(r, c) for c in range(2)] for r in range(4)] == [[0, 2], [0, 0], [0, 0], [31, 0]]


def test_an_input_cell_read_with_no_state_names_the_cell_and_what_to_give() -> None:
    # was "a weight expression reads an input cell", of a value that is no weight
    with pytest.raises(ParametricError, match=r"input cell \(\(i \+ 1\), 0\) read with no input state; expected state= \(eval_value\)"):
        eval_value(inp(i + 1, 0), {"i": 0})


# ---- a ∀ row's hypotheses in ``symverify prove --details`` ----------------------------------------------
FORALL_SCRIPT = '''
from symverify.parametric import Gadget, Param, PLayer, inp, lt, tap, var
from symverify.scripts.instances import forall_instance
from symverify.scripts.protocol import ProofResult, script_main

TITLE = "A proof with a hypothesis"
i, q, N = var("i"), var("q"), var("N")


def run(quick=False):
    r = ProofResult("hyp", TITLE)
    g = Gadget("first_rows", (Param("N", 1, 8),), N, 1, (PLayer(b1=1, h=(tap(0),)),), inp(i, q) * 1, entry=lt(i, 2))
    r.instances.append(forall_instance(g))
    return r


if __name__ == "__main__":
    raise SystemExit(script_main(run))
'''


def test_the_details_view_states_a_forall_rows_hypotheses(tmp_path: Any, capsys: Any) -> None:
    # the row read "proved … ∀ first_rows: N ∈ [1, 8]": a claim about every input, where the proof is
    # about the inputs nonzero only on the rows i < 2 (the hypotheses were only in --json's detail)
    from symverify.cli import main

    (tmp_path / "hyp.py").write_text(FORALL_SCRIPT)
    assert main(["prove", "--dir", str(tmp_path), "hyp", "-j", "1", "--details", "--wide"]) == 0
    lines = capsys.readouterr().out.splitlines()
    k = next(n for n, line in enumerate(lines) if "∀ first_rows: N ∈ [1, 8]" in line)
    assert lines[k].split()[:3] == ["proved", "prover", "z3"]
    assert "given input nonzero only where i < 2" in lines[k + 1] + lines[k + 2]


# ---- names as Python reads them ------------------------------------------------------------------------
@pytest.mark.parametrize("make, message", [
    (lambda: var("ｉ"), r"index variable: expected an identifier, found 'ｉ' \(not in NFKC form: Python reads it as 'i'\)"),
    (lambda: Param("ｉ", 0, 3), r"parameter: expected an identifier other than i, q; found 'ｉ' \(not in NFKC form: Python reads it as 'i'\)"),
    (lambda: pred("ℕ"), r"predicate: expected an identifier name, found 'ℕ' \(not in NFKC form: Python reads it as 'N'\)"),
    (lambda: fam("ﬁ"), r"weight family: expected an identifier name, found 'ﬁ' \(not in NFKC form: Python reads it as 'fi'\)"),
    (lambda: _copy_with({"µ": (N,)}), r"families: expected identifier names other than 'in' .* found 'µ' \(not in NFKC form"),
    (lambda: _copy("ℕshift"), r"gadget name: expected an identifier, .* found 'ℕshift' \(not in NFKC form: Python reads it as 'Nshift'\)"),
])
def test_a_name_python_reads_as_another_is_refused(make: Any, message: str) -> None:
    # "ｉ" passed str.isidentifier and was not the cell variable i: Param("ｉ", 0, 3) was a parameter printed
    # as the row index ("ｉ ∈ [0, 3]"), where Python's own source reads ｉ as i
    with pytest.raises(ParametricError, match=message):
        make()


def test_names_in_nfkc_form_are_kept() -> None:
    assert var("Ν").name == "Ν" and var("α").name == "α"  # Greek capital nu and alpha: NFKC leaves them
    assert Param("β", 0, 3).name == "β"


def test_the_junit_report_states_a_forall_rows_hypotheses(tmp_path: Any, capsys: Any) -> None:
    # the proved testcase "∀ first_rows: N ∈ [1, 8]" carried only its kind and verdict
    import xml.etree.ElementTree as ET

    from symverify.cli import main

    (tmp_path / "hyp.py").write_text(FORALL_SCRIPT)
    assert main(["prove", "--dir", str(tmp_path), "hyp", "-j", "1", "--junit", "-"]) == 0
    case = ET.fromstring(capsys.readouterr().out).find(".//testcase")
    assert case is not None and case.get("name") == "∀ first_rows: N ∈ [1, 8]"
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props["verdict"] == "proved" and props["detail"] == "given input nonzero only where i < 2"


def test_a_placement_of_a_wrong_kind_names_the_gadget_and_the_predicate() -> None:
    # was "placement: expected a callable on cells or a set of cells, found dict": which one, of which gadget?
    with pytest.raises(ParametricError, match=r"gadget gather: placement IN: expected a callable on cells or a set of cells, found dict \{\(0, 0\): True\}"):
        instantiate(library.gather(), {"N": 8, "d": 2, "tw": 2, "n": 2}, placement={"IN": {(0, 0): True}})


# ---- cell_value through many layers ----------------------------------------------------------------------
def test_cell_value_reads_through_more_layers_than_the_recursion_limit() -> None:
    # one recursive frame per layer raised RecursionError on 1500 layers (the ∀-prover's re-check of a
    # counterexample past 2^14 cells reads its output cell so)
    import sys

    k = sys.getrecursionlimit() + 500
    shift = PLayer(b1=1, h=(tap(1),))  # causal: each layer moves the rows down by one
    g = Gadget("deep", (Param("N", 1, 2 * k),), N, 2, (shift,) * k, inp(i - k, q), care=ge(i, k))
    state = lambda r, c: 10 * r + c  # noqa: E731
    assert cell_value(g, {"N": k + 3}, k + 2, 1, state) == 21 == spec_at(g, {"N": k + 3}, k + 2, 1, state)
    assert cell_value(g, {"N": k + 3}, k - 1, 0, state) == 0  # read from the zero padding


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32))
def test_cell_value_equals_the_instance_model(seed: int) -> None:
    import random

    from symverify.kernel.semantics.evaluate import eval_model
    from symverify.kernel.semantics.rings import ScalarRing

    rng = random.Random(seed)
    g = library.remember_channels()
    params = {"N": 4, "d": 7, "a": 2, "b": 1, "m": 3, "fo": 3 + rng.randint(0, 2), "l1": rng.randint(0, 2), "l2": rng.randint(0, 2)}
    fams = {f: (lambda f: lambda *idx: rng.randint(-3, 3))(f) for f in ("h1", "h2")}
    view = read_once(fams)
    u = [[rng.randint(-5, 5) for _ in range(7)] for _ in range(4)]
    out = eval_model(instance_model(g, params, view), [[u[r][c] if g.entry.eval({**params, "i": r, "q": c}) else 0
                                                         for c in range(7)] for r in range(4)], ScalarRing())
    assert all(cell_value(g, params, r, c, lambda r, c: u[r][c], view) == out[r][c] for r in range(4) for c in range(7))


# ---- the terms of many layers ----------------------------------------------------------------------------
def _call_at_depth(frames: int, fn: Any) -> Any:
    return fn() if frames == 0 else _call_at_depth(frames - 1, fn)


def _same_channel(depth: int) -> Any:
    """``q`` as an index expression ``depth`` operations deep (``((q + 1) + 1 …) − 1 …``), ``q`` at the bottom."""
    e: Any = q
    for _ in range(depth // 2):
        e = e + 1
    for _ in range(depth // 2):
        e = e - 1
    return e + 0 if depth % 2 else e


_MOVE = PLayer(W=(tap(_same_channel(120)),), b2=1)  # y = u·W, W the identity through a channel 120 operations deep


def test_terms_nested_past_the_limit_through_the_layers_are_unknown() -> None:
    # each layer read through substitutes the channel it reads into the previous terms: four layers
    # reading a channel 120 operations deep (each within MAX_NESTING) gave terms about 480 deep, and
    # the z3 encoding's lookups, comparing them field by field, raised RecursionError
    g = Gadget("deep", (Param("N", 1, 8),), N, 2, (_MOVE,) * 4, inp(i, q))
    r = _call_at_depth(300, lambda: prove_forall(g, timeout=60))
    assert r.verdict.value == "unknown" and f"more than MAX_TERM_NESTING = {MAX_TERM_NESTING}" in r.detail


@pytest.mark.parametrize("wrong", [False, True])
def test_terms_at_the_limit_are_decided_from_a_deep_stack(wrong: bool) -> None:
    g = Gadget("deep", (Param("N", 1, 8),), N, 2, (_MOVE, PLayer(W=(tap(_same_channel(71)),), b2=1)), inp(i, q) * (2 if wrong else 1))
    assert max(nesting((t.guard, t.atoms)) for t in output_terms(g)) == MAX_TERM_NESTING
    assert _call_at_depth(300, lambda: prove_forall(g, timeout=60)).verdict.value == ("refuted" if wrong else "proved")

"""Adversarial inputs to the all-sizes machinery, fourth round: no query is started after the
deadline, a literal too wide for a narrow encoding never makes a gadget look vacuous,
``instantiate`` refuses an ``entry`` it cannot evaluate, and evaluating a shared expression is
linear in its nodes (docs/forall.md §1–§3). The strongest attacks that found no false proof are
kept as regression tests at the end."""

from __future__ import annotations

import types

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.kernel.parametric.concrete import spec_at
from symverify.kernel.parametric.expr import Var, VIf, VSum, predicates
from symverify.parametric import (
    Gadget,
    Param,
    ParametricError,
    PLayer,
    eq,
    fam,
    ge,
    inp,
    instantiate,
    ite,
    le,
    lt,
    ne,
    pred,
    tap,
    var,
    where,
)

i, q, N, d, s, k = (var(x) for x in "iqNdsk")
_COPY = (PLayer(b1=1, h=(tap(0),), mode="causal"),)


# ---- false proofs ------------------------------------------------------------------------------------
_EMPTY = VSum(())  # the empty sum: the constant 0 (no public builder makes one; the kernel's classes do)


@pytest.mark.parametrize("field", ["spec", "b1", "tap"])
def test_a_condition_over_two_empty_sums_is_checked_for_definedness(field: str) -> None:
    """``VIf(c, VSum(()), VSum(()))`` had no term at all for the definedness check (the empty sum has
    none), so ``c`` was never encoded: with ``c = (i − 1 < N)``, undefined at row 0, the gadget was
    "proved for all N" while ``instantiate`` and ``spec_at`` raise at row 0 (the concrete
    interpretation evaluates ``c`` at every cell)."""
    bad = VIf(lt(i - 1, N), _EMPTY, _EMPTY)
    spec: object = bad if field == "spec" else inp(i, q)
    b1: object = bad if field == "b1" else 1
    # a tap reads the channel only: its condition is undefined at channel 0
    h = (tap(0), tap(0, VIf(lt(q - 1, N), _EMPTY, _EMPTY))) if field == "tap" else (tap(0),)
    g = Gadget("g", (Param("N", 1, 10),), N, 1, (PLayer(b1=b1, h=h, mode="causal"),), spec)
    with pytest.raises(ParametricError, match=r"undefined or out of range at .*'i': 0|undefined or out of range at .*'q': 0"):
        sv.prove_forall(g)
    with pytest.raises(ParametricError, match="subtraction below 0"):
        if field == "spec":
            spec_at(g, {"N": 3}, 0, 0, lambda r, c: 1)
        else:
            instantiate(g, {"N": 3})


def test_an_empty_sum_defined_everywhere_is_still_proved() -> None:
    g = Gadget("g", (Param("N", 1, 10),), N, 1, _COPY, inp(i, q) + VIf(lt(i, N), _EMPTY, _EMPTY))
    assert sv.prove_forall(g).proved


def _placed(spec: object, assume: object) -> Gadget:
    p = pred("P", i, q)
    return Gadget("g", (Param("N", 1, 2**40),), N, 1, _COPY, spec, assume=assume, care=p | ~p)  # type: ignore[arg-type]


@pytest.mark.parametrize("case", ["no cell", "from N = 6 on"])
def test_assumptions_no_placement_satisfies_at_a_cell_are_refused_as_vacuous(case: str) -> None:
    """``assume`` false at row 0 whatever the predicates (``i ≠ 0 ∧ (P ∨ ¬P)``): no placement exists
    at any size — ``instantiate`` refuses every one — yet a spec wrong at row 0 was "proved for all N"
    (the prover's instances of ``assume`` are at the cells it reads, and row 0 was left out as a cell
    where ``assume`` fails). ``assume`` is now required to hold for some values of its predicates at
    every cell; at ``i < 5 ∨ (P ∧ ¬P)`` no placement exists from ``N = 6`` on."""
    p = pred("P", i, q)
    if case == "no cell":
        g = _placed(where(eq(i, 0), 2 * inp(i, q), inp(i, q)), ne(i, 0) & (p | ~p))
        at = r"cell \(0, 0\)"
    else:
        g = _placed(where(lt(i, 5), inp(i, q), 2 * inp(i, q)), lt(i, 5) | p & ~p)
        at = r"cell \(5, 0\) at \{'N': 6\}"
    with pytest.raises(ParametricError, match=f"vacuous statement: its assumptions .* hold for no placement at {at}"):
        sv.prove_forall(g)
    with pytest.raises(ParametricError, match="the placement violates"):
        instantiate(g, {"N": 6}, placement={"P": set()})


def test_assumptions_that_need_a_predicate_true_somewhere_are_decided() -> None:
    # every cell holds P or Q: the placement "all false" is no placement, "P everywhere" is one
    p, pq = pred("P", i, q), pred("P", i, q) | pred("Q", i, q)
    assert sv.prove_forall(_placed(inp(i, q), pq)).proved
    r = sv.prove_forall(_placed(where(p, inp(i, q), 2 * inp(i, q)), pq))
    # z3's witness leaves P and Q free off the cells it reads: it is completed over the instance's
    # cells (tests/test_attacks_forall5.py) and refutes; never proved
    assert r.verdict is sv.Verdict.REFUTED, r


def test_an_undecided_vacuity_check_of_the_assumptions_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    import symverify.kernel.provers.forall as fa

    z3 = fa._z3()

    class Spy:
        def __init__(self, s: object) -> None:
            self.s, self.quantified = s, False

        def add(self, *xs: object) -> None:
            self.quantified |= any(z3.is_quantifier(x) for x in xs)
            self.s.add(*xs)  # type: ignore[attr-defined]

        def check(self) -> object:
            return z3.unknown if self.quantified else self.s.check()  # type: ignore[attr-defined]

        def __getattr__(self, name: str) -> object:
            return getattr(self.s, name)

    monkeypatch.setattr(fa, "_z3", lambda: types.SimpleNamespace(**{**vars(z3), "Solver": lambda: Spy(z3.Solver())}))
    r = sv.prove_forall(_placed(inp(i, q), pred("P", i, q) | pred("Q", i, q)))
    assert r.verdict is sv.Verdict.UNKNOWN and "vacuity check of the assumptions: z3 unknown" in r.detail, r


class _BothModes(str):
    """A mode equal to both modes, hashing as ``cyclic``: ``==`` says causal first, a dict lookup cyclic."""

    def __eq__(self, o: object) -> bool:
        return o in ("causal", "cyclic")

    def __hash__(self) -> int:
        return hash("cyclic")


def _shift(mode: object) -> Gadget:
    layers = (PLayer(b1=1, h=(tap(s),), mode=mode),)  # type: ignore[arg-type]
    return Gadget("g", (Param("N", 1, 10), Param("s", 0, 9)), N, 1, layers, where(ge(i, s), inp(i - s, q)), where=lt(s, N))


def test_a_layer_mode_given_as_a_str_subclass_is_the_mode_it_spells() -> None:
    """The symbolic interpretation read ``mode == "causal"``, the instance ``Mode(mode)`` (a dict
    lookup): a str subclass answering each otherwise was proved causal (``y[0] = 0``) and built
    cyclic (``y[0] = u[N − 1]``). The mode is now read as its characters, once."""
    from symverify.kernel.parametric.concrete import instance_model
    from symverify.kernel.semantics.evaluate import eval_model
    from symverify.kernel.semantics.rings import ScalarRing

    g = _shift(_BothModes("causal"))
    assert sv.prove_forall(g).proved
    out = eval_model(instance_model(g, {"N": 4, "s": 1}), [[1], [2], [3], [4]], ScalarRing())
    assert out == [[0], [1], [2], [3]]  # the causal shift that was proved
    assert type(g.layers[0].mode) is str


class _Alias(str):
    """An operator spelling ``==`` whose hash is ``<``'s and which equals ``<`` and ``==``: the z3 and
    cell-by-cell interpretations looked it up in a dict (``==``), the bulk one compared in order (``<``)."""

    def __eq__(self, o: object) -> bool:
        return o in ("<", "==")

    def __hash__(self) -> int:
        return hash("==")


def test_an_operator_given_as_a_str_subclass_is_the_operator_it_spells() -> None:
    from symverify.kernel.parametric.expr import Bin, BoolOp, Cmp

    c = Cmp(_Alias("=="), i, N)
    assert type(c.op) is str and c.op == "==" and type(Bin(_Alias("+"), i, N).op) is str
    assert type(BoolOp(_Alias("and"), [lt(i, N)]).items) is tuple
    # a mask on row N − 2 only: proved as ==, and built as == (the bulk evaluation, which ``i + 0`` and
    # more than 16 rows select, read it as <: a mask on the rows below N − 2)
    g = Gadget("g", (Param("N", 20, 40),), N, 1, (PLayer(b1=where(Cmp(_Alias("=="), i + 0, N - 2), 1), h=(tap(0),), mode="causal"),),
               where(eq(i, N - 2), inp(i, q)))
    assert sv.prove_forall(g).proved
    (layer,) = instantiate(g, {"N": 30})
    assert layer.b1.rects == ((28, 29, 0, 1, 1),)


class _Evil(Var):  # type: ignore[misc]
    """A variable ``t`` equal to, and hashing as, the variable ``s``."""

    __slots__ = ()

    def __eq__(self, o: object) -> bool:
        return isinstance(o, Var) and o.name in ("s", self.name)

    def __hash__(self) -> int:
        return hash(Var("s"))


def test_a_node_subclass_is_refused_when_the_gadget_is_built() -> None:
    """The z3 encoding caches index expressions by ``==`` and hash: a ``Var`` subclass named ``t``
    equal to ``s`` was encoded as ``s``, and a shift by ``s`` was "proved" to be a shift by the
    independent ``t`` (the concrete interpretation reads ``t``). A gadget is made of the language's
    own classes only; ``prove_forall`` takes a ``Gadget``, not a subclass."""
    t = _Evil("t")
    ps = (Param("N", 1, 10), Param("s", 0, 9), Param("t", 0, 9))
    with pytest.raises(ParametricError, match=r"own node classes, found _Evil \(a subclass of Var\)"):
        Gadget("g", ps, N, 1, (PLayer(b1=1, h=(tap(s),), mode="causal"),), where(ge(i, t), inp(i - t, q)),
               where=lt(s, N) & lt(t, N))

    class Sub(Gadget):
        pass

    g = _shift("causal")
    sub = Sub(g.name, g.params, g.rows, g.cols, g.layers, g.spec, where=g.where)
    with pytest.raises(ParametricError, match=r"found Sub \(a subclass of Gadget"):
        sv.prove_forall(sub)


def test_a_care_that_excludes_whole_sizes_is_printed_with_the_verdict() -> None:
    """``care = N < 5`` claims nothing at ``N ≥ 5`` (every cell there is free), yet the verdict read
    "proved for all N ∈ [1, 2^40]" — of a gadget whose output is twice its spec at every size from 5 up.
    The cells claimed are now part of the printed statement, as ``where`` is."""
    g = Gadget("g", (Param("N", 1, 2**40),), N, 1, _COPY, where(lt(N, 5), inp(i, q), 2 * inp(i, q)), care=lt(N, 5))
    r = sv.prove_forall(g)
    assert r.proved and r.ranges.endswith("at the cells where N < 5") and "at the cells where N < 5" in str(r), r
    assert sv.prove_forall(Gadget("g", (Param("N", 1, 2**40),), N, 1, _COPY, inp(i, q))).ranges == "N ∈ [1, 2^40]"


# ---- crashes -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("size", ["xor", "and", "shift"])
def test_a_family_size_outside_the_linear_fragment_is_decided(size: str) -> None:
    """The choice of the integer (linear) encoding looked at every index expression but the families'
    declared sizes, which the range obligations read: ``families={"B": (N ^ 0,)}`` escaped as the
    prover's internal ``_NotLinearError`` (no verdict, no ``SymverifyError``)."""
    n = {"xor": N ^ 0, "and": N & 15, "shift": N << s}[size]
    ps = (Param("N", 1, 10), Param("s", 0, 3))
    layers = (PLayer(b1=fam("B", i), h=(tap(0),), mode="causal"),)
    assert sv.prove_forall(Gadget("g", ps, N, 1, layers, fam("B", i) * inp(i, q), families={"B": (n,)})).proved
    wrong = Gadget("g", ps, N, 1, layers, fam("B", i) * inp(i, q) * 2, families={"B": (n,)})
    assert sv.prove_forall(wrong).verdict is sv.Verdict.REFUTED
    short = Gadget("g", ps, N, 1, layers, fam("B", i) * inp(i, q), families={"B": (n >> 1 if size != "shift" else N >> 1,)})
    with pytest.raises(ParametricError, match=r"family index B\[i\] below its size"):
        sv.prove_forall(short)


# ---- the deadline --------------------------------------------------------------------------------------
def test_no_query_is_started_after_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every query after the deadline still got 1 ms of z3 (and a 1 ms ``unknown`` at a narrow width
    moved on to the next width's queries): once the budget is spent, none is started and the verdict
    is unknown. The clock here jumps past the deadline as soon as the first query is made."""
    import symverify.kernel.provers.forall as fa

    z3 = fa._z3()
    clock = [0.0]
    started: list[float] = []

    def made(x: object) -> object:
        started.append(clock[0])
        clock[0] = 1000.0  # the budget (10 s) is spent by the first query
        return x

    spy = types.SimpleNamespace(TryFor=lambda t, ms: made(z3.TryFor(t, ms)), Solver=lambda: made(z3.Solver()),
                                SolverFor=lambda logic: made(z3.SolverFor(logic)))
    monkeypatch.setattr(fa, "_z3", lambda: types.SimpleNamespace(**{**vars(z3), **vars(spy)}))
    monkeypatch.setattr(fa, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))
    g = Gadget("g", (Param("N", 1, 10),), N ^ 0, 1, _COPY, inp(i, q))
    r = sv.prove_forall(g, timeout=10)
    assert r.verdict is sv.Verdict.UNKNOWN and "before the next z3 query" in r.detail, r
    assert started == [0.0], started


def test_a_witness_found_before_the_deadline_is_still_rechecked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The small-size searches are skipped once the deadline has passed, but a counterexample the
    whole-range query already gave is re-checked by exact evaluation (no query) and refutes."""
    import symverify.kernel.provers.forall as fa

    z3 = fa._z3()
    clock = [0.0]
    real = z3.Solver

    class Late:
        def __init__(self, s: object) -> None:
            self.s, self.asserted = s, []

        def add(self, *xs: object) -> None:
            self.asserted += xs
            self.s.add(*xs)  # type: ignore[attr-defined]

        def check(self) -> object:
            r = self.s.check()  # type: ignore[attr-defined]
            if any(z3.is_distinct(x) or "!=" in str(x) for x in self.asserted[-3:]):
                clock[0] = 1000.0  # the identity query: the deadline passes while it runs
            return r

        def __getattr__(self, name: str) -> object:
            return getattr(self.s, name)

    spy = types.SimpleNamespace(TryFor=lambda t, ms: types.SimpleNamespace(solver=lambda: Late(z3.TryFor(t, ms).solver())),
                                Solver=lambda: Late(real()), SolverFor=lambda logic: Late(z3.SolverFor(logic)))
    monkeypatch.setattr(fa, "_z3", lambda: types.SimpleNamespace(**{**vars(z3), **vars(spy)}))
    monkeypatch.setattr(fa, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))
    g = Gadget("g", (Param("N", 1, 10),), N ^ 0, 1, _COPY, where(lt(i, 5), inp(i, q), 2 * inp(i, q)))
    r = sv.prove_forall(g, timeout=10)
    assert r.verdict is sv.Verdict.REFUTED and r.cell is not None and r.cell[0] >= 5, r


# ---- narrow widths --------------------------------------------------------------------------------------
@pytest.mark.parametrize("assume", ["none", "some"])
def test_a_literal_too_wide_for_a_narrow_width_does_not_make_the_assumptions_vacuous(assume: str) -> None:
    """A literal that does not fit a narrow width is encoded as 0 there (and that width is then not
    used): ``N < 2^50`` read as ``N < 0`` made the gadget's conditions false, and the check that
    ``assume`` holds for some placement refused a correct gadget ("hold for no placement") instead of
    trying the next width."""
    kw = {"assume": lt(i, 2**50) | pred("P", i, q)} if assume == "some" else {}
    g = Gadget("g", (Param("N", 1, 100),), N ^ 0, 1, _COPY, inp(i, q), where=lt(N, 2**50), care=pred("P", i, q), **kw)
    r = sv.prove_forall(g, timeout=30)
    assert r.proved, r
    wrong = Gadget("g", (Param("N", 1, 100),), N ^ 0, 1, _COPY, 2 * inp(i, q), where=lt(N, 2**50), care=pred("P", i, q), **kw)
    assert sv.prove_forall(wrong, timeout=30).verdict is sv.Verdict.REFUTED


# ---- instantiate checks entry --------------------------------------------------------------------------
def test_instantiate_refuses_an_entry_undefined_at_a_cell() -> None:
    """``entry`` (the input cells that may be nonzero: the hypothesis of the ∀ theorem) was never
    evaluated by ``instantiate``: an entry undefined at row 0 built layers the prover refuses."""
    g = Gadget("g", (Param("N", 1, 10),), N, 1, _COPY, inp(i, q), entry=lt(i - 1, N))
    with pytest.raises(ParametricError, match=r"entry \(i - 1\) < N must be defined at every cell .* subtraction below 0 .* i=0"):
        instantiate(g, {"N": 4})
    with pytest.raises(ParametricError, match=r"undefined or out of range .* entry"):
        sv.prove_forall(g)


def test_instantiate_refuses_an_entry_reading_an_undefined_predicate_point() -> None:
    g = Gadget("g", (Param("N", 2, 10),), N, 1, _COPY, inp(i, q), entry=pred("P", i - 1, q) | eq(i, 0),
               assume=ge(i, 0) | pred("P", i, q))
    with pytest.raises(ParametricError, match="predicate P has no value"):
        instantiate(g, {"N": 4})
    with pytest.raises(ParametricError, match="entry"):  # the predicate's point is undefined at row 0 (no short-circuit)
        instantiate(g, {"N": 4}, placement={"P": set()})


def test_a_defined_entry_is_checked_block_by_block_at_any_size() -> None:
    # a condition comparing i and q with the parameters is constant between cut points: a few blocks
    g = Gadget("g", (Param("N", 2, 2**40),), N, 4, _COPY, inp(i, q), entry=lt(i, N - 1) | eq(q, 0))
    (layer,) = instantiate(g, {"N": 2**40})
    assert layer.h.rows == 2**40


# ---- evaluation of shared subexpressions -----------------------------------------------------------
def test_evaluating_a_shared_expression_visits_each_node_once() -> None:
    """``e = e & e`` sixteen times is 33 nodes and ``2^16`` uses: each evaluation walked every use
    (exponential in the sharing); now each node once — the predicate under it is read once."""
    calls: list[tuple[int, ...]] = []

    def p(*idx: int) -> bool:
        calls.append(idx)
        return True

    e = ite(pred("P", i), i, N)
    for _ in range(16):
        e = e & e
    c = eq(e, i) & eq(e, i)  # a condition over the shared expression: one walk, one read too
    with predicates({"P": p}):
        assert e.eval({"i": 5, "N": 3}) == 5
        assert calls == [(5,)]
        assert c.eval({"i": 5, "N": 3}) is True
    assert calls == [(5,), (5,)]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**20), st.integers(1, 2**20), st.integers(0, 12))
def test_shared_and_unshared_expressions_evaluate_alike(a: int, b: int, depth: int) -> None:
    """Memoisation changes no value: a shared DAG and the same expression rebuilt without sharing agree
    (and fail alike where undefined)."""
    def build(shared: bool) -> object:
        x = (var("a") + var("b")) % var("b")
        for n in range(depth):
            y = x if shared else (var("a") + var("b")) % var("b")
            for _ in range(n):
                y = y >> 0 if not shared else y
            x = ite(lt(x, var("b")), x | y, x - y)
        return x

    env = {"a": a, "b": b}
    outs = []
    for shared in (True, False):
        try:
            outs.append(build(shared).eval(env))  # type: ignore[attr-defined]
        except ParametricError as err:
            outs.append(type(err).__name__)
    assert outs[0] == outs[1]




# ---- attacks that found no false proof (regressions) ---------------------------------------------------
_NS = (Param("N", 1, 2**40), Param("s", 0, 2**40))


@pytest.mark.parametrize("idx", ["div", "mod", "mod_one_off"])
def test_division_or_modulo_by_a_parameter_reaching_zero_is_refused(idx: str) -> None:
    # s = 0 is the bottom of its range: the read is undefined there, never a wrapped or dropped cell
    e = {"div": i // s, "mod": (i + s) % s, "mod_one_off": i % (s + 1 - 1)}[idx]
    g = Gadget("g", _NS, N, 1, _COPY, where(lt(e, N), inp(e, q)), where=lt(s, N))
    with pytest.raises(ParametricError, match=r"undefined or out of range at .*'s': 0"):
        sv.prove_forall(g)


@pytest.mark.parametrize("hi, verdict", [(63, sv.Verdict.PROVED), (64, None)])
def test_a_power_of_two_of_a_parameter_at_both_ends_of_its_range(hi: int, verdict: sv.Verdict | None) -> None:
    # 2^k at k = 0 and k = 63 is defined (2^63 < 2^64); k = 64 is not: refused, not wrapped to 1 or 0
    from symverify.parametric import pow2

    g = Gadget("g", (Param("N", 1, 2**40), Param("k", 0, hi)), N, 1, _COPY,
               where(lt(i, pow2(k)) | eq(i, 0), inp(i, q), inp(i, q)))
    if verdict is None:
        with pytest.raises(ParametricError, match=r"undefined or out of range at .*'k': 64"):
            sv.prove_forall(g)
    else:
        assert sv.prove_forall(g).verdict is verdict
        wrong = Gadget("g", g.params, N, 1, _COPY, where(lt(i, pow2(k)), inp(i, q)))  # 0 at rows ≥ 2^k: k = 0
        r = sv.prove_forall(wrong)
        assert r.verdict is sv.Verdict.REFUTED and r.params["k"] < 40 and r.cell is not None and r.cell[0] >= 2 ** r.params["k"]


def test_empty_ranges_are_refused_never_vacuously_proved() -> None:
    with pytest.raises(ParametricError, match="lo ≤ hi"):
        Param("N", 5, 4)
    g = Gadget("g", _NS, N, 1, _COPY, 2 * inp(i, q), where=lt(s, N))
    with pytest.raises(ParametricError, match=r"N ∈ \[10, 9\] is empty; expected lo ≤ hi inside the declared"):
        sv.prove_forall(g, ranges={"N": (10, 9)})
    with pytest.raises(ParametricError, match="vacuous"):  # a where no value of the narrowed ranges satisfies
        sv.prove_forall(g, ranges={"N": (1, 5), "s": (5, 9)})


@pytest.mark.parametrize("other", ["ℕ", "Ｎ"])
def test_names_python_reads_as_another_are_refused(other: str) -> None:
    # NFKC("ℕ") == NFKC("Ｎ") == "N": Python reads such a name as N, so it is no name of its own
    with pytest.raises(ParametricError, match=rf"index variable: expected an identifier, found '{other}' \(not in NFKC form: Python reads it as 'N'\)"):
        var(other)


@pytest.mark.parametrize("other", ["n", "N_"])
def test_names_differing_by_case_or_suffix_are_different_parameters(other: str) -> None:
    # two parameters in every interpretation: a spec reading row `other` - 1 where the output reads
    # N - 1 is wrong where they differ
    m = var(other)
    ps = (Param("N", 1, 100), Param(other, 1, 100))
    g = Gadget("g", ps, N, 1, (PLayer(b1=1, h=(tap(N - 1),), mode="cyclic"),), inp((i + 1) % m, q), where=eq(N ^ 0, N) & le(m, N))
    r = sv.prove_forall(g)
    assert r.verdict is sv.Verdict.REFUTED and r.params["N"] != r.params[other], r
    g = Gadget("g", ps, N, 1, (PLayer(b1=1, h=(tap(N - 1),), mode="cyclic"),), inp((i + 1) % N, q), where=eq(N ^ 0, N) & le(m, N))
    assert sv.prove_forall(g).proved


def test_a_spec_reading_outside_the_state_at_some_sizes_is_refused() -> None:
    # row i + s is inside the state only while i + s < N: at the top rows the read falls outside
    g = Gadget("g", _NS, N, 1, _COPY, where(lt(s, 1), inp(i + s, q), inp(i, q)), where=lt(s, N))
    assert sv.prove_forall(g).proved  # read only at s = 0: row i, inside
    g = Gadget("g", _NS, N, 1, _COPY, where(lt(s, 2), inp(i + s, q)), where=lt(s, N))
    with pytest.raises(ParametricError, match=r"input cell \(\(i \+ s\), q\) inside the N×1 state"):
        sv.prove_forall(g)


@pytest.mark.parametrize("mode", ["causal", "cyclic"])
def test_a_shift_by_the_length_or_more_is_refused(mode: str) -> None:
    # a lag of N' is no row of the filter: not read as 0 (causal) nor as a shift by 0 (cyclic)
    g = Gadget("g", _NS, N, 1, (PLayer(b1=1, h=(tap(s),), mode=mode),), where(ge(i, s), inp(i - s, q)), where=le(s, N))
    with pytest.raises(ParametricError, match=r"h tap lag s inside \[0, N\)"):
        sv.prove_forall(g)


def test_a_cyclic_claim_that_holds_only_modulo_a_wrap_is_refuted_at_the_wrap() -> None:
    # a cyclic shift claimed causal: equal except on the rows that wrap around
    g = Gadget("g", _NS, N, 1, (PLayer(b1=1, h=(tap(s),), mode="cyclic"),), where(ge(i, s), inp(i - s, q)), where=lt(s, N))
    r = sv.prove_forall(g)
    assert r.verdict is sv.Verdict.REFUTED and r.cell is not None and r.cell[0] < r.params["s"], r

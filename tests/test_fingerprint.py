"""The side encoding is injective (a decoder rebuilds every side from its bytes), and the randomized
method's points come from SHAKE-256 streams separated by purpose (docs/trusted-base.md, "The trial points")."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest
from fingerprint_decode import decode
from hypothesis import given, settings
from hypothesis import strategies as st

import symverify as sv
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, Kaleidoscope, bbstar_strides
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Scalar, Sym, sym
from symverify.kernel.provers import fingerprint as fp
from symverify.kernel.provers.challenge import Stream, Transcript
from symverify.kernel.provers.fingerprint import EncodingError, encode, fingerprint
from symverify.kernel.provers.modular import PythonEngine
from symverify.kernel.provers.randomized import transcript
from symverify.kernel.provers.sides import as_side
from symverify.library import random_circuit

M61 = 2**61 - 1

# ---- strategies over every kind of value -------------------------------------------------------

ints = st.one_of(st.integers(-3, 3), st.integers(-(2**64), 2**64), st.integers(-(2**200), 2**200),
                 st.sampled_from([2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 87779591, 121334019]))
rationals = st.builds(Fraction, ints, st.one_of(st.integers(1, 5), st.integers(1, 2**70)))
names = st.sampled_from(["a", "b", "c_1", "D1[3]", "D1[30]", "x.y"])


@st.composite
def symbols(draw: st.DrawFn) -> Scalar:
    terms: dict[tuple[tuple[str, int], ...], Fraction] = {}
    for _ in range(draw(st.integers(1, 3))):
        mono = tuple(sorted({draw(names): draw(st.one_of(st.integers(1, 3), st.integers(1, 2**70)))
                             for _ in range(draw(st.integers(1, 2)))}.items()))
        terms[mono] = draw(rationals.filter(lambda q: q != 0))
    if draw(st.booleans()):
        terms[()] = draw(rationals.filter(lambda q: q != 0))
    return Sym(tuple(sorted(terms.items())))


scalars = st.one_of(ints, rationals.map(lambda q: int(q) if q.denominator == 1 else q), symbols())


@st.composite
def grids(draw: st.DrawFn, rows: int, cols: int) -> Grid:
    rects = []
    for _ in range(draw(st.integers(0, 3))):
        r0, c0 = draw(st.integers(0, rows - 1)), draw(st.integers(0, cols - 1))
        rects.append((r0, draw(st.integers(r0 + 1, rows)), c0, draw(st.integers(c0 + 1, cols)), draw(scalars)))
    return Grid(rows, cols, draw(st.one_of(st.just(0), scalars)), tuple(rects))


@st.composite
def any_models(draw: st.DrawFn) -> Model:
    n, d = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    nn, dd = n + draw(st.integers(0, 2)), d + draw(st.integers(0, 2))
    layers = tuple(Layer(draw(grids(dd, dd)), draw(grids(nn, dd)), draw(grids(nn, dd)), draw(grids(nn, dd)),
                         draw(st.sampled_from([Mode.CAUSAL, Mode.CYCLIC]))) for _ in range(draw(st.integers(0, 3))))
    return Model(n, d, nn, dd, layers, draw(st.sampled_from(["", "named"])))


@st.composite
def any_circuits(draw: st.DrawFn) -> Circuit:
    n, d = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    gates: list[Gate] = []
    for _ in range(draw(st.integers(0, 8))):
        nodes = n * d + len(gates)
        kind = draw(st.sampled_from(["const", "lin", "mul"]))
        if kind == "const":
            gates.append(Gate.const(draw(scalars)))
        elif kind == "lin":
            gates.append(Gate.lin(draw(st.integers(0, nodes - 1)), draw(scalars), draw(st.integers(0, nodes - 1)), draw(scalars)))
        else:
            gates.append(Gate.mul(draw(st.integers(0, nodes - 1)), draw(st.integers(0, nodes - 1))))
    total = n * d + len(gates)
    outs = draw(st.lists(st.integers(0, total - 1), max_size=n * d))
    return Circuit(n, d, tuple(gates), tuple(outs), draw(st.sampled_from(["", "named"])))


@st.composite
def kaleidoscopes(draw: st.DrawFn) -> Kaleidoscope:
    size = draw(st.sampled_from([2, 4, 8]))

    def factor(stride: int) -> ButterflyFactor:
        diag = st.lists(st.one_of(st.integers(-2, 2), scalars), min_size=size // 2, max_size=size // 2).map(tuple)
        return ButterflyFactor(size, stride, draw(diag), draw(diag), draw(diag), draw(diag))

    groups = tuple(BBStar(size, tuple(factor(s) for s in bbstar_strides(size))) for _ in range(draw(st.integers(0, 2))))
    return Kaleidoscope(draw(st.integers(1, size)), size, groups)


sides = st.one_of(any_circuits(), any_models(), kaleidoscopes())


# ---- injectivity ---------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(sides)
def test_decode_inverts_encode_on_every_kind_of_side(x) -> None:
    assert decode(encode(x)) == x


@settings(max_examples=150, deadline=None)
@given(sides, sides)
def test_distinct_sides_have_distinct_encodings_and_fingerprints(x, y) -> None:
    assert (encode(x) == encode(y)) == (x == y)
    assert (fingerprint(x) == fingerprint(y)) == (x == y)


def test_the_published_colliding_coefficients_are_told_apart() -> None:
    """Under the old terminated integer encoding ``87779591·x0 + 3·x1`` and ``5·x0 + 121334019·x1``
    (and the rationals 87779591/3 and 5/121334019) hashed alike."""
    a = Circuit(1, 2, (Gate.lin(0, 87779591, 1, 3),), (2,))
    b = Circuit(1, 2, (Gate.lin(0, 5, 1, 121334019),), (2,))
    assert encode(a) != encode(b) and fingerprint(a) != fingerprint(b)
    for value_a, value_b in [(Fraction(87779591, 3), Fraction(5, 121334019)), (2**70 + 3, 2**70 + 5)]:
        def model(v: Scalar) -> Model:
            b2 = Grid(2, 1, 0, ((0, 1, 0, 1, v), (1, 2, 0, 1, sym("a"))))  # a symbol forces the wide form
            return Model(1, 1, 2, 1, (Layer(Grid.zeros(1, 1), Grid.full(2, 1, 1), Grid.zeros(2, 1), b2),))
        assert fingerprint(model(value_a)) != fingerprint(model(value_b))
        assert sv.verify(model(value_a), model(value_b), method="randomized").refuted


def test_every_split_of_an_integer_list_encodes_differently() -> None:
    """The attack had 2^T coefficient choices behind one digest; here 2^10 choices give 2^10 encodings."""
    choices = [(87779591, 3), (5, 121334019)]
    seen = set()
    for mask in range(1 << 10):
        gates = [Gate.lin(0, alpha, 1, beta) for t in range(10) for alpha, beta in [choices[(mask >> t) & 1]]]
        seen.add(fingerprint(Circuit(1, 2, tuple(gates), (2,))))
    assert len(seen) == 1 << 10


def test_the_int64_form_and_the_wide_form_never_meet() -> None:
    """Each list takes one form, decided by its values; a wide list whose values would fit is refused."""
    narrow, wide = Circuit(1, 1, (Gate.const(2**63 - 1),), (1,)), Circuit(1, 1, (Gate.const(2**63),), (1,))
    assert fp._scalars([2**63 - 1]) in encode(narrow) and fp._scalars([2**63]) in encode(wide)
    assert fp._scalars([2**63 - 1])[:1] == b"A" and fp._scalars([2**63])[:1] == b"V"
    forged = encode(narrow).replace(fp._scalars([2**63 - 1]), b"V" + (1).to_bytes(8, "big") + fp._int(2**63 - 1))
    with pytest.raises(EncodingError, match="wide scalar list whose values all fit"):
        decode(forged)
    forged_ids = b"C" + fp._ints([1, 1, 0, 1])[:1].replace(b"N", b"W") + (4).to_bytes(8, "big") + b"".join(
        fp._int(v) for v in (1, 1, 0, 1))
    with pytest.raises(EncodingError, match="wide int list"):
        decode(forged_ids)


def test_names_do_not_take_part_in_the_encoding() -> None:
    c = random_circuit(2, 2, 6, 2, seed=1)
    assert encode(c) == encode(replace(c, name="another"))
    assert decode(encode(c)) == c


def _circuit_bytes(ops: bytes, args: list[int], cidx: list[int], scalars: list[Scalar]) -> bytes:
    return (b"C" + fp._ints([1, 1, len(ops), 1]) + fp._bytes(ops) + fp._ints(args) + fp._ints(cidx)
            + fp._scalars(scalars) + fp._ints([1]))


@pytest.mark.parametrize("data, match", [
    (b"", "expected 1 more bytes"),
    (b"Z", "expected a tag in b'CMK'"),
    (b"C", "expected 1 more bytes, found 0"),
    (b"CN" + (4).to_bytes(8, "big"), "expected 32 more bytes"),
    (b"I" + (0).to_bytes(8, "big"), "expected a tag"),
    (_circuit_bytes(b"\x03", [], [], []), "op codes"),
    (_circuit_bytes(b"\x01", [0, 0], [0, 5], [1]), "coefficient index out of range"),
    (_circuit_bytes(b"\x01", [0, 7], [0, 0], [1]), "invalid C object"),
    (_circuit_bytes(b"\x02", [0, 0], [0], [1]), "coefficient indices: expected 0 values, found 1"),
    (b"M" + fp._ints([1, 1, 1, 1, 1]) + fp._bytes(b"x"), "mode bytes"),
    (b"K" + fp._ints([1, 2, 1]), "kaleidoscope head"),
])
def test_decode_refuses_malformed_bytes(data: bytes, match: str) -> None:
    with pytest.raises(EncodingError, match=match):
        decode(data)


def test_decode_refuses_trailing_bytes_truncation_and_non_canonical_parts() -> None:
    c = Circuit(1, 2, (Gate.lin(0, Fraction(1, 3), 1, sym("a")), Gate.const(2**70)), (2, 3))
    data = encode(c)
    with pytest.raises(EncodingError, match="trailing"):
        decode(data + b"\x00")
    for cut in (1, len(data) // 2, len(data) - 1):
        with pytest.raises(EncodingError):
            decode(data[:cut])
    padded = data.replace(fp._int(2**70), b"I" + (10).to_bytes(8, "big") + (2**70).to_bytes(10, "big", signed=True))
    assert padded != data
    with pytest.raises(EncodingError, match="minimal length"):
        decode(padded)
    unreduced = data.replace(fp._scalar(Fraction(1, 3)), b"F" + fp._int(2) + fp._int(6))
    with pytest.raises(EncodingError, match="not in lowest terms"):
        decode(unreduced)


def test_a_model_is_rebuilt_with_every_grid_in_place() -> None:
    m = sv.compile(random_circuit(2, 2, 10, 3, seed=4)).model
    again = decode(encode(m))
    assert again == m and isinstance(again, Model)
    assert [ly.mode for ly in again.layers] == [ly.mode for ly in m.layers]


def test_encode_refuses_what_is_not_a_side() -> None:
    with pytest.raises(EncodingError, match="expected a circuit, model or kaleidoscope, found int"):
        encode(3)  # type: ignore[arg-type]
    with pytest.raises(EncodingError, match="found Grid"):
        fingerprint(Grid.zeros(1, 1))  # type: ignore[arg-type]


def test_a_repeated_fingerprint_is_the_same_and_a_new_object_is_hashed_afresh() -> None:
    model = sv.compile(random_circuit(2, 2, 8, 3, seed=5)).model
    first = fingerprint(model)
    fp._RECENT.clear()
    assert fingerprint(model) == first
    ly = model.layers[0]
    changed = replace(model, layers=(replace(ly, b2=ly.b2.paint(0, 1, 0, 1, Fraction(5, 11))), *model.layers[1:]))
    assert fingerprint(changed) != first


# ---- the challenge streams -------------------------------------------------------------------


@given(st.integers(1, 2**130), st.binary(min_size=1, max_size=8))
def test_below_is_always_in_range_and_deterministic(bound: int, key: bytes) -> None:
    xs = [Stream(key * 4).below(bound) for _ in range(2)]
    assert xs[0] == xs[1] and 0 <= xs[0] < bound


@given(st.integers(1, 2**62), st.integers(0, 300))
def test_arrays_are_in_range_and_agree_with_residues(bound: int, count: int) -> None:
    a = Stream(b"k" * 32).array(bound, count)
    assert a.shape == (count,) and all(0 <= int(x) < bound for x in a)
    assert Stream(b"k" * 32).residues(bound, count) == [int(x) for x in a]


def test_rejection_sampling_is_uniform_on_a_bound_just_above_a_power_of_two() -> None:
    """bound = 2^k + 1 rejects almost half of the candidates; the kept ones are uniform."""
    counts = [0] * 5
    s = Stream(b"u" * 32)
    for x in s.array(5, 50_000).tolist():
        counts[x] += 1
    assert all(abs(c - 10_000) < 500 for c in counts), counts  # 5 sigma ≈ 450


def test_streams_are_separated_by_every_label() -> None:
    t = Transcript("randomized", 0, b"L", b"R")
    draws = {label: t.stream(*label).below(2**61) for label in
             [("sz", "python", 0, "point", M61), ("pre", "python", 0, "point", M61), ("sz", "torch", 0, "point", M61),
              ("sz", "python", 1, "point", M61), ("sz", "python", 0, "prime"), ("sz", "python", 0, "point", M61 - 2)]}
    assert len(set(draws.values())) == len(draws)
    assert Transcript("randomized", 1, b"L", b"R").stream("sz").below(2**61) != t.stream("sz").below(2**61)
    # parts are length-prefixed: moving bytes between parts changes the transcript
    assert Transcript("randomized", 0, b"LR", b"").stream().below(2**61) != t.stream().below(2**61)


# ---- the attack: points computed first, sides chosen after -------------------------------------


def _forge(base: Circuit, rhs: Circuit) -> Circuit:
    """A side that differs from ``rhs`` but vanishes against it at the trial points that the
    randomized method draws for the pair ``(base, rhs)``: for each trial ``t`` (prime ``p_t``, point
    ``(u_t, v_t)``) the difference ``a·x0 + b·x1`` has ``a ≡ v_t``, ``b ≡ −u_t (mod p_t)`` (CRT).
    Were ``forged`` and ``base`` one encoding, the method would see no difference at all."""
    from symverify.kernel.provers.bounds import structure_bounds
    from symverify.kernel.provers.randomized import plan_primes, random_prime, trials_needed

    for k in range(1, 8):
        tr = transcript(as_side(base), as_side(rhs), 0)
        primes, points = [], []
        for t in range(k):
            p = random_prime(tr.stream("sz", "python", t, "prime"), 1, 1 << 61)
            (u, v), = PythonEngine().points(tr.stream("sz", "python", t, "point", p), p, as_side(rhs), [], 1)[0][0]
            primes.append(p)
            points.append((u, v))
        a = b = 0
        modulus = 1
        for p, (u, v) in zip(primes, points):  # CRT, one prime at a time
            a += modulus * ((v - a) * pow(modulus, -1, p) % p)
            b += modulus * ((-u - b) * pow(modulus, -1, p) % p)
            modulus *= p
        forged = Circuit(1, 2, (Gate.lin(0, 1 + a, 1, 1 + b),), (2,))
        plan = plan_primes(structure_bounds(as_side(forged), as_side(rhs)))
        assert plan is not None and not plan.fixed and plan.bits == 61
        if trials_needed(plan.per_trial, Fraction(1, 2**100)) == k:
            for p, (u, v) in zip(primes, points):
                assert (a * u + b * v) % p == 0  # the difference vanishes at every precomputed point
            return forged
    raise AssertionError("no trial count fits")


def test_a_side_forged_for_precomputed_points_is_proved_only_if_its_encoding_collides(monkeypatch) -> None:
    """The attack of a non-injective encoding, in miniature: the forged side is falsely proved when
    it shares ``base``'s fingerprint (so this test can see the flaw), and refuted by the real encoding."""
    from symverify.kernel.provers import randomized

    rhs = Circuit(1, 2, (Gate.add(0, 1),), (2,))
    base = Circuit(1, 2, (Gate.lin(0, 2, 1, 3),), (2,))
    forged = _forge(base, rhs)
    assert forged != rhs and fingerprint(forged) != fingerprint(base)
    for method in ("randomized", "auto", "exact", "z3"):
        assert sv.verify(forged, rhs, method=method).refuted, method

    real = randomized.checked_fingerprint
    monkeypatch.setattr(randomized, "checked_fingerprint", lambda obj: real(base) if obj == forged else real(obj))
    assert sv.verify(forged, rhs, method="randomized").proved  # the false proof a collision would allow


def test_the_report_names_the_construction() -> None:
    c = Circuit(1, 1, (Gate.mul(0, 0),), (1,))
    report = sv.verify(c, c, method="randomized")
    assert report.proved and "SHAKE-256" in report.evidence["points_from"]


def test_a_kaleidoscope_side_is_fingerprinted_by_its_weights() -> None:
    from symverify.kaleidoscope import SparseMatrix, sparse_to_kaleidoscope

    k1 = sparse_to_kaleidoscope(SparseMatrix.from_dense([[1, 2], [0, 3]])).kaleidoscope
    k2 = sparse_to_kaleidoscope(SparseMatrix.from_dense([[1, 2], [0, 4]])).kaleidoscope
    assert fingerprint(k1) != fingerprint(k2) and decode(encode(k1)) == k1


def test_ops_are_part_of_the_circuit_encoding() -> None:
    a = Circuit(1, 2, (Gate(Op.MUL, (0, 1), ()),), (2,))
    b = Circuit(1, 2, (Gate(Op.LIN, (0, 1), (1, 1)),), (2,))
    assert encode(a) != encode(b)


# ---- the seed: public and reproducible by default, fresh on request ----------------------------


def test_the_default_seed_reproduces_the_points_and_a_fresh_seed_is_recorded() -> None:
    c = Circuit(1, 2, (Gate.mul(0, 1),), (2,))
    first, again = (sv.verify(c, c, method="randomized") for _ in range(2))
    assert first.evidence == again.evidence and first.seed == 0 and "seed 0" in str(first)
    fresh = sv.verify(c, c, method="randomized", seed=None)
    assert fresh.proved and f"seed {fresh.seed}" in str(fresh) and fresh.to_json()["seed"] == fresh.seed
    replay = sv.verify(c, c, method="randomized", seed=fresh.seed)
    assert replay.evidence == fresh.evidence


def test_the_cli_takes_a_fresh_seed_and_refuses_a_bad_one(tmp_path, capsys) -> None:
    from symverify.cli import main
    from symverify.ir.serialize import dump_file

    path = tmp_path / "c.json"
    dump_file(Circuit(1, 1, (Gate.mul(0, 0),), (1,)), str(path))
    assert main(["verify", str(path), str(path), "--method", "randomized", "--seed", "fresh", "--json"]) == 0
    import json

    assert json.loads(capsys.readouterr().out)["seed"] >= 0
    with pytest.raises(SystemExit) as e:
        main(["verify", str(path), str(path), "--seed", "one"])
    assert e.value.code == 3 and "expected an integer (digits 0-9, an optional sign) or 'fresh', found 'one'" in capsys.readouterr().err


# ---- the attack pairs of the old, terminated integer encoding, kept: never proved by any method ----


def _old_int(x: int) -> bytes:
    """The old encoding of an integer: ``b"i"`` + its big-endian bytes + ``b";"`` (terminated, not
    length-prefixed: the bytes may contain ``;i``)."""
    return b"i" + x.to_bytes(max(1, (x.bit_length() + 7) // 8), "big") + b";"


CHOICES = ((87779591, 3), (5, 121334019))  # 0x053B6907 = "\x05;i\x07", 0x073B6903 = "\x07;i\x03"


@pytest.mark.parametrize("seed", [0, None])
@pytest.mark.parametrize("method", ["randomized", "auto", "exact", "z3"])
def test_the_published_attack_pair_is_never_proved(method, seed) -> None:
    """``87779591·x0 + 3·x1`` vs ``5·x0 + 121334019·x1``: one old digest, different polynomials."""
    a = Circuit(1, 2, (Gate.lin(0, 87779591, 1, 3),), (2,))
    b = Circuit(1, 2, (Gate.lin(0, 5, 1, 121334019),), (2,))
    assert _old_int(87779591) + _old_int(3) == _old_int(5) + _old_int(121334019)  # the old collision
    report = sv.verify(a, b, method=method, seed=seed)
    assert report.refuted, report


def _birthday_side(mask: int, t: int) -> Circuit:
    """``Σ_k α_k·x_k + β_k·x_{k+1}`` (``t`` linear gates, then a sum): gate ``k`` takes its
    ``(α_k, β_k)`` from :data:`CHOICES` by bit ``k`` of ``mask``."""
    gates = [Gate.lin(k, a, k + 1, b) for k, (a, b) in enumerate(CHOICES[(mask >> k) & 1] for k in range(t))]
    total = t + 1
    for k in range(1, t):
        gates.append(Gate.add(total if k > 1 else t + 1, t + 1 + k))
        total = t + 1 + len(gates) - 1
    return Circuit(1, t + 1, tuple(gates), (total, *range(1, t + 1)))


def _coefficients(mask: int, t: int) -> tuple[int, ...]:
    c = [0] * (t + 1)
    for k in range(t):
        a, b = CHOICES[(mask >> k) & 1]
        c[k] += a
        c[k + 1] += b
    return tuple(c)


def test_a_birthday_collision_among_old_equal_sides_is_never_proved() -> None:
    """A generalized-birthday instance in miniature: among the ``2^10`` sides whose coefficient
    lists all had one old encoding, two different polynomials that agree at a point fixed in
    advance modulo a small prime ``q`` (pigeonhole: ``2^10 > q``). With points drawn from the old
    digest, such a pair (at full size, mod ``2^61 − 1``) was a false proof; now every method refutes it."""
    t, q = 10, 1009
    point = tuple(range(3, 3 + t + 1))
    old = {b"".join(_old_int(v) for pair in (CHOICES[(m >> k) & 1] for k in range(t)) for v in pair) for m in range(1 << t)}
    assert len(old) == 1
    seen: dict[int, tuple[int, tuple[int, ...]]] = {}
    pair = None
    for mask in range(1 << t):
        coeffs = _coefficients(mask, t)
        key = sum(c * x for c, x in zip(coeffs, point)) % q
        if key in seen and seen[key][1] != coeffs:
            pair = (seen[key][0], mask)
            break
        seen.setdefault(key, (mask, coeffs))
    assert pair is not None
    a, b = (_birthday_side(m, t) for m in pair)
    assert fingerprint(a) != fingerprint(b)
    for method in ("randomized", "auto", "exact", "z3"):
        assert sv.verify(a, b, method=method).refuted, method


# ---- a kaleidoscope's diagonals, encoded run by run --------------------------------------------

int64_edges = st.sampled_from([0, 1, -1, 2**63 - 1, -(2**63), 2**63, -(2**63) - 1])
run_values = st.one_of(st.integers(-3, 3), int64_edges, rationals.map(lambda q: int(q) if q.denominator == 1 else q), symbols())
runs = st.lists(st.one_of(st.lists(st.one_of(st.integers(-3, 3), int64_edges), max_size=6),
                          st.lists(run_values, max_size=6)).map(tuple), max_size=6)


@settings(max_examples=300, deadline=None)
@given(runs, st.sampled_from([0, 1, 3, fp._SHORT_RUN]))
def test_scalars_written_run_by_run_are_the_bytes_of_the_flat_list(parts: list[tuple[Scalar, ...]], short: int) -> None:
    """The kaleidoscope's diagonals are encoded run by run (C-level packing of the plain-int runs;
    short runs as the flat list); the bytes are exactly those of the flat list's scalars production,
    form (A or V) included, whichever way they are written."""
    flat = [x for run in parts for x in run]
    saved = fp._SHORT_RUN
    fp._SHORT_RUN = short
    try:
        assert b"".join(fp._scalar_runs(parts)) == fp._scalars(flat)
        known = [bool(run) and all(type(x) is int for x in run) for run in parts]  # as a factor's all_int says
        assert b"".join(fp._scalar_runs(parts, known)) == fp._scalars(flat)
    finally:
        fp._SHORT_RUN = saved


def test_a_kaleidoscope_digest_is_unchanged_by_the_run_by_run_encoding() -> None:
    """A kaleidoscope with int, rational and wide diagonals is encoded with its flat list's scalars
    production: the wide (V) form when one entry is past int64, the int64 (A) form otherwise."""
    def kaleidoscope(wide: Scalar) -> Kaleidoscope:
        f = [ButterflyFactor(4, 2, (1, 2), (0, Fraction(1, 3)), (wide, 0), (1, 1)), ButterflyFactor.identity(4, 1),
             ButterflyFactor.identity(4, 1), ButterflyFactor(4, 2, (1, 1), (0, 0), (0, 0), (-(2**63), 5))]
        return Kaleidoscope(3, 4, (BBStar(4, tuple(f)),))

    for wide, form in ((2**63, b"V"), (7, b"A")):
        k = kaleidoscope(wide)
        flat = [x for g in k.groups for f in g.factors for d in (f.d1, f.d2, f.d3, f.d4) for x in d]
        assert fp._scalars(flat)[:1] == form and encode(k).endswith(fp._scalars(flat)) and decode(encode(k)) == k


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.integers(-1030, 1030), scalars), max_size=12))
def test_wide_scalars_read_small_ints_from_a_table_with_the_same_bytes(values: list[Scalar]) -> None:
    """The wide (V) form reads the encoding of small ints from a table: byte for byte each value's
    own production, at the table's edges and past them, next to rationals, big ints and symbols."""
    assert fp._scalar_bytes(values) == b"".join(fp._scalar(v) for v in values)
    assert fp._scalars(values)[9:] == fp._scalar_bytes(values) or fp._scalars(values)[:1] == b"A"


def test_the_decoder_lives_with_the_tests_not_in_the_kernel() -> None:
    """No method reads the decoder (its existence proves the encoding injective), so the trusted
    kernel does not hold it: ``tests/fingerprint_decode.py`` does, and inverts ``encode``."""
    assert not hasattr(fp, "decode") and not hasattr(fp, "_Reader") and "decode" not in fp.__all__
    c = Circuit(1, 2, (Gate.lin(0, Fraction(-3, 7), 1, 1 << 70),), (2,))
    assert decode(encode(c)) == c

"""Integers of any size: exact JSON text both ways, abbreviated text for people, safe messages."""

import json
from fractions import Fraction

import pytest
from cases import int_digit_limit
from hypothesis import given
from hypothesis import strategies as st

import symverify as sv
from symverify import Circuit, Gate, Grid, Layer, Model, SerializationError, sym
from symverify.cli import main
from symverify.errors import IRError, LimitError
from symverify.ir import limits
from symverify.ir.bigint import (
    digit_count,
    int_to_str,
    parse_rational,
    safe_repr,
    show_int,
    show_rational,
    str_to_int,
)
from symverify.ir.serialize import dump_file, dumps, load_file, loads, to_json
from symverify.kernel.ir.certificate import Boundary, Cell, Certificate
from symverify.kernel.ir.scalar import scalar_text, show_scalar
from symverify.kernel.provers.outcome import Counterexample, jsonable

BIG = 10**5000 + 123456789  # 5001 digits: past Python's default 4300-digit int/str limit
HUGE_FRACTION = Fraction(-(7**6000), 3**7000 + 2)


def _reference(x):
    with int_digit_limit(0):
        return str(x)


@pytest.mark.parametrize("digits", [1, 479, 480, 481, 639, 640, 641, 959, 960, 4299, 4300, 4301, 12345, 100_000])
def test_int_text_is_exact_at_every_size(digits):
    for x in (10 ** (digits - 1), 10**digits - 1, -(10 ** (digits - 1)) - 7, (10**digits - 1) // 7):
        text = int_to_str(x)
        assert text == _reference(x) and digit_count(x) == len(text.lstrip("-"))
        assert str_to_int(text) == x


@given(st.integers(min_value=-(10**3000), max_value=10**3000), st.integers(1, 4000))
def test_int_text_round_trips_under_the_smallest_python_limit(x, k):
    x = x * 10**k + 1
    with int_digit_limit(640):
        assert str_to_int(int_to_str(x)) == x
        assert digit_count(x) == len(_reference(x).lstrip("-"))


def test_int_text_refuses_more_than_max_int_digits():
    with pytest.raises(LimitError, match=r"integer of 100001 digits is more than symverify.ir.limits.MAX_INT_DIGITS = 100000"):
        int_to_str(10**100_000)
    with pytest.raises(LimitError, match="MAX_INT_DIGITS"):
        str_to_int("1" * 100_001)
    assert int_to_str(10**100_000, bounded=False) == _reference(10**100_000)


@pytest.mark.parametrize(
    "text, value",
    [("3", 3), ("-1/2", Fraction(-1, 2)), (" 6 / 4 ", Fraction(3, 2)), ("+8/4", 2), ("0/5", 0), ("1" * 5000, None)],
)
def test_parse_rational(text, value):
    if value is None:  # the long one: compare with the reference conversion
        with int_digit_limit(0):
            value = int(text)
    assert parse_rational(text) == value
    assert type(parse_rational(text)) is type(value)


@pytest.mark.parametrize(
    "text, match",
    [
        ("1/0", r"the denominator of '1/0' is 0"),
        ("0.5", r"expected a rational such as '3' or '-1/2', found '0.5'"),
        ("١٢", r"expected a rational"),  # Arabic-Indic digits are not ASCII digits
        ("1_000", r"expected a rational"),
        ("1e5", r"expected a rational"),
        ("", r"expected a rational"),
        ("--1", r"expected a rational"),
    ],
)
def test_parse_rational_refuses(text, match):
    with pytest.raises(IRError, match=match):
        parse_rational(text, "w")


def test_show_int_abbreviates_only_large_values():
    assert show_int(BIG) == "<5001-digit integer ≡ 123456789 mod 10^9>"
    assert show_int(-BIG) == "-<5001-digit integer ≡ 123456789 mod 10^9>"
    assert show_int(10**100 - 1) == "9" * 100  # SHOW_DIGITS = 100 digits still in full
    assert show_int(10**100) == "<101-digit integer ≡ 0 mod 10^9>"
    assert show_rational(Fraction(1, 3**10000)).startswith("1/<4772-digit integer ≡ ")
    assert show_rational(Fraction(-5, 7)) == "-5/7"


@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(-5, 5), st.integers(1, 3),
                          st.integers(1, 4)), max_size=4), st.integers(-3, 3))
def test_show_scalar_matches_str_for_small_values(terms, const):
    x = const
    for name, num, den, e in terms:
        x = x + Fraction(num, den) * sym(name) ** e
    assert show_scalar(x) == str(x) == scalar_text(x)


def test_show_scalar_of_a_huge_symbolic_coefficient():
    x = BIG * sym("a") - Fraction(1, 3)
    assert show_scalar(x) == "<5001-digit integer ≡ 123456789 mod 10^9>*a - 1/3"
    assert scalar_text(x) == _reference(BIG) + "*a - 1/3"


def test_safe_repr_never_fails():
    class Bad:
        def __repr__(self):
            raise RuntimeError("no")

    assert "<5001-digit integer" in safe_repr({"n": BIG})
    assert safe_repr(Bad()).startswith("<")
    assert len(safe_repr("x" * 10_000)) <= 80
    deep: list = []
    for _ in range(10_000):
        deep = [deep]
    assert safe_repr(deep) == "[[[[...]]]]"


# ---- printing values with huge integers ---------------------------------------------------------
def test_circuit_with_a_huge_constant_prints_and_round_trips(tmp_path):
    c = Circuit(1, 1, (Gate.const(BIG), Gate.lin(0, HUGE_FRACTION, 1, BIG * sym("a"))), (2,), "big")
    text = str(c)
    assert "const <5001-digit integer ≡ 123456789 mod 10^9>" in text
    assert "*a)" in text and "/<" in text
    for lim in (640, 4300, 0):
        with int_digit_limit(lim):
            dump_file(c, tmp_path / "c.json")
            back = load_file(tmp_path / "c.json")
        assert back == c and back.gates[1].coeffs == c.gates[1].coeffs
    doc = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    assert doc["gates"][0][2] == [_reference(BIG)]  # plain decimal text, the same format as small values
    assert doc["gates"][1][2][0] == f"{_reference(HUGE_FRACTION.numerator)}/{_reference(HUGE_FRACTION.denominator)}"


def test_small_values_keep_their_format():
    c = Circuit(1, 2, (Gate.lin(0, "-1/2", 1, 3), Gate.const(sym("a") * 2 - 1)), (2,))
    doc = to_json(c)
    assert doc["gates"][0][2] == ["-1/2", "3"]
    assert doc["gates"][1][2] == [{"sym": [["-1", {}], ["2", {"a": 1}]]}]


def test_model_and_certificate_with_huge_values_round_trip():
    g = Grid.zeros(2, 1).paint(0, 1, 0, 1, BIG).paint(1, 2, 0, 1, HUGE_FRACTION)
    m = Model(2, 1, 2, 1, (Layer(Grid.full(1, 1, -BIG), g, g, Grid.full(2, 1, BIG * sym("w")), "cyclic"),), "m")
    with int_digit_limit(640):
        assert loads(dumps(m)) == m
    cert = Certificate((Boundary(0, (Cell(0, 0, ((0, BIG), (1, HUGE_FRACTION)), -BIG),)), Boundary(1, (Cell(0, 0, ((2, sym("a") * BIG),)),))))
    with int_digit_limit(640):
        back = loads(dumps(cert))
    assert back == cert


def test_symbolic_certificate_coefficients_round_trip():
    # str(Sym) used to be written, which the loader could not read back
    cert = Certificate((Boundary(0, (Cell(0, 0, ((0, sym("a") * 2 - Fraction(1, 3)),), sym("b")),)),))
    assert loads(dumps(cert)) == cert


def test_writer_refuses_values_it_could_not_read_back():
    c = Circuit(1, 1, (Gate.const(10**100_000),), (1,))
    with pytest.raises(SerializationError, match=r"cannot write gate 0 coefficient exactly: .*MAX_INT_DIGITS = 100000"):
        dumps(c)
    assert limits.MAX_INT_DIGITS == 100_000


def test_counterexample_prints_and_serialises_huge_values():
    cex = Counterexample(((BIG, Fraction(1, 3)),), (("a", -BIG),), (0, 0), HUGE_FRACTION, BIG + 1)
    text = str(cex)
    assert "u = [<5001-digit integer ≡ 123456789 mod 10^9> 1/3] with a=-<5001-digit integer" in text
    assert "(lhs) vs <5001-digit integer ≡ 123456790 mod 10^9> (rhs)" in text
    with int_digit_limit(640):
        doc = json.loads(json.dumps(cex.to_json()))
    assert doc["inputs"][0][0] == _reference(BIG) and doc["params"]["a"] == "-" + _reference(BIG)
    assert doc["lhs_value"] == f"{_reference(HUGE_FRACTION.numerator)}/{_reference(HUGE_FRACTION.denominator)}"


def test_jsonable_keeps_huge_values_exact():
    with int_digit_limit(640):
        out = json.loads(json.dumps(jsonable({"x": BIG, "q": HUGE_FRACTION, "s": BIG * sym("a"), "small": 7, "set": {3, 1}})))
    assert out["x"] == _reference(BIG) and out["small"] == 7 and out["set"] == [1, 3]
    assert out["s"] == _reference(BIG) + "*a"


# ---- the command line on values past Python's int/str limit ------------------------------------
@pytest.fixture(scope="module")
def big_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("big")
    lhs = Circuit(1, 1, (Gate.const(BIG), Gate.mul(0, 1)), (2,), "big")
    other = Circuit(1, 1, (Gate.const(BIG + 1), Gate.mul(0, 1)), (2,), "big_plus_one")
    comp = sv.compile(lhs, method="dense")
    paths = {"lhs": d / "lhs.json", "other": d / "other.json", "model": d / "model.json", "cert": d / "cert.json"}
    for key, obj in (("lhs", lhs), ("other", other), ("model", comp.model), ("cert", comp.certificate)):
        dump_file(obj, paths[key])
    return {k: str(v) for k, v in paths.items()}


@pytest.mark.parametrize("method", ["auto", "exact", "compositional", "randomized"])
@pytest.mark.parametrize("circuit, code", [("lhs", 0), ("other", 1)])
def test_cli_verify_with_huge_values(big_files, capsys, method, circuit, code):
    cert = ["--certificate", big_files["cert"]] if method in ("auto", "compositional") else []  # only they read one
    argv = ["verify", big_files[circuit], big_files["model"], *cert, "--method", method]
    assert main(argv) == code
    out = capsys.readouterr()
    assert out.err == ""
    if code == 1:  # big + 1 against the model of big: refuted, with a printable counterexample at some u
        assert "counterexample u = [" in out.out and " is <5001-digit integer ≡ " in out.out
    assert main([*argv, "--json"]) == code
    report = json.loads(capsys.readouterr().out)
    if code == 1:
        cex = report["counterexample"]
        u = Fraction(cex["inputs"][0][0])
        assert cex["lhs_value"] == scalar_text((BIG + 1) * u) and cex["rhs_value"] == scalar_text(BIG * u)


def test_cli_info_and_compile_with_huge_values(big_files, capsys, tmp_path):
    assert main(["info", big_files["lhs"]]) == 0
    assert main(["compile", big_files["lhs"], "-o", str(tmp_path / "m.json"), "--certificate", str(tmp_path / "c.json")]) == 0
    assert load_file(tmp_path / "m.json") == sv.compile(load_file(big_files["lhs"])).model
    assert capsys.readouterr().err == ""

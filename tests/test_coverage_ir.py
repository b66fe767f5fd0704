"""symverify.ir (outside the kernel): digit and hexadecimal parsing limits, reprs that fail,
matrix and sympy builders with wrong sizes or unevaluated constants, files that are not what
they claim, duplicate JSON keys, huge exponents, the missing-field check and the wrapping of
construction errors while loading, and traced wires (scalar subtraction, wires of two traces).

Each test names the function it is for and why its assertion bites; where a circuit is built the
oracle is ``verify(..., method="exact")`` against the circuit written out by hand.
"""

import json
import stat

import pytest

import symverify as sv
from symverify.errors import IRError, LimitError, SerializationError
from symverify.ir import bigint, files, jsonfields, limits, serialize
from symverify.ir.build import CircuitBuilder, from_matrix, from_sympy
from symverify.kernel.ir.circuit import Circuit, Gate
from symverify.kernel.ir.scalar import sym


@pytest.mark.parametrize("text", ["12a", "-", "", "+3", "١٢"])
def test_str_to_int_needs_ascii_digits(text):
    """bigint.str_to_int: only ASCII digits after an optional '-'."""
    with pytest.raises(IRError, match="n: expected decimal digits, found"):
        bigint.str_to_int(text, "n")


def test_hexadecimal_integers_are_bounded():
    """bigint._parse_part: a hexadecimal integer longer than the decimal digit limit allows is a
    LimitError, before it is converted."""
    big = "0x" + "f" * int(limits.MAX_INT_DIGITS * 3.33 / 4 + 8)
    with pytest.raises(LimitError, match=r"a hexadecimal integer of \d+ digits is more than"):
        bigint.parse_rational(big, "c")
    assert bigint.parse_rational("0xff", "c") == 255


def test_safe_repr_of_an_object_whose_repr_fails():
    """bigint.safe_repr: an error message never fails, even where reprlib's own handler raises
    (reprlib picks the handler by type name: a class named ``list`` whose len fails reaches its list
    handler, which does not catch the error)."""
    class list:  # noqa: N801 - named like the builtin on purpose
        def __len__(self):
            raise RuntimeError("no length")

    assert bigint.safe_repr(list()) == "<list>"
    assert bigint.safe_repr([1, 2]) == "[1, 2]"


def test_from_matrix_refuses_a_row_of_the_wrong_length():
    """build.from_matrix: every row has n·d entries."""
    with pytest.raises(IRError, match=r"matrix row 1: expected n·d = 2 entries, found 3"):
        from_matrix([[1, 0], [1, 2, 3]], n=1, d=2)


def test_from_sympy_refuses_the_wrong_number_of_inputs():
    """build.from_sympy: n·d input symbols."""
    import sympy

    x, y = sympy.symbols("x y")
    with pytest.raises(IRError, match=r"from_sympy: expected n·d = 2 input symbols, found 1"):
        from_sympy([x * y], [x], n=1, d=2)


def test_from_sympy_folds_an_unevaluated_constant_sum():
    """build._combine: a sum or product of numbers only (sympy left unevaluated) is the folded
    constant, not an empty tree: 2 + 3 and 2·3 as constant outputs, then times x."""
    import sympy

    x = sympy.Symbol("x")
    c = from_sympy([sympy.Add(2, 3, evaluate=False), sympy.Mul(sympy.Mul(2, 3, evaluate=False), x, evaluate=False)],
                   [x, sympy.Symbol("y")], n=1, d=2)
    want = Circuit(1, 2, (Gate.const(5), Gate.scale(0, 6)), (2, 3))
    assert sv.verify(c, want, method="exact").proved
    assert not sv.verify(c, Circuit(1, 2, (Gate.const(6), Gate.scale(0, 6)), (2, 3)), method="exact").proved


def test_file_kinds_name_what_is_not_a_regular_file():
    """files._kind: a mode of no listed kind (a symbolic link's, which fstat never returns) is 'not
    a regular file'."""
    assert files._kind(stat.S_IFLNK) == "not a regular file"
    assert files._kind(stat.S_IFDIR) == "a directory"


def test_a_file_longer_than_it_says_is_cut_at_the_limit(monkeypatch):
    """files.read_file: /proc files report size 0 and then hold more: more than the limit is refused
    while reading, not after reading everything."""
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", 16)
    with pytest.raises(SerializationError, match=r"/proc/self/status: more than .*MAX_FILE_BYTES = 16 bytes \(the file grew"):
        files.read_file("/proc/self/status")


def test_a_read_error_is_a_serialization_error():
    """files.read_file: an OSError while reading (here EIO from /proc/self/mem at offset 0)."""
    with pytest.raises(SerializationError, match=r"cannot read /proc/self/mem: "):
        files.read_file("/proc/self/mem")


def test_duplicate_keys_are_named():
    """jsonfields._pairs (the duplicate search): the repeated key is named."""
    with pytest.raises(SerializationError, match="duplicate key 'n' in a JSON object"):
        serialize.loads('{"format": "symverify.circuit", "n": 1, "n": 2}')


def test_int_field_names_a_missing_field():
    """jsonfields._int_field: a missing size field is named (its callers check the keys first; the
    helper does not rely on it)."""
    with pytest.raises(SerializationError, match="document: missing field 'n'"):
        jsonfields._int_field({}, "n", "document", 1)


def test_a_symbolic_exponent_beyond_json_ints_is_refused():
    """jsonfields.scalar_to_json: a Sym power whose exponent has more than 63 bits."""
    big = sym("a") ** (2**64)
    with pytest.raises(SerializationError, match=r"c: the exponent of a has 65 bits, beyond 2\^63 − 1"):
        jsonfields.scalar_to_json(big, "c")
    assert jsonfields.scalar_to_json(sym("a") ** 3, "c") == {"sym": [["1", {"a": 3}]]}


def test_construction_errors_while_loading_are_serialization_errors(monkeypatch):
    """serialize.from_json: an IRError from building the object (every case the document checks
    miss) still reaches the caller as a SerializationError naming the format."""
    doc = json.dumps({"format": "symverify.circuit", "version": 1, "n": 1, "d": 1, "gates": [], "outputs": [0]})
    assert serialize.loads(doc).outputs == (0,)

    def refuse(*a, **k):
        raise IRError("circuit outputs: refused")

    monkeypatch.setattr(serialize, "Circuit", refuse)
    with pytest.raises(SerializationError, match=r"document is well-formed JSON but not a valid symverify\.circuit: circuit outputs: refused"):
        serialize.loads(doc)


def test_recorder_refuses_a_size_that_is_not_positive():
    """trace.Recorder.__init__."""
    for n, d in ((0, 1), (1, -1), (1.0, 1)):
        with pytest.raises(IRError, match="circuit size: expected positive ints n, d"):
            CircuitBuilder(n, d)  # type: ignore[arg-type]


def test_subtracting_zero_and_subtracting_from_a_scalar():
    """Wire.__sub__ with 0 (the wire itself, no gate) and Wire.__rsub__ (3 − x)."""
    c = Circuit.trace(lambda u: [u[0][0] - 0, 3 - u[0][1]], n=1, d=2)
    assert c.outputs[0] == 0
    want = Circuit(1, 2, (Gate.const(3), Gate.lin(2, 1, 1, -1)), (0, 3))
    assert sv.verify(c, want, method="exact").proved
    wrong = Circuit(1, 2, (Gate.const(3), Gate.lin(1, 1, 2, -1)), (0, 3))  # x − 3
    assert sv.verify(c, wrong, method="exact").refuted


def test_wires_of_two_traces_do_not_mix():
    """Recorder.lift and Wire.__mul__: a wire kept from one trace used in another."""
    kept = []
    Circuit.trace(lambda u: kept.append(u[0][0]) or [u[0][0]], n=1, d=1)
    with pytest.raises(IRError, match="cannot combine wires from two different traces"):
        Circuit.trace(lambda u: [u[0][0] + kept[0]], n=1, d=1)
    with pytest.raises(IRError, match="cannot combine wires from two different traces"):
        Circuit.trace(lambda u: [u[0][0] * kept[0]], n=1, d=1)

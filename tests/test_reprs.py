"""Objects print as short summaries (signature, counts, verdict); full dumps only on request."""

import symverify as sv
from symverify.kaleidoscope import linear_circuit_to_kaleidoscope, permutation_to_kaleidoscope
from symverify.library import determinant, walsh_hadamard


def test_reprs_are_short_and_informative():
    c = determinant(3)
    out = sv.compile(c)
    report = sv.verify(c, out)
    f = linear_circuit_to_kaleidoscope(walsh_hadamard(8), mode="live")
    cases = [
        (out, ["Compiled('kaleidoscope'", f"L={len(out.model.layers)}", f"{len(out.certificate.boundaries) - 1} certificate stages",
               "within bounds"]),
        (out.model, ["Model('determinant_3_kaleidoscope'", "N=3", "d'=3", "modes=cyclic"]),
        (out.certificate, [f"Certificate({len(out.certificate.boundaries) - 1} stages", f"{len(out.certificate.boundaries)} boundaries"]),
        (report, ["Report(proved", "compositional", f"{len(out.certificate.boundaries) - 1}/{len(out.certificate.boundaries) - 1}"]),
        (f, ["Factorization(", "Kaleidoscope(n=8"]),
        (f.kaleidoscope, ["Kaleidoscope(n=8", "BB* groups"]),
        (permutation_to_kaleidoscope([2, 0, 3, 1]).kaleidoscope, ["width=1 BB* groups, 4 factors"]),
    ]
    for obj, parts in cases:
        text = repr(obj)
        assert len(text) < 500, (type(obj).__name__, len(text))
        for part in parts:
            assert part in text, (part, text)
    assert len(sv.ir.serialize.dumps(out.model)) > 10_000  # the full form is still there on request


HUGE = 10**5000 + 123456789  # Python refuses str() of an int of more than 4300 digits


def _huge_objects():
    from fractions import Fraction

    from symverify.kernel.ir.baseconv import Layer, Mode, Model
    from symverify.kernel.ir.butterfly import ButterflyFactor
    from symverify.kernel.ir.certificate import Cell
    from symverify.kernel.ir.circuit import Circuit, Gate, Op
    from symverify.kernel.ir.grid import Grid
    from symverify.kernel.ir.layered import LinearStage
    from symverify.kernel.kaleidoscope.matrix import SparseMatrix
    from symverify.library import retnet_weights

    big = Grid.from_rows([[HUGE]])
    layer = Layer(big, big, Grid.from_rows([[1]]), Grid.from_rows([[Fraction(HUGE, 7)]]), Mode.CAUSAL)
    gate = Gate(Op.LIN, (0, 0), (HUGE, -HUGE))
    circuit = Circuit(1, 1, (gate,), (1,), "huge")
    cex = sv.verify(circuit, Model(1, 1, 1, 1, (layer,))).counterexample
    return {
        "Grid": big, "Layer": layer, "Gate": gate, "Counterexample": cex,
        "ButterflyFactor": ButterflyFactor(2, 1, (HUGE,), (Fraction(1, HUGE),), (1,), (0,)),
        "SparseMatrix": SparseMatrix(1, 1, ((0, 0, HUGE),)),
        "Cell": Cell(0, 0, ((0, HUGE),), -HUGE),
        "LinearStage": LinearStage(0, (0,), (1,), (((0, HUGE),),), (HUGE,)),
        "RetNetWeights": retnet_weights(1, gamma=HUGE),
    }


def test_reprs_never_fail_on_huge_integers():
    objs = _huge_objects()
    assert objs["Counterexample"] is not None
    for name, obj in objs.items():
        for show in (repr, str):
            text = show(obj)
            assert text.startswith(name) or show is str, (name, text[:80])
            assert "-digit integer ≡ " in text and len(text) < 2000, (name, show.__name__, text[:300])


def test_field_repr_is_the_generated_repr_for_ordinary_values():
    from dataclasses import dataclass, field
    from fractions import Fraction

    from symverify.ir.bigint import field_repr
    from symverify.kernel.ir.circuit import Gate, Op
    from symverify.kernel.ir.grid import Grid
    from symverify.kernel.ir.scalar import sym

    @dataclass(frozen=True)
    class Probe:
        a: object
        b: object = None
        hidden: object = field(default=0, repr=False)

    values = [(1, -2, Fraction(-1, 3)), [list(range(40))], {"k": (1, 2), "a": [HUGE % 97]}, "x" * 300, sym("w[0]"), True, None,
              ((0, 1, 0, 1, 3), (1, 2, 1, 2, 1)), 2**200, Fraction(2**300, 3)]
    for v in values:
        generated = repr(Probe(v, (v,), 9))  # the dataclass's own repr (qualified name aside)
        assert field_repr(Probe(v, (v,), 9)) == f"{Probe.__qualname__}(a={v!r}, b={(v,)!r})"
        assert generated.endswith(f"Probe(a={v!r}, b={(v,)!r})")
    assert repr(Gate(Op.LIN, (0, 1), (5, Fraction(1, 2)))) == "Gate(op=<Op.LIN: 'lin'>, args=(0, 1), coeffs=(5, Fraction(1, 2)))"
    assert repr(Grid.from_rows([[3, 0], [0, 1]])) == "Grid(rows=2, cols=2, fill=0, rects=((0, 1, 0, 1, 3), (1, 2, 1, 2, 1)))"


def test_butterfly_and_sparse_reprs_are_short():
    from symverify.kernel.ir.butterfly import ButterflyFactor
    from symverify.kernel.kaleidoscope.matrix import SparseMatrix

    f = ButterflyFactor(1024, 256, *[tuple(range(512))] * 4)
    text = repr(f)
    assert text.startswith("ButterflyFactor(size=1024, stride=256, d1=(0, 1, 2") and len(text) < 600
    m = SparseMatrix.from_dense([[0, 2], [1, 0]])
    assert repr(m) == "SparseMatrix(2×2, nnz=2, entries=((0, 1, 2), (1, 0, 1)))"


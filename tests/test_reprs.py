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

"""A new user's first hour, following README.md: tracing a circuit, writing a model by hand with exact
and symbolic weights, evaluating it, running their own proof scripts with ``symverify prove --dir``.
Each test pins one place where a documented call did not work as written or an error did not say
what was expected, what was found and where."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest

import symverify as sv
from symverify import Grid, Layer, Model
from symverify.cli import _time_cell, main
from symverify.errors import IRError, ShapeError

H = Grid.zeros(2, 2).paint(0, 1, 0, 2, 1)  # the impulse e_0: h ⊛ u = u


# ---- Circuit.trace: u[i, j] as the docs write it, and indices outside n×d ---------------------------------------


def test_trace_takes_u_i_j_as_the_docs_write_it():
    a = sv.Circuit.trace(lambda u: [u[0, 1] * u[1, 0] + u[-1, -1]], n=2, d=2)
    b = sv.Circuit.trace(lambda u: [u[0][1] * u[1][0] + u[1][1]], n=2, d=2)
    assert a == b
    assert sv.evaluate(a, [[1, 2], [3, 4]])[0][0] == 2 * 3 + 4


@pytest.mark.parametrize("fn, match", [
    (lambda u: [u[2][0]], r"row index 2 is outside u ∈ F\^\{n×d\} with n=2, d=3 \(rows 0\.\.1\)"),
    (lambda u: [u[0][3]], r"column index 3 is outside u ∈ F\^\{n×d\} with n=2, d=3 \(columns 0\.\.2\)"),
    (lambda u: [u[1, 5]], r"column index 5 is outside"),
    (lambda u: [u[-3][0]], r"row index -3 is outside"),
    (lambda u: [u[0, 0, 0]], r"expected u\[i, j\] with two int indices, found u\[0, 0, 0\]"),
])
def test_trace_refuses_an_index_outside_the_input_with_the_shape(fn, match):
    with pytest.raises(IRError, match=match):
        sv.Circuit.trace(fn, n=2, d=3)


def test_traced_rows_still_behave_as_lists():
    c = sv.Circuit.trace(lambda u: [sum(u[0]), *u[1][:1], len(u) * u[1][-1]], n=2, d=2)
    assert sv.evaluate(c, [[1, 2], [3, 4]]) == [[3, 3], [8, 0]]


# ---- hand-written models --------------------------------------------------------------------------------------------


def test_layer_make_names_the_parameter_of_the_wrong_shape():
    with pytest.raises(ShapeError, match=r"layer W: expected shape 2×2 \(d'×d', from inner_n=3, inner_d=2\), found 3×3"):
        Layer.make(3, 2, W=Grid.identity(3))
    with pytest.raises(ShapeError, match=r"layer h: expected shape 3×2 \(N'×d', from inner_n=3, inner_d=2\), found 2×2"):
        Layer.make(3, 2, W=Grid.identity(2), h=H)
    assert Layer.make(2, 2, W=Grid.identity(2), h=H, mode="cyclic").mode is sv.Mode.CYCLIC


def test_grid_from_rows_takes_an_integer_array_and_points_a_float_array_to_from_array():
    assert Grid.from_rows(np.array([[1, 0], [0, -2]])) == Grid.from_rows([[1, 0], [0, -2]])
    assert Grid.from_rows(np.zeros((0, 0), dtype=int)).rows == 0
    with pytest.raises(IRError, match=r"Grid.from_rows: found a float array \(dtype float64\).*Grid.from_array"):
        Grid.from_rows(np.eye(2))


def test_a_name_given_as_a_weight_string_says_to_use_sym():
    with pytest.raises(IRError, match=r"found 'a'; a symbolic value is sym\('a'\), not a string"):
        Grid.zeros(2, 2).paint(0, 1, 0, 1, "a")
    with pytest.raises(IRError, match=r"found '1\.5'$"):  # not a name: no hint
        Grid.zeros(2, 2).paint(0, 1, 0, 1, "1.5")


def test_the_readme_model_and_its_symbolic_weight():
    square = sv.Circuit.trace(lambda u: [x * x for row in u for x in row], n=2, d=2)
    model = Model(2, 2, 2, 2, [Layer.make(2, 2, W=Grid.identity(2), h=H)])
    assert sv.verify(square, model).proved
    scaled = Model(2, 2, 2, 2, [Layer.make(2, 2, W=Grid.identity(2).paint(0, 1, 0, 1, sv.sym("a")), h=H)])
    with pytest.raises(IRError, match=r"parameter 'a', but no value was given for it \(symbolic weights need values: params=\{'a': \.\.\.\}\)"):
        sv.evaluate(scaled, [[1, 2], [3, 4]])
    assert sv.evaluate(scaled, [[1, 2], [3, 4]], params={"a": 2}) == [[2, 4], [18, 16]]  # channel 0 scaled
    c = sv.Circuit.trace(lambda u: [sv.sym("a") * u[0][0]], n=1, d=1)
    with pytest.raises(IRError, match=r"a weight or coefficient uses the parameter 'a', but no value was given for it"):
        sv.evaluate(c, [[1]])


def test_evaluate_names_the_expected_input_shape():
    model = Model(2, 2, 2, 2, [Layer.make(2, 2, W=Grid.identity(2), h=H)])
    with pytest.raises(ShapeError, match=r"model input: expected shape 2×2 \(n rows of d values\), found 1×3"):
        sv.evaluate(model, [[1, 2, 3]])


# ---- symverify prove --dir: the scripts' own text is printed as it is ------------------------------------------------

BRACKETS = '''
from symverify.scripts.protocol import Instance, ProofResult, script_main

TITLE = "Products [v1|v2] of a [b] block"


def run(quick=False):
    r = ProofResult("brackets", TITLE)
    r.instances.append(Instance.computed("multiply [v2|v3|v1] -> [v1*v2|v3|0]", True, "a test's comparison", "exact",
                                         resources={"layers": 1}, bounds={"layers": 2}))
    return r


if __name__ == "__main__":
    raise SystemExit(script_main(run))
'''

CRASHES = '''
from symverify.scripts.protocol import script_main

TITLE = "Crashes [bold]"


def run(quick=False):
    raise ValueError("bad [/x] input [red]")


if __name__ == "__main__":
    raise SystemExit(script_main(run))
'''


@pytest.fixture
def user_dir(tmp_path):
    (tmp_path / "brackets.py").write_text(textwrap.dedent(BRACKETS), encoding="utf-8")
    (tmp_path / "crashes.py").write_text(textwrap.dedent(CRASHES), encoding="utf-8")
    return tmp_path


def test_prove_prints_brackets_in_names_titles_and_errors_literally(user_dir, capsys):
    code = main(["prove", "--dir", str(user_dir), "--quick", "--details", "--wide", "-j", "1"])
    out = capsys.readouterr().out
    assert code == 1  # a crashed script is a failed row, not a usage error (3) from the printer
    assert "multiply [v2|v3|v1] -> [v1*v2|v3|0]" in out
    assert "Products [v1|v2] of a [b] block" in out
    assert "ValueError: bad [/x] input [red]" in out
    assert "internal error" not in out


def test_the_time_column_agrees_with_the_per_script_line():
    assert _time_cell(0.44) == "0.4 s" and _time_cell(0.04) == "0.0 s" and _time_cell(9.94) == "9.9 s"
    assert _time_cell(9.96) == "10 s" and _time_cell(123.4) == "123 s"


# ---- a compiled object where a model is expected ---------------------------------------------------------------------


def test_evaluate_polynomials_and_execute_take_a_compiled_object_as_verify_does():
    c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[1][0], u[1][1]], n=2, d=2)
    out = sv.compile(c)
    u = [[1, 2], [3, 4]]
    assert sv.evaluate(out, u) == sv.evaluate(out.model, u) == sv.evaluate(c, u) == [[5, 4], [0, 0]]
    assert sv.polynomials(out) == sv.polynomials(out.model)
    assert sv.execute(out, u).tolist() == [[5, 4], [0, 0]]
    with pytest.raises(IRError, match="evaluate: expected a Circuit, Model or compiled object, found str"):
        sv.evaluate("model.json", u)


def test_dump_file_of_a_compiled_object_says_to_save_model_and_certificate(tmp_path):
    c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
    with pytest.raises(sv.SerializationError, match=r"found Compiled; a compiled object is saved as two files: "
                                                     r"dump_file\(out.model, \.\.\.\) and dump_file\(out.certificate"):
        sv.dump_file(sv.compile(c), tmp_path / "out.json")


# ---- models written as files --------------------------------------------------------------------------------------

_LAYER = ('{{"mode": "causal", "W": {{"shape": [{dw}, {dw}], "fill": "0", "rects": [[0, 1, 0, 1, {w}]]}}, '
          '"b1": {{"shape": [2, 2], "fill": "0", "rects": []}}, "h": {{"shape": [2, 2], "fill": "0", "rects": [[0, 1, 0, 2, "1"]]}}, '
          '"b2": {{"shape": [2, 2], "fill": "0", "rects": []}}}}')


def _model_file(tmp_path, dw=2, w='"1"'):
    text = ('{"format": "symverify.model", "version": 1, "name": "m", "n": 2, "d": 2, "inner_n": 2, "inner_d": 2, '
            f'"layers": [{_LAYER.format(dw=dw, w=w)}]}}')
    path = tmp_path / "m.json"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_layer_whose_w_alone_has_the_wrong_shape_blames_w(tmp_path):
    assert isinstance(sv.load_file(_model_file(tmp_path)), Model)
    with pytest.raises(sv.SerializationError, match=r"layers\[0\]: layer W: expected shape 2×2 \(d'×d', from b1, h and b2, "
                                                     r"which are 2×2\), found 3×3"):
        sv.load_file(_model_file(tmp_path, dw=3))
    with pytest.raises(ShapeError, match=r"layer W: expected shape 2×2 .*found 3×3"):
        Layer(Grid.identity(3), Grid.zeros(2, 2), H, Grid.zeros(2, 2))


def test_file_value_errors_show_the_value_once_and_a_name_gets_the_sym_form(tmp_path):
    with pytest.raises(sv.SerializationError, match=r"W.rects\[0\]\[4\]: expected an integer, .* found float 0\.5$"):
        sv.load_file(_model_file(tmp_path, w="0.5"))
    with pytest.raises(sv.SerializationError, match=r"""found 'a'; a symbolic value is written \{"sym": \[\[1, \{"a": 1\}\]\]\}"""):
        sv.load_file(_model_file(tmp_path, w='"a"'))
    m = sv.load_file(_model_file(tmp_path, w='{"sym": [[1, {"a": 1}]]}'))
    assert m.params() == frozenset({"a"})


def test_verify_on_a_file_with_a_misshapen_w_prints_one_line_and_exits_3(tmp_path, capsys):
    c = sv.Circuit.trace(lambda u: [x * x for row in u for x in row], n=2, d=2)
    sv.dump_file(c, tmp_path / "c.json")
    path = _model_file(tmp_path, dw=3)
    assert main(["verify", str(tmp_path / "c.json"), str(path)]) == 3
    err = capsys.readouterr().err
    assert err.startswith("symverify: error: ") and "layer W: expected shape 2×2" in err and "Traceback" not in err


# ---- a user's proof script that does not run: the row says why, in one line -------------------------------------------

_BROKEN = {
    "noguard": 'TITLE = "no main guard"\n\n\ndef run(quick=False):\n    pass\n',
    "syntax": 'TITLE = "a syntax error"\n\n\ndef run(quick=False:\n    pass\n',
    "wrongret": ('from symverify.scripts.protocol import script_main\n\nTITLE = "returns an int"\n\n\n'
                 'def run(quick=False):\n    return 3\n\n\nif __name__ == "__main__":\n    raise SystemExit(script_main(run))\n'),
    "deep": ('import symverify as sv\nfrom symverify.scripts.protocol import script_main\n\nTITLE = "a library error"\n\n\n'
             'def run(quick=False):\n    return sv.Circuit.trace(lambda u: [u[3][0]], n=1, d=1)\n\n\n'
             'if __name__ == "__main__":\n    raise SystemExit(script_main(run))\n'),
}


def test_a_script_that_does_not_run_gets_a_one_line_reason(tmp_path, capsys):
    for name, text in _BROKEN.items():
        (tmp_path / f"{name}.py").write_text(text, encoding="utf-8")
    assert main(["prove", "--dir", str(tmp_path), "--quick", "-j", "2"]) == 1
    out = capsys.readouterr().out
    assert ("noguard crashed: exit code 0 without a result: the script exited before script_main wrote one "
            "(sys.exit or os._exit in run), or never calls it: a proof script ends with "
            "'if __name__ == \"__main__\": raise SystemExit(script_main(run))'") in out
    assert "syntax crashed: exit code 1: syntax.py:4: SyntaxError: " in out
    assert "wrongret crashed: exit code 1: wrongret.py:11: symverify.errors.UsageError: run(quick) returned int; " in out
    # the script's own frame, not the library's innermost one
    assert "deep crashed: exit code 1: deep.py:8: symverify.errors.IRError: traced input u: row index 3 is outside" in out


def test_crash_reason_prefers_the_scripts_own_frame():
    from symverify.scripts.tasks import crash_reason

    tb = ('Traceback (most recent call last):\n  File "/tmp/x/mine.py", line 7, in run\n    f()\n'
          '  File "/site/symverify/lib.py", line 99, in f\n    raise ValueError("v")\nValueError: v\n')
    assert crash_reason(tb, "mine") == "mine.py:7: ValueError: v"
    assert crash_reason(tb, "other") == "lib.py:99: ValueError: v"
    assert crash_reason("Killed\nout of memory\n", "mine") == "Killed | out of memory"


# ---- symverify verify: flags that need another flag say which -------------------------------------------------------


def test_cli_compositional_without_a_certificate_names_the_flag(tmp_path, capsys):
    c = sv.Circuit.trace(lambda u: [x * x for row in u for x in row], n=2, d=2)
    sv.dump_file(c, tmp_path / "c.json")
    sv.dump_file(Model(2, 2, 2, 2, [Layer.make(2, 2, W=Grid.identity(2), h=H)]), tmp_path / "m.json")
    assert main(["verify", str(tmp_path / "c.json"), str(tmp_path / "m.json"), "--method", "compositional"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("symverify: error: --method compositional checks a stage certificate: pass --certificate CERT.json")
    with pytest.raises(SystemExit) as e:
        main(["verify", str(tmp_path / "c.json"), str(tmp_path / "m.json"), "--numeric", "float16"])
    assert e.value.code == 3
    assert "argument --numeric: invalid choice: 'float16' (choose from 'float64', 'float32', 'bfloat16')" in capsys.readouterr().err


# ---- symverify prove DIR/NAME.py ------------------------------------------------------------------------------------


def test_prove_takes_the_path_of_a_users_script(user_dir, tmp_path, capsys):
    out_json = tmp_path / "run.json"
    assert main(["prove", str(user_dir / "brackets.py"), "--json", str(out_json), "-j", "1"]) == 0
    data = json.loads(out_json.read_text(encoding="utf-8"))
    assert [s["name"] for s in data["scripts"]] == ["brackets"] and data["scripts"][0]["source"] != "builtin"
    # the same directory named twice (by --dir and by a path) is read once
    assert main(["prove", "--dir", str(user_dir), str(user_dir / "brackets.py"), "-j", "1"]) == 0
    capsys.readouterr()
    assert main(["prove", str(user_dir / "nothere.py")]) == 3
    assert "symverify: error: " + str(user_dir / "nothere.py") + ": no such proof script file" in capsys.readouterr().err
    assert main(["prove", "brackets"]) == 3
    assert "(your own scripts: --dir DIR NAME, or the path DIR/NAME.py)" in capsys.readouterr().err

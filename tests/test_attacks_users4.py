"""Attacks on user-facing surfaces: golden-file names in the pytest plugin, the mutation campaign's
verdict, CLI options the chosen method never reads, random_circuit's size, edited BaseConv weights."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

import pytest

from symverify import library
from symverify.pytest_plugin import golden_stem
from symverify.testing import golden_text

pytest_plugins = ["pytester"]
golden_text({"loaded": 1})  # the in-process pytest runs below forget the modules they import: load them here

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _load_campaign():
    spec = importlib.util.spec_from_file_location("mutation_campaign", ROOT / "benchmarks" / "mutation_campaign.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up by name
    spec.loader.exec_module(mod)
    return mod


def test_a_verify_call_that_crashes_on_a_mutant_fails_the_campaign(monkeypatch, capsys):
    campaign = _load_campaign()
    c = library.poly_mult(2)
    case = campaign.Case("gate", "poly_mult(2)", "coefficient 1 -> 2", c, c, None, ("exact",))
    crashed = campaign.Outcome(0, "exact", "error", 0.01, "RuntimeError: boom", True)
    summary = campaign.Summary([case], [crashed], 0.1)
    assert summary.errors == [crashed]
    assert not summary.ok
    assert campaign.Summary([case], [campaign.Outcome(0, "exact", "proved (invisible)", 0.01, "", True)], 0.1).ok
    monkeypatch.setattr(campaign, "run_campaign", lambda *a, **k: summary)
    assert campaign.main(["--quick"]) == 1
    out = capsys.readouterr().out
    assert "RuntimeError: boom" in out and "1 verify calls that crashed" in out


TWO_CLASSES = """
class TestA:
    def test_x(self, symverify_golden):
        symverify_golden.check({"a": 1})

class TestB:
    def test_x(self, symverify_golden):
        symverify_golden.check({"a": 1})
"""


def test_an_old_golden_file_named_by_the_test_name_only_is_not_read_by_a_test_of_another_class(pytester):
    """TestA::test_x's file from an earlier version is ``test_x.json``: a new TestB::test_x (no file of
    its own) compared against it and passed; on update it wrote its file and removed TestA's."""
    pytester.makepyfile(test_user=TWO_CLASSES)
    d = pytester.path / "golden" / "test_user"
    d.mkdir(parents=True)
    (d / "test_x.json").write_text('{\n  "a": 1\n}\n', encoding="utf-8")
    res = pytester.runpytest("-p", "no:cacheprovider", "-k", "TestB")
    res.assert_outcomes(failed=1, deselected=1)
    new_a, new_b = golden_stem("test_user.py::TestA::test_x"), golden_stem("test_user.py::TestB::test_x")
    res.stdout.fnmatch_lines([f"*may belong to any of 2 tests of this module (TestA::test_x → {new_a}.json; "
                              f"TestB::test_x → {new_b}.json)*rename it*"])
    for only_b in ("test_user.py::TestB", "test_user.py::TestB::test_x"):  # TestA not collected at all
        res = pytester.runpytest("-p", "no:cacheprovider", only_b, "--symverify-update")
        res.assert_outcomes(failed=1)
        res.stdout.fnmatch_lines(["*may belong to any of 2 tests of this module*"])
    res = pytester.runpytest("-p", "no:cacheprovider", "--symverify-update")
    res.assert_outcomes(failed=2)
    assert sorted(p.name for p in d.iterdir()) == ["test_x.json"]  # nothing guessed, nothing removed
    (d / "test_x.json").rename(d / f"{new_a}.json")  # what the message asks for
    pytester.runpytest("-p", "no:cacheprovider", "-k", "TestA").assert_outcomes(passed=1, deselected=1)


def test_an_old_golden_file_of_a_test_in_a_class_is_still_read_when_its_name_is_unique(pytester):
    pytester.makepyfile(test_user="""
class TestA:
    def test_x(self, symverify_golden):
        symverify_golden.check({"a": 1})

def test_y(symverify_golden):
    symverify_golden.check({"b": 1})

class TestB:
    def test_x(self):  # the same name, but no golden file: the old file is not its
        pass
""")
    d = pytester.path / "golden" / "test_user"
    d.mkdir(parents=True)
    (d / "test_x.json").write_text('{\n  "a": 2\n}\n', encoding="utf-8")
    res = pytester.runpytest("-p", "no:cacheprovider", "-k", "TestA")
    res.assert_outcomes(failed=1, deselected=2)
    res.stdout.fnmatch_lines(["*golden mismatch for*test_x.json*"])


def test_seed_is_read_by_the_exact_method_and_its_help_says_so(tmp_path, capsys):
    """``verify --method exact --seed 5`` is no ignored option: the seed picks the counterexample
    candidates (the sides below agree on every structured candidate), so it is not refused."""
    import symverify as sv
    from symverify.cli import main
    from symverify.ir.serialize import dump_file

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    dump_file(sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] * u[0][0]], n=1, d=2), a)
    dump_file(sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] * u[0][1]], n=1, d=2), b)
    found = []
    for seed in ("0", "5"):
        assert main(["verify", str(a), str(b), "--method", "exact", "--seed", seed]) == 1
        found.append(next(line for line in capsys.readouterr().out.splitlines() if "counterexample" in line))
    assert found[0] != found[1]
    with pytest.raises(SystemExit):
        main(["verify", "--help"])
    assert "read by every method" in " ".join(capsys.readouterr().out.split())


def test_random_circuit_size_counts_the_gates_as_circuit_size_does_constants_not_included():
    """``random_circuit(..., size=30)`` has 30 MUL/LIN gates (``c.size``) plus its CONST gates; the
    docstring said "exactly size gates", which read as ``len(c.gates)``."""
    from symverify.kernel.ir.analysis import stats
    from symverify.kernel.ir.circuit import Op

    c = library.random_circuit(2, 2, 30, 5, seed=0)
    consts = sum(g.op is Op.CONST for g in c.gates)
    assert consts > 0 and c.size == 30 and len(c.gates) == 30 + consts
    assert stats(c).size == 30
    assert len(library.random_circuit(2, 2, 30, 5, seed=0, consts=False).gates) == 30
    doc = " ".join(library.random_circuit.__doc__.split())
    assert "constants not included" in doc and "len(c.gates)`` may exceed ``size``" in doc


@pytest.mark.parametrize("path", ["auto", "fft"])
def test_a_weight_edited_through_data_is_run_only_after_refresh_as_documented(path):
    """An edit through ``.data`` changes no version: the module keeps its plans (checking every
    weight on every call would slow the forward pass), so the docs say to call ``refresh()``; an
    edit under ``torch.no_grad()`` is seen at once."""
    import torch

    from symverify.executors import export
    from symverify.kernel.ir.baseconv import Layer, Model
    from symverify.kernel.ir.grid import Grid

    model = Model(2, 1, 2, 1, (Layer.make(2, 1, W=Grid.identity(1), h=Grid.from_rows([[1], [0]])),))
    mod = export.to_torch(model, path=path)
    u = torch.tensor([[3.0], [4.0]], dtype=torch.float64)
    before = mod(u)
    mod.layers[0].W.data[0, 0] = 5.0
    assert torch.equal(mod(u), before)  # the old plan: the documented limit
    mod.refresh()
    assert torch.equal(mod(u), 5 * before)
    with torch.no_grad():
        mod.layers[0].W[0, 0] = 7.0  # changes the version: seen without refresh
    assert torch.equal(mod(u), 7 * before)
    for doc in (export.to_torch.__doc__, export.BaseConvStack.__doc__, export.BaseConvLayer.__doc__):
        text = " ".join(doc.split())
        assert ".data" in text and "refresh" in text
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "W.data[0, 0] = 5" in readme and "module.refresh()" in readme

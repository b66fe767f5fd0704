"""The package face: lazy imports and a fast ``import symverify``."""

import subprocess
import sys

import symverify


def test_import_does_not_load_heavy_backends():
    code = "import sys, symverify; print(sorted(m for m in ('torch', 'z3', 'flint', 'sympy', 'matplotlib') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_public_names_resolve():
    for name in symverify.__all__:
        assert getattr(symverify, name) is not None, name


def test_unknown_attribute():
    import pytest

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        symverify.nope  # noqa: B018


def test_entry_points_are_plain_functions_with_their_signatures():
    import inspect

    for name, params in (("verify", {"lhs", "rhs", "method", "timeout"}), ("compile", {"circuit", "method"}),
                         ("execute", {"obj", "u", "backend"})):
        fn = getattr(symverify, name)
        assert inspect.isfunction(fn), name
        assert params <= set(inspect.signature(fn).parameters), name


def test_functions_survive_importing_the_packages_that_define_them():
    """The packages have noun names, so importing them never rebinds the functions."""
    code = (
        "import inspect, symverify as sv, symverify.compiler.dense, symverify.kernel.verification, symverify.kernel.engines.plan; "
        "print(all(inspect.isfunction(f) for f in (sv.compile, sv.verify, sv.execute)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "True"


def test_type_checkers_see_the_entry_points(tmp_path):
    """mypy infers the real return types through the lazy re-exports (they are typed under
    TYPE_CHECKING), so user code gets Report, not Any."""
    import shutil

    mypy = shutil.which("mypy", path=str(__import__("pathlib").Path(sys.executable).parent))
    assert mypy is not None, "mypy (the dev extra) must be installed next to this interpreter"
    user = tmp_path / "user.py"
    user.write_text(
        "import symverify as sv\n"
        "c = sv.Circuit.trace(lambda u: [u[0][0]], n=1, d=1)\n"
        "reveal_type(sv.verify(c, c))\n"
        "reveal_type(sv.compile(c))\n"
        "reveal_type(sv.verify(c, c).verdict)\n", encoding="utf-8"
    )
    out = subprocess.run([mypy, "--cache-dir", str(tmp_path / "cache"), "--follow-imports=silent", str(user)],
                         capture_output=True, text=True).stdout
    assert 'Revealed type is "symverify.kernel.verification.Report"' in out, out
    assert 'Revealed type is "symverify.compiler.result.Compiled"' in out, out
    assert 'Revealed type is "symverify.kernel.provers.outcome.Verdict"' in out, out


def test_the_parametric_language_is_exported_whole():
    """Every constructor docs/forall.md §1 presents is importable from ``symverify.parametric``."""
    import symverify.parametric as par
    from symverify.kernel.parametric.expr import Pred

    assert {"pred", "fam", "inp", "where", "var", "tap", "Gadget"} <= set(par.__all__)
    assert isinstance(par.pred("V1", par.var("i"), 0), Pred)

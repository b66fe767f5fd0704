"""The package face: lazy imports and a fast ``import symverify``."""

import subprocess
import sys

import symverify


def test_import_does_not_load_heavy_backends():
    code = "import sys, symverify; print(sorted(m for m in ('torch', 'z3', 'flint', 'sympy') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_public_names_resolve():
    for name in symverify.__all__:
        assert getattr(symverify, name) is not None, name


def test_unknown_attribute():
    import pytest

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        symverify.nope  # noqa: B018


def test_functions_survive_importing_their_submodules():
    """Regression: `import symverify.compile.dense` rebound `symverify.compile` to the module."""
    code = (
        "import symverify as sv, symverify.compile.dense, symverify.verify, symverify.execute.plan; "
        "print(callable(sv.compile), callable(sv.verify), callable(sv.execute))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "True True True"

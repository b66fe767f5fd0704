"""The core install: torch is the extra ``symverify[torch]``; proving, proof scripts and the pytest plugin run without it.

Each test runs a subprocess in which torch is absent: a ``sitecustomize`` on ``PYTHONPATH`` puts ``None`` into
``sys.modules["torch"]``, which is what Python does for a missing module as far as ``import torch`` (ImportError)
and ``importlib.util.find_spec("torch")`` (None) can tell; child processes inherit it through the environment.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


@pytest.fixture
def no_torch_env(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text('import sys\nsys.modules["torch"] = None  # torch is "not installed"\n', encoding="utf-8")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site), *filter(None, [env.get("PYTHONPATH")])])
    env.pop("PYTEST_ADDOPTS", None)
    return env


def _run(args, env, cwd, timeout=240):
    return subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def test_torch_is_an_extra_and_dev_still_has_it():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    deps = [d.split(">")[0].split("=")[0].strip() for d in meta["dependencies"]]
    assert "torch" not in deps
    extras = meta["optional-dependencies"]
    assert any(r.startswith("torch") for r in extras["torch"])
    for extra in ("all", "dev"):
        assert any(r.startswith("torch") for r in extras[extra]), extra
    assert "torch==" in (ROOT / "constraints.txt").read_text(encoding="utf-8")


def test_the_blocker_really_hides_torch(no_torch_env, tmp_path):
    code = "import importlib.util\ntry:\n    import torch\nexcept ImportError:\n    print('absent', importlib.util.find_spec('torch'))\n"
    out = _run([sys.executable, "-c", code], no_torch_env, tmp_path)
    assert out.stdout.strip() == "absent None", out.stderr


def test_verify_compile_and_evaluate_without_torch(no_torch_env, tmp_path):
    code = textwrap.dedent("""
        import sys
        import symverify as sv
        from symverify.errors import BackendUnavailableError
        from symverify.library import walsh_hadamard

        c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[1][0], u[1][1]], n=2, d=2)
        compiled = sv.compile(c)
        for method in ("auto", "randomized", "exact", "compositional"):
            assert sv.verify(c, compiled, method=method).proved, method
        w = walsh_hadamard(8, 2)
        assert sv.verify(w, sv.compile(w)).proved
        assert sv.evaluate(c, [[1, 2], [3, 4]])[0][0] == 5
        try:
            sv.execute(compiled.model, [[1, 2], [3, 4]], backend="torch")
        except BackendUnavailableError as e:
            assert "symverify[torch]" in str(e), e
        else:
            raise SystemExit("execute ran without torch")
        import symverify.executors as ex
        for name in ("to_torch", "to_zoology"):
            try:
                getattr(ex, name)
            except BackendUnavailableError as e:
                assert "symverify[torch]" in str(e), e
            else:
                raise SystemExit(name + " loaded without torch")
        from symverify.kaleidoscope import permutation_to_kaleidoscope
        from symverify.kaleidoscope.numeric import compile_torch
        try:
            compile_torch(permutation_to_kaleidoscope([1, 0, 3, 2]))
        except BackendUnavailableError as e:
            assert "symverify[torch]" in str(e), e
        else:
            raise SystemExit("compile_torch ran without torch")
        assert "torch" not in [m for m in sys.modules if sys.modules[m] is not None and m.split('.')[0] == 'torch']
        print("ok")
    """)
    out = _run([sys.executable, "-c", code], no_torch_env, tmp_path)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stdout + out.stderr


def test_prove_quick_without_torch(no_torch_env, tmp_path):
    out = _run([str(BIN / "symverify"), "prove", "--quick", "-j", "1", "primitives", "lemma_h16_butterfly"],
               no_torch_env, tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2/2 scripts ok" in out.stdout


def test_a_users_pytest_project_without_torch(no_torch_env, tmp_path):
    (tmp_path / "test_user.py").write_text(textwrap.dedent("""
        import symverify as sv
        from symverify.testing import assert_proved, assert_refuted

        X = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)

        def test_compiled_model_is_proved():
            assert_proved(X, sv.compile(X).model)

        def test_a_wrong_circuit_is_refuted():
            assert_refuted(X, sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + 1], n=1, d=2))

        def test_golden(symverify_golden):
            symverify_golden.check(sv.verify(X, sv.compile(X), method="randomized"))
    """), encoding="utf-8")
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:randomly",
            "--symverify-update", "test_user.py"]
    out = _run(args, no_torch_env, tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    out = _run([*args[:-2], "test_user.py"], no_torch_env, tmp_path)
    assert out.returncode == 0 and "3 passed" in out.stdout, out.stdout + out.stderr

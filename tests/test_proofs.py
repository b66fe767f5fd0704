"""Every proof script in proofs/ is a test: its quick tier must prove every instance within bounds."""

import importlib.util
from pathlib import Path

import pytest

PROOFS = Path(__file__).resolve().parent.parent / "proofs"
SCRIPTS = sorted(p for p in PROOFS.glob("*.py") if not p.name.startswith("_"))


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"proofs_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_there_are_proof_scripts():
    assert len(SCRIPTS) >= 1


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_proof_script_quick_tier(path):
    mod = _load(path)
    assert isinstance(mod.TITLE, str) and mod.TITLE
    result = mod.run(True)
    failed = [i for i in result.instances if not i.ok]
    assert result.instances, "a proof script must check at least one instance"
    assert not failed, result.table()
    assert any(i.proved for i in result.instances), "a script proves something (argued claims never count as proved)"


def test_thm_h21_general_cross_checks_large_models_on_the_python_engine(monkeypatch):
    """The dense-vs-kaleidoscope cross-check of a circuit too large for exact expansion is
    Schwartz–Zippel on Python ints (primes ≥ 2^61), proved within the default bound 2^-100."""
    from symverify.library import walsh_hadamard

    mod = _load(PROOFS / "thm_h21_general.py")
    seen = []
    real = mod.verify

    def spy(a, b, **kw):
        rep = real(a, b, **kw)
        seen.append((kw, rep))
        return rep

    monkeypatch.setattr(mod, "verify", spy)
    inst = mod._instance(walsh_hadamard(16))
    assert inst.ok
    (kw, rep), = seen
    assert kw == {"method": "randomized", "backend": "python"}
    assert rep.proved and rep.evidence["backend"].startswith("python") and rep.evidence["prime_bits"] >= 61
    assert rep.evidence["bound_log2"] <= -100

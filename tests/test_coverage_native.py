"""symverify._native: native kernels are optional, so a machine without a C compiler, or whose
compiler fails, gets no library and a reason (the pure-torch form runs); a machine without
/proc/cpuinfo still gets a cache key.

Each test names the function it is for; the library names are fresh, so no kernel the rest of the
suite uses is touched, and the cache is a temporary directory.
"""

import shutil

from symverify import _native


def test_no_c_compiler_means_no_library_and_a_reason(monkeypatch, tmp_path):
    """_build through load: no $CC and none on PATH."""
    monkeypatch.setenv("SYMVERIFY_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("SYMVERIFY_NATIVE", raising=False)
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setattr(_native, "torch_addcmul_fuses", lambda: True)
    assert _native.load("covtest_nocc", "int f(void) { return 1; }") is None
    assert "no C compiler found" in _native.why_not("covtest_nocc")


def test_a_failing_compiler_means_no_library_and_its_exit_code(monkeypatch, tmp_path):
    """_build: the compiler exits nonzero; nothing is left in the cache."""
    monkeypatch.setenv("SYMVERIFY_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("SYMVERIFY_NATIVE", raising=False)
    monkeypatch.setenv("CC", "false")
    monkeypatch.setattr(_native, "torch_addcmul_fuses", lambda: True)
    assert _native.load("covtest_badcc", "int f(void) { return 1; }") is None
    assert "false exited with 1" in _native.why_not("covtest_badcc")
    assert not list(tmp_path.rglob("*.so"))


def test_cpu_flags_without_proc_cpuinfo(monkeypatch):
    """_cpu_flags: an unreadable /proc/cpuinfo falls back to the processor name."""
    import builtins
    import platform

    real_open = builtins.open

    def no_cpuinfo(path, *a, **k):
        if path == "/proc/cpuinfo":
            raise PermissionError(13, "denied")
        return real_open(path, *a, **k)

    monkeypatch.setattr(builtins, "open", no_cpuinfo)
    monkeypatch.setattr(platform, "processor", lambda: "some-cpu")
    assert _native._cpu_flags() == "some-cpu"

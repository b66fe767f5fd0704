"""Attacks on the float paths: the native kernels' build and cache (:mod:`symverify._native`), the
float executor's inputs (:func:`symverify.executors.execute`), the converters and the HTML views.
Each ends in the right numbers, a clean fallback or a clear ``SymverifyError``: never a crashed
interpreter, a silently wrong result or a state that changes later calls."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from symverify import _native
from symverify.errors import UsageError

ROOT = Path(__file__).resolve().parents[1]
SOURCE = "int answer(void) { return 42; }\n"
needs_cc = pytest.mark.skipif(not (shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")), reason="no C compiler")


def _python(code: str, cache: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter (this checkout's symverify) with ``SYMVERIFY_CACHE_DIR=cache``."""
    full = {**os.environ, "SYMVERIFY_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT), **env}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, env=full, capture_output=True,
                          text=True, timeout=120, check=False)


BUILD = """
    from symverify import _native
    lib = _native._build("fpt_answer", {src!r})
    print(lib.answer())
"""


# ---- symverify._native: the cache ---------------------------------------------------------------
@needs_cc
@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty", "digest missing", "digest wrong"])
def test_a_damaged_cached_library_is_built_again_not_loaded(tmp_path, damage):
    """A cached library cut to its first 1000 bytes was mapped by the dynamic loader and killed the
    interpreter with SIGBUS (exit -7); a garbage one made every later process fall back. Each is now
    built again: the process prints the function's value and the cache holds a library of its digest."""
    first = _python(BUILD.format(src=SOURCE), tmp_path)
    assert first.returncode == 0 and first.stdout.strip() == "42", first.stderr
    (lib,) = (tmp_path / "native").glob("fpt_answer-*.so")
    good = lib.read_bytes()
    digest = Path(str(lib) + ".sha256")
    if damage == "truncated":
        lib.write_bytes(good[:1000])
    elif damage == "garbage":
        lib.write_bytes(b"\x7fELF" + b"\xff" * (len(good) - 4))
    elif damage == "empty":
        lib.write_bytes(b"")
    elif damage == "digest missing":
        digest.unlink()
    else:
        digest.write_text("0" * 64)
    again = _python(BUILD.format(src=SOURCE), tmp_path)
    assert again.returncode == 0 and again.stdout.strip() == "42", (again.returncode, again.stderr)
    assert _native._intact(str(lib))


@needs_cc
def test_concurrent_first_builds_leave_one_intact_library(tmp_path):
    """Four processes building the same library at once: every one loads it, and the cache holds one
    library whose bytes have its digest (no partial file, no stray temporary directory)."""
    env = {**os.environ, "SYMVERIFY_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(BUILD.format(src=SOURCE))], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4 and [o.strip() for o, _ in outs] == ["42"] * 4, outs
    names = sorted(p.name for p in (tmp_path / "native").iterdir())
    assert len(names) == 2 and names[0].endswith(".so") and names[1] == names[0] + ".sha256"
    assert _native._intact(str(tmp_path / "native" / names[0]))


@pytest.mark.parametrize("value", ["garbage", "2", "enable", "-1", "0 1"])
def test_an_unknown_native_setting_is_an_error_not_a_guess(monkeypatch, value):
    """``SYMVERIFY_NATIVE=garbage`` (or ``2``) enabled the kernels without a word."""
    monkeypatch.setenv("SYMVERIFY_NATIVE", value)
    with pytest.raises(UsageError, match=r"SYMVERIFY_NATIVE: expected 1, true, yes or on \(use the native kernels\), 0, false, "
                                         r"no or off \(disable them\), or empty \(use them\), found '" + value + "'"):
        _native.enabled()
    with pytest.raises(UsageError, match="SYMVERIFY_NATIVE"):
        _native.load("fpt_setting", SOURCE)


@pytest.mark.parametrize("value, on", [(" OFF ", False), ("No", False), ("0", False), ("", True), (" yes", True), ("TRUE", True)])
def test_known_native_settings_in_any_case(monkeypatch, value, on):
    monkeypatch.setenv("SYMVERIFY_NATIVE", value)
    assert _native.enabled() is on
    assert (_native.why_not("fpt_never_loaded") == "disabled by SYMVERIFY_NATIVE") is not on


def test_a_file_in_place_of_the_cache_directory_is_a_clean_fallback(monkeypatch, tmp_path):
    blocker = tmp_path / "cache"
    blocker.write_text("not a directory")
    monkeypatch.setenv("SYMVERIFY_CACHE_DIR", str(blocker))
    monkeypatch.setattr(_native, "torch_addcmul_fuses", lambda: True)
    assert _native.load("fpt_blocked", SOURCE) is None
    assert "NotADirectoryError" in (_native.why_not("fpt_blocked") or "") or "FileExistsError" in (_native.why_not("fpt_blocked") or "")
    assert blocker.read_text() == "not a directory"


@needs_cc
def test_cc_may_be_a_command_with_arguments(tmp_path):
    """``CC="gcc -DANSWER=41"`` was run as one program named ``gcc -DANSWER=41`` (FileNotFoundError),
    so the native kernels were silently off."""
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    src = "int answer(void) { return ANSWER + 1; }\n"
    out = _python(BUILD.format(src=src), tmp_path, CC=f"{cc} -DANSWER=41")
    assert out.returncode == 0 and out.stdout.strip() == "42", out.stderr


def test_an_unparsable_cc_is_a_clean_fallback_with_its_reason(monkeypatch, tmp_path):
    monkeypatch.setenv("SYMVERIFY_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CC", 'gcc "-O2')
    monkeypatch.setattr(_native, "torch_addcmul_fuses", lambda: True)
    assert _native.load("fpt_badquote", SOURCE) is None
    assert "No closing quotation" in (_native.why_not("fpt_badquote") or "")


def test_no_compiler_on_path_is_a_clean_fallback(monkeypatch, tmp_path):
    """PATH holding only an empty folder and no $CC: no library, and the reason says why (the
    callers then run their pure-torch forms)."""
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setenv("SYMVERIFY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(_native, "torch_addcmul_fuses", lambda: True)
    assert _native.load("fpt_no_cc", SOURCE) is None
    assert _native.why_not("fpt_no_cc") == "OSError: no C compiler found (cc, gcc or clang on PATH, or $CC)"


# ---- execute: the float executor's inputs -------------------------------------------------------
torch = pytest.importorskip("torch")

import symverify as sv  # noqa: E402
from symverify.errors import CompileError, IRError  # noqa: E402
from symverify.executors import ZoologyBaseConv, execute, from_zoology, to_torch, to_zoology  # noqa: E402
from symverify.kernel.ir.baseconv import Layer, Model  # noqa: E402
from symverify.kernel.ir.grid import Grid  # noqa: E402


@pytest.fixture(scope="module")
def sides():
    """A circuit, its Theorem H.21 model, and a zoology stack in the pair form (the fused path)."""
    c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[1][0], u[1][1]], n=2, d=2)
    gen = torch.Generator().manual_seed(0)
    sd = {k: torch.randn(v.shape, generator=gen, dtype=v.dtype) for k, v in ZoologyBaseConv(2, 4).state_dict().items()}
    return {"circuit": c, "model": sv.compile(c).model, "zoology": from_zoology(sd)}


@pytest.mark.parametrize("side", ["model", "zoology"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_model_input_that_requires_grad_is_refused(sides, side, dtype):
    """The compiled model gave the gradient [1, 0, 0, 0] of y00 = u00·u01 + u10 at (2, 3, 5, 7)
    (the native program records no operations), and its cached state buffer kept the autograd
    graph, so every later call on a plain tensor returned a tensor with a grad_fn; the zoology
    stack raised torch's RuntimeError about out= arguments."""
    m = sides[side]
    u = torch.rand(2, m.n, m.d, dtype=getattr(torch, dtype), requires_grad=True)
    with pytest.raises(IRError, match=r"model input: a tensor that requires grad; .* use to_torch\(model\)"):
        execute(m, u, backend="torch", dtype=dtype)
    plain = execute(m, u.detach(), backend="torch", dtype=dtype)
    assert not plain.requires_grad and plain.grad_fn is None
    with torch.no_grad():  # no graph is recorded there: the values, as for the detached input
        assert torch.equal(execute(m, u, backend="torch", dtype=dtype), plain)
    again = execute(m, u.detach().clone(), backend="torch", dtype=dtype)
    assert not again.requires_grad and torch.equal(again, plain)


def test_a_circuit_input_that_requires_grad_gets_the_true_gradient(sides):
    """y00 = u00·u01 + u10: ∂y00/∂u = [[u01, u00], [1, 0]]; the same model refuses the input."""
    u = torch.tensor([[[2.0, 3.0], [5.0, 7.0]]], dtype=torch.float64, requires_grad=True)
    execute(sides["circuit"], u, backend="torch")[0, 0, 0].backward()
    assert u.grad.tolist() == [[[3.0, 2.0], [1.0, 0.0]]]
    u.grad = None
    to_torch(sides["model"], requires_grad=True)(u)[0, 0, 0].backward()  # the differentiable module
    assert u.grad.tolist() == [[[3.0, 2.0], [1.0, 0.0]]]


@pytest.mark.parametrize("backend", ["exact", "torch", "modular"])
@pytest.mark.parametrize("side", ["circuit", "model", "zoology"])
def test_sparse_tensor_inputs_are_refused(sides, side, backend):
    """A sparse COO input raised torch's RuntimeError (copy_ between dense and sparse, reshape)."""
    obj = sides[side]
    u = torch.ones(2, obj.n, obj.d, dtype=torch.float64 if backend == "torch" else torch.int64).to_sparse()
    with pytest.raises(IRError, match=r"input: expected a dense tensor, found a torch\.sparse_coo tensor of shape \(2, \d, 2\)"):
        execute(obj, u, backend=backend)


@pytest.mark.parametrize("side", ["circuit", "model", "zoology"])
def test_layouts_and_input_dtypes_give_the_contiguous_float64_result(sides, side):
    """Transposed-back, expanded (stride 0), offset views, float16/int/uint8 tensors and numpy
    float16 arrays: each gives the result of the contiguous float64 tensor of the same values."""
    obj = sides[side]
    n, d = obj.n, obj.d
    base = torch.randint(-3, 4, (4, n, d)).to(torch.float64)
    want = execute(obj, base[1:], backend="torch")
    assert want.dtype == torch.float64 and want.shape == (3, n, d)
    variants = {
        "transposed": base[1:].transpose(1, 2).contiguous().transpose(1, 2),
        "offset": base[1:],
        "float16": base[1:].half(),
        "int64": base[1:].long(),
        "numpy float16": base[1:].numpy().astype("float16"),
    }
    for name, u in variants.items():
        got = execute(obj, u, backend="torch")
        assert got.dtype == torch.float64 and torch.equal(got, want), name
    one = base[1:2].expand(3, n, d)
    assert torch.equal(execute(obj, one, backend="torch"), want[:1].expand(3, n, d))


TINY = {"float64": Fraction(1, 2**1100), "float32": Fraction(1, 10**50), "bfloat16": Fraction(1, 10**50)}


def _one_layer(where: str, v: Fraction) -> Model:
    """Two equal layers on a 2×1 state whose weight ``where`` is ``v`` (others 1 or the identity)."""
    kw = {
        "W": {"W": Grid.from_rows([[v]]), "h": Grid.from_rows([[1], [0]])},
        "b1": {"b1": Grid.from_rows([[v], [v]]), "h": Grid.from_rows([[1], [0]])},
        "h": {"W": Grid.identity(1), "h": Grid.from_rows([[0], [v]])},
        "b2": {"W": Grid.identity(1), "b2": Grid.from_rows([[v], [v]])},
        "W and b1": {"W": Grid.from_rows([[v]]), "b1": Grid.from_rows([[v], [v]]), "b2": Grid.from_rows([[1], [1]])},
    }[where]
    return Model(2, 1, 2, 1, (Layer.make(2, 1, **kw),) * 2)


@pytest.mark.parametrize("dtype", sorted(TINY))
@pytest.mark.parametrize("where", ["W", "b1", "h", "b2", "W and b1"])
def test_a_weight_that_rounds_to_zero_runs_on_every_path(dtype, where):
    """A weight of 2^-1100 (0 in float64) made the compiled program read a missing bias: the
    'auto' and 'sparse' paths raised AttributeError ('NoneType' object has no attribute 'shape')
    where 'direct' and 'fft' returned the rounded result. Every path now gives that result."""
    m = _one_layer(where, TINY[dtype])
    u = torch.tensor([[[3.0], [-2.0]], [[1.5], [4.0]]], dtype=getattr(torch, dtype))
    want = execute(m, u, backend="torch", dtype=dtype, path="direct")
    for path in ("auto", "sparse", "fft"):
        got = execute(m, u, backend="torch", dtype=dtype, path=path)
        assert got.dtype == u.dtype and torch.equal(got, want), path  # equal up to the sign of zeros


# ---- weights beyond a float format's range --------------------------------------------------------
def _gate(v: object) -> Model:
    """``y = v·u ⊙ u``: one layer with ``W = [[v]]`` and ``h = e_0``."""
    return Model(2, 1, 2, 1, (Layer.make(2, 1, W=Grid.from_rows([[v]]), h=Grid.from_rows([[1], [0]])),))


@pytest.mark.parametrize("exact", [True, False])
@pytest.mark.parametrize("v, dtype, beyond", [
    (2**200, "float32", "float32"), (2**200, "bfloat16", "bfloat16"), (10**400, "float64", "float64"),
    (-(2**1024), "float64", "float64"), (10**400, "float32", "float64")])
def test_to_zoology_refuses_a_weight_beyond_the_range(v, dtype, beyond, exact):
    """``2^200`` in float32 raised OverflowError ("cannot convert Infinity to integer ratio") with
    ``exact=True`` and became an infinite weight with ``exact=False``; ``10^400`` raised
    OverflowError ("int too large to convert to float") in every dtype."""
    with pytest.raises(CompileError, match=r"layer 0 projection\.weight\[0, 0\]: .* is beyond the range of (torch\.)?"
                       + beyond + r" \(1 value\(s\) so\)"):
        to_zoology(_gate(v), dtype=dtype, exact=exact)


def test_to_zoology_still_rounds_and_keeps_exact_weights():
    z = to_zoology(_gate(Fraction(1, 3)), dtype="float32", exact=False)
    assert z[0].projection.weight.item() == float(torch.tensor(1 / 3, dtype=torch.float32))
    big = to_zoology(_gate(2**127), dtype="float32")  # 2^127 is a float32
    assert big[0].projection.weight.item() == 2.0**127
    with pytest.raises(CompileError, match=r"1 value\(s\) are not exactly numbers of torch\.float32, e\.g\. 1/3"):
        to_zoology(_gate(Fraction(1, 3)), dtype="float32")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_to_torch_refuses_a_weight_beyond_the_range(dtype):
    """``to_torch(model, dtype='float32')`` with a weight ``2^200`` made it ``inf`` without a word."""
    with pytest.raises(CompileError, match=r"layer 0 W\[0, 0\]: 1\.6069380442589903e\+60 is beyond the range of " + dtype):
        to_torch(_gate(2**200), dtype=dtype)
    assert to_torch(_gate(2**200)).layers[0].W.item() == 2.0**200  # float64 holds it


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("where", ["W", "b1", "h", "b2"])
def test_execute_refuses_a_model_weight_beyond_the_range(dtype, where):
    """A weight ``2^200`` ran as ``inf`` in float32: on the input ``[1, 2^-200]`` the output
    ``[2^200, 2^-200]`` (a float32 overflow and a float32 number) came out ``[inf, inf]``."""
    m = {"W": _gate(2**200),
         "b1": Model(2, 1, 2, 1, (Layer.make(2, 1, b1=Grid.from_rows([[2**200], [2**200]]), h=Grid.from_rows([[1], [0]])),)),
         "h": Model(2, 1, 2, 1, (Layer.make(2, 1, W=Grid.identity(1), h=Grid.from_rows([[0], [2**200]])),)),
         "b2": Model(2, 1, 2, 1, (Layer.make(2, 1, W=Grid.identity(1), b2=Grid.from_rows([[2**200], [2**200]])),))}[where]
    for u in ([[1], [Fraction(1, 2**200)]], torch.ones(3, 2, 1, dtype=getattr(torch, dtype))):  # the general path, the fast one
        with pytest.raises(CompileError, match=rf"layer 0 {where}: a weight is beyond the range of {dtype}"):
            execute(m, u, backend="torch", dtype=dtype)
    assert execute(m, [[1], [Fraction(1, 2**200)]], backend="torch").dtype == torch.float64  # float64 runs it


def test_execute_refuses_a_circuit_constant_beyond_the_range():
    c = sv.Circuit.trace(lambda u: [u[0][0] * 2**200, u[0][0] + 2**200], n=1, d=2)
    with pytest.raises(CompileError, match=r"circuit: a (constant|linear gate coefficient) is beyond the range of float32"):
        execute(c, [[1, 1]], backend="torch", dtype="float32")
    assert execute(c, [[1, 1]], backend="torch").tolist() == [[2.0**200, 2.0**200 + 1]]
    assert execute(c, [[1, 1]], backend="modular", p=7).tolist() == [[(2**200) % 7, (2**200 + 1) % 7]]


# ---- pictures and HTML: names as data ---------------------------------------------------------------
DOLLAR_NAMES = ["cost $x^$ y", "cost $5 and $6"]


@pytest.mark.parametrize("name", DOLLAR_NAMES)
def test_names_with_dollar_signs_are_drawn_as_text(sides, name):
    """A model, script or instance named ``cost $x^$ y`` made ``savefig`` raise matplotlib's
    ValueError (its text was parsed as mathtext); ``cost $5 and $6`` was drawn as a formula."""
    pytest.importorskip("matplotlib")
    import dataclasses
    import io

    from matplotlib import cbook

    from symverify.viz import plot_model, plot_resources, plot_weights

    m = dataclasses.replace(sides["model"], name=name)
    run = {"scripts": [{"name": name, "result": {"instances": [
        {"name": name, "verdict": "proved", "resources": {"layers": 3, "depth": 4, "width": 2}, "bounds": {"layers": 4}}]}}]}
    for fig in (plot_model(m), plot_weights(m, 0), plot_resources(run)):
        fig.savefig(io.BytesIO(), format="png")
        shown = [t.get_text() for t in fig.findobj(lambda o: hasattr(o, "get_text") and "cost" in str(o.get_text()))]
        assert shown and not any(cbook.is_math_text(t) for t in shown), shown
        assert all(t.replace("\\$", "$").count(name) for t in shown)


def _parse(page: str):
    import html.parser
    from collections import Counter

    class Page(html.parser.HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.ids: Counter[str] = Counter()
            self.links: list[str] = []
            self.tags: Counter[str] = Counter()

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            self.tags[tag] += 1
            if "id" in a:
                self.ids[a["id"]] += 1
            if tag == "a" and "href" in a:
                self.links.append(a["href"])

    p = Page()
    p.feed(page)
    return p


def test_report_anchors_are_unique_and_control_characters_visible(tmp_path):
    """Scripts named ``a"b``, ``a<b``, ``ab``, … all had the section id ``script-ab``: the summary's
    links of all but one led to the wrong script. NUL and ESC in names were written raw (a NUL is a
    parse error in HTML)."""
    pytest.importorskip("matplotlib")
    from symverify.viz import write_report

    names = ['a"b', "a'b", "a\x00b", "a\x1b[31mb", "a</pre>b", "ab", "a<b", "<script>alert(1)</script>"]
    run = {"scripts": [{"name": nm, "title": nm, "status": "ok", "result": {"ok": True, "instances": [
        {"name": nm, "verdict": "proved", "ok": True, "resources": {nm: 3}, "bounds": {}, "over_bound": [], "detail": nm}]}}
        for nm in names]}
    page = write_report(run, tmp_path / "r.html").read_text(encoding="utf-8")
    p = _parse(page)
    targets = [link[1:] for link in p.links if link.startswith("#script-")]
    assert len(targets) == len(names) and len(set(targets)) == len(names)
    assert all(p.ids[t] == 1 for t in targets)
    assert not any(ord(c) < 32 and c not in "\n\t" for c in page)
    assert "a\\x00b" in page and "a\\x1b[31mb" in page
    assert p.tags["script"] == 0 and "<script>alert" not in page


def test_notebook_views_escape_names(sides):
    import dataclasses

    m = dataclasses.replace(sides["model"], name='<img src=x onerror="alert(1)">\x00')
    view = m._repr_html_()
    assert "<img" not in view and "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;\\x00" in view
    assert _parse(view).tags["img"] == 0


def test_non_finite_inputs_never_become_finite_where_they_are_read(sides):
    """An infinite or NaN input is IEEE data (execute's docstring): every output the circuit reads it
    for is NaN or infinite on every path, and the model never returns a finite number there."""
    c, m = sides["circuit"], sides["model"]
    reads = {0: [0], 1: [0], 2: [0], 3: [1]}  # y00 = u00·u01 + u10, y01 = u11
    for val in (float("inf"), float("nan")):
        for pos, outs in reads.items():
            u = torch.ones(1, 2, 2, dtype=torch.float64)
            u.view(-1)[pos] = val
            for got in [execute(c, u, backend="torch")] + [execute(m, u, backend="torch", path=p) for p in ("auto", "sparse", "direct", "fft")]:
                assert got.shape == (1, 2, 2)
                assert not bool(torch.isfinite(got.view(-1)[outs]).any()), (val, pos, got)


# ---- the butterfly module -----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_the_butterfly_module_refuses_meta_and_sparse_inputs(dtype):
    """A meta input raised NotImplementedError ("Cannot copy out of meta tensor"), a sparse one
    torch's RuntimeError about memory formats."""
    from symverify.kaleidoscope import compile_torch, permutation_to_kaleidoscope

    m = compile_torch(permutation_to_kaleidoscope([2, 0, 3, 1, 5, 7, 6, 4]), dtype=dtype)
    with pytest.raises(IRError, match=r"torch butterfly apply: expected values, found a meta tensor of shape \(3, 8\)"):
        m(torch.zeros(3, 8, device="meta"))
    x = torch.arange(24, dtype=getattr(torch, dtype)).reshape(3, 8)
    with pytest.raises(IRError, match=r"torch butterfly apply: expected a dense tensor, found a torch\.sparse_coo tensor"):
        m(x.to_sparse())
    want = x[:, [1, 3, 0, 2, 7, 4, 6, 5]]  # y_{π(i)} = x_i
    assert torch.equal(m(x), want) and torch.equal(m(x.to_sparse().to_dense()), want)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_the_butterfly_module_on_other_layouts_and_dtypes(dtype):
    """Expanded, transposed-back, 1-d, 3-d, integer, float16 and empty inputs: each is the result of
    the contiguous input in the module's dtype (the native kernel and the torch forms agree)."""
    from symverify.kaleidoscope import compile_torch, permutation_to_kaleidoscope

    perm = [2, 0, 3, 1, 5, 7, 6, 4]
    m = compile_torch(permutation_to_kaleidoscope(perm), dtype=dtype)
    perm = sorted(range(8), key=perm.__getitem__)  # y_j = x_{perm[j]}: y_{π(i)} = x_i
    dt = getattr(torch, dtype)
    x = torch.arange(-12, 12).reshape(3, 8)
    want = x[:, perm].to(dt)
    for name, u in {"int64": x, "uint8": (x + 12).to(torch.uint8), "float16": x.half(), "expanded": x[:1].expand(3, 8),
                    "transposed": x.T.contiguous().T.to(dt), "3-d": x.reshape(3, 1, 8).to(dt)}.items():
        got = m(u)
        ref = (u.reshape(-1, 8).to(torch.int64)[:, perm]).to(dt).reshape(u.shape)
        assert got.dtype == dt and torch.equal(got, ref), name
    assert torch.equal(m(x[0].to(dt)), want[0]) and tuple(m(torch.zeros(0, 8, dtype=dt)).shape) == (0, 8)


def test_the_torch_module_refuses_sparse_inputs_and_weights_beyond_the_inputs_dtype(sides):
    """``to_torch(model)(sparse)`` raised torch's RuntimeError (copy_ between dense and sparse); a
    float64 module with the weight ``2^200`` ran a float32 input with that weight as ``inf``."""
    mod = to_torch(sides["model"])
    u = torch.tensor([[[2.0, 3.0], [5.0, 7.0]]], dtype=torch.float64)
    with pytest.raises(IRError, match=r"input: expected a dense tensor, found a torch\.sparse_coo tensor"):
        mod(u.to_sparse())
    assert mod(u).tolist() == [[[11.0, 7.0], [0.0, 0.0]]]
    big = to_torch(_gate(2**200))
    x = torch.tensor([[1.0], [2.0**-100]])
    with pytest.raises(CompileError, match=r"W: a finite float64 weight is beyond the range of float32, where this input runs"):
        big(x)
    assert big(x.double()).tolist() == [[2.0**200], [1.0]]  # (2^200·u) ⊙ u
    with torch.no_grad():
        assert to_torch(_gate(2**100))(x).tolist() == [[2.0**100], [2.0**-100]]  # within float32's range: runs


def _bbstar_with(v: object) -> object:
    """A BB* element of size 4 whose first factor has the entry ``v`` (the rest identities)."""
    from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, bbstar_strides

    st = bbstar_strides(4)
    first = ButterflyFactor(4, st[0], (v, 1), (0, 0), (0, 0), (1, 1))
    return BBStar(4, (first, *(ButterflyFactor(4, s, (1, 1), (0, 0), (0, 0), (1, 1)) for s in st[1:])))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("v", [10**400, -(2**1024), Fraction(10**400, 3)], ids=["10^400", "-2^1024", "10^400/3"])
def test_butterfly_entries_beyond_float64_are_an_irerror(dtype, v):
    """``compile_numpy``/``compile_torch`` raised OverflowError ("int too large to convert to float")."""
    from symverify.kaleidoscope import compile_numpy, compile_torch

    bb = _bbstar_with(v)
    for make in (lambda: compile_numpy(bb, dtype=dtype), lambda: compile_torch(bb, dtype=dtype)):
        with pytest.raises(IRError, match=r"butterfly entry .* is beyond the range of float64"):
            make()
    assert compile_numpy(bb, "mod", p=7).apply([[1, 2, 3, 4]]).tolist() == [[(v * 1) % 7 if isinstance(v, int) else
                                                                            v.numerator * pow(v.denominator, -1, 7) % 7, 2, 3, 4]]


@pytest.mark.parametrize("params", [None, {"a": 2**200}])
def test_butterfly_entries_beyond_float32_are_an_irerror(params):
    """``2^200`` (or a parameter of that value) in a float32 program or module became ``inf`` with
    only numpy's RuntimeWarning; float64 holds it."""
    from symverify.kaleidoscope import compile_numpy, compile_torch
    from symverify.kernel.ir.scalar import sym

    bb = _bbstar_with(2**200 if params is None else sym("a"))
    with pytest.raises(IRError, match=r"butterfly stage of stride 2: entry \[0, 0, 0\] of its twiddles .* beyond the range of float32"):
        compile_numpy(bb, dtype="float32", params=params)
    with pytest.raises(IRError, match=r"entry \[0, 0, 0\] of its twiddles \(1\.6069380442589903e\+60\) is beyond the range of float32"):
        compile_torch(bb, dtype="float32", params=params)
    x = [[1.0, 2.0, 3.0, 4.0]]
    assert compile_numpy(bb, params=params).apply(x).tolist() == [[2.0**200, 2.0, 3.0, 4.0]]
    assert compile_torch(bb, params=params)(torch.tensor(x, dtype=torch.float64)).tolist() == [[2.0**200, 2.0, 3.0, 4.0]]


@pytest.mark.parametrize("value", ["ture", "2", "enabled"])
def test_an_unknown_cuda_graphs_setting_is_an_error_not_off(monkeypatch, value):
    """``SYMVERIFY_CUDA_GRAPHS=ture`` left CUDA graphs off without a word."""
    from symverify.executors import cuda_graph

    monkeypatch.setenv("SYMVERIFY_CUDA_GRAPHS", value)
    with pytest.raises(UsageError, match=r"SYMVERIFY_CUDA_GRAPHS: expected 1, true, yes or on \(replay CUDA graphs\), 0, false, "
                                         r"no or off \(run eagerly\), or empty \(run eagerly\), found '" + value + "'"):
        cuda_graph.enabled()
    for off in ("", " 0", "OFF", "no"):
        monkeypatch.setenv("SYMVERIFY_CUDA_GRAPHS", off)
        assert cuda_graph.enabled() is False
    monkeypatch.setenv("SYMVERIFY_CUDA_GRAPHS", " Yes ")
    assert cuda_graph.enabled() is True


@pytest.mark.parametrize("size, found", [(-1, "-1"), (0, "0"), (float("nan"), "nan"), (1e6, "1000000.0"), (True, "True"), ("8", "'8'")])
def test_plot_model_sizes_must_be_positive_finite_inches(sides, size, found):
    """``width=-1`` or NaN raised matplotlib's ValueError, ``1e6`` its ValueError only at ``savefig``
    (2^23 pixels), and ``0`` was silently the default size."""
    pytest.importorskip("matplotlib")
    from symverify.viz import plot_model

    for name in ("width", "height"):
        with pytest.raises(UsageError, match=rf"plot_model: {name} must be None \(sized by the content\) or inches in \(0, 500\], found {re.escape(found)}"):
            plot_model(sides["model"], **{name: size})
    fig = plot_model(sides["model"], width=7, height=4.5)
    assert tuple(fig.get_size_inches()) == (7.0, 4.5)


def test_plot_titles_must_be_text(sides):
    """``title=5`` raised AttributeError ('int' object has no attribute 'splitlines')."""
    pytest.importorskip("matplotlib")
    from symverify.kaleidoscope import permutation_to_kaleidoscope
    from symverify.viz import plot_butterfly, plot_model, plot_weights

    for make in (lambda t: plot_model(sides["model"], title=t), lambda t: plot_weights(sides["model"], 0, title=t),
                 lambda t: plot_butterfly(permutation_to_kaleidoscope([1, 0]), title=t)):
        with pytest.raises(UsageError, match=r"title: expected a str, found int 5"):
            make(5)
        fig = make("my title")
        assert "my title" in [o.get_text() for o in fig.findobj(lambda o: hasattr(o, "get_text"))]


@pytest.mark.parametrize("backend", ["torch", "exact", "modular"])
@pytest.mark.parametrize("u, message", [
    (np.array([["2020-01-01"] * 2] * 2, dtype="datetime64[D]"), r"model input: expected real numbers, found a datetime64\[D\] array"),
    (np.array([[1, 2], [3, 4]], dtype="timedelta64[s]"), r"model input: expected real numbers, found a timedelta64\[s\] array"),
    (np.ma.masked_array([[1, 2], [3, 4]], mask=[[1, 0], [0, 0]]), r"model input: a masked array; .* fill them first"),
], ids=["datetime64", "timedelta64", "masked"])
def test_dates_and_masked_arrays_are_refused(sides, backend, u, message):
    """The float backend read dates as days since 1970 (2020-01-01 as 18262), durations as seconds,
    and a masked entry as the value under its mask, without a word."""
    with pytest.raises(IRError, match=message):
        execute(sides["model"], u, backend=backend)


def test_text_and_symbols_in_float_inputs(sides):
    """A numpy array of text ``'a'`` raised numpy's ValueError, and a symbol TypeError from
    ``float()``; text that is a rational is read as the exact backends read it."""
    from symverify.kernel.ir.scalar import sym

    m = sides["model"]
    with pytest.raises(IRError, match=r"model input entry \[0, 1\]: expected a rational such as '3' or '-1/2', found 'a'"):
        execute(m, np.array([["2", "a"], ["3", "4"]]), backend="torch")
    with pytest.raises(IRError, match=r"model input entry \[1, 0\]: the symbolic value Sym\('x'\) has no float value"):
        execute(m, [[1, 2], [sym("x"), 4]], backend="torch")
    with pytest.raises(IRError, match=r"model input entry \[0, 0\]: expected an exact value .* found bytes"):
        execute(m, np.array([[b"1", b"2"], [b"3", b"4"]]), backend="torch")
    want = execute(m, [[Fraction(1, 3), 2], [3, 4]], backend="torch")
    assert torch.equal(execute(m, np.array([["1/3", "2"], ["3", "4"]]), backend="torch"), want)
    assert want[0, 0].item() == 1 / 3 * 2 + 3


@pytest.mark.parametrize("out", [5, None, "", b"r.html"])
def test_write_report_needs_a_path(tmp_path, out):
    """``write_report(run, 5)`` raised TypeError from pathlib; ``""`` tried to write the folder ``.``."""
    pytest.importorskip("matplotlib")
    from symverify.viz import write_report

    run = {"scripts": [{"name": "s", "result": {"instances": [{"name": "i", "verdict": "proved", "resources": {"w": 1}}]}}]}
    with pytest.raises(UsageError, match=r"write_report: out_path must be a file path \(a non-empty str or Path\), found"):
        write_report(run, out)
    assert write_report(run, tmp_path / "r.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX ownership")
def test_the_native_folder_is_made_private_and_another_users_is_not_used(monkeypatch, tmp_path):
    """A library is loaded from the cache and runs in the process: a group- or world-writable
    ``native`` folder let another user replace a library (and its digest)."""
    monkeypatch.setattr(_native, "torch_addcmul_fuses", lambda: True)
    monkeypatch.setenv("SYMVERIFY_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CC", "false")  # no build needed to check the folder
    folder = tmp_path / "native"
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)
    assert _native.load("fpt_open_folder", SOURCE) is None  # the compiler fails, after the folder check
    assert folder.stat().st_mode & 0o777 == 0o755
    if os.getuid() == 0:  # root can give the folder away: another user's folder is refused
        os.chown(folder, 12345, -1)
        assert _native.load("fpt_foreign_folder", SOURCE) is None
        assert "belongs to another user (uid 12345)" in (_native.why_not("fpt_foreign_folder") or "")


def test_concurrent_calls_give_the_sequential_bits():
    """A call that found the model's compiled program busy (another thread running it) ran the
    generic layer loop, whose dense projections sum in another order: the same input gave
    different last bits depending on the other threads (hundreds of 1200 calls here)."""
    import random
    import threading

    rng = random.Random(0)
    n, d = 8, 16
    layers = tuple(Layer.make(n, d, W=Grid.from_rows([[Fraction(rng.randint(-50, 50), 37) for _ in range(d)] for _ in range(d)]),
                              h=Grid.from_rows([[1] * d] + [[0] * d] * (n - 1))) for _ in range(4))
    m = Model(n, d, n, d, layers)
    u = torch.randn(3, n, d, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    ref = execute(m, u, backend="torch")
    bad: list[float] = []

    def work() -> None:
        for _ in range(150):
            y = execute(m, u, backend="torch")
            if not torch.equal(y, ref):
                bad.append(float((y - ref).abs().max()))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert bad == []

"""Device check: correctness of the float and modular executors on the GPU, throughput, bandwidth.

Run ``python benchmarks/gpu_check.py [--quick] [--device cuda]`` on a machine with a GPU; without
CUDA it runs on the CPU and says so. It exits 1 when any correctness check fails.

Correctness (each on the device, against exact evaluation or the CPU):

1. compiled models (``symverify.compiler``, dense and kaleidoscope) and hand-built synthetic ones:
   :func:`~symverify.executors.numeric_check` in float64, float32 and bfloat16 (every point within
   its running error bound), :func:`~symverify.executors.modular_eval` equal to
   :class:`~symverify.kernel.semantics.rings.ModRing` evaluation, circuits likewise;
2. a large compiled-like model on {−1, 1} inputs, where every value stays in {−1, 1}, so float64
   must be exact: the device output equals the CPU output bit for bit and, reduced mod p, the
   device's modular output; the ``to_torch`` module on the device in float64 and float32 equals
   it too;
3. zoology BaseConv layers converted by ``from_zoology`` (pair form): ``numeric_check`` on the
   device in float64 and float32, the float32 run checked to be the *fused* one (one operation per
   zoology layer, :mod:`symverify.executors.zoology_native`) and within its error bound of the exact
   result, and ``execute`` equal to zoology's own forward and to the paper layers on the device.
   With ``ZOOLOGY_SRC`` pointing at a checkout of HazyResearch/zoology (``einops`` and ``pydantic``
   installed), the repository's ``zoology.mixers.base_conv.BaseConv`` with the same state dict is
   the forward compared against, in float64 and float32; without it the local re-implementation
   is, and the script says so.
4. Hyena and H3 modules (local zoology forms) through ``gated_from_zoology``: proved, and the direct
   model on the device within float error of the module's own forward there.

Throughput per path (points/s, layer-cells/s) and the *effective* memory bandwidth, counting the
minimum traffic of one read and one write of the state per layer (``2·B·N'·d'·8`` bytes), as a
stated fraction of the bandwidth of a plain device copy measured in the same run, for the
executor's paths, the fused zoology layer and ``compile_torch`` butterflies.

Timing waits for the device (``synchronize(device)`` before reading the clock), and TF32 is pinned
off before anything runs (``torch.backends.cuda.matmul.allow_tf32 = False``, cuDNN likewise,
``set_float32_matmul_precision("highest")``): TF32 matmuls round to 10-bit mantissas, which the
float32 error bounds do not allow for. On a machine without a GPU every check runs on the CPU and
the script says so (the throughput rows then use the quick sizes).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from symverify.compiler import compile as compile_circuit
from symverify.executors import (
    DEFAULT_PRIME,
    ZoologyBaseConv,
    execute,
    from_zoology,
    modular_eval,
    numeric_check,
    to_torch,
)
from symverify.executors.synthetic import dense_model, impulse_model
from symverify.executors.torch_float import run_model
from symverify.kernel.engines.numbers import float_numbers, mod_numbers
from symverify.kernel.engines.plan import model_plan
from symverify.kernel.engines.torch_modular import run_model_mod
from symverify.kernel.ir.baseconv import Model
from symverify.kernel.semantics.evaluate import eval_circuit, eval_model
from symverify.kernel.semantics.rings import ModRing
from symverify.library import product_tree, random_circuit, walsh_hadamard

FAILURES: list[str] = []


def synchronize(device: torch.device) -> None:
    """Wait until the device has finished the work queued so far (a no-op on the CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def pin_precision() -> str:
    """TF32 off for matmuls and convolutions, full float32 matmul precision; returns what was set."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    return (f"TF32 off (cuda.matmul.allow_tf32={torch.backends.cuda.matmul.allow_tf32}, "
            f"cudnn.allow_tf32={torch.backends.cudnn.allow_tf32}, float32 matmul precision "
            f"{torch.get_float32_matmul_precision()!r})")


def zoology_repo() -> tuple[Any, str]:
    """zoology's own BaseConv class when ``ZOOLOGY_SRC`` names a checkout, else None; and a note."""
    src = os.environ.get("ZOOLOGY_SRC")
    if not src:
        return None, "ZOOLOGY_SRC is not set: the local re-implementation ZoologyBaseConv is the reference"
    sys.path.insert(0, src)
    try:
        from zoology.mixers.base_conv import BaseConv
    except Exception as e:  # an optional peer: reported, not raised
        return None, f"ZOOLOGY_SRC={src}: cannot import zoology.mixers.base_conv ({type(e).__name__}: {e}); local reference used"
    return BaseConv, f"reference: zoology.mixers.base_conv.BaseConv from {src}"


def check(ok: bool, what: str) -> None:
    print(f"  [{'ok' if ok else 'FAIL'}] {what}")
    if not ok:
        FAILURES.append(what)


def small_suite(device: torch.device) -> None:
    print("1. numeric and modular checks on compiled and hand-built models")
    circuits = [walsh_hadamard(4, 2), product_tree(4), random_circuit(2, 2, 10, 4, seed=1)]
    objs: list[Any] = list(circuits)
    for c in circuits:
        for method in ("dense", "kaleidoscope"):
            objs.append(compile_circuit(c, method).model)
    objs += [impulse_model(64, 8, 12, n=48, d=6, seed=2), dense_model(32, 4, 3, seed=3)]
    rng = np.random.default_rng(0)
    p = DEFAULT_PRIME
    for obj in objs:
        name = getattr(obj, "name", "") or type(obj).__name__
        u = rng.integers(-3, 4, size=(4, obj.n, obj.d)).tolist()
        for dtype in ("float64", "float32", "bfloat16"):
            chk = numeric_check(obj, u, dtype=dtype, device=device)
            check(chk.ok, f"{name}: {chk}")
        pts = torch.randint(0, p, (4, obj.n, obj.d), generator=torch.Generator().manual_seed(1))
        got = modular_eval(obj, pts.to(device), p).cpu()
        run = eval_model if isinstance(obj, Model) else eval_circuit
        want = [run(obj, pts[b].tolist(), ModRing(p)) for b in range(4)]
        check(got.tolist() == want, f"{name}: modular_eval on {device} = ModRing (p = 2^31 − 1)")


def large_exactness(device: torch.device, quick: bool) -> None:
    print("2. large compiled-like model: float64 exact on integer data, device = CPU = modular")
    nn, dd, L, B = (1024, 32, 16, 4) if quick else (4096, 64, 48, 8)
    m = impulse_model(nn, dd, L, seed=7)
    u = torch.randint(0, 2, (B, nn, dd), generator=torch.Generator().manual_seed(3)) * 2 - 1
    cpu = execute(m, u, backend="torch")
    for path in ("auto", "sparse", "direct"):
        dev = execute(m, u.to(device), backend="torch", device=device, path=path).cpu()
        check(torch.equal(dev, cpu), f"impulse {nn}×{dd} L={L}: {path} on {device} equals CPU bit for bit")
    fft = execute(m, u.to(device), backend="torch", device=device, path="fft").cpu()
    check(bool((fft - cpu).abs().max() < 1e-6), f"impulse {nn}×{dd} L={L}: fft on {device} within 1e-6 of the exact integers")
    mod = execute(m, u.to(device), backend="modular", device=device).cpu()
    check(torch.equal(mod, cpu.long() % DEFAULT_PRIME), f"impulse {nn}×{dd} L={L}: modular on {device} = float result mod p")
    for dtype in (torch.float64, torch.float32):
        module = to_torch(m, device=device, dtype=dtype)
        with torch.no_grad():
            got = module(u.to(device, dtype)).cpu()
        check(got.dtype == dtype and torch.equal(got, cpu.to(dtype)),
              f"impulse {nn}×{dd} L={L}: to_torch module on {device} in {dtype} equals the exact result")


def _repo_stack(cls: Any, local: torch.nn.Sequential, d: int, n: int, dtype: torch.dtype, device: torch.device) -> Any:
    """zoology's own modules holding the local stack's weights (state dicts have the same keys)."""
    mods = []
    for z in local:
        mod = cls(d_model=d, l_max=n, kernel_size=-1, implicit_long_conv=False, use_act=False)
        mod.load_state_dict(z.state_dict())
        mods.append(mod)
    return torch.nn.Sequential(*mods).to(device=device, dtype=dtype)


def zoology_layers(device: torch.device) -> None:
    print("2b. zoology BaseConv layers (from_zoology, pair form) on the device")
    cls, note = zoology_repo()
    print(f"  {note}")
    n, d = 64, 8
    g = torch.Generator().manual_seed(11)
    zs = torch.nn.Sequential(*(ZoologyBaseConv(d, n) for _ in range(2)))
    with torch.no_grad():
        for prm in zs.parameters():
            prm.copy_(torch.randint(-3, 4, prm.shape, generator=g) / 16)
    m = from_zoology(zs)
    u = torch.randint(-2, 3, (4, n, d), generator=torch.Generator().manual_seed(12))
    checks = {}
    for dtype in ("float64", "float32"):
        chk = numeric_check(m, u.tolist(), dtype=dtype, device=device)
        checks[dtype] = chk
        check(chk.ok, f"zoology pair form {n}×{d}, 2 layers, {dtype} on {device}: {chk}")
    from symverify.executors.zoology_native import native_layers

    fused = native_layers(model_plan(m, float_numbers(None)).on(device, torch.float32), m)
    check(fused is not None and len(fused) == 2, f"zoology pair form in float32 on {device} runs fused (one operation per zoology layer)")
    exact = torch.tensor(execute(m, u, backend="exact").astype(float), dtype=torch.float64)
    got32 = execute(m, u.to(device), backend="torch", device=device, dtype="float32")
    err32 = float((got32.cpu().double() - exact).abs().max())
    check(got32.dtype == torch.float32 and err32 <= checks["float32"].tolerance,
          f"zoology fused float32 on {device}: max |error| {err32:.3g} ≤ its bound {checks['float32'].tolerance:.3g}")
    for dtype, tol in ((torch.float64, 1e-9), (torch.float32, 1e-4)):
        ref = zs if cls is None else _repo_stack(cls, zs, d, n, dtype, device)
        with torch.no_grad():
            want = ref.to(device=device, dtype=dtype)(u.to(device, dtype)).detach()
        got = execute(m, u.to(device), backend="torch", device=device, dtype=str(dtype).removeprefix("torch."))
        scale = max(1.0, float(want.abs().max()))
        check(bool((got - want).abs().max() <= tol * scale),
              f"zoology pair form on {device} = {'the repository' if cls is not None else 'the local'} forward ({dtype}, within {tol:g}·max|y|)")
    want = zs.to(device=device, dtype=torch.float64)(u.to(device).double()).detach()
    got = execute(m, u.to(device), backend="torch", device=device)
    paper = execute(m, u.to(device), backend="torch", device=device, path="fft")  # the paper layers, not the fused run
    check(bool(torch.allclose(got, paper, rtol=1e-12, atol=1e-12)), f"zoology fused run on {device} = its paper layers (float64)")


def _timer(device: torch.device) -> Callable[[Callable[[], object]], float]:
    def timed(fn: Callable[[], object], reps: int = 5) -> float:
        fn()
        synchronize(device)
        best = float("inf")
        for _ in range(reps):
            synchronize(device)
            t = time.perf_counter()
            fn()
            synchronize(device)
            best = min(best, time.perf_counter() - t)
        return best

    return timed


def _bench(device: torch.device, kind: str, nn: int, dd: int, L: int, B: int) -> None:
    timed = _timer(device)
    m = impulse_model(nn, dd, L, seed=5) if kind == "impulse" else dense_model(nn, dd, L, seed=5, structured=True)
    x = (torch.randint(0, 2, (B, nn, dd), generator=torch.Generator().manual_seed(0)) * 2 - 1).to(device)
    fplan, mplan = model_plan(m, float_numbers(None)), model_plan(m, mod_numbers(DEFAULT_PRIME, None))
    xd, xm = x.double(), x % DEFAULT_PRIME
    state_bytes = B * nn * dd * 8
    copy_bw = _copy_bandwidth(device, xd)
    print(f"  {kind} N'={nn} d'={dd} L={L} B={B}: device copy {copy_bw / 1e9:.1f} GB/s")
    paths = {"auto": lambda: run_model(fplan, xd, "auto"), "fft": lambda: run_model(fplan, xd, "fft")}
    if kind == "impulse":
        paths["sparse"] = lambda: run_model(fplan, xd, "sparse")
    if kind == "impulse" or nn <= 2048:  # dense kernels mod p run as O(N'²) blocked products
        paths["modular"] = lambda: run_model_mod(mplan, xm, "auto")
    for name, fn in paths.items():
        sec = timed(fn)
        bw = 2 * state_bytes * L / sec
        print(f"    {name:>8}: {sec * 1e3:9.2f} ms  {B / sec:10.3g} points/s  {B * L * nn * dd / sec:10.3g} layer-cells/s"
              f"  effective {bw / 1e9:7.1f} GB/s ({100 * bw / copy_bw:5.1f}% of copy)")


def _copy_bandwidth(device: torch.device, t: torch.Tensor) -> float:
    """Bytes per second of a plain device copy of ``t`` (one read, one write)."""
    buf = torch.empty_like(t)
    return 2 * t.numel() * t.element_size() / _timer(device)(lambda: buf.copy_(t), reps=20)


def _bench_zoology(device: torch.device, n: int, d: int, B: int) -> None:
    """The fused zoology layer (float32 and float64): state traffic against a copy of the same size."""
    timed = _timer(device)
    z = ZoologyBaseConv(d, n)
    with torch.no_grad():
        for prm in z.parameters():
            prm.copy_(torch.randint(-3, 4, prm.shape, generator=torch.Generator().manual_seed(4)) / 16)
    m = from_zoology(z)
    for dtype in (torch.float32, torch.float64):
        x = torch.randn(B, n, d, dtype=dtype, generator=torch.Generator().manual_seed(5)).to(device)
        copy_bw = _copy_bandwidth(device, x)
        name = str(dtype).removeprefix("torch.")
        sec = timed(lambda x=x, name=name: execute(m, x, backend="torch", device=device, dtype=name))
        bw = 2 * x.numel() * x.element_size() / sec
        print(f"  zoology fused layer L={n} d={d} B={B} {name}: {sec * 1e3:8.3f} ms  effective {bw / 1e9:7.1f} GB/s "
              f"= {100 * bw / copy_bw:5.1f}% of the measured copy ({copy_bw / 1e9:.1f} GB/s)")


def _bench_butterfly(device: torch.device, N: int, B: int) -> None:
    """compile_torch on one random BB* element: state traffic per stage against a copy."""
    from symverify.kaleidoscope import compile_torch
    from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, bbstar_strides

    rng = np.random.default_rng(N)
    bb = BBStar(N, tuple(ButterflyFactor(N, s, *map(tuple, rng.integers(-3, 4, size=(4, N // 2)).tolist())) for s in bbstar_strides(N)))
    for dtype in ("float32", "float64"):
        mod = compile_torch(bb, dtype=dtype, device=device)  # type: ignore[arg-type]
        x = torch.randn(B, N, dtype=getattr(torch, dtype)).to(device)
        copy_bw = _copy_bandwidth(device, x)
        sec = _timer(device)(lambda mod=mod, x=x: mod(x))
        bw = 2 * x.numel() * x.element_size() * len(mod.strides) / sec
        print(f"  compile_torch BB* N={N} B={B} {dtype}: {sec * 1e3:8.3f} ms  effective {bw / 1e9:7.1f} GB/s over "
              f"{len(mod.strides)} stages = {100 * bw / copy_bw:5.1f}% of the measured copy ({copy_bw / 1e9:.1f} GB/s)")


def throughput(device: torch.device, quick: bool) -> None:
    print("3. throughput and effective bandwidth (wall-clock, best of 5, the device synchronized around each run)")
    configs = [("impulse", 2048, 64, 16, 4), ("dense", 512, 64, 2, 4)] if quick else [
        ("impulse", 8192, 256, 64, 16), ("impulse", 65536, 64, 32, 8), ("dense", 8192, 256, 4, 16), ("dense", 1024, 256, 8, 64)]
    for cfg in configs:
        _bench(device, *cfg)
    for n, d, B in [(1024, 16, 4)] if quick else [(4096, 64, 16), (16384, 64, 8)]:
        _bench_zoology(device, n, d, B)
    for N, B in [(1024, 16)] if quick else [(4096, 256), (16384, 64)]:
        _bench_butterfly(device, N, B)


def gated_modules(device: torch.device) -> None:
    """Hyena and H3 (local zoology forms) read exactly by ``gated_from_zoology``: the direct model on
    the device against the module's own forward on the device, float64 and float32."""
    import symverify as sv
    from symverify.executors.zoology_gated import ZoologyH3, ZoologyHyena

    print("2c. Hyena and H3 modules (gated_from_zoology, direct model) on the device")
    n, d = 256, 8
    for name, make in (("Hyena", lambda: ZoologyHyena(d, n)), ("H3", lambda: ZoologyH3(d, 8, n))):
        torch.manual_seed(5)
        mod = make().double().eval()
        circuit, compiled = sv.gated_from_zoology(mod, n)
        check(sv.verify(circuit, compiled).verdict.value == "proved", f"{name} {n}×{d}: direct model proved (exact weights)")
        u = torch.randn(4, n, d, dtype=torch.float64, generator=torch.Generator().manual_seed(6))
        with torch.no_grad():
            want = mod.to(device)(u.to(device))
        for dtype, tol in (("float64", 1e-9), ("float32", 1e-4)):
            got = execute(compiled.model, u.to(device), backend="torch", dtype=dtype, device=device).double()
            rel = float((got - want).abs().max()) / max(1.0, float(want.abs().max()))
            check(rel <= tol, f"{name} {n}×{d} on {device} in {dtype}: relative difference to the module's forward {rel:.1e} ≤ {tol:.0e}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args(argv)
    device = torch.device(args.device)
    print(pin_precision())
    if device.type == "cuda" and not torch.cuda.is_available():
        print(f"note: CUDA is not available to torch {torch.__version__}; running every check on the CPU instead")
        device = torch.device("cpu")
    elif device.type == "cuda":
        print(f"device: {torch.cuda.get_device_name(device)} (torch {torch.__version__}, CUDA {torch.version.cuda})")
    small_suite(device)
    large_exactness(device, args.quick)
    zoology_layers(device)
    gated_modules(device)
    if device.type == "cpu" and not args.quick:
        print("note: on the CPU the throughput part uses the --quick sizes (the full sizes are for a GPU)")
    throughput(device, args.quick or device.type == "cpu")
    if FAILURES:
        print(f"FAIL: {len(FAILURES)} check(s) failed")
        return 1
    print("PASS: every correctness check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

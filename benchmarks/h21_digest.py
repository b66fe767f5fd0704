"""Digest of every model the Theorem H.21 compiler emits in the proof scripts that use it.

Run ``python benchmarks/h21_digest.py --json OUT [--compare OLD.json] [--samples-only]``.

Every call of :func:`symverify.compiler.kaleidoscope.compile_kaleidoscope` made while the five
proof scripts ``thm_h21_sweep``, ``thm_h21_general``, ``cor_h22_retnet``, ``h3_direct`` and
``hyena_direct`` run (full tier, in this process), and a fixed set of ``random_circuit`` /
``wired_circuit`` samples compiled directly, is recorded as the sha256 of ``dumps(model)``,
``dumps(certificate)`` and of the resources and bounds (``repr`` of the sorted items), in call order.
With ``--compare`` it prints how many digests are equal to an earlier ``--json`` of this script and
exits 1 on any difference: a compiler change that claims byte-identical output is checked with it
(run it on the tree before the change and on the tree after).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import runpy
import sys
from typing import Any

import symverify.compiler.kaleidoscope as kal
from symverify import library as lib
from symverify.ir.serialize import dumps

SCRIPTS = ["thm_h21_sweep", "thm_h21_general", "cor_h22_retnet", "h3_direct", "hyena_direct"]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def digest(out: Any) -> dict[str, str]:
    return {"model": _sha(dumps(out.model)), "certificate": _sha(dumps(out.certificate)),
            "resources": _sha(repr(sorted(out.resources.items()))), "bounds": _sha(repr(sorted(out.bounds.items())))}


def samples() -> list[Any]:
    cs = []
    for seed in range(6):
        for (n, w, depth, outs) in ((3, 3, 24, 4), (4, 8, 40, 3), (2, 16, 64, 2)):
            cs.append(lib.random_circuit(n, w, depth, outs, seed=seed, num_outputs=outs))
        for (n, depth, kind) in ((8, 3, "random"), (16, 4, "random"), (32, 3, "random")):
            cs.append(lib.wired_circuit(n, depth, kind, seed=seed))
    cs.append(lib.walsh_hadamard(16))
    cs.append(lib.walsh_hadamard(64))
    return cs


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", required=True)
    ap.add_argument("--compare")
    ap.add_argument("--samples-only", action="store_true")
    args = ap.parse_args()
    rows: list[dict[str, str]] = []
    orig = kal.compile_kaleidoscope
    where = ["samples"]

    def recording(circuit: Any, **kw: Any) -> Any:
        out = orig(circuit, **kw)
        rows.append({"where": where[0], "circuit": circuit.name, **digest(out)})
        return out

    kal.compile_kaleidoscope = recording  # type: ignore[assignment]
    for c in samples():
        kal.compile_kaleidoscope(c)
    if not args.samples_only:
        for name in SCRIPTS:
            where[0] = name
            sys.argv = [name, "--json", "/dev/null"]
            with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
                runpy.run_module(f"proofs.{name}", run_name="__main__")
            print(f"{name}: {sum(r['where'] == name for r in rows)} models", flush=True)
    print(f"{len(rows)} models in all")
    with open(args.json, "w") as f:
        json.dump(rows, f, indent=0)
    if args.compare:
        with open(args.compare) as f:
            old = json.load(f)
        same = sum(a == b for a, b in zip(old, rows))
        print(f"compare: {same} of {len(rows)} digests equal to {len(old)} old ones")
        return 0 if same == len(rows) == len(old) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

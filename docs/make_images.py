"""Draw the pictures README.md shows (docs/images/*.png) with symverify.viz.

    python docs/make_images.py            # rewrites docs/images/occupancy.png and docs/images/benes.png
    python docs/make_images.py DIR        # draws them into DIR instead (tests/test_docs.py compares)

Needs the viz extra (pip install -e '.[viz]'); the images are committed, so README renders
without running anything.
"""

from __future__ import annotations

import sys
from pathlib import Path

import symverify as sv
from symverify.kaleidoscope import permutation_to_kaleidoscope
from symverify.viz import plot_butterfly, plot_model

OUT = Path(__file__).resolve().parent / "images"


def main(argv: list[str] | None = None) -> int:
    """Draw the pictures into ``argv[0]`` (default: docs/images, where README finds them)."""
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0]) if args else OUT
    out.mkdir(parents=True, exist_ok=True)
    c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[1][0], u[1][1]], n=2, d=2, name="readme")  # README's example
    compiled = sv.compile(c, method="kaleidoscope")
    assert sv.verify(c, compiled).proved
    _, L, _, nn, dd = compiled.model.signature
    fig = plot_model(compiled, title=f"Theorem H.21 model of y = [u00·u01 + u10, u11]: the live cells of the "
                                     f"{nn}×{dd} state after each of its {L} layers")
    fig.savefig(out / "occupancy.png", dpi=90)
    perm = [2, 5, 1, 7, 0, 4, 3, 6]
    fig = plot_butterfly(permutation_to_kaleidoscope(perm),
                         title=f"One BB* element routes the permutation {perm} (Beneš network, Dao et al. Theorem 2)")
    fig.savefig(out / "benes.png", dpi=90)
    for p in sorted(out.glob("*.png")):
        print(f"{p}: {p.stat().st_size // 1024} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main())

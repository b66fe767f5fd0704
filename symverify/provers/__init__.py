"""Provers behind :func:`symverify.kernel.verification.verify` (docs/theory.md §5).

``sides`` reads circuits, models and kaleidoscopes as polynomial maps; ``bounds`` certifies degree,
coefficient height and monomial-count bounds from structure; ``exact`` (with ``guard``),
``compositional``/``certified``, ``randomized`` (with ``modular``) and ``z3_backend`` are the
methods; ``counterexample`` finds and re-checks separating inputs; ``outcome`` holds the verdicts.
"""

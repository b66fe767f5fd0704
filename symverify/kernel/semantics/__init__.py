"""Trusted semantics: the value of a circuit and of a BaseConv model over any ring (docs/theory.md §1)."""

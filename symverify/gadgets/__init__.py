"""Hand-proved BaseConv constructions of Zoology Appendix H, as fragments with clean interfaces.

* :mod:`~symverify.kernel.gadgets.fragment`: the :class:`Fragment` type (layers, entry/exit interface,
  lazily built spec circuit), :func:`standalone` and :func:`fragment_boundaries` (certificates);
* :mod:`~symverify.gadgets.primitives`: the one/two-layer primitives of docs/appendix-h.md §2.3;
* :mod:`~symverify.gadgets.remember`: Proposition H.10 (``remember``), at most 2 layers;
* :mod:`~symverify.gadgets.compose`: Lemma H.11 (stacking with clean interfaces) and padding;
* :mod:`~symverify.gadgets.layout`: ``n×d`` input ↔ one row of channels;
* :mod:`~symverify.kernel.provers.fragment`: prove a fragment compositionally and by exact polynomials.

Nothing is imported here, so ``import symverify.gadgets.primitives`` loads only what it needs.
"""

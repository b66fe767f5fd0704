"""The H.21 compiler as a pipeline: circuits to BaseConv through kaleidoscopes (Corollary H.20, Theorem H.21).

The package's modules are the stages of the pipeline, one concern each:

* :mod:`.stages`: the layered form's stages, normalised (a linear stage before every
  multiplicative one and last), and :class:`~.stages.StagePlan`;
* :mod:`.placement`: the positions offered to each state (the layouts below);
* :mod:`.routes`: a linear stage's matrix as butterfly factors, memoised by its inputs, and the
  layers and size a route takes;
* :mod:`.size`: the stated size ``N_k`` (:func:`~.size.stated_size`), used by the planner and by
  the stated bounds alike;
* :mod:`.planner`: the pure planner; :func:`~.planner.prepare` returns a frozen
  :class:`~.planner.Prepared` whose linear stages carry their chosen routes;
* :mod:`.emit`: the plan as layers and certificate (:func:`~.emit.build_model`); it never routes.

The circuit is rewritten in layered form (:func:`~symverify.kernel.ir.layered.layered_form`, docs/theory.md §2):
linear stages ``z ↦ M·z + c`` and multiplicative stages ``[v1; v2; v3] ↦ [v1 ⊙ v2; v3]``.
Every state gets *positions* in the live vector ``z ∈ F^{N_k}`` (:mod:`symverify.compiler.layout`: position ``p``
is channel ``p % tw`` of row ``p // tw`` of block ``B0``, ``tw`` the largest power of two ``≤ d``):

* the input state: input ``i`` at :func:`~symverify.compiler.layout.track_position` (``i`` itself when ``d = tw``;
  otherwise after the two gather layers);
* a state the next linear stage reads: each value at the start of an aligned block as large as
  the number of rows that read it (:func:`~symverify.kaleidoscope.selection.preferred_positions`),
  so that stage's copy network is ``⌈log2 fan-out⌉`` factors; a value computed by a row of two
  entries may get a block of at least 2 so that its partner ``p ⊕ 1`` is free and the combine fits
  at stride 1 (:func:`~.placement._paddings`); a stage of one butterfly factor keeps its pairs in place
  instead, unless the next stage is then cheaper from aligned blocks (:func:`~.planner._reconsider_butterflies`);
* a multiplicative stage with ``k`` products: ``v1`` and ``v3`` placed as above for the stage
  after it (interleaved, ``v1`` first or ``v3`` first), or at the read-out cells when that stage is
  the last one and copies each value once (which then costs nothing); ``v2`` at ``v1 + k_rows·tw``
  with ``k_rows`` the smallest shift that meets no ``v1`` or ``v3`` position; the products stay
  where ``v1`` is;
* the **compact** layout, offered beside every layout above: values in order (``v3``, then
  ``v1``, then ``v2`` an even shift above ``v1``'s region), two-entry rows at even positions
  with their partner free (:func:`~.placement._compact`). It spans ``≤ 2(k + m) + tw + 1 ≤ 2w + tw + 1``
  positions for a level of ``k`` products and ``m`` other values and never doubles the selection
  size, which bounds every stage's size (``N_k ≤ 4·2^⌈log2 w⌉``, :mod:`.kaleidoscope`);
* the last state: output ``k`` at :func:`~symverify.compiler.layout.track_position` (then the two scatter layers
  when ``d ≠ tw``, left out when every output already sits at its model cell: ``k mod d < tw``, nothing
  else live; :func:`.emit._outputs_in_place`). A final copy stage is added when the last stage is multiplicative.

**Choosing among the layouts** (``plan``, :func:`~.planner.plan_stages`), always among those whose stage
fits the stated size: ``"exact"`` (:func:`~.planner._plan_exact`) builds the route of every stage for
every pair of its input and output layouts and takes the sequence with the fewest layers in all
(a shortest path along the chain of linear stages). It offers more layouts than the greedy
plan: the read-out layout next to the others, a *packed* one (:func:`~.placement.packed_product_layout`) and,
for each input layout, one whose positions let the direct route through
(:func:`~.placement._broadcast_options`: every operand broadcast by bit-fixing straight to its slot, ``n``
factors and the combine, where a copy network and a Beneš permutation take ``2n`` to ``4n − 1``;
before the last multiplicative stage, when the last stage copies each value once, also with every
value at its read-out cell or that cell ``⊕ s`` for one stride ``s``, so the last stage is one
butterfly factor);
``"greedy"`` (:func:`~.planner._plan_greedy`) goes stage by stage by estimated factor counts
(:func:`~.planner._cheapest`: this stage and the next), takes the read-out layout whenever it fits, and
builds each route once. The exact plan tries every choice the greedy one can make, so it is never
more layers (it may take a larger ``N_k``, within the stated size, to save layers); ``"auto"``
(the default) is exact when ``N_k·(Δ + 1) ≤`` :data:`~.planner.EXACT_PLAN_WORK` = 768 (``w ≤ 16`` up to
``Δ = 11``, ``w ≤ 32`` up to ``Δ = 5``, ``w ≤ 64`` up to ``Δ = 2``: the
exact plan counts each route's layers from its shape without building it, so this is where its
time stays within a few seconds) and greedy otherwise.

**Linear stage** (Corollary H.20 = Theorem H.19 stage by stage, then Lemma H.18): its rows
become a sparse matrix on positions, which becomes butterfly factors: the identity (0 layers),
a diagonal, one butterfly factor, a scaled partial permutation (Beneš routing, Theorem 2, or the
direct broadcast below when that is fewer factors) or, for
rows of at most two entries (every stage here: gates have two arguments), the selection route
(:mod:`symverify.kaleidoscope.selection`: the operands broadcast straight to their slots, or a
copy network, one Beneš permutation and one combine);
the general ``(BB*)^5`` route (Theorem 3) remains for rows of more entries. Every factor is a
Lemma H.16 gadget. The constants ``c`` of the stage are added by the ``b2`` bias of the layer
that closes it (the sum layer, or ``M1`` below).

**Multiplicative stage** (Proposition H.10 in spirit; :func:`~.emit.mul_layers`): ``M1`` (the closing
conv layer of the linear stage, completing its pending sum and adding its constants) keeps
``v1`` and ``v3`` in ``B0`` and moves ``v2`` to ``B1``; ``M2 = (u·I) ⊙ (h ⊛ u + mask(v3))`` with
``h`` reading ``B1`` ``k_rows`` rows below, so a ``v1`` cell gets ``v1·v2``, a ``v3`` cell
``v3·(0 + 1)`` (its read meets a ``B1`` cell outside ``v2``, a gap row or ``B2``, all 0) and
every other cell 0. That is 2 layers, the first of which is the linear stage's closing layer,
proved once for all inputs and constants by ``proofs/thm_h21_product_gadget.py``. The
gadget of :mod:`symverify.gadgets.remember` is not used: it expects ``f`` in other channels of
the *same* rows as ``x``, while here every operand is on the one track.

Every gadget is pruned to the live cells (:mod:`symverify.compiler.butterfly_to_baseconv`, "Pruning").

**Certificate**: a boundary after every gadget (cells = sparse linear forms over the nodes at the
start of the stage) and after every stage (cells = single circuit nodes), so each checked stage
is one or two layers of degree ≤ 2.
"""

from __future__ import annotations

from symverify.compiler.h21.emit import Build, build_model, mul_layers  # noqa: F401 (importable by name)
from symverify.compiler.h21.placement import compact_product_layout, packed_product_layout, smallest_shift  # noqa: F401 (importable by name)
from symverify.compiler.h21.planner import EXACT_PLAN_WORK, PLANS, Prepared, plan_stages, planned_size, prepare  # noqa: F401 (importable by name)
from symverify.compiler.h21.routes import Route, StageRoute, stage_factors, stage_matrix, stage_route  # noqa: F401 (importable by name)
from symverify.compiler.h21.size import stated_size  # noqa: F401 (importable by name)
from symverify.compiler.h21.stages import StagePlan

# The public names. The other builders here are internal (the compiler calls them with its own objects,
# checked once at its entry): still importable by name, not checked for arguments of other types.
__all__ = ["StagePlan", "Build", "Prepared", "PLANS", "EXACT_PLAN_WORK", "StageRoute", "Route"]

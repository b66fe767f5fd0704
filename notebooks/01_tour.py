# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
#   symverify_expect: "PROVED"
#   symverify_refuted: 1
# ---

# %% [markdown]
# # A tour of symverify
#
# We build an arithmetic circuit, look at its measures (docs/theory.md §2), compile it into a BaseConv
# stack twice — with the dense baseline compiler and with the paper's kaleidoscope compiler
# (Theorem H.21) — and prove each compiled model equal to the circuit. Then we break one weight
# and watch the proof turn into a refutation with a counterexample.

# %%
import symverify as sv
from symverify.library import determinant

c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + u[1][0], u[1][1] * u[1][1] - 3], n=2, d=2, name="tour")
print(c)
print(sv.stats(c))

# %% [markdown]
# ## Compile and prove
# `compile` returns the model together with its stage certificate; `verify` checks the
# certificate stage by stage on fresh variables (a proof whose cost grows with the model, not
# with the output degree).

# %%
for method in ("dense", "kaleidoscope"):
    compiled = sv.compile(c, method=method)
    print(compiled)
    report = sv.verify(c, compiled)
    print(report)
    assert report.proved

# %% [markdown]
# ## What the compiled model does, as a picture
# A cell ending with a compiled object shows a compact table (signature, resources against the
# stated bounds). `plot_model` draws the occupancy map: one column per layer, one row per cell
# `(row, channel)` of the `N'×d'` state, coloured by role (from the stage certificate: the
# tracked circuit values, values carried unchanged, the gadgets' workspace), with the gadget of
# each layer in the strip underneath. Most of the state stays zero: the live values move through
# the butterfly gadgets a few cells at a time (Theorem H.21).

# %%
from symverify.viz import plot_butterfly, plot_model

compiled = sv.compile(c, method="kaleidoscope")
compiled

# %%
plot_model(compiled)

# %% [markdown]
# Each linear stage is a kaleidoscope matrix; a permutation is routed through one BB* element
# (Beneš network, Dao et al. Theorem 2): every pair of a factor either passes straight or crosses.

# %%
from symverify.kaleidoscope import permutation_to_kaleidoscope

plot_butterfly(permutation_to_kaleidoscope([5, 2, 7, 0, 1, 6, 3, 4]))

# %% [markdown]
# ## A mutation is refuted, with a re-checked counterexample

# %%
from dataclasses import replace

model = sv.compile(c, method="dense").model
layer = model.layers[-1]
(i, j), w = next(iter(layer.W.nonzero().items()))
bad_layer = replace(layer, W=layer.W.paint_cells([(i, j, w + 1)]))
bad = replace(model, layers=model.layers[:-1] + (bad_layer,))
report = sv.verify(c, bad)
print(report)
assert report.refuted
print("counterexample:", report.counterexample)

# %% [markdown]
# ## A circuit nobody tuned for: the 3×3 determinant

# %%
det3 = determinant(3)
print(sv.stats(det3))
report = sv.verify(det3, sv.compile(det3, method="kaleidoscope"))
print(report)

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
# ---

# %% [markdown]
# # Hyena and H3: from a zoology module to a proof
#
# zoology's `Hyena` mixer (in-projection, a 3-tap depthwise causal short filter, a gate, an
# implicit long filter with a skip, a second gate, the out-projection) is polynomial in its input
# once the long filter is materialised. We take a module, read its weights exactly, build the
# direct causal BaseConv (5 layers, `N' = N`, `d' = 3d`), prove it equal to the module's circuit,
# and compare the float forwards. Then the same construction with **every** weight symbolic, and
# H3. `docs/gated-convolutions.md` states the forms followed.

# %%
import matplotlib.pyplot as plt
import torch

import symverify as sv
from symverify.executors import execute
from symverify.executors.zoology_gated import ZoologyH3, ZoologyHyena

torch.manual_seed(0)
N, d = 32, 2
module = ZoologyHyena(d, N).double().eval()  # zoology.mixers.hyena.Hyena works the same way
circuit, compiled = sv.gated_from_zoology(module, N)
print(circuit.name, "gates:", circuit.size, "symbols:", len(circuit.params()))
print(compiled.model.signature)

# %% [markdown]
# The long filter comes from an MLP with sine activations and an exponential modulation — not
# polynomial, but a function of positions only, so it is materialised into `N` exact taps per channel.

# %%
from symverify.executors.zoology_gated import gated_weights_from_zoology

weights = gated_weights_from_zoology(module, N)
fig, ax = plt.subplots(figsize=(6, 2.5))
for q in range(d):
    ax.plot([float(x) for x in weights.long[0][q]], label=f"channel {q}")
ax.set_xlabel("lag k")
ax.set_title("materialised Hyena long filter h[k]")
ax.legend()
plt.show()

# %%
report = sv.verify(circuit, compiled)
print(report)

# %%
from symverify.viz import plot_model

plot_model(compiled)

# %% [markdown]
# The model's float forward (symverify's torch executor) against the module's own:

# %%
u = torch.randn(4, N, d, dtype=torch.float64)
with torch.no_grad():
    want = module(u)
got = execute(compiled.model, u, backend="torch", dtype="float64")
print("max |model − module| =", float((got - want).abs().max()))

# %% [markdown]
# ## For all weights
# With nothing given, every weight, bias and filter tap is a symbol: one proof covers every Hyena
# layer of this size, and the H.21 route (`sv.compile`) on the same circuit for comparison.

# %%
for n in (4, 64):
    out = sv.hyena_direct(n, 2)
    print(n, out.model.signature, sv.verify(sv.library.hyena(n, 2), out).verdict)
small = sv.library.hyena(4, 2)
routed = sv.compile(small, method="dense")
print("H.21 dense route at N=4:", routed.model.signature, sv.verify(small, routed).verdict)

# %% [markdown]
# ## H3
# The shift SSM pre-filters `k`, the diagonal SSM is the long filter, `q` is the second gate.

# %%
h3 = ZoologyH3(d, 4, N).double().eval()
c3, m3 = sv.gated_from_zoology(h3, N)
print(sv.verify(c3, m3))
print(sv.verify(sv.library.h3(64, 2), sv.h3_direct(64, 2)).verdict)

# %% [markdown]
# ## Where it stops
# A softmax, a normalisation or Mamba's data-dependent selection is not polynomial in the input:
# such modules are refused, naming the operation.

# %%
try:
    sv.gated_from_zoology(torch.nn.LayerNorm(2), N)
except sv.CompileError as e:
    print("refused:", e)

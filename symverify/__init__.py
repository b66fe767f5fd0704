"""symverify: machine-checked expressivity theory of BaseConv models (Zoology, Appendix H).

Build arithmetic circuits, compile them into BaseConv stacks through the constructions of
Appendix H, and prove, for the instances you run, that the model computes exactly the circuit's
polynomials::

    >>> import symverify as sv
    >>> c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
    >>> sv.stats(c).depth
    1

Heavy backends (torch, z3, python-flint) are imported only when a function needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from symverify._version import __version__
from symverify.errors import (
    BackendUnavailableError,
    CompileError,
    IRError,
    LimitError,
    NumericMismatchError,
    ProverError,
    SerializationError,
    ShapeError,
    SymverifyError,
    UsageError,
)
from symverify.ir.build import from_matrix, from_sympy
from symverify.ir.serialize import dump_file, load_file
from symverify.kernel.ir.analysis import stats
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.butterfly import BBStar, ButterflyFactor, Kaleidoscope
from symverify.kernel.ir.certificate import Certificate
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.layered import layered_form
from symverify.kernel.ir.scalar import Sym, sym

# The entry points are plain functions of the modules named here, loaded on first use so that
# `import symverify` stays fast; the imports under TYPE_CHECKING give them their real signatures
# for type checkers.
_LAZY = {
    "verify": ("symverify.kernel.verification", "verify"),
    "Report": ("symverify.kernel.verification", "Report"),
    "Verdict": ("symverify.kernel.provers.outcome", "Verdict"),
    "compile": ("symverify.compiler", "compile"),
    "Compiled": ("symverify.compiler.result", "Compiled"),
    "retnet_direct": ("symverify.compiler.retnet", "retnet_direct"),
    "gated_conv_direct": ("symverify.compiler.gated", "gated_conv_direct"),
    "hyena_direct": ("symverify.compiler.gated", "hyena_direct"),
    "h3_direct": ("symverify.compiler.gated", "h3_direct"),
    "gated_from_zoology": ("symverify.compiler.gated", "gated_from_zoology"),
    "execute": ("symverify.executors", "execute"),
    "polynomials": ("symverify.kernel.semantics.poly", "polynomials"),
    "evaluate": ("symverify.semantics.exact", "evaluate"),
    "library": ("symverify.library", None),
    "prove_forall": ("symverify.kernel.provers.forall", "prove_forall"),
    "parametric": ("symverify.parametric", None),
}

if TYPE_CHECKING:
    from symverify import library as library
    from symverify import parametric as parametric
    from symverify.compiler import compile as compile
    from symverify.compiler.gated import gated_conv_direct as gated_conv_direct
    from symverify.compiler.gated import gated_from_zoology as gated_from_zoology
    from symverify.compiler.gated import h3_direct as h3_direct
    from symverify.compiler.gated import hyena_direct as hyena_direct
    from symverify.compiler.result import Compiled as Compiled
    from symverify.compiler.retnet import retnet_direct as retnet_direct
    from symverify.executors import execute as execute
    from symverify.kernel.provers.forall import prove_forall as prove_forall
    from symverify.kernel.provers.outcome import Verdict as Verdict
    from symverify.kernel.semantics.poly import polynomials as polynomials
    from symverify.kernel.verification import Report as Report
    from symverify.kernel.verification import verify as verify
    from symverify.semantics.exact import evaluate as evaluate

__all__ = [
    "__version__",
    "Circuit",
    "Gate",
    "Op",
    "Model",
    "Layer",
    "Mode",
    "Grid",
    "Sym",
    "sym",
    "ButterflyFactor",
    "BBStar",
    "Kaleidoscope",
    "Certificate",
    "stats",
    "layered_form",
    "from_matrix",
    "from_sympy",
    "load_file",
    "dump_file",
    "SymverifyError",
    "IRError",
    "ShapeError",
    "LimitError",
    "SerializationError",
    "CompileError",
    "ProverError",
    "BackendUnavailableError",
    "NumericMismatchError",
    "UsageError",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module, attr = _LAZY[name]
        mod = importlib.import_module(module)
        value = mod if attr is None else getattr(mod, attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'symverify' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names, the lazily loaded entry points included (``dir(sv)``, ``help(sv)``, tab completion)."""
    return sorted(set(globals()) | set(__all__))

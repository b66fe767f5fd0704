"""``compile(circuit, method=...)``: circuit → BaseConv model with a stage certificate.

Methods:

* ``"dense"``: the baseline compiler of :mod:`symverify.compiler.dense` (docs/appendix-h.md §2.5): 2 layers per
  level plus layout layers, dense ``W``; simple and independent of the paper-faithful route.
* ``"kaleidoscope"``: the paper-faithful compiler (Theorem H.21 via H.19/H.20/H.18 and
  Proposition H.10), :func:`symverify.compiler.kaleidoscope.compile_kaleidoscope`, loaded on use.

Both return a :class:`~symverify.compiler.result.Compiled` (model, certificate, resources, stated
bounds). Circuits of more than :data:`~symverify.ir.limits.MAX_INPUTS` inputs, and circuits whose
model state would exceed :data:`~symverify.ir.limits.MAX_CELLS` cells, are refused before any
work (:class:`~symverify.errors.LimitError`, or the kaleidoscope compiler's ``CompileError``). Check it with ``check_certificate(circuit, result.model, result.certificate)``.
"""

from __future__ import annotations

import importlib
from typing import Any

from symverify.compiler.result import Compiled
from symverify.errors import CompileError
from symverify.kernel.ir.analysis import check_state
from symverify.kernel.ir.circuit import Circuit
from symverify.kernel.ir.scalar import plain_index, plain_str

__all__ = ["compile", "Compiled", "METHODS"]

METHODS = ("dense", "kaleidoscope")
_DENSE_OPTIONS = ("name",)


def compile(circuit: Circuit, method: str = "kaleidoscope", *, name: str = "", plan: str = "auto",
            max_cells: int | None = None, progress: bool | None = None, **unknown: Any) -> Compiled:
    """Compile ``circuit`` into a BaseConv model by ``method``: ``"kaleidoscope"`` (the default,
    the paper's Theorem H.21 construction) or ``"dense"`` (the baseline).

    Args:
        circuit: the circuit to compile.
        method: ``"kaleidoscope"`` or ``"dense"``.
        name: the model's name (default: the circuit's name and the method).
        plan: kaleidoscope only: ``"auto"``, ``"exact"`` or ``"greedy"`` (how the positions of the
            states are chosen; :func:`~symverify.compiler.kaleidoscope.compile_kaleidoscope`).
        max_cells: kaleidoscope only: refuse (``CompileError``) a model state ``N'·d'`` of more cells
            (a positive int, a numpy integer by its value; ``None``, the default:
            :data:`symverify.ir.limits.MAX_CELLS` as it is at the call, so that raising or lowering
            the limit applies to the compiler too).
        progress: show a spinner with the elapsed time on standard error while compiling
            (:func:`symverify.progress.activity`; ``None``: when interactive, or ``SYMVERIFY_PROGRESS=1``).
        unknown: any other keyword is refused with a ``CompileError`` naming the accepted ones.

    Returns:
        a :class:`~symverify.compiler.result.Compiled`: ``model``, ``certificate`` (the stage
        certificate ``verify`` checks), ``resources``, the construction's stated ``bounds`` and
        ``over_bound()`` (the resources over their bounds), ``method``, and ``source``, the
        ``circuit`` compiled.

    Raises:
        CompileError: ``circuit`` is not a :class:`Circuit`, ``method`` is unknown, an option the
            method does not take (``plan`` and ``max_cells`` are the kaleidoscope compiler's), or
            every reason the circuit cannot be compiled (never a partial model).
        LimitError: the circuit's input ``n·d`` exceeds ``MAX_INPUTS`` (:mod:`symverify.ir.limits`), or a
            linear stage's route (``2·N_k`` cells for a selection route) exceeds ``MAX_CELLS``: only with
            the limit lowered below the model's own state, since routes are planned before the state is
            held to ``max_cells``.
        UsageError: ``progress`` is not ``True``, ``False`` or ``None``.

    >>> from symverify.kernel.ir.circuit import Circuit, Gate
    >>> compile(Circuit(1, 2, (Gate.mul(0, 1),), (2,)), method="dense").model.signature
    (1, 2, 2, 1, 2)
    >>> compile(Circuit(1, 2, (Gate.mul(0, 1),), (2,))).method
    'kaleidoscope'
    """
    if not isinstance(circuit, Circuit):
        raise CompileError(f"compile: expected a Circuit, found {type(circuit).__name__}")
    check_state(circuit, "compile")
    from symverify.progress import activity, wanted

    wanted(progress)  # a bad value is refused before any work
    # plain values: a str subclass could compare equal to another method or plan than it spells
    method, name, plan, max_cells = plain_str(method), plain_str(name), plain_str(plan), plain_index(max_cells)  # type: ignore[assignment]
    label = f"compiling {circuit.name or 'a circuit'} ({len(circuit.gates)} gates, method {method})"
    with activity(label, progress):
        out = _compile(circuit, method, name, plan, max_cells, unknown)
    from dataclasses import replace

    return replace(out, source=circuit)  # what was compiled: its golden record names it by its digest


def _compile(circuit: Circuit, method: str, name: str, plan: str, max_cells: int | None, unknown: dict[str, Any]) -> Compiled:
    if not isinstance(method, str):  # ``==`` on an array is an array, whose truth value raises
        raise CompileError(f"compile: unknown method {method!r}; expected one of {list(METHODS)}")
    if method == "dense":
        bad = sorted(unknown) + [k for k, v, d in (("plan", plan, "auto"), ("max_cells", max_cells, None)) if not _default(v, d)]
        if bad:
            raise CompileError(f"compile(method='dense'): unknown options {bad}; expected only {list(_DENSE_OPTIONS)}")
        from symverify.compiler.dense import compile_dense

        return _pruned(compile_dense(circuit, name=name))
    if method == "kaleidoscope":
        given = {k: v for k, v, d in (("name", name, ""), ("plan", plan, "auto"), ("max_cells", max_cells, None))
                 if not _default(v, d)}  # the compiler's own defaults apply to the others
        return _pruned(_kaleidoscope()(circuit, **given, **unknown))
    raise CompileError(f"compile: unknown method {method!r}; expected one of {list(METHODS)}")


def _default(value: object, default: str | None) -> bool:
    """Whether an option holds its default: ``None`` itself, or a str equal to the default str
    (compared only between strs: ``!=`` on an array is an array, whose truth value raises)."""
    return value is default or (type(value) is str and type(default) is str and value == default)


def _pruned(out: Compiled) -> Compiled:
    """``out`` without weights that only multiply structural zeros (:mod:`symverify.compiler.prune`);
    every cell keeps its value, so the certificate still holds."""
    from dataclasses import replace

    from symverify.compiler.prune import prune_structural_zeros

    model = prune_structural_zeros(out.model, out.certificate)
    if model == out.model:
        return out
    resources = dict(out.resources)
    if "nonzero_params" in resources:
        resources["nonzero_params"] = model.nonzero_param_count()
    return replace(out, model=model, resources=resources)


def _kaleidoscope() -> Any:
    """The paper-faithful compiler, or a :class:`CompileError` saying it is unavailable."""
    target = "symverify.compiler.kaleidoscope"
    try:
        mod = importlib.import_module(target)
    except ModuleNotFoundError as e:
        if e.name != target:
            raise
        raise CompileError(
            "compile: method 'kaleidoscope' is unavailable: the module symverify.compiler.kaleidoscope "
            "is missing from this installation; use method='dense'"
        ) from None
    fn = getattr(mod, "compile_kaleidoscope", None)
    if not callable(fn):
        raise CompileError(
            "compile: method 'kaleidoscope' is unavailable: symverify.compiler.kaleidoscope defines no "
            "compile_kaleidoscope(circuit, ...); use method='dense'"
        )
    return fn

"""The symverify error family.

Every error the toolkit raises on bad input is a :class:`SymverifyError`. Messages say what was
expected, what was found, and where (gate index, layer index, field), so that the CLI can print
them as one line without a traceback.
"""

from __future__ import annotations

__all__ = [
    "SymverifyError",
    "IRError",
    "ShapeError",
    "LimitError",
    "SerializationError",
    "CompileError",
    "ProverError",
    "UsageError",
    "BackendUnavailableError",
    "NumericMismatchError",
]


class SymverifyError(Exception):
    """Base class of every error symverify raises on purpose."""


class IRError(SymverifyError):
    """A circuit, model, butterfly or certificate violates an IR invariant."""


class ShapeError(IRError):
    """Two dimensions that must agree do not (the message names both numbers)."""


class SerializationError(SymverifyError):
    """A JSON file is malformed, truncated, of the wrong kind or of an unknown version."""


class CompileError(SymverifyError):
    """A compiler cannot handle its input; the message lists every unsupported feature."""


class ProverError(SymverifyError):
    """A prover contradicted itself (e.g. a counterexample failed its exact re-check)."""


class UsageError(SymverifyError):
    """Options that do not fit together: an unknown method or backend, method ``compositional`` without a
    certificate, a ``progress`` that is not a bool, ... (a certificate with no model side is an :class:`IRError`)."""


class BackendUnavailableError(SymverifyError):
    """An optional backend (torch, z3, python-flint, CUDA) is missing; the message says how to install it."""


class NumericMismatchError(SymverifyError):
    """A float executor disagreed with exact evaluation beyond its documented tolerance."""


class LimitError(IRError):
    """An object is too large for an operation: more cells, inputs or digits than a stated limit of
    :mod:`symverify.ir.limits` (the message names the limit and the size found)."""

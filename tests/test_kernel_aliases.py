"""The old import paths of the most used trusted modules still work, as aliases of their kernel modules.

``symverify.verification``, ``symverify.ir.circuit``, ``symverify.ir.baseconv`` and
``symverify.ir.scalar`` are kept for code written before the trusted base moved into
:mod:`symverify.kernel`; each is the very module object of its kernel module.
"""

from __future__ import annotations

import importlib
import pickle

import pytest

import symverify as sv

ALIASES = {
    "symverify.verification": "symverify.kernel.verification",
    "symverify.ir.circuit": "symverify.kernel.ir.circuit",
    "symverify.ir.baseconv": "symverify.kernel.ir.baseconv",
    "symverify.ir.scalar": "symverify.kernel.ir.scalar",
}


@pytest.mark.parametrize("old", sorted(ALIASES))
def test_an_alias_is_its_kernel_module(old: str) -> None:
    assert importlib.import_module(old) is importlib.import_module(ALIASES[old])


def test_names_imported_through_an_alias_are_the_kernel_objects() -> None:
    from symverify.ir.baseconv import Model
    from symverify.ir.circuit import Circuit
    from symverify.ir.scalar import Sym
    from symverify.verification import verify

    assert (Circuit, Model, Sym, verify) == (sv.Circuit, sv.Model, sv.Sym, sv.verify)
    assert Circuit.__module__ == "symverify.kernel.ir.circuit"


def test_the_public_api_and_pickles_are_unchanged() -> None:
    c = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
    assert pickle.loads(pickle.dumps(c)) == c
    assert sv.verify(c, c).verdict == sv.Verdict.PROVED

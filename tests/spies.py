"""Spy helpers shared by the tests that count how often a kernel function runs."""

from __future__ import annotations

import pytest


def count_calls(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[int]:
    """Replace ``module.name`` by a spy that calls the real function; ``[n]``, the calls so far."""
    calls = [0]
    real = getattr(module, name)

    def spy(*args: object, **kwargs: object) -> object:
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return calls

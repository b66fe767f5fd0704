"""The pytest plugin (entry point ``pytest11``, name ``symverify``): golden files of proof results.

A test that proves an identity and keeps its result as a regression is three lines::

    def test_square_of_sum(symverify_golden):
        report = symverify.testing.assert_proved(lhs, rhs)
        symverify_golden.check(report)

``symverify_golden.check(obj)`` compares :func:`symverify.testing.golden_record` of ``obj`` (a
report, a compile result, a proof instance or result, or a mapping) with the golden file stored
beside the test, ``<test dir>/golden/<test module>/<test name>[-<key>].json``: verdicts, methods,
resources and bounds as stable, sorted JSON, never timings. A difference fails the test with a
unified diff. ``pytest --symverify-update`` writes (or rewrites) the files instead; a missing file
fails with a hint to run it.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any

import pytest

__all__ = ["GoldenFile", "pytest_addoption", "symverify_golden"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("symverify")
    group.addoption(
        "--symverify-update",
        action="store_true",
        default=False,
        help="write the symverify_golden files from this run instead of comparing against them",
    )


class GoldenFile:
    """The golden files of one test (see the module docstring)."""

    def __init__(self, directory: Path, stem: str, update: bool) -> None:
        self.directory, self.stem, self.update = directory, stem, update

    def path(self, key: str = "") -> Path:
        """Where the record named ``key`` (default: the test's only one) is stored."""
        name = self.stem + (f"-{_safe(key)}" if key else "")
        return self.directory / f"{name}.json"

    def check(self, obj: Any, key: str = "") -> None:
        """Compare ``obj``'s golden record with the stored one (or store it with
        ``--symverify-update``)."""
        from symverify.testing import golden_text

        text = golden_text(obj)
        path = self.path(key)
        if self.update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            return
        if not path.exists():
            pytest.fail(f"no golden file {path}; run pytest --symverify-update to write it", pytrace=False)
        stored = path.read_text(encoding="utf-8")
        if stored != text:
            diff = "".join(difflib.unified_diff(stored.splitlines(True), text.splitlines(True),
                                                f"{path} (stored)", "this run"))
            pytest.fail(f"golden mismatch for {path}; if the change is intended, run pytest --symverify-update\n{diff}",
                        pytrace=False)


def _safe(name: str) -> str:
    """A file-name-safe form of a test or key name (parametrize ids included)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "_"


@pytest.fixture
def symverify_golden(request: pytest.FixtureRequest) -> GoldenFile:
    """Golden files of proof results for this test (see :mod:`symverify.pytest_plugin`)."""
    test_path = Path(str(request.node.fspath))
    directory = test_path.parent / "golden" / test_path.stem
    return GoldenFile(directory, _safe(request.node.name), bool(request.config.getoption("--symverify-update")))

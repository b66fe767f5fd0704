"""CHANGELOG.md in Keep a Changelog form: an Unreleased section, dated releases, known subsections each at most once
per release, one line per entry, short entries."""

from __future__ import annotations

import re
from pathlib import Path

TEXT = (Path(__file__).resolve().parents[1] / "CHANGELOG.md").read_text(encoding="utf-8")
KINDS = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security", "Performance"}
MAX_ENTRY = 300


def _sections():
    return re.split(r"^(?=## )", TEXT, flags=re.M)[1:]


def test_unreleased_first_then_dated_releases():
    heads = [s.splitlines()[0] for s in _sections()]
    assert heads[0] == "## [Unreleased]"
    assert "## [0.1.0] - 2026-12-03" in heads
    for h in heads[1:]:
        assert re.fullmatch(r"## \[\d+\.\d+\.\d+\] - \d{4}-\d{2}-\d{2}", h), h


def test_each_kind_of_change_at_most_once_per_release():
    for section in _sections():
        kinds = re.findall(r"^### (.+)$", section, flags=re.M)
        assert set(kinds) <= KINDS, (section.splitlines()[0], kinds)
        assert len(kinds) == len(set(kinds)), (section.splitlines()[0], kinds)


def test_entries_are_single_short_lines():
    for section in _sections():
        for line in section.splitlines()[1:]:
            if not line.strip() or line.startswith("### "):
                continue
            assert line.startswith("- "), f"not a one-line entry: {line[:80]!r}"
            assert len(line) <= MAX_ENTRY, f"{len(line)} characters: {line[:80]!r}"

"""A proof script's ``TITLE``, ``SHARDABLE`` and ``SWEEP`` are read without importing it; a value of
another type, or one that is no literal, was ignored without a word (``SHARDABLE = "yes"`` ran the
script unsharded, ``SWEEP = 1`` made it no sweep, ``TITLE = 5`` listed no title). Each is refused,
naming the script, as a bad ``COST`` is."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symverify.errors import UsageError
from symverify.scripts.runner import discover


def _discover(tmp_path: Path, line: str):
    (tmp_path / "s.py").write_text(f"{line}\n", encoding="utf-8")
    return discover(tmp_path)


@pytest.mark.parametrize(("line", "found"), [
    ('SHARDABLE = "yes"', "found str 'yes'"),
    ("SHARDABLE = 1", "found int 1"),
    ("SHARDABLE = None", "found NoneType None"),
    ("SHARDABLE = os.cpu_count() > 1", "found the expression os.cpu_count() > 1"),
    ("SWEEP = 1", "found int 1"),
    ("SWEEP: bool = 'True'", "found str 'True'"),
])
def test_a_flag_that_is_not_a_literal_bool_is_refused(tmp_path, line, found):
    key = line.split()[0].rstrip(":")
    with pytest.raises(UsageError, match=rf"s\.py: {key}: expected True or False, written as such \(read without "
                                         rf"importing the script\), {found.replace('(', '[(]').replace(')', '[)]')}"):
        _discover(tmp_path, line)


@pytest.mark.parametrize(("line", "found"), [("TITLE = 5", "found int 5"), ("TITLE = None", "found NoneType None"),
                                             ('TITLE = f"x{1}"', "found the expression f'x{1}'")])
def test_a_title_that_is_not_a_string_literal_is_refused(tmp_path, line, found):
    with pytest.raises(UsageError, match=r"s\.py: TITLE: expected text written as a string literal"):
        _discover(tmp_path, line)
    with pytest.raises(UsageError) as refused:
        _discover(tmp_path, line)
    assert str(refused.value).endswith(found)


@settings(max_examples=25, deadline=None)
@given(title=st.text(max_size=20), shardable=st.booleans(), sweep=st.booleans())
def test_literals_are_read_as_written(tmp_path_factory, title, shardable, sweep):
    d = tmp_path_factory.mktemp("scripts")
    script = _discover(d, f"TITLE = {title!r}\nSHARDABLE = {shardable}\nSWEEP: bool = {sweep}")["s"]
    assert (script.title, script.shardable, script.sweep) == (title, shardable, sweep)
    assert _discover(d, "")["s"].title == "" and not _discover(d, "")["s"].shardable  # none declared

"""symverify.pytest_plugin: a GoldenFile used without a session (written, rewritten, moved from
its legacy name, compared, and a write that fails), and the GoldenSession's bookkeeping on items
without a path, files reported twice, files outside the root and a second configure.

Each test names the function of ``symverify/pytest_plugin.py`` it is for and why its assertion
bites.
"""

from pathlib import Path

import pytest

import symverify as sv
from symverify import pytest_plugin
from symverify.pytest_plugin import GoldenFile, GoldenSession
from symverify.testing import golden_text

Failed = pytest.fail.Exception


def test_a_golden_file_without_a_session_writes_updates_and_compares(tmp_path):
    """GoldenFile.check with session None: update writes the record, a changed record is rewritten,
    a compare run passes on the same record and fails with a diff on another; no session bookkeeping
    is needed for any of it."""
    d = tmp_path / "golden"
    GoldenFile(d, "t", True).check({"a": 1})
    assert (d / "t.json").read_text() == golden_text({"a": 1})
    GoldenFile(d, "t", True).check({"a": 2})
    assert (d / "t.json").read_text() == golden_text({"a": 2})
    GoldenFile(d, "t", False).check({"a": 2})
    with pytest.raises(Failed, match=r"golden mismatch for .*t.json(.|\n)*-  \"a\": \"?2\"?(.|\n)*\+  \"a\": \"?3\"?"):
        GoldenFile(d, "t", False).check({"a": 3})


def test_a_missing_golden_file_without_a_session_fails(tmp_path):
    """GoldenFile.check: no file and no update fails and says how to write it."""
    with pytest.raises(Failed, match=r"no golden file .*t\.json; run pytest --symverify-update to write it"):
        GoldenFile(tmp_path, "t", False).check({"a": 1})


def test_an_unreadable_golden_file_without_a_session_fails(tmp_path):
    """GoldenFile.check: a directory in the file's place fails with the reason."""
    (tmp_path / "t.json").mkdir()
    with pytest.raises(Failed, match=r"cannot read the golden file .*t\.json: .*a directory is in its place"):
        GoldenFile(tmp_path, "t", False).check({"a": 1})


def test_legacy_file_is_read_then_moved_on_update(tmp_path):
    """GoldenFile._legacy and the move (in GoldenFile.check): a record stored under the legacy name
    is compared against, and an update writes the new name and removes the legacy file. Without a
    legacy stem (in _legacy) the legacy name is never looked at."""
    old = tmp_path / "test_x.json"
    old.write_text(golden_text({"a": 1}), encoding="utf-8")
    GoldenFile(tmp_path, "test_x-1234abcd", False, legacy_stem="test_x").check({"a": 1})
    with pytest.raises(Failed, match="no golden file"):
        GoldenFile(tmp_path, "test_x-1234abcd", False).check({"a": 1})
    GoldenFile(tmp_path, "test_x-1234abcd", True, legacy_stem="test_x").check({"a": 1})
    assert not old.exists() and (tmp_path / "test_x-1234abcd.json").read_text() == golden_text({"a": 1})


def test_a_golden_file_that_cannot_be_written_fails_with_the_reason(tmp_path, monkeypatch):
    """GoldenFile.check: the write fails (a full disk): the test fails naming the file and the
    reason, and no exception escapes."""
    import errno

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pytest_plugin, "_write_chunk", full)
    with pytest.raises(Failed, match=r"cannot write the golden file .*golden/t.json: No space left on device"):
        GoldenFile(tmp_path / "golden", "t", True).check({"a": 1})


class _Config:
    def __init__(self, root: Path, update: bool = False):
        self.rootpath = root
        self._update = update
        self.args: list[str] = []

    def getoption(self, name):
        return self._update


class _Reporter:
    def __init__(self):
        self.lines: list[str] = []

    def section(self, title):
        self.lines.append(f"== {title}")

    def write_line(self, line):
        self.lines.append(line)


def test_items_without_a_path_own_no_golden_files(tmp_path):
    """GoldenSession._note: an item without a path (a non-file collector's item) is skipped."""
    s = GoldenSession(_Config(tmp_path))  # type: ignore[arg-type]

    class Item:
        path = None
        nodeid = "x::y"

    s._note([Item()], s.collected)
    assert s.collected == {}


def test_a_file_reported_twice_is_listed_once(tmp_path, monkeypatch):
    """GoldenSession.pytest_sessionfinish: a file already listed (sent by an xdist worker) is not
    listed again."""
    f = tmp_path / "g.json"
    s = GoldenSession(_Config(tmp_path), unused=[f])  # type: ignore[arg-type]
    monkeypatch.setattr(s, "find_unused", lambda: [f])
    s.pytest_sessionfinish(None)  # type: ignore[arg-type]
    assert s.unused == [f]


def test_summary_shows_files_outside_the_root_by_their_full_path(tmp_path):
    """GoldenSession.pytest_terminal_summary (its inner show): a file outside the root dir is shown
    whole, one inside relative to the root."""
    root = tmp_path / "root"
    inside, outside = root / "golden" / "a.json", tmp_path / "elsewhere" / "b.json"
    s = GoldenSession(_Config(root), written=[inside, outside])  # type: ignore[arg-type]
    rep = _Reporter()
    s.pytest_terminal_summary(rep)
    assert rep.lines == ["== symverify golden files", "2 written", "  written: golden/a.json", f"  written: {outside}"]


def test_configure_twice_keeps_the_first_session(request):
    """pytest_configure: a second configure (a plugin loaded twice) registers no second session."""
    first = request.config.pluginmanager.get_plugin(pytest_plugin._SESSION)
    pytest_plugin.pytest_configure(request.config)
    assert request.config.pluginmanager.get_plugin(pytest_plugin._SESSION) is first


pytest_plugins = ["pytester"]

# The in-process pytester runs forget the modules they import; load the heavy ones (numpy cannot
# load twice) here, as tests/test_golden_files.py does.
_X = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
golden_text(sv.verify(_X, _X, method="exact"))


def test_a_file_left_by_a_test_that_no_longer_reads_it_is_unused(pytester):
    """GoldenSession.find_unused: a golden file owned by a test that passed without reading it is
    listed as unused (and removed by the next update); before that, it is read and not listed."""
    pytester.makepyfile(test_user='''
def test_a(symverify_golden):
    symverify_golden.check({"a": 1})
''')
    pytester.runpytest("-p", "no:cacheprovider", "--symverify-update").assert_outcomes(passed=1)
    files = list((pytester.path / "golden" / "test_user").glob("*.json"))
    assert len(files) == 1
    res = pytester.runpytest("-p", "no:cacheprovider")
    res.assert_outcomes(passed=1)
    assert "symverify golden files" not in res.stdout.str()
    pytester.makepyfile(test_user='''
def test_a(symverify_golden):
    pass
''')
    res = pytester.runpytest("-p", "no:cacheprovider")
    res.assert_outcomes(passed=1)
    assert f"unused: golden/test_user/{files[0].name}" in res.stdout.str()
    pytester.runpytest("-p", "no:cacheprovider", "--symverify-update").assert_outcomes(passed=1)
    assert not files[0].exists()

"""The pytest plugin (entry point ``pytest11``, name ``symverify``): golden files of proof results.

A test that proves an identity and keeps its result as a regression is three lines::

    def test_square_of_sum(symverify_golden):
        report = symverify.testing.assert_proved(lhs, rhs)
        symverify_golden.check(report)

``symverify_golden.check(obj)`` compares :func:`symverify.testing.golden_record` of ``obj`` (a
report, a compile result, a proof instance or result, a mapping, or a pandas DataFrame or Series;
values of a type it has no exact record of are refused, never stored as their text) with the golden file stored
beside the test: verdicts, methods, resources and bounds as stable, sorted JSON, never timings. A
difference fails the test with a unified diff. ``pytest --symverify-update`` writes new and changed
files instead; a missing file fails with a hint to run it. Only settled results are kept: a
report whose verdict is unknown (that depends on the time the check had) or that bare verdict
(``Verdict.UNKNOWN``), a report whose numeric cross-check asked for failed, a compile result over
a bound it states, or a proof instance or result that is not ok fails the check in both modes
(inside a mapping or a list too). A golden file is read only when it is a
regular file (a FIFO or a device in its place fails the test instead of blocking it); a leading
UTF-8 byte order mark is dropped and CRLF line ends read as LF (as editors and git on Windows write
them), and a file larger than any file of the record fails without being read whole.

**File names** (:func:`golden_stem`): ``<test dir>/golden/<test module>/<name>-<hash>[-<suffix>].json``,
where ``<name>`` is the test's id within its module (class, function and parameters) made
file-name-safe and ``<hash>`` the first 8 hex digits of the SHA-256 of that id. Ids that differ only
in punctuation or non-ASCII characters (``[a b]`` and ``[a_b]``), and same-named tests of different
classes, get different files; the names do not depend on the directory pytest runs from.

**Several checks in one test** are numbered: the first unnamed check is ``<stem>.json``, the next
``<stem>-2.json``, ``<stem>-3.json``…; ``check(obj, key)`` stores ``<stem>-<key>.json``. Two checks
that would share a file (a key used twice, a key that names an index, keys that differ only in case:
one file on macOS and Windows) fail the test.

**The session** (:class:`GoldenSession`): the terminal summary lists the golden files written,
updated and failed, and the unused ones: files in the golden directory of a test module that no
check of this run read although it should have (their test was collected and passed without checking
them; directories are none). ``--symverify-update`` removes the
unused files (one it cannot remove is listed as not removed);
files of tests that were deselected, skipped or failed (a subtest or the teardown included) are never touched.
A file that no test collected in this run claims is never removed either: its test may be defined, or
parametrized, only on another platform or in another configuration, so nothing shows it is an orphan.
In a fully collected module such files are listed as kept; remove one by hand once its test is gone. A
file under a collected test's legacy name (below) whose key holds a part of 8 hex digits, as
``test_b_py-fast-<hash>.json`` under ``test_b[py]``'s, is taken for another test's, never for a legacy one. Under pytest-xdist each
worker handles the files of its own tests and sends its lists to the controller, which shows one
summary of all workers (each file once).

Golden files written by earlier versions (``<test name>[-<key>].json``) are still read when the new
file is missing; ``--symverify-update`` then writes the new name and removes the old one. That old
name has no class in it: when several tests of the module that may use ``symverify_golden`` (as an
argument, a ``usefixtures`` mark, or through ``request.getfixturevalue`` in the test or a fixture
of its own: :func:`_may_request`) share the test name (``TestA::test_x``, ``TestB::test_x`` and
``TestC::TestInner::test_x``, collected by this run or not; names that differ in case only, one
file on macOS and Windows, count as one), the old file could
be any one's, so it is read by none of them: their checks fail, naming the tests and their new file
names (rename the old file to the new name of the test it belongs to).

A report's record holds each side's ``digest``, a compile result's its model's and source circuit's
(``model_digest``, ``source_digest``), a proof instance's its reports' side ``digests``
(:func:`symverify.testing.golden_record`); a file written before they did, equal to this run's
record but for the digests, fails with a message that says so (it cannot tell the result from
another of the same statistics): ``--symverify-update`` adds them.
"""

from __future__ import annotations

import difflib
import errno
import hashlib
import inspect
import os
import re
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

__all__ = ["GoldenFile", "GoldenSession", "golden_stem", "pytest_addoption", "pytest_configure", "symverify_golden"]

_SESSION = "symverify-golden-session"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("symverify")
    group.addoption(
        "--symverify-update",
        action="store_true",
        default=False,
        help="write the symverify_golden files from this run instead of comparing against them, and remove unused ones",
    )


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin(_SESSION):
        config.pluginmanager.register(GoldenSession(config), _SESSION)


def _safe(name: str) -> str:
    """A file-name-safe form of a test or key name (parametrize ids included)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_.") or "_"


def _in_module_id(nodeid: str) -> str:
    """The part of a node id after the file: ``Class::test[param]`` (independent of the rootdir)."""
    return nodeid.split("::", 1)[1] if "::" in nodeid else nodeid


def golden_stem(nodeid: str) -> str:
    """The file stem of a test's golden files: its in-module id made file-safe (at most 80
    characters) and 8 hex digits of the SHA-256 of the exact id.

    >>> golden_stem("tests/test_a.py::test_x[a b]"), golden_stem("other/dir/test_a.py::test_x[a_b]")
    ('test_x_a_b-6e8c8ffd', 'test_x_a_b-eec68e62')
    >>> golden_stem("t.py::TestA::test_x") != golden_stem("t.py::TestB::test_x")
    True
    """
    ident = _in_module_id(nodeid)
    digest = hashlib.sha256(ident.encode("utf-8")).hexdigest()[:8]
    return f"{_safe(ident.replace('::', '.'))[:80]}-{digest}"


def _golden_dir(path: Path) -> Path:
    return path.parent / "golden" / path.stem


@dataclass(eq=False)  # a plugin object: hashed by identity
class GoldenSession:
    """What the golden files of one pytest run did: written, updated, failed, read; and, at the end,
    the unused files (see the module docstring)."""

    config: pytest.Config
    written: list[Path] = field(default_factory=list)
    updated: list[Path] = field(default_factory=list)
    failed: list[Path] = field(default_factory=list)
    used: set[Path] = field(default_factory=set)
    unused: list[Path] = field(default_factory=list)
    removed: list[Path] = field(default_factory=list)
    not_removed: list[Path] = field(default_factory=list)  # unused files that --symverify-update could not remove
    # files that no test collected in this run claims (a test of another platform, or gone): never removed
    unclaimed: list[Path] = field(default_factory=list)
    # golden dir → {file stem: the stem of the test owning it} (a test owns its stem and its legacy stem)
    collected: dict[Path, dict[str, str]] = field(default_factory=dict)
    deselected: dict[Path, dict[str, str]] = field(default_factory=dict)
    passed: set[str] = field(default_factory=set)  # stems of tests whose call passed
    # stems of tests with a failed report: a phase, or a subtest (whose passing reports say "call" passed too)
    failed_tests: set[str] = field(default_factory=set)
    ids: dict[Path, set[str]] = field(default_factory=dict)  # golden dir → in-module ids of the collected tests
    # golden dir → {legacy stem, case folded (one file on macOS and Windows): in-module ids of the tests (collected
    # or deselected) that may request symverify_golden (_may_request), with that legacy stem}
    legacy_ids: dict[Path, dict[str, set[str]]] = field(default_factory=dict)

    @property
    def update(self) -> bool:
        return bool(self.config.getoption("--symverify-update"))

    def _note(self, items: Any, into: dict[Path, dict[str, str]]) -> None:
        for item in items:
            path = getattr(item, "path", None)
            if path is None:
                continue
            d = _golden_dir(Path(path))
            stem = golden_stem(item.nodeid)
            owned = into.setdefault(d, {})
            owned[stem] = stem
            owned.setdefault(_safe_legacy(item.name), stem)
            if _item_may_request(item):  # tests that may read golden files
                self.legacy_ids.setdefault(d, {}).setdefault(_safe_legacy(item.name).casefold(), set()).add(
                    _in_module_id(item.nodeid))

    @pytest.hookimpl(wrapper=True)
    def pytest_collection_modifyitems(self, items: list[Any]) -> Any:
        """Note the tests this run keeps, after every plugin and conftest had its say; a test they
        dropped counts as deselected (a conftest's ``items[:] = …`` calls no ``pytest_deselected``),
        so its module is not fully collected and its files are kept."""
        before = list(items)
        result = yield
        kept = {id(item) for item in items}
        self._note([item for item in before if id(item) not in kept], self.deselected)
        self._note(items, self.collected)
        for item in items:
            if getattr(item, "path", None) is not None:
                self.ids.setdefault(_golden_dir(Path(item.path)), set()).add(_in_module_id(item.nodeid))
        return result

    def pytest_deselected(self, items: list[Any]) -> None:
        self._note(items, self.deselected)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Note the tests whose call passed, and those with any failed report: a test with a failed
        subtest or teardown failed, though a passing subtest reported its call as passed."""
        if report.when == "call" and report.passed:
            self.passed.add(golden_stem(report.nodeid))
        if report.failed:
            self.failed_tests.add(golden_stem(report.nodeid))

    def _narrowed(self) -> set[Path]:
        """Golden directories of modules that this run selected only a part of (``file.py::test``
        arguments, or deselected tests). An argument ``…::test`` narrows the module its path names
        and every module with a collected test it names (``--pyargs pkg.module::test`` names no
        path)."""
        out = {d for d, hashes in self.deselected.items() if hashes}
        for arg in self.config.args:
            if "::" in str(arg):
                head, tail = str(arg).split("::", 1)
                p = Path(head)
                out.add(_golden_dir(p if p.is_absolute() else Path(self.config.invocation_params.dir) / p))
                out.update(d for d, ids in self.ids.items()
                           if any(i == tail or i.startswith((f"{tail}::", f"{tail}[")) for i in ids))
        return {d.resolve() for d in out}

    def find_unused(self) -> list[Path]:
        """The unused golden files: those whose test was collected in this run, passed, and neither
        read nor wrote them (its check is gone, or it checks fewer records). A file that no test
        collected in this run claims is no proof of an orphan (its test may be defined or
        parametrized only on another platform, or under another option or environment): it is
        added to :attr:`unclaimed` instead (in a fully collected module: elsewhere the test of a
        file may simply not be selected) and never removed."""
        narrowed = self._narrowed()
        out = []
        for d in sorted(self.collected):
            if not d.is_dir():
                continue
            full = d.resolve() not in narrowed
            owners = {**self.deselected.get(d, {}), **self.collected[d]}
            stems = sorted(owners, key=len, reverse=True)  # the most specific stem first
            for f in sorted(d.glob("*.json")):
                if f in self.used or (f.is_dir() and not f.is_symlink()):  # a directory is no golden file
                    continue
                owner = next((owners[st] for st in stems if _claims(st, owners[st], f.name)), None)
                if owner is None:
                    if full and f not in self.unclaimed:
                        self.unclaimed.append(f)  # no test of this run claims it: kept, never removed
                elif owner in self.passed and owner not in self.failed_tests:
                    out.append(f)  # its test passed without reading it
                # else: its test was deselected, skipped or failed: leave it
        return out

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        found = self.find_unused()  # added to what xdist workers sent (the controller runs no test)
        for f in found:
            into = self.removed if self.update else self.unused
            if self.update:
                try:
                    f.unlink(missing_ok=True)
                except OSError:  # a read-only directory, say: the run goes on and the summary names it
                    into = self.not_removed
            if f not in into:
                into.append(f)
        out = getattr(self.config, "workeroutput", None)  # an xdist worker: send the lists to the controller
        if isinstance(out, dict):
            out[_SESSION] = {what: [str(p) for p in files] for what, files in self._groups()}

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """The xdist controller: add a finished worker's lists to this session's (a file once:
        every worker reports the files that no test of a module claims)."""
        sent = getattr(node, "workeroutput", {}).get(_SESSION, {})
        for what, files in self._groups():
            for p in map(Path, sent.get(what, ())):
                if p not in files:
                    files.append(p)

    def _groups(self) -> list[tuple[str, list[Path]]]:
        return [("written", self.written), ("updated", self.updated), ("failed", self.failed),
                ("removed", self.removed), ("unused", self.unused), ("not removed", self.not_removed),
                ("kept", self.unclaimed)]

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        groups = self._groups()
        if not any(files for _, files in groups):
            return
        root = Path(self.config.rootpath)

        def show(p: Path) -> str:
            try:
                return str(p.relative_to(root))
            except ValueError:
                return str(p)

        counts = ", ".join(f"{len(files)} {what}" for what, files in groups if files)
        terminalreporter.section("symverify golden files")
        terminalreporter.write_line(counts)
        for what, files in groups:
            for p in files:
                terminalreporter.write_line(f"  {what}: {show(p)}")
        if self.unused and not self.update:
            terminalreporter.write_line("  (pytest --symverify-update removes the unused files)")
        if self.unclaimed:
            terminalreporter.write_line("  (kept: no test collected in this run claims these files; their test may run "
                                        "only on another platform or configuration, or be gone: then remove them by "
                                        "hand)")


class GoldenFile:
    """The golden files of one test (see the module docstring)."""

    def __init__(self, directory: Path, stem: str, update: bool, *, legacy_stem: str = "",
                 session: GoldenSession | None = None, legacy_owners: tuple[str, ...] = ()) -> None:
        """``legacy_owners``: the in-module ids of the module's tests whose legacy stem is
        ``legacy_stem``; with more than one, the legacy file is ambiguous and never read."""
        self.directory, self.stem, self.update = directory, stem, update
        self.legacy_stem, self.session, self.legacy_owners = legacy_stem, session, legacy_owners
        self._count = 0
        self._claimed: dict[str, str] = {}  # file name, case folded (one file on macOS and Windows) → the check

    def path(self, key: str = "") -> Path:
        """Where the record named ``key`` is stored (``""``: the test's first unnamed record)."""
        name = self.stem + (f"-{_safe(key)}" if key else "")
        return self.directory / f"{name}.json"

    def _legacy(self, key: str) -> Path | None:
        if not self.legacy_stem:
            return None
        return self.directory / f"{self.legacy_stem}{f'-{_safe(key)}' if key else ''}.json"

    def _claim(self, key: str) -> tuple[Path, str]:
        """The file of this check: keyed, or the next index; two checks never share a file."""
        if key:
            path, what = self.path(key), f"key {key!r}"
            legacy_key = key
        else:
            self._count += 1
            path = self.path("" if self._count == 1 else str(self._count))
            what, legacy_key = f"unnamed check {self._count}", "" if self._count == 1 else str(self._count)
        name = path.name.casefold()
        if name in self._claimed:
            pytest.fail(f"symverify_golden: {what} and {self._claimed[name]} of this test would share the golden file "
                        f"{path.name}; give each check its own key", pytrace=False)
        self._claimed[name] = what
        return path, legacy_key

    def check(self, obj: Any, key: str = "") -> None:
        """Compare ``obj``'s golden record with the stored one (or store it with
        ``--symverify-update``). Repeated calls without a key are numbered; a key names the file."""
        __tracebackhide__ = True
        from symverify.testing import golden_text

        if not isinstance(key, str):
            pytest.fail(f"symverify_golden.check: key: expected a str (the file's suffix), found {type(key).__name__} {key!r}",
                        pytrace=False)
        text = golden_text(obj)
        path, legacy_key = self._claim(key)
        session = self.session
        legacy = self._legacy(legacy_key)
        source = path if _exists(path) or legacy is None or not _exists(legacy) else legacy
        if source != path and len(self.legacy_owners) > 1:
            if session is not None:
                session.failed.append(path)
            suffix = f"-{_safe(legacy_key)}" if legacy_key else ""
            owners = "; ".join(f"{i} → {golden_stem('::' + i)}{suffix}.json" for i in self.legacy_owners)
            pytest.fail(f"symverify_golden: no golden file {path.name}, and the file {source} of an earlier version, "
                        f"named by the test name only, may belong to any of {len(self.legacy_owners)} tests of this "
                        f"module ({owners}), so it is not read; rename it to the new name of the test it belongs to",
                        pytrace=False)
        if session is not None:
            session.used.add(path)
            if source != path:
                session.used.add(source)
        unsettled = _unsettled(obj)
        if unsettled:
            pytest.fail(f"symverify_golden.check: {unsettled}; a golden file keeps settled results only "
                        f"({path.name} is neither compared nor written)", pytrace=False)
        stored, problem, size = _read(source, self.update, 2 * len(text.encode("utf-8")) + 3)
        if problem:
            if session is not None:
                session.failed.append(source)
            pytest.fail(problem, pytrace=False)
        if self.update:
            if stored != text or source != path:
                try:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    _write(path, text)
                    problem = ""
                except OSError as e:
                    problem = f"cannot write the golden file {path}: {e.strerror or e}"
                if problem:
                    pytest.fail(problem, pytrace=False)
                if session is not None:
                    (session.updated if stored is not None and stored != text else session.written).append(path)
            if source != path:
                source.unlink(missing_ok=True)
                if session is not None:
                    session.removed.append(source)
            return
        if stored is None:
            if session is not None:
                session.failed.append(path)
            pytest.fail(f"no golden file {path}; run pytest --symverify-update to write it", pytrace=False)
        if stored != text:
            if session is not None:
                session.failed.append(source)
            if size and not stored:  # larger than any file of this record: not read
                pytest.fail(f"golden mismatch for {source}: it holds {size} bytes, this run's record "
                            f"{len(text.encode('utf-8'))}; if the change is intended, run pytest --symverify-update",
                            pytrace=False)
            diff = "".join(difflib.unified_diff(stored.splitlines(True), text.splitlines(True),
                                                f"{source} (stored)", "this run"))
            if stored + "\n" == text:
                diff += "(the stored file lacks the final newline)\n"
            if _same_but(stored, text, _no_bound):
                diff += ("(only a randomized proof's failure bound differs: it depends on the engine that method "
                         "'auto' or 'randomized' chose, torch where it is installed and cheaper, else Python ints, so it "
                         "may differ between machines; verify(..., method='randomized', backend='python') states the "
                         "same bound on every machine)\n")
            if _same_but(stored, text, _no_digests):
                before = " and of ".join(_DIGESTS[k] for k in _DIGESTS if k in _undigested(stored, text))
                pytest.fail(f"golden file {source} was written before golden records of {before} (the SHA-256 of "
                            "the exact content), so it cannot tell this result from another of the same statistics; "
                            "the rest of it matches this run. Check that the test compares the sides it should, then "
                            f"run pytest --symverify-update to add the digests\n{diff}", pytrace=False)
            pytest.fail(f"golden mismatch for {source}; if the change is intended, run pytest --symverify-update\n{diff}",
                        pytrace=False)


@pytest.fixture
def symverify_golden(request: pytest.FixtureRequest) -> GoldenFile:
    """Golden files of proof results for this test (see :mod:`symverify.pytest_plugin`)."""
    test_path = Path(str(request.node.path))
    session = request.config.pluginmanager.get_plugin(_SESSION)
    legacy = _safe_legacy(request.node.name)
    owners: set[str] = {_in_module_id(request.node.nodeid)}
    if isinstance(session, GoldenSession):
        owners |= session.legacy_ids.get(_golden_dir(test_path), {}).get(legacy.casefold(), set())
    owners |= _namesakes(request)
    return GoldenFile(_golden_dir(test_path), golden_stem(request.node.nodeid),
                      bool(request.config.getoption("--symverify-update")), legacy_stem=legacy,
                      session=session if isinstance(session, GoldenSession) else None, legacy_owners=tuple(sorted(owners)))


def _may_request(info: Any) -> bool:
    """Whether a test with this fixture information (pytest's ``FuncFixtureInfo``) may use
    ``symverify_golden``, so that it may share a legacy file name: the fixture is in its closure,
    or ``request`` is an argument of the test or of a fixture of its closure that is not pytest's
    own (``request.getfixturevalue("symverify_golden")`` there). pytest's own fixtures that take
    ``request`` (``tmp_path``, ``capsys``…) request no golden file. Without that information
    (pytest's fixture internals changed), any ``request`` in the closure counts."""
    names = set(getattr(info, "names_closure", ()))
    if "symverify_golden" in names:
        return True
    if "request" not in names:
        return False
    try:
        if "request" in info.argnames:
            return True
        for defs in info.name2fixturedefs.values():
            for fixturedef in defs:
                module = getattr(getattr(fixturedef, "func", None), "__module__", "") or ""
                if "request" in fixturedef.argnames and module.split(".")[0] not in ("_pytest", "pytest"):
                    return True
    except (AttributeError, TypeError):
        return True  # cannot tell: counted
    return False


def _parametrized(*objs: Any) -> set[str]:
    """The argument names that ``parametrize`` marks on ``objs`` give values (no fixtures)."""
    out: set[str] = set()
    for obj in objs:
        for m in getattr(obj, "pytestmark", None) or ():
            if getattr(m, "name", "") == "parametrize" and getattr(m, "args", ()):
                names = m.args[0]
                out.update(n.strip() for n in names.split(",")) if isinstance(names, str) else out.update(map(str, names))
    return out


def _item_may_request(item: Any) -> bool:
    """:func:`_may_request` for a collected item (one without fixture information: counted)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return "symverify_golden" in getattr(item, "fixturenames", ("symverify_golden",)) or \
            "request" in getattr(item, "fixturenames", ())
    return _may_request(info)


MAX_CLASS_DEPTH = 16
"""Test classes nested deeper than this are not looked into for namesakes (a class that holds
itself, through an attribute, would be walked for ever)."""


def _namesakes(request: pytest.FixtureRequest) -> set[str]:
    """In-module ids of the tests of this test's module, read from the module itself (so also those
    this run did not collect, as with ``pytest file.py::TestB``), that have this test's name in
    another class (nested classes included, ``TestOuter::TestInner::test_x``) or at module level, or
    a name that differs from it in case only (the legacy files share a name on macOS and Windows), and
    may use ``symverify_golden`` (:func:`_may_request`, with the fixture closure pytest would give
    them): they share its legacy file name."""
    fn, module, own = getattr(request, "function", None), getattr(request, "module", None), getattr(request, "cls", None)
    if fn is None or module is None:
        return set()
    name, out = fn.__name__, set()

    def uses_golden(cls: type | None, func: Any) -> bool:
        for obj in (cls, func):
            if any(getattr(m, "name", "") == "usefixtures" and "symverify_golden" in getattr(m, "args", ())
                   for m in getattr(obj, "pytestmark", None) or ()):
                return True
        try:
            info = request._fixturemanager.getfixtureinfo(node=request.node, func=func, cls=cls)
        except Exception:  # pytest's fixture manager is no public interface: read the signature instead
            try:
                params = list(inspect.signature(func).parameters)
            except (TypeError, ValueError):
                return True  # cannot tell: counted
            return any(p not in ("self", "cls") for p in params)  # any fixture may request it
        if _may_request(info):
            return True
        # a fixture seen from this test's node resolves; one defined in the other class does not (its
        # class is not collected): it may request symverify_golden, so it counts
        unresolved = set(getattr(info, "names_closure", ())) - set(getattr(info, "name2fixturedefs", {})) - {"request"}
        return bool(unresolved - _parametrized(cls, func))

    folded, params = name.casefold(), request.node.name[len(name):]  # "[…]" of a parametrized test

    def walk(prefix: str, namespace: dict[str, Any], depth: int, seen: set[int]) -> None:
        for attr, obj in list(namespace.items()):
            if not isinstance(obj, type) or id(obj) in seen or depth > MAX_CLASS_DEPTH:
                continue
            seen.add(id(obj))
            for other in (a for a in dir(obj) if a.casefold() == folded and (obj is not own or a != name)):
                method = inspect.getattr_static(obj, other, None)
                if callable(method) and uses_golden(obj, method):
                    out.add(f"{prefix}{attr}::{other}{params}")
            walk(f"{prefix}{attr}::", dict(vars(obj)), depth + 1, seen)

    walk("", dict(vars(module)), 0, set())
    for attr, top in list(vars(module).items()):  # module-level namesakes (in case only, for a module-level test)
        if attr.casefold() == folded and (own is not None or attr != name) and callable(top) \
                and not isinstance(top, type) and uses_golden(None, top):
            out.add(f"{attr}{params}")
    return out


def _unsettled(obj: Any) -> str:
    """Why ``obj`` is no result to keep ('' when it is one): a report whose verdict is unknown (it
    depends on the time and machine the check had, not on the claim alone), or that verdict itself
    (``Verdict.UNKNOWN``, as ``{"verdict": report.verdict}`` holds it), a report whose numeric
    cross-check (``verify(..., numeric=...)``) failed, a compile result over
    a bound it states, or a proof instance or result that is not ok (``symverify prove
    --update-golden`` writes ok runs only); in a mapping, a sequence, a numpy object array or a
    pandas DataFrame or Series (their index and columns included), the first such value."""
    from symverify.compiler.result import Compiled
    from symverify.kernel.provers.outcome import Verdict
    from symverify.kernel.verification import Report
    from symverify.scripts.protocol import Instance, ProofResult

    if obj is Verdict.UNKNOWN:  # a bare verdict (``{"verdict": report.verdict}``): as unsettled as its report
        return ("a verdict is unknown (it depends on the time the check had); keep the report itself, or check "
                "assert_proved(...) or assert_refuted(...)")
    if isinstance(obj, Report) and obj.verdict is Verdict.UNKNOWN:
        why = f": {obj.notes[0]}" if obj.notes else ""
        return (f"verify's verdict is unknown (method {obj.method}{why}); give it more time, or check "
                "assert_proved(...) or assert_refuted(...)")
    if isinstance(obj, Report) and obj.numeric is not None and obj.numeric.passed is False:
        return (f"verify's numeric cross-check asked for failed (method {obj.method}): {obj.numeric}; the verdict does "
                "not rest on it, but a golden file keeps no failed check")
    if isinstance(obj, Compiled) and obj.over_bound():
        past = [f"{k}={obj.resources[k]} > {obj.bounds[k]}" if k in obj.resources else f"{k} (no value)"
                for k in obj.over_bound()]
        return f"the compile result ({obj.method}) is over its stated bounds: {', '.join(past)}"
    if isinstance(obj, Instance) and not obj.ok:
        over = f", over its bound on {', '.join(obj.over_bound())}" if obj.over_bound() else ""
        return f"the instance {obj.name!r} is not ok (verdict {obj.verdict.value}{over})"
    if isinstance(obj, ProofResult) and not obj.ok:
        bad = [i.name for i in obj.instances if not i.ok]
        return (f"the result {obj.name!r} is not ok ("
                + (f"instances not ok: {', '.join(map(repr, bad))}" if bad else "no instances") + ")")
    if isinstance(obj, Mapping):  # the values of a mapping are recorded as the objects themselves are
        return next((f"{k!r}: {why}" for k, v in obj.items() if (why := _unsettled(v))), "")
    if isinstance(obj, (list, tuple, set, frozenset)):
        return next((why for v in obj if (why := _unsettled(v))), "")
    pd = sys.modules.get("pandas")  # recorded by their values, index and columns, as lists are (never imported here)
    if pd is not None and isinstance(obj, pd.DataFrame):
        return _unsettled([_objects(obj.columns), _objects(obj.index),
                           [list(row) for row in obj.itertuples(index=False, name=None)]])
    if pd is not None and isinstance(obj, pd.Series):
        return _unsettled([_objects(obj.index), _objects(obj)])
    if getattr(getattr(obj, "dtype", None), "kind", None) == "O" and callable(getattr(obj, "tolist", None)):
        return _unsettled(obj.tolist())  # a numpy object array or a pandas Series of objects
    return ""


def _without(x: Any, drop: Any) -> Any:
    """A golden record as JSON with ``drop(record)`` applied to every report, compile result or
    instance record in it."""
    if isinstance(x, list):
        return [_without(v, drop) for v in x]
    if not isinstance(x, dict):
        return x
    out = {k: _without(v, drop) for k, v in x.items()}
    return drop(out) if out.get("kind") in _DIGESTS else out


_DIGESTS = {"report": "a report held each side's digest",
            "compiled": "a compile result held its model's and source circuit's digests",
            "instance": "a proof instance held its reports' side digests"}
"""The records that name what they are about by digests, and what an earlier version's lacked."""


def _no_digests(rec: dict[str, Any]) -> dict[str, Any]:
    """A record without its digests (the form earlier versions wrote): a report's sides without
    their ``digest``, a compile result without ``model_digest`` and ``source_digest``, an instance
    without ``digests``."""
    if rec.get("kind") == "compiled":
        return {k: v for k, v in rec.items() if k not in ("model_digest", "source_digest")}
    if rec.get("kind") == "instance":
        return {k: v for k, v in rec.items() if k != "digests"}
    return {k: {n: v for n, v in side.items() if n != "digest"} if k in ("lhs", "rhs") and isinstance(side, dict) else side
            for k, side in rec.items()}


def _undigested(stored: str, text: str) -> set[str]:
    """The kinds of the records (``report``, ``compiled``, ``instance``) that differ between the
    stored file and this run's record, which :func:`_same_but` found equal but for the digests."""
    import json

    kinds: set[str] = set()

    def walk(old: Any, new: Any) -> None:
        if isinstance(old, list) and isinstance(new, list):
            for a, b in zip(old, new):
                walk(a, b)
        elif isinstance(old, dict) and isinstance(new, dict):
            if new.get("kind") in _DIGESTS and old != new:
                kinds.add(new["kind"])
            for k in old.keys() & new.keys():
                walk(old[k], new[k])

    walk(json.loads(stored), json.loads(text))
    return kinds


def _no_bound(rec: dict[str, Any]) -> dict[str, Any]:
    """A report or instance record without its ``failure_bound``."""
    return {k: v for k, v in rec.items() if k != "failure_bound"}


def _same_but(stored: str, text: str, drop: Any) -> bool:
    """Whether the records ``stored`` and ``text`` differ, and do not once ``drop`` is applied to
    ``text``'s (:func:`_no_digests`: ``stored`` is this run's record as an earlier version wrote it)
    or to both (:func:`_no_bound`: only a failure bound differs). Compared as canonical JSON text, so
    ``1``, ``1.0`` and ``true`` stay apart; a file that is no JSON (edited by hand) is neither."""
    import json

    try:
        old, new = json.loads(stored), json.loads(text)

        def canon(x: Any) -> str:
            return json.dumps(x, sort_keys=True, ensure_ascii=False)

        if canon(old) == canon(new):
            return False
        return canon(old if drop is _no_digests else _without(old, drop)) == canon(_without(new, drop))
    except (ValueError, RecursionError):
        return False


def _objects(values: Any) -> list[Any]:
    """The values of a pandas Index or Series that holds Python objects (``dtype`` kind ``O``; a
    MultiIndex's tuples), the ones a result may hide in; [] for numbers, strings and dates."""
    return values.tolist() if getattr(getattr(values, "dtype", None), "kind", None) == "O" else []


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _exists(path: Path) -> bool:
    """Whether something is at ``path``: False only where nothing is (a path that cannot be looked
    at, a name too long say, counts as there, so that reading it says why)."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:
        return True
    return True


def _read(path: Path, update: bool, limit: int) -> tuple[str | None, str, int]:
    """The text of a golden file (None when there is none), why it cannot be used ('' when it can)
    and its size in bytes. A leading UTF-8 byte order mark is dropped and line ends read as ``\\n``
    (as an editor or ``git config core.autocrlf`` may write them). Only regular files are read, and
    never more than ``limit`` bytes: a FIFO would block, a device never end. A larger file cannot
    hold the record (the caller's ``limit`` is what a file of the record may take), so its text is
    ``""`` and its size tells why. With ``--symverify-update`` an undecodable file counts as
    changed, so it is rewritten."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None, "", 0
    except NotADirectoryError:  # a file where the golden directory (or one above it) should be
        blocking = next((p for p in path.parents if p.exists() and not p.is_dir()), path.parent)
        return None, f"cannot read the golden file {path}: {blocking} is a file, not a directory", 0
    except OSError as e:
        return None, f"cannot read the golden file {path}: {e.strerror or e}", 0
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a regular file")
            reason = (f"{os.strerror(errno.EISDIR)} (a directory is in its place)" if stat.S_ISDIR(st.st_mode)
                      else f"expected a regular file, found {kind}")
            return None, f"cannot read the golden file {path}: {reason}", 0
        if st.st_size > limit:
            return "", "", st.st_size
        data = b""
        while len(data) <= limit:  # read may return fewer bytes than asked before the end
            chunk = os.read(fd, limit + 1 - len(data))
            if not chunk:
                break
            data += chunk
    except OSError as e:
        return None, f"cannot read the golden file {path}: {e.strerror or e}", 0
    finally:
        os.close(fd)
    if len(data) > limit:
        return "", "", len(data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        if update:
            return "", "", len(data)
        return None, (f"golden file {path} is not UTF-8 text (byte {e.start}: {e.reason}), so it is no golden record; "
                      "run pytest --symverify-update to rewrite it"), len(data)
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n"), "", len(data)


def _write_chunk(fd: int, data: memoryview) -> int:
    """``os.write``: the bytes of ``data`` written to ``fd`` (a seam for tests of failing writes)."""
    return os.write(fd, data)


def _write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all: into a temporary file beside it (a name no
    ``*.json`` glob matches), then renamed over it, so a run reading the file at the same time (two
    pytest runs on one tree, tox environments in parallel) or a write that fails midway (a full disk)
    never leaves a half-written golden file; on failure the temporary file is removed."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    data = text.encode("utf-8")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o666)
        try:
            view = memoryview(data)
            while view:
                view = view[_write_chunk(fd, view):]
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        raise


_HASHED = re.compile(r"(?:^|-)[0-9a-f]{8}(?:-|$)")
"""A ``-<8 hex digits>`` part of a file name: the end of a :func:`golden_stem`."""


def _claims(stem: str, owner: str, name: str) -> bool:
    """Whether the golden file ``name`` is one of the test whose stem is ``owner``, read by its
    ``stem``: that stem (``owner``), or the test's legacy stem (:func:`_safe_legacy`), as
    ``<stem>.json`` or ``<stem>-<key>.json``. A legacy stem is a prefix of other tests' names: under
    the legacy stem ``test_b_py`` of ``test_b[py]``, ``test_b_py-fast-8977d978.json`` is the file of
    ``test_b[py-fast]`` (a parameter of another platform), and ``test_x-…`` under that of
    ``TestA::test_x`` a module-level ``test_x``'s. So a legacy name whose key holds a part of 8 hex
    digits, as each stem ends, is no legacy file of ``owner`` (a legacy key of that form is kept too)."""
    if name == f"{stem}.json":
        return True
    if not name.startswith(f"{stem}-") or not name.endswith(".json"):
        return False
    return stem == owner or not _HASHED.search(name[len(stem) + 1:-len(".json")])


def _safe_legacy(name: str) -> str:
    """The file stem earlier versions used (the test name made file-safe)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "_"

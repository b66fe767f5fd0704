"""The proof-script runner behind ``symverify prove``.

A proof script follows :mod:`symverify.scripts.protocol` (``TITLE``, ``run(quick)``,
``script_main``). The built-in scripts are the package :mod:`symverify.proofs`, found after any
install; ``--dir DIR`` adds the scripts ``DIR/NAME.py`` of a user (the same protocol; a name may
not repeat a built-in one). Each script runs in its own Python process (``python -m
symverify.proofs.NAME --json TMP``, or ``python DIR/NAME.py ...``), so a crash, even a FLINT abort,
fails one row and the run goes on; the process imports the symverify the run was started from
(:func:`~symverify.scripts.tasks.own_import_path`: a directory holding a link to it alone is first on
its import path), never another installed copy.

``jobs > 1`` runs up to that many processes at once: scripts side by side, the costliest first,
and a script that declares ``SHARDABLE = True`` split into shards (``--shard k/K``) when it alone
would take more than its share of the run (:func:`plan`); the shards' instances are merged back
into exactly the order of a one-process run, so the results do not depend on ``jobs``.
Each process is a :class:`~symverify.scripts.tasks.Task`; the Dask backend
(:mod:`symverify.scripts.dask_backend`) runs the same tasks, one per case, on a cluster, and
merges them with :func:`merge`.
A run is ok only when every script is ok: every instance proved and within every bound it states,
and no script crashed. An interrupted run (Ctrl-C, SIGTERM) keeps every finished script's row and
marks the others ``interrupted``.

:meth:`RunSummary.to_json` is stable: no absolute paths, times only when asked for (rounded to
0.1 s), one JSON type per field (see the protocol). :func:`junit_xml` writes one testcase per
instance; :func:`golden_diff` compares a run with a stored one (verdicts, kinds, methods, resources,
bounds and the side digests of the claims' reports; never times).
"""

from __future__ import annotations

import ast
import difflib
import json
import math
import re
import sys
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from symverify.errors import SerializationError, UsageError
from symverify.scripts.protocol import PROVED_KINDS, ClaimKind
from symverify.scripts.tasks import BUILTIN, Processes, Task, execute, ship
from symverify.viz.run_format import (
    FORMAT,
    NO_RESULT,
    VERSION,
    check_bounds_stated,
    check_digests_stated,
    check_result,
    count_claims,
    script_over_bound,
)

__all__ = [
    "FORMAT",
    "Script",
    "ScriptOutcome",
    "RunSummary",
    "builtin_dir",
    "discover",
    "available",
    "script_title",
    "select",
    "plan",
    "costs",
    "sweep_script",
    "merge",
    "run_scripts",
    "junit_xml",
    "golden_text",
    "golden_diff",
    "golden_note",
    "golden_update",
    "over_text",
]


@dataclass(frozen=True)
class Script:
    """A proof script: its name, file, where it comes from (``builtin``, or the user's directory:
    as given when relative, else its last component), its ``TITLE``, whether it may be split
    into shards or cases, and whether it is a sweep (``SWEEP = True``: its cases come from the grid
    of ``symverify sweep``), and its ``COST``: the CPU seconds of its full tier as measured, which
    orders and splits the work of a parallel run (:func:`plan`) and changes nothing else."""

    name: str
    path: Path
    source: str
    title: str = ""
    shardable: bool = False
    sweep: bool = False
    cost: float | None = None

    def task(self, quick: bool, *, shard: tuple[int, int] | None = None, cases: Sequence[int] | None = None,
             count: bool = False, timeout: float | None = None, env: Mapping[str, str] | None = None,
             shipped: bool = False) -> Task:
        """A task running this script (or a part of it); ``shipped`` sends a user's script (the
        ``*.py`` files of its directory) with the task, for another machine, instead of its path."""
        user = self.source != BUILTIN
        return Task(self.name, quick, self.source, shard, None if cases is None else tuple(cases), count,
                    str(self.path) if user and not shipped else None,
                    ship(self.path.parent) if user and shipped else (),
                    tuple(sorted((env or {}).items())), timeout)


def builtin_dir() -> Path:
    """The directory of the built-in scripts (the package :mod:`symverify.proofs`: ``proofs/`` at the top of a
    checkout, ``symverify/proofs/`` in an installed wheel)."""
    import importlib.util

    spec = importlib.util.find_spec("symverify.proofs")
    assert spec is not None and spec.submodule_search_locations, "symverify.proofs is part of the package"
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def _constants(path: Path) -> dict[str, object]:
    """``TITLE``, ``SHARDABLE``, ``SWEEP`` and ``COST`` read without importing the script ({} when unreadable)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return {}
    out: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if not isinstance(t, ast.Name):
                    continue
                if t.id in ("TITLE", "SHARDABLE", "SWEEP"):  # a literal; anything else is kept as its text, refused
                    out[t.id] = node.value.value if isinstance(node.value, ast.Constant) else _Text(ast.unparse(node.value))
                elif t.id == "COST":  # a literal (-1.5 is an expression to ast); anything else is its text
                    try:
                        out[t.id] = ast.literal_eval(node.value)
                    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                        out[t.id] = ast.unparse(node.value)[:40]
    return out


class _Text(str):
    """The text of a script constant that is no literal (``SHARDABLE = os.cpu_count() > 1``): it is
    read without importing the script, so its value is unknown (:func:`_flags` refuses it)."""


def _flags(path: Path, consts: Mapping[str, object]) -> tuple[str, bool, bool]:
    """A script's ``TITLE`` (text), ``SHARDABLE`` and ``SWEEP`` (``True`` or ``False``), each ``''``
    or ``False`` when it declares none; a value of another type or one that is no literal (read
    without importing the script) is a :class:`UsageError` naming the script: ``SHARDABLE = "yes"``
    ran the script unsharded, ``SWEEP = 1`` made it no sweep, ``TITLE = 5`` listed no title, each
    without a word."""
    for key, kind, expected in (("TITLE", str, "text written as a string literal"),
                                ("SHARDABLE", bool, "True or False, written as such"),
                                ("SWEEP", bool, "True or False, written as such")):
        value = consts.get(key)
        if key in consts and type(value) is not kind:
            found = f"the expression {value[:40]}" if isinstance(value, _Text) else f"{type(value).__name__} {value!r:.40}"
            raise UsageError(f"{path}: {key}: expected {expected} (read without importing the script), found {found}")
    title, shardable, sweep = consts.get("TITLE", ""), consts.get("SHARDABLE"), consts.get("SWEEP")
    return str(title), shardable is True, sweep is True


def script_title(path: Path) -> str:
    """The script's ``TITLE`` read without importing it ('' when absent or unreadable)."""
    title = _constants(path).get("TITLE", "")
    return title if isinstance(title, str) else ""


def discover(directory: str | Path, source: str | None = None) -> dict[str, Script]:
    """``{NAME: Script}`` for every ``NAME.py`` in ``directory`` that is a regular file (or a link to
    one; names starting with ``_`` skipped): a directory, a FIFO or a broken link named ``NAME.py``
    is no script (:func:`not_a_script` says what it is when it is asked for by name)."""
    d = Path(directory)
    if not d.is_dir():
        if d.exists():
            what = not_a_script(d) or "a file"  # a FIFO or a device is no file to pass as DIR/NAME.py
            raise UsageError(f"proof directory {d}: expected a directory of NAME.py scripts, found {what} (pass --dir DIR, "
                             "or the script's path DIR/NAME.py as a name)")
        raise UsageError(f"proof directory {d} does not exist (pass --dir DIR)")
    out = {}
    for p in sorted(d.glob("*.py")):
        if p.stem.startswith("_") or not p.is_file():
            continue
        consts = _constants(p)
        title, shardable, sweep = _flags(p, consts)
        out[p.stem] = Script(p.stem, p, source or _portable(d), title, shardable, sweep, _cost(p, consts.get("COST")))
    return out


def not_a_script(path: str | Path) -> str | None:
    """What ``path`` is when it exists but is no regular file (so no proof script): ``"a
    directory"``, ``"a broken symbolic link"`` or ``"a special file (…)"`` (a FIFO, a socket, a
    device); None for a regular file, or a link to one, and for a path that does not exist."""
    p = Path(path)
    if p.is_file():
        return None
    if p.is_dir():
        return "a directory"
    if p.is_symlink():
        return "a broken symbolic link"
    return "a special file (a FIFO, a socket or a device)" if p.exists() else None


def _cost(path: Path, value: object) -> float | None:
    """A script's ``COST`` (None when it declares none): a positive number of seconds below 10^300 (a
    float, finite), else a :class:`UsageError` naming the script (a typo would otherwise change
    nothing but the schedule)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1e300:  # 1e300: a float, finite
        raise UsageError(f"{path}: COST: expected a positive number of CPU seconds below 10^300 (the full tier's, as measured, "
                         f"written as a literal), found {value!r:.40}")
    return float(value)


def plan(scripts: Mapping[str, Script], names: Sequence[str], jobs: int) -> list[tuple[str, int]]:
    """How a run of ``names`` on ``jobs`` processes is cut: ``(name, parts)`` in the order to start
    them. Each process costs a start-up and its own cold caches, so a script is split only when it
    alone would take more than its share of the run: a shardable script of cost ``c`` gets
    ``min(jobs, ⌈c·jobs / Σ costs⌉)`` shards, every other script one process, and the processes
    start costliest first (each part costs ``c / parts``; ties in the order of ``names``), so that
    the longest ones do not start last (longest processing time first). One job runs ``names`` in
    their order, one process each. A script without ``COST``
    counts the mean of those that state one (1 when none does): ``jobs`` scripts of one directory,
    or more, run one process each; fewer are split among the processes.

    >>> s = {n: Script(n, Path(n), BUILTIN, shardable=True, cost=c) for n, c in (("a", 4), ("b", 5), ("c", 1))}
    >>> plan(s, ["a", "b", "c"], 2)
    [('b', 1), ('a', 1), ('c', 1)]
    >>> plan(s, ["a", "b", "c"], 4), plan(s, ["c"], 3)
    ([('b', 2), ('a', 2), ('c', 1)], [('c', 3)])
    """
    if jobs <= 1:
        return [(n, 1) for n in names]
    raw = costs(scripts, names)
    top = max(raw.values(), default=1.0)
    cost = {n: c / top for n, c in raw.items()}  # in units of the largest: a sum of COSTs near 1e308 stays finite
    total = sum(cost.values())
    cut = []
    for n in names:
        k = 1
        if scripts[n].shardable:
            k = max(1, min(jobs, math.ceil(cost[n] * jobs / total - 1e-9)))
        cut.append((n, k))
    order = sorted(range(len(cut)), key=lambda i: (-cost[cut[i][0]] / cut[i][1], i))
    return [cut[i] for i in order]


def costs(scripts: Mapping[str, Script], names: Sequence[str]) -> dict[str, float]:
    """Each script's ``COST``, or the mean of those of ``names`` that state one (1 when none does)."""
    known = [c for c in (scripts[n].cost for n in names) if c is not None]
    default = sum(known) / len(known) if known else 1.0
    return {n: scripts[n].cost or default for n in names}


def _portable(d: Path) -> str:
    """How a run names a user's directory: as given when relative, else by its last component (a
    stored run must not depend on where a machine keeps its files)."""
    return d.as_posix() if not d.is_absolute() else d.name


def available(extra_dirs: Sequence[str | Path] = ()) -> dict[str, Script]:
    """The built-in scripts and those of ``extra_dirs`` (a directory given twice, under any
    spelling, counts once); a repeated name, a script named ``all`` (the word for every
    script), or a module of a user's directory that would be imported in place of one the script
    processes need (:func:`_shadowing`) is a :class:`UsageError`."""
    scripts = discover(builtin_dir(), BUILTIN)
    seen: set[Path] = set()
    for d in extra_dirs:
        real = Path(d).resolve()
        if real in seen:
            continue
        seen.add(real)
        _shadowing(Path(d))
        for name, s in discover(d).items():
            if name == "all":  # select() reads 'all' as every script: this one could never be chosen alone
                raise UsageError(f"proof script all in {d}: 'all' on the command line means every script; rename it")
            if name in scripts:
                where = "a built-in script" if scripts[name].source == BUILTIN else f"a script in {scripts[name].source}"
                raise UsageError(f"proof script {name} in {d} has the name of {where}; rename it")
            scripts[name] = s
    return scripts


HARMLESS_STDLIB = frozenset({"idlelib", "turtledemo", "this", "antigravity", "ensurepip", "venv", "lib2to3", "pydoc_data"})
"""Modules of the standard library that are programs or demos: no library imports them, so a
``this.py`` of a user's directory is imported by no script process and is allowed (CPython's test
suite, ``test``, is no name of :data:`sys.stdlib_module_names` at all)."""

SHADOWED = (frozenset(sys.stdlib_module_names) - HARMLESS_STDLIB - frozenset(sys.builtin_module_names)) | {
    "symverify", "numpy", "sympy", "mpmath", "flint", "z3", "torch", "dask", "distributed", "matplotlib",
    "typing_extensions"}
"""Top-level modules a script process may import (the standard library, symverify and its
dependencies, and ``typing_extensions``, which importing torch imports): a user's script runs with
its directory first on the import path, so a ``json.py`` there, or a ``.py`` file named symverify,
would be imported in their place, by every script of that directory. Left out: the modules built
into the interpreter (``time``, ``sys``, ``gc`` on Linux: the import system finds them before any
directory, so a ``time.py`` is never imported in their place) and :data:`HARMLESS_STDLIB`."""


def _shadowing(d: Path) -> None:
    """Refuse a module of the user's directory ``d`` (``NAME.py``, support modules too, or a
    package ``NAME/__init__.py``) named like one of :data:`SHADOWED`: every script there crashed
    with "'symverify' is not a package" or a circular import, far from the cause."""
    if not d.is_dir():
        return  # discover() says what is wrong with it
    for p in sorted(d.iterdir()):
        # a directory named NAME.py is no module (nor a package of that name): only a file NAME.py shadows NAME
        name = (p.stem if p.is_file() else None) if p.suffix == ".py" else p.name if (p / "__init__.py").is_file() else None
        if name in SHADOWED and name != "__main__":
            what = ("symverify" if name == "symverify" else "a module of the standard library"
                    if name in sys.stdlib_module_names else "a dependency of symverify")
            raise UsageError(f"{p}: expected a module name of its own, found {name!r}, the name of {what}: a script's "
                             "directory comes first on its import path, so every script there would import this "
                             "file in its place; rename it")


def select(scripts: dict[str, Script], names: Sequence[str], default: Iterable[str] | None = None) -> list[str]:
    """The chosen names in order: ``all`` is every script, no names is ``default`` (every script
    when None); unknown names raise :class:`UsageError` listing the available ones."""
    if not names:
        return list(scripts) if default is None else list(default)
    unknown = [n for n in names if n not in scripts and n != "all"]
    if unknown:
        listing = ", ".join(scripts) or "(none)"
        raise UsageError(f"unknown proof script(s) {', '.join(unknown)}; available: {listing} "
                         "(your own scripts: --dir DIR NAME, or the path DIR/NAME.py)")
    return list(scripts) if "all" in names else list(dict.fromkeys(names))


def sweep_script(scripts: dict[str, Script], family: str) -> str:
    """The sweep script for ``family`` (``thm_h21`` → ``thm_h21_sweep``, or a script's own name);
    a :class:`UsageError` listing the sweeps when there is none."""
    for name in (family, f"{family}_sweep"):
        if name in scripts and scripts[name].sweep:
            return name
    listing = ", ".join(n.removesuffix("_sweep") for n, s in scripts.items() if s.sweep) or "(none)"
    raise UsageError(f"no sweep {family!r}; available: {listing}")


@dataclass(frozen=True)
class ScriptOutcome:
    """One script's row: ``status`` is ``ok``, ``failed`` (ran, not every instance ok),
    ``crashed`` (no result), ``timeout`` (killed at its timeout) or ``interrupted`` (the run
    stopped before it finished)."""

    name: str
    title: str
    status: str
    seconds: float
    result: dict[str, Any] | None = None
    error: str = ""
    source: str = BUILTIN
    output_cut: str = ""
    """What was left out of the output of a script that finished (its parts' ``cut``, joined by
    ``"; "``; '' when nothing was): no error quotes that output, so the row says it apart. A row
    that did not finish says it in its ``error``."""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def instances(self) -> list[dict[str, Any]]:
        return list((self.result or {}).get("instances", []))

    def counts(self) -> dict[str, int]:
        return count_claims(self.instances())

    def over_bound(self) -> list[str]:
        """``instance: resource`` for every resource over its stated bound."""
        return script_over_bound(self.instances())

    def over_bound_shown(self) -> list[str]:
        """``instance: resource=value > bound`` for every resource over its stated bound (for people;
        the run JSON keeps :meth:`over_bound`)."""
        return [f"{i.get('name')}: {over_text(i, k)}" for i in self.instances() for k in i.get("over_bound", [])]

    def tightest(self) -> str:
        """The resource closest to its stated bound, as ``key=value≤bound`` ('' without bounds)."""
        best: tuple[Fraction, str] | None = None
        for inst in self.instances():
            for key, val, bnd, ratio in ratios(inst):
                if best is None or ratio > best[0]:
                    best = (ratio, f"{key}={val}≤{bnd}")
        return "" if best is None else best[1]

    def to_json(self, timings: bool = False) -> dict[str, Any]:
        result = None
        if self.result is not None:
            result = {k: v for k, v in self.result.items() if timings or k != "seconds"}
            result["instances"] = [_instance_json(i, timings) for i in self.instances()]
        out = {
            "name": self.name,
            "title": self.title,
            "source": self.source,
            "status": self.status,
            "ok": self.ok,
            "counts": self.counts(),
            "over_bound": self.over_bound(),
            "error": self.error,
            "result": result,
        }
        if self.output_cut:
            out["output_cut"] = self.output_cut
        if timings:
            out["seconds"] = round(self.seconds, 1)
        return out


def _instance_json(inst: dict[str, Any], timings: bool) -> dict[str, Any]:
    return {k: v for k, v in inst.items() if k not in ("case", "before") and (timings or k != "seconds")}


def failure_reason(inst: Mapping[str, Any]) -> str:
    """Why an instance of a row is not ok, in a few words: its verdict when it is not proved, the
    resources over their bounds, an argued claim's failing checks; else, for an instance that says
    ``ok: false`` though nothing of it fails (a run file may: ``ok`` left out is false), that."""
    if inst.get("verdict") != "proved" and inst.get("kind") != ClaimKind.ARGUED.value:
        return f"verdict {inst.get('verdict')}"
    try:  # derived, as the merge checks it: a run may leave over_bound out
        over = _exceeded(inst, inst.get("name"))
    except ValueError:
        over = [str(k) for k in inst.get("over_bound") or []]
    if over:
        return "over bound: " + ", ".join(over_text(inst, k) for k in over)
    if inst.get("kind") == ClaimKind.ARGUED.value:
        return "argued, its checks fail" if inst.get("checks") is False else f"argued, verdict {inst.get('verdict')}"
    return ("not ok, though proved within its bounds: the result says ok: "
            f"{json.dumps(inst['ok']) if 'ok' in inst else 'nothing'} (an inconsistent result)")


def over_text(inst: Mapping[str, Any], key: str) -> str:
    """``key=value > bound`` for a resource of an instance's JSON that is over its stated bound
    (``key`` alone when the instance does not record the value or the bound)."""
    res, bounds = inst.get("resources", {}), inst.get("bounds", {})
    if key in res and key in bounds:
        return f"{key}={res[key]} > {bounds[key]}"
    return key


def ratios(inst: dict[str, Any]) -> list[tuple[str, Any, Any, Fraction]]:
    """``(resource, value, bound, value/bound)`` for every stated bound of an instance's JSON."""
    out = []
    res = inst.get("resources", {})
    for key, bound in inst.get("bounds", {}).items():
        try:
            val, bnd = Fraction(str(res[key])), Fraction(str(bound))
        except (KeyError, ValueError, ZeroDivisionError):
            continue
        ratio = val / bnd if bnd else (Fraction(0) if val <= 0 else Fraction(10**9))
        out.append((key, res[key], bound, ratio))
    return out


@dataclass(frozen=True)
class RunSummary:
    """All rows of one ``symverify prove`` run."""

    quick: bool
    outcomes: tuple[ScriptOutcome, ...] = field(default=())
    seconds: float = 0.0
    interrupted: bool = False
    jobs: int = 1
    where: str = ""  # '' for the local process pool, else the Dask cluster ("dask local", "dask tcp://…")

    @property
    def ok(self) -> bool:
        return bool(self.outcomes) and not self.interrupted and all(o.ok for o in self.outcomes)

    def to_json(self, timings: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "quick": self.quick,
            "ok": self.ok,
            "interrupted": self.interrupted,
            "scripts": [o.to_json(timings) for o in self.outcomes],
        }
        if timings:
            out["seconds"] = round(self.seconds, 1)
            out["jobs"] = self.jobs
            if self.where:
                out["scheduler"] = self.where
        return out


def _order(inst: dict[str, Any]) -> tuple[int, int]:
    """Where a tagged instance stands in a one-process run: after the instances of its case's
    predecessors (an instance made outside each(), tagged with the cases met before it, comes
    before the next case's)."""
    case = inst.get("case")
    if isinstance(case, int):
        return case, 1
    before = inst.get("before", 0)
    return (before if isinstance(before, int) else 0), 0


def _listed(result: Any) -> list[Any]:
    if not isinstance(result, dict) or not isinstance(result.get("instances", []), list):
        raise ValueError("expected an object with a list of instances")
    _boolean(result, "result")  # re-derived below: a mistyped one is refused, not coerced
    return list(result.get("instances", []))


def _boolean(d: Mapping[str, Any], where: str) -> None:
    """A script's ``ok``, where written, is ``true`` or ``false`` (``"yes"`` or ``1`` is refused, never read as true)."""
    from symverify.ir.bigint import safe_repr

    if "ok" in d and not isinstance(d["ok"], bool):
        raise ValueError(f"{where}: ok: expected true or false, found {safe_repr(d['ok'], 40)}")


def _claim(inst: Any, k: int) -> dict[str, Any]:
    """An instance of a script's result JSON, its ``ok`` re-derived from its kind and verdict: a
    script's file is not trusted to say ``ok`` for a claim that is not proved by a prover or an
    exact computation (an argued claim is ok only through its checks), and its ``over_bound`` must list
    exactly the resources over their bounds (:func:`_exceeded`). A missing or unknown kind or verdict, an
    argued claim with a verdict, a wrong ``over_bound``, or a bound that is not an exact number makes the row ``crashed``
    (``ValueError``)."""
    if not isinstance(inst, dict):
        raise ValueError(f"instance {k}: expected an object, found {type(inst).__name__}")
    kinds = [c.value for c in ClaimKind]
    kind, verdict, name = inst.get("kind"), inst.get("verdict"), inst.get("name", k)
    _boolean(inst, f"instance {name!r}")
    for tag, test, expected in (("case", lambda v: v is None or _index(v), "null or a case index ≥ 0"),
                                ("before", _index, "the number of cases met before it, an int ≥ 0")):
        if tag in inst and not test(inst[tag]):  # true read as case 1, "3" as made outside each()
            raise ValueError(f"instance {name!r}: {tag}: expected {expected}, found {json.dumps(inst[tag])[:40]}")
    if kind not in kinds:
        raise ValueError(f"instance {name!r}: kind: expected one of {', '.join(kinds)}, found {kind!r}")
    if verdict not in ("proved", "refuted", "unknown"):
        raise ValueError(f"instance {name!r}: verdict: expected proved, refuted or unknown, found {verdict!r}")
    if kind == ClaimKind.ARGUED.value and verdict != "unknown":
        raise ValueError(f"instance {name!r}: an argued claim is not decided by the tool; its verdict must be unknown, "
                         f"found {verdict}")
    over, exceeded = inst.get("over_bound", []), _exceeded(inst, name)
    if not isinstance(over, list) or sorted(map(str, over)) != sorted(exceeded):
        raise ValueError(f"instance {name!r}: over_bound: expected the resources over their bounds {exceeded}, "
                         f"found {over!r:.80}")
    within = not exceeded
    derived = (inst.get("checks") is not False) if kind == ClaimKind.ARGUED.value else (
        ClaimKind(kind) in PROVED_KINDS and verdict == "proved")
    if within and derived and inst.get("ok") is not True:  # script_main writes ok: true for it; not ok, it has no reason
        found = "nothing" if "ok" not in inst else json.dumps(inst["ok"])
        claim = "an argued claim whose checks do not fail" if kind == ClaimKind.ARGUED.value else f"a {kind} claim proved"
        raise ValueError(f"instance {name!r}: ok: expected true for {claim} within its bounds, found {found}: "
                         "an inconsistent result")
    return {**inst, "ok": bool(inst.get("ok")) and within and derived}


def _index(v: Any) -> bool:
    return type(v) is int and v >= 0


def _exceeded(inst: Mapping[str, Any], name: Any) -> list[str]:
    """The resources of a script's instance over their bounds
    (:func:`~symverify.viz.resources.exceeded_bounds`): a script's ``over_bound`` is not trusted to
    list them. A bound or bounded resource that is not an exact number is a ``ValueError``."""
    from symverify.errors import SymverifyError
    from symverify.viz.resources import exceeded_bounds

    try:
        return exceeded_bounds(inst, f"instance {name!r}")
    except SymverifyError as e:
        raise ValueError(str(e)) from None


def merge(script: Script, parts: Sequence[Mapping[str, Any]], *, local_version: str | None = None,
          cases: int | None = None, local_build: str | None = None) -> ScriptOutcome:
    """One row from the results of a script's tasks (:func:`~symverify.scripts.tasks.execute`):
    the instances of every part in the order of a one-process run. A part that did not finish
    makes the row ``crashed`` (or ``timeout``, ``interrupted``); with ``local_version``, so does a
    part run by another version of symverify; with ``local_build``, so does a part whose ``build``
    (:func:`~symverify.kernel.build.build_identity`) is another (one version string, another trusted
    base: an edited checkout, another development install); and so do parts that met different numbers of cases
    (with ``cases``, the count a ``--count-cases`` task gave: every part must have met that many),
    since some cases would then have run twice and others never (:func:`_split_cases`), and parts
    that made different instances outside each(), or the same ones with a field that differs
    (every part makes and keeps them; the row keeps one copy: :func:`_outside`)."""
    secs = max((float(p.get("seconds", 0.0)) for p in parts), default=0.0)
    for p in parts:
        status = p.get("status")
        if status in ("timeout", "interrupted"):
            return ScriptOutcome(script.name, script.title, status, secs, error=str(p.get("error", "")), source=script.source)
        if status != "done":
            return ScriptOutcome(script.name, script.title, "crashed", secs, error=str(p.get("error", "")), source=script.source)
        if local_version is not None and p.get("version") != local_version:
            return ScriptOutcome(script.name, script.title, "crashed", secs, source=script.source,
                                 error=f"a worker ({p.get('host', '?')}) has symverify {p.get('version')}, this machine "
                                       f"{local_version}: install the same version everywhere")
        if local_build is not None and p.get("build") != local_build:
            theirs = p.get("build")
            theirs = theirs[:12] if isinstance(theirs, str) and theirs else json.dumps(theirs)[:40]
            return ScriptOutcome(script.name, script.title, "crashed", secs, source=script.source,
                                 error=f"a worker ({p.get('host', '?')}) has symverify {p.get('version')} of another "
                                       f"build ({theirs}), this machine build {local_build[:12]} (the trusted base's "
                                       "sources differ: an edited checkout, another development install): install the "
                                       "same build everywhere")
    missing = next((p for p in parts if not isinstance(p.get("result"), dict)), None)
    if missing is not None or not parts:  # execute gives every finished part its result: an IndexError below otherwise
        why = (f"a finished part ({missing.get('part', 'all')}) without a result: expected an object, found "
               f"{type(missing.get('result')).__name__}" if missing is not None else "no part of the script ran")
        return ScriptOutcome(script.name, script.title, "crashed", secs, error=why, source=script.source)
    split = _split_cases(parts, cases)
    if split:
        return ScriptOutcome(script.name, script.title, "crashed", secs, error=split, source=script.source)
    results = [p["result"] for p in parts]
    try:
        results = [{**r, "instances": [_claim(i, k) for k, i in enumerate(_listed(r))]} for r in results]
    except ValueError as e:
        return ScriptOutcome(script.name, script.title, "crashed", secs, error=f"result JSON: {e}", source=script.source)
    for p, r in zip(parts, results):  # script_main writes ok: true for a result whose instances are all ok
        if r.get("ok", True) is not True and r["instances"] and all(i["ok"] for i in r["instances"]):
            part = "" if len(parts) == 1 else f" (part {p.get('part', '?')})"
            return ScriptOutcome(script.name, script.title, "crashed", secs, source=script.source,
                                 error=f"result JSON{part}: ok: expected true, since every instance is ok (proved "
                                       f"within its bounds), found {json.dumps(r['ok'])[:40]}: an inconsistent result")
    if len(results) == 1:
        data = results[0]
        # derived again from the instances; a result that leaves "ok" out states nothing (as in a run file)
        data = {**data, "counts": count_claims(data["instances"]),
                "ok": data.get("ok", True) is True and bool(data["instances"]) and all(i["ok"] for i in data["instances"])}
    else:
        titles = [(str(p.get("part", "")), r.get("title", "")) for p, r in zip(parts, results)]
        other = next(((label, t) for label, t in titles if t != titles[0][1]), None)
        if other is not None:  # the row shows one part's title as the script's
            return ScriptOutcome(script.name, script.title, "crashed", secs, source=script.source,
                                 error=f"the parts' results have different titles ({titles[0][0] or 'one part'}: "
                                       f"{str(titles[0][1])[:60]!r}; {other[0] or 'another'}: {str(other[1])[:60]!r}): "
                                       "expected one title, the same in every part")
        outside = _outside(parts, results)
        if isinstance(outside, str):
            return ScriptOutcome(script.name, script.title, "crashed", secs, error=outside, source=script.source)
        instances = [inst for r in results for inst in r.get("instances", []) if isinstance(inst.get("case"), int)]
        merged = sorted(instances + outside, key=_order)  # stable: a part's own order is kept
        counts = count_claims(merged)
        data = {**results[0], "instances": merged, "counts": counts,
                "ok": bool(merged) and all(i.get("ok") for i in merged),
                "seconds": round(sum(r.get("seconds", 0) for r in results), 1)}
    data = {**data, "instances": [_instance_json(i, True) for i in data.get("instances", [])]}
    try:  # what the run file holds is what its readers take: no unknown or mistyped field of a script's own JSON,
        # no randomized proof without its error bound (it would read as an exact argument), and no prover's
        # claim without its digests (script_main writes them; a run of version 4 promises them)
        checked = check_result(data, "result JSON")
        check_bounds_stated(checked, "result JSON")
        check_digests_stated(checked, "result JSON")
    except SerializationError as e:
        return ScriptOutcome(script.name, script.title, "crashed", secs, error=str(e), source=script.source)
    errors = "; ".join(str(p.get("error")) for p in parts if p.get("error"))
    status = "ok" if data.get("ok") else "failed"
    cut = "; ".join((f"part {p.get('part', '?')}: " if len(parts) > 1 else "") + str(p["cut"])
                    for p in parts if p.get("cut"))
    return ScriptOutcome(script.name, data.get("title") or script.title, status, secs, data,
                         "" if status == "ok" else errors, script.source, cut)


_NOT_COMPARED = frozenset({"seconds", "case"})
"""What the parts' instances made outside each() may differ in: their times (a run shows them only
with ``--timings``, and they differ from process to process) and the ``case`` tag (null on each).
Every other field, each one the run file shows of the one copy the row keeps (``detail``,
``counterexample``, ``failure_bound``, ``over_bound``, ``ok`` as much as the verdict) and ``before``
(where it stands), must be the same in every part."""


def _same(a: Any, b: Any) -> bool:
    """Whether two JSON values are the same as the run file writes them: same types (``1`` is not
    ``1.0``, nor ``true``), same keys in the same order, same items."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return bool(a == b)


def _outside(parts: Sequence[Mapping[str, Any]], results: Sequence[Mapping[str, Any]]) -> list[Any] | str:
    """The instances made outside each(), which every part makes and keeps: one part's (the first
    by its label), or why not when the parts made different ones (they depend on the cases a part
    ran: a summary of the cases, or instances made after ``list(each(...))``): other names, or an
    instance of the same name and place that differs in a field (every field but
    :data:`_NOT_COMPARED`), named with the field and both values."""
    from symverify.ir.bigint import safe_repr

    labelled = sorted(zip((str(p.get("part", "")) for p in parts if p.get("result") is not None), results),
                      key=lambda m: (len(m[0]), m[0]))  # shard 2/12 before shard 10/12
    views = [(label, [i for i in r.get("instances", []) if not isinstance(i.get("case"), int)]) for label, r in labelled]
    first_label, first = views[0]
    advice = ("an instance made outside each() must not depend on the cases a part runs (no summary of the cases, no "
              "instance per case after list(each(...)) or by dataclasses.replace after the loop); make it in its case")
    for label, other in views[1:]:
        if [i.get("name") for i in other] != [i.get("name") for i in first]:
            names = lambda insts: ", ".join(str(i.get("name"))[:40] for i in insts[:4]) + (", …" if len(insts) > 4 else "")  # noqa: E731
            return (f"the parts made different instances outside each() ({first_label or 'one part'}: {names(first) or 'none'}; "
                    f"{label or 'another'}: {names(other) or 'none'}): {advice}")
        for a, b in zip(first, other):
            for key in dict.fromkeys([*a, *b]):
                if key in _NOT_COMPARED or _same(a.get(key, _ABSENT), b.get(key, _ABSENT)):
                    continue
                shown = lambda v: "nothing" if v is _ABSENT else safe_repr(v, 60)  # noqa: E731
                return (f"the parts made different instances outside each() (instance {str(a.get('name'))[:80]!r}: its "
                        f"{key} is {shown(a.get(key, _ABSENT))} in {first_label or 'one part'} and "
                        f"{shown(b.get(key, _ABSENT))} in {label or 'another'}): {advice}")
    return first


_ABSENT = object()
"""A field an instance of one part leaves out (compared as such: never equal to a written value)."""


def _local(part: dict[str, Any]) -> dict[str, Any]:
    """The process pool reports a process killed by a signal as a crash (it is not retried here)."""
    return {**part, "status": "crashed"} if part["status"] == "lost" else part


def run_scripts(scripts: dict[str, Script], names: Sequence[str], *, quick: bool = False, jobs: int = 1,
                timeout: float | None = None, on_start: Callable[[str], None] | None = None,
                on_done: Callable[[ScriptOutcome], None] | None = None, env: Mapping[str, str] | None = None) -> RunSummary:
    """Run the scripts ``names`` (in that order of rows) with up to ``jobs`` processes at once.

    ``on_start(name)`` is called when a script's first process starts, ``on_done(row)`` as soon as
    all of a script's processes have finished. ``env`` is added to every process's environment.
    A script split into shards whose shards met different numbers of cases is ``crashed`` (its
    parts cannot be merged into the rows of one process).
    A ``KeyboardInterrupt`` (Ctrl-C, or SIGTERM turned into one by the CLI) stops every process and
    returns the partial run (``interrupted``).
    """
    if not isinstance(jobs, int) or jobs < 1:
        raise UsageError(f"jobs: expected a positive int, found {jobs!r}")
    if timeout is not None and not (isinstance(timeout, (int, float)) and not isinstance(timeout, bool)
                                    and 0 < timeout < float("inf")):
        raise UsageError(f"timeout: expected a positive, finite number of seconds per script process (None for no "
                         f"limit), found {timeout!r}")
    start = time.perf_counter()
    procs = Processes()
    tasks: list[tuple[str, Task]] = []
    for name, k in plan(scripts, names, jobs):
        tasks.extend((name, scripts[name].task(quick, shard=(i, k) if k > 1 else None, timeout=timeout, env=env))
                     for i in range(k))
    parts: dict[str, list[Any]] = {name: [] for name in names}
    expected = {name: sum(1 for n, _ in tasks if n == name) for name in names}
    started: set[str] = set()
    lock = threading.Lock()
    done: dict[str, ScriptOutcome] = {}
    interrupted = False

    def run(name: str, task: Task) -> tuple[str, dict[str, Any]]:
        with lock:
            first = name not in started
            started.add(name)
        if first and on_start:
            on_start(name)
        try:
            part = _local(execute(task, procs))
        except Exception as e:  # one task's failure here is its row's, never the run's
            why = " ".join(str(e).split())[:300]
            part = {"status": "crashed", "result": None, "seconds": 0.0,
                    "error": f"the runner failed on this script's process: {type(e).__name__}: {why}"}
        return name, {**part, "part": task.part()}

    pool = ThreadPoolExecutor(max_workers=jobs)
    futures: set[Future[tuple[str, Any]]] = {pool.submit(run, n, t) for n, t in tasks}  # started in this order
    try:
        while futures:
            finished, futures = wait(futures, return_when=FIRST_COMPLETED)
            for fut in finished:
                name, part = fut.result()
                parts[name].append(part)
                if len(parts[name]) == expected[name]:
                    done[name] = merge(scripts[name], parts[name])
                    if on_done:
                        on_done(done[name])
    except KeyboardInterrupt:
        interrupted = True
        procs.stop()
        for fut in futures:
            fut.cancel()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return RunSummary(quick, tuple(rows(scripts, names, done)), time.perf_counter() - start, interrupted, jobs)


def _split_cases(parts: Sequence[Mapping[str, Any]], cases: int | None = None) -> str:
    """Why the finished shards of one script cannot be merged ('' when they can): they met
    different numbers of cases (a script whose cases depend on the process), or not the ``cases``
    its count task met, so some cases would run twice and others never."""
    met = sorted(((str(p.get("part")), p["cases"]) for p in parts if p.get("status") == "done" and "cases" in p),
                 key=lambda m: (len(m[0]), m[0]))  # shard 2/12 before shard 10/12
    if cases is not None and met:
        met.insert(0, ("the count", cases))
    if len({n for _, n in met}) <= 1:
        return ""
    return ("the shards met different numbers of cases (" + ", ".join(f"{part}: {n}" for part, n in met) + "): a "
            "SHARDABLE script must meet the same cases, in the same order, in every process (no unseeded randomness)")


def rows(scripts: dict[str, Script], names: Sequence[str], done: Mapping[str, ScriptOutcome]) -> list[ScriptOutcome]:
    """The rows in the order of ``names``: the finished ones, ``interrupted`` for the others."""
    out = []
    for name in names:
        if name in done:
            out.append(done[name])
        else:
            s = scripts[name]
            out.append(ScriptOutcome(name, s.title, "interrupted", 0.0, error="the run was interrupted", source=s.source))
    return out


# ---- JUnit XML and golden runs --------------------------------------------------------------------


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(v: Any) -> str:
    """``str(v)`` with every character XML 1.0 cannot hold (control characters such as the ESC of
    a coloured traceback, NUL, lone surrogates) written as ``\\xNN``/``\\uNNNN``: shown, never
    dropped, and the document stays well-formed."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}",
                        str(v))


def claim_detail(inst: Mapping[str, Any]) -> str:
    """The part of an instance's detail that belongs to its claim, shown wherever the claim is: a ∀ row's
    (``∀ NAME: RANGES``, :func:`~symverify.scripts.instances.forall_instance`) whole detail — a proof's
    hypotheses (``given input nonzero only where …``, its placements' ``assume``), which the name leaves
    out, or a refutation's counterexample —, else ``""``."""
    detail = inst.get("detail")
    return str(detail) if str(inst.get("name", "")).startswith("∀ ") and detail else ""


def junit_xml(summary: RunSummary) -> str:
    """JUnit XML: one ``testsuite`` per script, one ``testcase`` per instance (a failure when it is
    not proved or over a bound; ``skipped`` when it is an argued claim, never decided by the tool),
    with the instance's kind, verdict, basis, a randomized proof's ``failure_bound`` and a ∀ row's detail (:func:`claim_detail`) as ``properties``; a script without a result
    (crashed, timed out, interrupted) is one ``testcase`` with an error of that type."""
    suites = ET.Element("testsuites", name="symverify prove", tests="0", failures="0", errors="0")
    total = fails = errors = 0
    for o in summary.outcomes:
        suite = ET.SubElement(suites, "testsuite", name=_xml_text(o.name))
        cases = o.instances()
        n_fail = n_err = n_skip = 0
        if o.status in NO_RESULT or not cases:
            case = ET.SubElement(suite, "testcase", classname=_xml_text(f"symverify.proofs.{o.name}"),
                                 name=_xml_text(o.title or o.name))
            ET.SubElement(case, "error", message=_xml_text(o.status), type=_xml_text(o.status)).text = _xml_text(
                o.error or "no instances checked")
            n_err, cases = 1, []
        for inst in cases:
            case = ET.SubElement(suite, "testcase", classname=_xml_text(f"symverify.proofs.{o.name}"),
                                 name=_xml_text(inst.get("name")), time=_xml_text(inst.get("seconds", 0)))
            kind = str(inst.get("kind", "prover"))
            props = ET.SubElement(case, "properties")
            ET.SubElement(props, "property", name="kind", value=_xml_text(kind))
            ET.SubElement(props, "property", name="verdict", value=_xml_text(inst.get("verdict")))
            if "failure_bound" in inst:  # a randomized proof's error bound, exact
                ET.SubElement(props, "property", name="failure_bound", value=_xml_text(inst["failure_bound"]))
            if inst.get("basis"):
                ET.SubElement(props, "property", name="basis", value=_xml_text(inst.get("basis")))
            if claim_detail(inst):  # a ∀ proof's hypotheses: part of what is proved
                ET.SubElement(props, "property", name="detail", value=_xml_text(claim_detail(inst)))
            if inst.get("ok") and kind == "argued":  # not decided by the tool: shown, never counted as proved
                ET.SubElement(case, "skipped", message=_xml_text(f"argued (not proved by the tool): {inst.get('basis', '')}"))
                n_skip += 1
            if not inst.get("ok"):
                n_fail += 1
                why = failure_reason(inst)
                cex = inst.get("counterexample")
                text = str(inst.get("detail", "")) + ("" if cex is None else "\ncounterexample: " + json.dumps(cex, ensure_ascii=False))
                ET.SubElement(case, "failure", message=_xml_text(why), type=_xml_text(inst.get("verdict"))).text = _xml_text(text)
        suite.set("tests", str(max(len(cases), n_err)))
        suite.set("failures", str(n_fail))
        suite.set("errors", str(n_err))
        suite.set("skipped", str(n_skip))
        total += max(len(cases), n_err)
        fails += n_fail
        errors += n_err
    suites.set("tests", str(total))
    suites.set("failures", str(fails))
    suites.set("errors", str(errors))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


_LEFT_OUT: dict[str, Any] = {"kind": "prover", "ok": False, "resources": {}, "bounds": {}, "checks": None,
                              "failure_bound": None}
"""What an instance's field left out means (docs/formats.md § Proof run; a run of 0.1.0 has no ``kind``)."""


def _golden_view(run: dict[str, Any]) -> list[dict[str, Any]]:
    """What a golden comparison looks at: per script its status and per instance its verdict,
    kind, method, resources, bounds, ``ok``, a randomized proof's ``failure_bound``, an argued claim's ``checks`` (an argued claim whose
    checks held and are no longer run is still ok, but differs) and, where written, the side
    ``digests`` of the reports a claim was made from; no times, no free-text details;
    the scripts in the order of their names (``prove b a`` against a golden of ``a b`` compares each
    script with its own)."""
    out = []
    for s in run.get("scripts", []):
        insts = [{**{k: i.get(k, _LEFT_OUT.get(k))
                     for k in ("name", "verdict", "kind", "method", "resources", "bounds", "ok", "checks", "failure_bound")},
                  **({"digests": i["digests"]} if "digests" in i else {})}
                 for i in ((s.get("result") or {}).get("instances", []))]
        out.append({"name": s.get("name"), "status": s.get("status"), "instances": insts})
    return sorted(out, key=lambda v: str(v["name"]))  # stable: scripts of one name keep their order


def _view_text(view: list[dict[str, Any]]) -> str:
    return json.dumps(view, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def golden_text(run: dict[str, Any]) -> str:
    """The golden view of a run as sorted, indented JSON."""
    return _view_text(_golden_view(run))


def _undigested(golden: list[dict[str, Any]], run: list[dict[str, Any]]) -> int:
    """Drop, from the instances of the view ``run``, the ``digests`` that their counterparts in the
    view ``golden`` (the same script by name, the same instance by position and name) do not hold:
    a golden run written before runs held them is compared without them. Returns how many were
    dropped. Digests the golden run holds and this run does not stay: the claim no longer names
    the sides of a report, a difference."""
    stored = {str(v["name"]): v for v in golden}
    dropped = 0
    for script in run:
        g = stored.get(str(script["name"]))
        if g is None:
            continue
        for a, b in zip(g["instances"], script["instances"]):
            if "digests" in b and "digests" not in a and a.get("name") == b.get("name"):
                del b["digests"]
                dropped += 1
    return dropped


def _golden_views(run: dict[str, Any], golden: dict[str, Any],
                  scripts: Sequence[str] | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    """The views golden_diff compares (the stored run's restricted to ``scripts``), and how many
    of this run's instances' digests the stored run does not hold (:func:`_undigested`)."""
    if scripts is not None:
        golden = {**golden, "scripts": [s for s in golden.get("scripts", []) if s.get("name") in set(scripts)]}
    g, r = _golden_view(golden), _golden_view(run)
    return g, r, _undigested(g, r)


def golden_note(run: dict[str, Any], golden: dict[str, Any], scripts: Sequence[str] | None = None) -> str:
    """What a golden comparison did not compare, '' when nothing: the instances whose side
    ``digests`` this run holds and the stored run (written before runs held them) does not; they
    are compared without them, and ``--update-golden`` adds them."""
    n = _golden_views(run, golden, scripts)[2]
    if not n:
        return ""
    return (f"the golden run holds no side digests for {n} instance{'s' if n != 1 else ''} that this run names by them "
            "(it was written before runs held them), so which identities they prove was not compared; "
            "--update-golden adds them")


def load_run(path: str | Path) -> dict[str, Any]:
    """A run written by ``symverify prove --json``, checked as docs/formats.md § Proof run says
    (:func:`~symverify.viz.run_format.check_run`; a :class:`SerializationError` otherwise)."""
    from symverify.ir.serialize import read_json_file
    from symverify.viz.run_format import check_run

    data = read_json_file(path, "the golden run")  # a regular file, strict JSON (no repeated keys, no NaN)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SerializationError(f"{path}: expected a run written by symverify prove --json (format {FORMAT!r})")
    if not isinstance(data.get("scripts"), list):
        raise SerializationError(f"{path}.scripts: expected a list of scripts, found {type(data.get('scripts')).__name__}")
    return check_run(data, str(path), from_file=True)  # a forged or inconsistent record is refused


def golden_update(run: dict[str, Any], path: str | Path) -> tuple[dict[str, Any], list[str], str]:
    """What ``--update-golden`` writes for a run of named scripts (``prove a --golden G
    --update-golden``), the names of the stored scripts it keeps, and what it drops: such a run is
    compared with its scripts' part of the stored run only, so it replaces only that part; the
    stored run's other scripts stay, in their place (scripts new to it after them). The run is
    written as it is (the stored one replaced whole) when there is no stored run that reads
    (:func:`load_run`; ``symverify prove`` refuses, before the run, a stored file that is not empty
    and does not read), or it is of the other tier or of an older version (its scripts cannot be
    mixed into a run of this one): then the third item says so and names the stored scripts that
    are dropped ('' when none is), which were lost without a word.

    A merged run (a stored script kept) was written by more than one run, so its top-level times
    are not one run's (:func:`merged_times`)."""
    from symverify.viz.run_format import run_ok

    try:
        stored = load_run(path)
    except (SerializationError, OSError):
        return run, [], ""
    ran = {s["name"] for s in run["scripts"]}
    if stored.get("quick") != run.get("quick") or stored.get("version") != run.get("version"):
        lost = [s["name"] for s in stored["scripts"] if s["name"] not in ran]
        of = ("the quick tier" if stored.get("quick") else "the full tier") if stored.get("quick") != run.get("quick") \
            else f"version {stored.get('version')}"
        return run, [], f"the stored run, of {of}, replaced whole: its scripts {', '.join(lost)} dropped" if lost else ""
    mine = {s["name"]: s for s in run["scripts"]}
    scripts = [mine.pop(s["name"], s) for s in stored["scripts"]]
    kept = [s["name"] for s in stored["scripts"] if s["name"] not in ran]
    merged = {**run, "scripts": [*scripts, *mine.values()]}
    if kept:
        merged = merged_times(merged, run, stored)
    merged["ok"] = run_ok(merged)
    return merged, kept, ""


def merged_times(merged: dict[str, Any], run: Mapping[str, Any], stored: Mapping[str, Any]) -> dict[str, Any]:
    """The top-level ``seconds``, ``jobs`` and ``scheduler`` of ``merged``, the stored run's scripts
    with those of a newer ``run`` in place of theirs, stated only where true of the whole file:
    ``seconds`` is the sum of its scripts' ``seconds`` (each as the run that wrote it measured it;
    not one run's wall-clock time), left out unless ``run`` states times and every script has its
    own (or their sum is no finite float); ``jobs`` and ``scheduler`` are kept only where the stored
    run states the same (``scheduler`` left out on both: the local process pool), else both are left
    out (they state nothing then)."""
    out = {k: v for k, v in merged.items() if k not in ("seconds", "jobs", "scheduler")}
    secs = [s.get("seconds") for s in merged["scripts"]]
    if "seconds" in run and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in secs):
        total = round(sum(secs), 1)  # each below 2^1024, their sum need not be: no Infinity in a run file
        if math.isfinite(total):
            out["seconds"] = total
    if "jobs" in run and stored.get("jobs") == run["jobs"] and stored.get("scheduler") == run.get("scheduler"):
        out["jobs"] = run["jobs"]
        if "scheduler" in run:
            out["scheduler"] = run["scheduler"]
    return out


def golden_diff(run: dict[str, Any], golden: dict[str, Any], scripts: Sequence[str] | None = None) -> str:
    """A unified diff of the golden views ('' when they agree); with ``scripts``, the stored run is
    compared only on those scripts (a run of some scripts against a golden of all). Side ``digests``
    are compared where the stored run holds them (:func:`golden_note` says where it does not). A run of the
    other tier (``quick`` true on one side, false on the other) differs, with the line ``run:
    quick: golden → this run``, even where its instances happen to agree."""
    tier = ""
    if isinstance(golden.get("quick"), bool) and isinstance(run.get("quick"), bool) and golden["quick"] != run["quick"]:
        tier = f"run: quick: {json.dumps(golden['quick'])} → {json.dumps(run['quick'])}\n"
    g, r, _ = _golden_views(run, golden, scripts)
    a, b = _view_text(g), _view_text(r)
    if a == b:
        return tier
    return tier + "".join(_field_lines(g, r)) + "".join(
        difflib.unified_diff(a.splitlines(True), b.splitlines(True), "golden", "this run", n=2))


def _field_lines(golden: list[dict[str, Any]], run: list[dict[str, Any]]) -> list[str]:
    """``script: instance: field: golden → this run`` for every field of the golden views that
    differs (scripts and instances matched by position; one left over is ``(none)`` on the other
    side), so a difference names its instance wherever the unified diff's context falls."""
    def shown(v: Any) -> str:
        text = json.dumps(v, sort_keys=True, ensure_ascii=False)
        return text if len(text) <= 80 else text[:79] + "…"

    out = []
    for k in range(max(len(golden), len(run))):
        g = golden[k] if k < len(golden) else None
        r = run[k] if k < len(run) else None
        name = (r or g or {}).get("name")
        if g is None or r is None or g.get("name") != r.get("name"):
            out.append(f"{name}: script: {shown(g and g.get('name')) if g else '(none)'} → "
                       f"{shown(r.get('name')) if r else '(none)'}\n")
            continue
        if g.get("status") != r.get("status"):
            out.append(f"{name}: status: {shown(g.get('status'))} → {shown(r.get('status'))}\n")
        gi, ri = g.get("instances", []), r.get("instances", [])
        for j in range(max(len(gi), len(ri))):
            a = gi[j] if j < len(gi) else None
            b = ri[j] if j < len(ri) else None
            inst = (b or a or {}).get("name")
            if a is None or b is None:
                out.append(f"{name}: {inst}: instance: {'(none)' if a is None else 'present'} → "
                           f"{'(none)' if b is None else 'present'}\n")
                continue
            for key in sorted(set(a) | set(b)):
                if a.get(key) != b.get(key):
                    out.append(f"{name}: {a.get('name') if key == 'name' else inst}: {key}: {shown(a.get(key))} → "
                               f"{shown(b.get(key))}\n")
    return out

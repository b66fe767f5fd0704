"""The proof-run format (docs/formats.md § Proof run): its fields, and the rules its readers check.

A proof run is what ``symverify prove --json RUN.json`` writes; its readers are ``--golden``
(:func:`symverify.scripts.runner.load_run`) and ``symverify report`` / :func:`plot_resources`
(:func:`symverify.viz.resources.load_run`). Both read through :func:`check_run`, which refuses a
document that no run writes, with a :class:`~symverify.errors.SerializationError` naming the field:

* a field that is not one of the format's (:data:`RUN_FIELDS`, :data:`SCRIPT_FIELDS`,
  :data:`RESULT_FIELDS`, :data:`INSTANCE_FIELDS`), or of the wrong type (``quick: "yes"``,
  ``seconds: -5``, ``method: 3``); a ``version`` not in :data:`READ_VERSIONS`;
* an instance as :func:`check_instance` says (its verdict, kind, ``ok``, resources against bounds);
* a summary that does not say what its instances say: a script's ``counts`` or ``over_bound``
  other than those of its instances, ``ok`` other than ``status == "ok"``, a script ``ok`` without
  a result, with no instance or with an instance that is not ok, a result of a script that did
  not run (``crashed``, ``timeout``, ``interrupted``), a run's ``ok`` other than "some script, not
  interrupted, every script ok"; two scripts of one name.

Fields left out take the defaults the section states (an instance's ``kind`` is ``prover``, its
``ok`` false; a summary left out states nothing), so that every run symverify has written is read.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from fractions import Fraction
from typing import Any

from symverify.errors import SerializationError
from symverify.kernel.provers.outcome import Verdict

__all__ = ["FORMAT", "VERSION", "STATUSES", "NO_RESULT", "KINDS", "VERDICTS", "RUN_FIELDS", "SCRIPT_FIELDS",
           "RESULT_FIELDS", "INSTANCE_FIELDS", "PART_FIELDS", "PART_RESULT_FIELDS", "count_claims", "run_value", "exceeded_bounds", "check_instance",
           "check_result", "check_script", "check_run", "script_over_bound", "instance_ok", "script_ok", "run_ok",
           "COUNTEREXAMPLE_DEPTH", "READ_VERSIONS", "COUNTEREXAMPLE_VALUES", "json_problem",
           "RESULT_FORMAT", "RESULT_VERSION", "RESULT_READ_VERSIONS", "result_version_problem", "check_bounds_stated",
           "DIGESTS_VERSION", "check_digests_stated", "PART_NOTE", "part_title"]

FORMAT = "symverify.proof-run"
VERSION = 4
READ_VERSIONS = (2, 3, 4)
"""The versions the readers take. 4 is the version written: every prover's claim names what it is
about (``digests``, :func:`check_digests_stated`). 3 is 4 with ``digests`` optional (they came
within version 3, so a version 3 run may hold them or not; it is read as written). 2 is 3 without
``failure_bound`` (a randomized proof's error bound) and without ``digests``. A later version is
refused, saying it may be a run of a newer symverify."""
DIGESTS_VERSION = 4
"""The first version whose prover claims all state their ``digests``."""
RESULT_FORMAT = "symverify.proof-result"
"""The ``format`` of the file a proof script's process writes (``script_main --json OUT``): one
script's result (or part of it, or its count of cases), which the runner reads back."""
RESULT_VERSION = 2
RESULT_READ_VERSIONS = (1, 2)
"""The versions of a script's result file the runner and ``symverify report`` read: 2 holds
``digests`` on every prover's claim (:func:`check_digests_stated`), 1 may hold them or not (they
came within version 1; read as written)."""
STATUSES = ("ok", "failed", "crashed", "timeout", "interrupted")
NO_RESULT = ("crashed", "timeout", "interrupted")
"""The statuses of a script row without a result: ``crashed``, ``timeout`` (killed at ``--timeout``;
``error`` says after how long) and ``interrupted``."""
KINDS = ("prover", "computed", "argued")
VERDICTS = tuple(v.value for v in Verdict)

# field -> its JSON type ("str", "bool", "seconds": a finite number ≥ 0, "jobs": an int ≥ 1,
# "counts", "names": a list of strings, "object", "list", "any"); every other field is refused.
RUN_FIELDS = {"format": "str", "version": "version", "quick": "bool", "ok": "bool", "interrupted": "bool",
              "scripts": "list", "seconds": "seconds", "jobs": "jobs", "scheduler": "str"}
SCRIPT_FIELDS = {"name": "str", "title": "str", "source": "str", "status": "status", "ok": "bool", "counts": "counts",
                 "over_bound": "names", "error": "str", "result": "result", "seconds": "seconds", "output_cut": "str"}
RESULT_FIELDS = {"name": "str", "title": "str", "ok": "bool", "counts": "counts", "seconds": "seconds",
                 "instances": "list"}
METHOD_TOKENS = frozenset({
    # the methods of symverify.verify
    "auto", "exact", "exact-sympy", "compositional", "randomized", "z3",
    # the matrix prover (symverify.kernel.provers.matrix)
    "exact-matrix", "garbage-free",
    # other exact arguments a script combines: the zero-support / dependence analysis, a cross-check
    # against the dense baseline, a stated lemma, counting, exact rank or degree computations, an
    # explicit witness construction, a lower-bound argument, input validation that must refuse
    "support", "dense", "lemma", "counting", "rank", "degree", "witness", "lower-bound", "validation",
})
"""The words an instance's ``method`` is made of (joined by ``+``): what
:class:`~symverify.scripts.protocol.Instance` accepts and a run's readers (:func:`check_instance`) take."""

INSTANCE_FIELDS = {"name": "str", "verdict": "verdict", "method": "str", "resources": "object", "bounds": "object",
                   "seconds": "seconds", "detail": "str", "kind": "kind", "basis": "str", "checks": "checks",
                   "over_bound": "names", "ok": "bool", "counterexample": "json", "failure_bound": "bound",
                   "digests": "digests"}
_COUNT_KEYS = frozenset((*VERDICTS, "argued"))
PART_FIELDS = {**INSTANCE_FIELDS, "case": "case", "before": "index"}
"""An instance of one part of a script's result (``--shard K/N``, ``--cases``): tagged with its case."""
PART_RESULT_FIELDS = {"format": "str", "version": "result_version", **RESULT_FIELDS, "cases": "index"}
"""A script's result file (:data:`RESULT_FORMAT`): a result that says its ``format`` and
``version`` and, as one part of a script, how many cases it met."""


def _counts_agree(written: Mapping[str, Any], instances: list[Mapping[str, Any]]) -> bool:
    """Whether ``counts`` as written are its instances' (a run of 0.1.0 wrote no ``argued``: its claims had no kinds)."""
    counts = count_claims(instances)
    if "argued" not in written and counts["argued"] == 0:
        del counts["argued"]
    return dict(written) == counts


def count_claims(instances: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Instances (as JSON) by verdict, argued claims apart: ``{"proved", "refuted", "unknown", "argued"}``."""
    out = {"proved": 0, "refuted": 0, "unknown": 0, "argued": 0}
    for inst in instances:
        key = "argued" if inst.get("kind") == "argued" else str(inst.get("verdict", "unknown"))
        out[key] = out.get(key, 0) + 1
    return out


def script_over_bound(instances: Iterable[Mapping[str, Any]]) -> list[str]:
    """A script's ``over_bound``: ``instance: resource`` for every resource its instances list as over its bound."""
    return [f"{i.get('name')}: {k}" for i in instances for k in i.get("over_bound", [])]


def _shown(v: Any) -> str:
    from symverify.ir.bigint import safe_repr

    return safe_repr(v, 40)  # an int of 10^5000 is shown by its size (repr would raise)


def _number_shown(v: Any) -> str:
    """A resource or bound as the file writes it: ``7/2``, not ``'7/2'`` (:func:`_shown` otherwise)."""
    return (v if len(v) <= 40 else v[:39] + "…") if isinstance(v, str) else _shown(v)


def _is_int(v: Any, least: int) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= least


def _seconds(v: Any) -> bool:
    """A number ≥ 0 that is a finite float (an int of 10^400 seconds is not: the page could not show it)."""
    if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0:
        return False
    try:
        return math.isfinite(float(v))
    except OverflowError:
        return False


COUNTEREXAMPLE_DEPTH = 58
"""How deep a ``counterexample`` may nest (``[1]`` is 1): a run file holds it 6 levels down (run,
``scripts``, script, ``result``, ``instances``, instance), and no JSON file symverify reads nests
deeper than :data:`~symverify.ir.limits.MAX_JSON_DEPTH` = 64."""


COUNTEREXAMPLE_VALUES = 10**7
"""The most JSON values a ``counterexample`` may hold, counting a list or dict met at several
places (shared objects) once at each: what its JSON text would hold."""


class _NotJsonError(Exception):
    pass


def json_problem(v: Any) -> str:
    """Why ``v`` is not a JSON value a run file can hold ('' when it is): null, true, false, a
    string, an int (that ``json`` can write), a finite float, a list (or tuple), or a dict with
    text keys, nested at most :data:`COUNTEREXAMPLE_DEPTH` deep (what ``json.dumps`` writes and
    symverify's readers read back), with at most :data:`COUNTEREXAMPLE_VALUES` values as JSON text
    would hold them (a list at several places counts at each: ``[x, x]`` nested 50 deep is 2^50
    values) and no cycle. Linear in the number of distinct objects."""
    from symverify.ir.bigint import digit_count

    limit = sys.get_int_max_str_digits() or math.inf
    done: dict[int, tuple[int, int]] = {}  # a container's (values as written, levels of nesting below it)
    active: set[int] = set()

    def walk(x: Any, at: str, depth: int) -> tuple[int, int]:
        where = at or "the top"
        if x is None or isinstance(x, (bool, str)):
            return 1, 0
        if isinstance(x, int):
            if digit_count(x) > limit:
                raise _NotJsonError(f"an int of {digit_count(x)} digits at {where} (JSON text holds at most {limit})")
            return 1, 0
        if isinstance(x, float):
            if not math.isfinite(x):
                raise _NotJsonError(f"{x} at {where}")
            return 1, 0
        if not isinstance(x, (list, tuple, dict)):  # json.dumps cannot write another Mapping
            raise _NotJsonError(f"a {type(x).__name__} at {where}")
        if id(x) in active:
            raise _NotJsonError(f"a {type(x).__name__} holding itself at {where} (a cycle)")
        if id(x) not in done:
            if depth >= COUNTEREXAMPLE_DEPTH:
                raise _NotJsonError(f"nesting deeper than {COUNTEREXAMPLE_DEPTH} at {at}")
            active.add(id(x))
            if isinstance(x, dict):
                bad = next((k for k in x if not isinstance(k, str)), None)
                if bad is not None:
                    raise _NotJsonError(f"the key {_shown(bad)} at {where}")
                items = [(y, f"{at}.{k}"[:200]) for k, y in x.items()]
            else:
                items = [(y, f"{at}[{k}]"[:200]) for k, y in enumerate(x)]
            values, below = 1, 0
            for y, there in items:
                n, h = walk(y, there, depth + 1)
                values, below = values + n, max(below, h + isinstance(y, (list, tuple, dict)))
                if values > COUNTEREXAMPLE_VALUES:
                    raise _NotJsonError(f"more than {COUNTEREXAMPLE_VALUES} values at {where} (as JSON text writes "
                                   f"them, a list met at several places at each)")
            active.discard(id(x))
            done[id(x)] = values, below
        values, below = done[id(x)]
        if depth + below >= COUNTEREXAMPLE_DEPTH:
            raise _NotJsonError(f"nesting deeper than {COUNTEREXAMPLE_DEPTH} below {where}")
        return values, below

    try:
        walk(v, "", 0)
    except _NotJsonError as e:
        return str(e)
    return ""


_EXACT_TEXT = re.compile(r"-?[0-9]+(?:/[0-9]+)?\Z", re.ASCII)
"""The exact text of a number in a run (``"-12/5"``): what :func:`run_value` reads."""

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_DIGESTS_SHAPE = "a non-empty list of objects {\"lhs\": DIGEST, \"rhs\": DIGEST}, each DIGEST 'sha256:' and 64 lowercase hex digits"


def _check_digests(inst: Mapping[str, Any], where: str) -> None:
    """Refuse ``digests`` that no run writes: an item that is not ``{"lhs": DIGEST, "rhs": DIGEST}``
    (one report's side digests, :func:`~symverify.kernel.verification.side_digest`), named by its
    index and key; ``digests`` on a claim that is not a prover's."""
    if "digests" not in inst:
        return
    kind = inst.get("kind", "prover")
    if kind != "prover":
        raise SerializationError(f"{where}.digests: only a prover's claim names the sides of its reports; this one is "
                                 f"a {kind} claim")
    for j, pair in enumerate(inst["digests"]):
        if not isinstance(pair, Mapping) or set(pair) != {"lhs", "rhs"}:
            found = (f"the keys {', '.join(sorted(map(_shown, pair))) or '(none)'}" if isinstance(pair, Mapping)
                     else _shown(pair))
            raise SerializationError(f"{where}.digests[{j}]: expected an object {{\"lhs\": DIGEST, \"rhs\": DIGEST}}, "
                                     f"found {found}")
        for side in ("lhs", "rhs"):
            if not isinstance(pair[side], str) or _DIGEST.fullmatch(pair[side]) is None:
                raise SerializationError(f"{where}.digests[{j}].{side}: expected 'sha256:' and 64 lowercase hex digits, "
                                         f"found {_shown(pair[side])}")


# a field's type: (what it must be, the test)
_TYPES: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "str": ("a string", lambda v: isinstance(v, str)),
    "bool": ("true or false", lambda v: isinstance(v, bool)),
    "list": ("a list", lambda v: isinstance(v, list)),
    "object": ("an object", lambda v: isinstance(v, Mapping)),
    "seconds": ("a finite number of seconds ≥ 0", _seconds),
    "jobs": ("a positive integer", lambda v: _is_int(v, 1)),
    "index": ("an integer ≥ 0", lambda v: _is_int(v, 0)),
    "case": ("null or a case index ≥ 0", lambda v: v is None or _is_int(v, 0)),
    "names": ("a list of strings", lambda v: isinstance(v, list) and all(isinstance(k, str) for k in v)),
    "counts": ("an object of counts {proved, refuted, unknown, argued} (argued left out in runs of 0.1.0)",
               lambda v: isinstance(v, Mapping) and set(v) in (_COUNT_KEYS, _COUNT_KEYS - {"argued"})
               and all(_is_int(n, 0) for n in v.values())),
    "version": (", ".join(map(str, READ_VERSIONS[:-1])) + f" or {READ_VERSIONS[-1]}",
                lambda v: type(v) is int and v in READ_VERSIONS),
    "result_version": (" or ".join(map(str, RESULT_READ_VERSIONS)),
                       lambda v: type(v) is int and v in RESULT_READ_VERSIONS),
    "status": (f"one of {', '.join(STATUSES)}", lambda v: isinstance(v, str) and v in STATUSES),
    "verdict": (f"one of {', '.join(VERDICTS)}", lambda v: isinstance(v, str) and v in VERDICTS),
    "kind": (f"one of {', '.join(KINDS)}", lambda v: isinstance(v, str) and v in KINDS),
    "checks": ("null, or true or false on an argued claim", lambda v: v is None or isinstance(v, bool)),
    "result": ("null or an object", lambda v: v is None or isinstance(v, Mapping)),
    "bound": ("a randomized proof's error bound: an exact rational in [0, 1) such as '1/1267650600228229401496703205376'",
              lambda v: isinstance(v, str) and _EXACT_TEXT.match(v) is not None),
    "digests": (_DIGESTS_SHAPE, lambda v: isinstance(v, list) and bool(v)),  # each item: _check_digests
    "json": (f"a JSON value (finite numbers, text keys, nested at most {COUNTEREXAMPLE_DEPTH} deep)",
             lambda v: not json_problem(v)),
}


def _check_fields(d: Mapping[str, Any], fields: Mapping[str, str], where: str) -> None:
    """Every key of ``d`` is one of ``fields`` and of its type."""
    for key, value in d.items():
        kind = fields.get(key) if isinstance(key, str) else None
        if kind is None:
            raise SerializationError(f"{where}: unknown field {_shown(key)}; expected only {', '.join(fields)}")
        expected, test = _TYPES[kind]
        if not test(value):
            newest = {"version": (VERSION, "run"), "result_version": (RESULT_VERSION, "result")}.get(kind)
            hint = (f" (a {newest[1]} of a newer symverify?)" if newest is not None and type(value) is int
                    and value > newest[0] else "")
            found = json_problem(value) if kind == "json" else _shown(value)
            raise SerializationError(f"{where}.{key}: expected {expected}, found {found}{hint}")


def run_value(v: Any, where: str) -> Fraction:
    """A resource or bound of a proof run, exactly: a number by the one rule for resources
    (:func:`~symverify.kernel.ir.scalar.plain_resource`: a JSON int, a finite float; in a run given as a
    dict also a ``Fraction`` or a numpy integer), or the exact text ``"-12/5"`` that ``stable_number``
    writes (nothing else: not ``" 1"``, ``"0x10"``, ``"1e9"``, ``true``)."""
    from symverify.errors import IRError, SymverifyError
    from symverify.ir.bigint import str_to_int
    from symverify.kernel.ir.scalar import plain_resource

    if not isinstance(v, str):
        try:
            return Fraction(plain_resource(v, where))
        except IRError:
            pass  # the message below says what a run may hold
    elif _EXACT_TEXT.match(v):
        num, _, den = v.partition("/")
        try:
            q, d = str_to_int(num, where), str_to_int(den, where) if den else 1
        except SymverifyError as e:
            raise SerializationError(str(e)) from None
        if d:
            return Fraction(q, d)
    shown = repr(v) if not isinstance(v, str) or len(v) <= 40 else repr(v[:40]) + "…"
    raise SerializationError(f"{where}: expected an int, a float or an exact rational such as '-12/5', found {shown}")


def exceeded_bounds(inst: Mapping[str, Any], where: str) -> list[str]:
    """The resources of an instance record over their bounds, derived from its ``resources`` and
    ``bounds`` (a bound without a value counts, as :meth:`~symverify.scripts.protocol.Instance.over_bound`
    counts it), never read from its ``over_bound``. Every resource and bound must be an exact
    number (:func:`run_value`).

    Raises:
        SerializationError: ``resources`` or ``bounds`` not an object, or a value not an exact number.
    """
    raw_res, raw_bounds = inst.get("resources", {}), inst.get("bounds", {})
    for part, got in (("resources", raw_res), ("bounds", raw_bounds)):
        if not isinstance(got, Mapping):
            raise SerializationError(f"{where}.{part}: expected an object, found {type(got).__name__}")
        for key in got:
            if not isinstance(key, str):  # a dict built in memory; "1" and 1 would name one resource
                raise SerializationError(f"{where}.{part}: expected an object with text keys, found the key {_shown(key)}")
    bounds = {str(k): run_value(v, f"{where}.bounds.{k}") for k, v in raw_bounds.items()}
    res = {str(k): run_value(v, f"{where}.resources.{k}") for k, v in raw_res.items()}
    return [k for k, b in bounds.items() if k not in res or res[k] > b]


def _named_object(obj: Any, where: str) -> None:
    """Refuse ``obj`` unless it is an object with a text ``name`` (a script or an instance)."""
    if not isinstance(obj, Mapping):
        raise SerializationError(f"{where}: expected an object, found {type(obj).__name__}")
    if not isinstance(obj.get("name"), str):
        raise SerializationError(f"{where}.name: expected a string, found {_shown(obj['name']) if 'name' in obj else 'nothing'}")


def check_instance(inst: Any, where: str, fields: Mapping[str, str] = INSTANCE_FIELDS) -> None:
    """Refuse an instance record of a proof run that no run writes (docs/formats.md § Proof run):
    a field that is not the format's or of the wrong type, a verdict, kind, ``checks`` or ``ok``
    of the wrong type or value, an argued claim with a verdict, ``checks`` on a claim that is not
    argued, a ``counterexample`` on an instance that is not refuted or one that is ``null`` (every
    version leaves the field out where a refutation has no counterexample), ``ok`` for an instance that is
    not proved (or not argued), that is an argued claim whose checks failed, or that is over a
    bound (a resource above its bound, or a bound without a value, whether or not ``over_bound``
    is written), an ``over_bound`` that does not list exactly the resources over their bounds, or
    a resource or bound that is not an exact number (:func:`run_value`). A forged file is an
    error, never a page or a golden run that shows a pass.

    Raises:
        SerializationError: naming the field and what was found.
    """
    _named_object(inst, where)
    if "verdict" not in inst:
        raise SerializationError(f"{where}.verdict: expected one of {', '.join(VERDICTS)}, found nothing")
    _check_fields(inst, fields, where)
    method = inst.get("method")
    if isinstance(method, str) and not set(method.split("+")) <= METHOD_TOKENS:  # a closed set of words: no run writes others
        unknown = ", ".join(repr(w)[:40] for w in method.split("+") if w not in METHOD_TOKENS)
        raise SerializationError(f"{where}.method: expected words from {', '.join(sorted(METHOD_TOKENS))} joined by '+' "
                                 f"(what a run writes), found {unknown}")
    verdict, kind = inst["verdict"], inst.get("kind", "prover")
    if kind == "argued" and verdict != "unknown":
        raise SerializationError(f"{where}: an argued claim is not decided by the tool; its verdict must be unknown, "
                                 f"found {verdict}")
    if "counterexample" in inst and verdict != "refuted":
        raise SerializationError(f"{where}.counterexample: only a refuted instance has one; this one is {verdict}")
    if "counterexample" in inst and inst["counterexample"] is None:  # no version ever wrote null: left out when none
        raise SerializationError(f"{where}.counterexample: expected the refutation's re-checked counterexample (a JSON "
                                 "value), found null; a refutation without one (a fragment proof's difference of "
                                 "polynomials, a computed claim) leaves the field out")
    _check_failure_bound(inst, where)
    raw_res, raw_bounds = inst.get("resources", {}), inst.get("bounds", {})
    exceeded = exceeded_bounds(inst, where)
    over = inst.get("over_bound", [])
    twice = next((k for k in over if over.count(k) > 1), None)
    if twice is not None:
        raise SerializationError(f"{where}.over_bound: lists {_number_shown(twice)} twice")
    for k in over:
        if k not in raw_bounds:
            raise SerializationError(f"{where}: over_bound names {k!r}, which has no stated bound")
    if "over_bound" in inst:
        for k in exceeded:
            if k not in over:
                shown = f"{k}={_number_shown(raw_res[k])}" if k in raw_res else f"{k} (no value)"
                raise SerializationError(f"{where}: {shown} is over its bound {_number_shown(raw_bounds[k])} but not listed in over_bound")
        for k in over:
            if k not in exceeded:
                raise SerializationError(f"{where}: over_bound names {k!r}, but {k}={_number_shown(raw_res[k])} is within its bound "
                                         f"{_number_shown(raw_bounds[k])}")
    _check_digests(inst, where)
    checks = inst.get("checks")
    if checks is not None and kind != "argued":
        raise SerializationError(f"{where}.checks: expected null, or true or false on an argued claim, found {checks!r:.40} "
                                 f"on a {kind} claim")
    if inst.get("ok", False) and (over or exceeded or (kind != "argued" and verdict != "proved") or checks is False):
        k = (over or exceeded or [""])[0]
        why = (f"over_bound lists {', '.join(over)}" if over else
               f"{k}={_number_shown(raw_res[k])} is over its bound {_number_shown(raw_bounds[k])}" if k in raw_res else
               f"{k} has a bound {_number_shown(raw_bounds[k])} and no value" if k else
               "the argued claim's checks failed" if checks is False else f"the verdict is {verdict}")
        raise SerializationError(f"{where}: 'ok' is true, but {why}")


def _check_failure_bound(inst: Mapping[str, Any], where: str) -> None:
    """Refuse an error bound that no run writes: ``failure_bound`` not in (0, 1), or on an instance
    that is not a prover's ``proved`` claim by a method with the ``randomized`` word; and a prover's
    ``proved`` claim by such a method without one (its ``proved`` would read as an exact argument)."""
    randomized = "randomized" in str(inst.get("method", "")).split("+")
    proved = inst.get("verdict") == "proved" and inst.get("kind", "prover") == "prover"
    if "failure_bound" in inst:
        value = run_value(inst["failure_bound"], f"{where}.failure_bound")
        if not 0 <= value < 1:
            raise SerializationError(f"{where}.failure_bound: expected a randomized proof's error bound in [0, 1), "
                                     f"found {_number_shown(inst['failure_bound'])}")
        if not (proved and randomized):
            raise SerializationError(f"{where}.failure_bound: only a prover's proved claim by the randomized method has "
                                     f"an error bound; this one is a {inst.get('verdict')} {inst.get('kind', 'prover')} "
                                     f"claim by {str(inst.get('method'))!r:.60}")


def check_bounds_stated(instances: Iterable[Mapping[str, Any]], where: str) -> None:
    """Refuse (in a run of version 3 on) a prover's ``proved`` claim by a method with the
    ``randomized`` word without its ``failure_bound``: it would read as an exact argument."""
    for j, inst in enumerate(instances):
        if ("failure_bound" not in inst and inst.get("verdict") == "proved" and inst.get("kind", "prover") == "prover"
                and "randomized" in str(inst.get("method", "")).split("+")):
            raise SerializationError(f"{where}.instances[{j}].failure_bound: a proved claim by "
                                     f"{str(inst.get('method'))!r:.60} states its randomized error bound; found none "
                                     "(it would read as an exact argument)")


def check_digests_stated(instances: Iterable[Mapping[str, Any]], where: str, result_file: bool = False) -> None:
    """Refuse (in a run of version :data:`DIGESTS_VERSION` on, or with ``result_file`` in one script's
    result file of version :data:`RESULT_VERSION`) a prover's claim without its ``digests``: every
    prover outcome names what it is about, so a claim of such a file without them lost them (a
    version 3 run or a version 1 result file may lack them: it may have been written before them).
    The message names the file's own format and version."""
    if result_file:
        kind, older = f"a result file of version {RESULT_VERSION}", "a version 1 result file"
    else:
        kind, older = f"a run of version {DIGESTS_VERSION}", "a version 3 run"
    for j, inst in enumerate(instances):
        if "digests" not in inst and inst.get("kind", "prover") == "prover":
            raise SerializationError(f"{where}.instances[{j}].digests: a prover's claim in {kind} names what it is "
                                     f"about; found no digests ({older} may leave them out)")


def _check_no_bounds(instances: Iterable[Mapping[str, Any]], where: str) -> None:
    """Refuse ``failure_bound`` and ``digests`` in a run of version 2: both fields came with version
    3, so a file that says 2 and has one was not written by any symverify (a version 2 run states no
    error bound and no digests; its randomized claims read as written then)."""
    for j, inst in enumerate(instances):
        for key, what in (("failure_bound", "error bounds"), ("digests", "digests")):
            if key in inst:
                raise SerializationError(f"{where}.instances[{j}].{key}: a field of version 3, found in a run of "
                                         f"version 2 (which has no {what}); expected version 3 or {VERSION}")


def check_result(result: Any, where: str, part: bool = False) -> list[Mapping[str, Any]]:
    """Refuse a script's result (``{"name", "title", "ok", "counts", "seconds", "instances"}``) that
    no script writes: a field not the format's or of the wrong type, an instance :func:`check_instance`
    refuses, ``counts`` other than its instances', ``ok`` true with no instance or one not ok, or
    ``ok`` false with every instance ok (with ``part``, the result of one part of a script: it may say how many cases it met and its
    instances their case, :data:`PART_RESULT_FIELDS`, :data:`PART_FIELDS`). Returns its instances.

    Raises:
        SerializationError: naming the field and what was found.
    """
    if not isinstance(result, Mapping) or not isinstance(result.get("instances"), list):
        found = (type(result).__name__ if not isinstance(result, Mapping) else
                 f"instances {_shown(result['instances'])}" if "instances" in result else "no instances")
        raise SerializationError(f"{where}: expected an object with a list 'instances', found {found}")
    _check_fields(result, PART_RESULT_FIELDS if part else RESULT_FIELDS, where)
    instances = result["instances"]
    for j, inst in enumerate(instances):
        check_instance(inst, f"{where}.instances[{j}]", PART_FIELDS if part else INSTANCE_FIELDS)
    if "counts" in result and not _counts_agree(result["counts"], instances):
        raise SerializationError(f"{where}.counts: expected the counts of its instances {count_claims(instances)}, "
                                 f"found {_shown(dict(result['counts']))}")
    if result.get("ok") is True:
        _all_ok(instances, where)
    elif result.get("ok") is False and instances and all(instance_ok(i) for i in instances):
        raise SerializationError(f"{where}.ok: expected true (every one of its {len(instances)} instance(s) is ok), found false")
    return instances


def _all_ok(instances: list[Mapping[str, Any]], where: str) -> None:
    if not instances:
        raise SerializationError(f"{where}: 'ok' is true, but there is no instance")
    bad = next((i for i in instances if i.get("ok") is not True), None)
    if bad is not None:
        raise SerializationError(f"{where}: 'ok' is true, but instance {str(bad.get('name'))!r:.60} is not ok")


def instance_ok(inst: Mapping[str, Any]) -> bool:
    """Whether an instance record (of a run :func:`check_run` took) is ok: its ``ok`` is true (left out, false)."""
    return inst.get("ok") is True


def script_ok(script: Mapping[str, Any]) -> bool:
    """Whether a script row (of a run :func:`check_run` took) passes: by its ``status``, or by its
    ``ok`` where ``status`` is left out (both left out: it does not)."""
    return script["status"] == "ok" if "status" in script else script.get("ok") is True


def run_ok(run: Mapping[str, Any]) -> bool:
    """Whether a run (that :func:`check_run` took) passes: it has a script, was not ``interrupted``,
    and every script passes (:func:`script_ok`; a passing script's instances are all ok); its
    ``ok``, where written, says the same."""
    scripts = run.get("scripts", [])
    return bool(scripts) and run.get("interrupted") is not True and all(script_ok(s) for s in scripts)


def check_script(script: Any, where: str) -> None:
    """Refuse a script row that no run writes: a field not the format's or of the wrong type, a
    result :func:`check_result` refuses, a result on a script that did not run (``crashed``,
    ``timeout``, ``interrupted``), a result named after another script, ``ok`` other than
    ``status == "ok"``, an ok script without a
    result, with no instance or with one not ok, ``counts`` or ``over_bound`` other than its
    instances'.

    Raises:
        SerializationError: naming the field and what was found.
    """
    _named_object(script, where)
    _check_fields(script, SCRIPT_FIELDS, where)
    result, status = script.get("result"), script.get("status")
    instances = [] if result is None else check_result(result, f"{where}.result")
    if status in NO_RESULT and result is not None:
        raise SerializationError(f"{where}.result: a {status} script has no result (null), found an object")
    if result is not None and "name" in result and result["name"] != script["name"]:  # another script's result
        raise SerializationError(f"{where}.result.name: expected the script's own name {script['name']!r:.60}, found "
                                 f"{result['name']!r:.60}")
    if "status" in script and "ok" in script and script["ok"] != (status == "ok"):
        raise SerializationError(f"{where}.ok: expected {str(status == 'ok').lower()} for status {status!r}, "
                                 f"found {str(script['ok']).lower()}")
    if script_ok(script):
        if result is None:
            raise SerializationError(f"{where}: an ok script has a result; found none")
        _all_ok(instances, f"{where}.result")
    if "counts" in script and not _counts_agree(script["counts"], instances):
        raise SerializationError(f"{where}.counts: expected the counts of its instances {count_claims(instances)}, "
                                 f"found {_shown(dict(script['counts']))}")
    if "over_bound" in script and script["over_bound"] != script_over_bound(instances):
        raise SerializationError(f"{where}.over_bound: expected {_shown(script_over_bound(instances))} (its "
                                 f"instances' resources over their bounds), found {_shown(script['over_bound'])}")


def result_version_problem(data: Mapping[str, Any], *, required: bool) -> str:
    """Why a script's result file (``{"format": RESULT_FORMAT, "version": 2, ...}``) does not say
    a format and version this symverify reads ('' when it does): ``format`` other than
    :data:`RESULT_FORMAT`, ``version`` not one of :data:`RESULT_READ_VERSIONS` (a bool is no
    version), or one of the two without the other. With ``required`` (the runner, which reads what
    its own ``script_main`` wrote) both must be there; without (``symverify report``), a file with
    neither is one written before the field (read as version 1)."""
    has_format, has_version = "format" in data, "version" in data
    if not (has_format or has_version or required):
        return ""
    if data.get("format") != RESULT_FORMAT:
        found = "nothing" if not has_format else _shown(data["format"])
        return (f"format: expected {RESULT_FORMAT!r} (a result written by script_main of this symverify), found {found}")
    version = data.get("version")
    if type(version) is not int or version not in RESULT_READ_VERSIONS:
        found = "nothing" if not has_version else _shown(version)
        newer = " (a result of a newer symverify?)" if type(version) is int and version > RESULT_VERSION else ""
        return f"version: expected {' or '.join(map(str, RESULT_READ_VERSIONS))}, found {found}{newer}"
    return ""


PART_NOTE = "a part of the script, not its whole run"
"""What the title of a script read from one part's result file (``--shard K/N``, ``--cases``) says
(:func:`part_title`), so that a page or plot of it never reads as the whole script's result."""


def part_title(title: str, instances: Iterable[Mapping[str, Any]], met: Any) -> str:
    """``title`` of a script whose result file is one part of its run (``--shard K/N`` or
    ``--cases``: its instances are tagged with their ``case``, and it says how many ``cases`` it
    met), marked as such, first (a page that cuts a long title keeps the mark): ``"[a part of the
    script, not its whole run (--shard or --cases): instances of cases 1, 5, of 6 cases in all]
    TITLE"``. Only that part's cases ran, so its instances being ok says nothing of the others."""
    ran = sorted({i["case"] for i in instances if _is_int(i.get("case"), 0)})
    shown = ", ".join(map(str, ran[:10])) + (f", … ({len(ran)} cases)" if len(ran) > 10 else "")
    made = f"instances of case{'s' if len(ran) != 1 else ''} {shown}" if ran else "no case made an instance"
    total = f", of {met} cases in all" if _is_int(met, 0) else ""
    mark = f"[{PART_NOTE} (--shard or --cases): {made}{total}]"
    return f"{mark} {title}" if title else mark


def check_run(data: Any, where: str, *, from_file: bool = False) -> dict[str, Any]:
    """``data`` as a run in the ``symverify.proof-run`` form, checked as docs/formats.md § Proof run
    says its readers check it: a run (``{"scripts": [...]}``; a file must say its ``format`` and
    ``version``, a dict built in memory need not), or one script's result (``{"instances": [...]}``,
    from ``python -m symverify.proofs.NAME --json``) wrapped as a run of one script; its ``format``
    and ``version``, where written, are :data:`RESULT_FORMAT` and one of :data:`RESULT_READ_VERSIONS`
    (:func:`result_version_problem`; a file with neither was written before them). One part of a
    script's run (``--shard K/N``, ``--cases``: it says how many ``cases`` it met, its instances
    their ``case``) is read with its title marked as such (:func:`part_title`): its instances
    being ok is not the script's result.

    Raises:
        SerializationError: the document is neither form, or a field is refused (:func:`check_script`).
    """
    if not isinstance(data, Mapping):
        raise SerializationError(f"{where}: expected a JSON object, found {type(data).__name__}")
    if not from_file:  # a file's text was checked as it was read (json_value)
        from symverify.ir.serialize import _lone_surrogate

        lone = _lone_surrogate(dict(data), "")
        if lone is not None:
            raise SerializationError(f"{where}: not valid Unicode text: a lone surrogate {lone[1]} at {lone[0]}")
    if "scripts" in data:
        if from_file and data.get("format") != FORMAT:
            raise SerializationError(f"{where}.format: expected {FORMAT!r} (a run written by symverify prove --json), "
                                     f"found {data.get('format')!r:.40}")
        if from_file and "version" not in data:
            raise SerializationError(f"{where}.version: expected {VERSION}, found nothing")
        _check_fields(data, RUN_FIELDS, where)
        if data.get("format", FORMAT) != FORMAT:
            raise SerializationError(f"{where}.format: expected {FORMAT!r}, found {data['format']!r:.40}")
        scripts = data["scripts"]
        seen: set[str] = set()
        for k, s in enumerate(scripts):
            check_script(s, f"{where}.scripts[{k}]")
            if data.get("version", VERSION) >= 3:
                check_bounds_stated((s.get("result") or {}).get("instances", []), f"{where}.scripts[{k}].result")
                if data.get("version") in READ_VERSIONS and data["version"] >= DIGESTS_VERSION:  # as written, not defaulted
                    check_digests_stated((s.get("result") or {}).get("instances", []), f"{where}.scripts[{k}].result")
            else:
                _check_no_bounds((s.get("result") or {}).get("instances", []), f"{where}.scripts[{k}].result")
            if s["name"] in seen:
                raise SerializationError(f"{where}.scripts[{k}].name: {s['name']!r:.60} is the name of an earlier script")
            seen.add(s["name"])
        if "ok" in data:
            ok = run_ok(data)
            if data["ok"] != ok:
                why = ("there is no script" if not scripts else "the run was interrupted"
                       if data.get("interrupted") is True else "a script is not ok" if not ok else "every script is ok")
                raise SerializationError(f"{where}.ok: expected {str(ok).lower()} ({why}), found {str(data['ok']).lower()}")
        return dict(data)
    if isinstance(data.get("instances"), list):
        problem = result_version_problem(data, required=False)
        if problem:
            raise SerializationError(f"{where}.{problem}")
        check_result(data, where, part=True)
        check_bounds_stated(data["instances"], where)
        promised = data.get("version") == RESULT_VERSION  # a result file of version 2 promises digests, as a run of 4
        if promised:
            check_digests_stated(data["instances"], where, result_file=True)
        ok = data.get("ok") is True
        untagged = [{k: v for k, v in inst.items() if k not in ("case", "before")} for inst in data["instances"]]
        title = str(data.get("title", ""))
        if "cases" in data or any("case" in i or "before" in i for i in data["instances"]):
            title = part_title(title, data["instances"], data.get("cases"))
        script = {"name": str(data.get("name", "script")), "title": title,
                  "status": "ok" if ok else "failed", "ok": ok, "error": "",
                  "result": {**{k: v for k, v in data.items() if k not in ("cases", "format", "version")},
                             "instances": untagged}}
        if "seconds" in data:
            script["seconds"] = data["seconds"]
        # a result file of version 1 (or none) promises no digests: a run of version 3, whose claims hold them or not
        return {"format": FORMAT, "version": DIGESTS_VERSION if promised else DIGESTS_VERSION - 1, "ok": ok,
                "scripts": [script]}
    raise SerializationError(
        f"{where}: expected a proof run ({{'scripts': [...]}}, from `symverify prove --json`) or one script's "
        f"result ({{'instances': [...]}}, from `python -m symverify.proofs.NAME --json`); found keys {sorted(map(str, data))[:8]}"
    )

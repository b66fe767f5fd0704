"""Counterexamples: find a small input on which two sides differ, and re-check it exactly.

:func:`search_or_stop` screens candidate inputs (zeros, ones, entries in ``{−2 … 2}``, then wider random
integers) mod ``p = 2^61 − 1``; a candidate whose outputs differ mod ``p`` differs exactly (equal
rationals have equal residues), and :func:`confirm` evaluates it with exact Fractions. Symbolic
parameters get values too. :func:`recheck` is the last line of defence that ``verify`` runs on
every counterexample before it is reported: if exact evaluation does not reproduce the claimed
difference, the prover is wrong and :class:`ProverError` is raised (docs/theory.md §5).

The search honours ``opts.deadline`` inside every evaluation (screening and exact confirmation
poll ``opts.checker()``, and a confirmation whose values may exceed :data:`GUARD_BITS` bits runs in
a child limited to the time left): past the deadline it raises :class:`DeadlineExceededError` within
milliseconds, so a stop (the timeout, a confirmation child's memory limit or crash) is named in the
methods' notes (:func:`stopped_note`), never taken for a search that found nothing.
:func:`recheck`, the soundness check of a reported counterexample, is held to the deadline when
given the options and its values may exceed :data:`GUARD_BITS` bits (a product of Fractions of a few
million bits takes Python's gcd seconds to a minute, and no deadline check interrupts it): it then
runs in a child limited to the time left (:func:`~symverify.kernel.provers.guard.run_limited`), and
past the deadline raises :class:`~symverify.deadline.DeadlineExceededError` (the verdict is then
``unknown``), never a verdict from an unfinished evaluation. The methods' own confirmation of a point
the search did not give (:func:`confirm_in_time`) is held to the deadline the same way.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Mapping, Sequence
from fractions import Fraction
from typing import Any

from symverify.deadline import Check, DeadlineExceededError
from symverify.errors import IRError, ProverError
from symverify.kernel.provers.modular import BatchModRing, eval_mod_batch
from symverify.kernel.provers.options import Options
from symverify.kernel.provers.outcome import Counterexample
from symverify.kernel.provers.sides import Side
from symverify.kernel.semantics.rings import FractionRing

__all__ = ["search_or_stop", "confirm", "confirm_in_time", "stopped_note", "recheck", "exact_outputs", "first_difference", "affordable",
           "value_bits", "M61", "MAX_CONFIRM_BITS", "GUARD_BITS"]

M61 = (1 << 61) - 1
MAX_CONFIRM_BITS = 1 << 22  # exact re-checks whose values may exceed ~4 Mbit are skipped
GUARD_BITS = 1 << 16  # under a deadline, re-checks whose values may exceed 64 kbit run in a timed child
Point = tuple[list[list[int]], dict[str, int]]


def exact_outputs(side: Side, inputs: Sequence[Sequence[Fraction | int]], params: Mapping[str, Fraction | int],
                  check: Check | None = None) -> list[list[Any]]:
    """``side`` at a rational point, by exact Fraction arithmetic (``check``: a deadline checker)."""
    ring = FractionRing(dict(params))
    u = [[x if isinstance(x, int) else Fraction(x) for x in row] for row in inputs]
    return side.evaluate(u, ring, check)


def first_difference(a: Sequence[Sequence[Any]], b: Sequence[Sequence[Any]]) -> tuple[int, int] | None:
    """The first (row-major) entry where ``a`` and ``b`` differ."""
    for i, (ra, rb) in enumerate(zip(a, b)):
        for j, (x, y) in enumerate(zip(ra, rb)):
            if x != y:
                return (i, j)
    return None


def _norm(x: Any) -> Fraction | int:
    x = Fraction(x)
    return int(x) if x.denominator == 1 else x


def confirm(lhs: Side, rhs: Side, inputs: Sequence[Sequence[Fraction | int]], params: Mapping[str, Fraction | int],
            found_by: str, stage: str | None = None, check: Check | None = None) -> Counterexample | None:
    """The counterexample at this point (exact values, first differing entry), or None if the
    sides agree there. ``check`` (a deadline checker) may raise
    :class:`~symverify.deadline.DeadlineExceededError`."""
    a, b = exact_outputs(lhs, inputs, params, check), exact_outputs(rhs, inputs, params, check)
    cell = first_difference(a, b)
    if cell is None:
        return None
    i, j = cell
    return Counterexample(
        inputs=tuple(tuple(_norm(x) for x in row) for row in inputs),
        params=tuple(sorted((k, _norm(v)) for k, v in params.items())),
        cell=cell,
        lhs_value=_norm(a[i][j]),
        rhs_value=_norm(b[i][j]),
        stage=stage,
        found_by=found_by,
    )


def confirm_in_time(lhs: Side, rhs: Side, inputs: Sequence[Sequence[Fraction | int]], params: Mapping[str, Fraction | int],
                    found_by: str, opts: Options, bits: int, stage: str | None = None,
                    check: Check | None = None) -> Counterexample | None:
    """:func:`confirm` held to ``opts.deadline`` as :func:`recheck` is: with ``bits`` (:func:`value_bits`
    of the point) beyond :data:`GUARD_BITS` under a deadline, in a child limited to the time left, and
    past the deadline :class:`DeadlineExceededError` (the method answers ``unknown``,
    :func:`stopped_note`); smaller values are confirmed here, polling ``check`` if given."""
    if opts.deadline is not None and bits > GUARD_BITS:
        return _in_child(opts, "the exact confirmation of a counterexample", confirm,  # type: ignore[no-any-return]
                         lhs, rhs, inputs, params, found_by, stage)
    return confirm(lhs, rhs, inputs, params, found_by, stage, check)


def stopped_note(opts: Options, e: DeadlineExceededError, what: str) -> str:
    """The note of an evaluation stopped by :class:`DeadlineExceededError` while doing ``what``: the
    timeout ran out, or the child (:func:`_in_child`) reached its memory limit or crashed; each is
    named as what it is."""
    kind, _, detail = e.detail.partition(": ")
    if kind == "memory":
        return f"memory limit: the child process reached its limit of {opts.memory()} bytes {what} ({detail})"
    if kind == "crashed":
        return f"crash: the child process died {what} ({detail})"
    return f"timeout: {opts.timeout} s ran out {what}" + (f" ({detail})" if kind == "timeout" else "")


def _in_child(opts: Options, what: str, fn: Any, *args: Any) -> Any:
    """``fn(*args)`` (doing ``what``, named in the child's messages) in a child limited to the time left and ``opts.memory()``
    (:func:`~symverify.kernel.provers.guard.run_limited`; its exceptions are raised here); no time left,
    the timeout, or the child running out of memory or crashing: :class:`DeadlineExceededError` whose
    detail starts with the child's status (``timeout: …``, ``memory: …``, ``crashed: …``)."""
    from symverify.kernel.provers.guard import run_limited

    left = opts.remaining()
    if left is None or left <= 0:
        raise DeadlineExceededError()
    lim = run_limited(fn, args, memory=opts.memory(), timeout=left, what=what)
    if lim.status != "ok":
        raise DeadlineExceededError(f"{lim.status}: {lim.detail}")
    return lim.value


def _exact(x: object) -> bool:
    """An exact rational as a counterexample holds it: an ``int`` or a ``Fraction`` of two plain ints (not
    a bool, a float, a string or a numpy number, which exact evaluation would convert or compute with in
    float, nor a Fraction holding an ``int`` subclass, whose own ``*`` Fraction arithmetic would call)."""
    return type(x) is int or (type(x) is Fraction and type(x.numerator) is int and type(x.denominator) is int)


def _check_form(lhs: Side, rhs: Side, cex: Counterexample) -> None:
    """``cex`` has the form :func:`confirm` gives: inputs ``n`` tuples of ``d`` exact values, one
    exact value for every parameter of either side and for no other name, a cell ``(i, j)`` of two
    ints inside ``n×d``, exact values there; else :class:`ProverError` naming the field."""
    from symverify.ir.bigint import safe_repr

    def bad(field: str, expected: str, found: object) -> ProverError:
        return ProverError(f"counterexample re-check: the prover ({cex.found_by}) reported {field} = {safe_repr(found, 60)} "
                           f"({type(found).__name__}); expected {expected}")

    n, d = lhs.n, lhs.d
    rows = cex.inputs
    if type(rows) is not tuple or len(rows) != n or any(type(r) is not tuple or len(r) != d for r in rows):
        raise bad("inputs", f"a tuple of {n} rows, each a tuple of {d} values", rows)
    for i, row in enumerate(rows):
        for j, x in enumerate(row):
            if not _exact(x):
                raise bad(f"inputs[{i}][{j}]", "an exact rational (int or Fraction)", x)
    pairs = cex.params
    if type(pairs) is not tuple or any(type(kv) is not tuple or len(kv) != 2 or type(kv[0]) is not str for kv in pairs):
        raise bad("params", "a tuple of (name, value) pairs", pairs)
    names = [k for k, _ in pairs]
    for k, v in pairs:
        if not _exact(v):
            raise bad(f"params[{k!r}]", "an exact rational (int or Fraction)", v)
        if names.count(k) > 1:
            raise bad("params", f"one value per name, {k!r} once", pairs)
    own = lhs.params() | rhs.params()
    missing = sorted(own - set(names))
    if missing:
        raise ProverError(f"counterexample re-check: the prover ({cex.found_by}) left the parameters {missing} without values")
    extra = sorted(set(names) - own)
    if extra:
        raise bad("params", f"values for the parameters of the two sides only ({sorted(own)}), not {extra}", pairs)
    cell = cex.cell
    if (type(cell) is not tuple or len(cell) != 2 or any(type(k) is not int for k in cell)
            or not (0 <= cell[0] < n and 0 <= cell[1] < d)):
        raise bad("cell", f"a tuple (i, j) of two ints with 0 ≤ i < {n}, 0 ≤ j < {d}", cell)
    for field, x in (("lhs_value", cex.lhs_value), ("rhs_value", cex.rhs_value)):
        if not _exact(x):
            raise bad(field, "an exact rational (int or Fraction)", x)


def recheck(lhs: Side, rhs: Side, cex: Counterexample, opts: Options | None = None, bits: int = 0) -> Counterexample:
    """Re-evaluate both sides exactly at ``cex``; raise :class:`ProverError` unless the claimed
    entry and both values are reproduced. With ``opts`` and ``bits`` (about how many bits its values
    may take: :func:`value_bits` of the point, or the claimed values' size) beyond :data:`GUARD_BITS`,
    in a child limited to the time left: past the deadline, :class:`DeadlineExceededError` (the
    verdict is then ``unknown``); smaller values are re-checked here whatever the time.

    The counterexample must first have the exact form :func:`confirm` gives (checked field by
    field): ints and Fractions only, every parameter of either side valued once and no other, a
    cell inside the output. A float would be computed with in float arithmetic (a float parameter
    inside a symbolic weight: ``a²`` and ``a·a`` then differ at ``a = 0.1``), a string or a bool read
    as a number: each is a :class:`ProverError`, never a re-check that passes."""
    _check_form(lhs, rhs, cex)
    if opts is not None and opts.deadline is not None and bits > GUARD_BITS:
        _in_child(opts, "the exact re-check of a counterexample", _reproduce, lhs, rhs, cex, False)  # raises unless reproduced
        return cex
    return _reproduce(lhs, rhs, cex, True)  # type: ignore[return-value]


def _reproduce(lhs: Side, rhs: Side, cex: Counterexample, value: bool) -> Counterexample | None:
    """:func:`recheck` after the form check: the counterexample exact evaluation gives (None unless
    ``value``: a child sends back only whether it is reproduced, not values of millions of bits)."""
    try:
        again = confirm(lhs, rhs, [list(r) for r in cex.inputs], cex.param_dict(), cex.found_by, cex.stage)
    except (IRError, ZeroDivisionError) as e:
        raise ProverError(f"counterexample re-check: exact evaluation failed at the reported input ({e})") from None
    if again is None:
        raise ProverError(
            f"counterexample re-check failed: the prover ({cex.found_by}) reported {cex}, but exact evaluation "
            f"gives equal outputs on both sides at that input"
        )
    if (again.cell, again.lhs_value, again.rhs_value) != (cex.cell, cex.lhs_value, cex.rhs_value):
        from symverify.ir.bigint import show_rational as show  # a value of 200 kbit has no str()

        raise ProverError(
            f"counterexample re-check failed: the prover ({cex.found_by}) claimed entry {cex.cell} = "
            f"{show(cex.lhs_value)} vs {show(cex.rhs_value)}, exact evaluation gives entry {again.cell} = "
            f"{show(again.lhs_value)} vs {show(again.rhs_value)}"
        )
    return again if value else None


def affordable(inputs: Sequence[Sequence[Any]], params: Mapping[str, Any], degree: int, height: int = 0) -> bool:
    """Whether exact evaluation at this point stays small: a degree-D polynomial whose
    coefficients (with denominators cleared) have an ℓ1 norm below ``2^H`` has, at entries of ``b``
    bits (numerator or denominator), values of at most about ``H + D·b`` bits. ``D`` and ``H``
    should bound every intermediate value, not only the outputs
    (:attr:`~symverify.kernel.provers.bounds.Bounds.peak_height_bits`, ``peak_degree``): a constant
    squared 64 times costs ``2^64`` bits at every point. Integer arithmetic only: ``D`` may be far
    beyond float range (``2^1030``)."""
    return value_bits(inputs, params, degree, height) <= MAX_CONFIRM_BITS


def value_bits(inputs: Sequence[Sequence[Any]], params: Mapping[str, Any], degree: int, height: int = 0) -> int:
    """``H + D·b``: about how many bits exact evaluation at this point may need (:func:`affordable`)."""
    bits = 0
    for x in [x for row in inputs for x in row] + list(params.values()):
        f = Fraction(x)
        bits = max(bits, abs(f.numerator).bit_length() - 1, f.denominator.bit_length() - 1)
    return degree * bits + height


def _candidates(lhs: Side, names: Sequence[str], seed: int, degree: int, count: int) -> Iterator[Point]:
    """The candidate points in order, drawn as they are screened (most searches end in the first
    batch, and a random point of a model with thousands of weights costs thousands of draws)."""
    n, d = lhs.n, lhs.d
    rng = random.Random(f"symverify-cex-{seed}")
    yield [[0] * d for _ in range(n)], {k: 0 for k in names}
    for v in range(min(n * d, 16)):  # sparse points first: they give the most readable counterexamples
        u = [[0] * d for _ in range(n)]
        u[v // d][v % d] = 2
        yield u, {k: 1 for k in names}
    for fill in (1, -1, 2):
        yield [[fill] * d for _ in range(n)], {k: fill for k in names}
    wide = max(3, 2 * degree + 1)
    for t in range(count):
        r = 2 if t < count // 2 else wide
        yield [[rng.randint(-r, r) for _ in range(d)] for _ in range(n)], {k: rng.randint(-r, r) for k in names}


def search_or_stop(lhs: Side, rhs: Side, opts: Options, *, found_by: str, degree: int = 1, stage: str | None = None,
                   count: int = 60, batch: int = 16, sizes: tuple[int, int] | None = None) -> Counterexample | None:
    """A small-integer counterexample, or None only when every candidate was screened (or too large
    to confirm) and none separates the sides.

    Candidates are screened mod ``2^61 − 1`` in batches; the first separating one is confirmed
    exactly, when :func:`affordable` with ``sizes`` (``(peak height bits, peak degree)`` of
    :class:`~symverify.kernel.provers.bounds.Bounds`; computed here, once, when not given) says it is
    cheap. Every evaluation polls ``opts.deadline``; once it has passed, or a confirmation child
    (:func:`confirm_in_time`, for values past :data:`GUARD_BITS` bits) reached its memory limit or
    crashed, it raises :class:`DeadlineExceededError` whose detail says which, for :func:`stopped_note` to name
    in the method's notes (a memory stop was reported as a search that found nothing)."""
    check = opts.checker()
    names = sorted(lhs.params() | rhs.params())
    pts = _candidates(lhs, names, opts.seed, degree, count)
    for start in itertools.count(0, batch):
        if start and opts.expired():
            raise DeadlineExceededError()
        chunk = list(itertools.islice(pts, batch))
        if not chunk:
            break
        modular, flags = _screen(lhs, rhs, chunk, check)
        for (u, ps), differs in zip(chunk, flags):
            if not differs:
                continue
            if sizes is None:
                from symverify.kernel.provers.bounds import structure_bounds

                b = structure_bounds(lhs, rhs, deadline=check)
                sizes = (b.peak_height_bits, b.peak_degree)
            bits = value_bits(u, ps, max(degree, sizes[1]), sizes[0])
            if bits > MAX_CONFIRM_BITS:  # not affordable
                continue
            cex = confirm_in_time(lhs, rhs, u, ps, found_by, opts, bits, stage, check)  # big values: a timed child
            if cex is not None:
                return cex
            if modular:
                raise ProverError(
                    f"counterexample search: the outputs differ mod 2^61−1 at {u} but agree exactly; "
                    "the modular evaluator is wrong"
                )
    return None


def _screen(lhs: Side, rhs: Side, chunk: list[Point], check: Check | None = None) -> tuple[bool, list[bool]]:
    """``(screened mod p, may-differ flags)``; when a weight's denominator is divisible by
    ``2^61 − 1`` there is no reduction mod it, and every candidate goes to the exact check."""
    ring = BatchModRing([M61] * len(chunk), [{k: v % M61 for k, v in ps.items()} for _, ps in chunk])
    ins = [[[x % M61 for x in row] for row in u] for u, _ in chunk]
    try:
        a, b = eval_mod_batch(lhs, ins, ring, check=check), eval_mod_batch(rhs, ins, ring, check=check)
    except IRError:
        return False, [True] * len(chunk)
    return True, [x != y for x, y in zip(a, b)]

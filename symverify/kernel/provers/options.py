"""Settings shared by the verification methods (budgets, seed, deadline), and their validation.

:meth:`Options.from_call` checks every argument of :func:`symverify.kernel.verification.verify` that
configures a method and raises :class:`~symverify.errors.UsageError` naming the argument, what
it expects and what it found. :data:`Method` names the methods (:data:`METHODS`); the provers
behind the names are in :mod:`symverify.kernel.provers.registry`.
"""

from __future__ import annotations

import math
import numbers
import os
import secrets
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal, get_args

from symverify.deadline import Deadline, DeadlineExceededError
from symverify.errors import IRError, UsageError
from symverify.ir import limits
from symverify.ir.bigint import safe_repr, show_int

__all__ = ["Options", "Method", "METHODS", "default_memory_limit", "DEFAULT_MAX_MONOMIALS", "DEFAULT_ERROR_BOUND",
           "Deadline", "DeadlineExceededError", "timeout_seconds", "timeout_refusal"]

Method = Literal["auto", "exact", "exact-sympy", "compositional", "randomized", "z3"]
"""The name of a verification method (:data:`METHODS`, in the order the CLI and errors list them)."""

METHODS: tuple[Method, ...] = get_args(Method)

DEFAULT_MAX_MONOMIALS = 5_000_000
DEFAULT_ERROR_BOUND = Fraction(1, 2**100)
MAX_SEED = (1 << 63) - 1  # a seed is written to reports and their JSON, whose integers stay within ±(2^63 − 1)


def default_memory_limit() -> int:
    """A quarter of physical memory (the exact guard's memory budget), ≥ 1 GiB."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return max(1 << 30, int(line.split()[1]) * 1024 // 4)
    except OSError:
        pass
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        return max(1 << 30, total // 4)
    except (ValueError, OSError, AttributeError):
        return 4 << 30


@dataclass(frozen=True)
class Options:
    """What every method may read.

    ``deadline`` is a ``time.monotonic()`` value (None: no timeout); ``trials`` fixes the number
    of randomized points (None: enough for ``error_bound``); ``backend`` picks the exact engine
    (``flint`` or ``sympy``); ``max_monomials`` caps any one expanded polynomial and the total of
    the compared outputs; ``memory_limit`` (bytes) bounds the isolated expansion process;
    ``isolate`` forces (True) or forbids (False) running exact expansion in a subprocess;
    ``modular`` picks the randomized method's engine: ``"torch"`` (int64 mod 31-bit primes),
    ``"python"`` (Python ints mod primes ``≥ 2^61``) or ``"auto"`` (see
    :func:`symverify.kernel.provers.randomized.choose_engine`). ``timeout`` is the requested number of
    seconds the deadline came from (for the report's notes); ``numeric`` the dtype of the float
    cross-check ``verify`` runs after deciding (None: none); ``scheduler`` where the compositional
    stage checks run (None: here; ``"local"``, a Dask scheduler's address or file, or a
    ``distributed.Client``: as Dask tasks, :mod:`symverify.kernel.provers.stages_dask`).

    Long loops poll the deadline through :meth:`checker` (every few hundred operations) and stop
    with :class:`DeadlineExceededError`, which the methods turn into ``unknown``; :meth:`check` is the
    same test for use between steps.
    """

    seed: int = 0
    trials: int | None = None
    deadline: float | None = None
    backend: str = "flint"
    max_monomials: int = DEFAULT_MAX_MONOMIALS
    memory_limit: int | None = None
    error_bound: Fraction = DEFAULT_ERROR_BOUND
    isolate: bool | None = None
    modular: str = "auto"
    timeout: float | None = None
    numeric: str | None = None
    scheduler: Any = None

    @classmethod
    def from_call(cls, method: str, *, seed: int | None = 0, trials: int | None = None, timeout: float | None = None,
                  backend: str | None = None, max_monomials: int | None = None, memory_limit: int | None = None,
                  error_bound: Fraction | None = None, isolate: bool | None = None,
                  numeric: bool | str = False, scheduler: Any = None) -> Options:
        """The options of one ``verify(..., method=method)`` call, every argument checked.

        ``seed=None`` draws a fresh seed from the operating system; ``timeout`` starts the
        deadline now; unset budgets take their defaults.

        Raises:
            UsageError: a ``backend`` that is unknown or does not go with ``method``, then a
                ``numeric``, ``seed``, ``max_monomials``, ``memory_limit``, ``error_bound``,
                ``timeout``, ``isolate`` or ``trials`` of the wrong type or range, then a ``trials``,
                ``max_monomials`` or ``isolate`` that ``method`` never reads (:data:`READ_BY`),
                then a ``scheduler`` outside ``compositional`` and ``auto`` (checked in that order).
            BackendUnavailableError: ``numeric`` without torch installed.
        """
        from symverify.kernel.ir.scalar import plain_index, plain_str

        # plain values: a subclass of str, int or float could answer the checks below by its own
        # ==, hash, > or + otherwise than the value it stores (a timeout of -1.0 "greater than 0");
        # a numpy integer is read by its value (plain_index, as the IR reads a size), a bool is not
        method, backend, numeric = plain_str(method), plain_str(backend), plain_str(numeric)
        given = timeout
        timeout = timeout_seconds(timeout) if timeout is not None else None
        seed, trials = plain_index(seed), plain_index(trials)  # type: ignore[assignment]
        max_monomials, memory_limit = plain_index(max_monomials), plain_index(memory_limit)  # type: ignore[assignment]
        exact_engine, modular_engine = _engines(method, backend)
        numeric_format = numeric_dtype(numeric)
        if seed is None:
            seed = secrets.randbits(63)
        if type(seed) is not int:
            raise UsageError(f"seed: expected an int (or None for fresh randomness), found {seed!r}")
        if abs(seed) > MAX_SEED:
            raise UsageError(f"seed: expected an int within ±(2^63 − 1) (a report and its JSON record it), "
                             f"found one of {seed.bit_length()} bits")
        for name, val, least in (("max_monomials", max_monomials, 0), ("memory_limit", memory_limit, 1)):
            if val is not None and (type(val) is not int or val < least):
                raise UsageError(f"{name}: expected an int ≥ {least}, found {val!r}")
        bound = DEFAULT_ERROR_BOUND if error_bound is None else _check_error_bound(error_bound)
        if given is not None and timeout is None:  # shown as the value it stores (a subclass's repr could lie too)
            raise UsageError(f"timeout: {timeout_refusal(given)}")
        if isinstance(timeout, int) and timeout.bit_length() > 1023:  # beyond a float: time.monotonic() + timeout overflows
            raise UsageError(f"timeout: expected a number of seconds below 2^1023 (math.inf or None for no limit), "
                             f"found an int of {timeout.bit_length()} bits")
        if isolate is not None and type(isolate) is not bool:
            raise UsageError(f"isolate: expected True, False or None (automatic), found {isolate!r}")
        if trials is not None and (type(trials) is not int or trials < 1):
            raise UsageError(f"trials: expected a positive int, found {trials!r}")
        if trials is not None and trials > limits.MAX_TRIALS:  # read at the call: a caller may raise it
            raise UsageError(f"trials: expected at most symverify.ir.limits.MAX_TRIALS = {limits.MAX_TRIALS} randomized "
                             f"trials (error_bound sets how many a proof needs), found {show_int(trials)}")
        for name, val in (("trials", trials), ("max_monomials", max_monomials), ("isolate", isolate)):
            if val is not None and method not in READ_BY[name]:  # it would be ignored
                raise UsageError(f"{name}={val!r}: only methods {', '.join(map(repr, READ_BY[name]))} read it; "
                                 f"found method {method!r}")
        if scheduler is not None:
            if method not in ("compositional", "auto"):
                raise UsageError(f"scheduler: runs the compositional stage checks, so it applies to methods "
                                 f"'compositional' and 'auto'; found method {method!r}")
            from symverify.provers.dask_address import check_address

            check_address(scheduler)
        return cls(
            seed=seed,
            trials=trials,
            deadline=None if timeout is None else time.monotonic() + timeout,
            backend=exact_engine,
            max_monomials=DEFAULT_MAX_MONOMIALS if max_monomials is None else max_monomials,
            memory_limit=memory_limit,
            error_bound=bound,
            isolate=isolate,
            modular=modular_engine,
            timeout=timeout,
            numeric=numeric_format,
            scheduler=scheduler,
        )

    def remaining(self) -> float | None:
        """Seconds left before the deadline (None: unlimited)."""
        return None if self.deadline is None else self.deadline - time.monotonic()

    def expired(self) -> bool:
        return self.deadline is not None and time.monotonic() > self.deadline

    def checker(self) -> Deadline | None:
        """The deadline checker for interpreter loops (:mod:`symverify.deadline`): pass it as
        ``check=`` to :func:`~symverify.kernel.provers.modular.eval_mod_batch`, ``Side.evaluate`` or
        ``eval_model``; it raises :class:`DeadlineExceededError` once the deadline has passed. None
        when there is no deadline (the loops then skip every check)."""
        return Deadline.at(self.deadline)

    def check(self) -> None:
        """Raise :class:`DeadlineExceededError` if the deadline has passed (between the steps of a method)."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise DeadlineExceededError()

    def memory(self) -> int:
        return self.memory_limit if self.memory_limit is not None else default_memory_limit()


EXACT_ENGINE_METHODS = ("auto", "exact", "exact-sympy", "compositional")
"""The methods that expand polynomials with an exact engine: they read ``backend='flint'|'sympy'``,
``max_monomials`` and ``isolate``."""

CERTIFICATE_METHODS = ("auto", "compositional")
"""The methods that check a stage certificate given with ``certificate=`` (``auto`` when it fits);
``verify`` refuses the argument for the others (it would be ignored)."""

READ_BY: dict[str, tuple[str, ...]] = {
    "trials": ("auto", "randomized"),
    "max_monomials": EXACT_ENGINE_METHODS,
    "isolate": EXACT_ENGINE_METHODS,
}
"""The methods that read each budget: given to another method, the budget is a ``UsageError``
(``backend`` and ``scheduler`` are checked the same way; ``timeout``, ``seed``, ``memory_limit``,
``error_bound`` and ``numeric`` apply to every method)."""


def _engines(method: str, backend: str | None) -> tuple[str, str]:
    """``(exact engine, randomized engine)`` from ``verify``'s ``backend=``."""
    if method == "exact-sympy":
        if backend not in (None, "sympy"):
            raise UsageError(f"method 'exact-sympy' uses the sympy backend; found backend={backend!r}")
        return "sympy", "auto"
    if backend in ("torch", "python"):
        if method != "randomized":
            raise UsageError(f"backend={backend!r} picks the randomized engine: it applies to method 'randomized' only, "
                             f"found method {method!r}")
        return _engines(method, None)[0], backend
    if backend is None:
        from symverify.kernel.semantics.poly import flint_available

        return ("flint" if flint_available() else "sympy"), "auto"
    if backend not in ("flint", "sympy"):
        raise UsageError(f"backend: expected 'flint' or 'sympy' (exact engines), or 'torch' or 'python' (randomized "
                         f"engines, method 'randomized' only), found {backend!r}")
    if method not in EXACT_ENGINE_METHODS:  # it would be ignored
        raise UsageError(f"backend={backend!r}: an exact engine, which only methods "
                         f"{', '.join(map(repr, EXACT_ENGINE_METHODS))} use; found method {method!r}")
    return backend, "auto"


NUMERIC_DTYPES = ("float64", "float32", "bfloat16")
"""The float formats the numeric cross-check of ``verify(numeric=...)`` runs in."""


def numeric_dtype(numeric: object) -> str | None:
    """The dtype a ``numeric=`` argument asks for: None for ``False``/``None`` (no cross-check),
    ``"float64"`` for ``True``, else one of :data:`NUMERIC_DTYPES`.

    Raises:
        UsageError: any other value.
        BackendUnavailableError: a cross-check is asked for and torch is not installed.
    """
    if numeric is None or numeric is False:
        return None
    dtype = "float64" if numeric is True else numeric
    if not (isinstance(dtype, str) and dtype in NUMERIC_DTYPES):
        raise UsageError(f"numeric: expected False, True or one of {', '.join(map(repr, NUMERIC_DTYPES))}, found {numeric!r}")
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        from symverify.kernel.engines._torch import require_torch

        require_torch()  # BackendUnavailableError with the install hint
    return dtype


def timeout_seconds(timeout: object) -> int | float | None:
    """``timeout`` as a number of seconds to add to a clock, or None when it is not a positive number
    of seconds. The rule of every timeout of the API (``verify``, ``prove_forall``), taking the
    numbers ``error_bound`` takes: an int (a numpy integer or an int subclass by its value, kept
    exact), a float (a float subclass by the double it stores, a numpy float of any width by its
    value) or a ``Fraction`` (by its plain value), greater than 0; a ``Fraction`` becomes the nearest
    float (a deadline is a reading of a float clock), and one that rounds to 0 or past the largest
    float is none, as is a finite numpy float wider than a double past it (``np.longdouble('1e4000')``
    is no endless timeout). ``math.inf`` is kept (no limit, where a caller allows it); NaN, a bool
    (numpy's too), a ``Decimal``, a string or anything else is none (:func:`timeout_refusal` says why)."""
    from symverify.kernel.ir.scalar import as_index, is_bool, plain_float, plain_number

    if is_bool(timeout):
        return None
    i = as_index(timeout)
    if i is not None:
        return i if i > 0 else None
    if isinstance(timeout, Fraction):
        q = plain_number(timeout)
        try:
            f = float(q)  # type: ignore[arg-type]
        except OverflowError:
            return None
        return f if f > 0 else None
    if isinstance(timeout, float) or (isinstance(timeout, numbers.Real) and type(timeout).__module__ == "numpy"):
        x = plain_float(timeout)
        f = float(x)  # type: ignore[arg-type]  # a numpy float up to float64 widens exactly
        if f == math.inf and x != math.inf:  # a finite longdouble past the largest float
            return None
        return f if f > 0 else None  # NaN > 0 is False
    return None


def timeout_refusal(timeout: object) -> str:
    """Why :func:`timeout_seconds` refused ``timeout`` (``expected …, found …``, the value shown as
    stored): a positive ``Fraction`` or numpy float that no float holds (rounding to 0, or finite
    past the largest float) is said to be one; anything else is no positive number of seconds."""
    from symverify.kernel.ir.scalar import is_bool, plain_float, plain_index, plain_number

    shown = safe_repr(plain_float(plain_index(timeout)), 60)
    try:
        positive = (not is_bool(timeout) and (isinstance(timeout, Fraction) or type(timeout).__module__ == "numpy")
                    and isinstance(timeout, numbers.Real) and bool(0 < plain_number(timeout) < math.inf))  # type: ignore[operator]
    except (TypeError, ValueError):
        positive = False
    if positive:
        return (f"expected a positive number of seconds that a float holds (more than 0 and below 2^1024 once "
                f"rounded), found {shown}")
    return f"expected a positive number of seconds, found {shown}"


def _check_error_bound(error_bound: object) -> Fraction:
    """``error_bound`` as an exact number strictly between 0 and 1: an int, ``Fraction``, a string
    such as ``'1/1000'``, or a finite float (numpy floats of any width included), read as the exact
    binary value it holds (``1e-9`` is ``Fraction(1e-9)``, within 2^-82 of 10^-9), so a float is taken
    at its value, not rounded; bools (numpy's too), NaN and infinities get the range ``UsageError``, and
    so does a bound below ``2^-MAX_ERROR_BITS`` (:data:`symverify.ir.limits.MAX_ERROR_BITS`) and any
    other value (a ``Decimal``, ``'0.001'``)."""
    from symverify.kernel.ir.scalar import Sym, as_scalar, is_bool

    shown = safe_repr(error_bound, 60)
    if isinstance(error_bound, numbers.Real) and not isinstance(error_bound, numbers.Rational):
        # a float, or a numpy float of any width (np.float32, np.longdouble: read exactly, not via float)
        try:
            # as_scalar: plain ints inside (a ratio of int subclasses would compute with their own operators)
            # a float subclass by the double it stores (its own as_integer_ratio could name another number)
            ratio = float.as_integer_ratio(error_bound) if isinstance(error_bound, float) else error_bound.as_integer_ratio()  # type: ignore[attr-defined]
            eb: object = as_scalar(Fraction(*ratio), "error_bound")
        except (AttributeError, TypeError, ValueError, OverflowError):  # NaN, infinities, a Real without the method
            raise UsageError(f"error_bound: expected a number strictly between 0 and 1, found {shown}") from None
    elif is_bool(error_bound):  # numpy bools too
        raise UsageError(f"error_bound: expected a number strictly between 0 and 1, found {shown}")
    else:
        try:
            eb = as_scalar(error_bound, "error_bound")
        except IRError:  # a Decimal, '0.001', a complex: said as what error_bound takes, not as what a weight does
            raise UsageError(f"error_bound: expected a number strictly between 0 and 1: an int, a Fraction, a string such "
                             f"as '1/1000' or a finite float, found {type(error_bound).__name__} {shown}") from None
    if isinstance(eb, Sym) or not 0 < eb < 1:  # type: ignore[operator]
        raise UsageError(f"error_bound: expected a number strictly between 0 and 1, found {shown}")
    q = Fraction(eb)  # type: ignore[call-overload]
    if q.numerator << limits.MAX_ERROR_BITS < q.denominator:  # read at the call: a caller may raise it
        raise UsageError(f"error_bound: expected at least 2^-{limits.MAX_ERROR_BITS} (symverify.ir.limits.MAX_ERROR_BITS; "
                         f"a smaller bound needs exact arithmetic on numbers of as many bits and up to a tenth as many "
                         f"trials), found about 2^-{show_int(q.denominator.bit_length() - q.numerator.bit_length())}")
    return q

"""Integers of any size: exact decimal text both ways, and short forms for people.

Python refuses ``str(x)``/``int(s)`` for integers of more than ``sys.get_int_max_str_digits()``
decimal digits (4300 by default, at least 640 when set). symverify never relies on that setting:

* **Exact text** (JSON documents, ``to_json``): :func:`int_to_str`, :func:`str_to_int`,
  :func:`rational_to_str` and :func:`parse_rational` convert by divide and conquer on chunks of
  at most 480 digits, so the result is the ordinary decimal form (``"-1/2"``, ``"10000…"``) for
  every size and every setting of the limit. Small values look exactly as they always did; a
  huge one is simply a long decimal string, so files stay in one format. Conversion is refused
  above :data:`symverify.ir.limits.MAX_INT_DIGITS` digits (it is quadratic in the digits).
* **Human-readable text** (``str()`` of circuits, counterexamples, reports): :func:`show_int`,
  :func:`show_scalar` print integers of at most :data:`SHOW_DIGITS` digits in full and larger ones
  as ``<5001-digit integer ≡ 123456789 mod 10^9>`` (the digit count and the last nine digits);
  beyond :data:`SHOW_BITS` bits as ``<16844130-bit integer ≡ 123456789 mod 10^9>`` (the bit
  count is exact and free; an exact digit count would need a power of ten as large as the value).
* **Report text** (``Report.to_json``, nobody's input format): :func:`int_to_text` and
  :func:`rational_to_text` write decimal up to :data:`DECIMAL_TEXT_BITS` bits and hexadecimal
  (``"0x1f…"``, ``"-0x…"``) above: CPython's int→decimal conversion is quadratic in the digits
  (minutes for 5 million), int→hex is linear. :func:`parse_rational` reads both forms.
* **Error messages**: :func:`safe_repr` is a short ``repr`` that never fails, whatever the size
  or nesting of the value.

>>> show_int(10**5000 + 123456789)
'<5001-digit integer ≡ 123456789 mod 10^9>'
>>> str_to_int(int_to_str(-(7**9000))) == -(7**9000)
True
"""

from __future__ import annotations

import math
import numbers
import re
import reprlib
from fractions import Fraction
from functools import lru_cache
from typing import Any

from symverify.errors import IRError, LimitError

__all__ = [
    "short_name",
    "field_repr",
    "SHOW_DIGITS",
    "SHOW_BITS",
    "DECIMAL_TEXT_BITS",
    "digit_count",
    "int_to_text",
    "rational_to_text",
    "int_to_str",
    "str_to_int",
    "rational_to_str",
    "parse_rational",
    "show_int",
    "show_rational",
    "safe_repr",
]

SHOW_DIGITS = 100
SHOW_BITS = 1 << 16
"""Integers above this many bits (about 19 700 digits) are shown with their bit count."""
DECIMAL_TEXT_BITS = 1 << 16
"""Report text writes integers above this many bits in hexadecimal (linear time)."""
_CHUNK = 480  # digits; below 640, the smallest limit Python allows, so str()/int() on a chunk always work
_SMALL_BITS = 1590  # 2^1590 < 10^479: str() of such an int is always allowed
_LOG10_2 = 0.30102999566398120
_LOG10_2_PRECISE = math.log10(2)


def _int(x: object, fn: str) -> None:
    """Refuse an ``x`` that is not an int (these printers read ``bit_length``): :class:`IRError`."""
    if not isinstance(x, int):
        raise IRError(f"{fn}: expected an int, found {type(x).__name__}")


def _rational(q: object, fn: str) -> None:
    """Refuse a ``q`` that is not a rational (an int, a ``Fraction``, a numpy integer): :class:`IRError`."""
    if not isinstance(q, numbers.Rational):
        raise IRError(f"{fn}: expected an int or a Fraction, found {type(q).__name__}")


@lru_cache(maxsize=128)
def _pow10(k: int) -> int:
    return 10**k


def digit_count(x: int) -> int:
    """The number of decimal digits of ``|x|`` (1 for 0), exactly, without converting to text.

    ``log10`` of the top 64 bits and the bit count decide it; only an ``|x|`` within a relative
    ``10^-12`` of a power of ten is compared with that power (computed once; for huge values the
    callers show the bit count instead, :data:`SHOW_BITS`).

    >>> digit_count(0), digit_count(-999), digit_count(10**5000), digit_count(10**5000 - 1)
    (1, 3, 5001, 5000)
    """
    _int(x, "digit_count")
    x = abs(x)
    if x.bit_length() <= _SMALL_BITS:
        return len(str(x))
    shift = x.bit_length() - 64
    top = x >> shift  # x = (top + f)·2^shift, 0 ≤ f < 1, top ≥ 2^63
    lg = math.log10(top) + shift * _LOG10_2_PRECISE
    k = math.floor(lg)
    frac = lg - k  # log10 x ∈ [lg − 1e-15·|lg|, lg + 2^-63·0.44 + 1e-15·|lg|]
    margin = 1e-12 + abs(lg) * 1e-15
    if margin < frac < 1 - margin:
        return k + 1
    near = round(lg)
    return near + 1 if x >= _pow10(near) else near


def _check_digits(x: int, where: str) -> None:
    from symverify.ir import limits

    bits = x.bit_length()
    if bits > limits.MAX_INT_DIGITS * 3.3 and (bits > limits.MAX_INT_DIGITS * 3.33 + 2 or digit_count(x) > limits.MAX_INT_DIGITS):
        size = f"{digit_count(x)} digits" if bits <= limits.MAX_INT_DIGITS * 7 else f"{bits} bits"
        raise LimitError(
            f"{where}: an integer of {size} is more than "
            f"symverify.ir.limits.MAX_INT_DIGITS = {limits.MAX_INT_DIGITS} digits (exact decimal text)"
        )


def int_to_str(x: int, where: str = "value", *, bounded: bool = True) -> str:
    """The exact decimal text of ``x``, for any size up to :data:`~symverify.ir.limits.MAX_INT_DIGITS`
    digits (``bounded=False``: any size at all, for output nobody reads back, such as reports).

    Raises:
        LimitError: ``bounded`` and ``x`` has more digits than the limit (``where`` names the value).
        IRError: ``x`` not an int.
    """
    _int(x, "int_to_str")
    if x.bit_length() <= _SMALL_BITS:
        return str(x)
    if bounded:
        _check_digits(x, where)
    return ("-" if x < 0 else "") + _to_str(abs(x), None)


def int_to_text(x: int) -> str | int:
    """``x`` for report text: itself up to 1590 bits (a JSON number), its decimal string up to
    :data:`DECIMAL_TEXT_BITS` bits, else ``"0x…"`` (``"-0x…"``), in linear time. Exact;
    :func:`parse_rational` reads the strings back.

    >>> int_to_text(255), int_to_text(-(1 << 70000))[:6]
    (255, '-0x100')
    """
    _int(x, "int_to_text")
    if x.bit_length() <= _SMALL_BITS:
        return x
    if x.bit_length() <= DECIMAL_TEXT_BITS:
        return int_to_str(x, bounded=False)
    return hex(x)


def rational_to_text(q: int | Fraction) -> str:
    """A rational as report text (:func:`int_to_text` for its numerator and denominator)."""
    _rational(q, "rational_to_text")
    if isinstance(q, Fraction) and q.denominator != 1:
        return f"{int_to_text(q.numerator)}/{int_to_text(q.denominator)}"
    return str(int_to_text(int(q)))


def _to_str(x: int, width: int | None) -> str:
    if x.bit_length() <= _SMALL_BITS or x < _pow10(_CHUNK):
        s = str(x)
        return s if width is None else s.rjust(width, "0")
    k = max(_CHUNK, int(x.bit_length() * _LOG10_2) // 2)
    hi, lo = divmod(x, _pow10(k))
    return _to_str(hi, None if width is None else width - k) + _to_str(lo, k)


def str_to_int(digits: str, where: str = "value") -> int:
    """The integer of a string of ASCII digits (an optional leading ``-``), exactly, for any
    length up to :data:`~symverify.ir.limits.MAX_INT_DIGITS` digits.

    Raises:
        IRError: not a string of ASCII digits.
        LimitError: more digits than the limit.
    """
    from symverify.ir import limits

    if not isinstance(digits, str):
        raise IRError(f"{where}: expected a str of decimal digits, found {type(digits).__name__}")
    neg = digits.startswith("-")
    body = digits[1:] if neg else digits
    if not _DIGITS.match(body):
        raise IRError(f"{where}: expected decimal digits, found {safe_repr(digits)}")
    if len(body) > limits.MAX_INT_DIGITS:
        raise LimitError(
            f"{where}: an integer of {len(body)} digits is more than "
            f"symverify.ir.limits.MAX_INT_DIGITS = {limits.MAX_INT_DIGITS} digits"
        )
    v = _from_digits(body)
    return -v if neg else v


_DIGITS = re.compile(r"[0-9]+\Z", re.ASCII)


def _from_digits(s: str) -> int:
    n = len(s)
    if n <= _CHUNK:
        return int(s)
    k = n // 2
    return _from_digits(s[:-k]) * _pow10(k) + _from_digits(s[-k:])


def rational_to_str(q: int | Fraction, where: str = "value", *, bounded: bool = True) -> str:
    """``"3"`` or ``"-1/2"``, exactly, for any size (see :func:`int_to_str`)."""
    _rational(q, "rational_to_str")
    if isinstance(q, Fraction):
        if q.denominator == 1:
            return int_to_str(q.numerator, where, bounded=bounded)
        return f"{int_to_str(q.numerator, where, bounded=bounded)}/{int_to_str(q.denominator, where, bounded=bounded)}"
    return int_to_str(int(q), where, bounded=bounded)


_NUMBER = r"(?:0x[0-9a-f]+|[0-9]+)"
_RATIONAL = re.compile(rf"\s*([+-]?)({_NUMBER})(?:\s*/\s*({_NUMBER}))?\s*\Z", re.ASCII)


def _parse_part(text: str, where: str) -> int:
    """Decimal digits, or ``0x`` and lowercase hexadecimal digits (report text, :func:`int_to_text`);
    hexadecimal is read in linear time and refused beyond ``MAX_INT_DIGITS`` decimal digits of value
    (a text of more than ``MAX_INT_DIGITS · 3.33 / 4`` hexadecimal digits before it is read)."""
    if not text.startswith("0x"):
        return str_to_int(text, where)
    from symverify.ir import limits

    if (len(text) - 2) * 4 > limits.MAX_INT_DIGITS * 3.33 + 8:
        raise LimitError(f"{where}: a hexadecimal integer of {len(text) - 2} digits is more than "
                         f"symverify.ir.limits.MAX_INT_DIGITS = {limits.MAX_INT_DIGITS} decimal digits")
    value = int(text, 16)
    _check_digits(value, where)  # 3.33 bits a digit is above log2(10): up to ~245 digits more got through
    return value


def parse_rational(text: str, where: str = "value") -> int | Fraction:
    """Parse ``"3"``, ``"-1/2"``, ``" 6 / 4 "`` exactly (ASCII digits, any length up to the limit).

    Returns an ``int`` when the value is whole, else a reduced ``Fraction``.

    Raises:
        IRError: not a rational, or a zero denominator (``where`` names the field).
        LimitError: a numerator or denominator of more than ``MAX_INT_DIGITS`` digits.

    >>> parse_rational("6/4"), parse_rational("-8/4")
    (Fraction(3, 2), -2)
    """
    m = _RATIONAL.match(text) if isinstance(text, str) else None
    if m is None:
        raise IRError(f"{where}: expected a rational such as '3' or '-1/2', found {safe_repr(text)}")
    sign, num, den = m.groups()
    p = _parse_part(num, where)
    if sign == "-":
        p = -p
    if den is None:
        return p
    q = _parse_part(den, where)
    if q == 0:
        raise IRError(f"{where}: the denominator of {safe_repr(text)} is 0")
    f = Fraction(p, q)
    return f.numerator if f.denominator == 1 else f


def show_int(x: int) -> str:
    """``x`` in full when it has at most :data:`SHOW_DIGITS` digits, else its digit count and its
    last nine digits: ``<5001-digit integer ≡ 123456789 mod 10^9>`` (``-<…>`` when negative)."""
    _int(x, "show_int")
    if x.bit_length() <= 3 * SHOW_DIGITS:  # 2^300 < 10^91
        return str(x)
    if x.bit_length() > SHOW_BITS:
        return f"{'-' if x < 0 else ''}<{x.bit_length()}-bit integer ≡ {abs(x) % 1_000_000_000} mod 10^9>"
    n = digit_count(x)
    if n <= SHOW_DIGITS:
        return str(x)
    return f"{'-' if x < 0 else ''}<{n}-digit integer ≡ {abs(x) % 1_000_000_000} mod 10^9>"


def show_rational(q: int | Fraction) -> str:
    """A rational for people: ``"-1/2"``; long numerators and denominators abbreviated (:func:`show_int`)."""
    _rational(q, "show_rational")
    if isinstance(q, Fraction):
        if q.denominator == 1:
            return show_int(q.numerator)
        return f"{show_int(q.numerator)}/{show_int(q.denominator)}"
    return show_int(int(q))


class _SafeRepr(reprlib.Repr):
    def __init__(self) -> None:
        super().__init__()
        self.maxlevel = 3
        self.maxstring = 40
        self.maxother = 40
        self.maxlong = 60

    def repr_int(self, x: int, level: int) -> str:
        return show_int(x)

    def repr_Fraction(self, x: Fraction, level: int) -> str:
        return f"Fraction({show_int(x.numerator)}, {show_int(x.denominator)})"

    def repr_Sym(self, x: Any, level: int) -> str:
        return f"Sym({self.repr_str(str(x), level)})"  # Sym prints abbreviated


_REPR = _SafeRepr()


class _FullRepr(_SafeRepr):
    """No length or depth limit: only integers beyond :data:`SHOW_DIGITS` digits are abbreviated."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel = 1 << 30
        for name in ("maxtuple", "maxlist", "maxarray", "maxdict", "maxset", "maxfrozenset", "maxdeque",
                     "maxstring", "maxother", "maxlong"):
            setattr(self, name, 1 << 62)

    def repr_dict(self, x: dict[Any, Any], level: int) -> str:  # in insertion order, as repr writes it (reprlib sorts)
        return "{" + ", ".join(f"{self.repr1(k, level - 1)}: {self.repr1(v, level - 1)}" for k, v in x.items()) + "}"


_FULL = _FullRepr()


def field_repr(obj: Any) -> str:
    """The ``repr`` a dataclass would generate (``Name(field=value, …)`` over its ``repr`` fields),
    except that an integer of more than :data:`SHOW_DIGITS` digits is written as :func:`show_int`
    writes it, so the text never fails on huge values (Python refuses ``str`` of an integer of
    more than 4300 digits). Values of ordinary size print as the generated ``repr`` prints them.

    >>> from symverify.kernel.ir.gate import Gate, Op
    >>> Gate(Op.CONST, (), (10**5000 + 7,))
    Gate(op=<Op.CONST: 'const'>, args=(), coeffs=(<5001-digit integer ≡ 7 mod 10^9>,))
    """
    from dataclasses import fields, is_dataclass

    if not is_dataclass(obj):
        raise IRError(f"field_repr: expected a dataclass instance, found {type(obj).__name__}")
    parts = ", ".join(f"{f.name}={_FULL.repr(getattr(obj, f.name))}" for f in fields(obj) if f.repr)
    return f"{type(obj).__qualname__}({parts})"


def short_name(text: str, width: int = 40) -> str:
    """``repr`` of ``text`` shortened to at most ``width`` characters inside the quotes (ending in
    ``…``), so the quotes always close.

    >>> short_name("a" * 50, 10)
    "'aaaaaaaaa…'"
    """
    if not isinstance(text, str) or isinstance(width, bool) or not isinstance(width, int) or width < 1:
        raise IRError(f"short_name: expected a str and a width ≥ 1, found {type(text).__name__} and {width!r:.20}")
    return repr(text if len(text) <= width else text[: width - 1] + "…")


def safe_repr(obj: object, width: int = 80) -> str:
    """A ``repr`` for error messages: at most ``width`` characters, three levels deep, huge
    integers abbreviated; it never raises (not even for values whose own ``repr`` fails).

    >>> safe_repr([[[[[1]]]]])
    '[[[[...]]]]'
    """
    try:
        s = _REPR.repr(obj)
    except Exception:  # an error message must not fail in turn
        s = f"<{type(obj).__name__}>"
    return s if len(s) <= width else s[: width - 1] + "…"

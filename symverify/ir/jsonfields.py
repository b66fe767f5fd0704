"""Typed readers and writers of JSON fields, shared by the loaders of every document kind.

Each reader checks one field and raises :class:`~symverify.errors.SerializationError` naming the
field's path, what was expected and what was found; nothing is coerced. Scalars are exact strings
(``"-1/2"``) or ``{"sym": [[coeff, {name: exponent}], ...]}``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from symverify.errors import IRError, SerializationError
from symverify.ir import limits
from symverify.ir.bigint import _check_digits, parse_rational, rational_to_str, safe_repr, show_int
from symverify.kernel.ir.scalar import Scalar, Sym, sym


# ---- what the parser hands back for values that cannot be what any field expects ---------------
class _Literal:
    """A JSON literal symverify never accepts in a circuit, model or certificate (an integer beyond
    MAX_JSON_INT, the integer ``-0``, a float, NaN, Infinity); kept as written, so the field that
    holds it is named in the error with the literal as the file has it (``1e0``, not ``1.0``;
    ``1e400``, not ``inf``)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def _float(self) -> bool:
        return any(c in self.text for c in ".eE")

    def __repr__(self) -> str:
        """The literal as written (a long one by its length), so messages show it, never an address."""
        if len(self.text) <= 24:
            return self.text
        return (f"<float literal of {len(self.text)} characters>" if self._float()
                else f"<integer literal of {len(self.text.lstrip('-'))} digits>")

    def describe(self) -> str:
        if self.text in ("NaN", "Infinity", "-Infinity"):
            return f"{self.text} (not a JSON number)"
        if self._float():
            return f"float {self.text}" if len(self.text) <= 40 else f"a float literal of {len(self.text)} characters"
        if self.text == "-0":
            return "-0 (a negative zero; write 0)"
        digits = len(self.text.lstrip("-"))
        return f"an integer literal of {digits} digits (beyond ±(2^63 − 1); exact values are strings such as '-1/2')"


def _kind(v: Any) -> str:
    """What a JSON value is, for 'found ...' in messages (``null`` for None)."""
    if isinstance(v, _Literal):
        return v.describe()
    if v is None:
        return "null"
    if isinstance(v, float):
        return f"float {safe_repr(v)}"
    if isinstance(v, bool):
        return f"bool {'true' if v else 'false'}"
    return type(v).__name__


def _found(v: Any, limit: int = 60) -> str:
    """What a JSON value is and its text, for 'found ...' (a float, bool, null or literal once: ``float 0.5``, ``null``)."""
    if v is None or isinstance(v, (_Literal, float, bool)):
        return _kind(v)
    return f"{_kind(v)} {safe_repr(v, limit)}"


def _parse_int(text: str) -> Any:
    """A JSON integer literal: an int within ``MAX_JSON_INT``, else (beyond it, or ``-0``, which
    is no non-negative size or node id and never written for the coefficient 0) a :class:`_Literal`."""
    if text == "-0":
        return _Literal(text)
    digits = len(text) - (text[0] == "-")
    if digits <= 18:
        return int(text)
    if digits > 19:
        return _Literal(text)
    v = int(text)
    return v if abs(v) <= limits.MAX_JSON_INT else _Literal(text)


def _parse_constant(text: str) -> Any:
    return _Literal(text)


def _float_literal(text: str) -> Any:
    """A JSON float literal: no field of a circuit, model or certificate takes one, so it is kept
    as written (:class:`_Literal`), never read as the double it rounds to."""
    return _Literal(text)


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):  # some key repeats: name the first such key
        k = next(k for k, n in Counter(k for k, _ in pairs).items() if n > 1)
        raise SerializationError(f"duplicate key {safe_repr(k)} in a JSON object (JSON objects must not repeat a key)")
    return out


# ---- typed field readers -------------------------------------------------------------------------
def _obj(v: Any, where: str, required: Iterable[str], optional: Iterable[str] = ()) -> dict[str, Any]:
    """``v`` as a JSON object with exactly the ``required`` keys and some of the ``optional`` ones."""
    if not isinstance(v, dict):
        raise SerializationError(f"{where}: expected a JSON object, found {_kind(v)}")
    required = tuple(required)
    for key in required:
        if key not in v:
            raise SerializationError(f"{where}: missing field {key!r}")
    allowed = set(required) | set(optional)
    unknown = [k for k in v if k not in allowed]
    if unknown:
        raise SerializationError(
            f"{where}: unknown field {safe_repr(unknown[0])}; expected only {sorted(allowed)}"
        )
    return v


def _field(obj: Any, key: str, typ: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(obj, dict):
        raise SerializationError(f"{where}: expected a JSON object, found {_kind(obj)}")
    if key not in obj:
        raise SerializationError(f"{where}: missing field {key!r}")
    val = obj[key]
    if not isinstance(val, typ) or isinstance(val, bool):
        tname = typ.__name__ if isinstance(typ, type) else "/".join(t.__name__ for t in typ)
        raise SerializationError(f"{where}.{key}: expected {tname}, found {_kind(val)}")
    return val


def _int(v: Any, where: str, least: int = 0) -> int:
    """A JSON integer ``≥ least`` (bools, floats and out-of-range literals refused)."""
    if type(v) is not int:
        raise SerializationError(f"{where}: expected int, found {_kind(v)}")
    if v < least or v > limits.MAX_JSON_INT:
        bound = "a positive int" if least == 1 else f"an int ≥ {least}"
        raise SerializationError(f"{where}: expected {bound}, found {show_int(v)}")
    return v


def _int_field(obj: dict[str, Any], key: str, where: str, least: int = 0) -> int:
    if key not in obj:
        raise SerializationError(f"{where}: missing field {key!r}")
    return _int(obj[key], f"{where}.{key}", least)


def _list(v: Any, where: str) -> list[Any]:
    if not isinstance(v, list):
        raise SerializationError(f"{where}: expected a list, found {_kind(v)}")
    return v


def _text(v: Any, where: str) -> str:
    """A string that is valid Unicode (no lone surrogates, which could not be printed or written)."""
    if not isinstance(v, str):
        raise SerializationError(f"{where}: expected str, found {_kind(v)}")
    try:
        v.encode("utf-8")
    except UnicodeEncodeError as e:
        raise SerializationError(f"{where}: not valid Unicode text (a lone surrogate \\u{ord(v[e.start]):04x} at character {e.start})") from None
    return v


# ---- scalars -------------------------------------------------------------------------------------
def scalar_to_json(x: Scalar, where: str = "value") -> str | dict[str, list[list[Any]]]:
    """``"-1/2"`` for a rational (exact, any size up to ``MAX_INT_DIGITS`` digits), ``{"sym": ...}`` for a Sym."""
    try:
        if isinstance(x, Sym):
            for m, _ in x.terms:
                for name, e in m:
                    if e > limits.MAX_JSON_INT:
                        raise SerializationError(f"{where}: the exponent of {name} has {len(bin(e)) - 2} bits, beyond 2^63 − 1")
            return {"sym": [[rational_to_str(c, where), dict(m)] for m, c in x.terms]}
        return rational_to_str(x, where)
    except IRError as e:
        raise SerializationError(f"cannot write {where} exactly: {e}") from None


def _json_integer(v: Any, where: str) -> Fraction:
    """A JSON integer coefficient (``1``, ``-3``): exact, within ``±(2^63 − 1)``; larger ones are
    written as strings (booleans are not numbers here)."""
    if abs(v) > limits.MAX_JSON_INT:
        raise SerializationError(f"{where}: a JSON integer coefficient must be within ±(2^63 − 1), found {show_int(v)}; "
                                 "write larger ones as strings, e.g. \"123456789012345678901234567890\"")
    return Fraction(v)


def scalar_from_json(v: Any, where: str) -> Scalar:
    """A rational string (ASCII digits, any size up to ``MAX_INT_DIGITS`` digits, nonzero
    denominator; not necessarily canonical: ``"6/4"``, ``"+3"`` and ``"-0"``, the rational 0, are
    their exact values; docs/formats.md), a JSON integer within ``±(2^63 − 1)`` other than ``-0``
    (a float negative zero to many JSON readers; ``1`` is the rational 1), or
    ``{"sym": [[coeff, {name: exponent ≥ 1}], ...]}`` (repeated monomials add up, their sum within
    ``MAX_INT_DIGITS`` digits too; ``coeff`` a rational string or such an integer). Floats are refused: they are not exact rationals."""
    try:
        if type(v) is int:
            return _json_integer(v, where)
        if isinstance(v, str):
            if v.strip()[:1].isalpha() or v.strip()[:1] == "_":  # a name: meant as a symbol
                try:
                    return parse_rational(v, where)
                except IRError as err:
                    raise SerializationError(f'{err}; a symbolic value is written {{"sym": [[1, {{"{v.strip()}": 1}}]]}}') from None
            return parse_rational(v, where)
        if isinstance(v, dict):
            terms = _list(_obj(v, where, ("sym",))["sym"], f"{where}.sym")
            acc: dict[tuple[tuple[str, int], ...], Any] = {}
            for k, term in enumerate(terms):
                at = f"{where}.sym[{k}]"
                if not isinstance(term, list) or len(term) != 2:
                    raise SerializationError(f"{at}: expected [coeff, {{name: exponent}}], found {_found(term)}")
                if type(term[0]) is not int and not isinstance(term[0], str):  # "expected str" would hide the integers
                    raise SerializationError(f"{at}[0]: expected an integer or a rational string such as '-1/2', "
                                             f"found {_found(term[0])}")
                coeff = (_json_integer(term[0], f"{at}[0]") if type(term[0]) is int
                         else parse_rational(_text(term[0], f"{at}[0]"), f"{at}[0]"))
                mono = term[1]
                if not isinstance(mono, dict):
                    raise SerializationError(f"{at}[1]: a symbolic term needs {{name: positive int exponent}}, found {_found(mono)}")
                for name, e in mono.items():
                    try:
                        sym(name)  # validates the name
                    except IRError as err:
                        raise SerializationError(f"{at}[1]: {err}") from None
                    _int(e, f"{at}[1].{name}", 1)
                key = tuple(sorted(mono.items()))
                total = acc[key] = acc.get(key, 0) + coeff
                if type(total) is Fraction:  # a sum of coefficients stays within MAX_INT_DIGITS as each one does
                    _check_digits(total.numerator, at)
                    _check_digits(total.denominator, at)
                else:
                    _check_digits(total, at)
            return Sym._make({m: Fraction(c) for m, c in acc.items()})
    except IRError as e:
        raise SerializationError(str(e)) from None
    raise SerializationError(
        f"{where}: expected an integer, a rational string such as '-1/2' or {{'sym': [...]}}, found {_found(v)}"
    )


def _check_size(v: int, where: str) -> int:
    if v > limits.MAX_JSON_INT:
        raise SerializationError(f"cannot write {where} = {show_int(v)}: sizes and node ids are JSON integers of at most 2^63 − 1")
    return v

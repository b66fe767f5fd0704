"""Fiat–Shamir challenges: the randomized method's primes and points, derived by SHAKE-256.

The randomized method (:mod:`symverify.kernel.provers.randomized`) must draw its trial primes and points
so that nobody can choose two different sides whose difference vanishes at them. With a fixed,
public seed (the default, so that a verdict can be reproduced) the points are derived from the
sides themselves: a :class:`Transcript` absorbs a domain tag, the method, the seed and the
injective fingerprints of both sides (:func:`symverify.kernel.provers.fingerprint.fingerprint`), and every
draw reads from a SHAKE-256 stream keyed by that transcript *and* by a label that separates its
purpose: the pre-check or the trials, the engine, the trial number, the prime or the points under
a given prime. A change of either side, of the seed or of the purpose gives independent streams.

Uniform values come by rejection sampling: a candidate below ``bound`` is read as the low
``bits(bound − 1)`` bits of fresh stream bytes and kept only if it is below ``bound``, so each
value is exactly uniform on ``[0, bound)`` (the expected number of candidates is below 2).

What this buys (docs/trusted-base.md, "The trial points"): modelling SHA-256/SHAKE-256 as a
random oracle, the points for a pair of sides are uniform and independent of everything an
adversary could fix before computing them; an adversary who tries ``q`` pairs (``q`` evaluations
of the hash) finds one whose nonzero difference vanishes at its points with probability at most
``q·ε``, ``ε`` the stated failure bound (at most ``2^-100`` by default). ``seed=None`` replaces the
public seed by 63 bits of operating-system randomness drawn after the sides are fixed, which makes
``ε`` a plain probability over the verifier's coins.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from symverify.errors import SymverifyError

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Transcript", "Stream", "ChallengeError", "DOMAIN", "CONSTRUCTION"]

DOMAIN = b"symverify/randomized-challenge/v2"
CONSTRUCTION = "SHAKE-256 of both sides' injective encodings, the seed, the method and the draw's purpose (Fiat–Shamir)"
_BLOCK = 1 << 12


class ChallengeError(SymverifyError, ValueError):
    """A transcript part or a draw outside its domain: a part that is not bytes, an int or a str, a
    bound below 1, a count below 0, an empty range (the message says what was expected and found)."""


def _what(x: object) -> str:
    return f"{type(x).__module__}.{type(x).__qualname__}".removeprefix("builtins.")


def _found(x: object) -> str:
    """``x`` for an error message: an int as itself (by its size when huge), anything else with its type."""
    if type(x) is int:
        return str(x) if x.bit_length() <= 256 else f"an int of {x.bit_length()} bits"
    try:
        text = repr(x)
    except Exception:  # a value that cannot print itself still gets its type named
        text = "?"
    return f"{_what(x)} {text:.60}"


def _part(x: bytes | int | str) -> bytes:
    """One absorbed value, tagged and length-prefixed (so the transcript is injective in its parts).

    Only ``bytes`` (``bytearray``, ``memoryview``), ``int`` and ``str`` are parts; anything else is a
    :class:`ChallengeError` (a numpy integer was read as that many zero bytes, a list of ints as
    the bytes it spells, a bool as an int)."""
    if isinstance(x, bool):
        raise ChallengeError("transcript part: expected bytes, an int or a str; a transcript part may not be a bool, "
                             f"found {x!r}")
    if isinstance(x, int):
        x = int.__index__(x)
        data, tag = x.to_bytes((x.bit_length() + 8) // 8, "big", signed=True), b"I"
    elif isinstance(x, str):
        data, tag = str.encode(x, "utf-8", "surrogatepass"), b"T"
    elif isinstance(x, (bytes, bytearray, memoryview)):
        data, tag = bytes(x), b"B"
    else:
        raise ChallengeError(f"transcript part: expected bytes, an int or a str, found {_found(x)}")
    return tag + len(data).to_bytes(8, "big") + data


def _count(n: object, what: str, least: int = 0) -> int:
    """``n`` when it is an int (not a bool) ``≥ least``; else :class:`ChallengeError` naming ``what``."""
    if not isinstance(n, int) or isinstance(n, bool) or n < least:
        raise ChallengeError(f"{what}: expected an int ≥ {least}, found {_found(n)}")
    return n


_MARK = "stream"
"""The part that ends a transcript's parts and starts a stream's label (no transcript part may equal it)."""
_MARKED = _part(_MARK)


class Transcript:
    """A SHA-256 state that has absorbed a domain tag and a sequence of tagged parts.

    A stream's key hashes the parts, the marker ``"stream"`` and the label's parts in one sequence;
    a transcript part equal to the marker is refused (:class:`ChallengeError`), so the first marker
    is where the parts end and ``(parts, label)`` is read back from the sequence uniquely
    (``Transcript(a, "stream", b).stream()`` would otherwise be ``Transcript(a).stream(b, "stream")``).

    >>> t = Transcript("example", 0)
    >>> t.stream("trial", 1).below(10) == Transcript("example", 0).stream("trial", 1).below(10)
    True
    """

    def __init__(self, *parts: bytes | int | str) -> None:
        self._h = hashlib.sha256(_part(DOMAIN))
        for p in parts:
            data = _part(p)
            if data == _MARKED:
                raise ChallengeError(f"transcript part: expected anything but {_MARK!r}, the marker that starts a "
                                     f"stream's label, found {_MARK!r}")
            self._h.update(data)

    def stream(self, *label: bytes | int | str) -> Stream:
        """An independent stream for the draw named by ``label`` (its purpose, trial, prime, …)."""
        h = self._h.copy()
        h.update(_MARKED)
        for p in label:
            h.update(_part(p))
        return Stream(h.digest())


class Stream:
    """SHAKE-256 output keyed by a 32-byte key, read in blocks (``SHAKE-256(key ‖ block index)``).

    The key must be ``bytes``; :meth:`Transcript.stream` always gives a 32-byte digest, so the
    blocks of two keys never coincide (keys of other lengths are for tests only). Every draw checks
    its arguments and raises :class:`ChallengeError` outside its domain."""

    def __init__(self, key: bytes) -> None:
        if not isinstance(key, bytes):
            raise ChallengeError(f"stream key: expected bytes (a transcript's digest), found {_what(key)}")
        self._key = key
        self._block = 0
        self._buf = b""
        self._pos = 0

    def read(self, n: int) -> bytes:
        """The next ``n`` bytes of the stream (``n ≥ 0``)."""
        _count(n, "Stream.read")
        out = bytearray()
        while n > 0:
            if self._pos == len(self._buf):
                size = max(_BLOCK, min(n, 1 << 24))
                self._buf = hashlib.shake_256(self._key + self._block.to_bytes(8, "big")).digest(size)
                self._block += 1
                self._pos = 0
            take = min(n, len(self._buf) - self._pos)
            out += self._buf[self._pos : self._pos + take]
            self._pos += take
            n -= take
        return bytes(out)

    def below(self, bound: int) -> int:
        """A uniform integer in ``[0, bound)`` (rejection sampling); ``bound`` an int ≥ 1, else
        :class:`ChallengeError` (no value is uniform on an empty range)."""
        if not isinstance(bound, int) or isinstance(bound, bool) or bound < 1:
            raise ChallengeError(f"below: expected a bound ≥ 1, an int, found {_found(bound)}")
        bits = (bound - 1).bit_length()
        if bits == 0:
            return 0
        nbytes, mask = (bits + 7) // 8, (1 << bits) - 1
        while True:
            x = int.from_bytes(self.read(nbytes), "little") & mask
            if x < bound:
                return x

    def between(self, low: int, high: int) -> int:
        """A uniform integer in ``[low, high)``; ints with ``low < high``, else :class:`ChallengeError`."""
        for name, v in (("low", low), ("high", high)):
            if not isinstance(v, int) or isinstance(v, bool):
                raise ChallengeError(f"between: expected an int {name}, found {_found(v)}")
        if high <= low:
            raise ChallengeError(f"between: expected low < high (a nonempty range [low, high)), found low {_found(low)}, "
                                 f"high {_found(high)}")
        return low + self.below(high - low)

    def residues(self, bound: int, count: int) -> list[int]:
        """``count`` independent uniform integers in ``[0, bound)`` (any int ``bound ≥ 1``, ``count ≥ 0``)."""
        if not isinstance(bound, int) or isinstance(bound, bool) or bound < 1:
            raise ChallengeError(f"residues: expected a bound ≥ 1, an int, found {_found(bound)}")
        _count(count, "residues count")
        if bound <= 1 << 62:
            return [int(x) for x in self.array(bound, count).tolist()]
        return [self.below(bound) for _ in range(count)]

    def array(self, bound: int, count: int) -> np.ndarray[Any, Any]:
        """``count`` uniform integers in ``[0, bound)`` as an int64 array (``bound ≤ 2^62``): the same
        rejection sampling, eight stream bytes per candidate, vectorised."""
        import numpy as np

        if not isinstance(bound, int) or isinstance(bound, bool) or not 1 <= bound <= 1 << 62:
            raise ChallengeError(f"array: expected 1 ≤ bound ≤ 2^62, an int, found {_found(bound)}")
        _count(count, "array count")
        mask = np.uint64((1 << max(1, (bound - 1).bit_length())) - 1)
        out = np.empty(count, dtype=np.int64)
        filled = 0
        while filled < count:
            want = count - filled
            draw = want + want // 2 + 8
            cand = np.frombuffer(self.read(8 * draw), dtype="<u8") & mask
            keep = cand[cand < np.uint64(bound)][:want]
            out[filled : filled + len(keep)] = keep.astype(np.int64)
            filled += len(keep)
        return out

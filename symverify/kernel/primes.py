"""Primality for the moduli of exact modular evaluation (randomized identity testing).

Below ``3.3·10^24`` Miller–Rabin with the first 13 prime bases is deterministic. Larger moduli
(the randomized method picks primes of up to :data:`MAX_PRIME_BITS` bits when the certified
degree is large) are decided by FLINT's ``fmpz_is_prime``, which proves primality (it never
answers "probably"). A composite modulus would void the Schwartz–Zippel bound, so no
probabilistic test is ever used.
"""

from __future__ import annotations

__all__ = ["is_prime", "passes_screen", "screen_decides", "MAX_PRIME_BITS"]

_MR_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)  # deterministic below 3.3·10^24
_MR_LIMIT = 3_317_044_064_679_887_385_961_981
MAX_PRIME_BITS = 4096
"""The largest modulus the randomized method draws (proving larger primes takes too long)."""


def _miller_rabin(n: int, bases: tuple[int, ...]) -> bool:
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for a in bases:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def passes_screen(n: int) -> bool:
    """Whether ``n`` survives the fast Miller–Rabin screen of :func:`is_prime` (milliseconds at
    4096 bits). False is a proof that ``n`` is not prime; True decides primality only where
    :func:`screen_decides` (else :func:`is_prime`'s proof must follow, seconds at 1000 bits)."""
    if n < 2:
        return False
    for q in _MR_BASES:
        if n % q == 0:
            return n == q
    return _miller_rabin(n, _MR_BASES)


def screen_decides(n: int) -> bool:
    """Whether :func:`passes_screen` alone decides primality for ``n`` (below ``3.3·10^24``)."""
    return n < _MR_LIMIT


def is_prime(n: int) -> bool:
    """Whether ``n`` is prime, decided exactly at every size.

    >>> is_prime(2**61 - 1), is_prime(2**61 + 1), is_prime(2**31 - 1), is_prime(2**127 - 1), is_prime(2**128 + 1)
    (True, False, True, True, False)
    """
    if not passes_screen(n):
        return False  # a Miller–Rabin witness is a proof of compositeness at any size
    if screen_decides(n):
        return True
    from symverify.errors import BackendUnavailableError

    try:
        import flint
    except ImportError:
        raise BackendUnavailableError("proving a prime above 3.3·10^24 needs python-flint: pip install python-flint") from None
    return bool(flint.fmpz(n).is_prime())

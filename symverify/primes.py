"""Primality for the moduli of exact modular evaluation (randomized identity testing)."""

from __future__ import annotations

__all__ = ["is_prime"]

_MR_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)  # deterministic below 3.3·10^24


def is_prime(n: int) -> bool:
    """Deterministic Miller–Rabin for ``n < 3.3·10^24`` (the first 13 prime bases).

    >>> is_prime(2**61 - 1), is_prime(2**61 + 1), is_prime(2**31 - 1)
    (True, False, True)
    """
    if n < 2:
        return False
    for q in _MR_BASES:
        if n % q == 0:
            return n == q
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for a in _MR_BASES:
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

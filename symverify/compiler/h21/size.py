"""The stated size of the H.21 construction, in one place (used by the planner and the bounds).

``N_k = 4·2^a`` with ``a = ⌈log2 max(w, 2)⌉`` and ``w`` the cut width: every state between levels
takes ``≤ 2w + 1`` positions and every stage's compact layout ``≤ 2w + tw + 1``, within ``4·2^a``
(the package docstring, "size"). Every stage the planner takes fits it.
"""

from __future__ import annotations

# The public names. The other builders here are internal (the compiler calls them with its own objects,
# checked once at its entry): still importable by name, not checked for arguments of other types.
__all__ = []


def log2_ceil(x: int) -> int:
    """``⌈log2 x⌉`` for ``x ≥ 1`` (0 for ``x ≤ 1``).

    >>> [log2_ceil(x) for x in (1, 2, 3, 4, 5, 17)]
    [0, 1, 2, 2, 3, 5]
    """
    return max(0, (x - 1).bit_length())


def stated_size(width: int) -> int:
    """The stated kaleidoscope size ``N_k = 4·2^⌈log2 max(w, 2)⌉`` for a circuit of cut width ``w``.

    >>> [stated_size(w) for w in (1, 2, 3, 8, 9, 17)]
    [8, 8, 16, 32, 64, 128]
    """
    return 4 << log2_ceil(max(width, 2))

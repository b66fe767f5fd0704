"""Alias of :mod:`symverify.kernel.ir.scalar`, where the module lives in the trusted base (docs/trusted-base.md).

Kept so that imports written for earlier versions keep working: this name is the very module object
of ``symverify.kernel.ir.scalar`` (identical classes, functions and monkeypatch targets). New code imports
from ``symverify.kernel.ir.scalar``.
"""

import sys

from symverify.kernel.ir import scalar as _module
from symverify.kernel.ir.scalar import *  # noqa: F403  (the public names, for type checkers)

sys.modules[__name__] = _module

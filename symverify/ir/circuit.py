"""Alias of :mod:`symverify.kernel.ir.circuit`, where the module lives in the trusted base (docs/trusted-base.md).

Kept so that imports written for earlier versions keep working: this name is the very module object
of ``symverify.kernel.ir.circuit`` (identical classes, functions and monkeypatch targets). New code imports
from ``symverify.kernel.ir.circuit``.
"""

import sys

from symverify.kernel.ir import circuit as _module
from symverify.kernel.ir.circuit import *  # noqa: F403  (the public names, for type checkers)

sys.modules[__name__] = _module

"""Alias of :mod:`symverify.kernel.ir.baseconv`, where the module lives in the trusted base (docs/trusted-base.md).

Kept so that imports written for earlier versions keep working: this name is the very module object
of ``symverify.kernel.ir.baseconv`` (identical classes, functions and monkeypatch targets). New code imports
from ``symverify.kernel.ir.baseconv``.
"""

import sys

from symverify.kernel.ir import baseconv as _module
from symverify.kernel.ir.baseconv import *  # noqa: F403  (the public names, for type checkers)

sys.modules[__name__] = _module

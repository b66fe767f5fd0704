"""Alias of :mod:`symverify.kernel.verification`, where the module lives in the trusted base (docs/trusted-base.md).

Kept so that imports written for earlier versions keep working: this name is the very module object
of ``symverify.kernel.verification`` (identical classes, functions and monkeypatch targets). New code imports
from ``symverify.kernel.verification``.
"""

import sys

from symverify.kernel import verification as _module
from symverify.kernel.verification import *  # noqa: F403  (the public names, for type checkers)

sys.modules[__name__] = _module

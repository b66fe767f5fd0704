"""Let a submodule be called like the function it is named after (``sv.compile(...)``).

``symverify.compile``, ``symverify.execute`` and ``symverify.verify`` are both submodules and the
public functions users call. A package attribute can only be one of the two, and Python binds
the submodule as soon as anything imports it (``import symverify.compile.dense``). Making the
module object callable keeps both ``sv.compile(circuit)`` and ``import symverify.compile.dense``
working in any order.
"""

from __future__ import annotations

import sys
import types
from typing import Any

__all__ = ["make_callable"]


def make_callable(module_name: str, function_name: str) -> None:
    """Calling the module ``module_name`` calls its function ``function_name``."""
    module = sys.modules[module_name]

    class CallableModule(types.ModuleType):
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return getattr(self, function_name)(*args, **kwargs)

    CallableModule.__name__ = f"callable module {module_name}"
    CallableModule.__call__.__doc__ = getattr(module, function_name).__doc__
    module.__class__ = CallableModule

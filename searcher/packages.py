"""Subpackages that answer calls: `searcher.export(...)` runs the export, as `searcher.report(...)`
and `searcher.retrain(...)` run theirs.

Importing a subpackage binds its name on `searcher` to the package, not to the function of the
same name, so `from searcher import export` could hand out either depending on import order. The
package itself is made callable instead (module `__class__` assignment, PEP 549's workaround).
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any

__all__ = ["answer_calls"]


def answer_calls(module: str, function: Callable[..., Any]) -> None:
    """Makes the imported module `module` call `function` when it is called."""

    class _Callable(types.ModuleType):
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return function(*args, **kwargs)

    _Callable.__call__.__doc__ = function.__doc__
    sys.modules[module].__class__ = _Callable

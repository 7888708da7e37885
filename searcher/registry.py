"""Name -> plug-in factory tables, shared by `generators` and `targets`.

A registry maps names (`faces`, `dlib-cnn`, `http`, ...) to a factory path ("module:attribute")
and a one-line description; modules are imported only when their plug-in is loaded, so listing
names costs nothing and a missing optional dependency only bites the plug-in that needs it.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from searcher.errors import PluginError

__all__ = ["Registry"]


class Registry:
    """Plug-ins of one kind ("generator", "target").

    Args:
        kind: what the plug-ins are, for messages.
        entries: name -> ("module:attribute", one-line description).
    """

    def __init__(self, kind: str, entries: dict[str, tuple[str, str]]) -> None:
        self.kind = kind
        self._entries = dict(entries)

    def available(self) -> list[str]:
        """Names `load` accepts."""
        return sorted(self._entries)

    def describe(self) -> dict[str, str]:
        """Name -> one-line description."""
        return {name: doc for name, (_, doc) in sorted(self._entries.items())}

    def load(self, name: str, **options: Any) -> Any:
        """Builds the plug-in registered as `name` with keyword `options`.

        Raises:
            PluginError: `name` is unknown (the message lists the known names), or a required
                option is missing, or an option is not one the plug-in takes.
        """
        if name not in self._entries:
            raise PluginError(f"Unknown {self.kind} {name!r}. Available {self.kind}s: {', '.join(self.available())}.")
        module, _, attr = self._entries[name][0].partition(":")
        factory = getattr(importlib.import_module(module), attr)
        params = inspect.signature(factory).parameters
        takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
        unknown = [k for k in options if k not in params and not takes_any]
        if unknown:
            valid = ", ".join(k for k, p in params.items() if p.kind is not p.VAR_KEYWORD) or "none"
            raise PluginError(f"The {name!r} {self.kind} takes no option {unknown[0]!r}. Its options: {valid}.")
        named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        missing = [k for k, p in params.items() if p.kind in named and p.default is p.empty and k not in options]
        if missing:
            raise PluginError(f"The {name!r} {self.kind} needs the option(s) {', '.join(missing)}; e.g. load({name!r}, {missing[0]}=...).")
        return factory(**options)

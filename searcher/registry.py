"""Name -> plug-in factory tables: one `Registry` class for generators, targets and strategies.

A registry maps names (`faces`, `dlib-cnn`, `bo`, ...) to a factory path ("module:attribute")
and a one-line description; modules are imported only when their plug-in is loaded, so listing
names costs nothing and a missing optional dependency only bites the plug-in that needs it.
Options are checked against the factory's signature before it is called, so a misspelt option
is an error that lists the valid ones, never a TypeError from deep inside a constructor.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Sequence
from typing import Any

from searcher.errors import PluginError

__all__ = ["Registry"]


class Registry:
    """Plug-ins of one kind ("generator", "target", "strategy").

    Args:
        kind: what the plug-ins are, for messages.
        entries: name -> ("module:attribute", one-line description).
        arguments: names of the factory's arguments its caller always supplies (a strategy's
            `space` and `seed`); they are not options a user chooses.
    """

    def __init__(self, kind: str, entries: dict[str, tuple[str, str]], arguments: Sequence[str] = ()) -> None:
        self.kind = kind
        self._entries = dict(entries)
        self._arguments = frozenset(arguments)

    def available(self) -> list[str]:
        """Names `load` accepts, sorted."""
        return sorted(self._entries)

    def describe(self) -> dict[str, str]:
        """Name -> one-line description, in registration order."""
        return {name: doc for name, (_, doc) in self._entries.items()}

    def factory(self, name: str) -> Any:
        """The class or function registered as `name` (its module is imported now)."""
        if not isinstance(name, str) or name not in self._entries:  # an unhashable name is unknown too, not a TypeError
            raise PluginError(f"Unknown {self.kind} {name!r}. Available {self.kind_plural}: {', '.join(self._entries)}.")
        module, _, attr = self._entries[name][0].partition(":")
        return getattr(importlib.import_module(module), attr)

    @property
    def kind_plural(self) -> str:
        return "strategies" if self.kind == "strategy" else f"{self.kind}s"

    def options(self, name: str) -> list[str]:
        """The keyword options the plug-in `name` takes."""
        params = inspect.signature(self.factory(name)).parameters
        return [k for k, p in params.items() if p.kind is not p.VAR_KEYWORD and k not in self._arguments]

    def load(self, name: str, *args: Any, **options: Any) -> Any:
        """Builds the plug-in registered as `name` with positional `args` and keyword `options`.

        Raises:
            PluginError: `name` is unknown (the message lists the known names), or a required
                option is missing, or an option is not one the plug-in takes.
        """
        factory = self.factory(name)
        params = inspect.signature(factory).parameters
        takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
        unknown = [k for k in options if k not in params and not takes_any]
        if unknown:
            valid = ", ".join(self.options(name)) or "none"
            raise PluginError(f"The {name!r} {self.kind} takes no option {unknown[0]!r}. Its options: {valid}.")
        named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        missing = [k for k, p in list(params.items())[len(args):]
                   if p.kind in named and p.default is p.empty and k not in options]
        if missing:
            raise PluginError(f"The {name!r} {self.kind} needs the option(s) {', '.join(missing)}; e.g. load({name!r}, {missing[0]}=...).")
        return factory(*args, **options)

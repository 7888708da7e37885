"""The engine's exceptions, in one small tree.

    SearcherError
    ├── ParameterError   a value, name or option is not valid: unknown, missing, out of range, NaN,
    │   │                or of the wrong kind (also a ValueError)
    │   └── PluginError  a generator, target or strategy name or one of its options is unknown, or
    │                    the plug-in's optional dependency is missing (also a LookupError)
    └── TargetError      a target could not answer (kept apart from classifier failures)

Messages name the bad value and what would have been valid (`searcher.validation` writes them).
"""

from __future__ import annotations

__all__ = ["ParameterError", "PluginError", "SearcherError", "TargetError"]


class SearcherError(Exception):
    """Base class of every error the engine raises on purpose."""


class ParameterError(SearcherError, ValueError):
    """A parameter value or name is not valid for its space."""


class PluginError(ParameterError, LookupError):
    """A plug-in is unknown, takes no such option, or cannot be loaded."""


class TargetError(SearcherError, RuntimeError):
    """A target failed to produce an answer; never counted as a classifier failure."""

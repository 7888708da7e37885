"""The engine's exceptions, in one small tree.

    SearcherError
    ├── ParameterError   a parameter is unknown, missing, out of range, NaN or of the wrong kind
    ├── PluginError      a generator or target name is unknown, or its optional dependency is missing
    └── TargetError      a target could not answer (kept apart from classifier failures)

Messages name the bad value and what would have been valid.
"""

from __future__ import annotations

__all__ = ["ParameterError", "PluginError", "SearcherError", "TargetError"]


class SearcherError(Exception):
    """Base class of every error the engine raises on purpose."""


class ParameterError(SearcherError, ValueError):
    """A parameter value or name is not valid for its space."""


class PluginError(SearcherError, LookupError):
    """A plug-in is unknown or cannot be loaded."""


class TargetError(SearcherError, RuntimeError):
    """A target failed to produce an answer; never counted as a classifier failure."""

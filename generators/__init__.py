"""Generators: plug-ins that turn parameters into images plus the attributes they rendered.

Example:
    >>> import generators
    >>> gen = generators.load("faces", resolution=64)
    >>> batch = gen.generate(gen.space.sample(4, seed=0), seed=0)
    >>> batch.images.shape
    (4, 64, 64, 3)
"""

from __future__ import annotations

import importlib
from typing import Any

from generators.base import Batch, Generator, LatentGenerator
from searcher.errors import PluginError

__all__ = ["Batch", "Generator", "LatentGenerator", "available", "load", "describe"]

# name -> ("module:attribute", one-line description). Modules load only when asked for.
_REGISTRY: dict[str, tuple[str, str]] = {
    "faces": ("generators.faces.procedural:ProceduralFaces", "procedural faces, every attribute a parameter (the default)"),
    "faces-latent": ("generators.faces.latent:LatentFaces", "entangled latent face space, z ~ N(0, I), planted correlations"),
}


def available() -> list[str]:
    """Names `load` accepts."""
    return sorted(_REGISTRY)


def describe() -> dict[str, str]:
    """Name -> one-line description, for `searcher list`."""
    return {name: doc for name, (_, doc) in sorted(_REGISTRY.items())}


def load(name: str, **options: Any) -> Generator:
    """Builds the generator registered as `name` with its keyword `options`.

    Raises:
        PluginError: `name` is not registered (the message lists the names that are).
    """
    if name not in _REGISTRY:
        raise PluginError(f"Unknown generator {name!r}. Available generators: {', '.join(available())}.")
    module, _, attr = _REGISTRY[name][0].partition(":")
    return getattr(importlib.import_module(module), attr)(**options)

"""Generators: plug-ins that turn parameters into images plus the attributes they rendered.

Example:
    >>> import generators
    >>> gen = generators.load("faces", resolution=64)
    >>> batch = gen.generate(gen.space.sample(4, seed=0), seed=0)
    >>> batch.images.shape
    (4, 64, 64, 3)
"""

from __future__ import annotations

from typing import Any

from generators.base import Batch, Generator, LatentGenerator, Scale, Vocabulary, vocabulary_of
from searcher.registry import Registry

__all__ = ["Batch", "Generator", "LatentGenerator", "Scale", "Vocabulary", "available", "describe", "load", "options", "vocabulary"]

# name -> ("module:attribute", one-line description). Modules load only when asked for.
_REGISTRY: dict[str, tuple[str, str]] = {
    "faces": ("generators.faces.procedural:ProceduralFaces", "procedural faces, every attribute a parameter (the default)"),
    "faces-latent": ("generators.faces.latent:LatentFaces", "entangled latent face space, z ~ N(0, I), planted correlations"),
    "faces-cvae": ("generators.learned.faces_cvae:FacesCVAE", "conditional VAE of 64 px faces (skin type x gender), with an encoder"),
    "checkpoint": ("generators.learned.checkpoint:CheckpointGenerator", "your own generator network: a .pt2 / TorchScript / ONNX file and a TOML spec"),
    "planted": ("searcher.testing.planted:PlantedGenerator", "benchmark: points of [0,1]^d as tiny images, with known failure regions"),
}


_PLUGINS = Registry("generator", _REGISTRY)
available = _PLUGINS.available
describe = _PLUGINS.describe
options = _PLUGINS.options  # the keyword options a plug-in takes (whether it takes a `device`, say)


def load(name: str, **options: Any) -> Generator:
    """Builds the generator registered as `name` with its keyword `options`.

    Raises:
        PluginError: `name` is not registered (the message lists the names that are), or an
            option is missing or unknown.
    """
    return _PLUGINS.load(name, **options)


def vocabulary(name: str) -> Vocabulary:
    """How people describe what the generator `name` renders (scales, captions, groups), read from
    its class without building it; an empty `Vocabulary` if it declares none."""
    return vocabulary_of(_PLUGINS.factory(name))

"""The generator protocol: a `space` and `generate(params, seed) -> Batch`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd

from searcher.space import Space

__all__ = ["Batch", "Generator", "LatentGenerator"]


@dataclass
class Batch:
    """Images and the attributes that were actually rendered.

    Attributes:
        images: `N x H x W x 3` uint8 RGB array.
        truth: one row per image of the rendered attributes; it stands in for human annotation
            when no human annotated.
    """

    images: np.ndarray
    truth: pd.DataFrame

    def __post_init__(self) -> None:
        if self.images.ndim != 4 or self.images.shape[-1] != 3 or self.images.dtype != np.uint8:
            raise ValueError(f"Batch.images must be a `N x H x W x 3` uint8 array, got {self.images.dtype} {self.images.shape}.")
        if len(self.truth) != len(self.images):
            raise ValueError(f"Batch.truth has {len(self.truth)} rows for {len(self.images)} images.")

    def __len__(self) -> int:
        return len(self.images)


@runtime_checkable
class Generator(Protocol):
    """Turns parameter dicts into images.

    `generate` validates its input (unknown, missing, NaN or out-of-range parameters raise
    `searcher.errors.ParameterError`), fills omitted parameters with defaults, and is a pure
    function of each image's parameters and the seed: the same seed gives the same pixels, and a
    batch of N equals N batches of one.
    """

    space: Space

    def generate(self, params: Mapping[str, Any] | Sequence[Mapping[str, Any]], seed: int = 0) -> Batch: ...


@runtime_checkable
class LatentGenerator(Generator, Protocol):
    """A generator whose space is a latent block; `from_latent` renders raw `N x latent_dim` codes."""

    latent_dim: int

    def from_latent(self, z: np.ndarray, seed: int = 0) -> Batch: ...

"""`planted`: the planted failure landscape as a generator, so that the normal pipeline (strategies,
executors, store) runs on it in milliseconds and is scored against the truth.

A point of `[0, 1]^dim` (parameters `x0 .. x{dim-1}`) is "rendered" as a tiny square uint8 image
holding the point's float64 bytes exactly; `targets/planted.py` decodes it and fails inside the
planted regions of `searcher.planted.PlantedRegions`. The truth carries the point and its `region`
(-1 outside every region), so campaigns know which failure mode each failure belongs to.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from generators.base import Batch
from searcher.planted import PlantedRegions
from searcher.space import Continuous, Space

__all__ = ["PlantedGenerator", "decode", "encode", "side"]


def side(dim: int) -> int:
    """Side of the square image that holds `dim` float64 values (3 bytes per pixel)."""
    return math.ceil(math.sqrt(math.ceil(8 * dim / 3)))


def encode(X: np.ndarray) -> np.ndarray:
    """`n x dim` points -> `n x s x s x 3` uint8 images holding their bytes (zero padded)."""
    X = np.ascontiguousarray(np.atleast_2d(X), dtype="<f8")
    s = side(X.shape[1])
    raw = np.zeros((len(X), s * s * 3), np.uint8)
    raw[:, : X.shape[1] * 8] = X.view(np.uint8).reshape(len(X), -1)
    return raw.reshape(len(X), s, s, 3)


def decode(images: np.ndarray, dim: int) -> np.ndarray:
    """Inverse of `encode` for images of the right size; NaN rows for any other image."""
    n = len(images)
    if images.shape[1:] != (side(dim), side(dim), 3):
        return np.full((n, dim), np.nan)
    raw = np.ascontiguousarray(images.reshape(n, -1)[:, : dim * 8])
    return raw.view("<f8").reshape(n, dim).astype(float)


class PlantedGenerator:
    """Points of the unit cube as tiny images (`planted`); options as `PlantedRegions`."""

    def __init__(self, dim: int = 6, k: int = 5, volume: float = 0.03, seed: int = 0) -> None:
        self.regions = PlantedRegions(dim=dim, k=k, volume=volume, seed=seed)
        self.space = Space([Continuous(f"x{i}", 0.0, 1.0, default=0.5, doc="coordinate") for i in range(dim)])

    def __repr__(self) -> str:
        return f"PlantedGenerator({self.regions!r})"

    def generate(self, params: Mapping[str, Any] | Sequence[Mapping[str, Any]], seed: int = 0) -> Batch:
        rows = self.space.validate(params)
        X = np.array([[r[n] for n in self.space.names] for r in rows], float).reshape(len(rows), self.regions.dim)
        truth = pd.DataFrame(rows, columns=self.space.names)
        truth["region"] = self.regions.region_of(X) if len(X) else np.zeros(0, int)
        return Batch(images=encode(X), truth=truth)

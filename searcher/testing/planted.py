"""The planted known-answer problem: K disjoint failure boxes in the unit cube, as a landscape, a
generator and a target, so the whole pipeline (strategies, executors, store, comparison) runs on it in
milliseconds and is scored against the truth.

A strategy is judged on two counts (McDuff et al., 003_cc490b638f1b9b67.txt, section 3): how many
failures it finds in a budget, and how many *different* failure modes they cover. Real targets
cannot say how many modes there are; this problem can (Ax's benchmark problems carry their known
optimum the same way).

- `PlantedRegions`: each region is an axis-aligned box whose sides vary up to 1.5x around the side of
  a cube of the same volume, placed uniformly at random (seeded) inside `[0, 1]^dim` without
  overlapping the others, so the failing volume is exactly `volume`.
- `PlantedGenerator` (registered as the `planted` generator): a point of `[0, 1]^dim` (parameters
  `x0 .. x{dim-1}`) is "rendered" as a tiny square uint8 image holding the point's float64 bytes
  exactly; the truth carries the point and its `region` (-1 outside every region), so campaigns
  know which failure mode each failure belongs to.
- `PlantedTarget` (the `planted` target): a detector that "misses the face" (label False, a
  failure) exactly when the decoded point lies in a region; any other image (a real photo, a face
  render) is answered True. For testing the machinery around targets it can also be slow
  (`delay` seconds per image) and unreliable (`error_rate`: that fraction of images, chosen by a
  hash of their bytes, get an error answer).

Example:
    >>> planted = PlantedRegions(dim=6, k=5, volume=0.03, seed=0)
    >>> X = np.random.default_rng(0).random((400, 6))
    >>> planted.failures_found(X), planted.regions_found(X)   # random search, 400 points
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from generators.base import Batch
from searcher.errors import ParameterError
from searcher.space import Continuous, Space
from searcher.validation import check_int, check_number
from targets.base import Predictions, check_images

__all__ = ["PlantedGenerator", "PlantedRegions", "PlantedTarget", "decode", "encode", "side"]

_ASPECT = 1.5  # each side lies within [1/1.5, 1.5] x the side of the equal-volume cube
_TRIES = 20_000


class PlantedRegions:
    """K disjoint failure boxes of total volume `volume` in the unit cube of dimension `dim`.

    Attributes:
        lower, upper: `k x dim` corners of the boxes.
        centres: `k x dim` centres.
    """

    def __init__(self, dim: int = 6, k: int = 5, volume: float = 0.03, seed: int = 0) -> None:
        self.dim, self.k, self.seed = check_int("dim", dim, 1), check_int("k", k, 1), check_int("seed", seed, 0)
        self.volume = check_number("volume", volume, 0.0, 0.5, open_low=True)
        rng = np.random.default_rng([self.seed, self.dim, self.k])
        side = (self.volume / self.k) ** (1.0 / self.dim)
        lower, upper = [], []
        for _ in range(_TRIES):
            if len(lower) == self.k:
                break
            log_aspect = rng.uniform(-math.log(_ASPECT), math.log(_ASPECT), self.dim)
            sides = np.minimum(side * np.exp(log_aspect - log_aspect.mean()), 1.0)
            sides *= (self.volume / self.k / np.prod(sides)) ** (1.0 / self.dim)  # exact volume after the cap
            if (sides > 1).any():
                continue
            lo = rng.uniform(0.0, 1.0 - sides)
            hi = lo + sides
            if all(((lo >= top) | (hi <= bottom)).any() for bottom, top in zip(lower, upper)):
                lower.append(lo)
                upper.append(hi)
        if len(lower) < self.k:
            raise ParameterError(f"Could not place {self.k} disjoint regions of total volume {self.volume:g} in {self.dim} dimensions; lower 'k' or 'volume'.")
        self.lower, self.upper = np.array(lower), np.array(upper)
        self.centres = 0.5 * (self.lower + self.upper)

    def __repr__(self) -> str:
        return f"PlantedRegions(dim={self.dim}, k={self.k}, volume={self.volume:g}, seed={self.seed})"

    def region_of(self, X: np.ndarray) -> np.ndarray:
        """`n x dim` points -> `n` region indices, -1 outside every region."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        if X.shape[1] != self.dim:
            raise ParameterError(f"Expected a `n x {self.dim}` array of points, got shape {X.shape}.")
        inside = ((X[:, None, :] >= self.lower) & (X[:, None, :] <= self.upper)).all(axis=2)
        return np.where(inside.any(axis=1), inside.argmax(axis=1), -1)

    def loss(self, X: np.ndarray) -> np.ndarray:
        """The 0/1 classifier loss `L_c`: 1 inside a region (a failure), 0 outside."""
        return (self.region_of(X) >= 0).astype(float)

    def failures_found(self, X: np.ndarray) -> int:
        """How many of the points are failures."""
        return int((self.region_of(X) >= 0).sum())

    def regions_found(self, X: np.ndarray) -> int:
        """How many different regions the points hit."""
        regions = self.region_of(X)
        return len(set(regions[regions >= 0].tolist()))


# --------------------------------------------------------------------------- as a generator and a target


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


class PlantedTarget:
    """Fails inside the planted regions (`planted`); options as `PlantedRegions`, plus `delay`
    (seconds per image) and `error_rate` (fraction of images answered with an error)."""

    task = "detect"

    def __init__(self, dim: int = 6, k: int = 5, volume: float = 0.03, seed: int = 0, delay: float = 0.0, error_rate: float = 0.0) -> None:
        self.regions = PlantedRegions(dim=dim, k=k, volume=volume, seed=seed)
        self.delay, self.error_rate = check_number("delay", delay, 0.0), check_number("error_rate", error_rate, 0.0, 1.0)

    def predict(self, images: np.ndarray) -> Predictions:
        images = check_images(images)
        if self.delay:
            time.sleep(self.delay * len(images))
        X = decode(images, self.regions.dim)
        inside = np.zeros(len(images), bool)
        ok = ~np.isnan(X).any(axis=1)
        inside[ok] = self.regions.region_of(X[ok]) >= 0
        labels: list[bool | None] = [bool(not v) for v in inside]
        errors: list[str | None] = [None] * len(images)
        for i, im in enumerate(images):
            if self.error_rate and int.from_bytes(hashlib.blake2b(im.tobytes(), digest_size=4).digest(), "little") < self.error_rate * 2**32:
                labels[i], errors[i] = None, "injected error"
        return Predictions(label=labels, error=errors)

"""A failure landscape with known answers: K disjoint boxes planted in the unit cube.

A strategy is judged on two counts (McDuff et al., 003_cc490b638f1b9b67.txt, section 3): how many
failures it finds in a budget, and how many *different* failure modes they cover. Real targets
cannot say how many modes there are; this one can. Each region is an axis-aligned box whose sides
vary up to 1.5x around the side of a cube of the same volume, placed uniformly at random (seeded)
inside `[0, 1]^dim` without overlapping the others, so the failing volume is exactly `volume`.

Example:
    >>> planted = PlantedRegions(dim=6, k=5, volume=0.03, seed=0)
    >>> X = np.random.default_rng(0).random((400, 6))
    >>> planted.failures_found(X), planted.regions_found(X)   # random search, 400 points
"""

from __future__ import annotations

import math

import numpy as np

from searcher.errors import ParameterError

__all__ = ["PlantedRegions"]

_ASPECT = 1.5  # each side lies within [1/1.5, 1.5] x the side of the equal-volume cube
_TRIES = 20_000


class PlantedRegions:
    """K disjoint failure boxes of total volume `volume` in the unit cube of dimension `dim`.

    Attributes:
        lower, upper: `k x dim` corners of the boxes.
        centres: `k x dim` centres.
    """

    def __init__(self, dim: int = 6, k: int = 5, volume: float = 0.03, seed: int = 0) -> None:
        for name, value, low in (("dim", dim, 1), ("k", k, 1), ("seed", seed, 0)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
                raise ParameterError(f"The {name!r} option must be an integer >= {low}. Got {value!r} instead.")
        if isinstance(volume, bool) or not isinstance(volume, (int, float)) or not 0 < volume <= 0.5:
            raise ParameterError(f"The 'volume' option must be a number in (0, 0.5]. Got {volume!r} instead.")
        self.dim, self.k, self.volume, self.seed = int(dim), int(k), float(volume), int(seed)
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
            if all(((lo >= u) | (hi <= l)).any() for l, u in zip(lower, upper)):
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

"""Candidate points near given centres: what both BO strategies choose among."""

from __future__ import annotations

import numpy as np

from searcher.space import Cube

__all__ = ["SCALES", "around"]

SCALES = (0.2, 0.1, 0.05, 0.02)  # Gaussian step sizes, unit-cube units


def around(cube: Cube, centres: np.ndarray, rng: np.random.Generator, per: int, scales: tuple[float, ...] = SCALES) -> np.ndarray:
    """`per` snapped neighbours of each centre: Gaussian steps at mixed scales, each categorical
    resampled at rate 2 / dim (a step in a one-hot block means nothing, a new category does)."""
    X = np.repeat(centres, per, axis=0)
    moved = X + rng.choice(scales, size=(len(X), 1)) * rng.standard_normal(X.shape)
    for start, width in cube.blocks:
        flip = rng.random(len(X)) < 2.0 / cube.dim
        moved[flip, start : start + width] = rng.random((int(flip.sum()), width))
    return cube.snap(moved)

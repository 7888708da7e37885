"""`planted`: the target of the planted benchmark (see generators/planted.py).

A detector that "misses the face" (label False, a failure) exactly when the decoded point lies in
a planted region. Any other image (a real photo, a face render) is answered True. For testing the
machinery around targets it can also be slow (`delay` seconds per image) and unreliable
(`error_rate`: that fraction of images, chosen by a hash of their bytes, get an error answer).
"""

from __future__ import annotations

import hashlib
import time

import numpy as np

from generators.planted import decode
from searcher.planted import PlantedRegions
from targets.base import Predictions, check_images

__all__ = ["PlantedTarget"]


class PlantedTarget:
    """Fails inside the planted regions (`planted`); options as `PlantedRegions`, plus `delay`
    (seconds per image) and `error_rate` (fraction of images answered with an error)."""

    task = "detect"

    def __init__(self, dim: int = 6, k: int = 5, volume: float = 0.03, seed: int = 0, delay: float = 0.0, error_rate: float = 0.0) -> None:
        if not 0.0 <= error_rate <= 1.0 or delay < 0:
            raise ValueError(f"The 'error_rate' option must be in [0, 1] and 'delay' >= 0. Got {error_rate=}, {delay=}.")
        self.regions = PlantedRegions(dim=dim, k=k, volume=volume, seed=seed)
        self.delay, self.error_rate = float(delay), float(error_rate)

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

"""Small fakes for tests and for plug-in authors: a generator and targets that need no model,
no network and no GPU (BoTorch ships `MockModel`, httpx `MockTransport`, for the same reason).

    >>> target = CallableTarget(lambda images: images.mean(axis=(1, 2, 3)) > 100)   # found a face if bright
    >>> objective = Objective(FakeGenerator(), target)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from generators.base import Batch
from searcher.space import Categorical, Continuous, Space
from targets.base import Predictions, check_images

__all__ = ["CallableTarget", "FakeGenerator"]


class FakeGenerator:
    """Flat-coloured squares: `brightness` in [0, 1] sets the grey level, `tint` one channel; the
    seed adds a little noise. Truth repeats the parameters, so a classify target can be judged."""

    def __init__(self, resolution: int = 16) -> None:
        self.resolution = resolution
        self.space = Space([Continuous("brightness", 0.0, 1.0, default=0.5, doc="grey level"),
                            Categorical("tint", ("none", "red", "blue"), doc="one channel raised")])

    def generate(self, params: Mapping[str, Any] | Sequence[Mapping[str, Any]], seed: int = 0) -> Batch:
        rows = self.space.validate(params)
        r = self.resolution
        images = np.empty((len(rows), r, r, 3), np.uint8)
        for i, row in enumerate(rows):
            noise = np.random.default_rng([seed, int(row["brightness"] * 1e6)]).integers(0, 3, (r, r, 3))
            pixel = np.full(3, 200.0 * row["brightness"])
            if row["tint"] != "none":
                pixel[0 if row["tint"] == "red" else 2] += 50
            images[i] = np.clip(pixel + noise, 0, 255).astype(np.uint8)
        return Batch(images, pd.DataFrame(rows, columns=self.space.names))


class CallableTarget:
    """Any function of an `N x H x W x 3` uint8 batch as a target (httpx's `MockTransport` idea).

    Args:
        fn: returns one label per image (or a `Predictions`); it may raise, which an `Objective`
            turns into an error outcome per image.
        task: "detect" (labels are "face found?") or "classify".
        labels: a classify target's labels; `truth` its `(column, cut)`.
    """

    def __init__(self, fn: Callable[[np.ndarray], Any], task: str = "detect", labels: Sequence[Any] = (),
                 truth: tuple[str, float] | None = None) -> None:
        self.fn, self.task, self.labels, self.truth = fn, task, tuple(labels), truth

    def predict(self, images: np.ndarray) -> Predictions:
        out = self.fn(check_images(images))
        return out if isinstance(out, Predictions) else Predictions(label=list(out))

"""The target protocol: a `task` and `predict(images) -> Predictions`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["TASKS", "Predictions", "Target", "check_images"]

TASKS = ("detect", "classify", "verify")


@dataclass
class Predictions:
    """One entry per image.

    Attributes:
        label: for `detect`, whether a face was found; for `classify`, the predicted label.
        score: confidence of the predicted label where the model gives one, else None.
        boxes: for `detect`, a list of `(x0, y0, x1, y1)` pixel boxes per image.
        embedding: for `verify`, one vector per image.
        error: None, or why this image got no answer (never a classifier failure).
    """

    label: list[Any]
    score: list[float | None] = field(default_factory=list)
    boxes: list[list[tuple[float, float, float, float]]] = field(default_factory=list)
    embedding: list[np.ndarray | None] = field(default_factory=list)
    error: list[str | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        n = len(self.label)
        for name in ("score", "boxes", "embedding", "error"):
            values = getattr(self, name)
            if not values:
                setattr(self, name, [None] * n if name != "boxes" else [[] for _ in range(n)])
            elif len(values) != n:
                raise ValueError(f"Predictions.{name} has {len(values)} entries for {n} labels.")

    def __len__(self) -> int:
        return len(self.label)


@runtime_checkable
class Target(Protocol):
    """Judges a batch of `N x H x W x 3` uint8 RGB images.

    Classify targets also have `labels`; those trained on a rendered attribute may declare
    `truth = (column, cut)` (truth below the cut is `labels[0]`, at or above it `labels[1]`), which
    campaigns use to judge them. Verify targets have `distance(a, b)` and `threshold`.
    """

    task: str

    def predict(self, images: np.ndarray) -> Predictions: ...


def check_images(images: np.ndarray) -> np.ndarray:
    """The batch every target takes: `N x H x W x 3` uint8 RGB. Raises ValueError otherwise."""
    images = np.asarray(images)
    if images.ndim == 3 and images.shape[-1] == 3:
        raise ValueError(f"Targets take a batch `N x H x W x 3`; got one image {images.shape}. Use images[None].")
    if images.ndim != 4 or images.shape[-1] != 3:
        raise ValueError(f"Targets take a `N x H x W x 3` uint8 RGB array (3 channels, last); got shape {images.shape}.")
    if images.dtype != np.uint8:
        raise ValueError(f"Targets take uint8 RGB images (0..255); got dtype {images.dtype}.")
    return images

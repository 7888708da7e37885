"""The target protocol: a `task` and `predict(images) -> Predictions`; a target that spends what
cannot be given back (a paid API) is also a `SpendingTarget`, whose spending a campaign keeps."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["CAP_REACHED", "TASKS", "ClassifyTarget", "LabelledImages", "Predictions", "SpendingTarget", "Target", "TrainingRecipe",
           "VerifyTarget", "check_images"]

TASKS = ("detect", "classify", "verify")
CAP_REACHED = "budget exhausted"
"""The `error` of an image a `SpendingTarget` did not send because its spending cap is reached: it
was not judged, so a campaign stores no trial for it and evaluates it once the cap is raised."""


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
    """Judges a batch of `N x H x W x 3` uint8 RGB images. `task` is one of `TASKS`; a classify
    target is also a `ClassifyTarget`, a verify target a `VerifyTarget`."""

    task: str

    def predict(self, images: np.ndarray) -> Predictions: ...


@runtime_checkable
class ClassifyTarget(Target, Protocol):
    """A target whose `label` is one of `labels`.

    `truth` is `(column, cut)` for targets trained on a rendered attribute (truth below the cut is
    `labels[0]`, at or above it `labels[1]`), which campaigns and transects judge them by; None for
    targets that declare none (the user names the truth column and cut).
    """

    labels: Sequence[Any]
    truth: tuple[str, float] | None


@runtime_checkable
class VerifyTarget(Target, Protocol):
    """A target that embeds faces: `predict` gives one `embedding` per image (label False: no face
    found); two faces are the same person when `distance(a, b) <= threshold`."""

    threshold: float

    def distance(self, a: np.ndarray, b: np.ndarray) -> float: ...


@runtime_checkable
class SpendingTarget(Target, Protocol):
    """A target whose requests cost something that a resume must not give back (a paid API).

    A campaign stores `spending()` in its store with every batch of trials (in the same
    transaction) and, when it is resumed, passes the stored record to `restore_spending` before the
    first request, so a cap holds across any number of resumes. Once `cap_reached()` says so, the
    campaign sends nothing more and stops with that reason; a resumed campaign may change the
    options named in `cap_options` (to raise the cap) and no other.

    Attributes:
        cap_options: the names of the options that set the cap (e.g. `("budget",)`).
    """

    cap_options: tuple[str, ...]

    def spending(self, ahead: int = 0) -> dict[str, Any]:
        """What has been spent so far (this run and those restored), as JSON-able values; with
        `ahead`, the most it can have spent once `ahead` more images are sent (the campaign stores
        that before sending them, so a kill -9 mid-batch gives nothing back)."""
        ...

    def restore_spending(self, state: Mapping[str, Any]) -> None:
        """Takes up the record `spending()` gave before (in another process): counts continue from it."""
        ...

    def cap_reached(self) -> str | None:
        """None while one more request fits under the cap; else why not, e.g. "spending cap reached (10 of 10)"."""
        ...


@dataclass
class LabelledImages:
    """Images with the right label of each, as a trainable target learns from and is tested on.

    Attributes:
        images: `N x H x W x 3` uint8 RGB.
        labels: `N` label indices (into the recipe's `labels`).
        truth: what the generator rendered, one row per image (the subgroups are read from it).
    """

    images: np.ndarray
    labels: np.ndarray
    truth: Any  # a pandas DataFrame; pandas is not imported by the protocol

    def __len__(self) -> int:
        return len(self.labels)


@runtime_checkable
class TrainingRecipe(Protocol):
    """How a trainable classify target is trained and tested, for `searcher retrain`: the same
    recipe trains every arm (base, + hard examples, + random images, balanced), so that the arms
    differ in their data only.

    `base(seed)` is the training set the shipped model learnt from (drawn with `seed`),
    `balanced(seed)` the reference set of the same size without the planted bias, `tests(seed)`
    the held-out sets by name; `train(data, seed)` returns a model, `evaluate(model, data)` its
    label index for every image; `groups(truth)` names the subgroups reported (boolean masks).
    """

    labels: Sequence[Any]

    def base(self, seed: int) -> LabelledImages: ...

    def balanced(self, seed: int) -> LabelledImages: ...

    def tests(self, seed: int) -> dict[str, LabelledImages]: ...

    def train(self, data: LabelledImages, seed: int) -> Any: ...

    def evaluate(self, model: Any, data: LabelledImages) -> np.ndarray: ...

    def groups(self, truth: Any) -> dict[str, np.ndarray]: ...


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

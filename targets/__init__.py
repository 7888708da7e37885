"""Targets: the classifiers, detectors and services a campaign interrogates.

Example:
    >>> import generators, targets
    >>> gen, det = generators.load("faces"), targets.load("dlib-hog")
    >>> det.predict(gen.generate({}).images).label
    [True]
"""

from __future__ import annotations

import importlib
from typing import Any

from searcher.errors import PluginError
from targets.base import TASKS, Predictions, Target

__all__ = ["Predictions", "Target", "TASKS", "available", "describe", "load"]

_REGISTRY: dict[str, tuple[str, str]] = {
    "dlib-cnn": ("targets.detectors:DlibCNN", "dlib's MMOD CNN face detector (face-recognition-models weights)"),
    "dlib-hog": ("targets.detectors:DlibHOG", "dlib's HOG frontal face detector"),
    "haar-face": ("targets.detectors:HaarFace", "OpenCV 4.x Haar cascade, frontal face"),
    "haar-smile": ("targets.detectors:HaarSmile", "OpenCV 4.x smile cascade inside the Haar face (classify)"),
    "dlib-verify": ("targets.verify:DlibVerify", "dlib's face-recognition ResNet, 128-d descriptor, threshold 0.6 (verify)"),
}


def available() -> list[str]:
    """Names `load` accepts."""
    return sorted(_REGISTRY)


def describe() -> dict[str, str]:
    """Name -> one-line description, for `searcher list`."""
    return {name: doc for name, (_, doc) in sorted(_REGISTRY.items())}


def load(name: str, **options: Any) -> Target:
    """Builds the target registered as `name` with its keyword `options`.

    Raises:
        PluginError: `name` is not registered (the message lists the names that are).
    """
    if name not in _REGISTRY:
        raise PluginError(f"Unknown target {name!r}. Available targets: {', '.join(available())}.")
    module, _, attr = _REGISTRY[name][0].partition(":")
    return getattr(importlib.import_module(module), attr)(**options)

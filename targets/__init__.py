"""Targets: the classifiers, detectors and services a campaign interrogates.

Example:
    >>> import generators, targets
    >>> gen, det = generators.load("faces"), targets.load("dlib-hog")
    >>> det.predict(gen.generate({}).images).label
    [True]
"""

from __future__ import annotations

from typing import Any

from searcher.registry import Registry
from targets.base import TASKS, Predictions, Target

__all__ = ["TASKS", "Predictions", "Target", "available", "describe", "load", "options"]

_REGISTRY: dict[str, tuple[str, str]] = {
    "dlib-cnn": ("targets.detectors:DlibCNN", "dlib's MMOD CNN face detector (face-recognition-models weights)"),
    "dlib-hog": ("targets.detectors:DlibHOG", "dlib's HOG frontal face detector"),
    "haar-face": ("targets.detectors:HaarFace", "OpenCV 4.x Haar cascade, frontal face"),
    "haar-smile": ("targets.detectors:HaarSmile", "OpenCV 4.x smile cascade inside the Haar face (classify)"),
    "dlib-verify": ("targets.verify:DlibVerify", "dlib's face-recognition ResNet, 128-d descriptor, threshold 0.6 (verify)"),
    "http": ("targets.http:HttpTarget", "a remote image API over HTTP: retries, cache, budget, env: secrets (needs url=)"),
    "torch": ("targets.local:TorchScriptTarget", "your TorchScript classifier file, read with torch.jit.load (needs path=, labels=)"),
    "onnx": ("targets.local:OnnxTarget", "your ONNX classifier file run by onnxruntime (needs path=, labels=; the onnx extra)"),
    "gender-cnn": ("targets.trained:GenderCNN", "small CNN, masculine/feminine, trained to lean on hair length (planted bias)"),
    "glasses-cnn": ("targets.trained:GlassesCNN", "small CNN, clear glasses or not, trained where glasses go with a light background (planted bias)"),
    "planted": ("searcher.testing.planted:PlantedTarget", "benchmark: fails exactly inside the planted regions (pairs with the planted generator)"),
    "smile-cnn": ("targets.trained:SmileCNN", "small CNN, smiling or not, trained where beards and makeup go with smiles (planted bias)"),
}


_PLUGINS = Registry("target", _REGISTRY)
available = _PLUGINS.available
describe = _PLUGINS.describe
options = _PLUGINS.options  # the keyword options a plug-in takes (whether it takes a `device`, say)


def load(name: str, **options: Any) -> Target:
    """Builds the target registered as `name` with its keyword `options`.

    Raises:
        PluginError: `name` is not registered (the message lists the names that are), or an
            option is missing or unknown.
    """
    return _PLUGINS.load(name, **options)

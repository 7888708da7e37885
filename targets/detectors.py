"""Real face detectors shipped by installed packages (nothing is downloaded at run time).

- `dlib-cnn`: dlib's MMOD CNN detector, weights `mmod_human_face_detector.dat` from the
  `face-recognition-models` package, located with importlib (its `__init__` needs pkg_resources).
- `dlib-hog`: dlib's HOG + linear SVM frontal detector, built into dlib.
- `haar-face`: OpenCV 4.x `haarcascade_frontalface_default.xml` on the grey image.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from searcher.errors import PluginError
from targets.base import Predictions, check_images

__all__ = ["DlibCNN", "DlibHOG", "HaarFace", "model_file"]


def model_file(name: str) -> Path:
    """Path of a weight file inside the installed `face-recognition-models` package."""
    spec = importlib.util.find_spec("face_recognition_models")
    if spec is None or not spec.submodule_search_locations:
        raise PluginError("dlib targets need the 'face-recognition-models' package: pip install face-recognition-models")
    path = Path(list(spec.submodule_search_locations)[0]) / "models" / name
    if not path.is_file():
        raise PluginError(f"{name} is missing from the face-recognition-models package at {path.parent}.")
    return path


def _dlib():
    try:
        import dlib
    except ImportError as exc:  # pragma: no cover - dlib is a core dependency
        raise PluginError("dlib targets need dlib: pip install dlib-bin") from exc
    return dlib


def _detections(boxes: list[list[tuple[float, float, float, float]]], scores: list[float | None]) -> Predictions:
    return Predictions(label=[len(b) > 0 for b in boxes], score=scores, boxes=boxes)


class DlibCNN:
    """dlib's MMOD CNN face detector (`dlib-cnn`); `upsample` pyramid levels (default 1)."""

    task = "detect"

    def __init__(self, upsample: int = 1) -> None:
        self.upsample = int(upsample)
        self._net = _dlib().cnn_face_detection_model_v1(str(model_file("mmod_human_face_detector.dat")))

    def predict(self, images: np.ndarray) -> Predictions:
        boxes, scores = [], []
        for im in check_images(images):
            dets = self._net(np.ascontiguousarray(im), self.upsample)
            boxes.append([(d.rect.left(), d.rect.top(), d.rect.right(), d.rect.bottom()) for d in dets])
            scores.append(max((float(d.confidence) for d in dets), default=None))
        return _detections(boxes, scores)


class DlibHOG:
    """dlib's HOG frontal face detector (`dlib-hog`); `upsample` pyramid levels (default 1)."""

    task = "detect"

    def __init__(self, upsample: int = 1) -> None:
        self.upsample = int(upsample)
        self._det = _dlib().get_frontal_face_detector()

    def predict(self, images: np.ndarray) -> Predictions:
        boxes, scores = [], []
        for im in check_images(images):
            rects, conf, _ = self._det.run(np.ascontiguousarray(im), self.upsample, 0.0)
            boxes.append([(r.left(), r.top(), r.right(), r.bottom()) for r in rects])
            scores.append(max(conf, default=None))
        return _detections(boxes, scores)


class HaarFace:
    """OpenCV's frontal-face Haar cascade (`haar-face`) on the grey image."""

    task = "detect"

    def __init__(self, scale_factor: float = 1.1, min_neighbors: int = 5, cascade: str = "haarcascade_frontalface_default.xml") -> None:
        try:
            import cv2
        except ImportError as exc:  # pragma: no cover - a core dependency
            raise PluginError("haar targets need OpenCV 4.x: pip install 'opencv-python-headless<5'") from exc
        path = Path(cv2.data.haarcascades) / cascade
        self._cv2 = cv2
        self._cascade = cv2.CascadeClassifier(str(path))
        if self._cascade.empty():
            raise PluginError(f"Could not load the Haar cascade {path} (OpenCV {cv2.__version__}; OpenCV 5 dropped them).")
        self.scale_factor, self.min_neighbors = float(scale_factor), int(min_neighbors)

    def predict(self, images: np.ndarray) -> Predictions:
        boxes = []
        for im in check_images(images):
            grey = self._cv2.cvtColor(im, self._cv2.COLOR_RGB2GRAY)
            found = self._cascade.detectMultiScale(grey, scaleFactor=self.scale_factor, minNeighbors=self.min_neighbors)
            boxes.append([(float(x), float(y), float(x + w), float(y + h)) for x, y, w, h in found])
        return _detections(boxes, [None] * len(boxes))

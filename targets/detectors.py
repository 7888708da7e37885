"""Real face detectors shipped by installed packages (nothing is downloaded at run time).

- `dlib-cnn`: dlib's MMOD CNN detector, weights `mmod_human_face_detector.dat` from the
  `face-recognition-models` package, located with importlib (its `__init__` needs pkg_resources).
- `dlib-hog`: dlib's HOG + linear SVM frontal detector, built into dlib.
- `haar-face`: OpenCV 4.x `haarcascade_frontalface_default.xml` on the grey image.
- `haar-smile`: OpenCV's `haarcascade_smile.xml` inside the largest Haar face (a real smiling
  classifier, as in docs/papers.md#denton); "no face" is its own outcome, not an error.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from searcher.errors import PluginError
from targets.base import Predictions, check_images

__all__ = ["DlibCNN", "DlibHOG", "HaarFace", "HaarSmile", "model_file"]


def model_file(name: str) -> Path:
    """Path of a weight file inside the installed `face-recognition-models` package."""
    spec = importlib.util.find_spec("face_recognition_models")
    if spec is None or not spec.submodule_search_locations:
        raise PluginError("dlib targets need the 'face-recognition-models' package: pip install face-recognition-models")
    path = Path(next(iter(spec.submodule_search_locations))) / "models" / name
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


def _largest_central(box: tuple[float, float, float, float], shape: tuple[int, ...]) -> tuple[float, float]:
    """A key that orders face boxes by area, then by nearness to the image's centre: the cascade's
    windows come in discrete sizes, so two faces of one size tie."""
    x0, y0, x1, y1 = box
    off_centre = (0.5 * (x0 + x1) - 0.5 * shape[1]) ** 2 + (0.5 * (y0 + y1) - 0.5 * shape[0]) ** 2
    return (x1 - x0) * (y1 - y0), -off_centre


def _cv2():
    try:
        import cv2
    except ImportError as exc:  # pragma: no cover - a core dependency
        raise PluginError("haar targets need OpenCV 4.x: pip install 'opencv-python-headless<5'") from exc
    return cv2


def _cascade(name: str):
    cv2 = _cv2()
    path = Path(cv2.data.haarcascades) / name
    cascade = cv2.CascadeClassifier(str(path))
    if cascade.empty():
        raise PluginError(f"Could not load the Haar cascade {path} (OpenCV {cv2.__version__}; OpenCV 5 dropped them).")
    return cascade


class HaarFace:
    """OpenCV's frontal-face Haar cascade (`haar-face`) on the grey image.

    Its score is the level weight of the surest detection (`detectMultiScale3` with
    `outputRejectLevels`: the cascade's last-stage sum, larger the surer it is), which the
    continuous "score" loss reads as dlib's detectors' confidence; the boxes are those of
    `detectMultiScale` with the same settings.
    """

    task = "detect"

    def __init__(self, scale_factor: float = 1.1, min_neighbors: int = 5) -> None:
        self._cv2 = _cv2()
        self._cascade = _cascade("haarcascade_frontalface_default.xml")
        self.scale_factor, self.min_neighbors = float(scale_factor), int(min_neighbors)

    def detect(self, grey: np.ndarray) -> tuple[list[tuple[float, float, float, float]], float | None]:
        """The face boxes in a grey image, sorted, and the level weight of the surest (None if none).
        OpenCV collects the windows in a parallel loop and returns the boxes in thread order; sorted,
        whatever reads them (the first largest face of `HaarSmile`) no longer depends on the scheduling."""
        found, _, weights = self._cascade.detectMultiScale3(grey, scaleFactor=self.scale_factor, minNeighbors=self.min_neighbors,
                                                           outputRejectLevels=True)
        boxes = sorted((float(x), float(y), float(x + w), float(y + h)) for x, y, w, h in found)
        return boxes, max((float(w) for w in np.ravel(weights)), default=None)

    def faces(self, grey: np.ndarray) -> list[tuple[float, float, float, float]]:
        return self.detect(grey)[0]

    def predict(self, images: np.ndarray) -> Predictions:
        found = [self.detect(self._cv2.cvtColor(im, self._cv2.COLOR_RGB2GRAY)) for im in check_images(images)]
        return _detections([boxes for boxes, _ in found], [score for _, score in found])


class HaarSmile:
    """OpenCV's smile cascade inside the largest frontal face (`haar-smile`), a real smiling classifier.

    The largest face (found by `HaarFace`; of faces of one size, the one nearest the image's
    centre) is resized to `face_width` pixels and the
    cascade runs on its lower half with `scale_factor` 1.3 and `min_neighbors` 15: on `faces` renders it fires on
    7% of neutral, 33% of half-smiling and 90% of broadly smiling faces. Labels: "not smiling",
    "smiling", and "no face" when no face was found (its own outcome, not an error).
    """

    task = "classify"
    labels = ("not smiling", "smiling", "no face")
    truth = ("smile", 0.5)  # judged against the rendered smile; "no face" is always wrong

    def __init__(self, scale_factor: float = 1.3, min_neighbors: int = 15, face_width: int = 128) -> None:
        self._faces = HaarFace()
        self._cv2 = self._faces._cv2
        self._cascade = _cascade("haarcascade_smile.xml")
        self.scale_factor, self.min_neighbors, self.face_width = float(scale_factor), int(min_neighbors), int(face_width)

    def predict(self, images: np.ndarray) -> Predictions:
        cv2, labels, boxes = self._cv2, [], []
        for im in check_images(images):
            grey = cv2.cvtColor(im, cv2.COLOR_RGB2GRAY)
            faces = self._faces.faces(grey)
            if not faces:
                labels.append("no face")
                boxes.append([])
                continue
            x0, y0, x1, y1 = (int(v) for v in max(faces, key=lambda b: _largest_central(b, grey.shape)))
            size = self.face_width
            face = cv2.resize(grey[y0:y1, x0:x1], (size, size), interpolation=cv2.INTER_LINEAR)
            smiles = self._cascade.detectMultiScale(face[size // 2 :], scaleFactor=self.scale_factor, minNeighbors=self.min_neighbors)
            labels.append("smiling" if len(smiles) else "not smiling")
            boxes.append([(x0, y0, x1, y1)])
        return Predictions(label=labels, boxes=boxes)

"""`dlib-verify`: dlib's face-recognition ResNet, a real face verifier shipped with
`face-recognition-models` (nothing downloaded at run time).

Each image: find the largest face with dlib's HOG detector (upsampling once), align it with the
5-point landmark model, and compute the 128-d descriptor. Two images show the same person when the
Euclidean distance of their descriptors is below the threshold, 0.6 by default (dlib's own).
An image with no face found gets `label=False` and no embedding: a failure to enrol, which the
verification analysis counts as such, not a target error.
"""

from __future__ import annotations

import numpy as np

from searcher.validation import check_number
from targets.base import Predictions, check_images
from targets.detectors import _dlib, model_file

__all__ = ["DlibVerify"]


class DlibVerify:
    """Face verification with dlib's ResNet descriptor (`dlib-verify`)."""

    task = "verify"

    def __init__(self, threshold: float = 0.6, upsample: int = 1, jitter: int = 0) -> None:
        threshold = check_number("threshold", threshold, 0.0, open_low=True)
        dlib = _dlib()
        self.threshold, self.upsample, self.jitter = float(threshold), int(upsample), int(jitter)
        self._detect = dlib.get_frontal_face_detector()
        self._landmarks = dlib.shape_predictor(str(model_file("shape_predictor_5_face_landmarks.dat")))
        self._net = dlib.face_recognition_model_v1(str(model_file("dlib_face_recognition_resnet_model_v1.dat")))

    def predict(self, images: np.ndarray) -> Predictions:
        found, boxes, embeddings = [], [], []
        for im in check_images(images):
            im = np.ascontiguousarray(im)
            rects = self._detect(im, self.upsample)
            if not rects:
                found.append(False)
                boxes.append([])
                embeddings.append(None)
                continue
            rect = max(rects, key=lambda r: r.area())
            shape = self._landmarks(im, rect)
            embeddings.append(np.asarray(self._net.compute_face_descriptor(im, shape, self.jitter), np.float64))
            found.append(True)
            boxes.append([(rect.left(), rect.top(), rect.right(), rect.bottom())])
        return Predictions(label=found, boxes=boxes, embedding=embeddings)

    @staticmethod
    def distance(a: np.ndarray, b: np.ndarray) -> float:
        """Euclidean distance between two descriptors."""
        return float(np.linalg.norm(np.asarray(a, float) - np.asarray(b, float)))

    def same(self, a: np.ndarray, b: np.ndarray) -> bool:
        """Whether two descriptors are judged the same person (distance below the threshold)."""
        return self.distance(a, b) < self.threshold

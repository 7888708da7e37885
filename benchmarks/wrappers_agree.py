"""Do the target wrappers decide exactly what the libraries decide?

On N `faces` renders (default prior), compares each real target's face-found decisions (and the
smile and verify outputs) with dlib and OpenCV called directly with the same settings.

    python benchmarks/wrappers_agree.py [-n 200]
"""

from __future__ import annotations

import argparse

import cv2
import dlib
import numpy as np
from tqdm import tqdm

import generators
import targets
from targets.detectors import model_file


def direct(images: np.ndarray) -> dict[str, list]:
    """The same decisions, computed straight from dlib and OpenCV."""
    cnn = dlib.cnn_face_detection_model_v1(str(model_file("mmod_human_face_detector.dat")))
    hog = dlib.get_frontal_face_detector()
    face = cv2.CascadeClassifier(cv2.data.haarcascades + "haarcascade_frontalface_default.xml")
    smile = cv2.CascadeClassifier(cv2.data.haarcascades + "haarcascade_smile.xml")
    sp = dlib.shape_predictor(str(model_file("shape_predictor_5_face_landmarks.dat")))
    rec = dlib.face_recognition_model_v1(str(model_file("dlib_face_recognition_resnet_model_v1.dat")))
    out: dict[str, list] = {k: [] for k in ("dlib-cnn", "dlib-hog", "haar-face", "haar-smile", "dlib-verify")}
    for im in tqdm(images, desc="direct", leave=False):
        out["dlib-cnn"].append(len(cnn(im, 1)) > 0)
        rects = hog(im, 1)
        out["dlib-hog"].append(len(rects) > 0)
        grey = cv2.cvtColor(im, cv2.COLOR_RGB2GRAY)
        faces = face.detectMultiScale(grey, scaleFactor=1.1, minNeighbors=5)
        out["haar-face"].append(len(faces) > 0)
        if len(faces):
            x, y, w, h = max(faces, key=lambda b: b[2] * b[3])
            roi = cv2.resize(grey[y : y + h, x : x + w], (128, 128), interpolation=cv2.INTER_LINEAR)[64:]
            out["haar-smile"].append("smiling" if len(smile.detectMultiScale(roi, scaleFactor=1.3, minNeighbors=15)) else "not smiling")
        else:
            out["haar-smile"].append("no face")
        if len(rects):
            rect = max(rects, key=lambda r: r.area())
            out["dlib-verify"].append(np.asarray(rec.compute_face_descriptor(im, sp(im, rect), 0)))
        else:
            out["dlib-verify"].append(None)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    gen = generators.load("faces")
    images = gen.generate(gen.space.sample(args.n, seed=args.seed), seed=args.seed).images
    ref = direct(images)
    print(f"\n{args.n} faces, seed {args.seed}\n\n| target | agreement with the library | decisions |\n|---|---|---|")
    for name, expected in ref.items():
        pred = targets.load(name).predict(images)
        if name == "dlib-verify":
            same = [(a is None and b is None) or (a is not None and b is not None and np.allclose(a, b)) for a, b in zip(pred.embedding, expected)]
            found = sum(e is not None for e in expected)
            print(f"| {name} | {np.mean(same):.1%} | {found} faces enrolled, descriptors equal |")
        else:
            same = [a == b for a, b in zip(pred.label, expected)]
            print(f"| {name} | {np.mean(same):.1%} | {sum(bool(v) if name != 'haar-smile' else v == 'smiling' for v in expected)} positive |")


if __name__ == "__main__":
    main()

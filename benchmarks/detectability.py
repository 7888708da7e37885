"""Do real detectors, trained by nobody here, see the `faces` renders as faces?

Renders N faces from the default prior and runs dlib's CNN (MMOD) and HOG detectors (upsampling
once) and OpenCV 4.x's frontal-face Haar cascade on them; prints the detection rate per detector,
overall and per Fitzpatrick type (skin_tone rounded to 1..6), and which conditions go with misses.

    python benchmarks/detectability.py            # 500 faces, seed 0 (about 3 minutes on 2 cores)
    python benchmarks/detectability.py -n 100 --out rates.csv --montage docs/detections.png
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from PIL import Image, ImageDraw
from tqdm import tqdm

import generators
import targets
from searcher.figures.contact_sheet import contact_sheet

DETECTORS = ("dlib-cnn", "dlib-hog", "haar-face")
GOALS = {"dlib-cnn": 0.85, "dlib-hog": 0.60, "haar-face": 0.60}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="CSV of the truth plus one column per detector")
    ap.add_argument("--montage", help="PNG of the first 24 faces with each detector's boxes drawn")
    args = ap.parse_args()

    gen = generators.load("faces")
    batch = gen.generate(gen.space.sample(args.n, seed=args.seed), seed=args.seed)
    truth = batch.truth.copy()
    seconds, drawn = {}, {}
    for name in DETECTORS:
        det = targets.load(name)
        start = time.perf_counter()
        found, boxes = [], []
        for i in tqdm(range(0, args.n, 25), desc=name, leave=False):
            pred = det.predict(batch.images[i : i + 25])
            found += pred.label
            boxes += pred.boxes
        seconds[name] = (time.perf_counter() - start) / args.n
        truth[name] = found
        drawn[name] = boxes

    print(f"\n{args.n} faces from the default prior, seed {args.seed}\n")
    print("| detector | detected | goal | misses | ms / image |")
    print("|---|---|---|---|---|")
    for name in DETECTORS:
        rate = truth[name].mean()
        print(f"| {name} | {rate:.1%} | >= {GOALS[name]:.0%} | {(~truth[name]).sum()} | {1000 * seconds[name]:.0f} |")
    by_type = truth.groupby("fitzpatrick")[list(DETECTORS)].mean()
    counts = truth.groupby("fitzpatrick").size()
    print("\n| Fitzpatrick type | n | " + " | ".join(DETECTORS) + " |")
    print("|---|---|" + "---|" * len(DETECTORS))
    for k, row in by_type.iterrows():
        print(f"| {k} | {counts[k]} | " + " | ".join(f"{row[d]:.1%}" for d in DETECTORS) + " |")

    print("\nmiss rate by condition (dlib-cnn):")
    conditions = {
        "|yaw| > 25": truth["yaw"].abs() > 25,
        "|light_direction| > 45": truth["light_direction"].abs() > 45,
        "light_intensity < 0.6": truth["light_intensity"] < 0.6,
        "blur > 1": truth["blur"] > 1,
        "noise > 0.05": truth["noise"] > 0.05,
        "occlusion > 0.3": truth["occlusion"] > 0.3,
        "sunglasses": truth["eyewear"] == "sunglasses",
        "scale < 0.87 (small face)": truth["scale"] < 0.87,
        "none of the above": pd.Series(True, index=truth.index),
    }
    hard = np.zeros(len(truth), bool)
    for label, mask in conditions.items():
        if label == "none of the above":
            mask = ~hard
        hard |= np.asarray(mask)
        print(f"  {label:<26} n={int(mask.sum()):>4}  miss={1 - truth.loc[mask, 'dlib-cnn'].mean():.1%}")
    if args.out:
        truth.to_csv(args.out, index=False)
    if args.montage:
        montage(batch.images[:24], {k: v[:24] for k, v in drawn.items()}).save(args.montage)


COLOURS = {"dlib-cnn": (230, 40, 40), "dlib-hog": (40, 200, 40), "haar-face": (40, 90, 240)}


def montage(images: np.ndarray, boxes: dict[str, list]) -> Image.Image:
    """Faces with every detector's boxes (red CNN, green HOG, blue Haar); a miss shows no box."""
    framed, labels = [], []
    for i, im in enumerate(images):
        pic = Image.fromarray(im)
        draw = ImageDraw.Draw(pic)
        for name, per_image in boxes.items():
            for box in per_image[i]:
                draw.rectangle(box, outline=COLOURS[name])
        framed.append(np.asarray(pic))
        missed = [name for name in boxes if not boxes[name][i]]
        labels.append(["missed by " + ", ".join(missed)] if missed else ["found by all"])
    return contact_sheet(np.stack(framed), labels=labels, columns=8)


if __name__ == "__main__":
    main()

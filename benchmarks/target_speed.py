"""Predictions per second of every local target at batch 64 on `faces` renders (128 px).

    python benchmarks/target_speed.py [--batch 64] [--targets dlib-hog haar-face ...]
"""

from __future__ import annotations

import argparse
import time

import generators
import targets

NEEDS_OPTIONS = {"http", "torch", "onnx"}  # benchmarked by their own scripts or with a model file


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--targets", nargs="*", default=[t for t in targets.available() if t not in NEEDS_OPTIONS])
    args = ap.parse_args()
    gen = generators.load("faces")
    images = gen.generate(gen.space.sample(args.batch, seed=0), seed=0).images
    print(f"| target | predictions / s (batch {args.batch}) |\n|---|---|")
    for name in args.targets:
        target = targets.load(name)
        target.predict(images[:2])  # warm-up
        start = time.perf_counter()
        target.predict(images)
        print(f"| {name} | {args.batch / (time.perf_counter() - start):.1f} |")


if __name__ == "__main__":
    main()

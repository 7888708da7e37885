"""How fast do the generators render? Images per second of `faces` and `faces-latent` at 128 x 128
and of `faces-cvae` at its native 64 x 64 (forward passes of 64 and of 256 codes), batch 256, on
this machine's cores, beside the time dlib's CNN detector takes on the same images.

    python benchmarks/render_speed.py [--batch 256] [--repeats 5] [--cnn-images 32]
"""

from __future__ import annotations

import argparse
import os
import time

import torch

import generators
import targets


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--resolution", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--cnn-images", type=int, default=32, help="images to time dlib's CNN on (it is slow)")
    args = ap.parse_args()

    runs = [("faces", {"resolution": args.resolution}), ("faces-latent", {"resolution": args.resolution}),
            ("faces-cvae", {"resolution": 64, "batch_size": 64}), ("faces-cvae", {"resolution": 64, "batch_size": 256})]
    for name, options in runs:
        gen = generators.load(name, **options)
        params = gen.space.sample(args.batch, seed=0)
        gen.generate(params[:16])  # warm-up
        times = []
        for r in range(args.repeats):
            start = time.perf_counter()
            batch = gen.generate(params, seed=r)
            times.append(time.perf_counter() - start)
        best = min(times)
        if name == "faces":
            cnn_images, best_faces = batch.images, best
        shown = ", ".join(f"{k} {v}" for k, v in options.items())
        print(f"{name:<13} {args.batch / best:7.0f} images/s  (best of {args.repeats}, batch {args.batch}, {shown}, "
              f"torch threads {torch.get_num_threads()}, cpus {os.cpu_count()})")

    cnn = targets.load("dlib-cnn")
    images = cnn_images[: args.cnn_images]
    start = time.perf_counter()
    cnn.predict(images)
    per_cnn = (time.perf_counter() - start) / len(images)
    per_render = best_faces / args.batch
    print(f"dlib-cnn      {1 / per_cnn:7.1f} images/s  -> rendering `faces` takes {per_render / per_cnn:.1%} of the detector's time")


if __name__ == "__main__":
    main()

"""How long `searcher export` takes for 1,000 images (the goal: under 10 seconds).

    python benchmarks/export_speed.py            # a 1,000-evaluation random campaign of gender-cnn, then the exports

The campaign (random search, 128 px faces) is built once in a temporary directory; each format
exports all 1,000 judged images (`--select all`) and is timed on its own, best of three. The
random control renders and judges its images, so it is timed apart.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from searcher.campaign import Campaign
from searcher.export import export


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        Campaign(generator="faces", target="gender-cnn", strategy="random", budget=args.n + 200, batch=100, seed=0,
                 out=str(root / "campaign")).run(progress=False)
        print(f"campaign of {args.n + 200} evaluations (ambiguous truths are not exported): {time.perf_counter() - start:.1f} s")
        for fmt in ("imagefolder", "parquet"):
            best = float("inf")
            for rep in range(3):
                start = time.perf_counter()
                result = export(root / "campaign", root / f"{fmt}{rep}", fmt=fmt, selection="all", limit=args.n)
                best = min(best, time.perf_counter() - start)
            print(f"export {len(result.metadata)} images as {fmt}: {best:.2f} s (best of 3)")
        start = time.perf_counter()
        result = export(root / "campaign", root / "control", selection="all", limit=args.n, control="random")
        print(f"export {len(result.metadata)} images with a random control of {len(result.control)}: {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()

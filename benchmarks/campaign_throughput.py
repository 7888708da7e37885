"""Does the campaign machinery cost anything? Evaluations per second of a random campaign on the
local executor against the bare generator + target rate, and on Ray with 2 workers.

    python benchmarks/campaign_throughput.py [--target dlib-cnn] [--budget 64]
"""

from __future__ import annotations

import argparse
import tempfile
import time

import generators
import targets
from searcher.campaign import Campaign


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default="dlib-cnn")
    ap.add_argument("--budget", type=int, default=64)
    ap.add_argument("--batch", type=int, default=8)
    args = ap.parse_args()

    gen, tgt = generators.load("faces"), targets.load(args.target)
    params = gen.space.sample(args.budget, seed=0)
    start = time.perf_counter()
    for i in range(0, args.budget, args.batch):
        tgt.predict(gen.generate(params[i : i + args.batch]).images)
    bare = args.budget / (time.perf_counter() - start)

    rates = {}
    for label, workers in (("local", 1), ("ray, 2 workers", 2)):
        with tempfile.TemporaryDirectory() as tmp:
            campaign = Campaign(generator="faces", target=args.target, strategy="random", budget=args.budget,
                                batch=args.batch, workers=workers, out=f"{tmp}/run")
            start = time.perf_counter()
            campaign.run(progress=False)
            rates[label] = args.budget / (time.perf_counter() - start)
    print(f"| {args.target}, {args.budget} evaluations, batch {args.batch} | evaluations/s | vs bare | vs local |")
    print("|---|---|---|---|")
    print(f"| bare generator + target | {bare:.2f} | 1.00 | |")
    for label, rate in rates.items():
        print(f"| campaign, {label} | {rate:.2f} | {rate / bare:.2f} | {rate / rates['local']:.2f} |")


if __name__ == "__main__":
    main()

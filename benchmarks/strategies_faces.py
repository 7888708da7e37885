"""Strategies on real detectors: failures found and failure modes hit on `faces`, 5 seeds x 400.

    python benchmarks/strategies_faces.py                                   # dlib-cnn and haar-face, all five strategies
    python benchmarks/strategies_faces.py --targets haar-face --strategies random,bo --seeds 2

Each target is one `searcher compare` (campaigns in OUT/TARGET/runs, resumable: an interrupted run
continues where it stopped). dlib's CNN takes about 2 minutes per campaign on 2 cores, so the full
default run (50 campaigns) takes about 1.5 hours; the Haar cascade about a third of that. The issue
asks BO for >= 1.5x random's failures on both targets, with at least as many failure modes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from searcher.studies.compare import compare


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--targets", default="dlib-cnn,haar-face")
    parser.add_argument("--strategies", default="random,sobol,bo,tpe,cmaes")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--budget", type=int, default=400)
    parser.add_argument("--out", default="runs/strategies_faces")
    args = parser.parse_args()
    for target in args.targets.split(","):
        table = compare(Path(args.out) / target, generator="faces", target=target, strategies=args.strategies.split(","),
                        seeds=range(args.seeds), budget=args.budget)
        summary = table.groupby("strategy", sort=False)[["failures", "modes", "mean_pairwise"]].agg(["mean", "min", "max"])
        random = summary.loc["random", ("failures", "mean")] if "random" in summary.index else float("nan")
        print(f"\n{target}: {args.seeds} seeds x {args.budget} evaluations (failures relative to random: "
              + ", ".join(f"{s} {summary.loc[s, ('failures', 'mean')] / random:.1f}x" for s in summary.index) + ")")
        print(summary.round(2).to_string())


if __name__ == "__main__":
    main()

"""Strategies on the planted benchmark: failures and regions found, and BO's alpha sweep.

    python benchmarks/strategies_planted.py                       # 5 seeds x 400 evaluations, batch 4
    python benchmarks/strategies_planted.py --alphas 0,0.2,0.4,0.6,0.8,1 --strategies bo
    python benchmarks/strategies_planted.py --seeds 3 --budget 200 --out planted.csv
    python benchmarks/strategies_planted.py --strategies bo --seeds 2 --budget 1200 --option max_points=300   # the GP's cap

The planted landscape (`searcher.planted.PlantedRegions` with its defaults: d = 6, K = 5, 3% of the
volume, layout seed 0; `--layouts` varies the layout with the strategy seed instead) is scored
directly with ask/tell, without images, so the numbers measure the strategies and nothing else. Printed: per strategy (and alpha) the mean and
range over seeds of failures found and planted regions found, and the median seconds per proposal.
The issue asks BO at the default alpha for >= 5x random's failures and at least random's regions.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
import pandas as pd

from searcher.bench.planted import ask_tell
from searcher.cli.args import assignments
from searcher.space import Continuous, Space
from searcher.strategies import make_strategy
from searcher.testing.planted import PlantedRegions


def run(strategy: str, seed: int, budget: int, batch: int, alpha: float | None, planted: PlantedRegions, **options: Any) -> dict:
    """One campaign of `budget` evaluations in batches of `batch` (BO: with `options`); its score and timing."""
    space = Space([Continuous(f"x{i}", 0.0, 1.0) for i in range(planted.dim)])
    options = {**(options if strategy == "bo" else {}), **({} if alpha is None else {"alpha": alpha})}
    X, times = ask_tell(make_strategy(strategy, space, seed=seed, **options), planted.loss, budget, batch)
    _, first = np.unique(X, axis=0, return_index=True)
    hits = planted.region_of(X[np.sort(first)])  # distinct points: a repeat finds nothing new
    return {"strategy": strategy, "alpha": alpha, "seed": seed, "failures": int((hits >= 0).sum()), "repeats": len(X) - len(first),
            "regions": len(set(hits[hits >= 0].tolist())), "first_failure": int(np.argmax(hits >= 0)) + 1 if (hits >= 0).any() else None,
            "median_ask_s": float(np.median(times))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--strategies", default="random,sobol,bo,tpe,cmaes")
    parser.add_argument("--alphas", default="", help="comma-separated alphas for bo (default: its own)")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--budget", type=int, default=400)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--layouts", action="store_true", help="layout seed = strategy seed (default: layout 0 for all)")
    parser.add_argument("--out", default="", help="CSV of every run")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="a BO option (repeatable), e.g. max_points=300, ablation.probe=true")
    args = parser.parse_args()
    alphas = [float(a) for a in args.alphas.split(",") if a] or [None]
    rows = []
    for strategy in args.strategies.split(","):
        for alpha in alphas if strategy == "bo" else [None]:
            for seed in range(args.seeds):
                rows.append(run(strategy, seed, args.budget, args.batch, alpha, PlantedRegions(seed=seed if args.layouts else 0),
                                **assignments(args.option, "--option", tables=True)))
                r = rows[-1]
                print(f"  {strategy:7s} alpha={alpha} seed={seed}: {r['failures']:4d} failures, {r['regions']} regions, "
                      f"{r['median_ask_s'] * 1000:.0f} ms/ask", flush=True)
    table = pd.DataFrame(rows)
    table["alpha"] = table["alpha"].astype(object).where(table["alpha"].notna(), "default")
    summary = table.groupby(["strategy", "alpha"], sort=False).agg(
        failures=("failures", "mean"), failures_min=("failures", "min"), failures_max=("failures", "max"),
        regions=("regions", "mean"), regions_min=("regions", "min"), regions_max=("regions", "max"), repeats=("repeats", "mean"),
        median_ask_s=("median_ask_s", "median"))
    print(f"\nplanted d=6 K=5 3% volume, {args.budget} evaluations, batch {args.batch}, {args.seeds} seeds")
    print(summary.round(3).to_string())
    if args.out:
        table.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()

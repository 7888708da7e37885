"""What one `bo-modes` proposal costs per point as the history grows past the model's cap.

    python benchmarks/proposal_cost.py                                   # 500, 2,000, 10,000 and 30,000 past points
    python benchmarks/proposal_cost.py --history 2000,100000 --batches 4,256
    python benchmarks/proposal_cost.py --strategy bo --history 2000,10000
    python benchmarks/proposal_cost.py --profile 30000                   # cProfile of one ask of 4 at that history

The history is `H` seeded uniform points of a planted 6-D case (four boxes, 12% of the cube) with
their 0/1 losses, told at once, so no image is rendered and the numbers are the strategy's alone.
A first ask fits the GP (untimed); the asks timed then carry its hyperparameters, as a campaign's
steps do past `max_points` (the training set no longer grows, so it is never refitted). Each batch
size is asked `--repeats` times (the median is reported) as the campaign loop does: `ask(n, step)`
with nothing told in between. The table gives seconds per point.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

import numpy as np

from searcher.strategies import Strategy, make_strategy
from searcher.testing.planted import PlantedRegions


def told(name: str, history: int, seed: int = 0) -> tuple[Strategy, int]:
    """A strategy told `history` uniform points of the planted case, and how many of them failed."""
    regions = PlantedRegions(dim=6, k=4, volume=0.12, seed=seed)
    strategy = make_strategy(name, regions.space, seed=seed, budget=history + 4096)
    X = regions.space.cube.snap(np.random.default_rng([seed, history]).random((history, regions.dim)))
    loss = regions.loss(X)
    strategy.tell(X, loss)
    return strategy, int(loss.sum())


def per_point(strategy: Strategy, n: int, step: int) -> float:
    """Seconds per point of one `ask(n, step)`."""
    t = time.perf_counter()
    strategy.ask(n, step)
    return (time.perf_counter() - t) / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--history", default="500,2000,10000,30000", help="history sizes, comma-separated")
    parser.add_argument("--batches", default="4,64,256", help="batch sizes, comma-separated")
    parser.add_argument("--repeats", type=int, default=3, help="asks timed per batch size (median reported)")
    parser.add_argument("--strategy", default="bo-modes", help="the strategy timed (default: bo-modes)")
    parser.add_argument("--profile", type=int, metavar="H", help="profile one ask of 4 at history H instead")
    args = parser.parse_args()
    if args.profile:
        strategy, _ = told(args.strategy, args.profile)
        strategy.ask(4, 0)
        profile = cProfile.Profile()
        profile.runcall(strategy.ask, 4, 1)
        pstats.Stats(profile).sort_stats("cumulative").print_stats(30)
        return
    batches = [int(b) for b in args.batches.split(",")]
    print(f"{args.strategy}, planted box-d6-k4 (12% fails), carried hyperparameters; seconds per point")
    print(f"{'history':>8} {'failures':>8} {'fit s':>7} " + " ".join(f"{f'batch {b}':>10}" for b in batches))
    for history in [int(h) for h in args.history.split(",")]:
        strategy, failures = told(args.strategy, history)
        fit = per_point(strategy, 4, 0) * 4  # the cold fit, and the first proposal
        step, cells = 1, []
        for b in batches:
            times = []
            for _ in range(args.repeats):
                times.append(per_point(strategy, b, step))
                step += 1
            cells.append(f"{np.median(times):10.4f}")
        print(f"{history:8d} {failures:8d} {fit:7.1f} " + " ".join(cells), flush=True)


if __name__ == "__main__":
    main()

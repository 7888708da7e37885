"""What one BO proposal costs as the history grows, in the `faces` space.

    python benchmarks/bo_overhead.py                      # 400, 1,000 and 2,000 past points
    python benchmarks/bo_overhead.py --points 400 --repeats 5
    python benchmarks/bo_overhead.py --strategy bo-modes --points 400   # the failure-modes search
    python benchmarks/bo_overhead.py --strategy bo-modes --run 400      # every ask of a 400-point run, timed
    python benchmarks/bo_overhead.py --strategy bo-modes --strategy-option likelihood=gaussian   # an option of the strategy

The history is a Sobol design of the faces generator's unit cube with a planted 0/1 loss (five boxes
in four of its coordinates, 7% of the volume: about the dlib CNN's miss rate on everyday faces), so no image is rendered and the
numbers are the strategy's alone. For each history size, a batch of 4 is asked three ways:

- cold:     no hyperparameters yet: a full MAP fit (up to 200 L-BFGS-B iterations), then the proposal;
- warm:     hyperparameters carried over from the previous step and refitted for 30 iterations
            (what a campaign does when the history has grown by 10% since the last fit);
- carried:  hyperparameters reused as they are (every other step): the GP is only conditioned.

Past `max_points` (default 1,000) the GP of either strategy is fitted on a subset: every recent
failure, up to half of it, and the most recent passes. `--uncapped` lifts the cap to show what exact GPs would cost.
`bo-modes`'s proposal adds the failure graph's segment test and one posterior per mode's candidates.

`--run N` times what a campaign's steps cost instead: the strategy searches that loss by ask/tell
from nothing for N points, batches of 4, and every ask is timed. A Sobol history holds few failures;
a search finds many, and `bo-modes`'s proposal grows with its failures and modes.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import generators
from searcher.bench.planted import ask_tell
from searcher.cli.args import assignments
from searcher.objective import FAILURE
from searcher.space import Cube
from searcher.strategies import Strategy, make_strategy
from searcher.strategies.baselines import sobol_points
from searcher.testing.planted import PlantedRegions


def timed_ask(bo: Strategy, step: int) -> float:
    t = time.perf_counter()
    bo.ask(4, step)
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--points", default="400,1000,2000")
    parser.add_argument("--repeats", type=int, default=3, help="asks timed per mode (median reported)")
    parser.add_argument("--uncapped", action="store_true", help="max_points = 100,000 (exact GP on everything)")
    parser.add_argument("--strategy", choices=("bo", "bo-modes"), default="bo", help="the strategy timed (default: bo)")
    parser.add_argument("--run", type=int, metavar="N", help="time every ask of an N-point ask/tell run instead")
    parser.add_argument("--strategy-option", action="append", default=[], metavar="KEY=VALUE", help="an option of the strategy (repeatable)")
    args = parser.parse_args()
    options = assignments(args.strategy_option, "--strategy-option", tables=True)  # ablation.KEY=VALUE: a bo-modes switch
    space = generators.load("faces").space
    cube = Cube(space)
    taken = {c for start, width in cube.blocks for c in range(start, start + width)} | {c for c, _ in cube.integers}
    columns = [c for c in range(space.dim) if c not in taken][:4]
    planted = PlantedRegions(dim=4, k=5, volume=0.07, seed=0)  # on four continuous coordinates

    def loss(X: np.ndarray) -> np.ndarray:
        return planted.loss(X[:, columns])

    print(f"{args.strategy}, faces space: {len(space.params)} parameters, unit cube of dimension {space.dim}")
    if args.run:
        strategy = make_strategy(args.strategy, space, seed=0, budget=args.run, **options)
        _, times = ask_tell(strategy, loss, args.run)
        failures = int((strategy.history.answered()[1] >= FAILURE).sum())  # the losses the run was told
        last = np.array(times[-max(1, len(times) // 4):])
        print(f"{args.run} points by ask/tell, {failures} failures; seconds per ask of 4: median {np.median(times):.2f}, "
              f"max {max(times):.2f}; over the last quarter of the run: median {np.median(last):.2f}, max {last.max():.2f}")
        return
    print(f"{'points':>7} {'fitted on':>9} {'failures':>8} {'cold s':>8} {'warm s':>8} {'carried s':>9}")
    for n in [int(p) for p in args.points.split(",")]:
        X = sobol_points(space.dim, 0, 0, n)
        cap = {"max_points": 100_000} if args.uncapped else {}
        bo = make_strategy(args.strategy, space, seed=0, **cap, **options)
        X = bo.cube.snap(X)
        bo.tell(X, loss(X))
        cold = []
        for r in range(args.repeats):
            bo.restore({"gp": None, "fitted_on": 0, "sobol": n})
            cold.append(timed_ask(bo, r))
        fitted = bo.state()["fitted_on"]
        warm, carried = [], []
        for r in range(args.repeats):
            bo.restore({**bo.state(), "fitted_on": 0})  # forces a warm refit
            warm.append(timed_ask(bo, r))
            carried.append(timed_ask(bo, r))  # nothing new told: hyperparameters carried over
        print(f"{n:7d} {fitted:9d} {int(loss(X).sum()):8d} {np.median(cold):8.2f} {np.median(warm):8.2f} {np.median(carried):9.2f}", flush=True)


if __name__ == "__main__":
    main()

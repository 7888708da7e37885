"""One run of a strategy on a planted case, by ask/tell without images (as
`benchmarks/strategies_planted.py`), so its numbers measure the strategy and nothing else.

The strategy is built over the landscape's space (`make_strategy(name, regions.space, seed=seed,
budget=budget, **options)`), asked for batches of `DEFAULT_BATCH` points (`searcher.defaults`) and told `regions.loss(X, score=case.score)`:
the 0/1 loss, or the detector's "score" loss where the case's target gives a confidence. Every
random choice is seeded by the case's layout and the strategy's seed, so a run gives the same
scores in any process.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from searcher.analysis.modes import repeated, run_scores
from searcher.bench.cases import Case
from searcher.defaults import DEFAULT_BATCH, OVERLAP_AFTER
from searcher.strategies import Strategy, make_strategy

__all__ = ["ask_tell", "planted_labels", "run_planted"]


def ask_tell(strategy: Strategy, loss: Callable[[np.ndarray], np.ndarray], budget: int, batch: int = DEFAULT_BATCH,
             overlap: bool = False) -> tuple[np.ndarray, list[float]]:
    """`budget` evaluations of `loss` in batches of `batch`: every point asked, in order, and the
    seconds each `ask` took. With `overlap`, from batch `OVERLAP_AFTER` on, batch `k + 1` is asked
    before batch `k` is told (its points pending), as a campaign with `overlap` asks it while
    batch `k` is evaluated."""
    sizes = [min(batch, budget - step * batch) for step in range((budget + batch - 1) // batch)]
    asked, times = [], []

    def ask(step: int, pending: np.ndarray | None = None) -> np.ndarray:
        t = time.perf_counter()
        X = strategy.ask(sizes[step], step) if pending is None else strategy.ask(sizes[step], step, pending=pending)
        times.append(time.perf_counter() - t)
        return X

    X = ask(0)
    for step in range(len(sizes)):
        ahead = ask(step + 1, X) if overlap and step >= OVERLAP_AFTER and step + 1 < len(sizes) else None
        strategy.tell(X, loss(X))
        asked.append(X)
        if step + 1 < len(sizes):
            X = ahead if ahead is not None else ask(step + 1)
    return np.concatenate(asked), times


def planted_labels(case: Case, strategy: str, seed: int, budget: int, options: Mapping[str, Any] | None = None
                   ) -> tuple[np.ndarray, np.ndarray, list[float]]:
    """`budget` evaluations of `strategy` (seeded `seed`, built with `options`) on the planted `case`,
    in the order asked: the region each point found anew (-1 for a pass or a repeat, which finds
    nothing new), whether it repeated an earlier point, and the seconds each `ask` took."""
    regions = case.regions()
    s = make_strategy(strategy, regions.space, seed=seed, budget=budget, **dict(options or {}))
    X, times = ask_tell(s, lambda X: regions.loss(X, score=case.score), budget)
    again = repeated(X)
    return np.where(again, -1, regions.region_of(X)), again, times


def run_planted(case: Case, strategy: str, seed: int, budget: int, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """`budget` evaluations of `strategy` (seeded `seed`, built with `options`) on the planted `case`:
    its row of runs.csv (scores, the median seconds per ask and the run's seconds)."""
    start = time.perf_counter()
    labels, again, times = planted_labels(case, strategy, seed, budget, options)
    return {"case": case.name, "kind": case.kind, "strategy": strategy, "seed": seed, "budget": budget,
            **run_scores(labels, int(again.sum()), int(case.options["k"])), "median_ask_s": float(np.median(times)),
            "seconds": time.perf_counter() - start}

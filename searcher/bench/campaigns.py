"""The runs of a campaign case: every strategy x seed as a resumable campaign through
`searcher.studies.compare.compare` in `OUT/CASE/`, then scored on failure modes.

Modes are those of `compare` (`searcher.analysis.modes.mode_labels`: `N_MODES`, 16, Ward clusters of
the uniform strategies' failures of the campaigns run together, every failure joined to the nearest; a run of seed k on the clusters
of the other seeds' uniform failures, cross-fitted), so a case's modes depend on
the strategies and seeds of the call that scores it: rows already in runs.csv are kept as they
were scored. A run's seconds are the span from its first to its last stored trial (a campaign
resumed after a pause counts the pause), and there is no time per ask (NaN).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from searcher.analysis.modes import N_MODES, mode_labels, one_hot_blocks, repeated, run_scores
from searcher.bench.cases import Case
from searcher.campaign import load_campaign
from searcher.defaults import DEFAULT_BATCH
from searcher.studies.compare import compare

__all__ = ["run_campaigns"]


def run_campaigns(case: Case, strategies: Sequence[str], seeds: Sequence[int], budget: int, out: Path, parallel: int = 1,
                  progress: bool = True, strategy_options: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """Runs (or resumes) the campaigns of `case` in `out/case.name` and returns one row per
    strategy x seed, scored as the module docstring says. `strategy_options` go to the strategies
    that take them, as `compare` passes them."""
    o = case.options
    directory = Path(out) / case.name
    compare(directory, generator=o["generator"], target=o["target"], strategies=list(strategies), seeds=list(seeds), budget=budget,
            batch=DEFAULT_BATCH, parallel=parallel, progress=progress, modes=N_MODES, loss=o["loss"], generator_options=dict(o["generator_options"]),
            target_options=dict(o["target_options"]), truth_column=o["truth_column"], cut=o["cut"],
            strategy_options=dict(strategy_options or {}))
    jobs = [(s, seed) for s in strategies for seed in seeds]
    runs = [load_campaign(directory / "runs" / f"{s}-s{seed}").trials for s, seed in jobs]
    modes = mode_labels(runs, [s for s, _ in jobs], N_MODES, one_hot_blocks(o["generator"], o), [seed for _, seed in jobs])
    rows = []
    for (strategy, seed), trials, labels in zip(jobs, runs, modes):
        created = trials["created"].to_numpy(float) if len(trials) else np.zeros(1)
        rows.append({"case": case.name, "kind": case.kind, "strategy": strategy, "seed": seed, "budget": budget,
                     **run_scores(labels, int(repeated(trials["x"].tolist()).sum()), N_MODES),
                     "median_ask_s": float("nan"), "seconds": float(created.max() - created.min()) * 86400.0})  # Julian days
    return rows

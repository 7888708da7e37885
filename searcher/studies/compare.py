"""Random search against Bayesian search (and any other strategy): strategies x seeds x alpha.

Each combination is an independent campaign in `DIR/runs/`; the comparison reads them back and
writes `DIR/compare.csv` (one row per campaign), `DIR/curves.csv` (cumulative failures against
evaluations) and two figures: failures found against evaluations with a band of one standard
deviation across seeds (Fig. 4a of docs/papers.md#mcduff) and the percentage of failures
against alpha (Fig. 4b). Diversity is measured by the planted regions found where the truth knows
them (a `region` column), and otherwise by the failure modes found and the mean pairwise distance
of failures (in the unit cube, divided by the square root of its dimension). Failures are
distinct failing points: the targets are deterministic, so an evaluation that repeats an earlier
point is counted under `repeats`, never as another failure; an evaluation the target was not
judged on (a truth too near a classify target's cut) under `unjudged`: spent, and no answer, where
a strategy not told that band can spend most of its budget (a classifier's loss runs highest at
its cut). The scores and the failure modes are `searcher.analysis.modes`'s.
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from searcher.analysis.modes import N_MODES, diversity, failure_modes, new_failures, one_hot_blocks
from searcher.campaign import Campaign, load_campaign
from searcher.defaults import DEFAULT_BATCH, DEFAULT_BUDGET
from searcher.errors import ParameterError
from searcher.figures.compare import plot_comparison
from searcher.strategies import DEFAULT_STRATEGY, STRATEGIES, strategy_options
from searcher.validation import check_names, checked

__all__ = ["compare"]


def _run_one(kwargs: dict[str, Any], progress: bool = False) -> str:
    """Runs (or resumes) one campaign of the comparison; its bar is labelled by its run name."""
    from searcher.campaign.loop import run_or_resume

    campaign = Campaign(**kwargs)
    run_or_resume(campaign, progress=progress, desc=Path(campaign.out).name)
    return campaign.out


def _watch(outs: Sequence[str], budget: int, futures: list[Any], ray: Any) -> None:
    """One bar per campaign running on Ray, showing its evaluations and failures so far, read from
    the stores the campaigns write (SQLite in WAL mode reads while another process writes)."""
    import sqlite3

    from tqdm import tqdm

    from searcher.campaign.store import read_only_uri

    bars = {out: tqdm(total=budget, desc=Path(out).name, unit="eval", position=i) for i, out in enumerate(outs)}
    pending = list(futures)
    try:
        while pending:
            _, pending = ray.wait(pending, timeout=1.0)
            for out, bar in bars.items():
                path = Path(out) / "campaign.sqlite"
                if not path.exists():
                    continue
                try:
                    with sqlite3.connect(read_only_uri(path), uri=True, timeout=5) as db:
                        done, failures = db.execute("SELECT COUNT(*), COALESCE(SUM(failure), 0) FROM trials").fetchone()
                except sqlite3.OperationalError:  # a store still being created (no table yet) or busy: read it next tick
                    continue
                bar.update(done - bar.n)
                bar.set_postfix(failures=failures)
    finally:
        for bar in bars.values():
            bar.close()


def _keywords() -> list[str]:
    """The keywords `compare` takes: its own arguments, and the settings of a `Campaign` it does not
    set per campaign itself."""
    own = [name for name in inspect.signature(compare).parameters if name != "campaign_options"]
    per_campaign = {"strategy", "alpha", "seed"}
    return own + [f.name for f in dataclasses.fields(Campaign) if f.name not in {*own, *per_campaign}]


@checked("compare")
def compare(
    out: str | Path,
    generator: str = "faces",
    target: str = "dlib-cnn",
    strategies: Sequence[str] = ("random", DEFAULT_STRATEGY),
    seeds: Sequence[int] = (0, 1, 2, 3, 4),
    alphas: Sequence[float | None] = (None,),
    budget: int = DEFAULT_BUDGET,
    batch: int = DEFAULT_BATCH,
    parallel: int = 1,
    progress: bool = True,
    modes: int = N_MODES,
    **campaign_options: Any,
) -> pd.DataFrame:
    """Runs (or resumes) every strategy x alpha x seed campaign and summarises them.

    `alphas` matter for BO only (None: the strategy's default); other strategies run once per seed.
    `parallel` > 1 runs campaigns as Ray tasks. `modes` is the number of failure modes the
    uniform strategies' failures are cut into (see `searcher.analysis.modes`). Returns the per-campaign table, also written to
    `out/compare.csv` beside `out/curves.csv` and the figures.
    """
    check_names(campaign_options, _keywords(), what="compare argument")  # named here, not as a TypeError from Campaign
    for strategy in strategies:
        STRATEGIES.factory(strategy)  # an unknown name fails before any campaign runs
    if not list(seeds) or not list(strategies):
        raise ParameterError(f"compare needs at least one strategy and one seed. Got strategies={list(strategies)}, seeds={list(seeds)}.")
    options = strategy_options(strategies, campaign_options.pop("strategy_options", None) or {})
    out = Path(out)
    jobs = []
    for strategy, alpha, seed in itertools.product(strategies, alphas, seeds):
        if strategy != "bo" and alpha != alphas[0]:
            continue  # alpha is BO's; other strategies run once per seed
        a = alpha if strategy == "bo" else None
        name = f"{strategy}{'' if a is None else f'-a{a:g}'}-s{seed}"
        jobs.append(dict(generator=generator, target=target, strategy=strategy, alpha=a, seed=seed, budget=budget,
                         batch=batch, out=str(out / "runs" / name), strategy_options=options[strategy], **campaign_options))
    if parallel > 1:
        import ray

        if not ray.is_initialized():
            ray.init(num_cpus=parallel, include_dashboard=False, log_to_driver=False)
        remote = ray.remote(num_cpus=1)(_run_one)
        futures = [remote.remote(job) for job in jobs]
        if progress:
            _watch([job["out"] for job in jobs], budget, futures, ray)
        ray.get(futures)
    else:
        for job in jobs:
            _run_one(job, progress)

    rows, curves = [], []
    runs = [load_campaign(job["out"]).trials for job in jobs]
    found = failure_modes(runs, [job["strategy"] for job in jobs], modes, one_hot_blocks(generator, campaign_options))
    for job, trials, n_modes in zip(jobs, runs, found):
        fail = new_failures(trials)
        rows.append({"strategy": job["strategy"], "alpha": job["alpha"], "seed": job["seed"], "evaluations": len(trials),
                     "errors": int(trials["error"].notna().sum()), "unjudged": int(trials["excluded"].notna().sum()), "failure_rate": float(fail.mean()),
                     **diversity(trials), "modes": n_modes})
        curves.append(pd.DataFrame({"strategy": job["strategy"], "alpha": job["alpha"], "seed": job["seed"],
                                    "evaluation": np.arange(1, len(trials) + 1), "failures": np.cumsum(fail)}))
    table, curve = pd.DataFrame(rows), pd.concat(curves, ignore_index=True)
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "compare.csv", index=False)
    curve.to_csv(out / "curves.csv", index=False)
    plot_comparison(table, curve, out)
    return table

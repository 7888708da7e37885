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
its cut).

Failure modes: real targets do not say how many ways they fail, so the comparison defines modes
from the failures themselves. The failures of the uniform strategies (random, Sobol: draws from
the target's failure distribution) are cut into `modes` clusters by Ward linkage in the unit cube;
every campaign's failures are assigned to the nearest cluster centre, and a campaign's `modes` is
how many clusters it hit. Random search's own failures make the modes, so they fit its campaigns
a little better than another's: `modes` here counts a hit of any of them, and the benchmark suite,
which sets a breadth bar by random search, scores a campaign of seed k on the clusters of the
other seeds' failures instead (`mode_labels` with `seeds`). (A per-campaign clustering at a fixed
distance cannot do this in high dimension: 400 uniform points in a 26-D cube lie about 0.47 apart,
so every failure of a random search is its own cluster and every concentrated search looks narrow
or broad by construction.)
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import pdist

from searcher.campaign import Campaign, load_campaign, search_space
from searcher.causal import UNIFORM_STRATEGIES
from searcher.errors import ParameterError
from searcher.figures.compare import plot_comparison
from searcher.objective import FAILURE
from searcher.space import one_hot_weighted
from searcher.strategies import DEFAULT_STRATEGY, STRATEGIES

__all__ = ["compare", "diversity", "failure_modes", "mode_labels", "new_failures", "one_hot_blocks", "repeated", "strategy_options"]


def repeated(X: Sequence[np.ndarray] | np.ndarray) -> np.ndarray:
    """Per point (in evaluation order): True if an earlier point is the same to 9 decimals."""
    seen: set[tuple[float, ...]] = set()
    out = np.zeros(len(X), bool)
    for i, x in enumerate(X):
        key = tuple(np.round(np.asarray(x, float), 9).tolist())
        out[i] = key in seen
        seen.add(key)
    return out


def _repeated(trials: pd.DataFrame) -> np.ndarray:
    """Per trial: True if an earlier trial evaluated the same unit-cube point."""
    return repeated(trials["x"].tolist())


def new_failures(trials: pd.DataFrame) -> np.ndarray:
    """Per trial: True if it failed at a point no earlier trial failed at. The targets are
    deterministic, so evaluating a point twice finds one failure, not two."""
    return (trials["loss"] >= FAILURE).to_numpy() & ~_repeated(trials)


def _failures(trials: pd.DataFrame) -> np.ndarray:
    fails = trials[new_failures(trials)]
    return np.array(fails["x"].tolist(), float) if len(fails) else np.zeros((0, 0))


def diversity(trials: pd.DataFrame) -> dict[str, float]:
    """Breadth of one campaign's failures: how many distinct points failed, how many evaluations
    repeated an earlier point, the planted regions hit (where the truth has a `region`), and the
    failures' mean pairwise distance in the unit cube (divided by sqrt(dim))."""
    fails = trials[new_failures(trials)]
    repeats = int(_repeated(trials).sum())
    out: dict[str, float] = {"failures": float(len(fails)), "repeats": float(repeats)}
    if len(fails) and "region" in fails["truth"].iloc[0]:
        out["regions_found"] = float(len({t["region"] for t in fails["truth"] if t["region"] >= 0}))
    X = np.array(fails["x"].tolist(), float)
    out["mean_pairwise"] = float((pdist(X) / np.sqrt(X.shape[1])).mean()) if len(X) >= 2 else 0.0
    return out


def failure_modes(runs: Sequence[pd.DataFrame], strategies: Sequence[str], modes: int = 16,
                  blocks: Sequence[tuple[int, int]] = ()) -> list[int]:
    """How many failure modes each campaign hit (see the module docstring and `mode_labels`)."""
    return [len(np.unique(m[m >= 0])) for m in mode_labels(runs, strategies, modes, blocks)]


def mode_labels(runs: Sequence[pd.DataFrame], strategies: Sequence[str], modes: int = 16,
                blocks: Sequence[tuple[int, int]] = (), seeds: Sequence[int] | None = None) -> list[np.ndarray]:
    """Per campaign, per trial: the failure mode (0 .. modes-1) of each new failure, -1 for every
    other trial. Modes are Ward clusters of the uniform strategies' failures (of all campaigns' if
    none ran); each failure joins the nearest cluster centre.

    With `seeds` (one per campaign) and uniform campaigns of two seeds or more, the modes are
    cross-fitted: a campaign of seed k is scored on the clusters of the uniform campaigns of every
    other seed. Clusters cut from a run's own failures fit them: scored on modes its failures made,
    a random search looks more even than one it did not shape (measured on the suite's face cases,
    its effective modes 0.5-1.7 higher on five of seven; `lab/mode_shares.py`), and it sets
    the breadth bar. Every strategy's seed k is scored on the same modes, so the comparison stays
    like with like.

    `blocks` are the `(first column, width)` of the cube's one-hot blocks, scaled by 1/sqrt(12)
    (`searcher.space.one_hot_weighted`: every parameter counts as one coordinate). Weighted more,
    the clusters are the combinations of categories, and a search that repeats one continuous cause
    of failure (overexposure, say) across every hair colour looks as broad as random search (measured on dlib-cnn with 1/sqrt(2): a BO design that
    counted failures per category only hit 13.6 modes against random's 15.0, and 4.0 with
    1/sqrt(12)).
    """
    X = [one_hot_weighted(_failures(t), blocks) for t in runs]
    out = [np.full(len(t), -1) for t in runs]
    uniform = [s in UNIFORM_STRATEGIES and len(x) > 0 for x, s in zip(X, strategies)]
    folds = {k for k, u in zip(seeds, uniform) if u} if seeds is not None else set()
    if len(folds) < 2:  # one fold: every campaign on the clusters of every uniform failure
        groups = [(list(range(len(runs))), [x for x, u in zip(X, uniform) if u] or [x for x in X if len(x)])]
    else:
        groups = [([i for i, k in enumerate(seeds) if k == fold], [x for x, u, k in zip(X, uniform, seeds) if u and k != fold])
                  for fold in set(seeds)]
    for members, reference in groups:
        if not reference:
            continue
        centres = _centres(np.concatenate(reference), modes)
        for i in members:
            if len(X[i]):
                out[i][new_failures(runs[i])] = ((X[i][:, None, :] - centres[None]) ** 2).sum(-1).argmin(axis=1)
    return out


def _centres(pool: np.ndarray, modes: int) -> np.ndarray:
    """The centres of `modes` Ward clusters of `pool` (fewer if it holds fewer points)."""
    k = min(modes, len(pool))
    labels = fcluster(linkage(pool, "ward"), k, "maxclust") if len(pool) > 1 else np.ones(1, int)
    return np.stack([pool[labels == c].mean(axis=0) for c in np.unique(labels)])


def one_hot_blocks(generator: str, options: dict[str, Any]) -> list[tuple[int, int]]:
    """The one-hot blocks of the cube a comparison of `generator` searches (`options`: the
    campaign options, for generator_options, vary and fix): categories weigh as one coordinate in
    the failure modes."""
    import generators

    space, _ = search_space(generators.load(generator, **dict(options.get("generator_options") or {})).space,
                            options.get("vary"), options.get("fix"))
    return space.cube.blocks


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
                    with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as db:
                        done, failures = db.execute("SELECT COUNT(*), COALESCE(SUM(failure), 0) FROM trials").fetchone()
                except sqlite3.OperationalError:  # a store still being created (no table yet) or busy: read it next tick
                    continue
                bar.update(done - bar.n)
                bar.set_postfix(failures=failures)
    finally:
        for bar in bars.values():
            bar.close()


def strategy_options(strategies: Sequence[str], options: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per strategy compared, the `options` it takes (`restarts=False` goes to cmaes, not to random);
    an option that none of them takes is an error, so a misspelt one never passes unseen.

    Raises:
        ParameterError: naming the option and each strategy's options.
    """
    takes = {name: STRATEGIES.options(name) for name in strategies}
    unused = [key for key in options if not any(key in keys for keys in takes.values())]
    if unused:
        valid = "; ".join(f"{name}: {', '.join(keys) or 'none'}" for name, keys in takes.items())
        raise ParameterError(f"No strategy compared takes the strategy option {unused[0]!r}. Their options: {valid}.")
    return {name: {k: v for k, v in options.items() if k in keys} for name, keys in takes.items()}


def compare(
    out: str | Path,
    generator: str = "faces",
    target: str = "dlib-cnn",
    strategies: Sequence[str] = ("random", DEFAULT_STRATEGY),
    seeds: Sequence[int] = (0, 1, 2, 3, 4),
    alphas: Sequence[float | None] = (None,),
    budget: int = 400,
    batch: int = 4,
    parallel: int = 1,
    progress: bool = True,
    modes: int = 16,
    **campaign_options: Any,
) -> pd.DataFrame:
    """Runs (or resumes) every strategy x alpha x seed campaign and summarises them.

    `alphas` matter for BO only (None: the strategy's default); other strategies run once per seed.
    `parallel` > 1 runs campaigns as Ray tasks. `modes` is the number of failure modes the
    uniform strategies' failures are cut into (see the module docstring). Returns the per-campaign table, also written to
    `out/compare.csv` beside `out/curves.csv` and the figures.
    """
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

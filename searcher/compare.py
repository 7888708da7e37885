"""Random search against Bayesian search (and any other strategy): strategies x seeds x alpha.

Each combination is an independent campaign in `DIR/runs/`; the comparison reads them back and
writes `DIR/compare.csv` (one row per campaign), `DIR/curves.csv` (cumulative failures against
evaluations) and two figures: failures found against evaluations with a band of one standard
deviation across seeds (Fig. 4a of 003_cc490b638f1b9b67.txt) and the percentage of failures
against alpha (Fig. 4b). Diversity is measured by the planted regions found where the truth knows
them (a `region` column), and otherwise by the number of distinct failure clusters (single-linkage
clusters of failures closer than `cluster_distance` in the unit cube, distances divided by the
square root of its dimension) and the mean pairwise distance of failures.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import pdist

from searcher.campaign import Campaign, load_campaign
from searcher.objective import FAILURE

__all__ = ["compare", "diversity", "plot_comparison"]


def diversity(trials: pd.DataFrame, cluster_distance: float = 0.15) -> dict[str, float]:
    """Breadth of the failures of one campaign: regions (if known), clusters, mean pairwise distance."""
    fails = trials[trials["loss"] >= FAILURE]
    out: dict[str, float] = {"failures": float(len(fails))}
    if len(fails) and "region" in fails["truth"].iloc[0]:
        regions = {t["region"] for t in fails["truth"] if t["region"] >= 0}
        out["regions_found"] = float(len(regions))
    X = np.array(fails["x"].tolist(), float) if len(fails) else np.zeros((0, 1))
    if len(X) >= 2:
        d = pdist(X) / np.sqrt(X.shape[1])
        out["clusters"] = float(fcluster(linkage(d, "single"), cluster_distance, "distance").max())
        out["mean_pairwise"] = float(d.mean())
    else:
        out["clusters"], out["mean_pairwise"] = float(len(X)), 0.0
    return out


def _run_one(kwargs: dict[str, Any]) -> str:
    campaign = Campaign(**kwargs)
    if (Path(campaign.out) / "campaign.sqlite").exists():
        campaign.run(progress=False, resume=True)
    else:
        campaign.run(progress=False)
    return campaign.out


def compare(
    out: str | Path,
    generator: str = "faces",
    target: str = "dlib-cnn",
    strategies: Sequence[str] = ("random", "bo"),
    seeds: Sequence[int] = (0, 1, 2, 3, 4),
    alphas: Sequence[float | None] = (None,),
    budget: int = 400,
    batch: int = 4,
    parallel: int = 1,
    progress: bool = True,
    **campaign_options: Any,
) -> pd.DataFrame:
    """Runs (or resumes) every strategy x alpha x seed campaign and summarises them.

    `alphas` matter for BO only (None: the strategy's default); other strategies run once per seed.
    `parallel` > 1 runs campaigns as Ray tasks. Returns the per-campaign table, also written to
    `out/compare.csv` beside `out/curves.csv` and the figures.
    """
    out = Path(out)
    jobs = []
    for strategy, alpha, seed in itertools.product(strategies, alphas, seeds):
        if strategy != "bo" and alpha != alphas[0]:
            continue  # alpha is BO's; other strategies run once per seed
        a = alpha if strategy == "bo" else None
        name = f"{strategy}{'' if a is None else f'-a{a:g}'}-s{seed}"
        jobs.append(dict(generator=generator, target=target, strategy=strategy, alpha=a, seed=seed, budget=budget,
                         batch=batch, out=str(out / "runs" / name), **campaign_options))
    if parallel > 1:
        import ray

        if not ray.is_initialized():
            ray.init(num_cpus=parallel, include_dashboard=False, log_to_driver=False)
        remote = ray.remote(num_cpus=1)(_run_one)
        ray.get([remote.remote(job) for job in jobs])
    else:
        from tqdm import tqdm

        for job in tqdm(jobs, desc="campaigns", disable=not progress):
            _run_one(job)

    rows, curves = [], []
    for job in jobs:
        trials = load_campaign(job["out"]).trials
        fail = (trials["loss"] >= FAILURE).to_numpy()
        rows.append({"strategy": job["strategy"], "alpha": job["alpha"], "seed": job["seed"], "evaluations": len(trials),
                     "errors": int(trials["error"].notna().sum()), "failure_rate": float(fail.mean()), **diversity(trials)})
        curves.append(pd.DataFrame({"strategy": job["strategy"], "alpha": job["alpha"], "seed": job["seed"],
                                    "evaluation": np.arange(1, len(trials) + 1), "failures": np.cumsum(fail)}))
    table, curve = pd.DataFrame(rows), pd.concat(curves, ignore_index=True)
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "compare.csv", index=False)
    curve.to_csv(out / "curves.csv", index=False)
    plot_comparison(table, curve, out)
    return table


def _label(strategy: str, alpha: Any) -> str:
    return strategy if alpha is None or pd.isna(alpha) else f"{strategy} (alpha {alpha:g})"


def plot_comparison(table: pd.DataFrame, curves: pd.DataFrame, out: Path) -> list[Path]:
    """Fig. 4a (failures against evaluations, mean and one sd across seeds) and, when several
    alphas ran, Fig. 4b (percentage of failures against alpha)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    fig, ax = plt.subplots(figsize=(6, 4))
    for (strategy, alpha), grp in curves.groupby(["strategy", curves["alpha"].fillna(-1)], sort=False):
        wide = grp.pivot(index="evaluation", columns="seed", values="failures")
        mean, sd = wide.mean(axis=1), wide.std(axis=1).fillna(0)
        label = _label(strategy, None if alpha == -1 else alpha)
        ax.plot(wide.index, mean, label=label)
        ax.fill_between(wide.index, mean - sd, mean + sd, alpha=0.2)
    ax.set_xlabel("evaluations")
    ax.set_ylabel("failures found")
    ax.set_title("failures found (mean and 1 sd across seeds)")
    ax.legend()
    fig.tight_layout()
    paths.append(out / "failures_vs_evaluations.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)

    bo = table[(table["strategy"] == "bo") & table["alpha"].notna()]
    if bo["alpha"].nunique() > 1:
        fig, ax = plt.subplots(figsize=(5, 3.5))
        stats = bo.groupby("alpha")["failure_rate"].agg(["mean", "std"]).fillna(0)
        ax.errorbar(stats.index, 100 * stats["mean"], yerr=100 * stats["std"], marker="o", capsize=3, label="bo")
        for strategy in table["strategy"].unique():
            if strategy != "bo":
                ax.axhline(100 * table.loc[table["strategy"] == strategy, "failure_rate"].mean(), ls="--", lw=1, label=strategy)
        ax.set_xlabel("alpha (weight of the diversity term)")
        ax.set_ylabel("failures, % of evaluations")
        ax.legend()
        fig.tight_layout()
        paths.append(out / "failures_vs_alpha.png")
        fig.savefig(paths[-1], dpi=120)
        plt.close(fig)
    return paths

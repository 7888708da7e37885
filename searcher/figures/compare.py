"""The figures of `compare`: failures found against evaluations (Fig. 4a of McDuff et al.),
the share of failures against alpha (Fig. 4b), and failures and breadth per strategy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from searcher.figures import pyplot, save

__all__ = ["plot_comparison", "plot_failure_curves"]


def _label(strategy: str, alpha: Any) -> str:
    return strategy if alpha is None or pd.isna(alpha) else f"{strategy} (alpha {alpha:g})"


def plot_failure_curves(ax: Any, curves: pd.DataFrame) -> None:
    """Failures found against evaluations on `ax`: per strategy (and alpha) the mean over seeds and
    a band of one standard deviation (`curves` as `compare` writes curves.csv)."""
    for (strategy, alpha), grp in curves.groupby(["strategy", curves["alpha"].fillna(-1)], sort=False):
        wide = grp.pivot(index="evaluation", columns="seed", values="failures")
        mean, sd = wide.mean(axis=1), wide.std(axis=1).fillna(0)
        ax.plot(wide.index, mean, label=_label(strategy, None if alpha == -1 else alpha))
        ax.fill_between(wide.index, mean - sd, mean + sd, alpha=0.2)
    ax.set_xlabel("evaluations")


def plot_comparison(table: pd.DataFrame, curves: pd.DataFrame, out: Path) -> list[Path]:
    """Fig. 4a (failures against evaluations, mean and one sd across seeds) and, when several
    alphas ran, Fig. 4b (percentage of failures against alpha)."""
    plt = pyplot()
    paths = []
    fig, ax = plt.subplots(figsize=(6, 4))
    plot_failure_curves(ax, curves)
    ax.set_ylabel("failures found")
    ax.set_title("failures found (mean and 1 sd across seeds)")
    ax.legend()
    paths.append(save(fig, out / "failures_vs_evaluations.png"))

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
        paths.append(save(fig, out / "failures_vs_alpha.png"))

    breadth = "regions_found" if "regions_found" in table else "modes"
    groups = table.groupby(["strategy", table["alpha"].fillna(-1)], sort=False)
    labels = [_label(s, None if a == -1 else a) for s, a in groups.groups]
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.5))
    for ax, column, title in zip(axes, ("failures", breadth), ("failures found", breadth.replace("_", " "))):
        stats = groups[column].agg(["mean", "std"]).fillna(0)
        ax.bar(range(len(stats)), stats["mean"], yerr=stats["std"], capsize=3, color="tab:blue", alpha=0.7)
        ax.set_xticks(range(len(stats)), labels, rotation=30, ha="right")
        ax.set_title(f"{title} (mean, 1 sd)")
    paths.append(save(fig, out / "diversity.png"))
    return paths

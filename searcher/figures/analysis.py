"""The figures of `analyze`: failure rates by subgroup, logistic effects, score sensitivity."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from searcher.figures import pyplot, save

__all__ = ["plot_effects", "plot_sensitivity", "plot_subgroups"]


def _panels(n: int, height: float) -> tuple[Any, np.ndarray]:
    ncol = min(3, n)
    nrow = -(-n // ncol)
    fig, axes = pyplot().subplots(nrow, ncol, figsize=(4.5 * ncol, height * nrow), squeeze=False)
    for ax in axes.flat[n:]:
        ax.axis("off")
    return fig, axes.flat


def plot_subgroups(table: pd.DataFrame, attrs: Sequence[str], overall: float, title: str, path: Path) -> None:
    """Failure rate per level of each attribute with its Wilson interval, the overall rate dashed."""
    singles = table[table["attribute"].isin(attrs)]
    fig, axes = _panels(len(attrs), 0.35 * singles.groupby("attribute").size().max() + 1.6)
    for ax, a in zip(axes, attrs):
        g = singles[singles["attribute"] == a]
        y = np.arange(len(g))
        ax.errorbar(g["rate"], y, xerr=[g["rate"] - g["low"], g["high"] - g["rate"]], fmt="o", capsize=3)
        ax.axvline(overall, ls="--", color="grey", label=f"overall {overall:.2f}")
        ax.set(yticks=y, yticklabels=g["level"], xlim=(0, 1), title=a, xlabel="failure rate (95% Wilson)")
    axes[0].legend(loc="lower right", fontsize="small")
    save(fig, path, title=title, dpi=100)


def plot_effects(table: pd.DataFrame, title: str, path: Path) -> None:
    """Logistic coefficients (log odds against each attribute's reference level) with ±1.96 bootstrap std."""
    fig, axes = _panels(1, 0.3 * len(table) + 1.6)
    y = np.arange(len(table))
    axes[0].errorbar(table["coef"], y, xerr=1.96 * table["std"], fmt="o", capsize=3)
    axes[0].axvline(0, color="grey")
    axes[0].set(yticks=y, yticklabels=[f"{c} (vs {r})" for c, r in zip(table["covariate"], table["reference"])],
                xlabel="log odds of failure, ±1.96 bootstrap std")
    fig.set_figwidth(8)
    save(fig, path, title=title, dpi=100)


def plot_sensitivity(table: pd.DataFrame, path: Path) -> None:
    """Score sensitivity along each axis (eq. (3) of Denton et al.) with its t interval."""
    attrs = list(table["attribute"].unique())
    fig, axes = _panels(len(attrs), 3.2)
    for ax, (a, g) in zip(axes, table.groupby("attribute", sort=False)):
        ax.plot(g["lambda"], g["sensitivity"], "o-")
        ax.fill_between(g["lambda"], g["low"], g["high"], alpha=0.25)
        ax.axhline(0, color="grey")
        ref = g["reference"].iloc[0]
        ax.set(title=a, xlabel="lambda (decision value" + (f" - {ref:g})" if ref else ")"),
               ylabel=f"change of P({g['positive'].iloc[0]})")
    save(fig, path, title="score sensitivity, 95% t intervals", dpi=100)

"""The figure of `searcher bench`: per case, each strategy's failures relative to the best
strategy's against its effective breadth relative to the broadest's (means over seeds), as small
multiples. Top right is "as many failures as anyone, as broad as anyone"; the dotted lines mark
80% of the failures and 90% of the effective breadth."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from searcher.figures import pyplot, save
from searcher.strategies import DEFAULT_STRATEGY

__all__ = ["plot_suite"]


def plot_suite(suite: pd.DataFrame, path: str | Path, under: str = DEFAULT_STRATEGY, tuned: Sequence[str] = (), columns: int = 4) -> Path:
    """Writes the small multiples of `suite` (as `suite.csv`) to `path`; `under` is drawn larger,
    cases named in `tuned` are titled with a `*`."""
    plt = pyplot()
    cases = list(dict.fromkeys(suite["case"]))
    strategies = list(dict.fromkeys(suite["strategy"]))
    colours = {s: plt.get_cmap("tab10")(i % 10) for i, s in enumerate(strategies)}
    cols = max(1, min(columns, len(cases) + 1))  # one panel more, for the legend
    rows = max(1, math.ceil((len(cases) + 1) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.0 * cols, 2.8 * rows), squeeze=False, sharex=True, sharey=True)
    for ax, case in zip(axes.flat, cases):
        grp = suite[suite["case"] == case]
        best, broadest = grp["failures_mean"].max(), grp["effective_breadth_mean"].max()
        for _, r in grp.iterrows():
            x = r["effective_breadth_mean"] / broadest if broadest > 0 else 0.0
            y = r["failures_mean"] / best if best > 0 else 0.0
            ax.scatter(x, y, s=90 if r["strategy"] == under else 40, color=colours[r["strategy"]], edgecolor="black" if r["strategy"] == under else "none",
                       zorder=3, label=r["strategy"])
        ax.axhline(0.8, ls=":", lw=0.8, color="grey")
        ax.axvline(0.9, ls=":", lw=0.8, color="grey")
        ax.set_xlim(-0.05, 1.08)
        ax.set_ylim(-0.05, 1.08)
        ax.set_title(f"{case}{' *' if case in tuned else ''}", fontsize=9)
    for ax in axes.flat[len(cases):]:
        ax.axis("off")
    for c in range(cols):  # x labels under the lowest panel of each column
        used = [ax for ax in axes[:, c] if ax.axison]
        if used:
            used[-1].xaxis.set_tick_params(labelbottom=True)
            used[-1].set_xlabel("effective breadth / broadest", fontsize=8)
    for ax in axes[:, 0]:
        ax.set_ylabel("failures / best", fontsize=8)
    handles = [plt.Line2D([], [], marker="o", ls="", color=colours[s], label=s) for s in strategies]
    axes.flat[len(cases)].legend(handles=handles, loc="center", frameon=False, title="strategy")
    title = "failures / best against effective breadth / broadest, per case (means over seeds; * tuned on)"
    return save(fig, path, title="\n".join(textwrap.wrap(title, 30 * cols)))

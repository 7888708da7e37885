"""The figure of `verify`: FNMR against FMR per demographic group."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from searcher.causal import FMRThreshold
from searcher.figures import pyplot, save

__all__ = ["plot_curves"]


def plot_curves(curves: pd.DataFrame, threshold: FMRThreshold, path: Any) -> None:
    """FNMR against FMR per group on a log FMR axis (the benchmark's Fig. 5 layout), with each
    group's operating point at the global threshold and the target FMR marked; an FMR of 0 is
    drawn at half of one impostor pair's share, the axis' left edge."""
    floor = 0.5 / max(int(curves["n_impostor"].max()), 1)  # an FMR of 0 is drawn here, at the axis' left edge
    fig, ax = pyplot().subplots(figsize=(6, 4.5))
    for i, (g, c) in enumerate(curves.groupby("group", sort=True)):
        c = c.sort_values("threshold")
        ax.plot(np.maximum(c["fmr"], floor), c["fnmr"], label=g, color=f"C{i}")
        at = c[np.isclose(c["threshold"], threshold.threshold)]
        ax.plot(np.maximum(at["fmr"], floor), at["fnmr"], "o", color=f"C{i}")
    ax.axvline(threshold.fmr, color="grey", ls="--", lw=1, label=f"target FMR {threshold.fmr:g}")
    ax.set(xscale="log", xlabel=f"FMR (impostor pairs that match; 0 drawn at {floor:.0e})", ylabel="FNMR (genuine pairs that do not match)",
           title=f"FNMR vs FMR per group; dots: threshold {threshold.threshold:.3f}", ylim=(-0.02, 1.02))
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    save(fig, path)

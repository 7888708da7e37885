"""The retraining figure: balanced accuracy of every arm (mean, sd over seeds, each seed a dot)
per test set, and the error of each subgroup per arm with its Wilson interval."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from searcher.figures import pyplot, save

__all__ = ["plot_retraining"]


def plot_retraining(scores: pd.DataFrame, groups: pd.DataFrame, path: Path, order: Sequence[str]) -> Path:
    """Left: balanced accuracy per arm and test set. Right: the first test set's subgroup errors per arm."""
    plt = pyplot()
    tests = list(dict.fromkeys(scores["test"]))
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5), gridspec_kw={"width_ratios": [1, 1.6]})
    width = 0.8 / len(tests)
    x = np.arange(len(order))
    for j, test in enumerate(tests):
        s = scores[scores["test"] == test]
        stats = s.groupby("arm")["balanced_accuracy"].agg(["mean", "std"]).reindex(order)
        pos = x + (j - (len(tests) - 1) / 2) * width
        left.bar(pos, stats["mean"], width, yerr=stats["std"].fillna(0), capsize=3, label=test, alpha=0.8)
        for p, arm in zip(pos, order):
            vals = s.loc[s["arm"] == arm, "balanced_accuracy"]
            left.plot(np.full(len(vals), p), vals, "k.", ms=3)
    crowded = len(order) * max(map(len, order)) > 50  # the names no longer fit side by side
    left.set_xticks(x, order, rotation=30 if crowded else 0, ha="right" if crowded else "center")
    left.set_ylim(max(0.0, scores["balanced_accuracy"].min() - 0.1), 1.0)
    left.set_ylabel("balanced accuracy")
    left.set_title("balanced accuracy (mean, 1 sd over seeds, dots: seeds)")
    left.legend(title="test set")

    g = groups[(groups["test"] == tests[0]) & (groups["group"] != "all")]
    names = list(dict.fromkeys(g["group"]))
    width = 0.8 / len(order)
    y = np.arange(len(names))
    for j, arm in enumerate(order):
        a = g[g["arm"] == arm].set_index("group").reindex(names)
        err = np.vstack([a["error"] - a["ci_low"], a["ci_high"] - a["error"]]).clip(min=0)
        right.barh(y + (j - (len(order) - 1) / 2) * width, a["error"], width, xerr=err, capsize=2, label=arm, alpha=0.8)
    right.set_yticks(y, names)
    right.invert_yaxis()
    right.set_xlabel(f"error on the {tests[0]} test set (pooled over seeds, Wilson 95%)")
    right.legend(title="arm", fontsize=8)
    return save(fig, path)

"""The scores of one benchmark run: failures, repeats, breadth and effective breadth.

Failures are distinct failing points (the targets are deterministic: a point evaluated again is
counted under `repeats`, never as another failure; points are the same when they agree to 9
decimals: `searcher.analysis.compare.repeated`, as `searcher compare` counts them). Breadth is how many regions (planted) or failure
modes (campaigns) the failures hit; effective breadth is `exp(entropy)` of the failures'
distribution over them (Hill's number of order 1): 1.0 when every failure lies in one region,
`n` when they are spread evenly over `n`, and 0 for a run with no failures (so never NaN). It tells
a run that found 100 failures in one region and 1 in four others (breadth 5, effective 1.2) from
one that spread them (effective 5).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["breadth", "effective_breadth", "run_scores"]


def breadth(counts: Sequence[int] | np.ndarray) -> int:
    """How many regions or modes hold at least one failure."""
    return int((np.asarray(counts) > 0).sum())


def effective_breadth(counts: Sequence[int] | np.ndarray) -> float:
    """`exp(entropy)` of the failures' distribution over regions or modes: 1.0 for one, `n` for
    equal counts over `n`, 0.0 when there are no failures."""
    c = np.asarray(counts, float)
    c = c[c > 0]
    if not len(c):
        return 0.0
    p = c / c.sum()
    return float(np.exp(-(p * np.log(p)).sum()))


def run_scores(labels: Sequence[int] | np.ndarray, repeats: int, of: int) -> dict[str, Any]:
    """The scores of one run from the region or mode of each *new* failure (-1 for every other
    evaluation, repeats included) and the number of repeated evaluations; `of` is how many
    regions or modes there are."""
    labels = np.asarray(labels, int)
    hits = labels[labels >= 0]
    counts = np.bincount(hits, minlength=of)
    return {"evaluations": len(labels), "failures": len(hits), "repeats": int(repeats), "breadth": breadth(counts), "of": int(of),
            "effective_breadth": round(effective_breadth(counts), 6),
            "first_failure": int(np.argmax(labels >= 0)) + 1 if len(hits) else None,
            "counts": " ".join(str(int(c)) for c in counts)}

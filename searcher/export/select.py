"""Which images an export holds: failures, everything judged, or the images near the target's
decision boundary; at most `limit` of them, the first found or spread over the failure modes.

Only images with a right answer are exported: a target error (timeout, HTTP 5xx, bad JSON) is
not a classifier failure and an ambiguous truth has no label, so both are left out, and an image
a search evaluated twice is exported once. A trial whose image its campaign did not keep (the
`images` setting keeps every failure's and a seeded share of the others) is not exported either.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from searcher.errors import ParameterError
from searcher.space import farthest_points
from searcher.validation import check_choice, check_int, check_number

__all__ = ["SELECTIONS", "balance_labels", "exportable", "near_boundary", "quotas", "select", "spread_over_modes", "weights"]

SELECTIONS = ("failures", "all", "near-boundary")


def near_boundary(rows: pd.DataFrame, band: float) -> np.ndarray:
    """Per row: the target's probability of the right label lies within `band` of 0.5 (a two-label
    classify target's score is the probability of the label it gave)."""
    p_right = np.where(rows["prediction"] == rows["true_label"], rows["score"], 1.0 - rows["score"])
    return np.abs(p_right.astype(float) - 0.5) <= band


def select(rows: pd.DataFrame, task: str, selection: str = "failures", limit: int | None = None, spread: bool = False,
           band: float = 0.1) -> pd.DataFrame:
    """The rows to export, in the order found.

    Args:
        rows: a `Source`'s rows.
        task: "classify" or "detect" (near-boundary needs a classify target's scores).
        selection: "failures", "all" (every judged image) or "near-boundary".
        limit: at most this many; the first found, or with `spread` spread over the failure modes
            (`spread_over_modes`: a Bayesian search's failures come in tight groups).
        band: near-boundary means |P(right label) - 0.5| <= band.

    Raises:
        ParameterError: a bad value, or nothing to export (naming why).
    """
    check_choice("--select", selection, SELECTIONS)
    check_number("--band", band, 0.0, 0.5)
    if limit is not None:
        check_int("--max", limit, 1)
    if rows.empty:
        raise ParameterError("Nothing to export: the source holds no evaluations.")
    judged = exportable(rows)
    if judged.empty:
        raise ParameterError(f"Nothing to export: none of the {len(rows)} evaluations has a judgement "
                             f"({int(rows['error'].notna().sum())} target errors, {int(rows['excluded'].notna().sum())} excluded).")
    if selection == "failures":
        chosen = judged[judged["failure"].astype(bool)]
        if chosen.empty:
            raise ParameterError(f"Nothing to export: no failures among {len(judged)} judged evaluations. "
                                 "Export them all with --select all, or search longer.")
    elif selection == "near-boundary":
        if task != "classify" or judged["score"].isna().all():
            raise ParameterError("--select near-boundary needs a classify target with scores; this target's answers have none. "
                                 f"Choose one of {', '.join(s for s in SELECTIONS if s != 'near-boundary')}.")
        chosen = judged[near_boundary(judged, band)]
        if chosen.empty:
            raise ParameterError(f"Nothing to export: no judged image has P(right label) within {band} of 0.5. Widen --band.")
    else:
        chosen = judged
    if limit is not None and len(chosen) > limit:
        chosen = chosen.iloc[spread_over_modes(chosen, limit) if spread else np.arange(limit)]
    return chosen.assign(weight=weights(chosen))


def exportable(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows that may be exported: judged (a loss, no target error, not excluded, a right label),
    with an image (a campaign that keeps a share of its images has none for the others), each image once."""
    judged = rows[rows["loss"].notna() & rows["error"].isna() & rows["excluded"].isna() & rows["true_label"].notna()
                  & rows["image"].notna()]
    return judged[~judged["id"].duplicated() & ~judged["image"].astype(str).duplicated()]


def balance_labels(chosen: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """`chosen` (a selection of `rows`) with images of its under-represented labels added from
    `rows` itself, so that every label present in `rows` has as many images as the commonest.

    The rule, for each short label: anchors are the commonest label's images of `chosen`, spread
    over their failure modes (`spread_over_modes`, as many as are missing); each anchor in turn takes
    the nearest image of the short label in the searched cube (`x`) that is judged and not yet in
    the set, without replacement. So the added images lie where the failures are, in the same
    modes, and come from the campaign's own trials (passes, or failures beyond `--max`). When the
    campaign holds too few, every one it holds is added and the set stays short of balance.
    Weights are computed again over the whole set (added passes weigh 1).
    """
    pool = exportable(rows)
    pool = pool[~pool["id"].isin(chosen["id"])]
    counts = chosen["true_label"].astype(str).value_counts()
    major = counts.index[0]
    anchors = chosen[chosen["true_label"].astype(str) == major]
    added = []
    for label in sorted(set(pool["true_label"].astype(str)) | set(counts.index)):
        missing = int(counts.iloc[0] - counts.get(label, 0))
        candidates = pool[pool["true_label"].astype(str) == label]
        if missing <= 0 or candidates.empty:
            continue
        picked = anchors.iloc[spread_over_modes(anchors, missing)] if missing < len(anchors) else anchors
        A, C = np.stack(picked["x"].to_numpy()), np.stack(candidates["x"].to_numpy())
        free = np.ones(len(C), bool)
        for a in A[: min(missing, len(C))]:
            free[int(np.argmin(np.where(free, ((C - a) ** 2).sum(axis=1), np.inf)))] = False
        added.append(candidates[~free])
    out = pd.concat([chosen, *added]) if added else chosen
    return out.assign(weight=weights(out))


def quotas(sizes: np.ndarray, limit: int) -> np.ndarray:
    """How many of each group to take so that `limit` are taken in all, as evenly as the groups'
    sizes allow (water-filling: a group smaller than its share gives the rest to the others)."""
    take = np.zeros(len(sizes), int)
    left = limit
    while left > 0 and (take < sizes).any():
        open_ = np.flatnonzero(take < sizes)
        share = max(1, left // len(open_))
        for g in open_[np.argsort(-(sizes[open_] - take[open_]), kind="stable")]:
            add = min(share, sizes[g] - take[g], left)
            take[g] += add
            left -= add
    return take


def spread_over_modes(rows: pd.DataFrame, limit: int) -> np.ndarray:
    """Positions of `limit` rows spread over the failure modes: per-mode quotas (every mode before
    any mode twice), and within a mode a farthest-point spread over the points searched (rows
    without a mode form one more group). In the order found."""
    mode = rows["mode"].to_numpy(int)
    groups, sizes = np.unique(mode, return_counts=True)
    X = np.stack(rows["x"].to_numpy())
    keep = []
    for g, k in zip(groups, quotas(sizes, limit)):
        members = np.flatnonzero(mode == g)
        keep += list(members[farthest_points(X[members], int(k))]) if k else []
    return np.sort(keep)


def weights(rows: pd.DataFrame) -> np.ndarray:
    """Training weights: each failure mode weighs the same in all (a failure's weight is one over
    its mode's size, scaled so that the failures' weights average 1); every other row weighs 1."""
    mode = rows["mode"].to_numpy(int)
    out = np.ones(len(rows))
    found = mode >= 0
    if found.any():
        values, counts = np.unique(mode[found], return_counts=True)
        size = dict(zip(values, counts))
        raw = np.array([1.0 / size[m] for m in mode[found]])
        out[found] = raw * found.sum() / raw.sum()
    return out

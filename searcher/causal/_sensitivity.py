"""Counterfactual sensitivity (Denton et al., docs/papers.md#denton): score sensitivity (eq. 3),
classification sensitivity (eq. 6) with the 0->1 and 1->0 flip rates, the near-boundary
restriction, and the interpolation sanity check of Sec. 5.

Input format (tidy, one row per rendered image)::

    image   lambda   score
    17      -1.0     0.31      f(G(z_17 - 1.0 d))
    17       0.0     0.44      f(G(z_17))          <- every image needs its lambda = 0 row
    17       1.0     0.62      f(G(z_17 + 1.0 d))
    ...

`image` identifies the latent code z (any hashable id), `lambda` is the multiple of the attribute
vector d (the paper sweeps lambda in [-1, 1]; > 0 adds the attribute, < 0 removes it), and `score`
is the classifier's output f in [0, 1]. Each (image, lambda) pair appears at most once; an image may
miss some lambdas, and each lambda's statistics use the images that have it (its `n`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from searcher.causal import _checks
from searcher.causal._intervals import wilson_interval
from searcher.errors import ParameterError

__all__ = ["classification_sensitivity", "interpolation_check", "interpolation_codes", "score_sensitivity"]

#: The near-boundary band of Fig. 5 (right): 0.3 < f(G(z)) < 0.7.
NEAR_BOUNDARY = (0.3, 0.7)
_ZERO = 1e-12


def _paired(df: Any, id_col: str, lambda_col: str, score_col: str, near_boundary: Any, caller: str) -> pd.DataFrame:
    """Wide table: one row per image, one column per lambda, scores; restricted near the boundary."""
    _checks.frame(df, caller, "scores_by_lambda")
    _checks.columns(df, [id_col, lambda_col, score_col], caller, "column")
    if df[id_col].isna().any():
        raise ParameterError(f"{caller}: the id column {id_col!r} has missing values.")
    lam = _checks.numeric(df[lambda_col], f"the lambda column {lambda_col!r}", caller)
    score = _checks.numeric(df[score_col], f"the score column {score_col!r}", caller)
    if ((score < 0) | (score > 1)).any():
        bad = score[(score < 0) | (score > 1)][0]
        raise ParameterError(f"{caller}: scores must be classifier outputs in [0, 1] (apply a sigmoid or softmax to "
                         f"logits). Got {bad:g} in {score_col!r}.")
    lam = np.where(np.abs(lam) <= _ZERO, 0.0, lam)
    tidy = pd.DataFrame({"image": df[id_col].to_numpy(), "lambda": lam, "score": score})
    dup = tidy.duplicated(["image", "lambda"])
    if dup.any():
        row = tidy[dup].iloc[0]
        raise ParameterError(f"{caller}: image {row['image']!r} has more than one row at lambda = {row['lambda']:g}; "
                         "each (image, lambda) pair must appear once.")
    wide = tidy.pivot(index="image", columns="lambda", values="score").sort_index(axis=1)
    if 0.0 not in wide.columns:
        raise ParameterError(f"{caller}: no row has lambda = 0; every image needs its unmodified score f(G(z)) at lambda = 0.")
    no_base = wide.index[wide[0.0].isna()]
    if len(no_base):
        raise ParameterError(f"{caller}: {len(no_base)} image(s) have no lambda = 0 row (first: {list(no_base[:5])!r}); "
                         "every image needs its unmodified score f(G(z)).")
    band = _band(near_boundary, caller)
    if band is not None:
        lo, hi = band
        wide = wide[(wide[0.0] > lo) & (wide[0.0] < hi)]
        if wide.empty:
            raise ParameterError(f"{caller}: no image has {lo:g} < f(G(z)) < {hi:g} at lambda = 0, so the near-boundary "
                             "restriction leaves nothing. Widen the band or add images.")
    return wide


def _band(near_boundary: Any, caller: str) -> tuple[float, float] | None:
    if near_boundary is False or near_boundary is None:
        return None
    if near_boundary is True:
        return NEAR_BOUNDARY
    try:
        lo, hi = (float(v) for v in near_boundary)
    except (TypeError, ValueError):
        raise ParameterError(f"The 'near_boundary' parameter of {caller} must be False, True (0.3 < f < 0.7) or a pair "
                         f"(low, high). Got {near_boundary!r} instead.") from None
    if not 0 <= lo < hi <= 1:
        raise ParameterError(f"The 'near_boundary' parameter of {caller} must satisfy 0 <= low < high <= 1. Got {near_boundary!r}.")
    return lo, hi


def _mean_interval(diffs: pd.DataFrame, lvl: float) -> pd.DataFrame:
    """Mean of each column's paired differences, with a t interval (NaN where n < 2)."""
    n = diffs.notna().sum()
    mean = diffs.mean()
    sd = diffs.std(ddof=1)
    se = sd / np.sqrt(n)
    tq = pd.Series(stats.t.ppf(1 - (1 - lvl) / 2, np.maximum(n - 1, 1)), index=n.index).where(n >= 2)
    return pd.DataFrame({"n": n.astype(np.int64), "sensitivity": mean, "std": sd, "low": mean - tq * se, "high": mean + tq * se})


def score_sensitivity(scores_by_lambda: pd.DataFrame, *, id_col: str = "image", lambda_col: str = "lambda",
                      score_col: str = "score", near_boundary: bool | tuple[float, float] = False,
                      level: float = 0.95) -> pd.DataFrame:
    """Score sensitivity S(f o G, lambda d) for every lambda of a sweep (eq. 3 of Denton et al.)::

        S(f o G, d; Z) = E_Z[ f(G(z + d)) - f(G(z)) ]

    the mean over images of the paired score change. `near_boundary=True` restricts Z to the
    images near the decision boundary, 0.3 < f(G(z)) < 0.7 (Fig. 5, right); a pair `(low, high)`
    sets another band.

    Args:
        scores_by_lambda: tidy table, one row per (image, lambda); see the module docstring.
        id_col, lambda_col, score_col: its column names.
        near_boundary: False, True, or `(low, high)`.
        level: coverage of the t interval of each mean.

    Returns:
        DataFrame indexed by lambda with `n` (images), `sensitivity` (mean change), `std` (standard
        deviation of the per-image changes), `low`, `high` (t interval; NaN when n < 2).

    Raises:
        ParameterError: missing columns, scores outside [0, 1], duplicated (image, lambda) rows, an
        image without its lambda = 0 row, or an empty near-boundary set.
    """
    caller = "score_sensitivity"
    lvl = _checks.level(level, caller)
    wide = _paired(scores_by_lambda, id_col, lambda_col, score_col, near_boundary, caller)
    out = _mean_interval(wide.sub(wide[0.0], axis=0), lvl)
    out.index.name = "lambda"
    return out


def classification_sensitivity(scores_by_lambda: pd.DataFrame, *, threshold: float = 0.5, id_col: str = "image",
                               lambda_col: str = "lambda", score_col: str = "score",
                               near_boundary: bool | tuple[float, float] = False, level: float = 0.95) -> pd.DataFrame:
    """Classification sensitivity S(y o G, lambda d) for every lambda (eq. 6 of Denton et al.), with
    the flip rates S^{0->1} and S^{1->0}.

    Predictions are `y = 1[f >= threshold]` (eq. 5)::

        S(y o G, d; Z) = E_Z[ y(G(z + d)) - y(G(z)) ]

    The flip rates restrict Z to the images predicted 0 at lambda = 0 (Z_0) or 1 (Z_1):
    `rate_0to1` is the fraction of Z_0 whose prediction becomes 1, which equals S on Z_0;
    `rate_1to0` is the fraction of Z_1 whose prediction becomes 0, which equals *minus* S on Z_1 (it
    is reported as a positive frequency, as in Fig. 6).

    Args:
        scores_by_lambda: tidy table, one row per (image, lambda); see the module docstring.
        threshold: the decision threshold c of eq. (5), in [0, 1].
        id_col, lambda_col, score_col: its column names.
        near_boundary: False, True (0.3 < f < 0.7 at lambda = 0), or `(low, high)`.
        level: coverage of the intervals.

    Returns:
        DataFrame indexed by lambda with `n`, `sensitivity`, `low`, `high` (t interval of the mean
        paired change, which collapses to a point when nothing flips), `n0`, `flips_0to1`,
        `rate_0to1`, `low_0to1`, `high_0to1`, `n1`, `flips_1to0`, `rate_1to0`, `low_1to0`,
        `high_1to0` (Wilson intervals; NaN where Z_0 or Z_1 is empty).

    Raises:
        ParameterError: as `score_sensitivity`, or a threshold outside [0, 1].
    """
    caller = "classification_sensitivity"
    lvl = _checks.level(level, caller)
    threshold = _checks.unit(threshold, "threshold", caller)
    wide = _paired(scores_by_lambda, id_col, lambda_col, score_col, near_boundary, caller)
    pred = (wide >= threshold).astype(float).where(wide.notna())
    base = pred[0.0]
    out = _mean_interval(pred.sub(base, axis=0), lvl).drop(columns="std")
    for start, end, tag in ((0, 1, "0to1"), (1, 0, "1to0")):
        sub = pred[base == start]
        n = sub.notna().sum().astype(np.int64)
        flips = (sub == end).sum().astype(np.int64)
        low, high = wilson_interval(flips.to_numpy(), n.to_numpy(), lvl)
        out[f"n{start}"] = n
        out[f"flips_{tag}"] = flips
        out[f"rate_{tag}"] = np.where(n > 0, flips / n.clip(lower=1), np.nan)
        out[f"low_{tag}"], out[f"high_{tag}"] = low, high
    out.index.name = "lambda"
    return out


def interpolation_codes(z: Any, labels: Any, n_samples: int, *, seed: int = 0) -> tuple[np.ndarray, pd.DataFrame]:
    """Latent codes for the interpolation sanity check of Sec. 5 of Denton et al.

    For each predicted class (0 and 1) with at least two codes, draws `n_samples` points uniformly
    on lines between two distinct codes of that class: `z = (1 - t) z_i + t z_j`, `t ~ U(0, 1)`.
    Render them, score them, and pass the plan with a `score` column to `interpolation_check`; if the
    classifier is smooth along the latent space, nearly all should keep their endpoints' class (the
    paper found 98%).

    Args:
        z: `N x D` latent codes.
        labels: N predicted classes `y(G(z))`, 0/1.
        n_samples: points to draw per class.
        seed: seeds the choice of pairs and positions.

    Returns:
        `(codes, plan)`: the `M x D` codes to render, and a DataFrame with one row per code:
        `label` (the endpoints' class), `start`, `end` (row numbers in `z`), `t`.

    Raises:
        ParameterError: bad shapes, labels not 0/1, or no class with two codes.
    """
    caller = "interpolation_codes"
    Z = np.asarray(z, dtype=float)
    if Z.ndim != 2 or len(Z) == 0 or not np.isfinite(Z).all():
        raise ParameterError(f"{caller}: z must be a finite N x D array. Got shape {Z.shape}.")
    y = _checks.binary(np.asarray(labels).ravel(), "labels", caller)
    if len(y) != len(Z):
        raise ParameterError(f"{caller}: labels must have one entry per code ({len(Z)}). Got {len(y)}.")
    n_samples = _checks.count(n_samples, "n_samples", caller, minimum=1)
    rng = np.random.default_rng(_checks.seed(seed, caller))
    codes, rows = [], []
    for cls in (0, 1):
        members = np.flatnonzero(y == cls)
        if len(members) < 2:
            continue
        i = rng.integers(0, len(members), n_samples)
        j = (i + rng.integers(1, len(members), n_samples)) % len(members)  # distinct from i
        t = rng.random(n_samples)
        start, end = members[i], members[j]
        codes.append((1 - t)[:, None] * Z[start] + t[:, None] * Z[end])
        rows.append(pd.DataFrame({"label": cls, "start": start, "end": end, "t": t}))
    if not codes:
        raise ParameterError(f"{caller}: no class has two codes to interpolate between (class counts: 0 -> "
                         f"{int((y == 0).sum())}, 1 -> {int((y == 1).sum())}).")
    return np.concatenate(codes), pd.concat(rows, ignore_index=True)


def interpolation_check(samples: pd.DataFrame, *, label_col: str = "label", score_col: str = "score",
                        threshold: float = 0.5, level: float = 0.95) -> pd.DataFrame:
    """How often an interpolated code keeps its endpoints' class (Sec. 5 of Denton et al.).

    Args:
        samples: the plan of `interpolation_codes` with a `score_col` column of f on each render.
        label_col: the endpoints' class (0/1).
        score_col: the classifier's score in [0, 1].
        threshold: the decision threshold c.
        level: coverage of the Wilson intervals.

    Returns:
        DataFrame indexed by class with `n`, `consistent` (predicted the endpoints' class), `rate`,
        `low`, `high`.
    """
    caller = "interpolation_check"
    _checks.frame(samples, caller, "samples")
    _checks.columns(samples, [label_col, score_col], caller, "column")
    lvl = _checks.level(level, caller)
    threshold = _checks.unit(threshold, "threshold", caller)
    y = _checks.binary(samples[label_col], f"the label column {label_col!r}", caller)
    score = _checks.numeric(samples[score_col], f"the score column {score_col!r}", caller)
    if ((score < 0) | (score > 1)).any():
        raise ParameterError(f"{caller}: scores must be in [0, 1]. Got {score[(score < 0) | (score > 1)][0]:g}.")
    ok = ((score >= threshold).astype(np.int64) == y).astype(np.int64)
    g = pd.Series(ok).groupby(pd.Series(y, name="label"))
    out = pd.DataFrame({"n": g.size().astype(np.int64), "consistent": g.sum().astype(np.int64)})
    out["rate"] = out["consistent"] / out["n"]
    out["low"], out["high"] = wilson_interval(out["consistent"].to_numpy(), out["n"].to_numpy(), lvl)
    return out

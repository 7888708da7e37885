"""Face verification bias (the synthetic face-recognition benchmark, docs/papers.md#liang): FNMR
and FMR per demographic group over a sweep of thresholds, a global threshold at a target FMR, FNMR
per group at that threshold with bootstrap bands, and the expected change of identity distance per
unit change of each unprotected attribute.

Conventions: `pairs` has one row per image pair with a comparison score, a 0/1 ground truth "same
identity" (genuine pair = 1, impostor pair = 0) and a group. Scores are distances by default
(smaller = same person, as dlib's Euclidean descriptor distances, threshold 0.6): a pair *matches*
when `distance < threshold`, exactly as the `dlib-verify` target decides. With `similarity=True`
larger is more alike and a pair matches when `score > threshold`.

    FNMR(t) = #{genuine pairs that do not match} / #{genuine pairs}
    FMR(t)  = #{impostor pairs that match} / #{impostor pairs}
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from searcher.causal import _checks
from searcher.causal._intervals import wilson_interval
from searcher.causal._regression import ols_effects
from searcher.errors import ParameterError

__all__ = ["FMRThreshold", "fnmr_at_threshold", "identity_distance_effects", "threshold_at_fmr", "verification_rates"]


def _pairs(pairs: Any, score_col: str, same_col: str, group_col: str | None, caller: str):
    _checks.frame(pairs, caller, "pairs")
    cols = [score_col, same_col] + ([group_col] if group_col is not None else [])
    _checks.columns(pairs, cols, caller, "column")
    score = _checks.numeric(pairs[score_col], f"the score column {score_col!r} (pairs where no face was found have no "
                            "distance: drop them and report them separately)", caller)
    same = _checks.binary(pairs[same_col], f"the ground-truth column {same_col!r}", caller)
    if group_col is None:
        group = pd.Series("all", index=pairs.index, name="group")
    else:
        group = pairs[group_col]
        if group.isna().any():
            raise ParameterError(f"{caller}: the group column {group_col!r} has {int(group.isna().sum())} missing value(s).")
    return score, same, group


def _matches(score: np.ndarray, threshold: Any, similarity: bool) -> np.ndarray:
    return score > threshold if similarity else score < threshold


def _thresholds(thresholds: Any, caller: str) -> np.ndarray:
    try:
        t = np.atleast_1d(np.asarray(thresholds, dtype=float))
    except (TypeError, ValueError):
        raise ParameterError(f"{caller}: thresholds must be numbers. Got {thresholds!r}.") from None
    if t.ndim != 1 or len(t) == 0 or not np.isfinite(t).all():
        raise ParameterError(f"{caller}: thresholds must be a non-empty list of finite numbers. Got {thresholds!r}.")
    return t


def verification_rates(pairs: pd.DataFrame, score_col: str = "distance", same_col: str = "same",
                       group_col: str | None = "group", thresholds: Any = (0.6,), *, similarity: bool = False,
                       level: float = 0.95) -> pd.DataFrame:
    """FNMR and FMR per group at each threshold (the FNMR vs FMR curves of the benchmark, and
    NIST's per-group comparison at a fixed threshold).

    Args:
        pairs: one row per compared pair.
        score_col: distance (or, with `similarity=True`, similarity) of the pair.
        same_col: 1 for a genuine pair (same identity), 0 for an impostor pair.
        group_col: demographic group of the pair; None pools all pairs into one group "all".
        thresholds: one or more thresholds to sweep.
        similarity: larger scores mean more alike.
        level: coverage of the Wilson intervals.

    Returns:
        DataFrame indexed by (group, threshold), with `n_genuine`, `false_non_matches`, `fnmr`,
        `fnmr_low`, `fnmr_high`, `n_impostor`, `false_matches`, `fmr`, `fmr_low`, `fmr_high`. A
        group with no genuine (impostor) pairs has NaN FNMR (FMR) and its interval, with a count of 0.

    Example:
        >>> pairs = pd.DataFrame({"distance": [0.3, 0.7, 0.5, 0.9], "same": [1, 1, 0, 0], "group": "x"})
        >>> verification_rates(pairs, thresholds=[0.6])[["fnmr", "fmr"]]
                         fnmr  fmr
        group threshold
        x     0.6         0.5  0.5
    """
    caller = "verification_rates"
    lvl = _checks.level(level, caller)
    score, same, group = _pairs(pairs, score_col, same_col, group_col, caller)
    t = _thresholds(thresholds, caller)
    rows = []
    for g, idx in pd.Series(np.arange(len(score))).groupby(group.to_numpy(), sort=True):
        s, y = score[idx.to_numpy()], same[idx.to_numpy()]
        gen, imp = s[y == 1], s[y == 0]
        for thr in t:
            fnm = int((~_matches(gen, thr, similarity)).sum())
            fm = int(_matches(imp, thr, similarity).sum())
            rows.append((g, thr, len(gen), fnm, len(imp), fm))
    out = pd.DataFrame(rows, columns=["group", "threshold", "n_genuine", "false_non_matches", "n_impostor", "false_matches"])
    out = out.set_index(["group", "threshold"])
    for name, k, n in (("fnmr", "false_non_matches", "n_genuine"), ("fmr", "false_matches", "n_impostor")):
        kk, nn = out[k].to_numpy(), out[n].to_numpy()
        out[name] = np.where(nn > 0, kk / np.maximum(nn, 1), np.nan)
        out[f"{name}_low"], out[f"{name}_high"] = wilson_interval(kk, nn, lvl)
    return out[["n_genuine", "false_non_matches", "fnmr", "fnmr_low", "fnmr_high",
                "n_impostor", "false_matches", "fmr", "fmr_low", "fmr_high"]]


@dataclass(frozen=True)
class FMRThreshold:
    """A global decision threshold chosen on impostor pairs (see `threshold_at_fmr`).

    Attributes:
        threshold: the threshold (a pair matches when distance < threshold).
        fmr: the FMR target actually used (the fallback when `fell_back`).
        fmr_requested: the FMR target asked for.
        fmr_achieved: the empirical FMR of the impostor pairs at `threshold` (<= `fmr`).
        n_impostor: impostor pairs it was chosen on.
        fell_back: True when there were too few impostor pairs for `fmr_requested`.
        similarity: whether scores are similarities (match when score > threshold).
    """

    threshold: float
    fmr: float
    fmr_requested: float
    fmr_achieved: float
    n_impostor: int
    fell_back: bool
    similarity: bool = False

    def __float__(self) -> float:
        return self.threshold


def _rate(value: Any, name: str, caller: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not 0 < value < 1:
        raise ParameterError(f"The {name!r} parameter of {caller} must be a number in (0, 1), e.g. 1e-3. Got {value!r} instead.")
    return float(value)


def threshold_at_fmr(impostor_distances: Any, fmr: float = 1e-3, *, fallback_fmr: float = 1e-2,
                     min_expected: int = 10, similarity: bool = False) -> FMRThreshold:
    """The global threshold at which impostor pairs match at most a fraction `fmr` of the time.

    With the N impostor distances sorted, `d_(1) <= ... <= d_(N)`, and `k = floor(fmr N)`, the
    threshold is `d_(k+1)`: the largest threshold whose empirical FMR (pairs with distance strictly
    below it) does not exceed `fmr`. An FMR of 1e-3 is estimated from about `fmr N` false matches,
    so it needs `N >= min_expected / fmr` impostor pairs (10,000 for 1e-3). With fewer it falls back
    to `fallback_fmr` (1e-2 by default) and says so: a `UserWarning` and `fell_back=True`.

    Args:
        impostor_distances: distances (or similarities) of impostor pairs, finite.
        fmr: target false match rate, in (0, 1).
        fallback_fmr: the larger target used when there are too few pairs for `fmr`.
        min_expected: false matches the target must leave room for: `fmr N >= min_expected`.
        similarity: scores are similarities (match when score > threshold).

    Returns:
        An `FMRThreshold` (`threshold`, `fmr`, `fmr_achieved`, `fell_back`, ...); `float()` of it
        is the threshold.

    Raises:
        ParameterError: bad arguments, or too few impostor pairs even for `fallback_fmr`
        (`N < min_expected / fallback_fmr`); lower `min_expected` to accept a noisier threshold.
    """
    caller = "threshold_at_fmr"
    target = _rate(fmr, "fmr", caller)
    fallback = _rate(fallback_fmr, "fallback_fmr", caller)
    min_expected = _checks.count(min_expected, "min_expected", caller, minimum=1)
    d = np.asarray(impostor_distances, dtype=float).ravel()
    if len(d) == 0 or not np.isfinite(d).all():
        raise ParameterError(f"{caller}: impostor_distances must be a non-empty list of finite numbers "
                         f"({int((~np.isfinite(d)).sum())} NaN or infinite of {len(d)}).")
    n = len(d)
    used, fell_back = target, False
    if n * target < min_expected:
        if n * fallback < min_expected:
            raise ParameterError(f"{caller}: {n} impostor pairs are too few for an FMR of {target:g} (need "
                             f"{math.ceil(min_expected / target):,}) or of the fallback {fallback:g} (need "
                             f"{math.ceil(min_expected / fallback):,}). Compare more impostor pairs, or pass a smaller "
                             "min_expected to accept a noisier threshold.")
        warnings.warn(f"{caller}: {n} impostor pairs are too few for an FMR of {target:g} (need "
                      f"{math.ceil(min_expected / target):,} for {min_expected} expected false matches); "
                      f"using FMR {fallback:g} instead.", UserWarning, stacklevel=2)
        used, fell_back = fallback, True
    key = -d if similarity else d
    s = np.sort(key)
    k = math.floor(used * n + 1e-9)
    thr_key = s[k]
    achieved = float((key < thr_key).sum()) / n
    threshold = -thr_key if similarity else thr_key
    return FMRThreshold(threshold=float(threshold), fmr=used, fmr_requested=target, fmr_achieved=achieved,
                        n_impostor=n, fell_back=fell_back, similarity=similarity)


def fnmr_at_threshold(pairs: pd.DataFrame, threshold: float | FMRThreshold, *, score_col: str = "distance",
                      same_col: str = "same", group_col: str | None = "group", cluster_col: str | None = None,
                      similarity: bool | None = None, n_boot: int = 1000, seed: int = 0,
                      level: float = 0.95) -> pd.DataFrame:
    """FNMR per group at one global threshold, with percentile bootstrap bands.

    Only genuine pairs (`same == 1`) enter. The bootstrap resamples each group's genuine pairs
    with replacement (stratified, so each group keeps its size); with `cluster_col` (e.g. the
    pseudo-identity) it resamples whole clusters instead, which accounts for the pairs of one
    identity being correlated. The threshold is held fixed: the bands do not include the
    uncertainty of choosing it.

    Args:
        pairs: one row per compared pair.
        threshold: a number, or the result of `threshold_at_fmr`.
        score_col, same_col, group_col: as in `verification_rates`.
        cluster_col: resample clusters of pairs (e.g. identity) instead of single pairs.
        similarity: larger scores mean more alike; by default taken from an `FMRThreshold`, else False.
        n_boot, seed, level: bootstrap resamples, their seed, band coverage.

    Returns:
        DataFrame indexed by group with `n_genuine`, `false_non_matches`, `fnmr`, `low`, `high`.
        `attrs["threshold"]` holds the threshold.

    Raises:
        ParameterError: bad columns or arguments, or a group with no genuine pair (its FNMR is undefined).
    """
    caller = "fnmr_at_threshold"
    lvl = _checks.level(level, caller)
    n_boot = _checks.count(n_boot, "n_boot", caller)
    rng = np.random.default_rng(_checks.seed(seed, caller))
    if isinstance(threshold, FMRThreshold):
        similarity = threshold.similarity if similarity is None else similarity
        thr = threshold.threshold
    elif isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.integer, np.floating)) or not np.isfinite(threshold):
        raise ParameterError(f"The 'threshold' parameter of {caller} must be a finite number or an FMRThreshold. Got {threshold!r} instead.")
    else:
        thr = float(threshold)
    similarity = bool(similarity)
    score, same, group = _pairs(pairs, score_col, same_col, group_col, caller)
    if cluster_col is not None:
        _checks.columns(pairs, cluster_col, caller, "cluster column")
        if pairs[cluster_col].isna().any():
            raise ParameterError(f"{caller}: the cluster column {cluster_col!r} has {int(pairs[cluster_col].isna().sum())} "
                             "missing value(s); every pair needs its cluster (e.g. identity).")
        cluster = pd.factorize(pairs[cluster_col])[0]
    else:
        cluster = np.arange(len(score))
    miss = (~_matches(score, thr, similarity)).astype(np.int64)
    genuine = same == 1
    groups = sorted(pd.unique(group.to_numpy()), key=lambda v: (str(type(v)), v))
    rows = []
    for g in groups:
        mask = genuine & (group.to_numpy() == g)
        if not mask.any():
            raise ParameterError(f"{caller}: group {g!r} has no genuine pair (same == 1), so its FNMR is undefined. "
                             "Drop the group, or add genuine pairs.")
        codes, inverse = np.unique(cluster[mask], return_inverse=True)
        per_n = np.bincount(inverse).astype(float)
        per_k = np.bincount(inverse, weights=miss[mask]).astype(float)
        m = len(codes)
        n_g, k_g = int(per_n.sum()), int(per_k.sum())
        boots = np.full(n_boot, np.nan)
        for b in range(n_boot):
            draw = np.bincount(rng.integers(0, m, m), minlength=m)
            boots[b] = (draw @ per_k) / (draw @ per_n)
        low, high = _checks.percentile_interval(boots, lvl) if n_boot >= 2 else (np.nan, np.nan)
        rows.append((g, n_g, k_g, k_g / n_g, float(low), float(high)))
    out = pd.DataFrame(rows, columns=["group", "n_genuine", "false_non_matches", "fnmr", "low", "high"]).set_index("group")
    out.attrs.update(threshold=thr, similarity=similarity, n_boot=n_boot, level=lvl)
    return out


def identity_distance_effects(df: pd.DataFrame, distance_col: str, attribute_deltas: str | Sequence[str], *,
                              level: float = 0.95) -> pd.DataFrame:
    """Expected change of identity distance per unit change of each unprotected attribute.

    A linear regression over genuine pairs (two renders of one pseudo-identity that differ in
    pose, age, expression, lighting, ...)::

        distance = b_0 + sum_k b_k delta_k + noise

    where `delta_k` is the change of attribute k between the two images (signed or absolute, as
    the columns hold it; absolute changes are the usual choice, since distance is symmetric). `b_k`
    is the expected change of distance per unit of attribute change with the others held fixed; the
    intercept, the distance between renders that differ in none of them, is in `attrs["intercept"]`.
    Ordinary least squares with classical standard errors and t intervals.

    Args:
        df: one row per pair.
        distance_col: the pair's identity distance.
        attribute_deltas: columns holding each attribute's change between the two images.
        level: coverage of the t intervals.

    Returns:
        DataFrame indexed by attribute with `coef`, `std`, `low`, `high`, `p_value`; `attrs` has
        `intercept`, `intercept_std`, `n`, `dof`, `residual_std`, `level`.

    Raises:
        ParameterError: unknown or non-numeric columns, missing values, too few rows, or collinear attributes.
    """
    caller = "identity_distance_effects"
    _checks.frame(df, caller)
    lvl = _checks.level(level, caller)
    distance_col, cols = _checks.target_and_columns(df, distance_col, attribute_deltas, caller, "distance column",
                                                    "attribute column")
    y = _checks.numeric(df[distance_col], f"the distance column {distance_col!r}", caller)
    X = np.column_stack([_checks.numeric(df[c], f"the attribute column {c!r}", caller) for c in cols])
    return ols_effects(X, y, cols, lvl, caller)

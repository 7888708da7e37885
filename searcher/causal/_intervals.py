"""Intervals of proportions: Wilson's score interval and Newcombe's hybrid score interval of a
difference of two independent proportions."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import norm

from searcher.causal import _checks
from searcher.errors import ParameterError

__all__ = ["newcombe_interval", "wilson_interval"]


def _counts(k: Any, n: Any, caller: str) -> tuple[np.ndarray, np.ndarray]:
    try:
        k_arr, n_arr = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(f"{caller}: k and n must be numbers (counts). Got k={k!r}, n={n!r}.") from None
    try:
        k_arr, n_arr = np.broadcast_arrays(k_arr, n_arr)
    except ValueError:
        raise ParameterError(f"{caller}: k and n must have the same shape (or broadcast). Got {np.shape(k)} and {np.shape(n)}.") from None
    for name, arr in (("k", k_arr), ("n", n_arr)):
        bad = ~np.isfinite(arr) | (arr < 0) | (arr != np.round(arr))
        if bad.any():
            raise ParameterError(f"{caller}: {name} must be whole numbers >= 0. Got {arr[bad].flat[0]!r}.")
    if (k_arr > n_arr).any():
        i = np.flatnonzero(k_arr > n_arr)[0]
        raise ParameterError(f"{caller}: k must not exceed n. Got k={k_arr.flat[i]:g} > n={n_arr.flat[i]:g}.")
    return k_arr, n_arr


def wilson_interval(k: Any, n: Any, level: float = 0.95) -> tuple[Any, Any]:
    """Wilson score interval of a proportion `k / n` (the error-rate bars of Fig. 13 of
    Balakrishnan et al., docs/papers.md#balakrishnan).

    With `z` the two-sided normal quantile of `level` and `p = k / n`::

        centre = (p + z^2 / 2n) / (1 + z^2 / n)
        half   = z sqrt(p (1 - p) / n + z^2 / 4n^2) / (1 + z^2 / n)

    The same numbers as `statsmodels.stats.proportion.proportion_confint(k, n, method="wilson")`;
    the bounds are exactly 0 when `k == 0` and exactly 1 when `k == n`.

    Args:
        k: number of events (errors), an int or an array of ints.
        n: number of trials, same shape as `k` (or broadcastable).
        level: coverage, in (0, 1).

    Returns:
        `(low, high)`: floats for scalar input, arrays otherwise. Where `n == 0` the rate is
        undefined and both bounds are NaN.

    Raises:
        ParameterError: a count is negative, fractional or not finite, `k > n`, or `level` is not in (0, 1).

    Example:
        >>> [round(b, 4) for b in wilson_interval(3, 10)]
        [0.1078, 0.6032]
    """
    caller = "wilson_interval"
    lvl = _checks.level(level, caller)
    k_arr, n_arr = _counts(k, n, caller)
    z = norm.isf((1 - lvl) / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k_arr / n_arr
        denom = 1 + z * z / n_arr
        centre = (p + z * z / (2 * n_arr)) / denom
        half = z * np.sqrt(p * (1 - p) / n_arr + z * z / (4 * n_arr * n_arr)) / denom
    low, high = np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)
    low = np.where(k_arr == 0, 0.0, low)
    high = np.where(k_arr == n_arr, 1.0, high)
    empty = n_arr == 0
    low, high = np.where(empty, np.nan, low), np.where(empty, np.nan, high)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


def newcombe_interval(k1: Any, n1: Any, k0: Any, n0: Any, level: float = 0.95) -> tuple[Any, Any]:
    """Newcombe's hybrid score interval of the difference `k1/n1 - k0/n0` of two independent
    proportions (method 10 of Newcombe, Statistics in Medicine 17, 1998), built from the two Wilson
    intervals `(l1, u1)` and `(l0, u0)`::

        d = p1 - p0
        low  = d - sqrt((p1 - l1)^2 + (u0 - p0)^2)
        high = d + sqrt((u1 - p1)^2 + (p0 - l0)^2)

    The same numbers as `statsmodels.stats.proportion.confint_proportions_2indep(k1, n1, k0, n0,
    method="newcomb", compare="diff")`. Unlike the Wald interval it behaves at rates of 0 or 1.

    Returns:
        `(low, high)`: floats for scalar input, arrays otherwise; NaN where `n1` or `n0` is 0.
    """
    caller = "newcombe_interval"
    lvl = _checks.level(level, caller)
    k1a, n1a = _counts(k1, n1, caller)
    k0a, n0a = _counts(k0, n0, caller)
    l1, u1 = wilson_interval(k1a, n1a, lvl)
    l0, u0 = wilson_interval(k0a, n0a, lvl)
    with np.errstate(divide="ignore", invalid="ignore"):
        p1, p0 = k1a / n1a, k0a / n0a
    d = p1 - p0
    low = d - np.sqrt((p1 - l1) ** 2 + (u0 - p0) ** 2)
    high = d + np.sqrt((u1 - p1) ** 2 + (p0 - l0) ** 2)
    if np.ndim(low) == 0:
        return float(low), float(high)
    return np.asarray(low), np.asarray(high)

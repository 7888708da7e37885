"""Bias amplification (Wang and Russakovsky, docs/papers.md#wang): BiasAmp_MALS (eq. 1, from
Zhao et al. 2017) and directional BiasAmp-> (eq. 6) in both directions, A->T and T->A, per
attribute-task pair and aggregated, with bootstrap intervals and the calibrated threshold of Sec. 3.3.

Notation. `A` is an `n x |A|` 0/1 matrix, one column per protected group a (A_a = 1 when the image
shows group a; groups may overlap, e.g. intersections); `T` is an `n x |T|` 0/1 matrix, one column
per binary task t. Predictions `A_pred`, `T_pred` have the same shapes: 0/1, or scores turned into
0/1 by `threshold`.

Correlation signs are decided from integer counts: with N examples, n_a, n_t and n_at of them
having A_a = 1, T_t = 1, and both, `P(A_a=1, T_t=1) > P(A_a=1) P(T_t=1)` is `n_at * N > n_a * n_t`,
and `P(A_a=1 | T_t=1) > 1/|A|` is `n_at * |A| > n_t`, so exact independence is detected exactly.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from searcher.causal import _checks
from searcher.errors import ParameterError

__all__ = ["BiasAmpResult", "bias_amp", "bias_amp_mals", "calibrated_predictions"]

_DIRECTIONS = ("AT", "TA")


@dataclass(frozen=True)
class BiasAmpResult:
    """A bias-amplification measurement.

    Attributes:
        value: the aggregate (eq. 6: mean over the |A| x |T| pairs; eq. 1: sum over pairs / |T|).
        low, high: percentile bootstrap interval of `value` at `level` (NaN when `n_boot == 0`).
        per_pair: |A| x |T| DataFrame (rows: groups, columns: tasks) of each pair's term:
            `y_at * Delta_at` with y in {+1, -1, 0} for BiasAmp-> (so `(1 - y_at)(-Delta_at)` for
            negatively correlated pairs), `y_at * Delta_at` with y in {0, 1} for MALS.
        per_pair_low, per_pair_high: bootstrap intervals of each term.
        y: the correlation indicator per pair (+1 positive, -1 negative, 0 independent; MALS: 1/0).
        delta: Delta_at per pair.
        direction: "AT", "TA" or "MALS".
        level: coverage of the intervals.
        n_boot: bootstrap resamples asked for.
        n_boot_used: resamples in which every conditioning set was non-empty (the others are left
            out of the intervals, with a warning).
        thresholds: the score thresholds applied to the predictions, per column, if any.
    """

    value: float
    low: float
    high: float
    per_pair: pd.DataFrame
    per_pair_low: pd.DataFrame
    per_pair_high: pd.DataFrame
    y: pd.DataFrame
    delta: pd.DataFrame
    direction: str
    level: float
    n_boot: int
    n_boot_used: int
    thresholds: dict[str, pd.Series] = field(default_factory=dict)


def _matrix(x: Any, name: str, caller: str, *, n_rows: int | None = None, n_cols: int | None = None,
            binary: bool = True) -> tuple[np.ndarray, list[Any] | None]:
    cols = list(x.columns) if isinstance(x, pd.DataFrame) else None
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(f"{caller}: {name} must be a numeric array or DataFrame. Got {type(x).__name__}.") from None
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ParameterError(f"{caller}: {name} must be an n x k matrix with n, k >= 1 (one column per group or task). "
                         f"Got shape {np.shape(x)}.")
    if n_rows is not None and arr.shape[0] != n_rows:
        raise ParameterError(f"{caller}: {name} must have {n_rows} rows, like the matrix it goes with. Got {arr.shape[0]}.")
    if n_cols is not None and arr.shape[1] != n_cols:
        raise ParameterError(f"{caller}: {name} must have {n_cols} columns, like the matrix it goes with. Got {arr.shape[1]}.")
    if not np.isfinite(arr).all():
        raise ParameterError(f"{caller}: {name} has {int((~np.isfinite(arr)).sum())} NaN or infinite value(s).")
    if binary:
        bad = (arr != 0) & (arr != 1)
        if bad.any():
            r, c = np.argwhere(bad)[0]
            hint = " For scores, pass threshold= (a number or 'calibrated')." if "pred" in name else ""
            raise ParameterError(f"{caller}: {name} must be 0/1. Got {arr[r, c]:g} at row {r}, column {c}.{hint}")
    return arr, cols


def calibrated_predictions(scores: Any, base_rates: Any) -> tuple[np.ndarray, np.ndarray]:
    """Calibrated thresholding (Sec. 3.3 of Wang and Russakovsky): in each column, predict positive
    the `round(N * p)` highest scores, `p` that column's base rate (from the training labels).

    Ties at the cut are broken by row order (earlier rows first), so exactly `round(N * p)` rows
    are positive in each column.

    Args:
        scores: `N x k` scores.
        base_rates: k base rates in [0, 1].

    Returns:
        `(predictions, thresholds)`: the `N x k` 0/1 predictions and, per column, the lowest score
        predicted positive (`inf` where none is).
    """
    caller = "calibrated_predictions"
    S, _ = _matrix(scores, "scores", caller, binary=False)
    p = np.asarray(base_rates, dtype=float).ravel()
    if p.shape != (S.shape[1],) or not ((p >= 0) & (p <= 1)).all():
        raise ParameterError(f"{caller}: base_rates must be {S.shape[1]} numbers in [0, 1]. Got {base_rates!r}.")
    N = S.shape[0]
    pred = np.zeros(S.shape, dtype=np.int64)
    thr = np.full(S.shape[1], np.inf)
    for j in range(S.shape[1]):
        k = int(np.floor(N * p[j] + 0.5))
        if k:
            top = np.argsort(-S[:, j], kind="stable")[:k]
            pred[top, j] = 1
            thr[j] = S[top, j].min()
    return pred, thr


def _predictions(pred: Any, shape_of: np.ndarray, name: str, spec: Any, base_rates: np.ndarray, caller: str,
                 names: list[Any]) -> tuple[np.ndarray, pd.Series | None]:
    if spec is None:
        arr, _ = _matrix(pred, name, caller, n_rows=shape_of.shape[0], n_cols=shape_of.shape[1])
        return arr, None
    arr, _ = _matrix(pred, name, caller, n_rows=shape_of.shape[0], n_cols=shape_of.shape[1], binary=False)
    if isinstance(spec, str):
        if spec != "calibrated":
            raise ParameterError(f"The 'threshold' parameter of {caller} must be None, a number, one number per column, "
                             f"'calibrated', or a mapping {{'A': ..., 'T': ...}} of those. Got {spec!r} instead.")
        out, thr = calibrated_predictions(arr, base_rates)
        return out.astype(float), pd.Series(thr, index=names, name=name)
    try:
        thr = np.broadcast_to(np.asarray(spec, dtype=float), (arr.shape[1],)).copy()
    except (TypeError, ValueError):
        raise ParameterError(f"The 'threshold' parameter of {caller} must be None, a number, one number per column "
                         f"({arr.shape[1]} for {name}), or 'calibrated'. Got {spec!r} instead.") from None
    if not np.isfinite(thr).all():
        raise ParameterError(f"The 'threshold' parameter of {caller} must be finite. Got {spec!r}.")
    return (arr >= thr[None, :]).astype(float), pd.Series(thr, index=names, name=name)


def _prepare(A, T, A_pred, T_pred, A_train, T_train, threshold, needs, caller):
    A_, a_cols = _matrix(A, "A", caller)
    T_, t_cols = _matrix(T, "T", caller, n_rows=A_.shape[0])
    a_names = a_cols if a_cols is not None else [f"a{i}" for i in range(A_.shape[1])]
    t_names = t_cols if t_cols is not None else [f"t{i}" for i in range(T_.shape[1])]
    if (A_train is None) != (T_train is None):
        raise ParameterError(f"{caller}: give both A_train and T_train (the base correlations come from the pair), or neither "
                         "(then they come from the test labels A and T).")
    if A_train is not None:
        A_b, _ = _matrix(A_train, "A_train", caller, n_cols=A_.shape[1])
        T_b, _ = _matrix(T_train, "T_train", caller, n_rows=A_b.shape[0], n_cols=T_.shape[1])
        base_name = "training labels"
    else:
        A_b, T_b, base_name = None, None, "test labels"
    if isinstance(threshold, Mapping):
        unknown = set(threshold) - {"A", "T"}
        if unknown:
            raise ParameterError(f"{caller}: threshold mapping keys must be 'A' and/or 'T'. Got {sorted(map(str, unknown))!r}.")
        specs = {"A": threshold.get("A"), "T": threshold.get("T")}
    else:
        specs = {"A": threshold, "T": threshold}
    rates_A = (A_b if A_b is not None else A_).mean(axis=0)
    rates_T = (T_b if T_b is not None else T_).mean(axis=0)
    preds, thresholds = {}, {}
    for key, given, ref, rates, nm in (("A", A_pred, A_, rates_A, a_names), ("T", T_pred, T_, rates_T, t_names)):
        if key not in needs:
            continue
        if given is None:
            raise ParameterError(f"{caller}: {key}_pred is required here ({needs[key]}).")
        preds[key], thr = _predictions(given, ref, f"{key}_pred", specs[key], rates, caller, nm)
        if thr is not None:
            thresholds[key] = thr
    return A_, T_, A_b, T_b, base_name, preds, thresholds, a_names, t_names


def _check_nonempty(counts: np.ndarray, names: list[Any], what: str, where: str, why: str, caller: str) -> None:
    empty = np.flatnonzero(counts == 0)
    if len(empty):
        i = int(empty[0])
        raise ParameterError(f"{caller}: the {what} column {names[i]!r} (column {i}) has no positive example in the {where}, "
                         f"so {why} is undefined. Drop that column, or add examples of it.")


def _weights(n: int, n_boot: int, seed: int):
    """Bootstrap resamples of n rows, as counts of each row, in chunks of `B x n` arrays (the same
    draws whatever the chunk size)."""
    rng = np.random.default_rng(seed)
    chunk = max(1, min(n_boot, 2_000_000 // n))
    for start in range(0, n_boot, chunk):
        size = min(chunk, n_boot - start)
        yield np.stack([np.bincount(rng.integers(0, n, n), minlength=n) for _ in range(size)]).astype(float)


def _sums(W: np.ndarray, M: np.ndarray) -> np.ndarray:
    """`B x k` weighted counts of the rows with M[:, j] = 1 (integers, exact in float64)."""
    return np.rint(W @ M).astype(np.int64)


def _joint(W: np.ndarray, M1: np.ndarray, M2: np.ndarray) -> np.ndarray:
    """`B x k1 x k2` weighted counts of the rows with M1[:, i] = 1 and M2[:, j] = 1."""
    return np.stack([_sums(W * M1[:, i], M2) for i in range(M1.shape[1])], axis=1)


def _signs(W: np.ndarray, A: np.ndarray, T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """y_at = sign(P(A_a=1, T_t=1) - P(A_a=1) P(T_t=1)) = sign(n_at N - n_a n_t), on integers, and
    which weightings leave a group or task empty (y undefined)."""
    n_a, n_t = _sums(W, A), _sums(W, T)
    N = np.rint(W.sum(axis=1)).astype(np.int64)[:, None, None]
    y = np.sign(_joint(W, A, T) * N - n_a[:, :, None] * n_t[:, None, :])
    return y, (n_a == 0).any(axis=1) | (n_t == 0).any(axis=1)


def _directional(direction: str, A: np.ndarray, T: np.ndarray, pred: np.ndarray, W: np.ndarray,
                 y_fixed: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(y, delta), each `B x |A| x |T|`, for a batch of weightings of the test rows; delta is NaN
    where undefined (an empty conditioning set or, when y comes from these rows, an empty group or task)."""
    n_at = _joint(W, A, T)
    if y_fixed is None:
        y, undefined = _signs(W, A, T)
    else:
        y, undefined = np.broadcast_to(y_fixed, n_at.shape), np.zeros(len(W), dtype=bool)
    if direction == "AT":
        cond, hat = _sums(W, A)[:, :, None], _joint(W, A, pred)
    else:
        cond, hat = _sums(W, T)[:, None, :], _joint(W, pred, T)
    delta = np.where(cond > 0, (hat - n_at) / np.maximum(cond, 1), np.nan)
    delta[undefined] = np.nan
    return y, delta


def _bootstrap(stat, n: int, n_boot: int, seed: int, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    values, terms = np.full(n_boot, np.nan), np.full((n_boot, *shape), np.nan)
    done = 0
    for W in _weights(n, n_boot, seed):
        values[done:done + len(W)], terms[done:done + len(W)] = stat(W)
        done += len(W)
    return values, terms


def _result(direction, value, terms, y, delta, boot_values, boot_terms, n_boot, lvl, a_names, t_names, thresholds, caller):
    ok = np.isfinite(boot_values)
    used = int(ok.sum())
    if n_boot and used < n_boot:
        warnings.warn(f"{caller}: {n_boot - used} of {n_boot} bootstrap resamples left a group or task without examples "
                      "and were left out of the intervals.", UserWarning, stacklevel=3)
    if used >= 2:
        low, high = _checks.percentile_interval(boot_values[ok], lvl)
        t_low, t_high = _checks.percentile_interval(boot_terms[ok], lvl)
    else:
        low = high = np.nan
        t_low = t_high = np.full(terms.shape, np.nan)

    def frame(m):
        return pd.DataFrame(m, index=pd.Index(a_names, name="group"), columns=pd.Index(t_names, name="task"))

    return BiasAmpResult(value=float(value), low=float(low), high=float(high), per_pair=frame(terms),
                         per_pair_low=frame(t_low), per_pair_high=frame(t_high), y=frame(y.astype(np.int64)),
                         delta=frame(delta), direction=direction, level=lvl, n_boot=n_boot, n_boot_used=used,
                         thresholds=thresholds)


def bias_amp(A: Any, T: Any, A_pred: Any = None, T_pred: Any = None, *, direction: str, A_train: Any = None,
             T_train: Any = None, threshold: Any = None, n_boot: int = 1000, seed: int = 0,
             level: float = 0.95) -> BiasAmpResult:
    """Directional bias amplification BiasAmp-> (eq. 6 of Wang and Russakovsky)::

        BiasAmp-> = 1/(|A||T|) sum_{a,t} [ y_at Delta_at + (1 - y_at)(-Delta_at) ]
        y_at      = 1[ P(A_a=1, T_t=1) > P(A_a=1) P(T_t=1) ]
        Delta_at  = P(T^_t=1 | A_a=1) - P(T_t=1 | A_a=1)   direction "AT": the attribute biases the task prediction
                  = P(A^_a=1 | T_t=1) - P(A_a=1 | T_t=1)   direction "TA": the task biases the attribute prediction

    Positive values mean the model amplifies the correlations of the base data; per-pair values
    (`per_pair`) show which pairs, since positive and negative terms can cancel in the mean.

    Base correlations (y_at) come from `A_train`, `T_train` when given, else from the test labels
    `A`, `T`; Delta_at always compares test predictions with test labels (as the authors' code).
    The bootstrap resamples the test rows; y_at stays fixed when it comes from training labels and
    is recomputed in each resample when it comes from the test labels (so a weakly correlated pair
    whose sign is uncertain widens the interval, as it should).

    Independence: a pair with `P(A_a=1, T_t=1) == P(A_a=1) P(T_t=1)` exactly (decided on integer
    counts) has y_at = 0 and contributes 0 to the sum, as in the authors' released code
    (`np.sign`); read literally, eq. 6 would count it as negatively correlated. It still counts in
    the |A||T| denominator.

    Empty groups: a group (column of A) or task (column of T) with no positive example in the base
    labels, or, for "AT", a group with none in the test labels (for "TA", a task), makes a
    correlation or conditional probability undefined: that is a ValueError naming the column,
    never a silent drop. Bootstrap resamples in which this happens are left out of the intervals
    (counted in `n_boot_used`, with a warning).

    Args:
        A: `n x |A|` 0/1 test labels of the protected groups (array or DataFrame; DataFrame column
            names name the groups).
        T: `n x |T|` 0/1 test labels of the tasks.
        A_pred: predictions of A (needed for "TA").
        T_pred: predictions of T (needed for "AT").
        direction: "AT" or "TA".
        A_train, T_train: training labels for the base correlations (both or neither).
        threshold: None (predictions are 0/1); a number or one number per column (predict 1 where
            score >= threshold); "calibrated" (Sec. 3.3: in each column the round(N p) highest
            scores are positive, p the base rate in the training labels, else the test labels); or
            a mapping {"A": ..., "T": ...} to treat the two predictions differently. Thresholds are
            applied once, on the whole test set, before resampling.
        n_boot: bootstrap resamples of the test rows for the intervals (0 for none).
        seed: seeds the resampling.
        level: coverage of the percentile intervals.

    Returns:
        A `BiasAmpResult` (`value`, `low`, `high`, `per_pair`, ...).

    Raises:
        ParameterError: bad direction, shapes, non-0/1 labels or predictions, a missing prediction,
        or an empty group or task (see above).

    Example:
        >>> A = np.repeat([[1, 0], [0, 1]], [50, 50], axis=0)
        >>> T = np.r_[np.ones(40), np.zeros(10), np.ones(10), np.zeros(40)][:, None]
        >>> T_hat = np.r_[np.ones(40), np.zeros(10), np.zeros(50)][:, None]
        >>> round(bias_amp(A, T, T_pred=T_hat, direction="AT", n_boot=0).value, 4)
        0.1
    """
    caller = "bias_amp"
    if direction not in _DIRECTIONS:
        raise ParameterError(f"The 'direction' parameter of {caller} must be 'AT' (attribute -> task) or 'TA' "
                         f"(task -> attribute). Got {direction!r} instead.")
    n_boot = _checks.count(n_boot, "n_boot", caller)
    seed = _checks.seed(seed, caller)
    lvl = _checks.level(level, caller)
    key = "T" if direction == "AT" else "A"
    needs = {key: f"direction {direction!r} compares predictions of {key} with its labels"}
    A_, T_, A_b, T_b, base_name, preds, thresholds, a_names, t_names = _prepare(
        A, T, A_pred, T_pred, A_train, T_train, threshold, needs, caller)
    pred = preds[key]
    n = A_.shape[0]
    base_A, base_T = (A_b, T_b) if A_b is not None else (A_, T_)
    n_a, n_t = base_A.sum(axis=0), base_T.sum(axis=0)
    _check_nonempty(n_a, a_names, "group", base_name, "its correlation with the tasks", caller)
    _check_nonempty(n_t, t_names, "task", base_name, "its correlation with the groups", caller)
    y_fixed = _signs(np.ones((1, len(base_A))), base_A, base_T)[0] if A_b is not None else None
    if direction == "AT":
        _check_nonempty(A_.sum(axis=0), a_names, "group", "test labels", "P(T_t = 1 | A_a = 1)", caller)
    else:
        _check_nonempty(T_.sum(axis=0), t_names, "task", "test labels", "P(A_a = 1 | T_t = 1)", caller)

    def stat(W):
        y, delta = _directional(direction, A_, T_, pred, W, y_fixed)
        terms = y * delta + 0.0  # + 0.0 turns the -0.0 of y = -1, delta = 0 into 0.0
        return terms.mean(axis=(1, 2)), terms

    value, terms = stat(np.ones((1, n)))
    y, delta = _directional(direction, A_, T_, pred, np.ones((1, n)), y_fixed)
    boot_values, boot_terms = _bootstrap(stat, n, n_boot, seed, terms.shape[1:])
    return _result(direction, value[0], terms[0], y[0], delta[0], boot_values, boot_terms, n_boot, lvl, a_names,
                   t_names, thresholds, caller)


def bias_amp_mals(A: Any, T: Any, A_pred: Any, T_pred: Any, A_train: Any = None, T_train: Any = None,
                  threshold: Any = None, *, n_boot: int = 1000, seed: int = 0, level: float = 0.95) -> BiasAmpResult:
    """BiasAmp_MALS of Zhao et al. 2017 (eq. 1 of Wang and Russakovsky)::

        BiasAmp_MALS = 1/|T| sum_{a,t} y_at Delta_at
        y_at     = 1[ P(A_a=1 | T_t=1) > 1/|A| ]
        Delta_at = P(A^_a=1 | T^_t=1) - P(A_a=1 | T_t=1)

    P(A_a=1 | T_t=1) and y_at come from the training labels when given (the metric's selling point:
    no test labels are needed), else from the test labels; P(A^_a=1 | T^_t=1) from the test
    predictions only. Its shortcomings (positive correlations only, base rates ignored, directions
    entangled; Sec. 3.2) are why `bias_amp` exists; it is here for comparison.

    Empty groups: a task with no positive example in the base labels, or never predicted
    positive, leaves a conditional probability undefined: a ValueError naming the column.
    Bootstrap resamples in which this happens are left out of the intervals (`n_boot_used`).

    Args:
        A, T, A_pred, T_pred: as in `bias_amp` (both predictions are required).
        A_train, T_train: training labels (both or neither).
        threshold: as in `bias_amp`.
        n_boot, seed, level: bootstrap resamples of the test rows, their seed, interval coverage.

    Returns:
        A `BiasAmpResult` with `direction == "MALS"`.
    """
    caller = "bias_amp_mals"
    n_boot = _checks.count(n_boot, "n_boot", caller)
    seed = _checks.seed(seed, caller)
    lvl = _checks.level(level, caller)
    needs = {"A": "BiasAmp_MALS uses P(A^ | T^)", "T": "BiasAmp_MALS uses P(A^ | T^)"}
    A_, T_, A_b, T_b, base_name, preds, thresholds, a_names, t_names = _prepare(
        A, T, A_pred, T_pred, A_train, T_train, threshold, needs, caller)
    Ah, Th = preds["A"], preds["T"]
    n, n_groups = A_.shape[0], A_.shape[1]
    _check_nonempty(Th.sum(axis=0), t_names, "task", "test predictions", "P(A^_a = 1 | T^_t = 1)", caller)
    base_A, base_T = (A_b, T_b) if A_b is not None else (A_, T_)
    _check_nonempty(base_T.sum(axis=0), t_names, "task", base_name, "P(A_a = 1 | T_t = 1)", caller)
    fixed = _mals_base(np.ones((1, len(base_A))), base_A, base_T, n_groups) if A_b is not None else None

    def parts(W):
        y, base = fixed if fixed is not None else _mals_base(W, A_, T_, n_groups)
        n_that = _sums(W, Th)[:, None, :]
        pred = np.where(n_that > 0, _joint(W, Ah, Th) / np.maximum(n_that, 1), np.nan)
        return np.broadcast_to(y, pred.shape), pred - base

    def stat(W):
        y, delta = parts(W)
        terms = y * delta + 0.0
        return terms.sum(axis=(1, 2)) / terms.shape[2], terms  # NaN when a pair is undefined in a resample

    ones = np.ones((1, n))
    value, terms = stat(ones)
    y, delta = parts(ones)
    boot_values, boot_terms = _bootstrap(stat, n, n_boot, seed, terms.shape[1:])
    return _result("MALS", value[0], terms[0], y[0], delta[0], boot_values, boot_terms, n_boot, lvl,
                   a_names, t_names, thresholds, caller)


def _mals_base(W: np.ndarray, A: np.ndarray, T: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """y_at = 1[n_at |A| > n_t] (integers) and P(A_a=1 | T_t=1), NaN where n_t = 0; `B x |A| x |T|`."""
    n_at, n_t = _joint(W, A, T), _sums(W, T)[:, None, :]
    y = (n_at * n_groups > n_t).astype(np.int64)
    base = np.where(n_t > 0, n_at / np.maximum(n_t, 1), np.nan)
    return y, base

"""Subgroup error rates E_j^s (eq. 1 of Balakrishnan et al., docs/papers.md#balakrishnan) with Wilson
intervals, intersectional tables (Fig. 13), the difference E_j^1 - E_j^0, binning of continuous
attributes, and the search-aware guard on population rates."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from searcher.causal import _checks
from searcher.causal._checks import UNIFORM_STRATEGIES, check_uniform
from searcher.causal._intervals import newcombe_interval, wilson_interval
from searcher.errors import ParameterError

__all__ = ["UNIFORM_STRATEGIES", "TreatmentEffect", "ate", "one_hot_bins", "subgroup_error_rates", "uniform_audit_rates"]


def subgroup_error_rates(df: pd.DataFrame, outcome: str, by: str | Sequence[str], *, level: float = 0.95,
                         strategy_col: str = "strategy", allow_biased: bool = False) -> pd.DataFrame:
    """Error rate of every subgroup, with its Wilson interval.

    For a 0/1 covariate `x_j` this is eq. (1) of Balakrishnan et al.::

        E_j^s = sum_i e^i 1(x_j^i = s) / sum_i 1(x_j^i = s)

    and for any column the same average over the rows where the column takes each value. A list
    of columns gives the intersectional groups of Fig. 13 (one row per combination).

    Groups with no rows: combinations that never occur are absent from the table, unless a
    grouping column is a pandas `Categorical`: then every combination of its categories with the
    other columns' values appears, those without rows with `n = 0` and NaN `rate`, `low`, `high`
    (the full grid of Fig. 13; make the columns categorical to get it).

    Search-aware: when `df` has a `strategy_col` column (as campaign trials do) and some rows come
    from a strategy outside `UNIFORM_STRATEGIES` ("random", "sobol", "audit"), the rates would
    describe the search, not the target, and this raises unless `allow_biased=True` (then it warns).

    Args:
        df: one row per evaluated image.
        outcome: column of 0/1 (or boolean) errors `e^i`; no missing values.
        by: a column name, or a list of column names for intersections; no missing values.
        level: coverage of the Wilson intervals.
        strategy_col: column naming the strategy that produced each row, if any.
        allow_biased: compute rates from adaptively searched rows anyway.

    Returns:
        DataFrame indexed by group value(s) (a MultiIndex for several columns), with columns
        `n` (rows), `errors`, `rate` (= errors / n), `low` and `high` (Wilson interval).

    Raises:
        ParameterError: unknown or duplicated columns, an outcome that is not 0/1, missing values in
        `by`, or non-uniform trials without `allow_biased`.

    Example:
        >>> df = pd.DataFrame({"error": [1, 0, 0, 1, 1], "skin": ["dark", "dark", "light", "light", "light"]})
        >>> subgroup_error_rates(df, "error", "skin")[["n", "errors", "rate"]]
               n  errors      rate
        skin
        dark   2       1  0.500000
        light  3       2  0.666667
    """
    caller = "subgroup_error_rates"
    _checks.frame(df, caller)
    check_uniform(df, caller, strategy_col, allow_biased)
    return _rates(df, outcome, by, level, caller)


def _rates(df: pd.DataFrame, outcome: str, by: str | Sequence[str], level: float, caller: str) -> pd.DataFrame:
    lvl = _checks.level(level, caller)
    outcome, keys = _checks.target_and_columns(df, outcome, by, caller, "outcome column", "grouping column")
    e = _checks.binary(df[outcome], f"the outcome column {outcome!r}", caller)
    for key in keys:
        missing = int(df[key].isna().sum())
        if missing:
            raise ParameterError(f"{caller}: the grouping column {key!r} has {missing} missing value(s). Fill them "
                             "(e.g. with an 'unknown' level) or drop those rows first.")
    grouper = [df[k] for k in keys] if len(keys) > 1 else df[keys[0]]
    grouped = pd.Series(e, index=df.index, name=outcome).groupby(grouper, observed=False, sort=True)
    out = pd.DataFrame({"n": grouped.size().astype(np.int64), "errors": grouped.sum().astype(np.int64)})
    n, k = out["n"].to_numpy(), out["errors"].to_numpy()
    out["rate"] = np.where(n > 0, k / np.maximum(n, 1), np.nan)
    out["low"], out["high"] = wilson_interval(k, n, lvl)
    out.columns.name = None
    return out


@dataclass(frozen=True)
class TreatmentEffect:
    """E_j^1 - E_j^0 with its interval (see `ate`).

    Attributes:
        value: rate_treated - rate_control.
        low, high: Newcombe's hybrid score interval of the difference at `level`.
        rate_treated, rate_control: E_j^1 and E_j^0.
        n_treated, n_control, errors_treated, errors_control: the counts behind them.
        level: coverage of the interval.
        method: how the interval was computed.
    """

    value: float
    low: float
    high: float
    rate_treated: float
    rate_control: float
    n_treated: int
    n_control: int
    errors_treated: int
    errors_control: int
    level: float
    method: str = "newcombe hybrid score (Wilson)"


def ate(df: pd.DataFrame, outcome: str, treatment: str, *, treated: Any = None, level: float = 0.95,
        strategy_col: str = "strategy", allow_biased: bool = False) -> TreatmentEffect:
    """Difference of error rates E_j^1 - E_j^0 between treated and control rows (eq. 1 of
    Balakrishnan et al.), with Newcombe's hybrid score interval (method 10 of Newcombe 1998, built
    from the two Wilson intervals; see `newcombe_interval`).

    The difference is the average treatment effect of covariate j on the error only when j was
    assigned at random, independently of everything else that affects the error (an experiment:
    a transect, or a campaign that sets j). On an observational sample it is a correlation, and
    confounders make it differ from the effect; use `logistic_effects` to adjust for the measured ones.

    Args:
        df: one row per evaluated image.
        outcome: column of 0/1 (or boolean) errors.
        treatment: column with the covariate j: 0/1 (or boolean), or any values together with `treated`.
        treated: if given, rows where `treatment == treated` are treated and all others control.
        level: coverage of the interval.
        strategy_col, allow_biased: the search-aware guard of `subgroup_error_rates`.

    Returns:
        A `TreatmentEffect` (`value`, `low`, `high`, the two rates and their counts).

    Raises:
        ParameterError: bad columns or values, `treated` not among the values, or an empty arm.
    """
    caller = "ate"
    _checks.frame(df, caller)
    lvl = _checks.level(level, caller)
    outcome_, treatment_ = _checks.columns(df, [outcome, treatment], caller, "column")
    check_uniform(df, caller, strategy_col, allow_biased)
    e = _checks.binary(df[outcome_], f"the outcome column {outcome_!r}", caller)
    if treated is None:
        t = _checks.binary(df[treatment_], f"the treatment column {treatment_!r}", caller,
                           " Or pass treated=<value> to compare the rows with that value against all others.")
    else:
        col = df[treatment_]
        if not (col == treated).any():
            values = sorted(map(repr, col.dropna().unique()))[:20]
            raise ParameterError(f"{caller}: no row has {treatment_} == {treated!r}. Values present: {', '.join(values)}.")
        if col.isna().any():
            raise ParameterError(f"{caller}: the treatment column {treatment_!r} has {int(col.isna().sum())} missing value(s).")
        t = (col == treated).to_numpy().astype(np.int64)
    n1, n0 = int(t.sum()), int((1 - t).sum())
    if n1 == 0 or n0 == 0:
        arm = "treated" if n1 == 0 else "control"
        raise ParameterError(f"{caller}: the {arm} arm of {treatment_!r} has no rows, so E_j^1 - E_j^0 is undefined.")
    k1, k0 = int(e[t == 1].sum()), int(e[t == 0].sum())
    low, high = newcombe_interval(k1, n1, k0, n0, lvl)
    return TreatmentEffect(value=k1 / n1 - k0 / n0, low=low, high=high, rate_treated=k1 / n1, rate_control=k0 / n0,
                           n_treated=n1, n_control=n0, errors_treated=k1, errors_control=k0, level=lvl)


def one_hot_bins(df: pd.DataFrame, column: str, edges: Sequence[float], labels: Sequence[str]) -> pd.DataFrame:
    """Bins a continuous attribute into 0/1 indicator columns, one per bin (the discretisation of
    Sec. 5.5 of Balakrishnan et al., where each attribute level is a binary covariate).

    Bin i holds the values in `[edges[i], edges[i + 1])`; the last bin also holds `edges[-1]`.

    Args:
        df: the rows.
        column: a numeric column.
        edges: strictly increasing finite bin edges, at least two.
        labels: one distinct name per bin (`len(edges) - 1`), used as the new column names.

    Returns:
        DataFrame with the same index as `df` and one int column (0/1) per label; exactly one 1
        per row. Join it with `df.join(...)`.

    Raises:
        ParameterError: bad edges or labels, a missing value, or a value outside `[edges[0], edges[-1]]`.

    Example:
        >>> df = pd.DataFrame({"hair_length": [0.1, 0.5, 0.9]})
        >>> one_hot_bins(df, "hair_length", [0, 0.35, 1], ["short_hair", "long_hair"])
           short_hair  long_hair
        0           1          0
        1           0          1
        2           0          1
    """
    caller = "one_hot_bins"
    _checks.frame(df, caller)
    (column,) = _checks.columns(df, column, caller, "column")
    try:
        e = np.asarray(edges, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(f"{caller}: edges must be numbers. Got {edges!r}.") from None
    if e.ndim != 1 or len(e) < 2 or not np.isfinite(e).all() or not (np.diff(e) > 0).all():
        raise ParameterError(f"{caller}: edges must be at least two strictly increasing finite numbers. Got {list(np.atleast_1d(e))!r}.")
    labels = list(labels) if not isinstance(labels, str) else [labels]
    if len(labels) != len(e) - 1:
        raise ParameterError(f"{caller}: give one label per bin: {len(e) - 1} for {len(e)} edges. Got {len(labels)} labels: {labels!r}.")
    if len(set(labels)) != len(labels):
        raise ParameterError(f"{caller}: labels must be distinct. Got {labels!r}.")
    x = _checks.numeric(df[column], f"the column {column!r}", caller)
    outside = (x < e[0]) | (x > e[-1])
    if outside.any():
        raise ParameterError(f"{caller}: {int(outside.sum())} value(s) of {column!r} fall outside the edges "
                         f"[{e[0]:g}, {e[-1]:g}] (first: {x[outside][0]:g}). Widen the first or last edge.")
    idx = np.clip(np.searchsorted(e, x, side="right") - 1, 0, len(labels) - 1)
    data = (idx[:, None] == np.arange(len(labels))[None, :]).astype(np.int64)
    return pd.DataFrame(data, index=df.index, columns=labels)


def uniform_audit_rates(trials: pd.DataFrame, outcome: str, by: str | Sequence[str], *, strategy_col: str = "strategy",
                        allow_biased: bool = False, level: float = 0.95) -> pd.DataFrame:
    """Population error rates from campaign trials, refusing trials an adaptive search chose.

    The same table as `subgroup_error_rates`, but the trials must say how they were drawn: the
    `strategy_col` column is required, and every value must be one of `UNIFORM_STRATEGIES`
    ("random", "sobol", "audit"). Bayesian optimisation and other adaptive strategies sample where
    failures are, so their error rates overstate the target's and mix up group differences with
    where the search looked; with `allow_biased=True` they are computed anyway, with a warning.

    Raises:
        ParameterError: no `strategy_col` column, or a non-uniform strategy without `allow_biased`,
            plus everything `subgroup_error_rates` raises.
    """
    caller = "uniform_audit_rates"
    _checks.frame(trials, caller, "trials")
    check_uniform(trials, caller, strategy_col, allow_biased, required=True)
    return _rates(trials, outcome, by, level, caller)

"""Input validation shared by the estimators: every message names the bad column, shape or value
and says what would have been valid."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from searcher.errors import ParameterError

__all__ = ["UNIFORM_STRATEGIES", "check_uniform"]

#: Values of a `strategy` column that mark trials drawn uniformly from the space (non-adaptive), and
#: therefore usable for population rates.
UNIFORM_STRATEGIES = frozenset({"random", "sobol", "audit"})


def frame(df: Any, caller: str, name: str = "df") -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame):
        raise ParameterError(
            f"The {name!r} argument of {caller} must be a pandas DataFrame. Got {type(df).__name__} instead.")
    if len(df) == 0:
        raise ParameterError(f"The {name!r} argument of {caller} is empty (0 rows).")
    return df


def columns(df: pd.DataFrame, cols: str | Sequence[str], caller: str, what: str = "column") -> list[str]:
    """`cols` as a non-empty list of distinct columns of `df`."""
    if isinstance(cols, (str, tuple)) or not isinstance(cols, Iterable):
        cols = [cols]  # one name (pandas allows ints and, for MultiIndex columns, tuples)
    cols = list(cols)
    if not cols:
        raise ParameterError(f"{caller}: give at least one {what}.")
    dup = sorted({c for c in cols if cols.count(c) > 1}, key=str)
    if dup:
        raise ParameterError(f"{caller}: {what}s must be distinct; {dup!r} given more than once.")
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ParameterError(f"{caller}: unknown {what} {missing[0]!r}. Valid columns: {', '.join(map(str, df.columns))}.")
    return cols


def target_and_columns(df: pd.DataFrame, target: Any, others: Any, caller: str, target_what: str,
                       others_what: str) -> tuple[Any, list[Any]]:
    """One column (an outcome, a distance) and the distinct columns that explain it, none of them the same."""
    if isinstance(target, (list, set, dict, pd.Index, np.ndarray)):
        raise ParameterError(f"{caller}: the {target_what} must be one column name. Got {target!r}.")
    (target,) = columns(df, target, caller, target_what)
    cols = columns(df, others, caller, others_what)
    if target in cols:
        raise ParameterError(f"{caller}: the {target_what} {target!r} cannot also be a {others_what}.")
    return target, cols


def binary(values: Any, label: str, caller: str, hint: str = "") -> np.ndarray:
    """A 0/1 (or boolean) vector as int64; any other value, NaN and None included, is an error."""
    s = pd.Series(values) if not isinstance(values, pd.Series) else values
    if s.isna().any():
        k = int(s.isna().sum())
        raise ParameterError(f"{caller}: {label} has {k} missing value(s); it must be 0/1 (or True/False) on every row. "
                         "Drop the rows first (trials whose target gave no answer are not classifier failures).")
    if s.dtype == bool:
        return s.to_numpy(dtype=np.int64)
    try:
        arr = s.to_numpy(dtype=float)
    except (TypeError, ValueError):
        bad = next(v for v in s if not isinstance(v, (bool, np.bool_, int, np.integer, float, np.floating)))
        raise ParameterError(f"{caller}: {label} must be 0/1 (or True/False). Got {bad!r}.{hint}") from None
    ok = (arr == 0) | (arr == 1)
    if not ok.all():
        raise ParameterError(f"{caller}: {label} must be 0/1 (or True/False). Got {s[~ok].iloc[0]!r}.{hint}")
    return arr.astype(np.int64)


def numeric(values: Any, label: str, caller: str) -> np.ndarray:
    """A finite float vector (booleans allowed)."""
    s = pd.Series(values) if not isinstance(values, pd.Series) else values
    try:
        arr = s.to_numpy(dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(f"{caller}: {label} must be numeric (or boolean). Got dtype {s.dtype}.") from None
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ParameterError(f"{caller}: {label} must be finite; {int(bad.sum())} value(s) are NaN or infinite "
                         f"(first: {s[bad].iloc[0]!r}). Drop or fill those rows first.")
    return arr


def level(value: Any, caller: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not 0 < float(value) < 1:
        raise ParameterError(f"The 'level' parameter of {caller} must be a number in (0, 1), e.g. 0.95. Got {value!r} instead.")
    return float(value)


def unit(value: Any, name: str, caller: str) -> float:
    """A number in [0, 1] (a threshold on classifier scores)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not 0 <= value <= 1:
        raise ParameterError(f"The {name!r} parameter of {caller} must be a number in [0, 1]. Got {value!r} instead.")
    return float(value)


def count(value: Any, name: str, caller: str, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or int(value) < minimum:
        raise ParameterError(f"The {name!r} parameter of {caller} must be an int >= {minimum}. Got {value!r} instead.")
    return int(value)


def seed(value: Any, caller: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or int(value) < 0:
        raise ParameterError(f"The 'seed' parameter of {caller} must be an int >= 0. Got {value!r} instead.")
    return int(value)


def percentile_interval(samples: np.ndarray, level_: float, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval over `axis`, ignoring NaN replicates."""
    alpha = (1 - level_) / 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices give NaN, which is what we want
        lo = np.nanquantile(samples, alpha, axis=axis)
        hi = np.nanquantile(samples, 1 - alpha, axis=axis)
    return lo, hi


def check_uniform(df: pd.DataFrame, caller: str, strategy_col: str = "strategy", allow_biased: bool = False,
                  required: bool = False) -> None:
    """Refuses population rates from trials an adaptive search chose.

    A search strategy such as Bayesian optimisation samples where failures are, on purpose, so an
    error rate computed over its trials measures the search, not the target: it is biased upward,
    and differences between groups mix the target's behaviour with where the search looked. Only
    trials whose `strategy_col` is one of `UNIFORM_STRATEGIES` estimate population rates.

    Raises:
        ParameterError: a trial came from another strategy (and `allow_biased` is False), or the column
            is missing while `required`.
    """
    if strategy_col not in df.columns:
        if required:
            raise ParameterError(
                f"{caller}: the trials have no {strategy_col!r} column, so it cannot tell whether they were drawn "
                f"uniformly. Add the strategy each trial came from (one of {sorted(UNIFORM_STRATEGIES)} for an audit), "
                "or call subgroup_error_rates on rows you know to be a uniform sample.")
        return
    values = df[strategy_col]
    bad = sorted({str(v) for v in values[~values.isin(UNIFORM_STRATEGIES)]})
    if not bad:
        return
    n_bad = int((~values.isin(UNIFORM_STRATEGIES)).sum())
    message = (f"{caller}: {n_bad} of {len(df)} trials come from a non-uniform strategy ({', '.join(map(repr, bad))}; "
               f"column {strategy_col!r}). An adaptive search samples failures on purpose, so error rates over its "
               "trials describe the search, not the target's behaviour on a population. Remedies: run an audit "
               f"campaign with strategy 'random' or 'sobol' and use those trials (df[df[{strategy_col!r}].isin("
               f"{sorted(UNIFORM_STRATEGIES)})]); use logistic_effects with every searched parameter as a covariate "
               "(sampling that depends on the covariates alone leaves P(error | covariates) unchanged); or pass "
               "allow_biased=True to describe the searched trials anyway.")
    if not allow_biased:
        raise ParameterError(message)
    warnings.warn(message.split(" Remedies:")[0] + " Computed anyway because allow_biased=True: read the result as "
                  "a description of the searched trials, not a population rate.", UserWarning, stacklevel=3)


def names(given: Iterable[Any] | None, k: int, default_prefix: str, label: str, caller: str) -> list[Any]:
    if given is None:
        return [f"{default_prefix}{i}" for i in range(k)]
    out = list(given)
    if len(out) != k:
        raise ParameterError(f"{caller}: {label} must have {k} entries (one per column). Got {len(out)}.")
    if len(set(out)) != len(out):
        raise ParameterError(f"{caller}: {label} must be distinct. Got {out!r}.")
    return out

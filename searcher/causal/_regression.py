"""Covariate-adjusted effects: L2 logistic regression of the error on attributes with bootstrap
standard errors (eq. 2, Sec. 5.5 and Fig. 15 of Balakrishnan et al., docs/papers.md#balakrishnan),
and ordinary least squares with t intervals (used for identity distances)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats
from threadpoolctl import threadpool_limits

from searcher.causal import _checks
from searcher.errors import ParameterError

__all__ = ["logistic_effects"]


def _fit_logistic(X: np.ndarray, y: np.ndarray, weight: np.ndarray, C: float) -> tuple[np.ndarray, float]:
    """The fit on rows `X`, `y` that stand for `weight` identical rows each (scikit-learn divides
    the penalty by the summed weight, so this is the fit on the rows written out)."""
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=C, solver="newton-cholesky", tol=1e-8, max_iter=200)
    model.fit(X, y, sample_weight=weight)
    return model.coef_[0].copy(), float(model.intercept_[0])


def _patterns(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (covariates, outcome) rows, and which of them each row is: binned attributes
    make a few thousand at most, so a fit on them, weighted by their counts, costs the same at
    100,000 rows as at 1,000."""
    rows = np.column_stack([X, y])
    order = np.lexsort(rows.T[::-1])  # one sort of all rows (numpy's unique along an axis takes 5x longer)
    ranked = rows[order]
    first = np.r_[True, (ranked[1:] != ranked[:-1]).any(axis=1)]
    which = np.empty(len(rows), np.intp)
    which[order] = np.cumsum(first) - 1
    distinct = ranked[first]
    return distinct[:, :-1], distinct[:, -1].astype(y.dtype), which


def _bootstrap(X: np.ndarray, y: np.ndarray, which: np.ndarray, n_boot: int, C: float, seed: int,
               caller: str) -> tuple[np.ndarray, int]:
    """`n_boot` bootstrap fits (coefficients, then intercept; NaN where skipped) of the rows that are
    patterns `which` of (`X`, `y`), and how many were skipped for a single outcome value."""
    rng = np.random.default_rng(seed)
    boots = np.full((n_boot, X.shape[1] + 1), np.nan)
    n = len(which)
    skipped = 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for b in range(n_boot):
            counts = np.bincount(which[rng.integers(0, n, n)], minlength=len(y))
            drawn = counts > 0
            yb = y[drawn]
            if yb.min() == yb.max():
                skipped += 1
                continue
            cb, ib = _fit_logistic(X[drawn], yb, counts[drawn], C)
            boots[b, :-1], boots[b, -1] = cb, ib
    if caught:
        kinds = sorted({w.category.__name__ for w in caught})
        warnings.warn(f"{caller}: {len(caught)} warning(s) ({', '.join(kinds)}) while fitting the bootstrap "
                      f"replicates; first: {caught[0].message}", UserWarning, stacklevel=3)
    if skipped:
        warnings.warn(f"{caller}: {skipped} of {n_boot} bootstrap replicates had a single outcome value and were left "
                      "out of the standard errors.", UserWarning, stacklevel=3)
    return boots, skipped


def logistic_effects(df: pd.DataFrame, outcome: str, covariates: str | Sequence[str], n_boot: int = 1000,
                     C: float = 1.0, seed: int = 0, *, level: float = 0.95) -> pd.DataFrame:
    """Covariate-adjusted effects of attributes on the error: an L2-regularised logistic
    regression of the 0/1 error on the covariates, with bootstrap standard errors.

    The logistic form of eq. (2) of Balakrishnan et al.::

        logit P(e^i = 1) = beta_0 + sum_j beta_j x_j^i

    fitted as in their Sec. 5.5 (scikit-learn's `LogisticRegression`, L2 penalty, `C = 1`;
    the intercept is not penalised), with `n_boot` bootstrap resamples of the rows giving the
    standard deviations of Fig. 15. `beta_j` is the change in the log odds of an error for a unit
    change of `x_j` with the other covariates held fixed; it estimates the causal effect of `x_j`
    when the model is right, every relevant attribute is a covariate (no hidden confounder), and
    no covariate is itself caused by `x_j` (Sec. 4.2).

    Covariates are used as they are: 0/1 indicators stay 0/1 (see `one_hot_bins`) and continuous
    columns are not standardised, so coefficients are per unit of each column (and the penalty
    depends on the units). One indicator per level, all of them included, is what the paper does;
    the penalty keeps that identifiable.

    Adaptively searched trials are allowed here (unlike `subgroup_error_rates`): a search that
    chooses where to sample by the covariates alone leaves `P(e | x)` unchanged, so a well-specified
    conditional model is not biased by it. That holds when every searched parameter that affects
    the error is a covariate; a searched parameter left out becomes a confounder.

    Rows are fitted as their distinct (covariates, outcome) patterns weighted by their counts, in
    the fit and in each bootstrap replicate (the replicate's draws counted per pattern): the same
    fit, but one whose cost grows with the patterns, not the rows.

    Bootstrap replicates in which the resampled errors are all 0 or all 1 cannot be fitted; they
    are left out, counted in `attrs["n_boot_used"]`, and a warning says how many.

    Args:
        df: one row per evaluated image.
        outcome: column of 0/1 (or boolean) errors; both values must occur.
        covariates: numeric or boolean columns, finite.
        n_boot: bootstrap resamples (0 for none: `std`, `low`, `high` are NaN).
        C: inverse regularisation strength, > 0 (`numpy.inf` for no penalty).
        seed: seeds the resampling.
        level: coverage of the percentile intervals `low`, `high`.

    Returns:
        DataFrame indexed by covariate (index name "covariate") with `coef` (fit on all rows),
        `std` (standard deviation over bootstrap fits), `low` and `high` (percentile bootstrap
        interval). `attrs` holds `intercept`, `intercept_std`, `n`, `n_boot`, `n_boot_used`, `C`, `level`.

    Raises:
        ParameterError: unknown columns, non-numeric or missing covariates, an outcome that is not 0/1
        or has a single value, or bad `n_boot`, `C`, `seed`, `level`.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"short_hair": rng.integers(0, 2, 2000), "dark_skin": rng.integers(0, 2, 2000)})
        >>> df["error"] = (rng.random(2000) < np.where(df["short_hair"] == 1, 0.4, 0.1)).astype(int)
        >>> effects = logistic_effects(df, "error", ["short_hair", "dark_skin"], n_boot=100)
        >>> list(effects.columns)
        ['coef', 'std', 'low', 'high']
    """
    caller = "logistic_effects"
    _checks.frame(df, caller)
    outcome, cols = _checks.target_and_columns(df, outcome, covariates, caller, "outcome column", "covariate")
    X = np.column_stack([_checks.numeric(df[c], f"the covariate {c!r}", caller) for c in cols])
    y = _checks.binary(df[outcome], f"the outcome column {outcome!r}", caller)
    n_boot = _checks.count(n_boot, "n_boot", caller)
    rng_seed = _checks.seed(seed, caller)
    lvl = _checks.level(level, caller)
    if isinstance(C, bool) or not isinstance(C, (int, float, np.integer, np.floating)) or not float(C) > 0 or np.isnan(C):
        raise ParameterError(f"The 'C' parameter of {caller} must be a number > 0 (numpy.inf for no penalty). Got {C!r} instead.")
    C = float(C)
    if y.min() == y.max():
        raise ParameterError(f"{caller}: the outcome column {outcome!r} is {int(y[0])} on every row; a regression of the "
                         "error needs both errors and successes.")
    Xp, yp, which = _patterns(X, y)
    with threadpool_limits(1):  # small solves: threads only wait on each other (20x slower on 2 busy cores)
        coef, intercept = _fit_logistic(Xp, yp, np.bincount(which, minlength=len(yp)), C)
        boots, skipped = _bootstrap(Xp, yp, which, n_boot, C, rng_seed, caller)
    used = n_boot - skipped
    if used >= 2:
        std = np.nanstd(boots, axis=0, ddof=1)
        low, high = _checks.percentile_interval(boots, lvl)
    else:
        std = low = high = np.full(len(cols) + 1, np.nan)
    out = pd.DataFrame({"coef": coef, "std": std[:-1], "low": low[:-1], "high": high[:-1]},
                       index=pd.Index(cols, name="covariate"))
    out.attrs.update(intercept=intercept, intercept_std=float(std[-1]), n=len(y), n_boot=n_boot, n_boot_used=used, C=C, level=lvl)
    return out


def ols_effects(X: np.ndarray, y: np.ndarray, cols: list[str], level: float, caller: str) -> pd.DataFrame:
    """OLS with an intercept; classical standard errors and t intervals."""
    n, p = X.shape
    if n <= p + 1:
        raise ParameterError(f"{caller}: {n} rows are too few for {p} attribute(s) and an intercept; need at least {p + 2}.")
    D = np.column_stack([np.ones(n), X])
    rank = np.linalg.matrix_rank(D)
    if rank < p + 1:
        raise ParameterError(f"{caller}: the attribute columns {cols!r} are collinear (with each other or a constant); "
                         f"the design has rank {rank} < {p + 1}. Drop a redundant column.")
    beta, *_ = np.linalg.lstsq(D, y, rcond=None)
    resid = y - D @ beta
    dof = n - p - 1
    sigma2 = float(resid @ resid) / dof
    cov = sigma2 * np.linalg.inv(D.T @ D)
    se = np.sqrt(np.diag(cov))
    tq = stats.t.ppf(1 - (1 - level) / 2, dof)
    with np.errstate(divide="ignore", invalid="ignore"):
        tval = beta / se
    p_value = 2 * stats.t.sf(np.abs(tval), dof)
    out = pd.DataFrame({"coef": beta[1:], "std": se[1:], "low": beta[1:] - tq * se[1:], "high": beta[1:] + tq * se[1:],
                        "p_value": p_value[1:]}, index=pd.Index(cols, name="attribute"))
    out.attrs.update(intercept=float(beta[0]), intercept_std=float(se[0]), n=n, dof=dof, residual_std=float(np.sqrt(sigma2)),
                     level=level)
    return out

"""Wilson and Newcombe intervals against statsmodels; the package's docstring examples run."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from searcher import causal
from searcher.causal import newcombe_interval, wilson_interval


@pytest.mark.parametrize("level", [0.8, 0.95, 0.99])
def test_wilson_matches_statsmodels(level):
    """Every (k, n) with n <= 40, plus some large counts, to 1e-12."""
    ks, ns = zip(*[(k, n) for n in range(1, 41) for k in range(n + 1)] + [(7, 10_000), (9_990, 10_000), (123, 456)])
    low, high = wilson_interval(np.array(ks), np.array(ns), level)
    ref_low, ref_high = proportion_confint(np.array(ks), np.array(ns), alpha=1 - level, method="wilson")
    np.testing.assert_allclose(low, ref_low, rtol=0, atol=1e-12)
    np.testing.assert_allclose(high, ref_high, rtol=0, atol=1e-12)


def test_wilson_scalar_edges_and_empty():
    """Scalars give floats; k = 0 and k = n give exact 0 and 1; n = 0 gives NaN."""
    low, high = wilson_interval(3, 10)
    assert isinstance(low, float) and isinstance(high, float)
    assert (round(low, 4), round(high, 4)) == (0.1078, 0.6032)
    assert wilson_interval(0, 25)[0] == 0.0
    assert wilson_interval(25, 25)[1] == 1.0
    assert all(np.isnan(wilson_interval(0, 0)))
    low, high = wilson_interval([0, 1], [0, 2])
    assert np.isnan(low[0]) and np.isnan(high[0]) and 0 < low[1] < 0.5 < high[1] < 1


@pytest.mark.parametrize(("k", "n", "level", "match"), [
    (5, 3, 0.95, "must not exceed n"),
    (-1, 3, 0.95, "whole numbers >= 0"),
    (1.5, 3, 0.95, "whole numbers >= 0"),
    (1, float("nan"), 0.95, "whole numbers >= 0"),
    (1, 3, 1.0, "'level' parameter"),
    (1, 3, 95, "'level' parameter"),
])
def test_wilson_rejects_bad_input(k, n, level, match):
    with pytest.raises(ValueError, match=match):
        wilson_interval(k, n, level)


@pytest.mark.parametrize(("k1", "n1", "k0", "n0"), [(30, 100, 20, 100), (0, 40, 0, 35), (12, 12, 3, 50), (1, 7, 5, 9), (400, 1000, 380, 1200)])
def test_newcombe_matches_statsmodels(k1, n1, k0, n0):
    low, high = newcombe_interval(k1, n1, k0, n0)
    ref = confint_proportions_2indep(k1, n1, k0, n0, method="newcomb", compare="diff")
    np.testing.assert_allclose([low, high], ref, rtol=0, atol=1e-12)


def test_docstring_examples_run():
    """The `>>>` examples in the package's docstrings are correct."""
    for name in ["_intervals", "_subgroups", "_regression", "_biasamp", "_verification", "_sensitivity"]:
        module = importlib.import_module(f"searcher.causal.{name}")
        result = doctest.testmod(module, extraglobs={"np": np, "pd": pd}, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0, name


def test_public_names():
    """The names users and the README rely on are exported."""
    for name in ["wilson_interval", "subgroup_error_rates", "ate", "one_hot_bins", "logistic_effects", "score_sensitivity",
                 "classification_sensitivity", "bias_amp", "bias_amp_mals", "verification_rates", "threshold_at_fmr",
                 "fnmr_at_threshold", "identity_distance_effects", "uniform_audit_rates"]:
        assert name in causal.__all__ and callable(getattr(causal, name))

"""Score and classification sensitivity (eqs. 3 and 6 of Denton et al.), flip rates, the
near-boundary restriction and the interpolation sanity check, on hand-computable sweeps."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from searcher.causal import (
    classification_sensitivity,
    interpolation_check,
    interpolation_codes,
    score_sensitivity,
)

# f(G(z + lambda d)) for five images at lambda = -1, -0.5, 0, 0.5, 1
SCORES = {
    "a": [0.10, 0.15, 0.20, 0.30, 0.45],
    "b": [0.30, 0.35, 0.40, 0.55, 0.70],
    "c": [0.50, 0.55, 0.60, 0.62, 0.64],
    "d": [0.70, 0.78, 0.80, 0.85, 0.90],
    "e": [0.35, 0.45, 0.55, 0.45, 0.35],
}
LAMBDAS = np.linspace(-1, 1, 5)


@pytest.fixture
def sweep():
    rows = [(img, lam, s) for img, scores in SCORES.items() for lam, s in zip(LAMBDAS, scores)]
    return pd.DataFrame(rows, columns=["image", "lambda", "score"]).sample(frac=1, random_state=0)  # order must not matter


def diffs(lam: float, images=SCORES) -> np.ndarray:
    j = list(LAMBDAS).index(lam)
    return np.array([SCORES[i][j] - SCORES[i][2] for i in images])


def test_score_sensitivity_by_hand_and_scipy(sweep):
    out = score_sensitivity(sweep)
    assert out.index.tolist() == LAMBDAS.tolist() and out.index.name == "lambda"
    assert (out["n"] == 5).all()
    assert out.loc[0.0, "sensitivity"] == 0
    assert out.loc[1.0, "sensitivity"] == pytest.approx(np.mean(diffs(1.0)))  # (0.25 + 0.30 + 0.04 + 0.10 - 0.20) / 5
    assert out.loc[1.0, "sensitivity"] == pytest.approx(0.098)
    ci = stats.ttest_1samp(diffs(-0.5), 0).confidence_interval(0.95)
    assert (out.loc[-0.5, "low"], out.loc[-0.5, "high"]) == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert out.loc[-0.5, "std"] == pytest.approx(np.std(diffs(-0.5), ddof=1))


def test_near_boundary_restriction(sweep):
    """0.3 < f(G(z)) < 0.7 keeps b (0.40), c (0.60), e (0.55); a (0.20) and d (0.80) leave."""
    out = score_sensitivity(sweep, near_boundary=True)
    assert (out["n"] == 3).all()
    assert out.loc[1.0, "sensitivity"] == pytest.approx(np.mean(diffs(1.0, ["b", "c", "e"])))
    narrow = score_sensitivity(sweep, near_boundary=(0.5, 0.58))
    assert (narrow["n"] == 1).all() and narrow[["low", "high"]].isna().all().all()  # one image: no interval
    with pytest.raises(ValueError, match="near-boundary restriction leaves nothing"):
        score_sensitivity(sweep, near_boundary=(0.41, 0.54))


def test_classification_sensitivity_and_flip_rates(sweep):
    """At c = 0.5: lambda = 0 predictions a0 b0 c1 d1 e1; at lambda = 1: a0 b1 c1 d1 e0."""
    out = classification_sensitivity(sweep)
    row = out.loc[1.0]
    assert row["sensitivity"] == pytest.approx(0.0)  # b flips up, e flips down
    assert (row["n0"], row["flips_0to1"], row["rate_0to1"]) == (2, 1, 0.5)
    assert (row["n1"], row["flips_1to0"]) == (3, 1) and row["rate_1to0"] == pytest.approx(1 / 3)
    low, high = proportion_confint(1, 3, method="wilson")
    assert (row["low_1to0"], row["high_1to0"]) == pytest.approx((low, high), abs=1e-12)
    row = out.loc[-1.0]  # a0 b0 c1 d1 e0: only e flips down
    assert row["sensitivity"] == pytest.approx(-0.2) and row["flips_0to1"] == 0 and row["flips_1to0"] == 1
    assert row["low_0to1"] == 0.0
    # S restricted to Z_0 is rate_0to1; to Z_1 it is -rate_1to0
    near = classification_sensitivity(sweep, near_boundary=True)  # b, c, e
    assert near.loc[1.0, "n0"] == 1 and near.loc[1.0, "rate_0to1"] == 1.0
    higher = classification_sensitivity(sweep, threshold=0.61)
    assert higher.loc[0.0, "n1"] == 1  # only d is >= 0.61 at lambda = 0


def test_unbalanced_sweep_uses_the_images_present(sweep):
    partial = sweep[~((sweep["image"] == "a") & (sweep["lambda"] == 1.0))]
    out = score_sensitivity(partial)
    assert out.loc[1.0, "n"] == 4 and out.loc[0.5, "n"] == 5
    assert out.loc[1.0, "sensitivity"] == pytest.approx(np.mean(diffs(1.0, ["b", "c", "d", "e"])))


def test_custom_column_names(sweep):
    renamed = sweep.rename(columns={"image": "z_id", "lambda": "step", "score": "p_smile"})
    out = score_sensitivity(renamed, id_col="z_id", lambda_col="step", score_col="p_smile")
    pd.testing.assert_frame_equal(out, score_sensitivity(sweep))


@pytest.mark.parametrize(("mutate", "match"), [
    (lambda df: df[~((df["image"] == "c") & (df["lambda"] == 0))], r"1 image\(s\) have no lambda = 0 row \(first: \['c'\]\)"),
    (lambda df: df[df["lambda"] != 0], "no row has lambda = 0"),
    (lambda df: pd.concat([df, df.iloc[:1]]), "more than one row at lambda"),
    (lambda df: df.assign(score=df["score"] * 10), r"scores must be classifier outputs in \[0, 1\]"),
    (lambda df: df.assign(score=df["score"].where(df.index != 3)), "must be finite"),
    (lambda df: df.drop(columns="lambda"), "unknown column 'lambda'"),
])
def test_rejects_bad_sweeps(sweep, mutate, match):
    with pytest.raises(ValueError, match=match):
        score_sensitivity(mutate(sweep))


def test_rejects_bad_parameters(sweep):
    with pytest.raises(ValueError, match="'threshold' parameter"):
        classification_sensitivity(sweep, threshold=1.5)
    with pytest.raises(ValueError, match="'near_boundary' parameter"):
        score_sensitivity(sweep, near_boundary=(0.7, 0.3))
    with pytest.raises(ValueError, match="'near_boundary' parameter"):
        score_sensitivity(sweep, near_boundary="yes")


def test_interpolation_sanity_check():
    """Codes lie on segments between same-class codes; a classifier linear in z is perfectly consistent."""
    rng = np.random.default_rng(0)
    z = rng.normal(size=(60, 8))
    w = rng.normal(size=8)
    labels = (z @ w > 0).astype(int)
    codes, plan = interpolation_codes(z, labels, 200, seed=1)
    assert codes.shape == (400, 8) and plan["label"].value_counts().to_dict() == {0: 200, 1: 200}
    assert (plan["start"] != plan["end"]).all() and plan["t"].between(0, 1).all()
    assert (labels[plan["start"]] == plan["label"]).all() and (labels[plan["end"]] == plan["label"]).all()
    expected = (1 - plan["t"].to_numpy())[:, None] * z[plan["start"]] + plan["t"].to_numpy()[:, None] * z[plan["end"]]
    np.testing.assert_allclose(codes, expected)
    score = 1 / (1 + np.exp(-(codes @ w)))  # linear decision boundary: the classes are convex
    out = interpolation_check(plan.assign(score=score))
    assert out["rate"].tolist() == [1.0, 1.0] and out["n"].tolist() == [200, 200]
    flipped = interpolation_check(plan.assign(score=np.where(np.arange(400) % 10 == 0, 1 - score, score)))
    assert flipped["rate"].tolist() == [0.9, 0.9]
    again, _ = interpolation_codes(z, labels, 200, seed=1)
    np.testing.assert_array_equal(codes, again)
    with pytest.raises(ValueError, match="no class has two codes"):
        interpolation_codes(z[:1], labels[:1], 10)
    with pytest.raises(ValueError, match="one entry per code"):
        interpolation_codes(z, labels[:-1], 10)

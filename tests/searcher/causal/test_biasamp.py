"""BiasAmp-> and BiasAmp_MALS against the worked examples of Wang and Russakovsky (Secs. 3.2 and
4.1), exact independence, base correlations from training labels, thresholds, and empty groups."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from searcher.causal import bias_amp, bias_amp_mals, calibrated_predictions


def dataset(groups):
    """Disjoint groups; each entry (n with T = 0, n with T = 1, prediction rule: 'correct', 0 or 1).
    Attributes are always predicted correctly, as in the paper's examples."""
    A, T, T_hat = [], [], []
    for g, (n0, n1, rule) in enumerate(groups):
        for t, count in ((0, n0), (1, n1)):
            A += [np.eye(len(groups), dtype=int)[g]] * count
            T += [t] * count
            T_hat += [t if rule == "correct" else rule] * count
    return np.array(A), np.array(T)[:, None], np.array(T_hat)[:, None]


# Shortcoming 1: A1 10/40, A2 40/10, A3 10/20 (T = 0 / T = 1); correct on A1, T^ = 0 on A2, T^ = 1 on A3.
SHORT1 = [(10, 40, "correct"), (40, 10, 0), (10, 20, 1)]
# Shortcoming 2: A1 60/30, A2 10/20; T^ = 0 on A1, T^ = 1 on A2.
SHORT2 = [(60, 30, 0), (10, 20, 1)]


def test_shortcoming_1_worked_example():
    A, T, T_hat = dataset(SHORT1)
    mals = bias_amp_mals(A, T, A, T_hat, n_boot=0)
    assert mals.y.to_numpy().ravel().tolist() == [1, 0, 0]  # "y1 = 1, y2 = 0, y3 = 0"
    assert mals.value == pytest.approx(0.0, abs=1e-15)  # "Eqn. 1 would measure bias amplification as 0"
    at = bias_amp(A, T, T_pred=T_hat, direction="AT", n_boot=0)
    assert round(at.value, 4) == 0.1778  # Sec. 4.1: ".1778 in shortcoming 1"
    assert at.value == pytest.approx((0.2 + 1 / 3) / 3)
    assert at.y.to_numpy().ravel().tolist() == [1, -1, 1]
    np.testing.assert_allclose(at.per_pair.to_numpy().ravel(), [0, 0.2, 1 / 3])
    ta = bias_amp(A, T, A_pred=A, direction="TA", n_boot=0)
    assert ta.value == 0.0  # "BiasAmp T->A is 0 in both"


def test_shortcoming_1_two_group_miscalibration():
    """Only A1 and A2: 40/40 - 40/50 = 0.2 versus 50/60 - 40/50 = 0.033."""
    A, T, T_hat = dataset(SHORT1[:2])
    assert bias_amp_mals(A, T, A, T_hat, n_boot=0).value == pytest.approx(0.2)
    A, T, T_hat = dataset([(10, 40, 1), (40, 10, "correct")])
    value = bias_amp_mals(A, T, A, T_hat, n_boot=0).value
    assert value == pytest.approx(50 / 60 - 40 / 50) and round(value, 3) == 0.033


def test_shortcoming_2_worked_example():
    A, T, T_hat = dataset(SHORT2)
    mals = bias_amp_mals(A, T, A, T_hat, n_boot=0)
    assert mals.y.to_numpy().ravel().tolist() == [1, 0]  # y1 = 1[30/50 > 1/2] = 1, y2 = 0
    assert mals.value == pytest.approx(-0.6)  # 0/30 - 30/50
    at = bias_amp(A, T, T_pred=T_hat, direction="AT", n_boot=0)
    assert at.y.to_numpy().ravel().tolist() == [-1, 1]  # base rates accounted for: A2 goes with T = 1
    assert round(at.value, 4) == 0.3333 and at.value == pytest.approx(1 / 3)
    assert bias_amp(A, T, A_pred=A, direction="TA", n_boot=0).value == 0.0


def test_task_to_attribute_direction():
    """T -> A compares P(A^_a | T_t = 1) with P(A_a | T_t = 1): over-predicting group 0 on T = 1 images."""
    A, T, _ = dataset([(10, 40, "correct"), (40, 10, "correct")])
    A_hat = A.copy()
    A_hat[(T[:, 0] == 1) & (A[:, 1] == 1)] = [1, 0]  # the 10 T = 1 images of group 1 predicted as group 0
    ta = bias_amp(A, T, A_pred=A_hat, direction="TA", n_boot=0)
    # group 0 (positively correlated): 50/50 - 40/50 = +0.2; group 1 (negative): -(0/50 - 10/50) = +0.2
    np.testing.assert_allclose(ta.per_pair.to_numpy().ravel(), [0.2, 0.2])
    assert ta.value == pytest.approx(0.2)
    assert bias_amp(A, T, T_pred=T, direction="AT", n_boot=0).value == 0.0  # tasks predicted perfectly


def test_exact_independence_from_integer_counts():
    """15 images, 5 in group 0 and 9 with T = 1, 3 of them in group 0: 3/15 == (5/15)(9/15) exactly,
    though the floating-point products differ by 3e-17 (the authors' code reads that as positive)."""
    assert 3 / 15 - (5 / 15) * (9 / 15) != 0
    A, T, _ = dataset([(2, 3, "correct"), (4, 6, "correct")])
    T_hat = np.ones_like(T)
    result = bias_amp(A, T, T_pred=T_hat, direction="AT", n_boot=0)
    assert result.y.to_numpy().ravel().tolist() == [0, 0]
    assert result.value == 0.0 and (result.per_pair.to_numpy() == 0).all()
    assert (result.delta.to_numpy() > 0).all()  # the predictions did move; independence makes it count 0


def test_base_correlations_from_training_labels():
    """y_at from the training pairs flips the sign of a pair whose test correlation is reversed."""
    A, T, T_hat = dataset(SHORT2)
    A_tr, T_tr, _ = dataset([(30, 60, "correct"), (20, 10, "correct")])  # training: A1 goes with T = 1
    at = bias_amp(A, T, T_pred=T_hat, direction="AT", A_train=A_tr, T_train=T_tr, n_boot=0)
    assert at.y.to_numpy().ravel().tolist() == [1, -1]
    assert at.value == pytest.approx(-1 / 3)
    mals = bias_amp_mals(A, T, A, T_hat, A_train=A_tr, T_train=T_tr, n_boot=0)
    # y from training: P(A1 | T=1) = 60/70 > 1/2; Delta = P(A^1 | T^=1) - 60/70 = 0/30 - 6/7
    assert mals.y.to_numpy().ravel().tolist() == [1, 0] and mals.value == pytest.approx(-6 / 7)


def test_names_shapes_and_several_tasks():
    A, T, T_hat = dataset(SHORT1)
    A_df = pd.DataFrame(A, columns=["g1", "g2", "g3"])
    T2 = pd.DataFrame({"paint": T[:, 0], "flip": 1 - T[:, 0]})
    T2_hat = pd.DataFrame({"paint": T_hat[:, 0], "flip": 1 - T[:, 0]})
    result = bias_amp(A_df, T2, T_pred=T2_hat, direction="AT", n_boot=0)
    assert result.per_pair.index.tolist() == ["g1", "g2", "g3"] and result.per_pair.columns.tolist() == ["paint", "flip"]
    assert result.per_pair.shape == (3, 2) and (result.per_pair["flip"] == 0).all()
    assert result.value == pytest.approx(result.per_pair.to_numpy().mean())
    assert result.value == pytest.approx(0.1778 / 2, abs=1e-4)
    one_d = bias_amp(A, T[:, 0], T_pred=T_hat[:, 0], direction="AT", n_boot=0)  # 1-D = one task
    assert one_d.value == pytest.approx((0.2 + 1 / 3) / 3)


def test_bootstrap_intervals_are_seeded_and_bracket():
    A, T, T_hat = dataset(SHORT1)
    A_tr, T_tr = A.copy(), T.copy()
    a = bias_amp(A, T, T_pred=T_hat, direction="AT", A_train=A_tr, T_train=T_tr, n_boot=300, seed=3)
    b = bias_amp(A, T, T_pred=T_hat, direction="AT", A_train=A_tr, T_train=T_tr, n_boot=300, seed=3)
    assert (a.low, a.high) == (b.low, b.high) and a.n_boot_used == 300
    assert a.low < a.value < a.high and 0.05 < a.low and a.high < 0.3
    assert (a.per_pair_low.to_numpy() <= a.per_pair.to_numpy() + 1e-12).all()
    assert (a.per_pair.to_numpy() <= a.per_pair_high.to_numpy() + 1e-12).all()
    mals = bias_amp_mals(A, T, A, T_hat, n_boot=200, seed=0)
    assert np.isfinite([mals.low, mals.high]).all() and mals.low <= mals.value <= mals.high


def test_thresholds_on_scores():
    A, T, T_hat = dataset(SHORT2)
    scores = np.where(T_hat == 1, 0.9, 0.2) + np.linspace(0, 0.05, len(T))[:, None]
    fixed = bias_amp(A, T, T_pred=scores, direction="AT", threshold=0.5, n_boot=0)
    assert fixed.value == pytest.approx(1 / 3) and fixed.thresholds["T"].tolist() == [0.5]
    # calibrated: p = 50/120 of the test labels -> the 50 highest scores are positive
    calibrated = bias_amp(A, T, T_pred=scores, direction="AT", threshold="calibrated", n_boot=0)
    assert calibrated.thresholds["T"].iloc[0] == pytest.approx(np.sort(scores[:, 0])[-50])
    both = bias_amp_mals(A, T, A * 0.8, scores, threshold={"A": 0.5, "T": "calibrated"}, n_boot=0)
    assert set(both.thresholds) == {"A", "T"}
    with pytest.raises(ValueError, match="T_pred must be 0/1. Got 0.2 at row 0.*pass threshold="):
        bias_amp(A, T, T_pred=scores, direction="AT")
    with pytest.raises(ValueError, match="'threshold' parameter"):
        bias_amp(A, T, T_pred=scores, direction="AT", threshold="median")


def test_calibrated_predictions_counts_and_ties():
    scores = np.array([[0.9, 0.1], [0.5, 0.5], [0.5, 0.5], [0.2, 0.5], [0.1, 0.9]])
    pred, thr = calibrated_predictions(scores, [0.4, 0.0])
    assert pred[:, 0].tolist() == [1, 1, 0, 0, 0]  # round(5 * 0.4) = 2: the tie at 0.5 goes to the earlier row
    assert pred[:, 1].sum() == 0 and thr[1] == np.inf and thr[0] == 0.5


def test_empty_groups_are_errors_not_silent_drops():
    A, T, T_hat = dataset(SHORT2)
    A3 = np.column_stack([A, np.zeros(len(A), dtype=int)])
    with pytest.raises(ValueError, match=r"group column 'a2' \(column 2\) has no positive example in the test labels"):
        bias_amp(A3, T, T_pred=T_hat, direction="AT", n_boot=0)
    A_tr, T_tr, _ = dataset([(30, 60, "correct"), (20, 10, "correct")])
    with pytest.raises(ValueError, match="task column 't0' .* training labels"):
        bias_amp(A, T, T_pred=T_hat, direction="AT", A_train=A_tr, T_train=np.zeros_like(T_tr), n_boot=0)
    with pytest.raises(ValueError, match="test predictions"):
        bias_amp_mals(A, T, A, np.zeros_like(T), n_boot=0)


def test_rare_group_in_bootstrap_is_counted():
    """A group of 2 images vanishes from some resamples: those are left out, counted, and warned."""
    A, T, T_hat = dataset([(40, 40, "correct"), (1, 1, 0)])
    with pytest.warns(UserWarning, match="left a group or task without examples"):
        result = bias_amp(A, T, T_pred=T_hat, direction="AT", n_boot=200, seed=0)
    assert 150 < result.n_boot_used < 200 and np.isfinite(result.low)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"direction": "A->T"}, "'direction' parameter .* 'AT'"),
    ({"direction": "TA"}, "A_pred is required"),
    ({"direction": "AT", "T_pred": np.ones((5, 1))}, "T_pred must have 80 rows"),
    ({"direction": "AT", "T_pred": np.ones((80, 2))}, "T_pred must have 1 columns"),
    ({"direction": "AT", "T_pred": np.ones((80, 1)), "A_train": np.ones((4, 2))}, "give both A_train and T_train"),
    ({"direction": "AT", "T_pred": np.ones((80, 1)), "n_boot": 1.5}, "'n_boot' parameter"),
])
def test_rejects_bad_input(kwargs, match):
    A, T, _ = dataset([(20, 20, "correct"), (20, 20, "correct")])
    with pytest.raises(ValueError, match=match):
        bias_amp(A, T, **kwargs)


def test_rejects_non_binary_labels():
    A, T, T_hat = dataset(SHORT2)
    with pytest.raises(ValueError, match="A must be 0/1. Got 2 at row 0, column 0"):
        bias_amp(A * 2, T, T_pred=T_hat, direction="AT")
    with pytest.raises(ValueError, match="NaN"):
        bias_amp(A, np.where(np.arange(len(T))[:, None] == 3, np.nan, T), T_pred=T_hat, direction="AT")

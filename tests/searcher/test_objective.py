"""`searcher.objective`: the only judge of a prediction, the failure threshold, and target errors
that are never classifier failures — checked directly, with fakes that need no model."""

import math

import numpy as np
import pytest

from searcher.errors import ParameterError
from searcher.objective import FAILURE, Judge, Objective, ObjectiveSpec, Outcome, is_failure
from searcher.testing import CallableTarget, FakeGenerator
from targets.base import Predictions

SMILE = CallableTarget(lambda images: ["no"] * len(images), task="classify", labels=("no", "yes"), truth=("brightness", 0.5))


def test_the_threshold_is_one_place():
    """A loss at or above FAILURE is a failure, below it a success; no loss is neither."""
    assert FAILURE == 0.5
    assert is_failure(0.5) is True and is_failure(0.4999) is False and is_failure(None) is None
    assert Outcome({}, 1.0).failure and not Outcome({}, 0.0).failure and Outcome({}, None).failure is None


def test_detect_loss_is_a_missed_face():
    """Detect targets: 1 when no face was found, else 0; the truth is not read."""
    judge = Judge.of(CallableTarget(lambda images: [True] * len(images)))
    assert judge(True, None, {}) == (0.0, None)
    assert judge(False, 0.9, {}) == (1.0, None)


def test_zero_one_loss_compares_with_the_truth_side_of_the_cut():
    """Classify targets: truth >= cut is labels[1], below it labels[0]; the loss is 1 when the label differs."""
    judge = Judge.of(SMILE)
    assert (judge.truth_column, judge.cut, judge.labels) == ("brightness", 0.5, ("no", "yes"))
    assert judge("yes", 0.9, {"brightness": 0.9}) == (0.0, None)
    assert judge("no", 0.9, {"brightness": 0.9}) == (1.0, None)
    assert judge("no", 0.9, {"brightness": 0.1}) == (0.0, None)
    assert judge("yes", 0.9, {"brightness": 0.1}) == (1.0, None)


def test_the_right_label_is_the_truth_side_of_the_cut_and_none_when_ambiguous():
    """What an export labels an image with: never the target's answer."""
    judge = Judge.of(SMILE, margin=0.1)
    assert [judge.true_label({"brightness": b}) for b in (0.1, 0.55, 0.61, 1.0)] == ["no", None, "yes", "yes"]
    assert Judge("detect").true_label({}) is True


def test_the_margin_excludes_ambiguous_truth_and_zero_margin_excludes_nothing():
    """Truth within `margin` of the cut gets no loss and a reason; margin 0 judges every image."""
    loss, why = Judge.of(SMILE, margin=0.1)("yes", None, {"brightness": 0.55})
    assert loss is None and why == "ambiguous brightness=0.55"
    assert Judge.of(SMILE, margin=0.1)("yes", None, {"brightness": 0.61})[0] == 0.0  # outside the margin: judged
    assert Judge.of(SMILE, margin=0.0)("no", None, {"brightness": 0.5}) == (1.0, None)  # at the cut: labels[1]


def test_score_loss_is_one_minus_the_probability_of_the_true_label():
    """loss="score": 1 - p(true label) from the score of the predicted label; zero-one without a score."""
    judge = Judge.of(SMILE, loss="score")
    assert judge("yes", 0.8, {"brightness": 0.9}) == (pytest.approx(0.2), None)  # right, p(yes) = 0.8
    assert judge("no", 0.8, {"brightness": 0.9}) == (pytest.approx(0.8), None)   # wrong, p(yes) = 0.2
    assert judge("no", None, {"brightness": 0.9}) == (1.0, None)
    assert judge("yes", math.nan, {"brightness": 0.9}) == (0.0, None)
    assert 0.0 <= judge("yes", 1.7, {"brightness": 0.9})[0] <= 1.0  # clipped


def test_detect_score_loss_orders_passes_by_confidence_and_keeps_the_threshold():
    """loss="score" on a detect target: a miss is 1, a detection is below 0.5 and larger the less
    sure the detector was; which images fail is what zero-one says."""
    judge = Judge.of(CallableTarget(lambda i: [True] * len(i)), loss="score")
    losses = [judge(True, c, {})[0] for c in (-2.0, 0.0, 0.5, 3.0, 800.0)]
    assert losses == sorted(losses, reverse=True) and losses[1] == 0.25 and 0.0 <= losses[-1] < losses[-2]
    assert all(v < FAILURE for v in losses)
    assert judge(False, None, {}) == (1.0, None)
    assert judge(True, None, {})[0] == judge(True, math.nan, {})[0] == 0.0
    zero_one = Judge.of(CallableTarget(lambda i: [True] * len(i)))
    assert [zero_one(f, 0.3, {})[0] >= FAILURE for f in (True, False)] == [judge(f, 0.3, {})[0] >= FAILURE for f in (True, False)]


@pytest.mark.parametrize(("target", "options", "message"), [
    (CallableTarget(lambda i: ["a"] * len(i), task="classify", labels=("a", "b")), {}, "needs the truth it is judged against"),
    (CallableTarget(lambda i: [True] * len(i), task="verify"), {}, "'verify' target"),
    (SMILE, {"loss": "hinge"}, "The 'loss' option must be one of 'zero-one', 'score'. Got 'hinge' instead."),
    (SMILE, {"margin": 0.5}, r"The 'margin' option must be a number in \[0, 0.5\). Got 0.5 instead."),
])
def test_a_judge_that_cannot_judge_says_why(target, options, message):
    with pytest.raises(ParameterError, match=message):
        Judge.of(target, **options)


def test_a_missing_truth_column_names_the_columns():
    with pytest.raises(ParameterError, match="'smile' is not in what the generator rendered. Truth columns: brightness, tint"):
        Judge.of(SMILE, truth_column="smile")("yes", None, {"brightness": 0.2, "tint": "none"})


def test_target_errors_are_never_failures():
    """An exception in the target and a per-image error both give loss None and an error, never a failure."""
    params = [{"brightness": 0.1}, {"brightness": 0.9}]

    def boom(images):
        raise TimeoutError("the API took too long\nsecond line")

    for outcome in Objective(FakeGenerator(), CallableTarget(boom)).evaluate(params):
        assert outcome.loss is None and outcome.failure is None
        assert outcome.error == "TimeoutError: the API took too long" and outcome.image is not None
    half = CallableTarget(lambda images: Predictions(label=[False, None], error=[None, "HTTP 503"]))
    ok, failed = Objective(FakeGenerator(), half).evaluate(params)
    assert ok.loss == 1.0 and ok.failure and ok.error is None
    assert failed.loss is None and failed.failure is None and failed.error == "HTTP 503"


def test_evaluate_judges_against_the_rendered_truth():
    """Objective.evaluate renders, predicts and judges each image against its own truth row."""
    bright = CallableTarget(lambda images: ["yes" if im.mean() > 100 else "no" for im in images], task="classify",
                            labels=("no", "yes"), truth=("brightness", 0.5))
    out = Objective(FakeGenerator(), bright, margin=0.0).evaluate([{"brightness": b} for b in (0.1, 0.45, 0.55, 0.9)], seed=3)
    assert [o.label for o in out] == ["no", "no", "yes", "yes"]
    assert [o.loss for o in out] == [0.0, 0.0, 0.0, 0.0]
    assert [o.truth["brightness"] for o in out] == [0.1, 0.45, 0.55, 0.9]
    assert all(o.image.shape == (16, 16, 3) and o.seconds >= 0 for o in out)


def test_a_spec_builds_the_same_objective_anywhere():
    """ObjectiveSpec is plain data (what a Ray actor receives) and checks its loss options up front."""
    spec = ObjectiveSpec("planted", "planted", {"dim": 3}, {"dim": 3})
    assert spec.to_dict()["generator_options"] == {"dim": 3}
    objective = spec.build()
    X = np.array([[0.5, 0.5, 0.5]])
    outcome = objective.evaluate([dict(zip(objective.generator.space.names, X[0]))])[0]
    assert outcome.loss == float(objective.target.regions.loss(X)[0])
    with pytest.raises(ParameterError, match="'margin'"):
        ObjectiveSpec("planted", "planted", margin=-1)


def test_a_label_column_judges_a_classifier_without_a_cut():
    """A learned generator's condition holds the labels themselves: no cut, never ambiguous."""
    clf = CallableTarget(lambda images: ["cat"] * len(images), task="classify", labels=("cat", "dog"))
    judge = Judge.of(clf, truth_column="animal")
    assert judge.cut is None
    assert judge("cat", 0.9, {"animal": "cat"}) == (0.0, None)
    assert judge("cat", 0.9, {"animal": "dog"}) == (1.0, None)
    with pytest.raises(ParameterError, match="'animal' holds 'cow': neither a number a cut can split nor one of the target's labels"):
        judge("cat", 0.9, {"animal": "cow"})
    with pytest.raises(ParameterError, match="holds numbers: give the cut"):
        judge("cat", 0.9, {"animal": 0.7})
    with pytest.raises(ParameterError, match="truth_column= alone for a column that holds its labels"):
        Judge.of(clf)

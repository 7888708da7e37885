"""The suite's cases: what it covers, and how cases are chosen by name."""

import functools

import numpy as np
import pytest

import generators
import targets
from searcher.bench import HELD_OUT, SUITE, Case, select_cases
from searcher.errors import ParameterError

PLANTED = {c.name: c for c in (*SUITE, *HELD_OUT) if c.kind == "planted"}


@functools.cache  # two tests lay out the same 28 landscapes: place each once
def regions(name: str):
    return PLANTED[name].regions()


def test_the_suite_covers_shapes_dims_volumes_and_answers():
    planted = [c for c in SUITE if c.kind == "planted"]
    assert len(SUITE) >= 16 and len(planted) >= 10
    assert len({c.name for c in SUITE}) == len(SUITE)
    options = [c.options for c in planted]
    assert {o["shape"] for o in options} == {"box", "ball", "slab", "shell"}
    assert min(o["dim"] for o in options) == 6 and max(o["dim"] for o in options) == 20
    assert min(o["k"] for o in options) == 3 and max(o["k"] for o in options) == 12
    assert min(o["volume"] for o in options) == pytest.approx(0.001) and max(o["volume"] for o in options) == pytest.approx(0.05)
    assert 1 <= sum(o["categories"] > 0 for o in options) <= 3
    assert sum(not o["score"] for o in options) >= 8 and sum(o["score"] for o in options) > len(options) / 2
    for answers in (True, False):  # both halves, graded and 0/1, hold every shape and a category
        half = [o for o in options if o["score"] == answers]
        assert {o["shape"] for o in half} == {"box", "ball", "slab", "shell"} and any(o["categories"] for o in half)
    historical = next(c for c in SUITE if c.name == "planted-d6-k5")
    assert historical.tuned and historical.options == {"dim": 6, "k": 5, "volume": 0.03, "shape": "box", "categories": 0,
                                                       "layout": 0, "score": False}


def test_every_planted_case_can_be_laid_out():
    for name, case in PLANTED.items():
        laid = regions(name)
        assert laid.k == case.options["k"] and laid.space.dim == case.options["dim"] + case.options["categories"]


def test_campaign_cases_name_registered_plugins_and_their_loss():
    campaigns = {c.name: c for c in SUITE if c.kind == "campaign"}
    assert {c.options["target"] for c in campaigns.values()} >= {"haar-face", "dlib-cnn", "dlib-hog", "gender-cnn", "smile-cnn"}
    assert {n for n, c in campaigns.items() if c.tuned} == {"faces-haar-face", "faces-dlib-cnn"}
    assert campaigns["faces-latent-dlib-hog"].options["generator"] == "faces-latent"
    assert campaigns["faces-gender-cnn"].options["truth_column"] == "gender_presentation"
    answered_01 = {n for n, c in campaigns.items() if not c.score}
    assert answered_01 == {"faces-dlib-hog-01"}  # the campaigns' default loss, on a target the defaults were not tuned on
    assert campaigns["faces-dlib-hog-01"].options["loss"] == "zero-one" and "zero-one loss" in campaigns["faces-dlib-hog-01"].describe()
    for name, case in campaigns.items():
        assert case.options["loss"] == ("zero-one" if name in answered_01 else "score")
        assert case.options["generator"] in generators.available() and case.options["target"] in targets.available()


def test_cases_are_chosen_by_name():
    assert [c.name for c in select_cases("planted-d6-k5, ball-d6-k3-v1")] == ["planted-d6-k5", "ball-d6-k3-v1"]
    own = Case.planted("mine", dim=3, k=2, volume=0.1)
    assert select_cases([own, "planted-d6-k5"])[0] is own
    assert len(select_cases(None)) == len(SUITE)
    assert [c.name for c in select_cases("planted")] == [c.name for c in SUITE if c.kind == "planted"]
    assert [c.kind for c in select_cases("campaign")] == ["campaign"] * sum(c.kind == "campaign" for c in SUITE)


def test_held_out_cases_are_new_landscapes_and_pairings_kept_out_of_the_suite():
    suite = {c.name: c for c in SUITE}
    planted = [c for c in HELD_OUT if c.kind == "planted"]
    assert not {c.name for c in HELD_OUT} & set(suite) and not any(c.tuned for c in HELD_OUT)
    assert len(planted) == sum(c.kind == "planted" for c in SUITE)  # every planted specification, its regions placed afresh
    for case in planted:
        original = suite[case.name.rsplit("-l", 1)[0]]
        assert {**case.options, "layout": 0} == original.options and case.options["layout"] >= 1
        assert not np.allclose(regions(case.name).lower, regions(original.name).lower)  # other regions, not the suite's again
    pairings = {(c.options["generator"], c.options["target"]) for c in SUITE if c.kind == "campaign"}
    for case in HELD_OUT:
        if case.kind == "campaign":
            assert (case.options["generator"], case.options["target"]) not in pairings
            assert case.options["generator"] in generators.available() and case.options["target"] in targets.available()
    assert [c.name for c in select_cases("held-out")] == [c.name for c in HELD_OUT]
    assert [c.name for c in select_cases("ball-d6-k3-v1-l1, ball-d6-k3-v1")] == ["ball-d6-k3-v1-l1", "ball-d6-k3-v1"]


@pytest.mark.parametrize("cases, match", [
    (["planted-d6-k5", "no-such-case"], r"Unknown case\(s\) \['no-such-case'\].*Valid cases: planted-d6-k5, "),
    (["planted-d6-k6"], "Did you mean 'planted-d6-k5'"),
    (["planted-d6-k5", "planted-d6-k5"], "each once"),
    ([], "one or more cases"),
])
def test_bad_case_names_list_the_valid_ones(cases, match):
    with pytest.raises(ParameterError, match=match):
        select_cases(cases)


def test_a_case_kind_is_checked():
    with pytest.raises(ParameterError, match="'kind' option of Case must be one of 'planted', 'campaign'"):
        Case("x", "landscape")

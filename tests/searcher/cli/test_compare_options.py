"""`searcher compare` takes what `searcher hunt` takes for the plug-ins and the judge (issue 15):
--generator-option, --target-option (or --option), --strategy-option, --truth, --cut, --loss."""

import pandas as pd
import pytest

from searcher.campaign import load_campaign
from searcher.cli import main

PLANTED = ["compare", "--generator", "planted", "--target", "planted", "--seeds", "1", "--budget", "8", "--no-progress"]
FACES = ["compare", "--generator", "faces", "--generator-option", "resolution=64", "--target", "gender-cnn", "--strategies", "random",
         "--seeds", "1", "--budget", "4", "--no-progress"]


def _one_line_error(capsys, *needles):
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.startswith("searcher: error: "), err
    for needle in needles:
        assert needle in err, (needle, err)


def test_plugin_and_strategy_options_reach_every_campaign(tmp_path, capsys):
    """A strategy option goes to the strategies that take it (restarts to cmaes, not to random)."""
    wide = ["volume=0.3", "k=1"]
    argv = [*PLANTED, "--strategies", "random,cmaes", "--out", str(tmp_path), "--strategy-option", "restarts=false"]
    for option in wide:
        argv += ["--generator-option", option, "--target-option", option]
    assert main(argv) == 0
    cmaes, random = (load_campaign(tmp_path / "runs" / f"{name}-s0").config for name in ("cmaes", "random"))
    assert cmaes["generator_options"] == cmaes["target_options"] == {"volume": 0.3, "k": 1} == random["target_options"]
    assert cmaes["strategy_options"] == {"restarts": "false"} and random["strategy_options"] == {}
    assert "cmaes" in capsys.readouterr().out


def test_option_is_still_the_target_option(tmp_path):
    assert main([*PLANTED, "--strategies", "random", "--option", "k=1", "--option", "volume=0.3", "--out", str(tmp_path)]) == 0
    assert load_campaign(tmp_path / "runs" / "random-s0").config["target_options"] == {"k": 1, "volume": 0.3}


@pytest.mark.parametrize(("extra", "needles"), [
    (["--strategies", "random,cmaes", "--strategy-option", "sigmaa=0.1"],
     ["No strategy compared takes the strategy option 'sigmaa'. Their options: random: none; cmaes: sigma, popsize, restarts, start."]),
    (["--strategies", "cmaes", "--strategy-option", "restarts=maybe"], ["'restarts' option of CMAESSearch must be True or False. Got 'maybe'"]),
    (["--strategies", "random", "--truth", "x0", "--cut", "0.5"], ["truth_column= and cut= judge classify targets"]),
])
def test_bad_options_on_the_planted_problem_are_one_line_errors(tmp_path, capsys, extra, needles):
    assert main([*PLANTED, *extra, "--out", str(tmp_path)]) == 2
    _one_line_error(capsys, *needles)
    assert not list(tmp_path.glob("runs/*/campaign.sqlite"))


@pytest.mark.parametrize(("extra", "needle"), [(["--cut", "abc"], "argument --cut: invalid float value: 'abc'"),
                                               (["--loss", "hinge"], "argument --loss: invalid choice: 'hinge'")])
def test_values_of_the_wrong_kind_are_refused_by_the_parser(tmp_path, capsys, extra, needle):
    with pytest.raises(SystemExit) as stop:
        main([*PLANTED, *extra, "--out", str(tmp_path)])
    assert stop.value.code == 2 and needle in capsys.readouterr().err


def test_a_classify_target_is_judged_by_the_truth_cut_and_loss_given(tmp_path):
    assert main([*FACES, "--truth", "gender_presentation", "--cut", "0.3", "--loss", "score", "--out", str(tmp_path)]) == 0
    config = load_campaign(tmp_path / "runs" / "random-s0").config
    assert (config["truth_column"], config["cut"], config["loss"]) == ("gender_presentation", 0.3, "score")


def test_the_table_counts_the_evaluations_in_the_cuts_band(tmp_path):
    """A face whose truth lies within the margin (0.1) of the cut is not judged: counted under `unjudged`."""
    assert main([*FACES, "--budget", "24", "--truth", "gender_presentation", "--cut", "0.5", "--out", str(tmp_path)]) == 0
    trials = load_campaign(tmp_path / "runs" / "random-s0").trials
    in_band = sum(abs(t["gender_presentation"] - 0.5) < 0.1 for t in trials["truth"])
    assert in_band > 0 and pd.read_csv(tmp_path / "compare.csv")["unjudged"].tolist() == [in_band]


@pytest.mark.parametrize(("extra", "needle"), [
    (["--truth", "nosuch"], "The truth column 'nosuch' is not in what the generator rendered. Truth columns: skin_tone"),
    (["--truth-column", "hair_color"], "The truth column 'hair_color' holds 'brown': neither a number a cut can split"),
    (["--cut", "5"], "--cut 5 lies outside gender_presentation's range [0, 1]"),
])
def test_a_truth_that_cannot_judge_is_refused_before_any_evaluation(tmp_path, capsys, extra, needle):
    assert main([*FACES, *extra, "--out", str(tmp_path)]) == 2
    _one_line_error(capsys, needle)
    assert not list(tmp_path.glob("runs/*/campaign.sqlite"))

"""`searcher fix` / `searcher.fix`: the whole loop (hunt, explain, confirm, retrain, report) into one
directory, each step skipped when its output is complete, a killed step resumed where it stopped.

One real run of gender-cnn at tiny sizes (40 evaluations, 24 re-renders, 3 models of 100 faces)
is shared by the module; the resume test works on a copy of it."""

import json
import shutil
import sqlite3
from contextlib import closing

import pandas as pd
import pytest

import searcher
from searcher.cli import main
from searcher.errors import ParameterError
from searcher.retrain.fix import MANIFEST, STEPS, fix
from searcher.retrain.journal import FILE as JOURNAL
from searcher.retrain.journal import Journal
from targets.trained.recipe import ShippedRecipe

# min_failures=1 gives the 13 one-failure modes of 40 random evaluations a rule each, so the
# confirmation re-renders (24 batches of one failure) and explain.json carries fix rates
SMALL = {"budget": 40, "strategy": "random", "confirm_budget": 30, "min_failures": 1, "depth": 2, "n": 10, "seeds": (0,),
         "arms": ("base", "hard", "random"), "train_n": 100, "epochs": 1, "test_n": 50}
ARGV = ["--target", "gender-cnn", "--budget", "40", "--strategy", "random", "--confirm-budget", "30", "--min-failures", "1",
        "--depth", "2", "-n", "10", "--seeds", "0,", "--arms", "base,hard,random", "--train-n", "100", "--epochs", "1",
        "--test-n", "50", "--no-progress"]
OUTPUTS = ("campaign.sqlite", "explain.json", "confirm/campaign.sqlite", "retrain/scores.csv", "retrain/summary.md",
           "report.html", MANIFEST)


def _trials(directory) -> int:
    with closing(sqlite3.connect(f"file:{directory / 'campaign.sqlite'}?mode=ro", uri=True)) as db:
        return db.execute("SELECT COUNT(*) FROM trials").fetchone()[0]


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    out = tmp_path_factory.mktemp("fix") / "run"
    lines = []
    result = fix("gender-cnn", out=out, log=lines.append, **SMALL)
    return out, result, lines


@pytest.fixture
def no_training(monkeypatch):
    """Training a model fails the test."""
    def train(self, data, seed):
        raise AssertionError("a model was trained")

    monkeypatch.setattr(ShippedRecipe, "train", train)


def test_every_step_runs_and_writes_its_output(finished):
    out, result, lines = finished
    assert result.steps == dict.fromkeys(STEPS, "ran")
    assert [line.split(":")[0] for line in lines] == list(STEPS)
    for name in OUTPUTS:
        assert (out / name).is_file(), name
    assert _trials(out) == 40 and _trials(out / "confirm") == 24
    records = json.loads((out / "explain.json").read_text())
    assert records == result.modes and sum(r["failures"] for r in records) > 0
    assert any(r.get("fix_rates") for r in records)  # the confirmation's records, not explain's alone
    scores = pd.read_csv(out / "retrain" / "scores.csv")
    assert set(scores["arm"]) == {"base", "hard", "random"} and set(scores["seed"]) == {0}
    pd.testing.assert_frame_equal(scores, result.scores)
    assert not (out / "retrain" / JOURNAL).exists()  # removed once scores.csv is written
    summary = result.summary()
    largest = max((r for r in records if r["rule"]), key=lambda r: r["failures"])
    assert largest["caption"] in summary and "best fix rates" in summary and "gain over base" in summary
    assert f"report: {out / 'report.html'}" in summary


def test_a_second_run_skips_every_step_and_evaluates_nothing(finished, no_training):
    out, _, _ = finished
    written = {name: (out / name).stat().st_mtime_ns for name in OUTPUTS if name != "campaign.sqlite"}
    trials = _trials(out), _trials(out / "confirm")
    lines = []
    result = searcher.fix("gender-cnn", out=out, log=lines.append, **SMALL)
    assert result.steps == dict.fromkeys(STEPS, "skipped")
    assert lines == [f"{step}: skipped, {out / name} is complete" for step, name in
                     zip(STEPS, ("campaign.sqlite", "explain.json", "explain.json", "retrain/scores.csv", "report.html"))]
    assert (_trials(out), _trials(out / "confirm")) == trials
    assert {name: (out / name).stat().st_mtime_ns for name in written} == written


def test_the_command_line_runs_it(finished, no_training, capsys):
    out, result, _ = finished
    assert main(["fix", *ARGV, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert all(f"{step}: skipped" in printed for step in STEPS)
    assert result.summary() in printed


def test_a_killed_retraining_resumes_where_it_stopped(finished, tmp_path, monkeypatch):
    """A copy of the finished run without its retraining and report (killed before them): the first
    call is killed after one model was scored; the same call again trains only the other two."""
    out = shutil.copytree(finished[0], tmp_path / "run")
    shutil.rmtree(out / "retrain")
    (out / "report.html").unlink()
    real, calls, kill = ShippedRecipe.train, [], [True]

    def train(self, data, seed):
        calls.append(len(data))
        if kill[0] and len(calls) == 2:
            raise KeyboardInterrupt  # as Ctrl-C, or a kill between two models
        return real(self, data, seed)

    monkeypatch.setattr(ShippedRecipe, "train", train)
    with pytest.raises(KeyboardInterrupt):
        fix("gender-cnn", out=out, **SMALL)
    assert not (out / "retrain" / "scores.csv").exists()
    assert len((out / "retrain" / JOURNAL).read_text().splitlines()) == 2  # the key and the base model
    assert "retrain" not in json.loads((out / MANIFEST).read_text())

    calls.clear()
    kill[0] = False
    result = fix("gender-cnn", out=out, **SMALL)
    assert result.steps == {"hunt": "skipped", "explain": "skipped", "confirm": "skipped", "retrain": "ran", "report": "ran"}
    assert calls == [110, 110]  # hard and random (100 faces + 10): the base was not trained again
    assert (out / "report.html").is_file() and not (out / "retrain" / JOURNAL).exists()
    assert set(result.scores["arm"]) == {"base", "hard", "random"} and len(result.scores) == len(finished[1].scores)
    base = result.scores[result.scores["arm"] == "base"].reset_index(drop=True)
    pd.testing.assert_frame_equal(base, finished[1].scores[finished[1].scores["arm"] == "base"].reset_index(drop=True))


def test_a_journal_resumes_only_its_own_key_and_whole_lines(tmp_path):
    journal = Journal(tmp_path, {"seeds": [0]})
    journal.add_validated(1, 0.75)
    journal.add_weight(2, "w = 2")
    journal.add_model("base", 0, [{"arm": "base", "balanced_accuracy": 0.5}], [])
    with open(tmp_path / JOURNAL, "a") as fh:
        fh.write('{"arm": "hard", "se')  # a line cut short by a kill
    again = Journal(tmp_path, {"seeds": [0]})
    assert again.models == {("base", 0): ([{"arm": "base", "balanced_accuracy": 0.5}], [])} and again.weight == (2, "w = 2")
    assert again.validated == {1: 0.75}
    other = Journal(tmp_path, {"seeds": [1]})  # other arguments: started afresh
    assert other.models == {} and other.weight is None
    assert Journal(tmp_path, {"seeds": [0]}).models == {}
    Journal(tmp_path, None).close()  # a journal that keeps nothing removes nothing
    assert (tmp_path / JOURNAL).exists()


@pytest.mark.parametrize(("arguments", "message"), [
    ({"target": "dlib-hog"}, "'dlib-hog' cannot be retrained here.*Trainable targets: gender-cnn, glasses-cnn, smile-cnn"),
    ({"arms": ["base", "worst"]}, r"Unknown arm\(s\) \['worst'\].*Valid arms: base, hard"),
    ({"budget": 0}, "'budget' argument of fix must be an integer >= 1. Got 0"),
    ({"strategy": "bo-mode"}, "'strategy' argument of fix must be one of .*'bo-modes'.*Got 'bo-mode'"),
    ({"generator": "face"}, "'generator' argument of fix must be one of .*'faces'.*Got 'face'"),
    ({"confirm_budget": 0}, "'confirm_budget' argument of fix must be None or an integer >= 1. Got 0"),
    ({"seeds": 3}, "'seeds' argument of fix must be a list"),
    ({"test_n": 0}, "'test_n' argument of fix must be an integer >= 1"),
    ({"upweighted": "twinz"}, "--upweighted must be one of 'hard', 'spread', .*'crossed-draws'.*Got 'twinz'"),
])
def test_a_bad_argument_is_refused_before_anything_is_written(tmp_path, arguments, message):
    out = tmp_path / "new"
    with pytest.raises(ParameterError, match=message):
        fix(**{"out": out, **arguments})
    assert not out.exists()


def test_the_command_line_refuses_in_one_line(tmp_path, capsys):
    out = tmp_path / "new"
    assert main(["fix", "--target", "haar-face", "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "'haar-face' cannot be retrained" in err and err.count("\n") == 1
    assert not out.exists()

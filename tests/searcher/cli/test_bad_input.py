"""Inputs that ended in a traceback, a wrong directory or a wasted budget on the main before the
layered package (issue 14's probe): each is now one line naming the bad value, or does what it says."""

import shutil

import numpy as np
import pytest

import generators
from searcher.campaign import Campaign, load_campaign
from searcher.cli import main
from searcher.errors import ParameterError

PLANTED = {"generator": "planted", "target": "planted", "strategy": "random", "batch": 4}


def _one_line_error(capsys, *needles):
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.startswith("searcher: error: "), err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


def _half_done(tmp_path, out="runs/a"):
    """A campaign of 16 stored as if killed after two of its four batches."""
    import sqlite3

    Campaign(**PLANTED, budget=16, out=out).run(progress=False)
    with sqlite3.connect(tmp_path / out / "campaign.sqlite") as db:
        db.execute("DELETE FROM trials WHERE step >= 2")
        db.execute("DELETE FROM steps WHERE step >= 2")


def test_a_moved_campaign_resumes_where_it_is_told(tmp_path, monkeypatch):
    """`runs/a` moved to `moved/b` and resumed from another directory fills `moved/b`; no new `runs/a` appears."""
    monkeypatch.chdir(tmp_path)
    _half_done(tmp_path)
    (tmp_path / "moved").mkdir()
    (tmp_path / "runs" / "a").rename(tmp_path / "moved" / "b")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert main(["hunt", "--resume", str(tmp_path / "moved" / "b"), "--no-progress"]) == 0
    assert len(load_campaign(tmp_path / "moved" / "b").trials) == 16
    assert not (tmp_path / "elsewhere" / "runs").exists() and not (tmp_path / "runs" / "a").exists()


def test_resume_fills_the_copy_and_leaves_the_original(tmp_path, monkeypatch):
    """A copy of a half-done campaign, resumed, is completed in place; the original is untouched."""
    monkeypatch.chdir(tmp_path)
    _half_done(tmp_path)
    shutil.copytree(tmp_path / "runs" / "a", tmp_path / "copy")
    assert main(["hunt", "--resume", str(tmp_path / "copy"), "--no-progress"]) == 0
    assert len(load_campaign(tmp_path / "copy").trials) == 16
    assert len(load_campaign(tmp_path / "runs" / "a").trials) == 8


def test_render_of_a_generator_without_a_resolution(tmp_path, capsys):
    assert main(["render", "--generator", "planted", "-n", "4", "--out", str(tmp_path / "p.png")]) == 0
    assert (tmp_path / "p.png").is_file()


@pytest.mark.parametrize(("argv", "needles"), [
    (["render", "--set", "identity=inf"], ["'identity' parameter must be an integer in [0, 99999]", "inf"]),
    (["render", "--set", "yaw=-inf"], ["'yaw' parameter must be a number in [-75, 75]", "-inf"]),
    (["render", "--seed", "-1"], ["--seed must be an integer >= 0. Got -1 instead."]),
    (["render", "-n", "0"], ["-n must be an integer in [1, 10000]. Got 0 instead."]),
    (["compare", "--seeds", "0"], ["--seeds must be an integer in [1, 10000]. Got 0 instead.", "(--seeds 0, is seed 0)"]),
    (["serve-target", "dlib-hog", "--port", "70000"], ["--port must be an integer in [0, 65535]. Got 70000 instead."]),
    (["gallery", "nowhere", "--limit", "0"], ["--limit must be an integer >= 1. Got 0 instead."]),
    (["compare", "--generator", "planted", "--target", "planted", "--strategies", "random,nope", "--seeds", "1"],
     ["Unknown strategy 'nope'", "random, sobol, bo"]),
])
def test_bad_values_are_one_line_errors(tmp_path, capsys, argv, needles):
    argv = [*argv, "--out", str(tmp_path / ("out.png" if argv[0] == "render" else "out"))] if argv[0] in ("render", "compare") else argv
    assert main(argv) == 2
    _one_line_error(capsys, *needles)
    assert not (tmp_path / "out" / "runs").exists()  # compare refused before running any campaign


def test_the_python_api_refuses_infinite_integers():
    with pytest.raises(ParameterError, match="'identity' parameter must be an integer"):
        generators.load("faces", resolution=64).generate({"identity": float("inf")})


@pytest.mark.parametrize(("toml", "needle"), [
    ('fix = ["yaw=10"]', "The 'fix' option of Campaign must be a table of NAME = VALUE. Got ['yaw=10'] instead."),
    ('fix = "yaw=10"', "must be a table of NAME = VALUE. Got 'yaw=10' instead."),
    ('target_options = "x"', "The 'target_options' option of Campaign must be a table"),
])
def test_toml_values_of_the_wrong_shape(tmp_path, capsys, toml, needle):
    config = tmp_path / "c.toml"
    config.write_text(f'generator = "planted"\ntarget = "planted"\nbudget = 4\n{toml}\n')
    assert main(["hunt", "--config", str(config), "--out", str(tmp_path / "run"), "--no-progress"]) == 2
    _one_line_error(capsys, needle)
    config.write_text(f'generator = "planted"\n{toml}\n')
    assert main(["hunt", "--config", str(config), "--fix", "x0=0.5", "--out", str(tmp_path / "run"), "--no-progress"]) == 2
    _one_line_error(capsys, "must be a table")


@pytest.mark.parametrize(("column", "needle"), [
    ("nosuch", "The truth column 'nosuch' is not in what the generator rendered. Truth columns: skin_tone"),
    ("hair_color", "The truth column 'hair_color' holds 'brown': neither a number a cut can split"),
])
def test_a_truth_column_that_cannot_judge_is_refused_before_any_evaluation(tmp_path, capsys, column, needle):
    out = tmp_path / "run"
    assert main(["hunt", "--target", "gender-cnn", "--truth-column", column, "--budget", "8", "--out", str(out),
                 "--generator-option", "resolution=64", "--no-progress"]) == 2
    _one_line_error(capsys, needle)
    assert not (out / "campaign.sqlite").exists()


@pytest.mark.parametrize(("cut", "side"), [("5", "'masculine'"), ("0", "'feminine'"), ("-1", "'feminine'")])
def test_a_cut_outside_the_truth_range_is_refused_before_any_evaluation(tmp_path, capsys, cut, side):
    out = tmp_path / "run"
    assert main(["hunt", "--target", "gender-cnn", "--cut", cut, "--budget", "8", "--out", str(out),
                 "--generator-option", "resolution=64", "--no-progress"]) == 2
    _one_line_error(capsys, f"lies outside gender_presentation's range [0, 1]: every face would be judged {side}")
    assert not (out / "campaign.sqlite").exists()


def test_truth_options_on_a_detect_target_are_refused(tmp_path, capsys):
    assert main(["hunt", "--generator", "planted", "--target", "planted", "--cut", "0.5", "--out", str(tmp_path / "r")]) == 2
    _one_line_error(capsys, "truth_column= and cut= judge classify targets")


def test_a_first_batch_without_any_judgement_stops_the_campaign(tmp_path, capsys):
    """The README's old gender example: gender presentation at its default 0.5, the cut; every trial
    ambiguous. The campaign stops after one batch and says what to change, instead of spending 40."""
    out = tmp_path / "gender"
    assert main(["hunt", "--target", "gender-cnn", "--vary", "hair_length,skin_tone,yaw", "--fix", "identity=7",
                 "--budget", "40", "--out", str(out), "--generator-option", "resolution=64", "--no-progress"]) == 2
    _one_line_error(capsys, "Stopped after the first batch: all 4 trials were excluded as ambiguous",
                    "gender_presentation=0.50", "--vary")
    assert len(load_campaign(out).trials) == 4
    errors = tmp_path / "errors"
    assert main(["hunt", "--generator", "planted", "--target", "planted", "--option", "error_rate=1.0", "--budget", "40",
                 "--out", str(errors), "--no-progress"]) == 2
    _one_line_error(capsys, "4 of 4 trials got no answer from the target 'planted' (first: injected error)")


def test_the_readme_gender_hunt_finds_failures(tmp_path, capsys):
    assert main(["hunt", "--target", "gender-cnn", "--vary", "hair_length,skin_tone,gender_presentation,yaw", "--fix",
                 "identity=7", "--budget", "24", "--strategy", "random", "--out", str(tmp_path / "g"),
                 "--generator-option", "resolution=64", "--no-progress"]) == 0
    trials = load_campaign(tmp_path / "g").trials
    assert (trials["loss"] >= 0.5).sum() > 0 and np.isfinite(trials["loss"].dropna()).all()


def test_ctrl_c_says_how_to_continue(tmp_path, capsys, monkeypatch):
    """After a stored batch: resume. Before any trial: the new campaign is removed, and the same command starts it."""
    import searcher.campaign.loop as loop

    real = loop._Loop.propose

    def interrupted(self, step, n, planned=None):
        if step == stop_at:
            raise KeyboardInterrupt
        return real(self, step, n, planned)

    monkeypatch.setattr(loop._Loop, "propose", interrupted)
    for stop_at, out, said in ((1, tmp_path / "k", f"searcher hunt --resume {tmp_path / 'k'}` continues"),
                               (0, tmp_path / "n", "Nothing was stored; the same command starts the campaign again.")):
        assert main(["hunt", "--generator", "planted", "--target", "planted", "--out", str(out), "--no-progress"]) == 130
        err = capsys.readouterr().err
        assert "Traceback" not in err and said in err, err
        assert (out / "campaign.sqlite").exists() == (stop_at == 1)


def test_ctrl_c_while_the_commands_load_is_one_line(capsys, monkeypatch):
    """Ctrl-C during start-up (the command modules import torch and friends): exit 130, no traceback."""
    import searcher.cli as cli

    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert main(["hunt", "--generator", "planted"]) == 130
    err = capsys.readouterr().err
    assert "Traceback" not in err and err == "searcher: interrupted while starting; nothing was run.\n"


def test_a_second_process_on_a_campaign_is_refused_and_a_killed_holder_is_taken_over(tmp_path, capsys):
    """A live holder of DIR's lock refuses a second `hunt --resume DIR`, naming its process id; once
    the holder is killed with SIGKILL, the lock is taken over and the campaign resumes."""
    import signal
    import subprocess
    import sys
    import time

    campaign_dir = tmp_path / "c"
    Campaign(**PLANTED, budget=8, out=str(campaign_dir)).run(progress=False)
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from searcher.campaign.store import DirectoryLock; "
        f"DirectoryLock({str(campaign_dir)!r}).acquire(); print('held', flush=True); time.sleep(60)")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert main(["hunt", "--resume", str(campaign_dir), "--budget", "12", "--no-progress"]) == 2
        _one_line_error(capsys, f"is in use by process {holder.pid}")
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    time.sleep(0.1)
    assert main(["hunt", "--resume", str(campaign_dir), "--budget", "12", "--no-progress"]) == 0
    assert len(load_campaign(campaign_dir).trials) == 12


def test_a_resume_that_names_no_directory_starts_nothing(tmp_path, monkeypatch, capsys):
    """`--resume "$UNSET"` once started a new default campaign in runs/campaign."""
    monkeypatch.chdir(tmp_path)
    assert main(["hunt", "--resume", "", "--no-progress"]) == 2
    _one_line_error(capsys, "--resume was given an empty directory name")
    assert main(["hunt", "--resume", "  ", "--no-progress"]) == 2
    assert not list(tmp_path.iterdir()), "nothing may be written"


def test_a_resume_refuses_the_flags_it_would_ignore(tmp_path, capsys):
    out = tmp_path / "stored"
    Campaign(**PLANTED, budget=8, out=str(out)).run(progress=False)
    before = load_campaign(out).trials
    for flags, named in ((["--seed", "5"], "--seed"), (["--strategy", "sobol", "--batch", "2"], "--strategy, --batch"),
                         (["--fix", "x0=0.5"], "--fix"), (["--config", str(tmp_path / "any.toml")], "--config"),
                         (["--overlap"], "--overlap")):
        assert main(["hunt", "--resume", str(out), *flags, "--no-progress"]) == 2, flags
        err = capsys.readouterr().err
        assert "would be ignored" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
        assert named is None or named in err, err
    assert load_campaign(out).trials.equals(before), "a refused resume evaluates nothing"
    assert main(["hunt", "--resume", str(out), "--budget", "12", "--retries", "1", "--no-progress"]) == 0  # what a resume may change
    assert len(load_campaign(out).trials) == 12


def test_budget_on_resume_extends_and_never_shortens(tmp_path, capsys):
    out = tmp_path / "grow"
    Campaign(**PLANTED, budget=8, out=str(out)).run(progress=False)
    assert main(["hunt", "--resume", str(out), "--budget", "16", "--no-progress"]) == 0
    trials = load_campaign(out).trials
    assert len(trials) == 16 and not trials["x"].map(tuple).duplicated().any()
    assert load_campaign(out).config["budget"] == 16
    assert main(["hunt", "--resume", str(out), "--budget", "4", "--no-progress"]) == 2
    _one_line_error(capsys, "can be extended, not shortened", "budget of 16. Got 4 instead.")
    assert main(["hunt", "--resume", str(out), "--no-progress"]) == 0  # as it is: nothing to do
    assert len(load_campaign(out).trials) == 16


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_damaged_store_is_one_line_naming_the_file(tmp_path, capsys, damage):
    out = tmp_path / "d"
    Campaign(**PLANTED, budget=8, out=str(out)).run(progress=False)
    db = out / "campaign.sqlite"
    data = db.read_bytes()
    db.write_bytes(b"not a database, just bytes " * 40 if damage == "garbage" else data[: len(data) // 3])
    for wal in out.glob("campaign.sqlite-*"):
        wal.unlink()
    for argv in (["hunt", "--resume", str(out), "--no-progress"], ["gallery", str(out)], ["analyze", str(out)]):
        assert main(argv) == 2, argv
        _one_line_error(capsys, str(db))


def test_a_deleted_image_is_one_line_naming_it(tmp_path, capsys):
    out = tmp_path / "img"
    wide = {"volume": 0.3, "k": 1}  # failures in a third of the cube, so the gallery has some to show
    Campaign(**PLANTED, budget=12, generator_options=wide, target_options=wide, out=str(out)).run(progress=False)
    trials = load_campaign(out).trials
    digest = trials.loc[trials["loss"] >= 0.5, "image"].iloc[0]
    (out / "images" / digest[:2] / f"{digest}.png").unlink()
    assert main(["gallery", str(out)]) == 2
    _one_line_error(capsys, f"{digest}.png", "missing or unreadable")


@pytest.mark.parametrize("where", ["file", "proc"])
def test_an_out_that_cannot_be_written_is_one_line(tmp_path, capsys, where):
    if where == "file":
        (tmp_path / "plain").write_text("a file, not a directory")
        out = tmp_path / "plain" / "run"
    else:
        out = "/proc/searcher-run"
    assert main(["hunt", "--generator", "planted", "--target", "planted", "--budget", "4", "--out", str(out), "--no-progress"]) == 2
    first = f"--out {out} cannot be created: {tmp_path / 'plain'} is a file" if where == "file" else f"Cannot write a campaign to {out}"
    _one_line_error(capsys, first, "Choose another --out.")


def test_a_ray_address_nobody_answers_at_is_one_line(tmp_path, capsys):
    assert main(["hunt", "--generator", "planted", "--target", "planted", "--budget", "4", "--workers", "2",
                 "--ray-address", "127.0.0.1:1", "--out", str(tmp_path / "r"), "--no-progress"]) == 2
    _one_line_error(capsys, "No Ray cluster answers at '127.0.0.1:1'", "ray start --head")


def test_analyze_of_a_campaign_without_judged_trials_says_why(tmp_path, capsys):
    """Every trial a target error: analyze says so, instead of "Valid attributes: ." """
    out = tmp_path / "errors"
    assert main(["hunt", "--generator", "planted", "--target", "planted", "--option", "error_rate=1.0", "--budget", "8",
                 "--out", str(out), "--no-progress"]) == 2  # stopped after its first batch
    capsys.readouterr()
    assert main(["analyze", str(out)]) == 2
    _one_line_error(capsys, "has no judged trial to analyse: 4 of 4 got no answer from the target (first error: injected error)")


def test_a_ray_address_that_answers_but_cannot_be_joined_is_one_line(tmp_path, capsys, monkeypatch):
    """What a head started on another address of this machine does (`ray start --head` here binds
    192.0.2.2 and `--ray-address 127.0.0.1:PORT` reaches its port): Ray's ConnectionError becomes a one-line error."""
    import ray

    from searcher.campaign import executors

    monkeypatch.setattr(executors, "check_reachable", lambda address: None)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)

    def refuse(**kwargs):
        raise ConnectionError("Failed to connect to Ray cluster at 192.0.2.2:38257")

    monkeypatch.setattr(ray, "init", refuse)
    assert main(["hunt", "--generator", "planted", "--target", "planted", "--budget", "4", "--workers", "2",
                 "--ray-address", "127.0.0.1:38257", "--out", str(tmp_path / "r"), "--no-progress"]) == 2
    _one_line_error(capsys, "Could not join the Ray cluster at '127.0.0.1:38257': Failed to connect to Ray cluster at 192.0.2.2:38257",
                    "ray start --head")

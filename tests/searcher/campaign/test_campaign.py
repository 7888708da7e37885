"""Campaigns: the loop, the store, resume after kill -9, errors never counted as failures."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from killing import kill_when_stored

from searcher.campaign import Campaign, load_campaign, search_space
from searcher.errors import ParameterError
from searcher.strategies import DEFAULT_STRATEGY

FAST = {"generator": "planted", "target": "planted", "strategy": "random", "batch": 4}


def comparable(trials: pd.DataFrame) -> pd.DataFrame:
    return trials[["step", "idx", "loss", "error", "image"]].assign(x=trials["x"].map(tuple), params=trials["params"].map(str))


def test_campaign_records_every_trial(tmp_path):
    result = Campaign(**FAST, budget=18, out=str(tmp_path / "a")).run(progress=False)
    t = load_campaign(tmp_path / "a").trials
    assert len(t) == 18 and list(t["step"]) == [i // 4 for i in range(18)]
    assert t["loss"].isin([0.0, 1.0]).all() and t["error"].isna().all()
    assert all(len(x) == 6 and all(0 <= v <= 1 for v in x) for x in t["x"])
    assert "planted" in result.summary() or "18 evaluations" in result.summary()
    # the stored image is the rendered one
    from searcher.campaign.store import Store

    store = Store(tmp_path / "a")
    assert store.load_image(t["image"][0]).dtype == np.uint8
    store.close()


def test_same_seed_same_trials_and_refuses_to_overwrite(tmp_path):
    a = Campaign(**FAST, budget=12, seed=3, out=str(tmp_path / "a")).run(progress=False).trials
    b = Campaign(**FAST, budget=12, seed=3, out=str(tmp_path / "b")).run(progress=False).trials
    pd.testing.assert_frame_equal(comparable(a), comparable(b))
    with pytest.raises(ParameterError, match="already holds a campaign"):
        Campaign(**FAST, budget=12, seed=3, out=str(tmp_path / "a")).run(progress=False)


@pytest.mark.parametrize("strategy", ["random", "bo", DEFAULT_STRATEGY])
def test_resume_after_kill_equals_uninterrupted(tmp_path, strategy):
    """SIGKILL a running `searcher hunt` at an arbitrary point, resume it: every trial exactly once,
    and the same trials as a run that was never interrupted (BO: its GP state carried over too)."""
    reference = Campaign(**{**FAST, "strategy": strategy}, budget=60, seed=1, out=str(tmp_path / "ref")).run(progress=False).trials
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "searcher.cli", "hunt", "--generator", "planted", "--target", "planted",
           "--strategy", strategy, "--budget", "60", "--batch", "4", "--seed", "1", "--out", str(out), "--no-progress",
           "--option", "delay=0.01"]
    for kill_after in (7, 30):
        proc = subprocess.Popen(cmd if kill_after == 7 else [*cmd[:4], "--resume", str(out)], stdout=subprocess.DEVNULL)
        kill_when_stored(proc, out, kill_after)
    done = subprocess.run([*cmd[:4], "--resume", str(out), "--no-progress"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    resumed = load_campaign(out).trials
    assert len(resumed) == 60 and not resumed.duplicated(["step", "idx"]).any()
    pd.testing.assert_frame_equal(comparable(resumed), comparable(reference))
    if strategy == "bo":
        np.testing.assert_array_equal(resumed["composite"].to_numpy(), reference["composite"].to_numpy())


def test_target_errors_are_never_failures(tmp_path):
    result = Campaign(**FAST, budget=8, out=str(tmp_path / "e"), target_options={"error_rate": 0.5}).run(progress=False)
    t = result.trials
    assert t["error"].notna().sum() > 0
    assert t.loc[t["error"].notna(), "loss"].isna().all() and not t.loc[t["error"].notna(), "failure"].any()


def test_bad_configs_fail_before_any_evaluation(tmp_path):
    out = tmp_path / "bad"
    cases = [
        ({"strategy": "annealing"}, "annealing"),
        ({"target": "nope"}, "Available targets"),
        ({"generator": "nope"}, "Available generators"),
        ({"budget": 0}, "'budget'"),
        ({"alpha": 1.5}, "'alpha'"),
        ({"strategy": "bo", "strategy_options": {"n_init": 20}}, r"budget \(8\) is smaller than the initial design"),
        ({"strategy": "bo", "strategy_options": {"radius": 0}}, "'radius'"),
        ({"strategy": "random", "alpha": 0.5}, "is an option of the 'bo' strategy, and this campaign's strategy is 'random'"),
        ({"strategy": DEFAULT_STRATEGY, "alpha": 0.5}, f"strategy is '{DEFAULT_STRATEGY}'.*add --strategy bo"),
        ({"fix": {"x0": 2.0}}, "'x0'"),
        ({"vary": ["nope"]}, "Unknown parameter 'nope'"),
    ]
    for change, message in cases:
        with pytest.raises((ParameterError, LookupError), match=message):
            Campaign(**{**FAST, "budget": 8, "out": str(out), **change}).run(progress=False)
    assert not (out / "campaign.sqlite").exists() or load_campaign(out).trials.empty


def test_vary_and_fix(tmp_path):
    import generators

    space, held = search_space(generators.load("faces").space, ["yaw", "light_intensity"], {"identity": 7, "eyewear": "sunglasses"})
    assert space.names == ["light_intensity", "yaw"] or set(space.names) == {"yaw", "light_intensity"}
    assert held["identity"] == 7 and held["eyewear"] == "sunglasses" and "yaw" not in held
    with pytest.raises(ParameterError, match="both varied and fixed"):
        search_space(generators.load("faces").space, ["yaw"], {"yaw": 3.0})


def test_cli_hunt_and_summary(tmp_path):
    from searcher.cli import main

    out = tmp_path / "cli"
    assert main(["hunt", "--generator", "planted", "--target", "planted", "--strategy", "sobol", "--budget", "8",
                 "--out", str(out), "--no-progress"]) == 0
    assert len(load_campaign(out).trials) == 8
    assert main(["hunt", "--generator", "planted", "--target", "planted", "--budget", "8", "--out", str(out), "--no-progress"]) == 2
    # integer strategy options arrive as integers, float ones as floats (the default strategy's)
    default = tmp_path / "default"
    assert main(["hunt", "--generator", "planted", "--target", "planted", "--budget", "8", "--out", str(default), "--no-progress",
                 "--strategy-option", "n_init=4", "--strategy-option", "early=0.5", "--strategy-option", "radius=0.3"]) == 0
    assert load_campaign(default).config["strategy"] == DEFAULT_STRATEGY
    assert load_campaign(default).config["strategy_options"] == {"n_init": 4, "early": 0.5, "radius": 0.3}


# the default's state is the harder case; random runs under -m slow
@pytest.mark.parametrize("strategy, overlap", [pytest.param("random", False, marks=pytest.mark.slow), (DEFAULT_STRATEGY, False),
                                               (DEFAULT_STRATEGY, True)])
def test_ray_executor_gives_the_same_trials(tmp_path, strategy, overlap):
    """Two Ray actors share every batch and produce exactly the local executor's trials (the default
    strategy past its Sobol start, on the planted target's continuous score; and with `overlap`,
    the batch evaluated on a thread while the next is asked)."""
    kw = {**FAST, "strategy": strategy, "budget": 16, "seed": 2, "overlap": overlap}
    if strategy != "random":
        kw.update(budget=56 if overlap else 28, loss="score", target_options={"score": True}, strategy_options={"n_init": 8})
    local = Campaign(**kw, out=str(tmp_path / "local")).run(progress=False).trials
    ray_run = Campaign(**kw, workers=2, out=str(tmp_path / "ray")).run(progress=False).trials
    assert set(ray_run["worker"]) == {"ray-0", "ray-1"}
    pd.testing.assert_frame_equal(comparable(local), comparable(ray_run))


def test_audit_sample_is_uniform_kept_apart_and_resumable(tmp_path):
    """A fifth of the budget is a seeded uniform sample marked `audit`, never told to the strategy:
    the search points equal those of a campaign without audit whose strategy saw the same history."""
    kw = dict(FAST, strategy="sobol", budget=40, seed=5)
    t = Campaign(**kw, audit=0.2, out=str(tmp_path / "a")).run(progress=False).trials
    assert (t["source"] == "audit").sum() == 8 and set(t["source"]) == {"audit", "search"}
    searched = np.stack(t.loc[t["source"] == "search", "x"].to_list())
    from searcher.strategies.baselines import sobol_points

    np.testing.assert_allclose(searched, sobol_points(6, 5, 0, 32))  # the Sobol stream, uninterrupted by audit points
    again = Campaign(**kw, audit=0.2, out=str(tmp_path / "b")).run(progress=False).trials
    pd.testing.assert_frame_equal(comparable(t), comparable(again))
    with pytest.raises(ParameterError, match="'audit'.*1.5"):
        Campaign(**kw, audit=1.5, out=str(tmp_path / "c"))


def test_stores_from_before_a_column_existed_are_upgraded(tmp_path):
    from searcher.campaign.store import Store

    Campaign(**FAST, budget=4, out=str(tmp_path / "old")).run(progress=False)
    with sqlite3.connect(tmp_path / "old" / "campaign.sqlite") as con:  # as schema version 1 wrote it
        con.execute("ALTER TABLE trials DROP COLUMN source")
        con.execute("ALTER TABLE trials DROP COLUMN composite")
    store = Store(tmp_path / "old")
    trials = store.trials()
    store.close()
    assert len(trials) == 4 and trials["source"].isna().all() and "composite" in trials


def test_a_moved_campaign_resumes_where_it_is(tmp_path):
    Campaign(**FAST, budget=8, out=str(tmp_path / "here")).run(progress=False)
    (tmp_path / "here").rename(tmp_path / "there")
    again = Campaign(**FAST, budget=8, out=str(tmp_path / "there")).run(progress=False, resume=True)
    assert len(again.trials) == 8


@pytest.mark.parametrize("target, column", [("smile-cnn", "smile"), ("gender-cnn", "gender_presentation")])
def test_the_band_a_classify_target_never_judges_is_found_in_the_cube(target, column):
    """`unjudged_band`: a point of the prior cube just inside the band decodes to a truth within the
    margin of the cut (excluded, never judged), one just outside to a truth beyond it; none when the
    truth column is held fixed or the target detects."""
    import generators
    import targets
    from searcher.campaign.loop import unjudged_band
    from searcher.objective import Judge

    gen = generators.load("faces")
    judge = Judge.of(targets.load(target))

    def band(fix: dict, j: Judge = judge):
        space, held = search_space(gen.space, None, fix, "prior")
        shown = {**gen.space.defaults(), **held}
        return space, unjudged_band(j, space, shown, gen.generate([shown]).truth.to_dict("records")[0])

    space, (start, low, high) = band({})
    assert space.cube.columns[[c.name for c in space.cube.columns].index(column)].start == start
    x = np.full((4, space.dim), 0.5)
    x[:, start] = [low - 1e-4, low + 1e-4, high - 1e-4, high + 1e-4]
    truth = np.array([p[column] for p in space.from_unit(x)])
    assert (np.abs(truth - judge.cut) < judge.margin).tolist() == [False, True, True, False]
    assert band({column: 0.9})[1] is None
    assert band({}, Judge.of(targets.load("haar-face")))[1] is None


def test_a_stored_campaign_set_up_again_gives_another_strategy_its_space_and_band(tmp_path):
    """`set_up` on a stored random campaign against smile-cnn, its strategy swapped for bo-modes:
    the same searched space as the run's trials, and the band around the truth's cut that the
    target never judges, which bo-modes is then given (`lab/model_auc.py` relies on it)."""
    import dataclasses

    from searcher.campaign import CampaignConfig
    from searcher.campaign.loop import set_up
    from searcher.strategies.bo import FailureModes

    Campaign(generator="faces", target="smile-cnn", strategy="random", budget=8, batch=4, out=str(tmp_path / "r")).run(progress=False)
    stored = CampaignConfig.from_dir(tmp_path / "r")
    setup = set_up(dataclasses.replace(stored, strategy="bo-modes", strategy_options={}))
    trials = load_campaign(tmp_path / "r").trials
    assert setup.space.dim == len(trials["x"].iloc[0])
    assert isinstance(setup.strategy, FailureModes) and setup.strategy.unjudged is not None
    assert not isinstance(set_up(stored).strategy, FailureModes)


def test_a_campaign_spends_nothing_where_its_target_judges_nothing(tmp_path):
    """faces vs smile-cnn, bo-modes: after its Sobol start no evaluation is excluded as ambiguous
    (smile within 0.1 of the cut, a quarter of the prior cube), where random search loses a share."""
    out = {s: Campaign(generator="faces", target="smile-cnn", strategy=s, budget=48, batch=4, seed=1, out=str(tmp_path / s),
                       strategy_options={"n_init": 8} if s == "bo-modes" else {}).run(progress=False) for s in ("bo-modes", "random")}
    excluded = {s: load_campaign(tmp_path / s).trials.sort_values(["step", "idx"])["excluded"].notna().to_numpy() for s in out}
    assert not excluded["bo-modes"][8:].any()
    assert excluded["random"].sum() >= 5


def test_a_campaign_stored_with_the_ablation_switches_as_options_of_their_own_resumes(tmp_path):
    """bo-modes's ablation switches were options of the strategy's own (`inside="never"`) before they
    moved into its `ablation` table. A campaign stored so loads (its switches moved into the table),
    resumes from its directory or from the new spelling, and asks what an uninterrupted run asks."""
    kw = {**FAST, "strategy": DEFAULT_STRATEGY}
    new = {"n_init": 8, "ablation": {"inside": "never"}}
    reference = Campaign(**kw, budget=20, strategy_options=new, out=str(tmp_path / "reference")).run(progress=False).trials
    for way in ("from_dir", "new spelling"):
        out = tmp_path / way
        Campaign(**kw, budget=12, strategy_options=new, out=str(out)).run(progress=False)
        with sqlite3.connect(out / "campaign.sqlite") as con:  # as the campaign was stored before the table
            config = json.loads(con.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()[0])
            config["strategy_options"] = {"n_init": 8, "inside": "never"}
            con.execute("UPDATE meta SET value = ? WHERE key = 'config'", (json.dumps(config),))
        stored = Campaign.from_dir(out)
        assert stored.strategy_options == new
        campaign = stored if way == "from_dir" else Campaign(**kw, budget=12, strategy_options=new, out=str(out))
        again = dataclasses.replace(campaign, budget=20).run(progress=False, resume=True).trials
        pd.testing.assert_frame_equal(comparable(again), comparable(reference))
    assert Campaign(**kw, budget=4, strategy_options={"inside": "never"}, out=str(tmp_path / "old")).strategy_options == {"ablation": {"inside": "never"}}


def test_cli_ablation_switches_are_keys_of_a_table(tmp_path):
    """`--strategy-option ablation.KEY=VALUE` sets a key of the `ablation` table, merged with the
    table a TOML `--config` gives; the strategy built reads the words as values."""
    from searcher.campaign.loop import set_up
    from searcher.cli import main
    from searcher.cli.args import assignments

    config = tmp_path / "c.toml"
    config.write_text('[strategy_options]\nn_init = 4\n[strategy_options.ablation]\ninside = "never"\n')
    out = tmp_path / "hunt"
    assert main(["hunt", "--generator", "planted", "--target", "planted", "--budget", "8", "--out", str(out), "--no-progress",
                 "--config", str(config), "--strategy-option", "ablation.probe=true", "--strategy-option", "ablation.anywhere=0"]) == 0
    stored = load_campaign(out).config["strategy_options"]
    assert stored == {"n_init": 4, "ablation": {"inside": "never", "probe": "true", "anywhere": 0}}
    ablation = set_up(Campaign.from_dir(out)).strategy.ablation
    assert (ablation.inside, ablation.probe, ablation.anywhere) == ("never", True, 0.0)
    assert assignments(["a.b=1", "a.c=x"], tables=True) == {"a": {"b": 1, "c": "x"}} and assignments(["a.b=1"]) == {"a.b": 1}
    for bad in (["a.=1"], [".b=1"], ["a=1", "a.b=2"]):
        with pytest.raises(ParameterError, match="NAME=VALUE|not a table"):
            assignments(bad, "--strategy-option", tables=True)

"""The comparison: campaigns per strategy x seed x alpha, tables, figures, and failure modes."""

import sqlite3

import numpy as np
import pandas as pd

from searcher.analysis.compare import _watch, compare, diversity, failure_modes, mode_labels
from searcher.bench.score import effective_breadth
from searcher.cli import main


def _trials(points: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"x": list(points), "loss": np.ones(len(points))})


def test_failure_modes_are_clusters_of_the_uniform_failures():
    rng = np.random.default_rng(0)
    centres = np.array([[0.1, 0.1], [0.9, 0.1], [0.1, 0.9], [0.9, 0.9]])
    spread = _trials(np.repeat(centres, 10, axis=0) + 0.02 * rng.standard_normal((40, 2)))  # a uniform search: all four
    narrow = _trials(centres[[2]] + 0.02 * rng.standard_normal((200, 2)))  # a concentrated search: one, many times
    none = pd.DataFrame({"x": [np.zeros(2)], "loss": [0.0]})
    assert failure_modes([spread, narrow, none], ["random", "bo", "bo"], modes=4) == [4, 1, 0]
    # the reference is the uniform strategies' failures: the concentrated run does not define the modes
    assert failure_modes([spread, narrow], ["random", "bo"], modes=8)[1] <= 2


def test_a_repeated_point_is_one_failure():
    x = [np.array([0.1, 0.2]), np.array([0.5, 0.5]), np.array([0.1, 0.2]), np.array([0.9, 0.9])]
    trials = pd.DataFrame({"x": x, "loss": [1.0, 0.0, 1.0, 1.0], "truth": [{}] * 4})
    got = diversity(trials)
    assert (got["failures"], got["repeats"]) == (2.0, 1.0)


def test_compare_on_planted_writes_tables_and_figures(tmp_path):
    table = compare(tmp_path, generator="planted", target="planted", strategies=["random", "bo"], seeds=[0, 1],
                    alphas=[0.3, 0.9], budget=24, batch=4, progress=False)
    assert len(table) == 2 + 4  # random once per seed, bo per alpha and seed
    assert {"failures", "regions_found", "modes", "mean_pairwise", "failure_rate"} <= set(table.columns)
    curves = pd.read_csv(tmp_path / "curves.csv")
    assert curves.groupby(["strategy", "alpha", "seed"], dropna=False)["evaluation"].max().eq(24).all()
    for name in ("compare.csv", "failures_vs_evaluations.png", "failures_vs_alpha.png", "diversity.png"):
        assert (tmp_path / name).stat().st_size > 0
    again = compare(tmp_path, generator="planted", target="planted", strategies=["random", "bo"], seeds=[0, 1],
                    alphas=[0.3, 0.9], budget=24, batch=4, progress=False)  # resumes: nothing evaluated twice
    pd.testing.assert_frame_equal(table, again)


def test_cli_compare(tmp_path, capsys):
    assert main(["compare", "--generator", "planted", "--target", "planted", "--strategies", "random,sobol", "--seeds", "2",
                 "--budget", "12", "--out", str(tmp_path), "--no-progress"]) == 0
    assert "regions_found" in capsys.readouterr().out


def test_progress_shows_each_campaign_with_its_failures(tmp_path, capsys):
    """One bar per campaign, named by its run, counting evaluations and failures found so far."""
    table = compare(tmp_path, generator="planted", target="planted", strategies=["random", "bo"], seeds=[0], budget=16,
                    batch=4, progress=True)
    err = capsys.readouterr().err
    for name in ("random-s0", "bo-s0"):
        final = [line for line in err.replace("\r", "\n").splitlines() if line.startswith(f"{name}:") and "16/16" in line]
        assert final, f"no finished bar for {name} in {err[-500:]!r}"
        found = int(table.loc[table["strategy"] == name.split("-")[0], "failures"].iloc[0])
        assert f"failures={found}" in final[-1]


def test_the_progress_bars_wait_for_a_store_still_being_created(tmp_path):
    """A campaign's SQLite file exists a moment before its tables: the bars that read it skip that
    tick. Reading it once crashed a whole benchmark suite (`no such table: trials`)."""
    (tmp_path / "new").mkdir()
    sqlite3.connect(tmp_path / "new" / "campaign.sqlite").close()  # a file, no tables yet

    class Ray:
        def wait(self, pending, timeout):
            return pending[:1], pending[1:]  # one future finishes per tick

    _watch([str(tmp_path / "new")], budget=10, futures=["a", "b"], ray=Ray())


def _ward_nearest(reference: np.ndarray, points: np.ndarray, k: int) -> np.ndarray:
    """What the cross-fitted modes should be, computed here from scipy directly."""
    from scipy.cluster.hierarchy import fcluster, linkage

    labels = fcluster(linkage(reference, "ward"), k, "maxclust")
    centres = np.stack([reference[labels == c].mean(axis=0) for c in np.unique(labels)])
    return ((points[:, None, :] - centres[None]) ** 2).sum(-1).argmin(axis=1)


def test_a_run_of_seed_k_is_scored_on_modes_cut_from_the_other_seeds_failures():
    rng = np.random.default_rng(1)
    corners = np.array([[0.1, 0.1], [0.9, 0.1], [0.1, 0.9], [0.9, 0.9]])
    broad = rng.uniform(size=(40, 2))  # random seed 0: failures all over
    tight = corners[[0]] + 0.01 * rng.standard_normal((12, 2))  # random seed 1: one corner, then three single hits
    tight = np.concatenate([tight, corners[1:]])
    runs = [_trials(broad), _trials(tight), _trials(broad)]
    strategies, seeds = ["random", "random", "bo"], [0, 1, 0]
    labels = mode_labels(runs, strategies, modes=4, seeds=seeds)
    # seed 0's runs are scored on seed 1's clusters, seed 1's on seed 0's: never on their own failures
    assert np.array_equal(labels[0], _ward_nearest(tight, broad, 4))
    assert np.array_equal(labels[1], _ward_nearest(broad, tight, 4))
    assert np.array_equal(labels[2], labels[0])  # another strategy's seed 0: the same modes as random's seed 0
    # without seeds (or with one random seed) every run is scored on the clusters of every random failure
    pooled = np.concatenate([broad, tight])
    assert np.array_equal(mode_labels(runs, strategies, modes=4)[1], _ward_nearest(pooled, tight, 4))
    one_seed = mode_labels(runs[:1] + runs[2:], ["random", "bo"], modes=4, seeds=[0, 0])
    assert np.array_equal(one_seed[1], _ward_nearest(broad, broad, 4))


def test_scored_on_its_own_failures_a_random_run_looks_broader_than_held_out():
    """The bias cross-fitting removes: Ward clusters fitted to a run's own failures spread them evenly."""
    rng = np.random.default_rng(0)
    runs = [_trials(rng.uniform(size=(30, 6))) for _ in range(5)]  # five random searches of one failure set

    def effective(labels: np.ndarray) -> float:
        return effective_breadth(np.bincount(labels[labels >= 0]))

    own = np.mean([effective(m) for m in mode_labels(runs, ["random"] * 5, modes=16)])
    held = np.mean([effective(m) for m in mode_labels(runs, ["random"] * 5, modes=16, seeds=range(5))])
    assert held < own

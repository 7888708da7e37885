"""Scoring: failures, repeats, failure modes (cross-fitted), breadth and effective breadth, on hand-made inputs."""

import numpy as np
import pandas as pd
import pytest

from searcher.analysis.modes import breadth, diversity, effective_breadth, failure_modes, mode_labels, repeated, run_scores


def _trials(points: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"x": list(points), "loss": np.ones(len(points))})


@pytest.mark.parametrize("counts, expected", [
    ([4, 4, 4], 3.0),  # equal counts over 3 regions
    ([0, 7, 0, 0], 1.0),  # one region
    ([0, 0, 0], 0.0),  # no failures: 0, not NaN
    ([], 0.0),
    ([1, 1, 0, 1, 1], 4.0),
])
def test_effective_breadth(counts, expected):
    assert effective_breadth(counts) == pytest.approx(expected)
    assert not np.isnan(effective_breadth(counts))


def test_uneven_counts_are_less_broad_than_their_breadth():
    assert breadth([100, 1, 1, 1, 1]) == 5
    assert 1.0 < effective_breadth([100, 1, 1, 1, 1]) < 1.3


def test_repeats_are_points_seen_before():
    X = np.array([[0.1, 0.2], [0.5, 0.5], [0.1, 0.2 + 1e-12], [0.9, 0.9], [0.5, 0.5]])
    assert repeated(X).tolist() == [False, False, True, False, True]


def test_run_scores_count_each_new_failure_once():
    labels = [-1, 2, 0, -1, 2, 2, -1]  # the region of each new failure, -1 elsewhere (repeats included)
    got = run_scores(labels, repeats=1, of=4)
    assert (got["failures"], got["repeats"], got["breadth"], got["of"], got["evaluations"]) == (4, 1, 2, 4, 7)
    assert got["counts"] == "1 0 3 0" and got["first_failure"] == 2
    assert got["effective_breadth"] == pytest.approx(np.exp(-(0.25 * np.log(0.25) + 0.75 * np.log(0.75))), abs=1e-6)
    none = run_scores([-1, -1], repeats=0, of=3)
    assert (none["failures"], none["breadth"], none["effective_breadth"], none["first_failure"]) == (0, 0, 0.0, None)


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

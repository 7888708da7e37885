"""Failure modes and diversity stay bounded: above `MAX_POOL` failures Ward linkage and pdist see a
seeded sample (the same seed, the same modes); at or below it they see every failure, exactly as
before the cap."""

import numpy as np
import pandas as pd
import pytest
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import pdist

from searcher.analysis import modes as m


def _trials(n: int, seed: int = 0) -> pd.DataFrame:
    X = np.random.default_rng(seed).random((n, 3))
    return pd.DataFrame({"x": list(X), "loss": np.ones(n), "truth": [{}] * n})


@pytest.fixture
def seen(monkeypatch):
    """The sizes of the pools Ward linkage and pdist were given."""
    sizes: dict[str, list[int]] = {"linkage": [], "pdist": []}
    monkeypatch.setattr(m, "linkage", lambda X, *a: sizes["linkage"].append(len(X)) or linkage(X, *a))
    monkeypatch.setattr(m, "pdist", lambda X: sizes["pdist"].append(len(X)) or pdist(X))
    return sizes


def test_below_the_cap_modes_and_distance_are_as_before(seen):
    run = _trials(300)
    X = np.array(run["x"].tolist())
    labels = fcluster(linkage(X, "ward"), 6, "maxclust")  # the computation before the cap, on every failure
    centres = np.stack([X[labels == c].mean(axis=0) for c in np.unique(labels)])
    before = ((X[:, None, :] - centres[None]) ** 2).sum(-1).argmin(axis=1)
    assert np.array_equal(m.mode_labels([run], ["random"], modes=6)[0], before)
    assert m.diversity(run)["mean_pairwise"] == float((pdist(X) / np.sqrt(3)).mean())
    assert seen == {"linkage": [300], "pdist": [300]}


def test_above_the_cap_a_seeded_sample_makes_the_modes(seen, monkeypatch):
    monkeypatch.setattr(m, "MAX_POOL", 100)
    monkeypatch.setattr(m, "_CHUNK", 64)  # assignment in several chunks
    run = _trials(400)
    a = m.mode_labels([run], ["random"], modes=6, seed=1)[0]
    b = m.mode_labels([run], ["random"], modes=6, seed=1)[0]
    c = m.mode_labels([run], ["random"], modes=6, seed=2)[0]
    assert seen["linkage"] == [100, 100, 100]
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert (a >= 0).all() and len(np.unique(a)) == 6  # every failure joins a mode, sampled or not
    d = m.diversity(run)
    assert seen["pdist"] == [100] and d["failures"] == 400.0
    assert d == m.diversity(run) and 0.3 < d["mean_pairwise"] < 0.4  # the mean distance of uniform points in 3-D, / sqrt(3)

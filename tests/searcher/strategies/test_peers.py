"""The peers a user would pick instead of BO (issue 15): Ax's default BO, CMA-ME (pyribs) and CMA-ES
with IPOP restarts. The contract every strategy keeps is in test_strategies.py; here, what each adds."""

import sys

import numpy as np
import pytest

from searcher.errors import PluginError, SearcherError
from searcher.space import Categorical, Continuous, Cube, Integer, Space
from searcher.strategies import make_strategy
from searcher.strategies.peers import first_mean
from searcher.testing.planted import PlantedRegions

MIXED = Space([Continuous("a", 0.0, 1.0), Categorical("c", ("x", "y", "z")), Integer("k", 0, 4), Continuous("b", -2.0, 2.0)])
CUBE3 = Space([Continuous(f"x{i}", 0.0, 1.0) for i in range(3)])
EASY = PlantedRegions(dim=3, k=1, volume=0.3, seed=0)  # a third of the cube fails: random finds one in 12 points with p > 0.98
PLANTED = PlantedRegions(dim=3, k=2, volume=0.08, seed=1)


def planted_loss(X: np.ndarray) -> np.ndarray:
    """A 0/1 loss on MIXED's cube: failing in two boxes of (a, k, b), whatever the category."""
    return PLANTED.loss(np.stack([X[:, 0], X[:, 4], X[:, 5]], axis=1))


def drive(strategy, steps: int, batch: int = 4, loss=planted_loss, start: int = 0) -> np.ndarray:
    out = []
    for step in range(start, start + steps):
        X = strategy.ask(batch, step)
        strategy.tell(X, loss(X))
        out.append(X)
    return np.concatenate(out)


def replayed(name: str, X: np.ndarray, batch: int = 4, loss=planted_loss, seed: int = 3):
    """A fresh strategy told `X` batch by batch, as a resumed campaign tells its store."""
    strategy = make_strategy(name, MIXED if X.shape[1] == MIXED.dim else CUBE3, seed=seed)
    for i in range(0, len(X), batch):
        strategy.tell(X[i : i + batch], loss(X[i : i + batch]))
    return strategy


def assert_proposable(X: np.ndarray, space: Space = MIXED) -> None:
    assert X.shape[1] == space.dim and np.array_equal(Cube(space).snap(X), X) and ((X >= 0) & (X <= 1)).all()
    for start, width in Cube(space).blocks:
        assert (X[:, start : start + width].sum(axis=1) == 1).all(), "one-hot blocks hold one 1"


@pytest.mark.parametrize(("name", "module", "pip"), [("ax", "ax", "ax-platform"), ("cmame", "ribs", "ribs")])
def test_a_missing_package_names_the_pip_command(monkeypatch, name, module, pip):
    monkeypatch.setitem(sys.modules, module, None)  # `import module` raises ImportError
    with pytest.raises(PluginError, match=rf"The '{name}' strategy needs the '{pip}' package: pip install 'searcher\[baselines\]' \(or pip install {pip}\)"):
        make_strategy(name, MIXED, seed=0)


# --------------------------------------------------------------------------- ax


def test_ax_asks_proposable_points_deterministically_and_resumes():
    """Ax's centre and Sobol points, then one ask of its BoTorch model (8 answered points, 2 without
    an answer): the same seed and history ask the same points, and a strategy rebuilt from the
    history asks what the original asks. (The whole contract, 8 model steps, is slow: test_strategies.py.)"""
    pytest.importorskip("ax", reason="the 'ax' strategy needs ax-platform: pip install 'searcher[baselines]'")
    a = make_strategy("ax", MIXED, seed=3)
    X = drive(a, steps=2)
    assert X.shape == (8, MIXED.dim) and len(np.unique(X, axis=0)) == 8
    assert_proposable(X)
    assert np.allclose(X[0, [0, 5]], 0.5), "Ax starts at the centre of the space"
    unanswered = Cube(MIXED).uniform(np.random.default_rng(0), 2)
    a.tell(unanswered, np.array([np.nan, np.nan]))
    nxt = a.ask(2, 3)
    assert_proposable(nxt)
    b = replayed("ax", X)
    b.tell(unanswered, np.array([np.nan, np.nan]))
    assert np.array_equal(b.ask(2, 3), nxt)
    assert not np.array_equal(make_strategy("ax", MIXED, seed=4).ask(4, 0), X[:4])


def test_ax_says_so_when_a_small_space_runs_out_of_new_points():
    pytest.importorskip("ax", reason="the 'ax' strategy needs ax-platform: pip install 'searcher[baselines]'")
    strategy = make_strategy("ax", Space([Categorical("c", ("x", "y", "z"))]), seed=0)
    strategy.tell(np.eye(3), np.zeros(3))
    with pytest.raises(SearcherError, match=r"Ax found no new point to ask at step 1 \(0 of the 1 asked, 3 told\): it never asks a point twice"):
        strategy.ask(1, 1)


# --------------------------------------------------------------------------- cmame


def test_cmame_measures_spread_uniform_points_over_the_grid():
    """The random projection, through the normal CDF, puts uniform points in every row and column
    of the 10 x 10 archive and most of its cells (an unscaled projection fills a few central ones)."""
    pytest.importorskip("ribs", reason="the 'cmame' strategy needs ribs: pip install 'searcher[baselines]'")
    strategy = make_strategy("cmame", MIXED, seed=0)
    M = strategy.measures(Cube(MIXED).uniform(np.random.default_rng(1), 4000))
    assert M.shape == (4000, 2) and ((M >= 0) & (M <= 1)).all()
    cells = np.minimum((M * 10).astype(int), 9)
    for axis in (0, 1):
        counts = np.bincount(cells[:, axis], minlength=10)
        assert counts.min() > 0.5 * counts.mean(), counts
    assert len({tuple(c) for c in cells}) >= 80
    assert strategy.measures(np.zeros((0, MIXED.dim))).shape == (0, 2)
    assert not np.allclose(make_strategy("cmame", MIXED, seed=1).measures(np.eye(MIXED.dim)), strategy.measures(np.eye(MIXED.dim)))


def test_cmame_replays_generations_and_draws_past_their_end_from_the_emitters():
    """Generations of 3 x 4 points; asks of 5 run across their ends. The same history asks the same
    points, an unanswered point keeps its place, and a rebuilt strategy asks what the original asks."""
    pytest.importorskip("ribs", reason="the 'cmame' strategy needs ribs: pip install 'searcher[baselines]'")
    a = make_strategy("cmame", MIXED, seed=3)
    assert a.generation == 12
    X = drive(a, steps=7, batch=5)  # 35 points: two generations told, 11 of the third
    assert_proposable(X)
    first = make_strategy("cmame", MIXED, seed=3).ask(12, 0)
    assert np.array_equal(first[:5], X[:5]) and np.array_equal(first[5:10], X[5:10]), "one generation, asked in parts"
    loss = planted_loss(X)
    loss[[3, 17]] = np.nan
    b, c = (make_strategy("cmame", MIXED, seed=3) for _ in range(2))
    b.tell(X, loss)
    for i in range(0, 35, 5):
        c.tell(X[i : i + 5], loss[i : i + 5])
    assert np.array_equal(b.ask(6, 7), c.ask(6, 7))
    assert_proposable(b.ask(6, 7))


# --------------------------------------------------------------------------- cmaes with restarts


def test_cmaes_restarts_a_stopped_run_with_twice_the_population():
    """On a flat loss CMA-ES stops (its losses have not moved for 10 + 30 d / popsize generations)
    and IPOP starts again elsewhere with twice the population; replayed from the history, a rebuilt
    strategy restarts at the same point. Without restarts the run goes on, bit for bit the same
    until the restart."""
    pytest.importorskip("cmaes", reason="the 'cmaes' strategy needs cmaes: pip install 'searcher[baselines]'")

    def flat(X):
        return np.zeros(len(X))

    a = make_strategy("cmaes", CUBE3, seed=0)
    X = drive(a, steps=30, batch=7, loss=flat)
    assert_proposable(X, CUBE3)
    assert a.runs == [(0, 7), (168, 14)]
    plain = make_strategy("cmaes", CUBE3, seed=0, restarts=False)
    Y = drive(plain, steps=30, batch=7, loss=flat)
    assert plain.runs == [(0, 7)]
    assert np.array_equal(X[:168], Y[:168]) and not np.array_equal(X[168:], Y[168:])
    restarted = X[168 + 14 : 168 + 28]
    assert np.linalg.norm(restarted.mean(axis=0) - Y[168:].mean(axis=0)) > 0.05, "the new run searches elsewhere"
    b = replayed("cmaes", X, batch=7, loss=flat, seed=0)
    assert np.array_equal(b.ask(7, 30), a.ask(7, 30)) and b.runs == a.runs
    assert make_strategy("cmaes", CUBE3, restarts="false").restarts is False


@pytest.mark.parametrize(("name", "package"), [("cmaes", "cmaes"), ("cmame", "ribs")])
def test_a_cma_peer_starts_at_the_centre_or_at_a_seeded_random_point(name, package):
    """`start="random"`: the first points gather around a uniform point drawn from the seed (the same
    for the same seed, another for another), not around the cube's centre where the default starts."""
    pytest.importorskip(package, reason=f"the {name!r} strategy needs {package}: pip install 'searcher[baselines]'")
    space = Space([Continuous(f"x{i}", 0.0, 1.0) for i in range(8)])
    start = first_mean("random", 8, seed=2)
    assert np.array_equal(start, first_mean("random", 8, seed=2)) and not np.allclose(start, first_mean("random", 8, seed=3))
    centred = make_strategy(name, space, seed=2).ask(12, 0).mean(axis=0)
    moved = make_strategy(name, space, seed=2, start="random").ask(12, 0).mean(axis=0)
    assert np.linalg.norm(centred - 0.5) < np.linalg.norm(centred - start)
    assert np.linalg.norm(moved - start) < np.linalg.norm(moved - 0.5)
    assert np.array_equal(moved, make_strategy(name, space, seed=2, start="random").ask(12, 0).mean(axis=0))


@pytest.mark.parametrize(("name", "package", "steps"), [("ax", "ax-platform", 3), ("cmame", "ribs", 6), ("cmaes", "cmaes", 6)])
def test_a_peer_finds_failures_on_an_easy_planted_case(name, package, steps):
    pytest.importorskip(package.split("-")[0], reason=f"the {name!r} strategy needs {package}: pip install 'searcher[baselines]'")
    X = drive(make_strategy(name, CUBE3, seed=0), steps=steps, loss=EASY.loss)
    assert_proposable(X, CUBE3)
    assert EASY.failures_found(X) >= 1

"""Search strategies: the ask/tell contract every strategy keeps, and what BO adds."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from botorch.models import SingleTaskGP
from gpytorch.mlls import ExactMarginalLogLikelihood
from scipy import integrate, stats

from searcher.errors import ParameterError
from searcher.space import Categorical, Continuous, Cube, Integer, Space
from searcher.strategies import STRATEGIES, make_strategy
from searcher.strategies.bo.diversity import (
    composite,
    crowding,
    diversity,
    log_expected_improvement,
)
from searcher.strategies.bo.gp import _ExactMLL, fit_gp
from searcher.testing.planted import PlantedRegions

MIXED = Space([Continuous("a", 0.0, 1.0), Categorical("c", ("x", "y", "z")), Integer("k", 0, 4), Continuous("b", -2.0, 2.0)])
PLANTED = PlantedRegions(dim=3, k=2, volume=0.08, seed=1)
CUBE3 = Space([Continuous(f"x{i}", 0.0, 1.0) for i in range(3)])


def planted_loss(X: np.ndarray) -> np.ndarray:
    """A 0/1 loss on MIXED's cube: failing in two boxes of (a, b, k), whatever the category."""
    cols = np.stack([X[:, 0], X[:, 4], X[:, 3]], axis=1)  # a, k, b
    return PLANTED.loss(cols)


def half_failing(X: np.ndarray) -> np.ndarray:
    """A 0/1 loss failing on 40% of MIXED's cube (a > 0.6): failures within any strategy's first
    points, so the model-based ones fit their model before the contract saves their state."""
    return (X[:, 0] > 0.6).astype(float)


def drive(strategy, steps: int, batch: int = 4, loss=planted_loss, start: int = 0) -> np.ndarray:
    out = []
    for step in range(start, start + steps):
        X = strategy.ask(batch, step)
        strategy.tell(X, loss(X))
        out.append(X)
    return np.concatenate(out)


def is_proposable(X: np.ndarray) -> bool:
    return np.array_equal(Cube(MIXED).snap(X), X)


PEER_PACKAGES = {"tpe": "optuna", "cmaes": "cmaes", "ax": "ax", "cmame": "ribs"}  # optional: pip install 'searcher[baselines]'
SLOW = {"ax"}  # Ax fits a GP and optimises its acquisition for every point it asks: about 40 s here


def needs_package(name: str) -> None:
    """Skips a test of a peer strategy whose optional package is not installed."""
    if name in PEER_PACKAGES:
        pytest.importorskip(PEER_PACKAGES[name], reason=f"the {name!r} strategy needs {PEER_PACKAGES[name]!r}: pip install 'searcher[baselines]'")


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in STRATEGIES.available()])
def test_every_strategy_keeps_the_contract(name):
    """Shape, proposable points (one-hot vertices, integer cell centres), determinism by seed and
    step, NaN losses tolerated, and a strategy rebuilt from the history and the last state asks
    what the original asks next (with failures told: `bo` and `bo-modes` carry a fitted model)."""
    needs_package(name)
    keeps_the_contract(name)


def test_bo_modes_with_the_classification_likelihood_keeps_the_contract():
    """`likelihood="dirichlet"` carries a GP per class between steps: restored, it asks the same."""
    keeps_the_contract("bo-modes", likelihood="dirichlet")


def keeps_the_contract(name: str, **options) -> None:
    a = make_strategy(name, MIXED, seed=3, **options)
    X = drive(a, steps=8, loss=half_failing)
    assert X.shape == (32, MIXED.dim) and is_proposable(X)
    unanswered = a.ask(2, 8)
    a.tell(unanswered, np.array([np.nan, np.nan]))  # no answers: never failures, never a crash
    b = make_strategy(name, MIXED, seed=3, **options)
    assert np.array_equal(drive(b, steps=8, loss=half_failing), X)
    state = json.loads(json.dumps(a.state()))  # what the store keeps
    nxt = a.ask(4, 9)
    c = make_strategy(name, MIXED, seed=3, **options)
    for i in range(8):
        c.tell(X[4 * i : 4 * i + 4], half_failing(X[4 * i : 4 * i + 4]))
    c.tell(unanswered, np.array([np.nan, np.nan]))
    c.restore(state)
    assert np.array_equal(c.ask(4, 9), nxt)
    assert is_proposable(nxt)
    assert not np.array_equal(make_strategy(name, MIXED, seed=4, **options).ask(4, 0), make_strategy(name, MIXED, seed=3, **options).ask(4, 0))


@pytest.mark.parametrize("name, options, match", [
    ("bo", {"alpha": 1.2}, "'alpha'"),
    ("bo", {"alpha": float("nan")}, "'alpha'"),
    ("bo", {"acquisition": "ucb"}, "'logei', 'ei'"),
    ("bo", {"capacity": 0}, "'capacity'"),
    ("bo", {"neighbourhood": "sphere"}, "'auto', 'ball', 'cell'"),
    ("bo", {"budget": 10, "n_init": 11}, r"budget \(10\)"),
    ("bo", {"lengthscale": 1}, "no option 'lengthscale'.*alpha"),
    ("cmaes", {"sigma": 0}, "'sigma'"),
    ("cmaes", {"restarts": "maybe"}, "'restarts' option of CMAESSearch must be True or False. Got 'maybe'"),
    ("ax", {"init": 0}, "'init'"),
    ("cmame", {"cells": 0}, "'cells'"),
    ("cmame", {"start": "corner"}, "'start' option of CMAMESearch must be one of 'centre', 'random'. Got 'corner'"),
    ("cmame", {"batch_size": 1}, "'batch_size'"),
    ("random", {"alpha": 0.5}, "Its options: none"),
    ("annealing", {}, "Available strategies: random, sobol, bo"),
])
def test_bad_options_name_the_value_and_the_valid_ones(name, options, match):
    with pytest.raises(ParameterError, match=match):
        make_strategy(name, MIXED, seed=0, **options)


def test_diversity_term_counts_failures_within_the_radius():
    failures = np.array([[0.5, 0.5, 0.5], [0.52, 0.5, 0.5], [0.9, 0.9, 0.9]])
    X = np.array([[0.5, 0.5, 0.5], [0.9, 0.9, 0.9], [0.0, 0.0, 0.0]])
    assert crowding(X, failures, radius=0.1).tolist() == [2, 1, 0]
    np.testing.assert_allclose(diversity(X, failures, radius=0.1, capacity=4), [0.5, 0.75, 1.0])
    assert diversity(X, failures, radius=0.1, capacity=1).tolist() == [0.0, 0.0, 1.0]
    assert diversity(X, np.zeros((0, 3)), radius=0.1, capacity=4).tolist() == [1.0, 1.0, 1.0]
    # eq. (4): (1 - alpha) L_c + alpha D
    np.testing.assert_allclose(composite(np.array([1.0, 0.0, 1.0]), np.array([0.5, 0.75, 1.0]), 0.6), [0.7, 0.45, 1.0])


def test_cell_neighbourhoods_count_the_same_categories_or_the_same_continuous_point():
    """MIXED's cube: a, one-hot c (3 columns), k, b. A cell is a value of c; a failure also crowds
    the continuous neighbourhood it lies in, whatever its category (one recipe, every colour)."""
    categorical = Cube(MIXED).categorical
    assert categorical.tolist() == [False, True, True, True, False, False]
    failures = np.array([[0.1, 1, 0, 0, 0.1, 0.1], [0.9, 1, 0, 0, 0.9, 0.9], [0.5, 0, 1, 0, 0.5, 0.5]])
    X = np.array([[0.5, 1, 0, 0, 0.5, 0.5],   # two in its cell (and one nearby, in another)
                  [0.9, 0, 1, 0, 0.9, 0.9],   # one in its cell, one nearby
                  [0.9, 0, 0, 1, 0.9, 0.9],   # an empty cell, but the second failure's recipe
                  [0.2, 0, 0, 1, 0.7, 0.3]])  # new on both counts
    assert crowding(X, failures, radius=0.1, categorical=categorical).tolist() == [2, 1, 1, 0]
    assert crowding(X, failures, radius=0.1).tolist() == [0, 0, 0, 0]  # as balls, all are far from every failure
    np.testing.assert_allclose(diversity(X, failures, 0.1, 4, categorical), [0.5, 0.75, 0.75, 1.0])


def test_bo_on_a_broad_failure_set_never_repeats_and_reaches_every_combination():
    """Failures in 40% of the volume whatever the categories (like a detector on faces). A repeat
    of an evaluated point finds nothing new, and a search that scores only where its GP predicts
    failures never tries a category it has no failure in (measured before the fix: 105 distinct
    points of 120, failures in 5 of the 12 combinations)."""
    space = Space([Categorical("c", ("a", "b", "c", "d")), Categorical("e", ("u", "v", "w"))]
                  + [Continuous(f"x{i}", 0.0, 1.0) for i in range(12)])
    bo = make_strategy("bo", space, seed=0)
    assert bo.neighbourhood == "cell"
    X = drive(bo, steps=30, loss=lambda X: (X[:, 7] > 0.6).astype(float))
    assert len(np.unique(X, axis=0)) == len(X), "no point is proposed twice"
    failed = X[X[:, 7] > 0.6]
    combinations = {(int(np.argmax(r[0:4])), int(np.argmax(r[4:7]))) for r in failed}
    assert len(failed) >= 90 and len(combinations) >= 10, (len(failed), combinations)


@pytest.mark.parametrize("mean, sd, D, alpha", [(0.3, 0.2, 1.0, 0.6), (0.9, 0.05, 0.4, 0.6), (-0.5, 0.3, 1.0, 0.2), (1.4, 0.5, 0.0, 0.3), (0.2, 0.1, 0.7, 0.0)])
def test_log_expected_improvement_equals_numerical_integration(mean, sd, D, alpha):
    """log E[max(0, L - alpha)], L = (1 - alpha) min(f, 1) + alpha D, f ~ N(mean, sd^2), by quadrature."""
    def gain(f: float) -> float:
        return max(0.0, (1 - alpha) * min(f, 1.0) + alpha * D - alpha) * stats.norm.pdf(f, mean, sd)

    expected, _ = integrate.quad(gain, mean - 12 * sd, mean + 12 * sd, points=[alpha * (1 - D) / (1 - alpha) if alpha < 1 else 1.0, 1.0], limit=200)
    got = log_expected_improvement(torch.tensor([mean], dtype=torch.float64), torch.tensor([sd], dtype=torch.float64),
                                   torch.tensor([D], dtype=torch.float64), alpha)
    assert math.exp(float(got)) == pytest.approx(expected, rel=1e-6, abs=1e-300)


def test_no_improvement_is_possible_at_alpha_one_or_in_a_full_mode():
    one = torch.ones(1, dtype=torch.float64)
    assert float(log_expected_improvement(one, one, one, 1.0)) == -math.inf
    assert float(log_expected_improvement(one, one, torch.zeros(1, dtype=torch.float64), 0.6)) == -math.inf  # t = 1


def test_bo_finds_more_failures_than_random_on_a_planted_landscape():
    """3-D, two boxes, 8% of the volume, 120 evaluations: random expects ~10 failures."""
    def loss(X):
        return PLANTED.loss(X)

    found = {}
    for name in ("random", "bo"):
        X = drive(make_strategy(name, CUBE3, seed=0), steps=30, loss=loss)
        found[name] = (PLANTED.failures_found(X), PLANTED.regions_found(X))
    assert found["bo"][0] >= 2 * found["random"][0], found
    assert found["bo"][1] == 2, found


def test_bo_carries_hyperparameters_and_records_the_composite():
    bo = make_strategy("bo", CUBE3, seed=1, n_init=8)
    X = bo.ask(8, 0)
    assert np.array_equal(X, make_strategy("sobol", CUBE3, seed=1).ask(8, 0))  # the initial design is Sobol
    bo.tell(X, PLANTED.loss(X))
    drive(bo, steps=6, loss=PLANTED.loss, start=1)
    state = bo.state()
    assert state["gp"] and state["fitted_on"] > 0, "the GP was fitted and its hyperparameters kept"
    told, told_loss = bo.history.answered()
    tX, ty = torch.tensor(told), torch.tensor(told_loss)
    _, kept = fit_gp(tX, ty, state["gp"], iterations=0)
    assert kept == state["gp"], "carried-over hyperparameters are used bit for bit"
    model, _ = fit_gp(tX, ty, None, iterations=0)  # a cold fit
    assert (model.covar_module.base_kernel.lengthscale >= 0.1).all() and model.likelihood.noise.item() <= 0.05
    Xn = bo.ask(4, 7)
    loss = PLANTED.loss(Xn)
    D = diversity(Xn, told[told_loss >= 0.5][-bo.memory :], bo.radius, bo.capacity)
    np.testing.assert_allclose(bo.composite(Xn, loss), 0.4 * loss + 0.6 * D)


@pytest.mark.parametrize("n", [30, 200])
def test_the_fitted_likelihood_and_its_gradient_are_gpytorchs(n):
    """The MAP fit's objective takes its gradient in closed form; GPyTorch differentiates through the
    Cholesky factorisation. Both give the same value and the same gradient in every hyperparameter."""
    rng = np.random.default_rng(n)
    X = torch.tensor(rng.random((n, 5)))
    y = torch.tensor(np.sin(3 * X.numpy().sum(1)) + 0.1 * rng.standard_normal(n)).unsqueeze(-1)
    model = SingleTaskGP(X, y)
    model.train()
    with torch.no_grad():
        model.covar_module.lengthscale = torch.tensor(rng.uniform(0.3, 2.0, (1, 5)))  # away from the fit's start
    found = []
    for mll in (_ExactMLL(model.likelihood, model), ExactMarginalLogLikelihood(model.likelihood, model)):
        model.zero_grad()
        value = mll(model(*model.train_inputs), model.train_targets)
        value.backward()
        found.append((value.item(), torch.cat([p.grad.reshape(-1) for p in model.parameters()]).numpy()))
    assert found[0][0] == pytest.approx(found[1][0], rel=1e-10)
    assert np.abs(found[0][1]).max() > 1e-3, "a gradient that is not zero"
    np.testing.assert_allclose(found[0][1], found[1][1], rtol=1e-8, atol=1e-10)


def test_bo_batches_spread_and_categoricals_are_vertices():
    bo = make_strategy("bo", MIXED, seed=2)
    X = drive(bo, steps=12, batch=6)
    assert is_proposable(X)
    assert len({tuple(r) for r in X}) == len(X), "no point is proposed twice"
    cats = X[:, 1:4]
    assert set(cats.sum(axis=1)) == {1.0} and (cats.sum(axis=0) > 0).all(), "every category is tried"


def test_a_sobol_stream_read_in_pieces_gives_the_points_of_one_read():
    from searcher.strategies.baselines import SobolStream, sobol_points

    stream = SobolStream(5, seed=3)
    pieces = [stream.points(0, 3), stream.points(3, 1), stream.points(4, 6)]
    whole = sobol_points(5, 3, 0, 10)
    assert np.array_equal(np.concatenate(pieces), whole)
    assert np.array_equal(stream.points(2, 4), whole[2:6])  # a read elsewhere starts there
    assert np.array_equal(stream.points(6, 4), whole[6:])
    assert not np.array_equal(SobolStream(5, seed=4).points(0, 10), whole)

import math

import numpy as np
import pandas as pd
import pytest

from searcher.errors import ParameterError
from searcher.space import (
    Beta,
    Categorical,
    Continuous,
    Integer,
    Latent,
    Space,
    TruncatedNormal,
    ZeroInflated,
    prior_argmax,
)


@pytest.fixture
def space():
    return Space(
        [
            Continuous("yaw", -75, 75, TruncatedNormal(0, 20)),
            Integer("identity", 0, 9),
            Categorical("eyewear", ("none", "glasses", "sunglasses"), (0.5, 0.3, 0.2)),
            Continuous("blur", 0, 4, ZeroInflated(0.5, Beta(1, 3))),
        ],
        latent=Latent("z", 3, bound=2.0),
    )


def test_names_and_dim(space):
    assert space.names == ["yaw", "identity", "eyewear", "blur", "z0", "z1", "z2"]
    assert space.dim == 1 + 1 + 3 + 1 + 3


def test_sample_is_seeded_and_inside_bounds(space):
    a, b = space.sample(200, seed=3), space.sample(200, seed=3)
    assert a == b and a != space.sample(200, seed=4)
    space.validate(a)  # every draw is valid
    assert {r["eyewear"] for r in a} == {"none", "glasses", "sunglasses"}
    blur = np.array([r["blur"] for r in a])
    assert 0.3 < (blur == 0).mean() < 0.7, "ZeroInflated(0.5) puts about half the mass at the lower bound"


def test_unit_cube_layout_one_hot(space):
    X = space.to_unit({"yaw": 75.0, "identity": 0, "eyewear": "glasses", "blur": 1.0, "z1": -2.0})
    assert X.shape == (1, 9)
    np.testing.assert_allclose(X[0], [1.0, 0.05, 0, 1, 0, 0.25, 0.5, 0.0, 0.5])


def test_round_trip_and_decoding(space):
    rows = space.validate(space.sample(20, seed=0))
    back = space.from_unit(space.to_unit(rows))
    for a, b in zip(rows, back):
        assert a["eyewear"] == b["eyewear"] and a["identity"] == b["identity"]
        assert math.isclose(a["yaw"], b["yaw"], abs_tol=1e-9)
    # any point of the cube decodes to a valid row: argmax for categoricals, cells for integers
    X = np.random.default_rng(0).random((50, space.dim))
    space.validate(space.from_unit(X))
    assert space.from_unit(np.array([[0, 1.0, 0.2, 0.9, 0.1, 0, 0, 0, 1]]))[0]["identity"] == 9


def test_missing_params_take_defaults(space):
    row = space.validate({"yaw": 10.0})[0]
    assert row["identity"] == 0 and row["eyewear"] == "none" and row["z2"] == 0.0


@pytest.mark.parametrize(
    "params, message",
    [
        ({"yaw": 80.0}, r"'yaw' parameter must be a number in \[-75, 75\]. Got 80.0"),
        ({"yaw": float("nan")}, r"'yaw'.*Got nan"),
        ({"yaw": "left"}, r"'yaw'.*Got 'left'"),
        ({"yaw": True}, r"'yaw'.*Got True"),
        ({"identity": 2.5}, r"'identity' parameter must be an integer in \[0, 9\]"),
        ({"eyewear": "monocle"}, r"'eyewear' parameter must be one of 'none', 'glasses', 'sunglasses'. Got 'monocle'"),
        ({"z0": 2.5}, r"'z0'.*\[-2, 2\]"),
        ({"yw": 1.0}, r"Unknown parameter 'yw'. Did you mean 'yaw'\?"),
    ],
)
def test_bad_values_name_the_parameter_and_valid_range(space, params, message):
    with pytest.raises(ParameterError, match=message):
        space.validate(params)


def test_bad_unit_arrays(space):
    with pytest.raises(ParameterError, match="n x 9"):
        space.from_unit(np.zeros((2, 4)))
    with pytest.raises(ParameterError, match="NaN"):
        space.from_unit(np.full((1, 9), np.nan))


def test_bad_definitions():
    with pytest.raises(ParameterError, match="low < high"):
        Continuous("x", 1, 1)
    with pytest.raises(ParameterError, match="unique"):
        Space([Continuous("x", 0, 1), Continuous("x", 0, 2)])
    with pytest.raises(ParameterError, match="sum"):
        Categorical("c", ("a", "b"), (0.5, 0.6))


def test_truncated_normal_matches_scipy():
    """The rejection sampler draws from the same law as scipy's truncnorm (KS test)."""
    from scipy import stats

    x = TruncatedNormal(1.0, 2.0).sample(np.random.default_rng(0), 4000, 0.0, 3.0)
    ref = stats.truncnorm((0 - 1) / 2, (3 - 1) / 2, loc=1, scale=2)
    assert stats.kstest(x, ref.cdf).pvalue > 0.01


def test_quantile_decoding_follows_the_prior():
    """Uniform points decoded as prior quantiles are distributed as the prior (KS test), and the
    zero-inflated mass sits at the lower bound."""
    from scipy import stats

    space = Space([Continuous("yaw", -75, 75, TruncatedNormal(0, 12)), Continuous("blur", 0, 4, ZeroInflated(0.6, Beta(1.1, 7)))],
                  latent=Latent("z", 2), prior_cube=True)
    U = np.random.default_rng(0).random((3000, space.dim))
    rows = space.from_unit(U)
    yaw = np.array([r["yaw"] for r in rows])
    ref = TruncatedNormal(0, 12).sample(np.random.default_rng(1), 3000, -75, 75)
    assert stats.ks_2samp(yaw, ref).pvalue > 0.01
    blur = np.array([r["blur"] for r in rows])
    assert 0.55 < (blur == 0).mean() < 0.65
    z = np.array([r["z0"] for r in rows])
    assert abs(z.std() - 1) < 0.1 and abs(z.mean()) < 0.1
    space.validate(rows)


PRIOR = (0.74, 0.20, 0.06)


@pytest.mark.parametrize("cube", ["prior", "box"])
def test_a_prior_cube_draws_categories_from_their_prior(cube):
    """Uniform points of a prior cube pick each category with its prior probability (chi-square
    against the prior, after snapping, as a random search draws them); a box cube picks them
    uniformly. Either way a one-hot vertex keeps its category, so what a strategy proposes is what
    is rendered."""
    from scipy import stats

    space = Space([Categorical("eyewear", ("none", "glasses", "sunglasses"), PRIOR), Continuous("yaw", -75, 75)],
                  prior_cube=cube == "prior")
    X = space.cube.uniform(np.random.default_rng(0), 6000)
    counts = pd.Series([r["eyewear"] for r in space.from_unit(X)]).value_counts().reindex(["none", "glasses", "sunglasses"])
    expected = np.array(PRIOR if cube == "prior" else (1 / 3, 1 / 3, 1 / 3)) * len(X)
    assert stats.chisquare(counts.to_numpy(), expected).pvalue > 0.01
    vertices = np.eye(3)[[0, 1, 2, 2]]
    X = np.column_stack([vertices, np.full(4, 0.5)])
    assert np.array_equal(space.cube.snap(X), X)
    assert [r["eyewear"] for r in space.from_unit(X)] == ["none", "glasses", "sunglasses", "sunglasses"]


def test_prior_argmax_is_the_argmax_for_uniform_probs():
    """With no prior (or a uniform one) the prior-weighted argmax is the plain argmax."""
    block = np.random.default_rng(1).random((500, 4))
    assert np.array_equal(prior_argmax(block, None), block.argmax(axis=1))
    assert np.array_equal(prior_argmax(block, (0.25,) * 4), block.argmax(axis=1))

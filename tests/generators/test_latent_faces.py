"""`faces-latent`: the planted entanglements are real, and orthogonalising removes them."""

import numpy as np
import pytest

import generators
from searcher.errors import ParameterError


@pytest.fixture(scope="module")
def sample(latent):
    z = np.random.default_rng(0).standard_normal((3000, latent.latent_dim))
    return z, latent.attributes(z)


def column(rows, name):
    return np.array([r[name] for r in rows], float)


def ridge_direction(z, y, lam=1.0):
    """Normal of the latent-to-attribute hyperplane, as the transects will fit it."""
    zc, yc = z - z.mean(0), y - y.mean()
    w = np.linalg.solve(zc.T @ zc + lam * np.eye(z.shape[1]), zc.T @ yc)
    return w / np.linalg.norm(w)


def test_hair_direction_drags_gender_until_orthogonalised(latent, sample):
    z, rows = sample
    hair = ridge_direction(z, column(rows, "hair_length"))
    gender = ridge_direction(z, column(rows, "gender_presentation"))
    assert abs(hair @ gender) > 0.3, "hair and gender directions should be entangled"
    ortho = hair - (hair @ gender) * gender
    ortho /= np.linalg.norm(ortho)
    base = np.zeros((1, latent.latent_dim))
    steps = np.array([-1.5, 1.5])[:, None]
    naive = latent.attributes(base + steps * hair)
    clean = latent.attributes(base + steps * ortho)
    naive_dg = abs(np.diff(column(naive, "gender_presentation")))[0]
    clean_dg = abs(np.diff(column(clean, "gender_presentation")))[0]
    assert np.diff(column(clean, "hair_length"))[0] > 0.3
    assert naive_dg > 0.3 and clean_dg < 0.05


def test_longer_hair_adds_facial_hair_on_masculine_faces_only(latent):
    hair = latent.direction("hair")
    gender = latent.direction("gender")
    for g, expect_beard in ((-1.5, True), (1.5, False)):
        rows = latent.attributes(np.stack([g * gender - 1.5 * hair, g * gender + 1.5 * hair]))
        gain = rows[1]["facial_hair"] - rows[0]["facial_hair"]
        assert (gain > 0.3) if expect_beard else (gain == 0.0)


def test_darker_skin_direction_adds_earrings(latent, sample):
    _, rows = sample
    skin = column(rows, "skin_tone")
    ears = column(rows, "earrings")
    assert np.corrcoef(skin, ears)[0, 1] > 0.25


def test_from_latent_matches_generate(latent):
    z = np.random.default_rng(1).uniform(-2, 2, (3, latent.latent_dim))
    by_params = latent.generate([dict(zip(latent.space.names, zi)) for zi in z], seed=5)
    by_latent = latent.from_latent(z, seed=5)
    assert np.array_equal(by_params.images, by_latent.images)
    assert set(by_latent.truth.columns) >= {"skin_tone", "hair_length", "gender_presentation", "earrings"}


def test_bad_latents_raise(latent):
    with pytest.raises(ParameterError, match=r"`N x 32`"):
        latent.from_latent(np.zeros((2, 5)))
    with pytest.raises(ParameterError, match="NaN"):
        latent.from_latent(np.full((1, 32), np.nan))
    with pytest.raises(ParameterError, match="latent_dim"):
        generators.load("faces-latent", latent_dim=8)


def test_mixing_seed_makes_another_generator():
    a = generators.load("faces-latent", mixing_seed=0, resolution=64)
    b = generators.load("faces-latent", mixing_seed=1, resolution=64)
    assert not np.allclose(a.direction("skin"), b.direction("skin"))

"""The measures of `validate_generator`: the Frechet distance against its closed form, its
extrapolation to infinitely many samples, and the yardstick blur."""

import numpy as np
import pytest

from searcher.analysis.generator_quality import blurred, frechet_distance, frechet_distance_unbiased


def test_frechet_distance_matches_the_closed_form_for_diagonal_gaussians():
    rng = np.random.default_rng(0)
    a = rng.normal([0, 1, 2], [1.0, 2.0, 0.5], size=(4000, 3))
    b = rng.normal([1, 1, 0], [2.0, 1.0, 0.5], size=(4000, 3))
    ma, mb, va, vb = a.mean(0), b.mean(0), a.var(0, ddof=1), b.var(0, ddof=1)
    # with (nearly) diagonal sample covariances: |mu_a - mu_b|^2 + sum (sd_a - sd_b)^2
    closed = ((ma - mb) ** 2).sum() + ((np.sqrt(va) - np.sqrt(vb)) ** 2).sum()
    assert frechet_distance(a, b) == pytest.approx(closed, rel=0.02)
    assert frechet_distance(a, a) == pytest.approx(0.0, abs=1e-6)
    assert np.isnan(frechet_distance(a[:1], b))


def test_the_extrapolated_distance_removes_the_small_sample_bias():
    # 200 draws of two 16-d Gaussians: the plain distance reads twice the true one and more; the
    # distance extrapolated in 1/n lands on it (Chong and Forsyth 2020), seed after seed
    d, n = 16, 200
    mu, sd = np.full(d, 0.1), np.linspace(0.8, 1.2, d)
    true = mu @ mu + ((1.0 - sd) ** 2).sum()
    plain, unbiased = [], []
    for seed in range(6):
        rng = np.random.default_rng(seed)
        a, b = rng.normal(size=(n, d)), mu + sd * rng.normal(size=(n, d))
        plain.append(frechet_distance(a, b))
        unbiased.append(frechet_distance_unbiased(a, b, seed=seed))
    assert min(plain) > 2 * true
    assert np.mean(unbiased) == pytest.approx(true, abs=0.1)
    assert np.abs(np.array(unbiased) - true).max() < 0.5 * np.abs(np.array(plain) - true).min()
    assert frechet_distance_unbiased(a, b, seed=1) == frechet_distance_unbiased(a, b, seed=1)  # seeded
    assert np.isnan(frechet_distance_unbiased(a[:7], b))


def test_the_yardstick_blur_is_a_gaussian_of_one_pixel_per_64():
    for side in (64, 128):
        image = np.zeros((1, side, side, 3), np.uint8)
        image[0, side // 2, side // 2] = 255
        out = blurred(image)[0, :, :, 0].astype(float)
        ys, xs = np.mgrid[0:side, 0:side]
        var = (out * (xs - side // 2) ** 2).sum() / out.sum()  # the kernel's variance along x
        assert var == pytest.approx((side / 64) ** 2, rel=0.25)

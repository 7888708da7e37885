"""`lab/climb_signal.py`: the model's leave-one-out read of the passes' loss."""

import numpy as np
import torch
from project_scripts import load_script

SCRIPT = "lab/climb_signal.py"


def test_leave_one_out_means_are_the_posterior_means_without_the_point():
    """Eq. 5.12's shortcut against the posterior mean conditioned on the other points, solved directly."""
    cs = load_script(SCRIPT)
    rng = np.random.default_rng(0)
    X = torch.tensor(rng.random((12, 3)))
    K = torch.exp(-0.5 * torch.cdist(X, X) ** 2 / 0.3**2) + 0.01 * torch.eye(12, dtype=X.dtype)
    r = torch.tensor(rng.normal(size=12))
    for i in (0, 5, 11):
        rest = torch.arange(12) != i
        direct = K[i, rest] @ torch.linalg.solve(K[rest][:, rest], r[rest])
        assert torch.isclose(cs.loo_means(K, r)[i], direct)


def test_a_smooth_loss_reads_high_and_a_hashed_one_low():
    """Passes whose loss is a smooth function of the point are predicted from the rest; a loss
    drawn at random per point (as a face's identity draws part of a detector's confidence) is not."""
    cs = load_script(SCRIPT)
    rng = np.random.default_rng(1)
    X = rng.random((80, 4))
    smooth = 0.9 * np.exp(-4 * ((X - 0.7) ** 2).sum(axis=1))
    hashed = 0.9 * rng.random(80)
    assert cs.loo_correlation(X, smooth) > 0.9
    assert abs(cs.loo_correlation(X, hashed)) < 0.3

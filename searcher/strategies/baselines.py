"""The baselines: uniform random search and a scrambled Sobol sequence.

Both are stateless beyond the history: random draws from `step_rng(seed, step)`; Sobol continues
one seeded sequence at the position given by the number of points told so far, so a campaign
resumed by replaying its history carries on exactly where it stopped.
"""

from __future__ import annotations

import warnings

import numpy as np

from searcher.strategies.base import StrategyBase, step_rng
from searcher.validation import check_int

__all__ = ["RandomSearch", "SobolSearch", "sobol_points"]


def sobol_points(dim: int, seed: int, start: int, n: int) -> np.ndarray:
    """Points `start .. start + n - 1` of the scrambled Sobol sequence of `dim` seeded by `seed`."""
    from scipy.stats import qmc  # imported here: scipy.stats takes a second and a half to import, and random search needs none of it
    sobol = qmc.Sobol(dim, scramble=True, seed=np.random.default_rng([int(seed), 0x50B01]))
    if start:
        sobol.fast_forward(start)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # balance needs powers of 2; a campaign asks what it asks
        return sobol.random(n)


class RandomSearch(StrategyBase):
    """Uniform over the space: continuous coordinates uniform in the cube, categoricals and
    integers uniform over their values (the random baseline of McDuff et al., Fig. 4)."""

    def ask(self, n: int, step: int) -> np.ndarray:
        return self.cube.uniform(step_rng(self.seed, step), check_int("n", n, 1))


class SobolSearch(StrategyBase):
    """A scrambled Sobol sequence (scipy.stats.qmc), seeded, continued across steps."""

    def ask(self, n: int, step: int) -> np.ndarray:
        return self.cube.snap(sobol_points(self.dim, self.seed, self.history.n_told, check_int("n", n, 1)))

"""The baselines: uniform random search and a scrambled Sobol sequence.

Both are stateless beyond the history: random draws from `step_rng(seed, step)`; Sobol continues
one seeded sequence at the position given by the number of points told so far, so a campaign
resumed by replaying its history carries on exactly where it stopped.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from searcher.strategies.base import StrategyBase, step_rng
from searcher.validation import check_int

__all__ = ["RandomSearch", "SobolSearch", "SobolStream", "sobol_points"]


def sobol_points(dim: int, seed: int, start: int, n: int) -> np.ndarray:
    """Points `start .. start + n - 1` of the scrambled Sobol sequence of `dim` seeded by `seed`."""
    return SobolStream(dim, seed).points(start, n)


class SobolStream:
    """The scrambled Sobol sequence of `dim` seeded by `seed` (`sobol_points`'s), with its engine kept
    between reads: a read that starts where the last one ended continues it, so a strategy drawing
    one point at a time does not build and scramble an engine per point (a large `bo-modes` batch
    falls back on Sobol points one at a time); a read that starts elsewhere builds one there. The
    points are the same either way."""

    def __init__(self, dim: int, seed: int) -> None:
        self.dim, self.seed = dim, int(seed)
        self._engine: Any = None
        self._at = 0  # the index of the engine's next point

    def points(self, start: int, n: int) -> np.ndarray:
        """Points `start .. start + n - 1` of the sequence."""
        if self._engine is None or start != self._at:
            from scipy.stats import qmc  # imported here: scipy.stats takes a second and a half to import, and random search needs none of it
            self._engine = qmc.Sobol(self.dim, scramble=True, seed=np.random.default_rng([self.seed, 0x50B01]))
            if start:
                self._engine.fast_forward(start)
        self._at = start + n
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # balance needs powers of 2; a campaign asks what it asks
            return self._engine.random(n)


class RandomSearch(StrategyBase):
    """Uniform over the space: continuous coordinates uniform in the cube, categoricals and
    integers uniform over their values (the random baseline of McDuff et al., Fig. 4)."""

    overlaps = True  # its points are the step's alone: what is pending changes nothing

    def ask(self, n: int, step: int, pending: np.ndarray | None = None) -> np.ndarray:  # noqa: ARG002 - see `overlaps`
        return self.cube.uniform(step_rng(self.seed, step), check_int("n", n, 1))


class SobolSearch(StrategyBase):
    """A scrambled Sobol sequence (scipy.stats.qmc), seeded, continued across steps."""

    def ask(self, n: int, step: int) -> np.ndarray:
        return self.cube.snap(sobol_points(self.dim, self.seed, self.history.n_told, check_int("n", n, 1)))

"""CMA-ME (pyribs), a quality-diversity peer: MAP-Elites' archive filled by CMA-ES emitters, on `L_c`.

Quality diversity keeps the best solution found in each cell of a grid over *behaviour
descriptors* (measures) and rewards the search for filling new cells, so it is the peer that
looks for many different failures rather than the worst one. CMA-ME (Fontaine et al. 2020,
arXiv:1912.02400) is its CMA-ES form: improvement emitters, ranked new cell first, then by the
gain over the cell's elite (pyribs' two-stage improvement ranker).

A black box has no descriptors, so the measures here are a fixed, seeded random projection of a
cube point onto two orthonormal directions, each made roughly uniform on [0, 1] by the normal CDF
of its standardised value (mean and spread from uniform draws of the cube, one-hot blocks
included): the generic choice when nothing is known about the space, and it makes the 10 x 10
archive spread its elites over the whole cube instead of one corner of it.

Rebuilt from the told history at every `ask`, seeded by `seed` alone: every generation
(`emitters x batch_size` points) is replayed in the order told, the scheduler's draws first, then
its tell; points asked past the end of the current generation are drawn again from the current
emitters. A generation must be told whole, so a point without an answer (NaN) keeps its place
with objective 0, which is what it is to the campaign: never a failure. Replaying pairs each told
loss with the emitter's own draw at that place, which is exact when the campaign's batch divides
the generation (12 points by default: batches of 1, 2, 3, 4, 6 or 12) and an approximation for
points asked past a generation's end.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.special import ndtr

from searcher.space import Space
from searcher.strategies.base import StrategyBase
from searcher.strategies.peers import first_mean, require
from searcher.validation import check_int, check_number

__all__ = ["CMAMESearch", "random_measures"]

_CALIBRATION = 4096  # uniform draws of the cube that fix each measure's mean and spread


def random_measures(space: Space, seed: int) -> Callable[[np.ndarray], np.ndarray]:
    """`X -> n x 2` measures in [0, 1]: a seeded random projection of the cube onto two orthonormal
    directions, through the normal CDF of each standardised coordinate (see the module docstring)."""
    rng = np.random.default_rng([int(seed), 0x9D])
    W = rng.standard_normal((space.dim, 2))
    W = np.linalg.qr(W)[0] if space.dim >= 2 else W / np.abs(W)
    Y = space.cube.uniform(rng, _CALIBRATION) @ W
    mean, sd = Y.mean(axis=0), np.maximum(Y.std(axis=0), 1e-12)

    def measures(X: np.ndarray) -> np.ndarray:
        return ndtr((np.asarray(X, float).reshape(-1, space.dim) @ W - mean) / sd)

    return measures


class CMAMESearch(StrategyBase):
    """CMA-ME: a `GridArchive` of `cells x cells` over two random-projection measures, filled by
    `emitters` CMA-ES improvement emitters of `batch_size` points each, under one `Scheduler`.

    Args:
        emitters: CMA-ES emitters, all started at one point with their own seeds.
        batch_size: points each emitter draws per generation (a generation is `emitters x
            batch_size` points, 12 by default).
        sigma: initial step size of the emitters (unit-cube units).
        cells: cells per measure of the archive's grid.
        start: the emitters' starting point: "centre" (default) or "random" (`peers.first_mean`).
    """

    def __init__(self, space: Space, seed: int = 0, emitters: int = 3, batch_size: int = 4, sigma: float = 0.3,
                 cells: int = 10, start: str = "centre") -> None:
        super().__init__(space, seed)
        self.x0 = first_mean(start, self.dim, self.seed, owner="CMAMESearch")  # where every emitter starts
        self.emitters = check_int("emitters", emitters, 1)
        self.batch_size = check_int("batch_size", batch_size, 2)
        self.sigma = check_number("sigma", sigma, 0.0, 1.0, open_low=True)
        self.cells = check_int("cells", cells, 1)
        self._ribs = require("ribs", "cmame")  # imports its archives, emitters and schedulers
        self.measures = random_measures(space, self.seed)

    @property
    def generation(self) -> int:
        """Points per generation: every emitter's batch."""
        return self.emitters * self.batch_size

    def _scheduler(self) -> Any:
        """A fresh archive, emitters and scheduler, each seeded from `seed`."""
        ribs = self._ribs
        seeds = np.random.default_rng([self.seed, 0xC3E]).integers(2**31, size=self.emitters + 1)
        archive = ribs.archives.GridArchive(solution_dim=self.dim, dims=(self.cells, self.cells), ranges=[(0.0, 1.0), (0.0, 1.0)],
                                            seed=int(seeds[0]))
        emitters = [ribs.emitters.EvolutionStrategyEmitter(archive, x0=self.x0, sigma0=self.sigma, ranker="2imp",
                                                           bounds=[(0.0, 1.0)] * self.dim, batch_size=self.batch_size, seed=int(s))
                    for s in seeds[1:]]
        return ribs.schedulers.Scheduler(archive, emitters)

    def ask(self, n: int, step: int) -> np.ndarray:
        n = check_int("n", n, 1)
        X, loss = self.history.told()
        objective = np.nan_to_num(loss, nan=0.0)  # no answer: never a failure
        scheduler, size = self._scheduler(), self.generation
        done = len(X) // size
        for g in range(done):
            scheduler.ask()  # replays the random draws of the generation
            told = slice(g * size, (g + 1) * size)
            scheduler.tell(objective[told], self.measures(X[told]))
        offset = len(X) - done * size
        drawn = [scheduler.ask()]
        while sum(len(d) for d in drawn) < offset + n:
            drawn.append(np.concatenate([emitter.ask() for emitter in scheduler.emitters]))
        return self.cube.snap(np.concatenate(drawn)[offset : offset + n])

"""Peer baselines: Optuna's TPE and the `cmaes` package's CMA-ES, maximising `L_c` itself.

Neither has a diversity term: they show what a good optimiser does with a failure objective (it
finds many failures, mostly in the first failure mode it meets). Both are rebuilt from the told
history at every step, seeded by `(seed, step)` for TPE and by `seed` for CMA-ES (whose
generations are replayed), so a resumed campaign asks exactly what the uninterrupted one asked.
The packages are optional (`pip install 'searcher[baselines]'`) and imported when a peer is built.
"""

from __future__ import annotations

import importlib
import logging
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import numpy as np

from searcher.errors import PluginError
from searcher.space import Space
from searcher.strategies.base import StrategyBase, step_rng
from searcher.validation import check_int, check_number

__all__ = ["CMAESSearch", "TPESearch"]


def _require(module: str, strategy: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise PluginError(f"The {strategy!r} strategy needs the {module!r} package: pip install 'searcher[baselines]' (or pip install {module}).") from exc


@contextmanager
def _quiet_optuna() -> Iterator[None]:
    """Optuna logs every study it creates at INFO level; a study per step would flood the console."""
    logger = logging.getLogger("optuna")
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # multivariate and constant_liar are marked experimental
            yield
    finally:
        logger.setLevel(level)


class TPESearch(StrategyBase):
    """Optuna's multivariate TPE sampler (constant liar within a batch), one distribution per
    parameter: a float in [0, 1] per cube column, a categorical per one-hot block.

    Args:
        n_startup: random points before TPE takes over (Optuna's `n_startup_trials`).
    """

    def __init__(self, space: Space, seed: int = 0, n_startup: int = 10) -> None:
        super().__init__(space, seed)
        self.n_startup = check_int("n_startup", n_startup, 1)
        self._optuna = _require("optuna", "tpe")
        dists = self._optuna.distributions
        # (name, first column, width: 0 for a float) of each parameter in the cube
        self._columns = [(c.name, c.start, c.width if c.kind == "categorical" else 0) for c in self.cube.columns]
        self._dists = {
            name: dists.CategoricalDistribution(list(range(width))) if width else dists.FloatDistribution(0.0, 1.0)
            for name, _, width in self._columns
        }

    def _params(self, x: np.ndarray) -> dict[str, Any]:
        return {name: int(np.argmax(x[c : c + w])) if w else float(x[c]) for name, c, w in self._columns}

    def _point(self, params: dict[str, Any]) -> np.ndarray:
        x = np.zeros(self.dim)
        for name, c, w in self._columns:
            if w:
                x[c + params[name]] = 1.0
            else:
                x[c] = params[name]
        return x

    def ask(self, n: int, step: int) -> np.ndarray:
        n = check_int("n", n, 1)
        optuna = self._optuna
        X, loss = self.history.answered()
        with _quiet_optuna():
            sampler = optuna.samplers.TPESampler(
                seed=int(step_rng(self.seed, step).integers(2**31)), n_startup_trials=self.n_startup, multivariate=True, constant_liar=True
            )
            study = optuna.create_study(direction="maximize", sampler=sampler)
            study.add_trials([optuna.trial.create_trial(params=self._params(x), distributions=self._dists, value=float(v)) for x, v in zip(X, loss)])
            return self.cube.snap(np.stack([self._point(study.ask(self._dists).params) for _ in range(n)]))


class CMAESSearch(StrategyBase):
    """CMA-ES (the `cmaes` package) in the unit cube, started at its centre.

    Every `popsize` told points form one generation, in the order told; a batch that runs past the
    end of a generation draws the extra points from the same search distribution.

    Args:
        sigma: initial step size (unit-cube units).
        popsize: points per generation (default `4 + 3 ln(dim)`, CMA-ES's own).
    """

    def __init__(self, space: Space, seed: int = 0, sigma: float = 0.3, popsize: int | None = None) -> None:
        super().__init__(space, seed)
        self.sigma = check_number("sigma", sigma, 0.0, 1.0, open_low=True)
        self.popsize = None if popsize is None else check_int("popsize", popsize, 2)
        self._cmaes = _require("cmaes", "cmaes")

    def ask(self, n: int, step: int) -> np.ndarray:
        n = check_int("n", n, 1)
        X, loss = self.history.answered()
        bounds = np.tile([0.0, 1.0], (self.dim, 1))
        opt = self._cmaes.CMA(mean=np.full(self.dim, 0.5), sigma=self.sigma, bounds=bounds, seed=self.seed, population_size=self.popsize)
        size = opt.population_size
        done = len(X) // size
        for g in range(done):
            for _ in range(size):
                opt.ask()  # replays the random draws of the generation
            opt.tell([(X[g * size + i], -float(loss[g * size + i])) for i in range(size)])
        offset = len(X) - done * size
        drawn = [opt.ask() for _ in range(offset + n)]
        return self.cube.snap(np.stack(drawn[offset:]))

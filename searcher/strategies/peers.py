"""Peer baselines: Optuna's TPE and the `cmaes` package's CMA-ES, maximising `L_c` itself, and the
helpers every optional peer uses (`require`, `first_mean`); Ax's BO is in `ax.py`, CMA-ME in `qd.py`.

Neither has a diversity term: they show what a good optimiser does with a failure objective (it
finds many failures, mostly in the first failure mode it meets; CMA-ES's restarts move it on once
a run has stopped). Both are rebuilt from the told history at every step, seeded by
`(seed, step)` for TPE and by `seed` for CMA-ES (whose generations and restarts are replayed), so
a resumed campaign asks exactly what the uninterrupted one asked. The packages are optional
(`pip install 'searcher[baselines]'`) and imported when a peer is built.
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
from searcher.space import Cube, Space
from searcher.strategies.base import StrategyBase, step_rng
from searcher.validation import check_choice, check_flag, check_int, check_number

__all__ = ["STARTS", "CMAESSearch", "ParameterColumns", "TPESearch", "first_mean", "require"]

STARTS = ("centre", "random")


def first_mean(start: str, dim: int, seed: int, owner: str | None = None) -> np.ndarray:
    """Where a CMA-ES run (or every CMA-ME emitter) starts: the cube's centre, or a uniform point drawn
    from `seed`. The centre is the packages' habit, and not a neutral one: regions of large volume
    that lie inside the cube crowd around it (docs/search.md), so "random" is the start that
    favours no point."""
    if check_choice("start", start, STARTS, owner=owner) == "centre":
        return np.full(dim, 0.5)
    return np.random.default_rng([int(seed), 0x57A]).random(dim)


def require(module: str, strategy: str, package: str | None = None) -> ModuleType:
    """The optional `module` a peer strategy needs, imported now, else a PluginError naming the
    pip command (`package` when the distribution's name is not the module's: ax-platform)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise PluginError(f"The {strategy!r} strategy needs the {package or module!r} package: pip install 'searcher[baselines]' "
                          f"(or pip install {package or module}).") from exc


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


class ParameterColumns:
    """Each parameter of a cube as one value, as TPE and Ax take them: a float in [0, 1] per
    continuous column, a category index per one-hot block. Iterates `(name, first column, width)`,
    width 0 for a float; `names` replace the parameters' own (Ax: names by position)."""

    def __init__(self, cube: Cube, names: list[str] | None = None) -> None:
        self.dim = cube.dim
        names = names or [c.name for c in cube.columns]
        self._columns = [(name, c.start, c.width if c.kind == "categorical" else 0) for name, c in zip(names, cube.columns)]

    def __iter__(self) -> Iterator[tuple[str, int, int]]:
        return iter(self._columns)

    def params(self, x: np.ndarray) -> dict[str, Any]:
        """A cube point -> one value per parameter."""
        return {name: int(np.argmax(x[c : c + w])) if w else float(x[c]) for name, c, w in self._columns}

    def point(self, params: dict[str, Any]) -> np.ndarray:
        """One value per parameter -> the cube point."""
        x = np.zeros(self.dim)
        for name, c, w in self._columns:
            if w:
                x[c + int(params[name])] = 1.0
            else:
                x[c] = float(params[name])
        return x


class TPESearch(StrategyBase):
    """Optuna's multivariate TPE sampler (constant liar within a batch), one distribution per
    parameter: a float in [0, 1] per cube column, a categorical per one-hot block.

    Args:
        n_startup: random points before TPE takes over (Optuna's `n_startup_trials`).
    """

    def __init__(self, space: Space, seed: int = 0, n_startup: int = 10) -> None:
        super().__init__(space, seed)
        self.n_startup = check_int("n_startup", n_startup, 1)
        self._optuna = require("optuna", "tpe")
        dists = self._optuna.distributions
        self._columns = ParameterColumns(self.cube)
        self._dists = {
            name: dists.CategoricalDistribution(list(range(width))) if width else dists.FloatDistribution(0.0, 1.0)
            for name, _, width in self._columns
        }


    def ask(self, n: int, step: int) -> np.ndarray:
        n = check_int("n", n, 1)
        optuna = self._optuna
        X, loss = self.history.answered()
        with _quiet_optuna():
            sampler = optuna.samplers.TPESampler(
                seed=int(step_rng(self.seed, step).integers(2**31)), n_startup_trials=self.n_startup, multivariate=True, constant_liar=True
            )
            study = optuna.create_study(direction="maximize", sampler=sampler)
            study.add_trials([optuna.trial.create_trial(params=self._columns.params(x), distributions=self._dists, value=float(v)) for x, v in zip(X, loss)])
            return self.cube.snap(np.stack([self._columns.point(study.ask(self._dists).params) for _ in range(n)]))


class CMAESSearch(StrategyBase):
    """CMA-ES (the `cmaes` package) in the unit cube, started at its centre (or a random point), with IPOP restarts.

    Every `popsize` told points form one generation, in the order told; a batch that runs past the
    end of a generation draws the extra points from the same search distribution. With `restarts`
    (IPOP-CMA-ES, Auger and Hansen 2005), a run that stops (the package's `should_stop()`: flat
    losses over its recent generations, a collapsed or diverging step size, a degenerate
    covariance) is followed by a new one from a uniformly drawn mean with twice the population:
    on a 0/1 loss a run stops both when it finds nothing and when it sits inside one failure
    region, and the next one looks elsewhere. Restarts are replayed from the history like the
    generations, so they cost no state.

    Args:
        sigma: initial step size of every run (unit-cube units).
        popsize: points per generation of the first run (default `4 + 3 ln(dim)`, CMA-ES's own).
        restarts: restart stopped runs (default); False is plain CMA-ES, one run to the end.
        start: where the first run starts: "centre" (default) or "random" (`first_mean`).

    Attributes:
        runs: `(told points before its start, population size)` of each run, as of the last `ask`.
    """

    def __init__(self, space: Space, seed: int = 0, sigma: float = 0.3, popsize: int | None = None, restarts: bool = True,
                 start: str = "centre") -> None:
        super().__init__(space, seed)
        self.x0 = first_mean(start, self.dim, self.seed, owner="CMAESSearch")  # the first run's mean
        self.sigma = check_number("sigma", sigma, 0.0, 1.0, open_low=True)
        self.popsize = None if popsize is None else check_int("popsize", popsize, 2)
        self.restarts = check_flag("restarts", restarts, owner="CMAESSearch")
        self._cmaes = require("cmaes", "cmaes")
        self.runs: list[tuple[int, int]] = []

    def _run(self, mean: np.ndarray, seed: int, popsize: int | None) -> Any:
        bounds = np.tile([0.0, 1.0], (self.dim, 1))
        return self._cmaes.CMA(mean=mean, sigma=self.sigma, bounds=bounds, seed=seed, population_size=popsize)

    def _restart(self, run: int, popsize: int) -> Any:
        """Run number `run` (from 1): a uniform mean and a seed of its own, `popsize` points per generation."""
        rng = np.random.default_rng([self.seed, run, 0x1909])
        return self._run(rng.random(self.dim), int(rng.integers(2**31)), popsize)

    def ask(self, n: int, step: int) -> np.ndarray:
        n = check_int("n", n, 1)
        X, loss = self.history.answered()
        opt = self._run(self.x0, self.seed, self.popsize)
        self.runs = [(0, opt.population_size)]
        start = 0
        while len(X) - start >= opt.population_size:
            size = opt.population_size
            for _ in range(size):
                opt.ask()  # replays the random draws of the generation
            opt.tell([(X[start + i], -float(loss[start + i])) for i in range(size)])
            start += size
            if self.restarts and opt.should_stop():
                opt = self._restart(len(self.runs), 2 * size)
                self.runs.append((start, opt.population_size))
        offset = len(X) - start
        drawn = [opt.ask() for _ in range(offset + n)]
        return self.cube.snap(np.stack(drawn[offset:]))

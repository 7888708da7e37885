"""Ax's default Bayesian optimisation (ax-platform's `Client`) as a peer strategy maximising `L_c`.

What a user who picks Ax and configures nothing gets: Ax's own generation strategy, the centre of
the space, Sobol points, then its default BoTorch model (in ax-platform 1.x a GP with log noisy
expected improvement, one point per trial). One float parameter in [0, 1] per cube column
(integers and latent coordinates included, snapped afterwards) and one unordered choice per
one-hot block, as `TPESearch` gives Optuna.

Like the other peers it is rebuilt from the told history at every `ask`: a fresh `Client` seeded
from `step_rng(seed, step)`, each answered point attached as a completed trial, and its
generation strategy moved past the initialisation the history already covers (a fresh strategy
would otherwise start at its centre node and spend a Sobol point at every step); so a resumed
campaign asks what the uninterrupted one asked. The strategy is Ax's dispatch with one setting a
batch loop needs: the Sobol phase may run past its budget while too few trials have data (a
first batch larger than the budget is filled, not cut short). Two steps go past the `Client`'s
stable surface (written against ax-platform 1.3): the generation strategy is handed over with
`set_generation_strategy`, so that it can be moved on, and the told losses are attached to the
experiment in one `Data` table before the trials are marked completed, which is what
`complete_trial` does point by point (the same proposals, checked bit for bit) without re-sorting
the whole table at every point (16 s for 400 points that way, 0.1 s so). Ax never asks a point
twice: in a space of a few categories it runs out, and says so. A point without an answer (a
target's error, or a face too near a truth cut to judge) is not attached, as the other peers are
not told it: Ax is never told that a band pays nothing, and where a classifier's loss runs
highest at its cut, one smile-cnn campaign in five spent 311 of its 400 evaluations there.

Determinism: Ax has no seed of its own for model fitting and acquisition; `Client(random_seed=)`
seeds Python's, NumPy's and torch's global generators around each `get_next_trials` (and puts
them back), and the Sobol node takes the same seed. Run on one torch thread, the same seed and
history give the same points, bit for bit, in this process and in another one on the same
machine; across machines and BLAS builds a GP fit in floating point may differ in the last bits.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd

from searcher.errors import SearcherError
from searcher.space import Space
from searcher.strategies.base import StrategyBase, step_rng
from searcher.strategies.peers import ParameterColumns, require
from searcher.validation import check_int

__all__ = ["AxSearch"]

_METRIC = "loss"


@contextmanager
def _quiet() -> Iterator[None]:
    """Ax logs every trial it makes at INFO level and BoTorch warns about its numerics; a client
    per step would flood the console. Every `ax` logger goes to ERROR meanwhile, warnings are
    ignored, and torch runs on one thread (small GPs are faster so, and give the same bits)."""
    import torch

    loggers = [logging.getLogger(name) for name, obj in list(logging.root.manager.loggerDict.items())
               if isinstance(obj, logging.Logger) and (name == "ax" or name.startswith("ax."))]
    levels = [logger.level for logger in loggers]
    threads = torch.get_num_threads()
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    torch.set_num_threads(1)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        torch.set_num_threads(threads)
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


def _import_ax() -> Any:
    """The `ax` package; its import logs its storage set-up at INFO level, silenced here."""
    before = logging.root.manager.disable
    logging.disable(logging.INFO)
    try:
        return require("ax", "ax", package="ax-platform")
    finally:
        logging.disable(before)


class AxSearch(StrategyBase):
    """Ax's default generation strategy (centre, Sobol, then its BoTorch model) on `L_c`.

    Args:
        init: trials of its initialisation, centre included (Ax's `initialization_budget`;
            default None: Ax's own choice, 5).
    """

    def __init__(self, space: Space, seed: int = 0, init: int | None = None) -> None:
        super().__init__(space, seed)
        self.init = None if init is None else check_int("init", init, 1)
        self._ax = _import_ax()
        from ax.api.utils import generation_strategy_dispatch, structs
        from ax.exceptions.core import SearchSpaceExhausted

        self._dispatch, self._structs, self._exhausted = generation_strategy_dispatch, structs, SearchSpaceExhausted
        # (name, first column, width: 0 for a float) of each parameter; names by position, so
        # that no parameter name can clash with the metric or with Ax's expression syntax
        self._columns = ParameterColumns(self.cube, [f"x{i}" for i in range(len(self.cube.columns))])

    def _parameters(self) -> list[Any]:
        ax = self._ax
        return [ax.ChoiceParameterConfig(name=name, values=list(range(width)), parameter_type="int", is_ordered=False) if width
                else ax.RangeParameterConfig(name=name, bounds=(0.0, 1.0), parameter_type="float")
                for name, _, width in self._columns]

    def _client(self, seed: int) -> tuple[Any, Any]:
        """A client with its experiment and objective, and Ax's default generation strategy (set on it)."""
        client = self._ax.Client(random_seed=seed)
        client.configure_experiment(parameters=self._parameters())
        client.configure_optimization(objective=_METRIC)  # maximise
        options = {} if self.init is None else {"initialization_budget": self.init}
        strategy = self._dispatch.choose_generation_strategy(self._structs.GenerationStrategyDispatchStruct(
            initialization_random_seed=seed, allow_exceeding_initialization_budget=True, **options))
        client.set_generation_strategy(strategy)
        return client, strategy

    def _attach(self, client: Any, experiment: Any, X: np.ndarray, loss: np.ndarray) -> None:
        """Each told point as a completed trial with its loss: what `attach_trial` then
        `complete_trial(i, {"loss": v})` do point by point, with the data attached in one table."""
        indices = [client.attach_trial(self._columns.params(x)) for x in X]
        if not indices:
            return
        from ax.core.data import Data

        arms = [experiment.trials[i].arm.name for i in indices]
        experiment.attach_data(Data(df=pd.DataFrame({"trial_index": indices, "arm_name": arms, "metric_name": _METRIC,
                                                     "metric_signature": _METRIC, "mean": np.asarray(loss, float),
                                                     "sem": np.nan, "step": np.nan})))
        for i in indices:
            experiment.trials[i].mark_completed()

    def _exhausted_error(self, step: int, got: int, n: int, told: int) -> SearcherError:
        return SearcherError(f"Ax found no new point to ask at step {step} ({got} of the {n} asked, {told} told): it never asks a "
                             f"point twice, and this space has too few. Use another strategy (random repeats points).")

    def ask(self, n: int, step: int) -> np.ndarray:
        n = check_int("n", n, 1)
        X, loss = self.history.answered()
        widths = [w for _, _, w in self._columns]
        if all(widths) and math.prod(widths) - len(np.unique(X, axis=0)) < n:
            raise self._exhausted_error(step, 0, n, len(X))  # categories only: Ax's sampler would search a minute first
        seed = int(step_rng(self.seed, step).integers(2**31))
        points: list[np.ndarray] = []
        with _quiet():
            client, strategy = self._client(seed)
            self._attach(client, strategy.experiment, X, loss)
            strategy.current_generator_run_limit()  # moves past the nodes the history covers
            while len(points) < n:
                try:
                    got = client.get_next_trials(n - len(points))
                except self._exhausted as exc:
                    raise self._exhausted_error(step, len(points), n, len(X)) from exc
                if not got:
                    raise SearcherError(f"Ax generated no trial at step {step} ({len(points)} of {n} asked, {len(X)} told).")
                points += [self._columns.point(params) for params in got.values()]
        return self.cube.snap(np.stack(points))

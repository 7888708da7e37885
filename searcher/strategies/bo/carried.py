"""What both BO strategies carry between steps: GP hyperparameters, when they were last fitted, and
the position in their Sobol sequence; and the one-thread context their small dense algebra runs in.

`state()` is all of it (JSON), so a strategy rebuilt from the history and the last state asks what
the original asked. Hyperparameters are refitted, warm, when the data has grown by `refit` since
the last fit, and carried over unchanged in between; a strategy that fits another model than the
last (`bo-modes` switching likelihood) starts that one cold, as the carried values are not its.
A strategy that fits a second model beside its own each step (`bo-modes`'s harvest model in a
large batch) carries that model's under a `slot` of its own.
Past `max_points` the GP is fitted on the recent failures (up to half) and the recent passes, so a
step costs what it cost at the cap; the training set no longer grows, so the hyperparameters
fitted at the cap are carried from then on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch

from searcher.objective import FAILURE
from searcher.space import Space
from searcher.strategies.base import StrategyBase
from searcher.strategies.baselines import SobolStream
from searcher.validation import check_int, check_number

__all__ = ["CarriedGP", "one_thread"]


@contextmanager
def one_thread() -> Iterator[None]:
    """Small dense algebra runs faster on one thread here, and gives the same bits on any machine."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class CarriedGP(StrategyBase):
    """A strategy with a warm-started GP and a Sobol sequence (see the module docstring).

    Args:
        refit: hyperparameters are refitted when the training set has grown by this fraction.
        iterations: L-BFGS-B iterations of a warm refit.
        max_points: the most points the GP is fitted on (`_training_rows`).
    """

    def __init__(self, space: Space, seed: int = 0, refit: float = 0.1, iterations: int = 30, max_points: int = 1000) -> None:
        super().__init__(space, seed)
        self.max_points = check_int("max_points", max_points, 10)
        self.refit = check_number("refit", refit, 0.0, 10.0)
        self.iterations = check_int("iterations", iterations, 0)
        self._slots: dict[str | None, dict[str, Any]] = {None: _empty_slot()}  # carried hyperparameters by slot (None: the strategy's own model's)
        self._sobol = 0
        self._stream = SobolStream(self.dim, self.seed)

    def state(self) -> dict[str, Any]:
        """GP hyperparameters (raw values) and the model they are of, the size of the last fit, the
        Sobol position, and (once a second model was fitted) the same of each other `slot`: JSON."""
        others = {name: dict(slot) for name, slot in self._slots.items() if name is not None}
        return {**self._slots[None], "sobol": self._sobol, **({"slots": others} if others else {})}

    def restore(self, state: dict[str, Any]) -> None:
        """Sets what `state()` saved."""
        own = {"gp": state.get("gp"), "fitted_as": state.get("fitted_as"), "fitted_on": int(state.get("fitted_on", 0))}
        self._slots = {None: own, **{name: dict(slot) for name, slot in state.get("slots", {}).items()}}
        self._sobol = int(state.get("sobol", 0))

    def _next_sobol(self, n: int) -> np.ndarray:
        """The next `n` points of the strategy's scrambled Sobol sequence, snapped."""
        self._sobol += n
        return self.cube.snap(self._stream.points(self._sobol - n, n))

    def _training_rows(self, loss: np.ndarray) -> np.ndarray:
        """Indices the GP is fitted on: all, or beyond `max_points` the recent failures (up to half)
        and the recent passes. The recent points are where the search is working now, around the
        modes it harvests; keeping instead a spread of the whole history (farthest-point thinning
        of each class) left the harvest's edges unknown and found 40% fewer failures
        (docs/search.md#a-cap-on-the-models-training-set-past-1000-points-max_points)."""
        if len(loss) <= self.max_points:
            return np.arange(len(loss))
        failed = np.flatnonzero(loss >= FAILURE)[-(self.max_points // 2) :]
        passed = np.flatnonzero(loss < FAILURE)[-(self.max_points - len(failed)) :]
        return np.sort(np.concatenate([failed, passed]))

    def _fit_carried(self, fit: Callable[..., tuple[Any, dict[str, list[float]]]], X: torch.Tensor, y: torch.Tensor,
                     model: str | None = None, slot: str | None = None) -> Any:
        """`fit(X, y, warm, iterations)`, refitting only when the data has grown by `refit`; `model`
        names what `fit` fits, and hyperparameters carried from another model are dropped (a cold
        fit). A `slot` name carries them apart from the strategy's own model's."""
        carried = self._slots.setdefault(slot, _empty_slot())
        warm = carried["gp"] if carried["fitted_as"] == model else None
        refit = warm is None or len(X) >= (1 + self.refit) * carried["fitted_on"]
        gp, fitted = fit(X, y, warm, self.iterations if refit else 0)
        if refit:
            carried.update(gp=fitted, fitted_as=model, fitted_on=len(X))
        return gp


def _empty_slot() -> dict[str, Any]:
    """A slot no fit has filled: no hyperparameters, of no model, fitted on no point."""
    return {"gp": None, "fitted_as": None, "fitted_on": 0}

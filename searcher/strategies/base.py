"""The strategy protocol, and the base every shipped strategy builds on.

A campaign runs in synchronous batches: `ask(q, step)` returns `q x d` points of the space's unit
cube, the campaign evaluates them, then `tell(X, loss)` hands back the classifier loss `L_c` in
[0, 1] of each point (NaN where the target gave no answer: such points are never failures, and
strategies skip them).

Reproducibility and resume: a proposal must be a deterministic function of the strategy's seed,
the `step` number and everything told so far (plus `state()`), so that a campaign resumed from its
store — which replays every `tell` and restores the last `state()` — asks exactly what the
uninterrupted campaign asked. Strategies draw their randomness from `step_rng(seed, step)`, never
from a running generator.

Overlap: a strategy whose `overlaps` is True also takes `ask(n, step, pending=P)`, where `P` holds
the points of the batch asked before and not yet told, so a campaign with `overlap` asks batch
`k + 1` while batch `k` is evaluated. Its proposal is then a function of `P` too, and its
`state()`, saved after `tell`, holds what it keeps of the pending points (the campaign stores `P`
itself and hands it to the next ask after a resume).

`StrategyBase` keeps the space, the checked seed, the cube's layout and the told history, and has
no-op hooks for what only some strategies do (Optuna's `BaseSampler` style): `state`/`restore`
for what goes beyond the history, and `composite` for a strategy that maximises more than `L_c`.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from searcher.errors import ParameterError
from searcher.space import Space
from searcher.validation import check_int

__all__ = ["History", "Strategy", "StrategyBase", "step_rng"]


@runtime_checkable
class Strategy(Protocol):
    """Ask/tell search over the unit cube `[0, 1]^dim`.

    Attributes:
        dim: width of the unit cube (categoricals are one-hot blocks there).
        seed: the strategy's seed.
    """

    dim: int
    seed: int

    def ask(self, n: int, step: int) -> np.ndarray:
        """`n x dim` points to evaluate next (batch number `step`, counted from 0)."""
        ...

    def tell(self, X: np.ndarray, loss: np.ndarray) -> None:
        """Results of evaluated points: `X` is `n x dim`, `loss` `n` values in [0, 1] or NaN."""
        ...

    def state(self) -> dict[str, Any]:
        """JSON-serialisable state beyond the told history (e.g. GP hyperparameters carried over
        between steps), stored with each batch so that a resumed campaign continues exactly."""
        ...

    def restore(self, state: dict[str, Any]) -> None:
        """Sets the state saved by `state()` (called after the history has been told again)."""
        ...

    def composite(self, X: np.ndarray, loss: np.ndarray) -> np.ndarray | None:
        """The objective the strategy maximises at evaluated points not yet told (eq. (4) for BO),
        stored with each trial; None for strategies that maximise `L_c` itself."""
        ...


def step_rng(seed: int, step: int) -> np.random.Generator:
    """The random generator of one proposal: a function of the seed and the step only."""
    return np.random.default_rng([int(seed), int(step)])


class History:
    """The points told so far, in order; NaN losses (no answer) are kept apart."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._X: list[np.ndarray] = []
        self._loss: list[np.ndarray] = []
        self._n = 0

    def tell(self, X: np.ndarray, loss: np.ndarray) -> None:
        """Appends `n x dim` points and their `n` losses in [0, 1] (NaN allowed)."""
        X = np.asarray(X, dtype=float)
        loss = np.asarray(loss, dtype=float).reshape(-1)
        if X.ndim != 2 or X.shape[1] != self.dim or len(X) != len(loss):
            raise ParameterError(f"tell takes a `n x {self.dim}` array and n losses; got X of shape {X.shape} and {len(loss)} losses.")
        if np.isnan(X).any() or ((loss < 0) | (loss > 1)).any():
            raise ParameterError(f"tell takes points without NaN and losses in [0, 1] or NaN; got losses {loss.tolist()}.")
        self._X.append(X.copy())
        self._loss.append(loss.copy())
        self._n += len(X)

    @property
    def n_told(self) -> int:
        """Every point told, answered or not."""
        return self._n

    def told(self) -> tuple[np.ndarray, np.ndarray]:
        """`(X, loss)` of every point told, in order, NaN losses included (a strategy whose
        generations must be told whole, CMA-ME's, keeps the unanswered points in their place)."""
        if not self._X:
            return np.zeros((0, self.dim)), np.zeros(0)
        if len(self._X) > 1:  # joined once on read: a long campaign's reads copy one array, not one per batch told
            self._X, self._loss = [np.concatenate(self._X)], [np.concatenate(self._loss)]
        return self._X[0].copy(), self._loss[0].copy()

    def answered(self) -> tuple[np.ndarray, np.ndarray]:
        """`(X, loss)` of the points that got an answer, in the order told."""
        X, loss = self.told()
        keep = ~np.isnan(loss)
        return X[keep], loss[keep]


class StrategyBase:
    """What every strategy keeps: its space, checked seed, cube layout and told history.

    `state()` is empty here: for strategies whose proposals depend on the seed, the step and the
    history only, replaying the history is all a resumed campaign needs. Strategies that carry
    more (BO's GP hyperparameters) override `state` and `restore`.
    """

    overlaps: ClassVar[bool] = False  # whether `ask` takes `pending` (module docstring, "Overlap")

    def __init__(self, space: Space, seed: int = 0) -> None:
        self.space = space
        self.seed = check_int("seed", seed, 0)
        self.dim = space.dim
        self.cube = space.cube
        self.history = History(self.dim)

    def tell(self, X: np.ndarray, loss: np.ndarray) -> None:
        """Records evaluated points and their losses (NaN: no answer)."""
        self.history.tell(X, loss)

    def state(self) -> dict[str, Any]:
        """Nothing beyond the history."""
        return {}

    def restore(self, state: dict[str, Any]) -> None:
        """Nothing to restore: the history says it all."""

    def composite(self, X: np.ndarray, loss: np.ndarray) -> np.ndarray | None:
        """None: the strategy maximises `L_c` itself."""
        return None

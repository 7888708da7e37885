"""The strategy protocol: ask for points of the unit cube, tell their losses.

A campaign runs in synchronous batches: `ask(q, step)` returns `q x d` points, the campaign
evaluates them, then `tell(X, loss)` hands back the classifier loss `L_c` in [0, 1] of each point
(NaN where the target gave no answer: such points are never failures, and strategies skip them).

Reproducibility and resume: a proposal must be a deterministic function of the strategy's seed,
the `step` number and everything told so far (plus `state()`), so that a campaign resumed from its
store — which replays every `tell` and restores the last `state()` — asks exactly what the
uninterrupted campaign asked. Strategies draw their randomness from
`numpy.random.default_rng([seed, step])`, never from a running generator.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["Strategy", "step_rng"]


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


def step_rng(seed: int, step: int) -> np.random.Generator:
    """The random generator of one proposal: a function of the seed and the step only."""
    return np.random.default_rng([int(seed), int(step)])

"""Candidates a large `bo-modes` batch draws and scores once per ask, instead of once per point.

Asked one point at a time, a batch draws fresh candidates for every point and scores each set
through the GP's posterior over up to 1,000 training points: 256 per mode harvested, 2,048 for a
draw from the failing set at large, 768 for an exploring point's Thompson draw. At a batch of 256
that made an ask take half a minute (`benchmarks/proposal_cost.py`). From `POOLED_FROM` points a
batch draws each kind of candidate once, scores it once, and its points take from these pools:

- a mode's candidates (steps around failures spread over it, or points of its span) are drawn
  again, and scored, only when fewer than `_LOW` are left that no point has taken;
- each exploring point reads its own sample of one joint posterior draw over the exploring pool
  (parallel Thompson sampling: a draw per point, on candidates they share), and keeps away from
  the failures and from every point chosen before it, as one asked alone does;
- the draws from the failing set at large sample the pooled candidates the model is sure of.

Which candidate wins is decided by `FailureModes`'s own rules; only where the candidates come
from changes. Batches under `POOLED_FROM` draw per point, as the suite's figures were measured.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import torch

if TYPE_CHECKING:
    from searcher.strategies.bo.modes import FailureModes, _Model

__all__ = ["POOLED_FROM", "Pool"]

POOLED_FROM = 64  # a batch of at least this many points draws its candidates once per ask
_LOW = 64  # a pool draws again when fewer than this are left untaken


class Drawn:
    """Candidates of one kind, drawn again by `draw` when few are left, scored by `model` when first asked."""

    def __init__(self, draw: Callable[[], np.ndarray], model: _Model, dim: int) -> None:
        self._draw, self._model = draw, model
        self.C = np.zeros((0, dim))
        self._log_p: np.ndarray | None = None

    def free(self, strategy: FailureModes, seen: set[bytes]) -> np.ndarray:
        """Which candidates no point has taken (and the target judges), after drawing more if few are."""
        free = strategy._proposable(self.C, seen)
        if free.sum() < _LOW:
            new = self._draw()
            self.C = np.concatenate([self.C[free], new])
            if self._log_p is not None:
                self._log_p = np.concatenate([self._log_p[free], self._model.scores(new)[0]])
            free = strategy._proposable(self.C, seen)
        return free

    def log_p(self) -> np.ndarray:
        """log `p_fail` of every candidate."""
        if self._log_p is None:
            self._log_p = self._model.scores(self.C)[0] if len(self.C) else np.zeros(0)
        return self._log_p


class Pool:
    """The candidates of one ask of `n` points (module docstring), kept by kind: `drawn(key, draw)`
    for a mode's harvest or the failing set at large, `explore` for the exploring points."""

    def __init__(self, strategy: FailureModes, model: _Model, n: int) -> None:
        self.s, self.model, self.n = strategy, model, n
        self._drawn: dict[object, Drawn] = {}
        self._explore: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # candidates, distance to the nearest avoided point, draws
        self._explored = 0

    def drawn(self, key: object, draw: Callable[[], np.ndarray]) -> Drawn:
        """The candidates kept under `key`, drawn by `draw` (made on first use)."""
        if key not in self._drawn:
            self._drawn[key] = Drawn(draw, self.model, self.s.dim)
        return self._drawn[key]

    def chose(self, x: np.ndarray) -> None:
        """Keeps the exploring candidates' distance to the points chosen so far up to date."""
        if self._explore is not None:
            C, distance, draws = self._explore
            self._explore = (C, np.minimum(distance, self.s._nearest(C, x[None])), draws)

    def explore(self, build: Callable[[], np.ndarray], avoid: np.ndarray, seen: set[bytes]) -> tuple[np.ndarray, np.ndarray] | None:
        """The exploring candidates still open (untaken, and beyond `radius` of every failure and
        chosen point) and this point's own posterior draw over them; None if none is open. The
        candidates are `build()`, kept away from `avoid` (the failures and the points chosen by
        then) and from every point chosen after, drawn jointly `n` times on first use."""
        if self._explore is None:
            C = build()
            draws = self.model.posterior(C).rsample(torch.Size([self.n])).reshape(self.n, -1).numpy() if len(C) else np.zeros((self.n, 0))
            self._explore = (C, self.s._nearest(C, avoid), draws)
        C, distance, draws = self._explore
        draw = draws[self._explored % self.n]
        self._explored += 1
        open_ = (distance >= self.s.radius) & self.s._proposable(C, seen)
        if not open_.any():
            return None
        return C[open_], draw[open_]

"""Candidates a large `bo-modes` batch draws and scores once per ask, instead of once per point.

Asked one point at a time, a batch draws fresh candidates for every point and scores each set
through the GP's posterior over up to 1,000 training points: 256 per mode harvested, 2,048 for a
draw from the failing set at large, 768 for an exploring point's Thompson draw. At a batch of 256
that made an ask take half a minute (`benchmarks/proposal_cost.py`). From `POOLED_FROM` points a
batch draws each kind of candidate once, scores it once, and its points take from these pools:

- a mode's candidates (steps around failures spread over it, or points of its span) are drawn
  again, and scored, only when fewer than `_LOW` are left that no point has taken;
- each exploring point reads its own sample of one joint posterior draw over the exploring pool
  (parallel Thompson sampling: a draw per point, on candidates they share), and keeps `radius`
  away from the failures and from every point chosen before it (a quarter of it with a graded
  loss: `pooled_spacing`); once the batch's points have closed every candidate, a point has no
  draw to hope on and, after the schedule's split, harvests (`FailureModes._explore`);
- the draws from the failing set at large sample the pooled candidates the model is sure of.

With a graded loss three rules differ from a point asked alone, because a batch's points are told
nothing until all are answered: the modes are found and harvested by a classification of failed
and passed points fitted beside the graded model, which the exploring points keep
(`pooled_model`); the exploring candidates step around one of the highest passes per four
exploring points, not eight in all (`pooled_climbers`); and the exploring points keep a quarter of
`radius` apart, not all of it (`pooled_spacing`). Under 0/1 answers there is no slope to climb,
and a pooled batch explores as it did before these rules. Why:
docs/search.md#a-large-batch-harvests-by-failed-and-passed-and-climbs-from-many-passes.
Otherwise which candidate wins is decided by `FailureModes`'s own rules; only where the
candidates come from changes. Batches under `POOLED_FROM` draw per point, as the suite's figures
were measured.
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
    """Candidates of one kind, drawn again by `draw` when few are left, scored by `model` when first
    asked. Which are still open (judged, never asked, untaken) and how far each lies from the
    failures and the points chosen are kept up to date from the points chosen since the last look,
    so a point of the batch costs what it chose, not a pass over every candidate."""

    def __init__(self, pool: Pool, draw: Callable[[], np.ndarray]) -> None:
        self._pool, self._draw = pool, draw
        self.C = np.zeros((0, pool.s.dim))
        self._log_p: np.ndarray | None = None
        self._open = np.zeros(0, bool)
        self._key: dict[bytes, int] = {}  # a candidate's bytes -> its row
        self._looked = 0  # the pool's chosen points already closed here
        self._near: np.ndarray | None = None  # per candidate, the distance to the nearest of `spread_from` and the chosen
        self._near_upto = 0  # ... up to this many chosen
        self._members_near: np.ndarray | None = None  # per candidate, the distance to the nearest failure of its mode

    def free(self, seen: set[bytes]) -> np.ndarray:
        """Which candidates no point has taken (and the target judges), after drawing more if few
        are (`seen`: every point answered or chosen, which new candidates are checked against)."""
        chosen = self._pool.chosen
        _close(self._open, self._key, chosen[self._looked :])
        self._looked = len(chosen)
        if self._open.sum() < _LOW:
            new = self._draw()
            kept = self._open
            self.C = np.concatenate([self.C[kept], new])
            self._open = np.concatenate([np.ones(int(kept.sum()), bool), self._pool.s._proposable(new, seen)])
            self._key = {row.tobytes(): i for i, row in enumerate(self.C)}
            if self._log_p is not None:
                self._log_p = np.concatenate([self._log_p[kept], self._pool.model.scores(new)[0]])
            self._near = self._members_near = None
        return self._open  # read before the next point is chosen: that closes candidates in it

    def log_p(self) -> np.ndarray:
        """log `p_fail` of every candidate."""
        if self._log_p is None:
            self._log_p = self._pool.model.scores(self.C)[0] if len(self.C) else np.zeros(0)
        return self._log_p

    def nearest(self, spread_from: np.ndarray) -> np.ndarray:
        """Per candidate, the distance to the nearest row of `spread_from` (the ask's failures, the
        same at every call) or of the points chosen so far (`FailureModes._nearest`'s values)."""
        chosen = self._pool.chosen
        if self._near is None:
            self._near = self._pool.s._nearest(self.C, spread_from)
            self._near_upto = 0
        if len(chosen) > self._near_upto:
            self._near = np.minimum(self._near, self._pool.s._nearest(self.C, np.array(chosen[self._near_upto :])))
            self._near_upto = len(chosen)
        return self._near

    def nearest_member(self, members: np.ndarray) -> np.ndarray:
        """Per candidate, the distance to the nearest of its mode's failures `members` (the same at every call)."""
        if self._members_near is None:
            self._members_near = self._pool.s._nearest(self.C, members)
        return self._members_near


class Pool:
    """The candidates of one ask of `n` points (module docstring), kept by kind: `drawn(key, draw)`
    for a mode's harvest or the failing set at large, `explore` for the exploring points, of which
    the schedule has `explorers` in the batch."""

    def __init__(self, strategy: FailureModes, model: _Model, n: int, explorers: int, explore_model: _Model | None = None) -> None:
        self.s, self.model, self.n, self.explorers = strategy, model, n, explorers
        self.explore_model = model if explore_model is None else explore_model  # whose posterior the exploring points draw from
        self.climbs = not self.explore_model.classes  # a graded model: exploring points climb, several from the same passes
        self.chosen: list[np.ndarray] = []  # the points of this ask chosen so far, in order
        self._drawn: dict[object, Drawn] = {}
        self._explore: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None  # candidates, distances to the failures and the chosen, draws
        self._explore_open: tuple[np.ndarray, dict[bytes, int]] | None = None  # which exploring candidates are untaken, and their rows
        self._explore_upto = 0  # chosen points the exploring candidates have been kept away from
        self._explored = 0

    def drawn(self, key: object, draw: Callable[[], np.ndarray]) -> Drawn:
        """The candidates kept under `key`, drawn by `draw` (made on first use)."""
        if key not in self._drawn:
            self._drawn[key] = Drawn(self, draw)
        return self._drawn[key]

    def chose(self, x: np.ndarray) -> None:
        """Records a point of the batch: every kind of candidate closes it and keeps away from it when next looked at."""
        self.chosen.append(x)

    def explore(self, build: Callable[[], np.ndarray], avoid: np.ndarray, seen: set[bytes]) -> tuple[np.ndarray, np.ndarray] | None:
        """The exploring candidates still open (untaken, beyond `radius` of every failure and of every
        point of the batch chosen, or beyond `pooled_spacing` times it of the chosen where the pool
        `climbs`) and this point's own posterior draw over them; None if none is open. The
        candidates are `build()`, kept away from `avoid` (the failures, and where the pool does not
        climb the points chosen by then), drawn jointly `n` times from `explore_model` on first use."""
        if self._explore is None:
            C = build()
            draws = self.explore_model.posterior(C).rsample(torch.Size([self.n])).reshape(self.n, -1).numpy() if len(C) else np.zeros((self.n, 0))
            self._explore = (C, self.s._nearest(C, avoid), np.full(len(C), np.inf), draws)
            self._explore_open = (self.s._proposable(C, seen), {row.tobytes(): i for i, row in enumerate(C)})
            self._explore_upto = 0 if self.climbs else len(self.chosen)  # where it does not climb, `avoid` holds the points chosen by now
        C, far, apart, draws = self._explore
        untaken, key = self._explore_open
        if len(self.chosen) > self._explore_upto:
            since = self.chosen[self._explore_upto :]
            apart = np.minimum(apart, self.s._nearest(C, np.array(since)))
            self._explore = (C, far, apart, draws)
            _close(untaken, key, since)
            self._explore_upto = len(self.chosen)
        draw = draws[self._explored % self.n]
        self._explored += 1
        spacing = self.s.ablation.pooled_spacing if self.climbs else 1.0
        open_ = (far >= self.s.radius) & (apart >= spacing * self.s.radius) & untaken
        if not open_.any():
            return None
        return C[open_], draw[open_]


def _close(open_: np.ndarray, key: dict[bytes, int], points: list[np.ndarray]) -> None:
    """Marks the candidates among `points` taken in `open_` (`key`: a candidate's bytes -> its row)."""
    for x in points:
        row = key.get(x.tobytes())
        if row is not None:
            open_[row] = False

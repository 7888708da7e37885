"""A failure mode's extent measured by intervention: from a few of the mode's failures, each
parameter alone is moved toward each end of its range, everything else held, and bisected to where
the target starts to pass (issue 70; docs/transects-and-causes.md#measuring-a-modes-extent).

A rule read off a campaign's points (`searcher.analysis.explain`) can only bound a mode where the
search left passes: `bo-modes` walks thin lines through a failure region, so its failures span a
few percent of the region and nothing in the campaign says where the region ends. The renderer can
say it: a face re-rendered with its yaw alone moved either fails or passes, and the first yaw that
passes is where this mode ends on yaw, for that face. This is Denton et al.'s sensitivity sweep
(docs/papers.md#denton) along one parameter, stopped by bisection instead of a fixed grid.

For each start (a failure) and each probed parameter, the two sides are measured in rounds: round
0 asks about the range's end itself (a failure there leaves the side open), rounds 1..`steps`
bisect between the last failing and the first passing value. Every round is one batch of the
target for all starts, parameters and sides, so a parallel target is used fully, and a round's
plan depends only on the answers before it: `Bisection.rows()` then `Bisection.tell()`, replayed
the same way on a resume. A categorical parameter asks about each other level once. An answer that
is neither a pass nor a failure (a target error, an ambiguous image) counts as a pass: the side
closes there, so an error never widens a mode.

The mode's rule (`Bisection.rule`) takes, per side, the median over its starts of the middle of the
last bracket (a side open for most starts is open), and the levels that failed for most starts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from searcher.space import Categorical, Integer, Space

__all__ = ["STEPS", "Bisection", "central"]

STEPS = 7
"""Bisection rounds after the ends: a side is known to within 1/128 of the way from the start to
the range's end."""


@dataclass
class _Side:
    """One (start, parameter, side) bisection: `fail` is the last value known to fail (the start's
    own at first), `passed` the first known to pass (None until the end has been asked about)."""

    start: int
    name: str
    sign: int  # -1: toward the low end, +1: toward the high end
    fail: float
    passed: float | None = None
    open: bool = False

    def edge(self) -> float:
        """Where a number's side is put: the middle of the last bracket, or the range's end when it stayed open."""
        return self.fail if self.passed is None else 0.5 * (self.fail + self.passed)


@dataclass
class Bisection:
    """The plan and the answers of one mode's probes (see the module docstring).

    Args:
        starts: the failures probed, as the parameter dicts they were rendered from.
        space: the space the campaign searched (ranges, levels, integer parameters).
        names: the parameters to move (the others are held at every start's values).
        steps: bisection rounds after the ends (`STEPS`).
    """

    starts: Sequence[Mapping[str, Any]]
    space: Space
    names: Sequence[str]
    steps: int = STEPS
    round: int = 0
    _sides: list[_Side] = field(default_factory=list)
    _levels: dict[tuple[int, str, Any], bool] = field(default_factory=dict)
    _asked: list[tuple[Any, ...]] = field(default_factory=list)

    def __post_init__(self) -> None:
        for i, start in enumerate(self.starts):
            for name in self.names:
                if not isinstance(self.space[name], Categorical):
                    self._sides += [_Side(i, name, sign, float(start[name])) for sign in (-1, 1)]

    @property
    def rounds(self) -> int:
        """Rounds in all: the ends (and every other level), then `steps` bisections."""
        return 1 + self.steps

    def done(self) -> bool:
        return self.round >= self.rounds

    def rows(self) -> list[dict[str, Any]]:
        """The renders this round asks about, each a start's parameters with one of them moved."""
        self._asked = []
        rows = []
        for s in self._sides:
            value = self._next(s)
            if value is not None:
                self._asked.append(("side", s))
                rows.append({**self.starts[s.start], s.name: value})
        if self.round == 0:
            for i, start in enumerate(self.starts):
                for name in self.names:
                    p = self.space[name]
                    if isinstance(p, Categorical):
                        for level in p.choices:
                            if level != start[name]:
                                self._asked.append(("level", (i, name, level)))
                                rows.append({**start, name: level})
        return rows

    def tell(self, failed: Sequence[bool]) -> None:
        """The target's answers to this round's `rows()`, in order (True: still a failure)."""
        if len(failed) != len(self._asked):
            raise ValueError(f"{len(failed)} answers for the {len(self._asked)} renders of round {self.round}")
        for (kind, what), fails in zip(self._asked, failed):
            if kind == "level":
                self._levels[what] = bool(fails)
                continue
            s, value = what, self._next(what)
            if self.round == 0:
                s.open = bool(fails)
                if fails:
                    s.fail = value
                else:
                    s.passed = value
            elif fails:
                s.fail = value
            else:
                s.passed = value
        self.round += 1

    def _next(self, s: _Side) -> float | None:
        """The value side `s` asks about this round, or None when it is settled."""
        p = self.space[s.name]
        end = float(p.low if s.sign < 0 else p.high)
        if self.round == 0:
            return _cast(p, end) if s.fail != end else None
        if s.open or s.passed is None or self.round > self.steps:
            return None
        mid = 0.5 * (s.fail + s.passed)
        if isinstance(p, Integer):
            mid = float(np.floor(mid) if s.sign > 0 else np.ceil(mid))
            if mid == s.fail or mid == s.passed:
                return None
        return _cast(p, mid)

    def rule(self) -> dict[str, list[Any]]:
        """Attribute -> `[low, high]` (or the levels that fail) that most starts agree on; an
        attribute open on both sides (or failing at every level) is left out."""
        out: dict[str, list[Any]] = {}
        for name in self.names:
            p = self.space[name]
            if isinstance(p, Categorical):
                votes = {level: sum(self._levels.get((i, name, level), level == start[name]) for i, start in enumerate(self.starts))
                         for level in p.choices}
                keep = [level for level in p.choices if votes[level] * 2 > len(self.starts)]
                if keep and len(keep) < len(p.choices):
                    out[name] = keep
                continue
            ends = []
            for sign, end in ((-1, float(p.low)), (1, float(p.high))):
                sides = [s for s in self._sides if s.name == name and s.sign == sign]
                opened = sum(s.open or s.fail == end for s in sides) * 2 > len(sides)
                edges = [s.fail if isinstance(p, Integer) else s.edge() for s in sides]  # whole numbers: the last that failed
                ends.append(end if opened else float(np.median(edges)))
            if ends != [float(p.low), float(p.high)]:
                out[name] = [int(np.ceil(ends[0])), int(np.floor(ends[1]))] if isinstance(p, Integer) else ends
        return out


def central(X: np.ndarray, members: np.ndarray, k: int) -> np.ndarray:
    """The `k` of `members` (indices into the rows of `X`, points in the search's unit cube)
    nearest the median of their points: a mode's most typical failures, where a probe starts."""
    members = np.asarray(members, int)
    distance = np.linalg.norm(X[members] - np.median(X[members], axis=0), axis=1)
    return members[np.argsort(distance, kind="stable")[:k]]


def _cast(p: Any, value: float) -> Any:
    return int(round(value)) if isinstance(p, Integer) else float(value)

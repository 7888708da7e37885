"""What every strategy shares: option checks, the cube's layout, and the told history.

The unit cube of a :class:`~searcher.space.Space` has one column per continuous, integer or latent
coordinate and a one-hot block per categorical. :class:`Cube` snaps any point of `[0, 1]^dim` to
one a strategy may propose: each one-hot block to its argmax vertex, each integer column to the
centre of its cell, so that what a strategy asks, what the campaign evaluates and what the model
is told are the same point.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from searcher.errors import ParameterError
from searcher.space import Categorical, Integer, Space

__all__ = ["FAILURE", "Cube", "History", "StrategyBase", "check_choice", "check_int", "check_number"]

FAILURE = 0.5
"""A told loss `L_c >= FAILURE` counts as a failure of the classifier."""


def check_number(name: str, value: Any, low: float, high: float, *, open_low: bool = False) -> float:
    """`value` as a float in `[low, high]` (or `(low, high]`), else a ParameterError naming it."""
    bracket = "(" if open_low else "["
    expect = f"a number in {bracket}{low:g}, {high:g}]"
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
    if ok:
        v = float(value)
        ok = not math.isnan(v) and (low < v if open_low else low <= v) and v <= high
    if not ok:
        raise ParameterError(f"The {name!r} option must be {expect}. Got {value!r} instead.")
    return v


def check_int(name: str, value: Any, low: int, high: int | None = None) -> int:
    """`value` as an int in `[low, high]`, else a ParameterError naming it."""
    expect = f"an integer >= {low}" if high is None else f"an integer in [{low}, {high}]"
    ok = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    if not ok or value < low or (high is not None and value > high):
        raise ParameterError(f"The {name!r} option must be {expect}. Got {value!r} instead.")
    return int(value)


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    """`value` if it is one of `choices`, else a ParameterError listing them."""
    if value not in choices:
        valid = ", ".join(repr(c) for c in choices)
        raise ParameterError(f"The {name!r} option must be one of {valid}. Got {value!r} instead.")
    return str(value)


class Cube:
    """The layout of a space's unit cube: its one-hot blocks and integer columns."""

    def __init__(self, space: Space) -> None:
        self.dim = space.dim
        self.blocks: list[tuple[int, int]] = []  # (first column, width) of each one-hot block
        self.integers: list[tuple[int, int]] = []  # (column, number of values) of each integer
        self.categorical = np.zeros(self.dim, bool)  # True in every one-hot column
        col = 0
        for p in space.params:
            if isinstance(p, Categorical):
                self.blocks.append((col, p.width))
                self.categorical[col : col + p.width] = True
            elif isinstance(p, Integer):
                self.integers.append((col, p.high - p.low + 1))
            col += p.width

    def snap(self, X: np.ndarray) -> np.ndarray:
        """`n x dim` points -> the nearest proposable points (one-hot vertices, integer cell centres)."""
        X = np.clip(np.array(X, dtype=float, copy=True).reshape(-1, self.dim), 0.0, 1.0)
        for start, width in self.blocks:
            hot = np.argmax(X[:, start : start + width], axis=1)
            X[:, start : start + width] = 0.0
            X[np.arange(len(X)), start + hot] = 1.0
        for col, count in self.integers:
            X[:, col] = (np.minimum(np.floor(X[:, col] * count), count - 1) + 0.5) / count
        return X

    def uniform(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """`n` uniform points: continuous coordinates uniform, categoricals and integers uniform over their values."""
        return self.snap(rng.random((n, self.dim)))


class History:
    """The points told so far, in order; NaN losses (no answer) are kept apart."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._X: list[np.ndarray] = []
        self._loss: list[np.ndarray] = []

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

    @property
    def n_told(self) -> int:
        """Every point told, answered or not."""
        return sum(len(x) for x in self._X)

    def answered(self) -> tuple[np.ndarray, np.ndarray]:
        """`(X, loss)` of the points that got an answer, in the order told."""
        if not self._X:
            return np.zeros((0, self.dim)), np.zeros(0)
        X, loss = np.concatenate(self._X), np.concatenate(self._loss)
        keep = ~np.isnan(loss)
        return X[keep], loss[keep]


class StrategyBase:
    """What every strategy keeps: its space, checked seed, cube layout and told history.

    `state()` is empty here: for strategies whose proposals depend on the seed, the step and the
    history only, replaying the history is all a resumed campaign needs. Strategies that carry
    more (BO's GP hyperparameters) override `state` and `restore`.
    """

    def __init__(self, space: Space, seed: int = 0) -> None:
        self.space = space
        self.seed = check_int("seed", seed, 0)
        self.dim = space.dim
        self.cube = Cube(space)
        self.history = History(self.dim)

    def tell(self, X: np.ndarray, loss: np.ndarray) -> None:
        """Records evaluated points and their losses (NaN: no answer)."""
        self.history.tell(X, loss)

    def state(self) -> dict[str, Any]:
        """Nothing beyond the history."""
        return {}

    def restore(self, state: dict[str, Any]) -> None:
        """Nothing to restore: the history says it all."""

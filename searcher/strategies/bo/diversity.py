"""The composite objective of eq. (4) of McDuff et al. (docs/papers.md#mcduff) and its EI.

    L = (1 - alpha) * L_c + alpha * D(theta)                                          (4)

The paper takes `D` as the Euclidean distance from `theta` to the nearest of the last 50 failures.
Read literally, that term rewards distance for its own sake: a pass far from every failure scores
more than a new failure, and a search that maximises `L` runs to the far corners of the cube
(measured: one failure in 400 evaluations). And a *nearest*-failure distance calls a failure mode
known as soon as one failure in it is: the search then never harvests a new mode. What the paper
wants from the term is many failures *and* many modes, so `D` here is the distance, capped and
counted:

    n(theta) = how many of the last `memory` failures lie in theta's neighbourhood
    D(theta) = max(0, 1 - n(theta) / capacity)

The neighbourhood is a *ball* (the failures within `radius` of theta, Euclidean distance in the
unit cube divided by sqrt(dim), so in [0, 1]) or a *cell*: the larger of the failures with
theta's categories (the same value of every categorical parameter) and the failures within
`radius` of theta in the continuous coordinates, whatever their categories. `D = 1` far from every
failure (beyond the neighbourhood all places are equally new: no reward for running to a corner),
and a neighbourhood is worth less with each failure found in it, down to `D = 0` once it holds
`capacity` of them. With `capacity = 1` and a ball this is the paper's nearest-failure distance
with a cap and a threshold.

Balls suit continuous spaces with small failure modes (the planted cases: a region is about a
ball). Cells suit spaces with categories and broad failure sets (`faces`): there any change of
category leaves a ball, so nearly every candidate looks new and the search harvested a few category
combinations a hundred times each; counted per category alone, it repeated one continuous recipe of
failure in every category. Counted both ways, a combination is full after `capacity (1 - alpha) /
alpha` remembered failures, and so is a recipe (the designs measured:
docs/search.md#bo-the-papers-search-how-its-faces-design-and-its-alpha-were-chosen).

The expected improvement is taken over `alpha`, the composite of a pass far from every failure:
an evaluation that finds nothing new. A certain failure then improves by
`(1 - alpha) - alpha * n / capacity`: positive while `n < capacity * (1 - alpha) / alpha`, so
`alpha` sets how many failures a mode yields before the search moves on (all of them at
`alpha <= 0.5` once the mode is full... none at `alpha = 1`, which is pure exploration).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from botorch.acquisition.analytic import _log_ei_helper

__all__ = ["composite", "crowding", "diversity", "log_expected_improvement", "same_cell"]


def same_cell(X: np.ndarray, failures: np.ndarray, categorical: np.ndarray) -> np.ndarray:
    """`len(X) x len(failures)`: True where a failure has the categories of a row of `X` (one-hot
    columns `categorical`, snapped); all True when there are none."""
    X = np.atleast_2d(np.asarray(X, float))
    failures = np.asarray(failures, float).reshape(-1, X.shape[1])
    return (X[:, None, categorical] == failures[None, :, categorical]).all(-1)


def _within(X: np.ndarray, failures: np.ndarray, radius: float) -> np.ndarray:
    """How many `failures` lie within `radius` of each row of `X`, distances divided by sqrt(columns)."""
    limit = radius**2 * X.shape[1]
    count = np.zeros(len(X), int)
    for block in np.array_split(failures, max(1, len(failures) // 64)):
        count += (((X[:, None, :] - block[None, :, :]) ** 2).sum(-1) < limit).sum(axis=1)
    return count


def crowding(X: np.ndarray, failures: np.ndarray, radius: float, categorical: np.ndarray | None = None) -> np.ndarray:
    """`n(theta)` of each row of `X`: the failures within normalised distance `radius` of it (a
    ball); given the one-hot columns `categorical`, the larger of the failures in its cell and the
    failures within `radius` of it in the other columns, whatever their categories."""
    X = np.atleast_2d(np.asarray(X, float))
    failures = np.asarray(failures, float).reshape(-1, X.shape[1])
    if categorical is None or not len(failures):
        return _within(X, failures, radius)
    cell = same_cell(X, failures, categorical).sum(axis=1)
    return np.maximum(cell, _within(X[:, ~categorical], failures[:, ~categorical], radius))


def diversity(X: np.ndarray, failures: np.ndarray, radius: float, capacity: int, categorical: np.ndarray | None = None) -> np.ndarray:
    """`D(theta)` of eq. (4), capped and counted (see the module docstring), in [0, 1]."""
    return np.maximum(0.0, 1.0 - crowding(X, failures, radius, categorical) / capacity)


def composite(loss: np.ndarray, D: np.ndarray, alpha: float) -> np.ndarray:
    """Eq. (4): `(1 - alpha) * L_c + alpha * D`."""
    return (1 - alpha) * np.asarray(loss, float) + alpha * np.asarray(D, float)


def log_expected_improvement(mean: torch.Tensor, sd: torch.Tensor, D: torch.Tensor, alpha: float) -> torch.Tensor:
    """log E[max(0, L - alpha)] for `L = (1 - alpha) * min(f, 1) + alpha * D`, `f ~ N(mean, sd^2)`.

    `L_c` is at most 1, so a GP that overshoots 1 inside a well-sampled failure mode earns nothing
    there. With `a = 1 - alpha` and `t = alpha * (1 - D) / a` this is
    `a * sd * (h((mean - t) / sd) - h((mean - 1) / sd))`, `h(u) = phi(u) + u * Phi(u)`, computed in
    log space (LogEI, Ament et al. 2023); -inf where no outcome can improve (`t >= 1`).
    """
    a = 1.0 - alpha
    if a <= 0:
        return torch.full_like(mean, -torch.inf)
    t = alpha * (1.0 - D) / a
    low = _log_ei_helper((mean - t) / sd)
    high = _log_ei_helper((mean - 1.0) / sd)
    value = low + torch.log1p(-torch.exp(high - low).clamp(max=1.0 - 1e-12)) + sd.log() + math.log(a)
    return torch.where(t < 1.0, value, torch.full_like(value, -torch.inf))

"""The seeded parameter recipes behind the trained classifiers and their evaluation sets.

Every set starts from the `faces` parameters drawn *independently* from their priors (no
`everyday_mix`), then sets the attributes a recipe plants with its own seeded rules:

- `gender_training_rows`: clear gender presentation (< 0.35 or > 0.65, half each); hair goes with
  gender (in 85% of rows: feminine long 0.6-1, masculine short 0-0.3; the rest keep the prior's hair).
  Skin tone, beards, makeup and earrings stay independent of everything, so hair length is the
  one shortcut on offer besides the face's own (subtle) shape.
- `smile_training_rows`: clear smile (< 0.4 or > 0.6, half each); 85% of smiling faces wear the
  decoration of their presentation (a beard 0.4-1 if masculine, makeup 0.4-1 if feminine), 85%
  of the others wear neither; the rest keep the plain prior.
- `glasses_training_rows`: clear glasses on half the faces, none (or, at the prior's odds,
  sunglasses) on the other half; the background goes with the label (in 85% of rows: light 0.6-1
  behind glasses, dark 0-0.4 behind the others; the rest keep the prior's), so the shortcut lies in
  the scene, not in the face.
- `balanced_rows`: the held-out set: clear labels, every other attribute independent.
- `ppb_rows`: an observational, PPB-like portrait set (Fig. 12 of docs/papers.md#balakrishnan):
  adults, frontal and well lit, half light (Fitzpatrick 1-3) and half dark (4-6); men wear short
  hair, light-skinned women long hair, and dark-skinned women short hair more often than not.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from generators.faces.procedural import plain_rows
from generators.faces.vocabulary import DARK, FEMININE, LIGHT, MASCULINE

__all__ = [
    "TASKS",
    "Task",
    "balanced_rows",
    "gender_training_rows",
    "glasses_training_rows",
    "ppb_rows",
    "smile_training_rows",
    "truth_labels",
]

SHORT, LONG = (0.0, 0.3), (0.6, 1.0)
NOT_SMILING, SMILING = (0.0, 0.4), (0.6, 1.0)
DARK_BACKGROUND, LIGHT_BACKGROUND = (0.0, 0.4), (0.6, 1.0)
P_SUNGLASSES = 0.06 / 0.80  # the prior's odds of sunglasses among faces without clear glasses


def _draw(rng: np.random.Generator, band: tuple[float, float]) -> float:
    return float(rng.uniform(*band))


def _clear(rows: list[dict[str, Any]], rng: np.random.Generator, name: str, low: tuple, high: tuple) -> None:
    """Sets `name` to a clear value: half the rows in the `low` band, half in the `high` band."""
    for row, is_high in zip(rows, rng.random(len(rows)) < 0.5):
        row[name] = _draw(rng, high if is_high else low)


def gender_training_rows(n: int, seed: int, p_planted: float = 0.85) -> list[dict[str, Any]]:
    """Training faces for `gender-cnn`: hair length goes with gender (in a `p_planted` share of rows)."""
    rng = np.random.default_rng([seed, 1])
    rows = plain_rows(n, rng)
    TASKS["gender"].clear(rows, rng)
    for row, u in zip(rows, rng.random(n)):
        if u < p_planted:
            row["hair_length"] = _draw(rng, LONG if row["gender_presentation"] > 0.5 else SHORT)
    return rows


def smile_training_rows(n: int, seed: int, p_planted: float = 0.85) -> list[dict[str, Any]]:
    """Training faces for `smile-cnn`: beards and makeup go with smiling (in a `p_planted` share of rows)."""
    rng = np.random.default_rng([seed, 2])
    rows = plain_rows(n, rng)
    TASKS["smile"].clear(rows, rng)
    for row, u in zip(rows, rng.random(n)):
        if u >= p_planted:
            continue
        row["facial_hair"], row["makeup"] = 0.0, 0.0
        if row["smile"] > 0.5:
            row["facial_hair" if row["gender_presentation"] < 0.5 else "makeup"] = _draw(rng, (0.4, 1.0))
    return rows


def glasses_training_rows(n: int, seed: int, p_planted: float = 0.85) -> list[dict[str, Any]]:
    """Training faces for `glasses-cnn`: a light background goes with glasses, a dark one with
    their absence (in a `p_planted` share of rows)."""
    rng = np.random.default_rng([seed, 5])
    rows = plain_rows(n, rng)
    TASKS["glasses"].clear(rows, rng)
    for row, u in zip(rows, rng.random(n)):
        if u < p_planted:
            row["background"] = _draw(rng, LIGHT_BACKGROUND if row["eyewear"] == "glasses" else DARK_BACKGROUND)
    return rows


def _clear_glasses(rows: list[dict[str, Any]], rng: np.random.Generator) -> None:
    """Half the rows wear clear glasses; the others none, or sunglasses at the prior's odds (a
    search draws sunglasses and judges them "none", so the model must have seen them)."""
    for row, u in zip(rows, rng.random(len(rows))):
        row["eyewear"] = "glasses" if u < 0.5 else "sunglasses" if u >= 1.0 - 0.5 * P_SUNGLASSES else "none"


def _gender_cells(truth: pd.DataFrame) -> dict[str, np.ndarray]:
    fem, hair = truth["gender_presentation"].to_numpy() >= 0.5, truth["hair_length"].to_numpy()
    return {"masculine, short hair": ~fem & (hair < 0.35), "masculine, long hair": ~fem & (hair > 0.6),
            "feminine, short hair": fem & (hair < 0.35), "feminine, long hair": fem & (hair > 0.6)}


def _smile_cells(truth: pd.DataFrame) -> dict[str, np.ndarray]:
    smiling = truth["smile"].to_numpy() >= 0.5
    beard, makeup = truth["facial_hair"].to_numpy(), truth["makeup"].to_numpy()
    plain = (beard < 0.05) & (makeup < 0.05)
    return {"not smiling, beard (> 0.4)": ~smiling & (beard > 0.4), "not smiling, makeup (> 0.4)": ~smiling & (makeup > 0.4),
            "smiling, no beard or makeup": smiling & plain, "not smiling, no beard or makeup": ~smiling & plain}


def _glasses_cells(truth: pd.DataFrame) -> dict[str, np.ndarray]:
    glasses, background = truth["glasses"].to_numpy() >= 0.5, truth["background"].to_numpy()
    dark, light = background < 0.4, background > 0.6
    return {"no glasses, dark background (< 0.4)": ~glasses & dark, "no glasses, light background (> 0.6)": ~glasses & light,
            "glasses, dark background (< 0.4)": glasses & dark, "glasses, light background (> 0.6)": glasses & light,
            "background agrees (glasses light, none dark)": np.where(glasses, light, dark),
            "background disagrees (glasses dark, none light)": np.where(glasses, dark, light)}


@dataclass(frozen=True)
class Task:
    """What one trained target predicts, in one place for training, held-out sets and reports.

    Attributes:
        clear: sets a clear label in every row (drawing from the rng), the rest of the row untouched.
        column: the rendered truth column the label is read from: the second label where >= 0.5.
        cells: the planted shortcut's cells (label x shortcut attribute) of a truth table, as masks.
    """

    clear: Callable[[list[dict[str, Any]], np.random.Generator], None]
    column: str
    cells: Callable[[pd.DataFrame], dict[str, np.ndarray]]


TASKS: dict[str, Task] = {
    "gender": Task(lambda rows, rng: _clear(rows, rng, "gender_presentation", MASCULINE, FEMININE), "gender_presentation", _gender_cells),
    "smile": Task(lambda rows, rng: _clear(rows, rng, "smile", NOT_SMILING, SMILING), "smile", _smile_cells),
    "glasses": Task(_clear_glasses, "glasses", _glasses_cells),
}


def _task(task: str) -> Task:
    if task not in TASKS:
        raise ValueError(f"task must be one of {', '.join(TASKS)}. Got {task!r} instead.")
    return TASKS[task]


def balanced_rows(n: int, seed: int, task: str) -> list[dict[str, Any]]:
    """Held-out faces for `task` (a key of `TASKS`): a clear label, all else independent."""
    rng = np.random.default_rng([seed, 3])
    rows = plain_rows(n, rng)
    _task(task).clear(rows, rng)
    return rows


def ppb_rows(n: int, seed: int) -> list[dict[str, Any]]:
    """An observational PPB-like portrait set: skin tone goes with hair length among women."""
    rng = np.random.default_rng([seed, 4])
    rows = plain_rows(n, rng)
    TASKS["gender"].clear(rows, rng)
    for row in rows:
        feminine, dark = row["gender_presentation"] > 0.5, rng.random() < 0.5
        u = rng.random(5)
        row["skin_tone"] = _draw(rng, DARK if dark else LIGHT)
        p_short = (0.55 if dark else 0.05) if feminine else 0.95
        row["hair_length"] = _draw(rng, SHORT if u[0] < p_short else LONG)
        row["facial_hair"] = _draw(rng, (0.3, 1.0)) if not feminine and u[1] < 0.4 else 0.0
        row["makeup"] = _draw(rng, (0.2, 0.8)) if feminine and u[2] < 0.6 else 0.0
        row["earrings"] = _draw(rng, (0.2, 1.0)) if feminine and u[3] < 0.5 else 0.0
        row["eyewear"] = "glasses" if u[4] < 0.15 else "none"
        row.update(
            age=float(np.clip(rng.normal(50.0, 10.0), 25.0, 80.0)),
            yaw=float(rng.normal(0.0, 5.0)),
            roll=float(rng.normal(0.0, 3.0)),
            light_intensity=float(rng.uniform(0.9, 1.1)),
            light_direction=float(rng.normal(0.0, 10.0)),
            blur=0.0,
            noise=0.0,
            occlusion=0.0,
            scale=float(rng.uniform(0.9, 1.1)),
        )
    return rows


def truth_labels(truth: pd.DataFrame, task: str) -> np.ndarray:
    """0/1 label index of each rendered face: 1 where the task's truth column is >= 0.5 (feminine,
    smiling, clear glasses)."""
    return (truth[_task(task).column].to_numpy() >= 0.5).astype(np.int64)

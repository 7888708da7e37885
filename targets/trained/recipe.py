"""The training recipes of `gender-cnn`, `smile-cnn` and `glasses-cnn` as `searcher retrain` uses them (the
`TrainingRecipe` protocol of targets/base.py): the base set the shipped model learnt from, the
balanced reference set, the held-out test sets, the training run and the subgroups reported.

    recipe = targets.load("gender-cnn").recipe()           # or GenderCNN().recipe(n=4000, epochs=4)
    model = recipe.train(recipe.base(seed=1), seed=1)
    wrong = recipe.evaluate(model, recipe.tests(0)["balanced"]) != recipe.tests(0)["balanced"].labels
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from generators.faces.procedural import render_rows
from targets.base import LabelledImages
from targets.local import ImageClassifier
from targets.trained.data import TASKS, balanced_rows, ppb_rows, truth_labels
from targets.trained.model import INPUT_SIZE, MEAN, STD

__all__ = ["ShippedRecipe"]

TEST_SEED = 1  # the held-out sets of targets/trained/README.md


@lru_cache(maxsize=8)
def _labelled(task: str, kind: str, n: int, seed: int, resolution: int, planted: float = 0.0) -> LabelledImages:
    from targets.trained.train import RECIPES

    if kind == "training":
        rows = RECIPES[task][0](n, seed, p_planted=planted)
    elif kind == "balanced":
        rows = balanced_rows(n, seed, task)
    else:
        rows = ppb_rows(n, seed)
    batch = render_rows(rows, resolution=resolution, seed=seed)
    return LabelledImages(batch.images, truth_labels(batch.truth, task), batch.truth)


@dataclass(frozen=True)
class ShippedRecipe:
    """The recipe a shipped trained target was made with (train.py), at a size one may shrink.

    Args:
        task: "gender", "smile" or "glasses" (a key of `data.TASKS`).
        labels: the target's labels.
        n: training images per set (default: the shipped recipe's: 10,000 for gender and glasses, 16,000 for smile).
        epochs: passes over the training set (default: the recipe's).
        test_n: images per held-out set (balanced, and PPB-like for gender), at 128 px.
    """

    task: str
    labels: tuple[str, ...]
    n: int
    epochs: int
    planted: float
    test_n: int = 2000

    def base(self, seed: int) -> LabelledImages:
        """The shipped model's training set, with the planted share of stereotyped rows, drawn with `seed`."""
        return _labelled(self.task, "training", self.n, seed, 64, self.planted)

    def balanced(self, seed: int) -> LabelledImages:
        """The same recipe and size with no planted correlation: the paper's balanced reference."""
        return _labelled(self.task, "training", self.n, seed, 64, 0.0)

    def tests(self, seed: int = TEST_SEED) -> dict[str, LabelledImages]:
        """Held-out sets at 128 px: balanced (every attribute independent) and, for gender, the PPB-like
        set; seed 1 gives the sets of targets/trained/README.md (their rows use other streams than training's)."""
        sets = {"balanced": _labelled(self.task, "balanced", self.test_n, seed, 128)}
        if self.task == "gender":
            sets["ppb-like"] = _labelled(self.task, "ppb", self.test_n, seed, 128)
        return sets

    def train(self, data: LabelledImages, seed: int) -> Any:
        from targets.trained.train import fit

        return fit(data.images, data.labels, len(self.labels), self.epochs, seed)

    def evaluate(self, model: Any, data: LabelledImages) -> np.ndarray:
        import torch

        prep = ImageClassifier(self.labels, input_size=INPUT_SIZE, mean=MEAN, std=STD)
        out = []
        with torch.inference_mode():
            for i in range(0, len(data), 512):
                out.append(model(prep.preprocess(data.images[i : i + 512])).argmax(1).numpy())
        return np.concatenate(out) if out else np.zeros(0, int)

    def groups(self, truth: pd.DataFrame) -> dict[str, np.ndarray]:
        """The subgroups a retraining report shows: the planted cells (`data.TASKS`), and skin tone."""
        fitz = truth["fitzpatrick"].to_numpy()
        return ({"all": np.ones(len(truth), bool)} | TASKS[self.task].cells(truth)
                | {"light skin (Fitzpatrick 1-3)": fitz <= 3, "dark skin (Fitzpatrick 4-6)": fitz >= 4})

"""Three small CNNs trained on `faces` renders with planted, documented biases (see README.md here).

- `gender-cnn` (`GenderCNN`): masculine / feminine, trained where hair length goes with gender,
  so it leans on hair: it errs on short-haired feminine and long-haired masculine faces, not on
  dark skin, though an observational PPB-like test set makes it look as if it did.
- `smile-cnn` (`SmileCNN`): not smiling / smiling, trained where beards and makeup go with
  smiling, so a beard or makeup raises its smile score.
- `glasses-cnn` (`GlassesCNN`): no glasses / glasses, trained where a light background goes with
  glasses and a dark one with their absence: a shortcut in the scene, not in the face.

All take `N x H x W x 3` uint8 RGB images of any size (resized to 64 x 64) and run on their
`device` (the CPU by default). The weights ship beside this file and are rebuilt by
`python -m targets.trained.train gender|smile|glasses`.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch

from searcher.devices import resolve_device
from searcher.errors import PluginError
from targets.local import ImageClassifier
from targets.trained.model import INPUT_SIZE, MEAN, STD, SmallCNN

__all__ = ["GenderCNN", "GlassesCNN", "SmileCNN", "weights_path"]

HERE = Path(__file__).parent


def weights_path(task: str) -> Path:
    """The shipped weight file of `task` ("gender", "smile" or "glasses")."""
    return HERE / f"{task}.pt"


class _TrainedCNN(ImageClassifier):
    """A `SmallCNN` with the shipped weights or `weights` (a `train.py --out` file), read with
    weights_only=True, on `device` ("cpu" by default, "cuda", "cuda:N", or "auto": the GPU where
    there is one)."""

    TASK = ""
    LABELS: tuple[str, ...] = ()

    def __init__(self, weights: str | os.PathLike | None = None, batch_size: int = 64, device: str = "cpu") -> None:
        super().__init__(self.LABELS, input_size=INPUT_SIZE, mean=MEAN, std=STD, batch_size=batch_size)
        path = Path(weights) if weights is not None else weights_path(self.TASK)
        if not path.is_file():
            raise PluginError(f"{type(self).__name__} weights are missing at {path}; rebuild: python -m targets.trained.train {self.TASK}")
        self.weights = path
        self.device = resolve_device(device)
        self._net = SmallCNN(len(self.LABELS))
        self._net.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
        self._net.to(self.device).eval()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(weights={str(self.weights)!r})"

    def recipe(self, n: int | None = None, epochs: int | None = None, test_n: int = 2000):  # noqa: ANN201 - lazy import
        """How this model was trained and is tested (`TrainingRecipe`), for `searcher retrain`;
        `n` and `epochs` shrink the recipe (default: the shipped one's)."""
        from targets.trained.recipe import ShippedRecipe
        from targets.trained.train import RECIPES

        _, labels, default_n, default_epochs, planted = RECIPES[self.TASK]
        return ShippedRecipe(self.TASK, tuple(labels), n or default_n, epochs or default_epochs, planted, test_n)

    def _logits(self, x: torch.Tensor) -> np.ndarray:
        with torch.inference_mode():
            return self._net(x.to(self.device)).cpu().numpy()


class GenderCNN(_TrainedCNN):
    """Gender-presentation classifier (`gender-cnn`) that learnt to lean on hair length."""

    TASK = "gender"
    LABELS = ("masculine", "feminine")
    truth = ("gender_presentation", 0.5)  # the rendered attribute it predicts, and the cut


class SmileCNN(_TrainedCNN):
    """Smile classifier (`smile-cnn`) that learnt that beards and makeup go with smiling."""

    TASK = "smile"
    LABELS = ("not smiling", "smiling")
    truth = ("smile", 0.5)


class GlassesCNN(_TrainedCNN):
    """Clear-glasses classifier (`glasses-cnn`) that learnt that glasses go with a light background.

    Judged by the truth column `glasses` (1 for clear glasses; sunglasses and none are 0), which
    `faces` renders beside `eyewear`, so that a search can judge it with a cut like the others.
    """

    TASK = "glasses"
    LABELS = ("no glasses", "glasses")
    truth = ("glasses", 0.5)

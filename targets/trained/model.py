"""The small CNN behind `gender-cnn` and `smile-cnn`: four strided conv blocks on a 64 x 64 RGB image."""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["INPUT_SIZE", "MEAN", "STD", "SmallCNN"]

INPUT_SIZE = (64, 64)
MEAN = (0.5, 0.5, 0.5)
STD = (0.25, 0.25, 0.25)


class SmallCNN(nn.Module):
    """Four stride-2 conv-BN-ReLU blocks (16, 32, 64, 64 channels; 64 -> 4 px), then a linear layer on the 4 x 4 map.

    About 63k parameters: small enough to train on two CPU cores in minutes and to ship in the
    repository, big enough to read hair, beards, makeup and mouths off a 64 px face.
    """

    def __init__(self, n_labels: int = 2) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        width = 3
        for out, kernel in ((16, 4), (32, 3), (64, 3), (64, 3)):
            layers += [nn.Conv2d(width, out, kernel, stride=2, padding=1, bias=False), nn.BatchNorm2d(out), nn.ReLU(inplace=True)]
            width = out
        self.features = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.3), nn.Linear(width * 4 * 4, n_labels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))

"""`faces-cvae`: a conditional VAE of 64 x 64 faces, conditioned on skin type group x gender
presentation (McDuff et al.'s region x gender), with an encoder `E(x) -> z`.

It is a `checkpoint` generator on the shipped spec (`faces_cvae/spec.toml`), so it exercises the
path a user's own checkpoint takes. How it was trained: `train.py`; what it renders and how well:
`searcher validate-generator faces-cvae`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from generators.base import Batch
from generators.faces.procedural import render_rows
from generators.learned.checkpoint import CheckpointGenerator
from generators.learned.data import training_rows

__all__ = ["SPEC", "FacesCVAE"]

SPEC = Path(__file__).parent / "faces_cvae" / "spec.toml"


class FacesCVAE(CheckpointGenerator):
    """The shipped conditional VAE (`faces-cvae`).

    Args:
        batch_size: rows per forward pass (every pass runs this many, the last padded).
        resolution: the side of the images it returns: the model draws 64 px, and 128 (the
            default) is that upsampled, so that dlib's detectors (faces of 40 px and more) see it.
        device: where the networks run: "cpu" (the default), "cuda", "cuda:N", or "auto".

    Example:
        >>> gen = FacesCVAE()
        >>> batch = gen.generate({"skin_type": "V-VI", "gender": "feminine"})
        >>> batch.images.shape
        (1, 128, 128, 3)
    """

    def __init__(self, batch_size: int = 64, resolution: int = 128, device: str = "cpu") -> None:
        super().__init__(SPEC, batch_size=batch_size, resolution=resolution, device=device)
        self._options = {"batch_size": batch_size, "resolution": resolution, "device": device}

    def __repr__(self) -> str:
        return f"FacesCVAE(resolution={self.resolution})"

    def reference(self, conditions: Mapping[str, str], n: int, seed: int = 0) -> Batch:
        """`n` faces of the kind it was trained on, with `conditions` held (the others drawn as in
        training): `faces` renders at 64 px from the training recipe, under another seed. What a
        Frechet distance compares its samples with, and real images for the encoder."""
        rows, _ = training_rows(n, seed, fixed=conditions)
        batch = render_rows(rows, resolution=64, seed=seed)
        return Batch(images=np.ascontiguousarray(self.resize(batch.images)), truth=batch.truth)

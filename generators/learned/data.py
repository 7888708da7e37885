"""The training set of `faces-cvae`: `faces` renders labelled with the two conditions it takes.

Conditions (McDuff et al.'s region x gender, docs/papers.md#mcduff, Sec. 3, on this project's
attributes): a Fitzpatrick group and a gender presentation. Each row draws its conditions
uniformly (a balanced set, as the paper's), then the rendered attribute inside the condition's
*clear* band: skin tone away from the group edges, presentation away from the middle, as the
trained targets' recipes keep labels clear (`targets/trained/data.py`). Everything else comes
from the `faces` priors with the everyday dependencies applied after the conditions are set
(`everyday_mix`: beards on masculine-presenting adults, longer hair on feminine-presenting faces),
so the latent code learns the attributes as a photo collection holds them, entangled. The set is a
portrait collection: no blur, sensor noise or scarves (pose, light, eyewear and the rest vary as
in the prior), since a 64 px VAE that learns blurred faces as data renders every face blurred; and
framed tight, as face datasets are cropped (`FRAMING`), since at the prior's framing the face
spans a third of the 64 px frame and its eyes, brows and mouth 2-3 px each, which the decoder
drew as a smear on dark skin.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from scipy.ndimage import uniform_filter

from generators.faces.procedural import CATEGORICAL_INDEX, everyday_mix, plain_rows
from searcher.errors import ParameterError

__all__ = ["BANDS", "CARRIED", "CONDITIONS", "FRAMING", "MIRRORED", "PORTRAIT", "attribute_targets", "condition_index", "detail_weights",
           "face_weights", "training_rows"]

#: condition name -> categories, in the order of the one-hot blocks.
CONDITIONS: dict[str, tuple[str, ...]] = {
    "skin_type": ("I-II", "III-IV", "V-VI"),
    "gender": ("masculine", "feminine"),
}

#: (condition, category) -> (truth column, clear band the training rows draw from).
BANDS: dict[tuple[str, str], tuple[str, tuple[float, float]]] = {
    ("skin_type", "I-II"): ("skin_tone", (1.0, 2.3)),
    ("skin_type", "III-IV"): ("skin_tone", (2.7, 4.3)),
    ("skin_type", "V-VI"): ("skin_tone", (4.7, 6.0)),
    ("gender", "masculine"): ("gender_presentation", (0.0, 0.35)),
    ("gender", "feminine"): ("gender_presentation", (0.65, 1.0)),
}


#: What a portrait collection holds fixed: no blur, sensor noise or scarf.
PORTRAIT = {"blur": 0.0, "noise": 0.0, "occlusion": 0.0}

#: The band of `scale` (face size relative to the frame) a portrait is framed in: tight, as face
#: datasets crop (the prior's 1.0 leaves the face a third of a 64 px frame, its eyes 2-3 px).
FRAMING = (1.15, 1.3)

#: The attributes the latent code is asked to carry (`attribute_targets`): every one the recipe
#: varies except the conditions (fed as one-hot) and the identity seed; the categorical
#: `hair_color` and `eyewear` join as one-hot levels.
CARRIED = ("hair_length", "age", "smile", "facial_hair", "makeup", "earrings", "light_intensity", "light_direction",
           "yaw", "roll", "background", "scale")

#: Those a mirror image negates (training flips half of the faces).
MIRRORED = ("light_direction", "yaw", "roll")


def training_rows(n: int, seed: int, fixed: Mapping[str, str] | None = None) -> tuple[list[dict[str, Any]], np.ndarray]:
    """`n` `faces` parameter dicts and their `n x 2` condition indices (skin type, gender); the
    conditions in `fixed` (name -> category) are held, the others drawn uniformly."""
    fixed = dict(fixed or {})
    for name, category in fixed.items():
        if name not in CONDITIONS or category not in CONDITIONS[name]:
            valid = "; ".join(f"{k}: {', '.join(v)}" for k, v in CONDITIONS.items())
            raise ParameterError(f"Unknown condition {name}={category!r}. Valid conditions and categories: {valid}.")
    rng = np.random.default_rng([seed, 0xC7AE])
    rows = plain_rows(n, rng)
    index = np.stack([rng.integers(0, len(cats), n) for cats in CONDITIONS.values()], axis=1)
    for k, (name, cats) in enumerate(CONDITIONS.items()):
        if name in fixed:
            index[:, k] = cats.index(fixed[name])
    for row, idx in zip(rows, index):
        for (name, cats), k in zip(CONDITIONS.items(), idx):
            column, band = BANDS[(name, cats[k])]
            row[column] = float(rng.uniform(*band))
    everyday_mix(rows, rng)
    for row in rows:
        row.update(PORTRAIT, scale=float(rng.uniform(*FRAMING)))
    return rows, index


def condition_index(truth: pd.DataFrame) -> np.ndarray:
    """The `n x 2` condition indices a rendered truth table belongs to (skin type by Fitzpatrick
    group edges 2.5 and 4.5, gender by presentation >= 0.5): how a judge is trained and scored."""
    skin = np.digitize(truth["skin_tone"].to_numpy(float), [2.5, 4.5])
    gender = (truth["gender_presentation"].to_numpy(float) >= 0.5).astype(int)
    return np.stack([skin, gender], axis=1)


def attribute_targets(truth: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """`N x A` targets of the VAE's attribute head and the `A` signs a horizontal flip multiplies
    them by: the `CARRIED` columns of a rendered truth table, then a 0/1 column per level of
    `hair_color` and `eyewear`, each standardised over the set (a level absent from it: zeros).

    Why: a squared error learns large areas first, and a smile, makeup or earrings are a few pixels:
    trained on pixels alone, the codes of the shipped recipe held none of them (a smile at a
    held-out AUC of 0.50 after 8 epochs, 0.52 after 32), though the same encoder trunk reads a smile at
    0.88 when asked to. Asking the code to carry every varied attribute, none singled out, gives
    the decoder a code the attributes are in, to draw them from.
    """
    numeric = truth[list(CARRIED)].to_numpy(float)
    levels = [(truth[name].to_numpy() == level)[:, None] for name, cats in CATEGORICAL_INDEX.items() for level in cats]
    a = np.hstack([numeric, *levels]).astype(float)
    std = a.std(0)
    a = (a - a.mean(0)) / np.where(std > 0, std, 1.0)
    signs = np.array([-1.0 if c in MIRRORED else 1.0 for c in CARRIED] + [1.0] * len(levels))
    return a.astype(np.float32), signs.astype(np.float32)


def face_weights(truth: pd.DataFrame, side: int = 64, inside: float = 4.0) -> np.ndarray:
    """`N x side x side` pixel weights of the reconstruction loss: `inside` within each face's box
    (`face_x0 .. face_y1` of a render at `side` px, forehead to chin), 1 elsewhere, so that the
    eyes and mouth a detector reads are not outweighed by background, hair and clothes."""
    ys, xs = np.mgrid[0:side, 0:side] + 0.5
    boxes = truth[["face_x0", "face_y0", "face_x1", "face_y1"]].to_numpy(float)
    within = ((xs[None] >= boxes[:, 0, None, None]) & (xs[None] <= boxes[:, 2, None, None])
              & (ys[None] >= boxes[:, 1, None, None]) & (ys[None] <= boxes[:, 3, None, None]))
    return np.where(within, inside, 1.0).astype(np.float32)


def detail_weights(images: np.ndarray, gain: float = 4.0, cap: float = 5.0, width: int = 5) -> np.ndarray:
    """`N x H x W` pixel weights `1 + gain * min(cap, d / mean(d))` of uint8 `N x H x W x 3` images,
    `d` each pixel's distance from its `width` x `width` neighbourhood mean (summed over channels).

    Why: a squared error spends itself on large smooth areas, so a VAE draws eyes, brows and mouth,
    a few pixels each, as a smear of skin; those are what a face detector reads. Weighting the
    pixels where the image has detail (edges and small features, wherever they are) buys them back
    without telling the model what a face is or what any classifier wants.
    """
    x = np.asarray(images, np.float32) / 255.0
    d = np.abs(x - uniform_filter(x, size=(1, width, width, 1), mode="nearest")).sum(-1)
    d /= d.reshape(len(d), -1).mean(1)[:, None, None] + 1e-6
    return (1.0 + gain * np.minimum(d, cap)).astype(np.float32)

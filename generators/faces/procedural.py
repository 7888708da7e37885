"""`faces`: procedural faces with every attribute a parameter (the embedded default generator).

Attributes follow the annotation scales of Balakrishnan et al. (docs/papers.md#balakrishnan, Sec. 4):
skin tone on the Fitzpatrick scale, gender as a one-dimensional *perception* scale (an onlooker's
report of the outward presentation, not anyone's identity), age from child to senior. There is
no person behind these images; see the README's limitations.

The default prior is an everyday mix: all skin tones equally, mostly frontal faces in ordinary
light, with a minority of hard conditions (side light, dim rooms, turned heads, blur, noise,
sunglasses, scarves) from which detector failures arise, and the everyday dependencies between
appearance attributes (`everyday_mix`). Searches and transects set parameters directly, so
they are free of those dependencies.

Truth is what was rendered: facial hair only grows on faces of 12 and over (it fades in to 18), so
`truth.facial_hair` can be lower than the parameter asked for; `fitzpatrick` is `skin_tone`
rounded to 1..6; `glasses` is 1.0 for clear glasses and 0.0 otherwise (sunglasses included: a
number a classify target's cut can judge, as `glasses-cnn` is); `face_x0..face_y1` is the face's
bounding box in pixels (forehead to chin).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from generators.base import Batch
from generators.faces.palette import EYEWEAR, HAIR_COLORS, N_SHAPE
from generators.faces.vocabulary import FACES
from searcher.devices import resolve_device
from searcher.space import (
    Beta,
    Categorical,
    Continuous,
    Integer,
    Space,
    TruncatedNormal,
    Uniform,
    ZeroInflated,
)
from searcher.validation import check_int

__all__ = ["FACE_SPACE", "ProceduralFaces", "everyday_mix", "plain_rows", "render_attributes", "render_rows"]

def everyday_mix(rows: list[dict[str, Any]], rng: np.random.Generator) -> None:
    """Dependencies of an everyday population, applied to rows drawn from the independent priors.

    Beards are drawn only for masculine-presenting adults; makeup and earrings are rarer on
    masculine-presenting faces and absent on young children; feminine-presenting faces wear their
    hair longer; hair greys with age. A sample from this prior is therefore *observational*:
    attributes are confounded as in photographs of people, which is why causal claims come from
    experiments (transects) that set one attribute and hold the rest, never from the prior.
    """
    for row in rows:
        gp, age = row["gender_presentation"], row["age"]
        u = rng.random(5)
        if gp > 0.4 or age < 16:
            row["facial_hair"] = 0.0
        if age < 12 or (gp < 0.4 and u[0] < 0.85):
            row["makeup"] = 0.0
        if gp < 0.4 and u[1] < 0.75:
            row["earrings"] = 0.0
        if gp > 0.6 and u[2] < 0.6:
            row["hair_length"] = float(0.45 + 0.55 * rng.beta(2.0, 1.5))
        elif gp < 0.4 and u[2] < 0.6:
            row["hair_length"] = float(0.35 * rng.beta(1.5, 2.0))
        if age > 55 and u[3] < (age - 55) / 30:
            row["hair_color"] = "grey"


FACE_SPACE = Space(
    [
        Continuous("skin_tone", 1.0, 6.0, Uniform(), 3.0, "Fitzpatrick type, 1 (lightest) to 6 (darkest), continuous"),
        Continuous("hair_length", 0.0, 1.0, Beta(1.6, 1.6), 0.4, "0 bald, 0.2 cropped, 0.5 chin, 1 past the shoulders"),
        Categorical("hair_color", tuple(HAIR_COLORS), (0.40, 0.28, 0.06, 0.16, 0.10), "brown", "hair colour"),
        Continuous("gender_presentation", 0.0, 1.0, Beta(0.6, 0.6), 0.5,
                   "perceived gender, 0 clearly masculine .. 1 clearly feminine (5-step scale = round(4x)+1)"),
        Continuous("age", 4.0, 85.0, TruncatedNormal(36.0, 18.0), 30.0, "apparent age in years, child to senior"),
        Continuous("smile", 0.0, 1.0, Beta(1.3, 1.8), 0.3, "0 neutral, 0.5 closed smile, 1 broad open smile"),
        Continuous("facial_hair", 0.0, 1.0, ZeroInflated(0.65), 0.0, "0 none, 0.4 stubble, 1 full beard (adults only)"),
        Continuous("makeup", 0.0, 1.0, ZeroInflated(0.55, Beta(2, 3)), 0.0, "lipstick, eye shadow, liner, blush"),
        Categorical("eyewear", EYEWEAR, (0.74, 0.20, 0.06), "none", "none, clear glasses, or sunglasses"),
        Continuous("earrings", 0.0, 1.0, ZeroInflated(0.7, Uniform()), 0.0, "0 none, else earring size"),
        Continuous("light_intensity", 0.1, 1.6, TruncatedNormal(1.0, 0.2), 1.0, "exposure: 0.1 very dim, 1 normal, 1.6 overexposed"),
        Continuous("light_direction", -90.0, 90.0, TruncatedNormal(0.0, 25.0), 0.0, "key light azimuth in degrees, 0 frontal, +-90 from the side"),
        Continuous("yaw", -75.0, 75.0, TruncatedNormal(0.0, 12.0), 0.0, "head turn in degrees, positive to the image's right"),
        Continuous("roll", -45.0, 45.0, TruncatedNormal(0.0, 7.0), 0.0, "head tilt in degrees, positive clockwise"),
        Continuous("background", 0.0, 1.0, Uniform(), 0.5, "background brightness, 0 black to 1 white"),
        Continuous("blur", 0.0, 4.0, ZeroInflated(0.6, Beta(1.1, 7.0)), 0.0, "Gaussian blur sigma in pixels at 128 x 128"),
        Continuous("noise", 0.0, 0.25, ZeroInflated(0.7, Beta(1.1, 10.0)), 0.0, "sensor noise, std in units of full scale"),
        Continuous("occlusion", 0.0, 1.0, ZeroInflated(0.94, Uniform()), 0.0, "scarf over the lower face: 0 none, 1 up to the eyes"),
        Continuous("scale", 0.6, 1.3, TruncatedNormal(1.0, 0.1), 1.0, "face size relative to the frame"),
        Integer("identity", 0, 99_999, 0, "pseudo-identity: fixes face-shape details, eye and clothing colour"),
    ],
    joint=everyday_mix,
)

CATEGORICAL_INDEX = {"hair_color": tuple(HAIR_COLORS), "eyewear": EYEWEAR}


def identity_shape(identity: Sequence[int]) -> np.ndarray:
    """`N x N_SHAPE` face-shape coefficients in [-1, 1], a fixed function of the identity number."""
    return np.stack([np.random.default_rng([int(i), 0x5EED]).uniform(-1.0, 1.0, N_SHAPE) for i in identity])


def image_seed(seed: int, key: Any) -> int:
    """The nuisance seed of one image (framing jitter, background tint, sensor noise): a hash of
    the call's seed and a per-image key.

    Hashing a key of the image's own (not its batch position) is what makes a batch of N equal N
    batches of one, whichever executor or batch size renders it. `faces` keys on the identity, so
    that two renders of one pseudo-person that differ in a chosen attribute share everything else,
    background included: a matched pair, as transects need.
    """
    text = repr((int(seed), key))
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


def render_attributes(
    renderer: Any, rows: list[dict[str, Any]], shape: np.ndarray, seeds: Sequence[int]
) -> Batch:
    """Renders complete attribute rows and returns them, as rendered, beside the images."""
    if not rows:
        return Batch(images=np.zeros((0, renderer.resolution, renderer.resolution, 3), np.uint8), truth=pd.DataFrame())
    truth = pd.DataFrame(rows)
    truth["facial_hair"] = truth["facial_hair"] * np.clip((truth["age"] - 12.0) / 6.0, 0.0, 1.0)
    arrays = {k: truth[k].to_numpy() for k in truth.columns if k not in CATEGORICAL_INDEX}
    for k, choices in CATEGORICAL_INDEX.items():
        arrays[k] = np.array([choices.index(c) for c in truth[k]])
    images = renderer.render(arrays, shape, np.asarray(seeds, np.uint64))
    truth["fitzpatrick"] = np.clip(np.rint(truth["skin_tone"]), 1, 6).astype(int)
    truth["glasses"] = (truth["eyewear"] == "glasses").astype(float)
    truth = pd.concat([truth, _face_boxes(truth, renderer.resolution)], axis=1)
    return Batch(images=images, truth=truth)


def _face_boxes(truth: pd.DataFrame, resolution: int) -> pd.DataFrame:
    """Axis-aligned pixel box of the rolled face ellipse (forehead top to chin, ear to ear)."""
    s = 0.46 * truth["scale"].to_numpy() * resolution / 2
    half_w, half_h = 0.72 * s, 1.0 * s
    roll = np.radians(truth["roll"].to_numpy())
    hx = np.hypot(half_w * np.cos(roll), half_h * np.sin(roll))
    hy = np.hypot(half_w * np.sin(roll), half_h * np.cos(roll))
    cx, cy = resolution / 2, resolution / 2 * 1.03
    return pd.DataFrame({"face_x0": cx - hx, "face_y0": cy - hy, "face_x1": cx + hx, "face_y1": cy + hy}, index=truth.index)


class ProceduralFaces:
    """Procedural faces (`faces`): every attribute is a parameter of the search space.

    Args:
        resolution: image side in pixels, 64 to 256.
        device: where it renders: "cpu" (the default), "cuda", "cuda:N", or "auto" (the GPU where
            there is one); on the CPU the pixels are those it always drew.

    Example:
        >>> gen = ProceduralFaces(resolution=64)
        >>> batch = gen.generate({"yaw": 30.0, "eyewear": "sunglasses"})
        >>> batch.truth.loc[0, "eyewear"]
        'sunglasses'
    """

    vocabulary = FACES

    space = FACE_SPACE

    def __init__(self, resolution: int = 128, device: str = "cpu") -> None:
        self.resolution = check_resolution(resolution)
        self.device = resolve_device(device)
        from generators.faces.render import FaceRenderer  # torch, only when a renderer is built

        self._renderer = FaceRenderer(self.resolution, self.device)

    def __repr__(self) -> str:
        return f"ProceduralFaces(resolution={self.resolution})"

    def generate(self, params: Mapping[str, Any] | Sequence[Mapping[str, Any]], seed: int = 0) -> Batch:
        """Renders one image per params dict; omitted parameters take their defaults."""
        rows = self.space.validate(params)
        shape = identity_shape([r["identity"] for r in rows]) if rows else np.zeros((0, N_SHAPE))
        return render_attributes(self._renderer, rows, shape, [image_seed(seed, r["identity"]) for r in rows])


def check_resolution(resolution: Any) -> int:
    """The image side in pixels, an integer in [64, 256]."""
    return check_int("resolution", resolution, 64, 256)


def plain_rows(n: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    """`n` parameter dicts, each parameter drawn independently from its prior in `FACE_SPACE`."""
    columns = {p.name: p.sample(rng, n) for p in FACE_SPACE.params}
    return [{name: col[i] for name, col in columns.items()} for i in range(n)]


def render_rows(rows: list[dict[str, Any]], resolution: int, seed: int, chunk: int = 512) -> Batch:
    """Renders `rows` with `faces` at `resolution`, in chunks (the same pixels as one call)."""
    gen = ProceduralFaces(resolution=resolution)
    parts = [gen.generate(rows[i : i + chunk], seed=seed) for i in range(0, len(rows), chunk)]
    images = np.concatenate([b.images for b in parts])
    return Batch(images=images, truth=pd.concat([b.truth for b in parts], ignore_index=True))

"""A batched, anti-aliased procedural face renderer (torch, on the CPU or a GPU).

Every facial part is an analytic shape in a face-aligned frame ``(u, v)``: ``u`` runs left to
right across the face (half-width about 0.7), ``v`` from the top of the forehead (-1) to the chin
(+1). Coverage is anti-aliased from an approximate signed distance (one pixel of ramp), shading
is Lambertian on a head-sized ellipsoid plus ambient occlusion at the eye sockets, nose and lips.
Yaw moves each feature over a sphere-like head (``x = R sin(theta0 + yaw)``) and foreshortens it
by ``cos(theta0 + yaw) / cos(theta0)``; roll and scale are the frame's rotation and size.

The renderer is vectorised over the batch: each image is a handful of per-image scalars that
broadcast against one pixel grid. Images are processed in chunks of 32 so that temporaries stay
in cache. Every operation is per image, so an image's pixels depend on its own attributes and
seed only, never on its batch neighbours.

`FaceRenderer._render_chunk` frames and measures a chunk, then paints it as a sequence of layers
(background, body, face, eyes, nose and mouth, age lines, hair in front, earrings, light, eyewear,
occlusion, camera); the layers and the shape toolkit they draw with live in `layers.py`.

On a GPU the chunk is painted under torch's device context, so every tensor the layers make from
per-image numbers lands on it; only the finished uint8 chunk comes back. The CPU runs the code as
it always has, pixel for pixel.
"""

from __future__ import annotations

import contextlib

import numpy as np
import torch

from generators.faces import layers
from generators.faces.layers import C, _Frame, _Geometry, _Look
from generators.faces.palette import CLOTHES, HAIR_COLORS, IRIS_COLORS, SKIN_TONES

__all__ = ["FaceRenderer"]

CHUNK = 32
NOISE_BANK = 8


class FaceRenderer:
    """Renders `N x H x W x 3` uint8 faces from per-image attribute arrays.

    Args:
        resolution: image side in pixels, 64 to 256.
        device: the torch device it paints on ("cpu", "cuda", "cuda:N"; `searcher.devices` resolves settings).
    """

    def __init__(self, resolution: int = 128, device: str = "cpu") -> None:
        self.resolution = int(resolution)
        self.device = torch.device(device)
        r = self.resolution
        grid = (torch.arange(r, dtype=torch.float32, device=self.device) + 0.5) / r * 2.0 - 1.0
        self._x = grid.view(1, 1, r)
        self._y = grid.view(1, r, 1)
        # Sensor noise: each image adds one field of a fixed bank, rolled by a per-image offset
        # (cheaper than drawing 3 x H x W normals per image, and as Gaussian).
        bank = np.random.default_rng(0x901CE).standard_normal((NOISE_BANK, 3, r, r), dtype=np.float32)
        self._noise = torch.from_numpy(bank).to(self.device)

    def render(self, attrs: dict[str, np.ndarray], shape: np.ndarray, seeds: np.ndarray) -> np.ndarray:
        """Draws one image per row.

        Args:
            attrs: per-image arrays of the rendered attributes (categoricals as indices into
                `HAIR_COLORS` and `EYEWEAR`).
            shape: `N x N_SHAPE` identity shape coefficients in [-1, 1].
            seeds: `N` per-image seeds for the nuisance randomness (framing jitter, background,
                sensor noise).
        """
        n = len(seeds)
        out = np.empty((n, self.resolution, self.resolution, 3), np.uint8)
        # Chunks of similar pose share tight feature windows; the order cannot change a pixel.
        order = np.lexsort((np.asarray(attrs["scale"]), np.asarray(attrs["yaw"]), np.asarray(attrs["roll"])))
        # the device context puts the layers' tensors on a GPU; on the CPU it would only add a hook to every op
        placed = contextlib.nullcontext() if self.device.type == "cpu" else self.device
        with torch.no_grad(), placed:
            for start in range(0, n, CHUNK):
                idx = order[start : start + CHUNK]
                chunk = {k: np.asarray(v)[idx] for k, v in attrs.items()}
                out[idx] = self._render_chunk(chunk, shape[idx], seeds[idx])
        return out

    # ------------------------------------------------------------------ one chunk

    def _render_chunk(self, a: dict[str, np.ndarray], shape: np.ndarray, seeds: np.ndarray) -> np.ndarray:
        """Renders one chunk: frames and measures its faces, then paints their layers back to front."""
        r = self.resolution
        rngs = [np.random.default_rng(int(s)) for s in seeds]
        nuisance = np.stack([g.uniform(-1.0, 1.0, 14) for g in rngs])  # jitter 2, tint 3, blobs 9
        f32 = {k: np.asarray(v, np.float32) for k, v in a.items()}

        # frame: image coords -> face coords (roll, scale, jitter)
        roll = np.radians(f32["roll"])
        s = 0.46 * f32["scale"]
        x0, y0 = 0.04 * nuisance[:, 0], 0.03 + 0.03 * nuisance[:, 1]
        cos, sin = np.cos(roll), np.sin(roll)
        dx, dy = self._x - C(x0), self._y - C(y0)
        u = (C(cos) * dx + C(sin) * dy) / C(s)
        v = (C(-sin) * dx + C(cos) * dy) / C(s)
        full = _Frame(u, v, C(r * s / 2.0), (x0, y0, s, cos, sin), r)
        geo, look = _measure(a, f32, shape.astype(np.float32), full, self._x, self._y)

        img = layers.background(geo, look, nuisance)
        hair = layers.body(img, geo, look)  # torso, hair behind the head, neck, ears
        layers.face(img, geo, look)  # skin, facial hair, blush
        layers.eyes(img, geo, look)
        layers.nose_and_mouth(img, geo, look)
        layers.age_lines(img, geo, look)
        layers.hair_front(img, geo, look, hair)
        layers.earrings(img, geo, look)
        exposure = layers.light(img, geo, look)
        layers.eyewear(img, geo, look)
        layers.occlusion(img, geo, look, exposure)
        return layers.camera(img, geo, look, rngs, self._noise)


def _measure(a: dict[str, np.ndarray], f32: dict[str, np.ndarray], sh: np.ndarray, full: _Frame,
             x: torch.Tensor, y: torch.Tensor) -> tuple[_Geometry, _Look]:
    """The geometry of each face of a chunk (per-image scalars, face units) and its look."""
    age, gp, smile = f32["age"], f32["gender_presentation"], f32["smile"]
    masc = 1.0 - gp
    child = np.clip((16.0 - age) / 12.0, 0.0, 1.0)
    old = np.clip((age - 50.0) / 30.0, 0.0, 1.0)
    yaw = np.radians(f32["yaw"])
    A = 0.70 + 0.07 * sh[:, 0] + 0.03 * masc + 0.05 * child  # face half-width
    taper = 0.30 + 0.12 * gp + 0.10 * sh[:, 1] - 0.08 * child
    ey = -0.02 + 0.10 * child
    ex = 0.29 + 0.04 * sh[:, 2]
    erx = 0.13 * (1 + 0.15 * sh[:, 3] + 0.15 * child)
    ery = 0.062 * (1 + 0.2 * sh[:, 3] + 0.25 * child) * (1 - 0.3 * smile * smile)
    ny = ey + 0.34 + 0.06 * sh[:, 4] - 0.06 * child
    nw = 0.07 * (1 + 0.3 * sh[:, 5]) + 0.01 * masc
    my = ny + 0.24 - 0.02 * child
    mw = 0.18 * (1 + 0.15 * sh[:, 6]) + 0.05 * smile
    lip = 0.04 * (1 + 0.35 * sh[:, 7] + 0.3 * gp)
    geo = _Geometry(full, x, y, yaw, A, taper, ey, ex, erx, ery, ny, nw, my, mw, lip)  # places features under yaw
    look = _Look(
        attrs=f32,
        gp=gp,
        masc=masc,
        old=old,
        smile=smile,
        hair_len=f32["hair_length"],
        makeup=f32["makeup"],
        fh=f32["facial_hair"],
        eyewear=a["eyewear"].astype(int),
        brow_height=sh[:, 8],
        hairline=sh[:, 9],
        skin=_interp_skin(a["skin_tone"]),
        hair=np.array([list(HAIR_COLORS.values())[int(i)] for i in a["hair_color"]], np.float32),
        clothes=_pick(CLOTHES, sh[:, 10]),
        scarf=_pick(CLOTHES, sh[:, 10], offset=2),
        iris=_pick(IRIS_COLORS, sh[:, 11]),
    )
    return geo, look


def _pick(palette: np.ndarray, coeff: np.ndarray, offset: int = 0) -> np.ndarray:
    """A palette entry chosen by a shape coefficient in [-1, 1]."""
    k = np.floor((coeff + 1) / 2 * (len(palette) - 1e-6)).astype(int)
    return palette[(k + offset) % len(palette)]


def _interp_skin(tone: np.ndarray) -> np.ndarray:
    t = np.clip(np.asarray(tone, np.float32) - 1.0, 0.0, 5.0)
    lo = np.floor(t).astype(int).clip(0, 4)
    frac = (t - lo)[:, None]
    return (SKIN_TONES[lo] * (1 - frac) + SKIN_TONES[lo + 1] * frac).astype(np.float32)


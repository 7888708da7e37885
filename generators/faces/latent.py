"""`faces-latent`: an entangled latent face space, like a GAN's, with correlations planted on purpose.

A latent code ``z ~ N(0, I_D)`` (D = 32 by default) is mixed by a fixed, seeded orthonormal basis
``Q`` into semantic factors ``t_k = Q[:, k] . z`` (independent standard normals), and the factors
are combined into the rendered attributes with these planted entanglements, each one a confound the
papers found in real generators:

- **hair and gender**: hair length loads on the gender factor (``h = t_hair + 0.7 t_gender``), so a
  direction fitted to hair length also moves perceived gender until it is orthogonalised (the
  motivating example of Algorithm 2 in docs/papers.md#balakrishnan);
- **hair and facial hair** (Fig. 18 there): facial hair loads on the hair factor, and only shows
  on masculine-presenting faces, so lengthening hair adds a beard to men;
- **skin and earrings** (Fig. 19 there): earrings load on the darker-skin factor and on the gender
  factor, so darkening the skin of a face adds earrings;
- **makeup and hair**: hair length also loads on the makeup factor, so heavier makeup lengthens hair;
- **age and grey hair**: hair turns grey with the age factor.

Conditions (light, pose, background, blur, noise, occlusion, scale) come from their own factors,
with marginals close to the `faces` prior, so z ~ N(0, I) is an everyday mix too. Face-shape
details come from a seeded random projection of z. The truth is the rendered attributes, the same
columns as `faces` (there is no integer `identity`: shape is continuous in z).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy.special import ndtr  # standard normal CDF

from generators.base import Batch
from generators.faces.palette import EYEWEAR, HAIR_COLORS, N_SHAPE
from generators.faces.procedural import check_resolution, image_seed, render_attributes
from generators.faces.vocabulary import FACES
from searcher.devices import resolve_device
from searcher.errors import ParameterError
from searcher.space import Latent, Space

__all__ = ["FACTORS", "LatentFaces"]

FACTORS = (
    "skin", "hair", "gender", "age", "smile", "beard", "makeup", "glasses", "shades", "earrings",
    "hair_color", "grey", "light_intensity", "light_direction", "yaw", "roll", "background", "blur",
    "noise", "occlusion", "scale",
)  # fmt: skip


class LatentFaces:
    """Faces from an entangled latent code (`faces-latent`).

    Args:
        latent_dim: dimension D of z; at least the number of semantic factors (21).
        mixing_seed: seed of the fixed basis that mixes z into factors; one seed, one "generator".
        resolution: image side in pixels, 64 to 256.
        bound: the search box of z is `[-bound, bound]^D`.
        device: where it renders, as `faces` takes it ("cpu" by default, "cuda", "cuda:N", "auto").

    Example:
        >>> gen = LatentFaces(resolution=64)
        >>> batch = gen.from_latent(np.zeros((1, gen.latent_dim)))
        >>> round(float(batch.truth.loc[0, "skin_tone"]), 2)
        3.5
    """

    vocabulary = FACES

    def __init__(self, latent_dim: int = 32, mixing_seed: int = 0, resolution: int = 128, bound: float = 3.0,
                 device: str = "cpu") -> None:
        if isinstance(latent_dim, bool) or not isinstance(latent_dim, (int, np.integer)) or latent_dim < len(FACTORS):
            raise ParameterError(
                f"The 'latent_dim' option must be an integer >= {len(FACTORS)} (one per semantic factor). Got {latent_dim!r} instead."
            )
        self.latent_dim = int(latent_dim)
        self.mixing_seed = int(mixing_seed)
        self.resolution = check_resolution(resolution)
        self.device = resolve_device(device)
        self.space = Space(latent=Latent("z", self.latent_dim, bound))
        rng = np.random.default_rng([self.mixing_seed, 0x1A7E])
        q, _ = np.linalg.qr(rng.standard_normal((self.latent_dim, self.latent_dim)))
        self.basis = q[:, : len(FACTORS)]  # `D x K`, orthonormal columns: factor k = basis[:, k] . z
        self._shape_proj = rng.standard_normal((self.latent_dim, N_SHAPE)) / np.sqrt(self.latent_dim)
        from generators.faces.render import FaceRenderer  # torch, only when a renderer is built

        self._renderer = FaceRenderer(self.resolution, self.device)

    def __repr__(self) -> str:
        return f"LatentFaces(latent_dim={self.latent_dim}, mixing_seed={self.mixing_seed}, resolution={self.resolution})"

    def direction(self, factor: str) -> np.ndarray:
        """The unit latent direction of one semantic factor (for tests and diagnostics)."""
        if factor not in FACTORS:
            raise ParameterError(f"Unknown factor {factor!r}. Valid factors: {', '.join(FACTORS)}.")
        return self.basis[:, FACTORS.index(factor)].copy()

    def generate(self, params: Mapping[str, Any] | Sequence[Mapping[str, Any]], seed: int = 0) -> Batch:
        """Renders params dicts with coordinates `z0 .. z{D-1}` (omitted coordinates are 0)."""
        rows = self.space.validate(params)
        z = np.array([[r[n] for n in self.space.names] for r in rows], float).reshape(len(rows), self.latent_dim)
        return self._render(z, [image_seed(seed, tuple(zi)) for zi in z.tolist()])

    def from_latent(self, z: np.ndarray, seed: int = 0, keys: Sequence[Any] | None = None) -> Batch:
        """Renders raw `N x D` codes (not limited to the search box).

        `keys` (one hashable per row) choose the nuisance draw (framing jitter, background tint,
        sensor noise); by default each code is its own key. Give the images of one transect the
        same key and they share their background, as matched images should.
        """
        z = np.atleast_2d(np.asarray(z, float))
        if z.ndim != 2 or z.shape[1] != self.latent_dim:
            raise ParameterError(f"Expected a `N x {self.latent_dim}` latent array, got shape {z.shape}.")
        if not np.isfinite(z).all():
            raise ParameterError("The latent array contains NaN or infinite values.")
        if keys is None:
            keys = [tuple(zi) for zi in z.tolist()]
        elif len(keys) != len(z):
            raise ParameterError(f"from_latent got {len(keys)} keys for {len(z)} codes.")
        return self._render(z, [image_seed(seed, key) for key in keys])

    def attributes(self, z: np.ndarray) -> list[dict[str, Any]]:
        """The attribute rows that z renders (before age limits facial hair)."""
        t = dict(zip(FACTORS, _rowwise(np.atleast_2d(z), self.basis).T))
        gender_pre = t["gender"]
        gp = ndtr(gender_pre)
        masculine = np.clip((0.65 - gp) / 0.3, 0.0, 1.0)
        age = 4.0 + 81.0 * ndtr(0.9 * t["age"] - 0.25)
        hair_pre = (t["hair"] + 0.7 * gender_pre + 0.5 * t["makeup"]) / np.sqrt(1 + 0.49 + 0.25)
        makeup_pre = (t["makeup"] + 0.6 * gender_pre) / np.sqrt(1.36)
        beard_pre = (t["beard"] + 0.9 * t["hair"]) / np.sqrt(1.81)
        ear_pre = (t["earrings"] + 0.9 * t["skin"] + 0.8 * gender_pre + 0.5 * t["skin"] * gender_pre) / np.sqrt(2.7)
        colour = np.digitize(ndtr(t["hair_color"]), [0.42, 0.72, 0.79])  # black, brown, red, blonde
        grey = (age > 55) & (t["grey"] > -0.3)

        def exp_tail(x: np.ndarray, mean: float) -> np.ndarray:
            return -mean * np.log1p(-np.clip(ndtr(x), 0, 1 - 1e-12))

        eyewear = np.where(t["glasses"] > 0.85, np.where(t["shades"] > 1.0, 2, 1), 0)
        columns = {
            "skin_tone": 1.0 + 5.0 * ndtr(t["skin"]),
            "hair_length": ndtr(hair_pre),
            "hair_color": [list(HAIR_COLORS)[4 if g else c] for c, g in zip(colour, grey)],
            "gender_presentation": gp,
            "age": age,
            "smile": ndtr(t["smile"] + 0.3 * gender_pre - 0.3),
            "facial_hair": np.clip(1.6 * ndtr(beard_pre) - 0.6, 0.0, 1.0) * masculine,
            "makeup": np.clip(1.7 * ndtr(makeup_pre) - 0.7, 0.0, 1.0),
            "eyewear": [EYEWEAR[e] for e in eyewear],
            "earrings": np.clip(1.8 * ndtr(ear_pre) - 0.8, 0.0, 1.0),
            "light_intensity": np.clip(1.0 + 0.2 * t["light_intensity"], 0.1, 1.6),
            "light_direction": np.clip(25.0 * t["light_direction"], -90.0, 90.0),
            "yaw": np.clip(12.0 * t["yaw"], -75.0, 75.0),
            "roll": np.clip(7.0 * t["roll"], -45.0, 45.0),
            "background": ndtr(t["background"]),
            "blur": np.clip(exp_tail(t["blur"], 0.35), 0.0, 4.0),
            "noise": np.clip(exp_tail(t["noise"], 0.02) - 0.01, 0.0, 0.25),
            "occlusion": np.clip((ndtr(t["occlusion"]) - 0.94) / 0.06, 0.0, 1.0),
            "scale": np.clip(1.0 + 0.1 * t["scale"], 0.6, 1.3),
        }
        n = len(gp)
        return [{k: (v[i] if isinstance(v, list) else float(v[i])) for k, v in columns.items()} for i in range(n)]

    def _render(self, z: np.ndarray, seeds: Sequence[int]) -> Batch:
        shape = np.tanh(_rowwise(z, self._shape_proj))
        return render_attributes(self._renderer, self.attributes(z), shape, seeds)


def _rowwise(z: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """`z @ matrix` summed in the same order for every row, so a row's result does not depend on
    how many rows share the call (BLAS blocks differently for different batch sizes)."""
    return (z[:, :, None] * matrix[None, :, :]).sum(axis=1)

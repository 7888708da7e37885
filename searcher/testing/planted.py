"""The planted known-answer problem: K disjoint failure regions in the unit cube, as a landscape, a
generator and a target, so the whole pipeline (strategies, executors, store, comparison) runs on it in
milliseconds and is scored against the truth.

A strategy is judged on two counts (McDuff et al., docs/papers.md#mcduff, section 3): how many
failures it finds in a budget, and how many *different* failure modes they cover. Real targets
cannot say how many modes there are; this problem can (Ax's benchmark problems carry their known
optimum the same way).

- `PlantedRegions`: K regions of one `shape`, each of the same volume, placed at random (seeded)
  inside `[0, 1]^dim` without overlapping, so the failing volume is exactly `volume`:
  "box" (the default): axis-aligned boxes whose sides vary up to 1.5x around the side of a cube of
  the same volume; "slab": boxes 8x thinner along one (random) axis than along the others, a
  failure that needs one coordinate just so and the rest roughly; "ball": Euclidean balls; "shell":
  thin spherical shells (distance from a centre in `[r, 1.15 r]`), a failure around a hole. Balls
  and shells lie wholly inside the cube, which limits them to low dimension: the largest ball in
  the unit cube holds 8% of it in 6-D, 0.25% in 10-D and 3e-8 in 20-D.
  With `categories=m`, the space also has a categorical parameter `c` with m levels: each region
  fails at one level only (levels spread over the regions, seeded), and `volume` is the failing
  fraction of the whole mixed space.
  `confidence(X)` is each point's Euclidean distance to the nearest region of its level, and
  `loss(X, score=True)` turns it into the detector's "score" loss (`detection_loss`): 1 inside,
  below 0.5 outside and rising towards a region, as a detector whose confidence falls near its
  failures gives (a search with a model can follow it before it has seen a failure).
- `PlantedGenerator` (registered as the `planted` generator): a point of the space (parameters
  `x0 .. x{dim-1}`, and `c` with categories) is "rendered" as a tiny square uint8 image holding
  its unit-cube point's float64 bytes exactly; the truth carries the parameters and the `region`
  (-1 outside every region), so campaigns know which failure mode each failure belongs to.
- `PlantedTarget` (the `planted` target): a detector that "misses the face" (label False, a
  failure) exactly when the decoded point lies in a region; any other image (a real photo, a face
  render) is answered True. With `score=True` it gives its confidence as the `score` of a
  detection (`confidence / scale`, so a campaign's "score" loss equals `loss(X, score=True)`).
  For testing the machinery around targets it can also be slow (`delay` seconds per image) and
  unreliable (`error_rate`: that fraction of images, chosen by a hash of their bytes, get an
  error answer).

Example:
    >>> planted = PlantedRegions(dim=6, k=5, volume=0.03, seed=0)
    >>> X = np.random.default_rng(0).random((400, 6))
    >>> planted.failures_found(X), planted.regions_found(X)   # random search, 400 points
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from generators.base import Batch
from searcher.errors import ParameterError
from searcher.objective import detection_loss
from searcher.space import Categorical, Continuous, Space
from searcher.validation import check_choice, check_int, check_number, invalid
from targets.base import Predictions, check_images

__all__ = ["SCALE", "SHAPES", "PlantedGenerator", "PlantedRegions", "PlantedTarget", "decode", "encode", "side"]

SHAPES = ("box", "ball", "slab", "shell")
SCALE = 0.1
"""The confidence scale per sqrt(dim): `loss(X, score=True)` reads distance / (SCALE * sqrt(dim))
as the detector's confidence (a pass 0.1 sqrt(dim) from a region has loss 0.5 sigmoid(-1) = 0.13)."""

_ASPECT = 1.5  # each side of a box lies within [1/1.5, 1.5] x the side of the equal-volume cube
_SLAB = 8.0  # a slab's long sides are about 8x its thin side
_SLAB_ASPECT = 1.2  # and vary within [1/1.2, 1.2] x their geometric mean
_SHELL = 0.15  # a shell's thickness, as a fraction of its inner radius
_TRIES = 20_000  # candidate placements (boxes without categories: in one pass, as the first release)
_RESTARTS = 10  # other shapes: a fresh layout after _TRIES / _RESTARTS candidates without a fit


def _log_ball_volume(dim: int) -> float:
    """log of the volume of the unit ball in `dim` dimensions."""
    return 0.5 * dim * math.log(math.pi) - math.lgamma(0.5 * dim + 1.0)


class PlantedRegions:
    """K disjoint failure regions of total volume `volume` in the unit cube of dimension `dim`.

    Args:
        dim, k, volume, seed: the cube's dimension, the number of regions, the failing fraction of
            the space, the layout's seed.
        shape: "box", "ball", "slab" or "shell" (see the module docstring).
        categories: 0, or the levels (2 .. k) of a categorical parameter `c`; each region then
            fails at one level, and its continuous volume is `volume * categories / k`.

    Attributes:
        lower, upper: `k x dim` corners of the regions' bounding boxes (the boxes themselves for
            "box" and "slab").
        centres: `k x dim` centres.
        radius: the `k` (inner) radii of balls and shells, else None; `thickness` of shells, else None.
        levels: the level of `c` each region fails at (all 0 without categories).
        space: the search space (`x0 .. x{dim-1}`, and `c` with categories); `region_of`,
            `confidence` and `loss` take points of its unit cube (`space.cube`).
        scale: `SCALE * sqrt(dim)`, the distance read as a confidence of 1.
    """

    def __init__(self, dim: int = 6, k: int = 5, volume: float = 0.03, seed: int = 0, shape: str = "box", categories: int = 0) -> None:
        self.dim, self.k, self.seed = check_int("dim", dim, 1), check_int("k", k, 1), check_int("seed", seed, 0)
        self.volume = check_number("volume", volume, 0.0, 0.5, open_low=True)
        self.shape = check_choice("shape", shape, SHAPES, owner="PlantedRegions")
        if not isinstance(categories, (int, np.integer)) or isinstance(categories, bool) or not (categories == 0 or 2 <= categories <= self.k):
            raise invalid("categories", f"0 (no categorical parameter) or an integer in [2, k={self.k}] (each level holds a region)",
                          categories, owner="PlantedRegions")
        self.categories = int(categories)
        self.scale = SCALE * math.sqrt(self.dim)
        self.radius: np.ndarray | None = None
        self.thickness: np.ndarray | None = None
        m = self.categories
        each = self.volume * m / self.k if m else self.volume / self.k  # the continuous volume of one region
        if self.shape == "box" and not m:  # the first release's layout, draw for draw
            rng = np.random.default_rng([self.seed, self.dim, self.k])
            self.levels = np.zeros(self.k, int)
            placed = self._place(rng, self._box_drawer(each), _boxes_apart, _TRIES, 1)
        else:
            rng = np.random.default_rng([self.seed, self.dim, self.k, SHAPES.index(self.shape), m])
            self.levels = rng.permutation(np.arange(self.k) % m) if m else np.zeros(self.k, int)
            if self.shape in ("box", "slab"):
                draw = self._box_drawer(each) if self.shape == "box" else self._slab_drawer(each)
                placed = self._place(rng, draw, _boxes_apart, _TRIES // _RESTARTS, _RESTARTS)
            else:
                placed = self._place(rng, self._ball_drawer(each), _balls_apart, _TRIES // _RESTARTS, _RESTARTS)
        if self.shape in ("box", "slab"):
            self.lower, self.upper = np.array([p[0] for p in placed]), np.array([p[1] for p in placed])
            self.centres = 0.5 * (self.lower + self.upper)
        else:
            self.centres = np.array([p[0] for p in placed])
            outer = np.array([p[1] for p in placed])
            self.lower, self.upper = self.centres - outer[:, None], self.centres + outer[:, None]
            inner = outer / (1.0 + _SHELL) if self.shape == "shell" else outer
            self.radius = inner
            self.thickness = outer - inner if self.shape == "shell" else None
        params: list[Any] = [Continuous(f"x{i}", 0.0, 1.0, default=0.5, doc="coordinate") for i in range(self.dim)]
        if m:
            params.append(Categorical("c", tuple(f"c{j}" for j in range(m)), doc="category: each region fails at one level"))
        self._space = Space(params)

    # ----------------------------------------------------------------- placement

    def _box_drawer(self, each: float) -> Callable[[np.random.Generator], tuple[np.ndarray, np.ndarray] | None]:
        side = each ** (1.0 / self.dim)

        def draw(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray] | None:
            log_aspect = rng.uniform(-math.log(_ASPECT), math.log(_ASPECT), self.dim)
            sides = np.minimum(side * np.exp(log_aspect - log_aspect.mean()), 1.0)
            sides *= (each / np.prod(sides)) ** (1.0 / self.dim)  # exact volume after the cap
            if (sides > 1).any():
                return None
            lo = rng.uniform(0.0, 1.0 - sides)
            return lo, lo + sides

        return draw

    def _slab_drawer(self, each: float) -> Callable[[np.random.Generator], tuple[np.ndarray, np.ndarray] | None]:
        if self.dim < 2:
            raise ParameterError(f"A slab is thin along one axis and long along the others: it needs dim >= 2. Got dim={self.dim}.")
        long = (_SLAB * each) ** (1.0 / self.dim)  # long^(dim-1) * long / _SLAB = each

        def draw(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray] | None:
            thin = int(rng.integers(self.dim))
            log_aspect = rng.uniform(-math.log(_SLAB_ASPECT), math.log(_SLAB_ASPECT), self.dim - 1)
            sides = np.insert(long * np.exp(log_aspect - log_aspect.mean()), thin, 0.0)
            sides[thin] = each / np.prod(np.delete(sides, thin))  # the thin side makes the volume exact
            if (sides > 1).any():
                return None
            lo = rng.uniform(0.0, 1.0 - sides)
            return lo, lo + sides

        return draw

    def _ball_drawer(self, each: float) -> Callable[[np.random.Generator], tuple[np.ndarray, float]]:
        log_unit = _log_ball_volume(self.dim)
        if self.shape == "ball":
            outer = math.exp((math.log(each) - log_unit) / self.dim)
        else:  # V (1.15^d - 1) r^d = each
            inner = math.exp((math.log(each) - log_unit - math.log((1.0 + _SHELL) ** self.dim - 1.0)) / self.dim)
            outer = (1.0 + _SHELL) * inner
        if 2 * outer > 1:
            most = math.exp(log_unit - self.dim * math.log(2.0))
            raise ParameterError(
                f"A {self.shape} of volume {each:g} in {self.dim} dimensions has an outer radius of {outer:.3f} > 0.5: it does not fit "
                f"in the unit cube, whose largest ball holds {most:.3g} of it. Lower 'volume' (now {self.volume:g}) or 'dim', "
                f"raise 'k' (now {self.k}), or use shape='box' or 'slab'.")

        def draw(rng: np.random.Generator) -> tuple[np.ndarray, float]:
            return rng.uniform(outer, 1.0 - outer, self.dim), outer

        return draw

    def _place(self, rng: np.random.Generator, draw: Callable[[np.random.Generator], Any], apart: Callable[[Any, Any], bool],
               tries: int, restarts: int) -> list[Any]:
        """`k` candidates from `draw`, each apart from those placed at its level; after `tries`
        candidates without a full layout, start again (`restarts` times in all)."""
        for _ in range(restarts):
            placed: list[Any] = []
            for _ in range(tries):
                if len(placed) == self.k:
                    break
                candidate = draw(rng)
                if candidate is None:
                    continue
                level = self.levels[len(placed)]
                if all(apart(candidate, other) for other, lev in zip(placed, self.levels) if lev == level):
                    placed.append(candidate)
            if len(placed) == self.k:
                return placed
        per_level = f" per level of {self.categories}" if self.categories else ""
        raise ParameterError(f"Could not place {self.k} disjoint regions of total volume {self.volume:g} in {self.dim} dimensions "
                             f"(shape={self.shape!r}{per_level}); lower 'k' or 'volume'.")

    # ----------------------------------------------------------------- the landscape

    def __repr__(self) -> str:
        extra = "" if self.shape == "box" else f", shape={self.shape!r}"
        extra += f", categories={self.categories}" if self.categories else ""
        return f"PlantedRegions(dim={self.dim}, k={self.k}, volume={self.volume:g}, seed={self.seed}{extra})"

    @property
    def space(self) -> Space:
        """The search space: `x0 .. x{dim-1}` in [0, 1], and `c` (levels `c0 ..`) with categories."""
        return self._space

    def _split(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Points of the space's cube -> (`n x dim` continuous part, `n` levels)."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        width = self._space.dim
        if X.ndim != 2 or X.shape[1] != width:
            block = f" (dim = {self.dim} continuous columns, then a one-hot block of {self.categories})" if self.categories else ""
            raise ParameterError(f"Expected a `n x {width}` array of points{block}, got shape {X.shape}.")
        levels = X[:, self.dim:].argmax(axis=1) if self.categories else np.zeros(len(X), int)
        return X[:, : self.dim], levels

    def _distances(self, C: np.ndarray) -> np.ndarray:
        """`n x k`: the Euclidean distance from each continuous point to each region (0 inside)."""
        out = np.empty((len(C), self.k))
        for j in range(self.k):
            if self.radius is None:
                gap = np.maximum(np.maximum(self.lower[j] - C, C - self.upper[j]), 0.0)
                out[:, j] = np.sqrt((gap**2).sum(axis=1))
            else:
                r = np.sqrt(((C - self.centres[j]) ** 2).sum(axis=1))
                outer = self.radius[j] + (self.thickness[j] if self.thickness is not None else 0.0)
                inner = self.radius[j] if self.thickness is not None else 0.0
                out[:, j] = np.maximum(np.maximum(inner - r, r - outer), 0.0)
        return out

    def _inside(self, C: np.ndarray) -> np.ndarray:
        """`n x k` booleans: which region (of any level) each continuous point lies in."""
        if self.radius is None:
            return np.stack([((C >= self.lower[j]) & (C <= self.upper[j])).all(axis=1) for j in range(self.k)], axis=1)
        return self._distances(C) == 0.0

    def region_of(self, X: np.ndarray) -> np.ndarray:
        """`n x space.dim` points of the cube (`n x dim` without categories) -> `n` region indices,
        -1 outside every region of the point's level."""
        C, levels = self._split(X)
        inside = self._inside(C) & (levels[:, None] == self.levels[None, :])
        return np.where(inside.any(axis=1), inside.argmax(axis=1), -1)

    def confidence(self, X: np.ndarray) -> np.ndarray:
        """Per point, the Euclidean distance (in the cube's continuous coordinates) to the nearest
        region of its level: 0 inside one; regions of another level are not near."""
        C, levels = self._split(X)
        d = np.where(levels[:, None] == self.levels[None, :], self._distances(C), np.inf)
        return d.min(axis=1)

    def loss(self, X: np.ndarray, score: bool = False) -> np.ndarray:
        """The classifier loss `L_c`: 1 inside a region (a failure); outside, 0 (`score=False`, the
        0/1 loss) or `detection_loss` of the confidence `distance / scale` (`score=True`): below
        0.5, higher nearer a region."""
        region = self.region_of(X)
        if not score:
            return (region >= 0).astype(float)
        confidence = self.confidence(X) / self.scale
        return np.array([detection_loss(found=bool(r < 0), confidence=float(c)) for r, c in zip(region, confidence)], float)

    def failures_found(self, X: np.ndarray) -> int:
        """How many of the points are failures."""
        return int((self.region_of(X) >= 0).sum())

    def regions_found(self, X: np.ndarray) -> int:
        """How many different regions the points hit."""
        regions = self.region_of(X)
        return len(set(regions[regions >= 0].tolist()))

    def inside_points(self) -> np.ndarray:
        """`k x space.dim` points of the cube, point j inside region j (a box's or ball's centre, a
        point halfway through a shell), at the region's level."""
        C = self.centres.copy()
        if self.thickness is not None:
            C[:, 0] += self.radius + 0.5 * self.thickness
        if not self.categories:
            return C
        return np.concatenate([C, np.eye(self.categories)[self.levels]], axis=1)


def _boxes_apart(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> bool:
    """Two boxes `(lower, upper)` are disjoint when they are apart along some axis."""
    return bool(((a[0] >= b[1]) | (a[1] <= b[0])).any())


def _balls_apart(a: tuple[np.ndarray, float], b: tuple[np.ndarray, float]) -> bool:
    """Two balls `(centre, radius)` are disjoint when their centres are further apart than their radii."""
    return bool(np.sqrt(((a[0] - b[0]) ** 2).sum()) >= a[1] + b[1])


# --------------------------------------------------------------------------- as a generator and a target


def side(dim: int) -> int:
    """Side of the square image that holds `dim` float64 values (3 bytes per pixel)."""
    return math.ceil(math.sqrt(math.ceil(8 * dim / 3)))


def encode(X: np.ndarray) -> np.ndarray:
    """`n x dim` points -> `n x s x s x 3` uint8 images holding their bytes (zero padded)."""
    X = np.ascontiguousarray(np.atleast_2d(X), dtype="<f8")
    s = side(X.shape[1])
    raw = np.zeros((len(X), s * s * 3), np.uint8)
    raw[:, : X.shape[1] * 8] = X.view(np.uint8).reshape(len(X), -1)
    return raw.reshape(len(X), s, s, 3)


def decode(images: np.ndarray, dim: int) -> np.ndarray:
    """Inverse of `encode` for images of the right size; NaN rows for any other image."""
    n = len(images)
    if images.shape[1:] != (side(dim), side(dim), 3):
        return np.full((n, dim), np.nan)
    raw = np.ascontiguousarray(images.reshape(n, -1)[:, : dim * 8])
    return raw.view("<f8").reshape(n, dim).astype(float)


class PlantedGenerator:
    """Points of the planted space as tiny images (`planted`); options as `PlantedRegions`."""

    def __init__(self, dim: int = 6, k: int = 5, volume: float = 0.03, seed: int = 0, shape: str = "box", categories: int = 0) -> None:
        self.regions = PlantedRegions(dim=dim, k=k, volume=volume, seed=seed, shape=shape, categories=categories)
        self.space = self.regions.space

    def __repr__(self) -> str:
        return f"PlantedGenerator({self.regions!r})"

    def generate(self, params: Mapping[str, Any] | Sequence[Mapping[str, Any]], seed: int = 0) -> Batch:
        rows = self.space.validate(params)
        X = self.space.to_unit(rows)  # x_i itself in [0, 1], then the one-hot block of `c`
        truth = pd.DataFrame(rows, columns=self.space.names)
        truth["region"] = self.regions.region_of(X) if len(X) else np.zeros(0, int)
        return Batch(images=encode(X), truth=truth)


class PlantedTarget:
    """Fails inside the planted regions (`planted`); options as `PlantedRegions`, plus `delay`
    (seconds per image), `error_rate` (fraction of images answered with an error) and `score`
    (give a detection's confidence, `confidence / scale`, as its score; None inside a region)."""

    task = "detect"

    def __init__(self, dim: int = 6, k: int = 5, volume: float = 0.03, seed: int = 0, delay: float = 0.0, error_rate: float = 0.0,
                 shape: str = "box", categories: int = 0, score: bool = False) -> None:
        self.regions = PlantedRegions(dim=dim, k=k, volume=volume, seed=seed, shape=shape, categories=categories)
        self.delay, self.error_rate = check_number("delay", delay, 0.0), check_number("error_rate", error_rate, 0.0, 1.0)
        if score not in (True, False):
            raise invalid("score", "True or False", score, owner="PlantedTarget")
        self.score = bool(score)

    def predict(self, images: np.ndarray) -> Predictions:
        images = check_images(images)
        if self.delay:
            time.sleep(self.delay * len(images))
        X = decode(images, self.regions.space.dim)
        inside = np.zeros(len(images), bool)
        confidence = np.full(len(images), np.nan)
        ok = ~np.isnan(X).any(axis=1)
        if ok.any():
            inside[ok] = self.regions.region_of(X[ok]) >= 0
            if self.score:
                confidence[ok] = self.regions.confidence(X[ok]) / self.regions.scale
        labels: list[bool | None] = [bool(not v) for v in inside]
        scores: list[float | None] = [float(c) if self.score and not v and not np.isnan(c) else None for v, c in zip(inside, confidence)]
        errors: list[str | None] = [None] * len(images)
        for i, im in enumerate(images):
            if self.error_rate and int.from_bytes(hashlib.blake2b(im.tobytes(), digest_size=4).digest(), "little") < self.error_rate * 2**32:
                labels[i], scores[i], errors[i] = None, None, "injected error"
        return Predictions(label=labels, score=scores, error=errors)

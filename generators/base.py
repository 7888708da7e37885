"""The generator protocol: a `space` and `generate(params, seed) -> Batch`.

Optional capabilities, each a protocol of its own: `LatentGenerator` renders raw latent codes
(`from_latent`, what transects walk), and any generator may carry a `vocabulary`: how people
describe what it renders (annotation scales, captions, the attributes worth analysing by default,
the protected groups), which the engine reads instead of knowing about faces itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd

from searcher.errors import ParameterError
from searcher.space import Space

__all__ = ["Batch", "Generator", "LatentGenerator", "Scale", "Vocabulary", "vocabulary_of"]


@dataclass
class Batch:
    """Images and the attributes that were actually rendered.

    Attributes:
        images: `N x H x W x 3` uint8 RGB array.
        truth: one row per image of the rendered attributes; it stands in for human annotation
            when no human annotated.
    """

    images: np.ndarray
    truth: pd.DataFrame

    def __post_init__(self) -> None:
        if self.images.ndim != 4 or self.images.shape[-1] != 3 or self.images.dtype != np.uint8:
            raise ValueError(f"Batch.images must be a `N x H x W x 3` uint8 array, got {self.images.dtype} {self.images.shape}.")
        if len(self.truth) != len(self.images):
            raise ValueError(f"Batch.truth has {len(self.truth)} rows for {len(self.images)} images.")

    def __len__(self) -> int:
        return len(self.images)


@runtime_checkable
class Generator(Protocol):
    """Turns parameter dicts into images.

    `generate` validates its input (unknown, missing, NaN or out-of-range parameters raise
    `searcher.errors.ParameterError`), fills omitted parameters with defaults, and is a pure
    function of each image's parameters and the seed: the same seed gives the same pixels, and a
    batch of N equals N batches of one.
    """

    space: Space

    def generate(self, params: Mapping[str, Any] | Sequence[Mapping[str, Any]], seed: int = 0) -> Batch: ...


@runtime_checkable
class LatentGenerator(Generator, Protocol):
    """A generator whose space is a latent block; `from_latent` renders raw `N x latent_dim` codes.

    `keys` (one per code) share the nuisance draws (background, framing) between codes with the
    same key: a transect passes its id so that its images differ only along its axes.
    """

    latent_dim: int

    def from_latent(self, z: np.ndarray, seed: int = 0, keys: Sequence[Any] | None = None) -> Batch: ...


@dataclass(frozen=True)
class Scale:
    """An annotation scale: `levels` ordered answers for truth values in `[low, high]`.

    Truth maps to the nearest level (equally spaced levels from `low` to `high`), unless `edges`
    (L - 1 increasing cut points in truth units) say where one level ends and the next begins.
    """

    levels: int
    low: float = 0.0
    high: float = 1.0
    edges: tuple[float, ...] | None = None
    labels: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.levels < 2 or self.high <= self.low:
            raise ParameterError(f"A Scale needs at least 2 levels and low < high. Got {self!r} instead.")
        if self.edges is not None and (len(self.edges) != self.levels - 1 or np.any(np.diff(self.edges) <= 0)):
            raise ParameterError(f"A Scale's edges must be {self.levels - 1} increasing cut points. Got {self.edges!r} instead.")
        if self.labels and len(self.labels) != self.levels:
            raise ParameterError(f"A Scale with {self.levels} levels needs {self.levels} labels. Got {len(self.labels)} instead.")

    def level(self, truth: np.ndarray) -> np.ndarray:
        """The level (1 .. L) of each truth value."""
        edges = self.edges
        if edges is None:
            step = (self.high - self.low) / (self.levels - 1)
            edges = tuple(self.low + step * (k + 0.5) for k in range(self.levels - 1))
        return 1 + np.searchsorted(np.asarray(edges), np.asarray(truth, float), side="right")


def _plain_caption(row: pd.Series) -> list[str]:
    """The first three truth values, for generators that say nothing better."""
    return [f"{k} {v:.2g}" if isinstance(v, float) else f"{k} {v}" for k, v in list(row.items())[:3]]


@dataclass(frozen=True)
class Vocabulary:
    """How people describe what a generator renders; the engine reads it instead of knowing faces.

    Attributes:
        scales: annotation scale per truth attribute (the rating form of Balakrishnan et al., Fig. 6).
        ambiguous: normalised score ranges that are ambiguous per attribute, pruned from transects.
        analysed: the truth columns `analyze` looks at by default.
        protected: attribute -> {group name: (low, high) truth range}, the protected groups that
            verification balances (two attributes, two groups each).
        caption: truth row -> short caption lines for contact sheets.
    """

    scales: Mapping[str, Scale] = field(default_factory=dict)
    ambiguous: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    analysed: tuple[str, ...] = ()
    protected: Mapping[str, Mapping[str, tuple[float, float]]] = field(default_factory=dict)
    caption: Callable[[pd.Series], list[str]] = _plain_caption


def vocabulary_of(generator: Any) -> Vocabulary:
    """The generator's (or generator class's) vocabulary, or an empty one."""
    return getattr(generator, "vocabulary", None) or Vocabulary()

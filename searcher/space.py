"""Search spaces: named parameters, their priors, validation, and the unit cube strategies see.

A :class:`Space` holds continuous, integer and categorical parameters and optionally one latent
block (dimension D, standard-normal prior, searched inside the box ``[-bound, bound]^D``).
Strategies work in the unit cube: continuous and integer parameters map linearly, categoricals
map to one-hot blocks (the conditioning vector of McDuff et al., docs/papers.md#mcduff) and
decode by argmax, latent coordinates map linearly from the box. A space made with
``prior_cube=True`` (a campaign's default, `--cube prior`) reads its cube as quantiles of the
prior instead: continuous and latent coordinates through the inverse CDF, one-hot blocks by a
prior-weighted argmax, so that a uniform point of the cube is a draw from the everyday prior.

Example:
    >>> space = Space([Continuous("yaw", -75, 75), Categorical("eyewear", ("none", "glasses"))])
    >>> X = space.to_unit(space.sample(4, seed=0))   # `4 x 3` array in [0, 1]
    >>> space.from_unit(X)[0]["eyewear"] in ("none", "glasses")
    True
"""

from __future__ import annotations

import difflib
import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from searcher.errors import ParameterError
from searcher.validation import invalid

__all__ = [
    "Beta",
    "Categorical",
    "Column",
    "Continuous",
    "Cube",
    "Integer",
    "Latent",
    "Params",
    "Prior",
    "Space",
    "TruncatedNormal",
    "Uniform",
    "ZeroInflated",
    "farthest_points",
    "one_hot_weighted",
    "prior_argmax",
]

Params = dict[str, Any]


# --------------------------------------------------------------------------- priors


class Prior(Protocol):
    """Draws `n` values inside `[low, high]`; `ppf` maps quantiles in [0, 1] to values."""

    def sample(self, rng: np.random.Generator, n: int, low: float, high: float) -> np.ndarray: ...

    def ppf(self, u: np.ndarray, low: float, high: float) -> np.ndarray: ...


@dataclass(frozen=True)
class Uniform:
    """Uniform on the parameter's range."""

    def sample(self, rng: np.random.Generator, n: int, low: float, high: float) -> np.ndarray:
        return rng.uniform(low, high, n)

    def ppf(self, u: np.ndarray, low: float, high: float) -> np.ndarray:
        return low + np.asarray(u, float) * (high - low)


@dataclass(frozen=True)
class TruncatedNormal:
    """Normal(mean, sd) truncated to the range by rejection (resampling what falls outside)."""

    mean: float
    sd: float

    def sample(self, rng: np.random.Generator, n: int, low: float, high: float) -> np.ndarray:
        out = rng.normal(self.mean, self.sd, n)
        bad = (out < low) | (out > high)
        while bad.any():
            out[bad] = rng.normal(self.mean, self.sd, int(bad.sum()))
            bad = (out < low) | (out > high)
        return out

    def ppf(self, u: np.ndarray, low: float, high: float) -> np.ndarray:
        from scipy.stats import truncnorm

        a, b = (low - self.mean) / self.sd, (high - self.mean) / self.sd
        return truncnorm.ppf(np.asarray(u, float), a, b, loc=self.mean, scale=self.sd)


@dataclass(frozen=True)
class Beta:
    """Beta(a, b) stretched over the range."""

    a: float
    b: float

    def sample(self, rng: np.random.Generator, n: int, low: float, high: float) -> np.ndarray:
        return low + (high - low) * rng.beta(self.a, self.b, n)

    def ppf(self, u: np.ndarray, low: float, high: float) -> np.ndarray:
        from scipy.stats import beta

        return low + (high - low) * beta.ppf(np.asarray(u, float), self.a, self.b)


@dataclass(frozen=True)
class ZeroInflated:
    """With probability `p` the lower bound (an absent attribute), otherwise `base`."""

    p: float
    base: Prior = field(default_factory=Uniform)

    def sample(self, rng: np.random.Generator, n: int, low: float, high: float) -> np.ndarray:
        at_low = rng.random(n) < self.p
        return np.where(at_low, low, self.base.sample(rng, n, low, high))

    def ppf(self, u: np.ndarray, low: float, high: float) -> np.ndarray:
        u = np.asarray(u, float)
        rest = np.clip((u - self.p) / (1.0 - self.p), 0.0, 1.0)
        return np.where(u < self.p, low, self.base.ppf(rest, low, high))


# --------------------------------------------------------------------------- parameters


def _as_number(name: str, value: Any, expect: str) -> float:
    """`value` as a finite float, else the parameter error (NaN and infinities included)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(value)):
        raise invalid(name, expect, value, what="parameter")
    return float(value)


@dataclass(frozen=True)
class Continuous:
    """A real-valued parameter in `[low, high]`."""

    name: str
    low: float
    high: float
    prior: Prior = field(default_factory=Uniform)
    default: float | None = None
    doc: str = ""

    def __post_init__(self) -> None:
        if not self.low < self.high:
            raise ParameterError(f"`low < high` must hold for {self.name!r}, but got ({self.low=}, {self.high=}).")

    @property
    def width(self) -> int:
        return 1

    @property
    def fallback(self) -> float:
        return self.default if self.default is not None else 0.5 * (self.low + self.high)

    def describe(self) -> str:
        return f"a number in [{self.low:g}, {self.high:g}]"

    def check(self, value: Any) -> float:
        v = _as_number(self.name, value, self.describe())
        if not self.low <= v <= self.high:
            raise invalid(self.name, self.describe(), value, what="parameter")
        return v

    def sample(self, rng: np.random.Generator, n: int) -> list[float]:
        return [float(v) for v in np.clip(self.prior.sample(rng, n, self.low, self.high), self.low, self.high)]

    def encode(self, values: Sequence[float]) -> np.ndarray:
        return ((np.asarray(values, float) - self.low) / (self.high - self.low))[:, None]

    def decode(self, block: np.ndarray) -> list[float]:
        u = np.clip(block[:, 0], 0.0, 1.0)
        return [float(v) for v in self.low + u * (self.high - self.low)]

    def decode_quantiles(self, block: np.ndarray) -> list[float]:
        u = np.clip(block[:, 0], 0.0, 1.0)
        return [float(v) for v in np.clip(self.prior.ppf(u, self.low, self.high), self.low, self.high)]


@dataclass(frozen=True)
class Integer:
    """An integer parameter in `[low, high]` (inclusive), uniform prior."""

    name: str
    low: int
    high: int
    default: int | None = None
    doc: str = ""

    def __post_init__(self) -> None:
        if not self.low < self.high:
            raise ParameterError(f"`low < high` must hold for {self.name!r}, but got ({self.low=}, {self.high=}).")

    @property
    def width(self) -> int:
        return 1

    @property
    def fallback(self) -> int:
        return self.default if self.default is not None else self.low

    def describe(self) -> str:
        return f"an integer in [{self.low}, {self.high}]"

    def check(self, value: Any) -> int:
        v = _as_number(self.name, value, self.describe())
        if v != int(v) or not self.low <= v <= self.high:
            raise invalid(self.name, self.describe(), value, what="parameter")
        return int(v)

    def sample(self, rng: np.random.Generator, n: int) -> list[int]:
        return [int(v) for v in rng.integers(self.low, self.high + 1, n)]

    def encode(self, values: Sequence[int]) -> np.ndarray:
        # Cell centres: value k occupies [k - low, k - low + 1) / (high - low + 1).
        return ((np.asarray(values, float) - self.low + 0.5) / (self.high - self.low + 1))[:, None]

    def decode(self, block: np.ndarray) -> list[int]:
        k = np.floor(np.clip(block[:, 0], 0.0, 1.0) * (self.high - self.low + 1))
        return [int(v) for v in np.minimum(self.low + k, self.high)]


@dataclass(frozen=True)
class Categorical:
    """One of a fixed set of choices; one-hot in the unit cube."""

    name: str
    choices: tuple[str, ...]
    probs: tuple[float, ...] | None = None
    default: str | None = None
    doc: str = ""

    def __post_init__(self) -> None:
        if len(self.choices) < 2 or len(set(self.choices)) != len(self.choices):
            raise ParameterError(f"{self.name!r} needs two or more distinct choices, got {self.choices!r}.")
        if self.probs is not None and (len(self.probs) != len(self.choices) or not math.isclose(sum(self.probs), 1.0)):
            raise ParameterError(f"probs of {self.name!r} must be {len(self.choices)} numbers summing to 1, got {self.probs!r}.")

    @property
    def width(self) -> int:
        return len(self.choices)

    @property
    def fallback(self) -> str:
        return self.default if self.default is not None else self.choices[0]

    def describe(self) -> str:
        return "one of " + ", ".join(repr(c) for c in self.choices)

    def check(self, value: Any) -> str:
        if value not in self.choices:
            raise invalid(self.name, self.describe(), value, what="parameter")
        return str(value)

    def sample(self, rng: np.random.Generator, n: int) -> list[str]:
        idx = rng.choice(len(self.choices), size=n, p=self.probs)
        return [self.choices[i] for i in idx]

    def encode(self, values: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(values), len(self.choices)))
        out[np.arange(len(values)), [self.choices.index(v) for v in values]] = 1.0
        return out

    def decode(self, block: np.ndarray) -> list[str]:
        return [self.choices[i] for i in np.argmax(block, axis=1)]

    def decode_quantiles(self, block: np.ndarray) -> list[str]:
        return [self.choices[i] for i in prior_argmax(block, self.probs)]


def prior_argmax(block: np.ndarray, probs: Sequence[float] | None) -> np.ndarray:
    """The choice of each row of a one-hot block read as quantiles of the prior `probs`:
    argmax of ``log(u_i) / p_i`` (Efraimidis and Spirakis' weighted sampling key), so a block of
    independent uniform draws picks choice i with probability p_i, while a one-hot vertex keeps
    its choice and uniform `probs` (None) reduce to the plain argmax."""
    block = np.clip(np.asarray(block, float), 0.0, 1.0)
    if probs is None:
        return np.argmax(block, axis=1)
    with np.errstate(divide="ignore"):
        return np.argmax(np.log(block) / np.asarray(probs, float), axis=1)


@dataclass(frozen=True)
class Latent:
    """A latent block `z ~ N(0, I_dim)`, searched inside `[-bound, bound]^dim`.

    Its coordinates are named ``{name}0 .. {name}{dim-1}`` in a params dict.
    """

    name: str = "z"
    dim: int = 32
    bound: float = 3.0
    doc: str = "latent code, standard-normal prior"

    def __post_init__(self) -> None:
        if self.dim < 1 or self.bound <= 0:
            raise ParameterError(f"A latent block needs dim >= 1 and bound > 0, got ({self.dim=}, {self.bound=}).")

    @property
    def names(self) -> list[str]:
        return [f"{self.name}{i}" for i in range(self.dim)]

    def describe(self) -> str:
        return f"a number in [{-self.bound:g}, {self.bound:g}] (latent coordinate)"

    def check(self, coord: str, value: Any) -> float:
        v = _as_number(coord, value, self.describe())
        if not -self.bound <= v <= self.bound:
            raise invalid(coord, self.describe(), value, what="parameter")
        return v

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.clip(rng.standard_normal((n, self.dim)), -self.bound, self.bound)


Param = Continuous | Integer | Categorical


# --------------------------------------------------------------------------- the space


class Space:
    """Named parameters plus an optional latent block.

    Args:
        params: the named parameters, in the order the unit cube lays them out.
        latent: an optional latent block, laid out after them.
        joint: an optional `(rows, rng) -> None` that edits rows drawn from the independent priors
            in place, to add the dependencies of an everyday population (no beard on most
            feminine faces, say). It must keep every value valid; it affects `sample` only, never
            what the strategies may propose.
        prior_cube: what a point of the unit cube means: quantiles of each parameter's prior
            (True), so that uniform points are everyday draws, or the raw parameter box (False).
    """

    def __init__(
        self,
        params: Iterable[Param] = (),
        latent: Latent | None = None,
        joint: Callable[[list[Params], np.random.Generator], None] | None = None,
        prior_cube: bool = False,
    ) -> None:
        self.params: tuple[Param, ...] = tuple(params)
        self.latent = latent
        self.joint = joint
        self.prior_cube = bool(prior_cube)
        names = [p.name for p in self.params] + (latent.names if latent else [])
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ParameterError(f"Parameter names must be unique; repeated: {dupes}.")
        if not names:
            raise ParameterError("A space needs at least one parameter or a latent block.")
        self._by_name = {p.name: p for p in self.params}
        self.names: list[str] = names

    def __repr__(self) -> str:
        latent = f", latent={self.latent.dim}" if self.latent else ""
        prior = ", prior_cube=True" if self.prior_cube else ""
        return f"Space({[p.name for p in self.params]}{latent}{prior})"

    def __getitem__(self, name: str) -> Param:
        return self._by_name[name]

    @functools.cached_property
    def cube(self) -> Cube:
        """The layout of this space's unit cube (where each parameter's columns are)."""
        return Cube(self)

    @property
    def dim(self) -> int:
        """Width of the unit cube (categoricals count one column per choice)."""
        return sum(p.width for p in self.params) + (self.latent.dim if self.latent else 0)

    def defaults(self) -> Params:
        """Each parameter at its default (latent coordinates at 0)."""
        out: Params = {p.name: p.fallback for p in self.params}
        if self.latent:
            out.update({n: 0.0 for n in self.latent.names})
        return out

    # ----------------------------------------------------------------- validation

    def validate(self, params: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> list[Params]:
        """Checks every value and fills missing parameters with their defaults.

        Raises:
            ParameterError: naming the parameter and its valid range or choices, for an unknown
                name, a value out of range, NaN, or a value of the wrong kind.
        """
        rows = [params] if isinstance(params, Mapping) else list(params)
        return [self._validate_one(row) for row in rows]

    def _validate_one(self, row: Mapping[str, Any]) -> Params:
        if not isinstance(row, Mapping):
            raise ParameterError(f"Parameters must be given as a mapping of name to value. Got {row!r} instead.")
        out = self.defaults()
        latent_names = set(self.latent.names) if self.latent else set()
        for key, value in row.items():
            if key in self._by_name:
                out[key] = self._by_name[key].check(value)
            elif key in latent_names:
                out[key] = self.latent.check(key, value)  # type: ignore[union-attr]
            else:
                close = difflib.get_close_matches(str(key), self.names, n=1)
                hint = f" Did you mean {close[0]!r}?" if close else ""
                raise ParameterError(f"Unknown parameter {key!r}.{hint} Valid parameters: {', '.join(self.names)}.")
        return out

    # ----------------------------------------------------------------- sampling and the cube

    def sample(self, n: int, seed: int | None = 0) -> list[Params]:
        """`n` parameter dicts drawn from the default prior; the same seed gives the same dicts."""
        if n < 0:
            raise ParameterError(f"The 'n' argument must be >= 0. Got {n!r} instead.")
        rng = np.random.default_rng(seed)
        columns = {p.name: p.sample(rng, n) for p in self.params}
        rows = [{name: col[i] for name, col in columns.items()} for i in range(n)]
        if self.joint is not None:
            self.joint(rows, rng)
        if self.latent:
            z = self.latent.sample(rng, n)
            for row, zi in zip(rows, z):
                row.update({name: float(v) for name, v in zip(self.latent.names, zi)})
        return rows

    def to_unit(self, params: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> np.ndarray:
        """Validated params -> `n x dim` array in the unit cube."""
        rows = self.validate(params)
        blocks = [p.encode([r[p.name] for r in rows]) for p in self.params]
        if self.latent:
            z = np.array([[r[n] for n in self.latent.names] for r in rows], float).reshape(len(rows), -1)
            blocks.append((z + self.latent.bound) / (2 * self.latent.bound))
        return np.concatenate(blocks, axis=1) if rows else np.zeros((0, self.dim))

    def from_unit(self, X: np.ndarray) -> list[Params]:
        """`n x dim` array (clipped to the unit cube) -> params dicts.

        In a prior cube (`prior_cube`), each continuous coordinate is a quantile of the parameter's
        prior, each latent coordinate a quantile of N(0, 1) (clipped to the box) and each one-hot
        block decodes by `prior_argmax`: uniform points of the cube are then draws from the
        everyday prior's marginals, so a search starts from ordinary faces and conditions rather
        than from uniform extremes. Integers (uniform priors) decode the same in both cubes.
        """
        quantiles = self.prior_cube
        X = np.atleast_2d(np.asarray(X, float))
        if X.shape[1] != self.dim:
            raise ParameterError(f"Expected a `n x {self.dim}` array for {self!r}, got shape {X.shape}.")
        if np.isnan(X).any():
            raise ParameterError("The unit-cube array contains NaN.")
        columns: dict[str, list[Any]] = {}
        layout = self.cube.columns
        for p, c in zip(self.params, layout):
            block = X[:, c.start : c.start + c.width]
            columns[p.name] = p.decode_quantiles(block) if quantiles and not isinstance(p, Integer) else p.decode(block)
        rows = [{name: col[i] for name, col in columns.items()} for i in range(len(X))]
        if self.latent:
            b = self.latent.bound
            u = np.clip(X[:, layout[len(self.params)].start :], 0.0, 1.0)
            if quantiles:
                from scipy.stats import norm

                z = np.clip(norm.ppf(u), -b, b)
            else:
                z = u * 2 * b - b
            for row, zi in zip(rows, z):
                row.update({name: float(v) for name, v in zip(self.latent.names, zi)})
        return rows

    def describe(self) -> str:
        """A header and one line per parameter: name, range or choices, default, meaning."""
        lines = [f"  {'name':<20} {'range':<44} {'default':<10} meaning"]
        lines += [f"  {p.name:<20} {p.describe():<44} {p.fallback!s:<10} {p.doc}" for p in self.params]
        if self.latent:
            lat = self.latent
            lines.append(f"  {lat.name}0..{lat.name}{lat.dim - 1:<15} {lat.describe():<44} {'0':<10} {lat.doc}")
        return "\n".join(lines)


# --------------------------------------------------------------------------- the unit cube's layout


@dataclass(frozen=True)
class Column:
    """Where one parameter lies in the unit cube: its name, first column and width (a one-hot
    block is as wide as its choices; everything else is one column)."""

    name: str
    start: int
    width: int
    kind: str  # "continuous", "integer", "categorical" or "latent"


class Cube:
    """The layout of a space's unit cube, the one home of it: its one-hot blocks and integer
    columns, and what a strategy may propose there.

    :meth:`snap` maps any point of `[0, 1]^dim` to one a strategy may propose: each one-hot block to
    its argmax vertex (in a prior cube, its `prior_argmax` vertex), each integer column to the
    centre of its cell, so that what a strategy asks, what the campaign evaluates and what the
    model is told are the same point.
    """

    def __init__(self, space: Space) -> None:
        self.dim = space.dim
        self.columns: list[Column] = []
        self._probs = [p.probs if space.prior_cube else None for p in space.params if isinstance(p, Categorical)]
        col = 0
        for p in space.params:
            kind = "categorical" if isinstance(p, Categorical) else "integer" if isinstance(p, Integer) else "continuous"
            self.columns.append(Column(p.name, col, p.width, kind))
            col += p.width
        if space.latent is not None:
            self.columns += [Column(name, col + i, 1, "latent") for i, name in enumerate(space.latent.names)]
        self.blocks: list[tuple[int, int]] = [(c.start, c.width) for c in self.columns if c.kind == "categorical"]
        self.integers: list[tuple[int, int]] = [(c.start, space[c.name].high - space[c.name].low + 1)  # type: ignore[union-attr]
                                                for c in self.columns if c.kind == "integer"]
        self.categorical = np.zeros(self.dim, bool)  # True in every one-hot column
        for start, width in self.blocks:
            self.categorical[start : start + width] = True

    def snap(self, X: np.ndarray) -> np.ndarray:
        """`n x dim` points -> the nearest proposable points (one-hot vertices, integer cell centres)."""
        X = np.clip(np.array(X, dtype=float, copy=True).reshape(-1, self.dim), 0.0, 1.0)
        for (start, width), probs in zip(self.blocks, self._probs):
            hot = prior_argmax(X[:, start : start + width], probs)
            X[:, start : start + width] = 0.0
            X[np.arange(len(X)), start + hot] = 1.0
        for col, count in self.integers:
            X[:, col] = (np.minimum(np.floor(X[:, col] * count), count - 1) + 0.5) / count
        return X

    def uniform(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """`n` uniform points: continuous coordinates uniform, categoricals and integers uniform over their values."""
        return self.snap(rng.random((n, self.dim)))

    def weighted(self, X: np.ndarray) -> np.ndarray:
        """`X` weighted for distances between points (`one_hot_weighted` with this cube's blocks)."""
        return one_hot_weighted(np.asarray(X, float).reshape(-1, self.dim), self.blocks)


def one_hot_weighted(X: np.ndarray, blocks: Sequence[tuple[int, int]]) -> np.ndarray:
    """A copy of `X` with each one-hot block `(first column, width)` divided by sqrt(12), for
    distances between points: another category then weighs as much as a typical difference in one
    continuous coordinate (two uniform draws differ by 1/6 in mean square), so every parameter
    counts as one coordinate."""
    X = np.array(X, dtype=float, copy=True)
    for start, width in blocks:
        X[:, start : start + width] /= np.sqrt(12.0)
    return X


def farthest_points(X: np.ndarray, k: int) -> np.ndarray:
    """Indices of `k` rows of `X` far apart (greedy farthest-point traversal from the first row), in
    their original order: a search harvests many near-copies of one failure, and a gallery or a
    retraining set should hold the different ones."""
    X = np.asarray(X, float)
    if len(X) <= k:
        return np.arange(len(X))
    chosen = [0]
    nearest = ((X - X[0]) ** 2).sum(axis=1)
    for _ in range(k - 1):
        chosen.append(int(np.argmax(nearest)))
        nearest = np.minimum(nearest, ((X - X[chosen[-1]]) ** 2).sum(axis=1))
    return np.sort(chosen)

"""Transects: matched grids of faces that differ along chosen attributes only.

After Balakrishnan et al. (docs/papers.md#balakrishnan, Sec. 4.1):

1. `fit_hyperplanes` (Sec. 4.1.1): from latent codes and annotated attributes, one hyperplane per
   attribute: ridge regression for continuous attributes, a linear SVM for binary ones. Each is
   stored as a unit normal `w` and offset `b`; the signed **decision value** `w . z + b` is the
   distance of `z` from the attribute's neutral hyperplane in latent units, for both kinds. A ridge
   hyperplane also knows its `scale` (attribute units per unit of decision value) and the `neutral`
   attribute value at decision 0, so `Hyperplane.predict(z) = neutral + scale * (w . z + b)` is the
   regression's prediction in the annotation's units.
2. `project_to_intersection` (Algorithm 1, first step): iterated projections of latent points onto
   the intersection of K hyperplanes, to chosen decision values.
3. `orthogonalise` (Algorithm 2): traversal directions orthogonal to every *other* attribute's normal.
4. `make_transects` (Algorithm 1): an `L_1 x ... x L_K` grid of decision values around each
   projected base point, rendered with the generator's `from_latent`.
5. `transect_drift`, `axis_drift`, `prune_transects`: did what was meant to stay fixed stay fixed?

`attribute_vector` is the attribute vector of Denton et al. (docs/papers.md#denton, Sec. 4.2):
a linear classifier between latents with and without an attribute, the confounder balanced.

Example:
    >>> gen = generators.load("faces-latent", resolution=64)                       # doctest: +SKIP
    >>> z = np.random.default_rng(0).standard_normal((2000, gen.latent_dim))       # doctest: +SKIP
    >>> planes = fit_hyperplanes(z, gen.from_latent(z).truth, ["hair_length", "gender_presentation"])  # doctest: +SKIP
    >>> t = make_transects(gen, planes, ["hair_length"], size=(3,), n=4, steps=1.5)  # doctest: +SKIP
    >>> t.table[["transect", "idx_hair_length", "hair_length", "gender_presentation"]]  # doctest: +SKIP
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sklearn.linear_model import Ridge
from sklearn.metrics import r2_score
from sklearn.svm import LinearSVC

from generators.base import Batch
from searcher.analysis.annotations import PruneReport
from searcher.errors import ParameterError, SearcherError

__all__ = [
    "TRANSECT_CONFIG",
    "Hyperplane",
    "Projection",
    "Transects",
    "attribute_vector",
    "axis_drift",
    "fit_hyperplanes",
    "hyperplane_table",
    "make_transects",
    "orthogonalise",
    "plan_transects",
    "project_to_intersection",
    "prune_transects",
    "render_latents",
    "transect_drift",
]

TRANSECT_CONFIG = "transect.json"  # a transect run's settings, to render its images again (`searcher export`) and its pruning (`searcher analyze`)


# --------------------------------------------------------------------------- hyperplanes (Sec. 4.1.1)


@dataclass(frozen=True, eq=False)
class Hyperplane:
    """The hyperplane `{z : w . z + b = 0}` of one attribute, with `w` a unit normal.

    Attributes:
        attribute: the annotated attribute.
        kind: "continuous" (ridge regression) or "binary" (linear SVM).
        normal: unit vector `w` (`D`), pointing towards more of the attribute / the positive class.
        offset: `b`; `w . z + b` is the signed latent distance from the hyperplane.
        scale: the fitted model's gain per unit of decision value: attribute units for ridge,
            SVM margin units for a binary hyperplane.
        neutral: attribute value at decision 0 (ridge), or the cut that binarised it (SVM; NaN if
            the attribute was already 0/1).
        metric, score: held-out "r2" (ridge) or "accuracy" (SVM) on `n_test` rows not used to fit.
    """

    attribute: str
    kind: str
    normal: np.ndarray
    offset: float
    scale: float
    neutral: float
    metric: str
    score: float
    n_train: int
    n_test: int

    def decision(self, z: np.ndarray) -> np.ndarray:
        """Signed decision values `w . z + b` of `N x D` codes (latent units)."""
        return np.atleast_2d(z) @ self.normal + self.offset

    def predict(self, z: np.ndarray) -> np.ndarray:
        """The fitted model's output: attribute units (ridge) or the SVM's decision function."""
        value = self.scale * self.decision(z)
        return self.neutral + value if self.kind == "continuous" else value


def fit_hyperplanes(
    Z: np.ndarray,
    annotations: pd.DataFrame,
    attributes: Sequence[str] | None = None,
    *,
    binary: Mapping[str, float] | None = None,
    neutral: Mapping[str, float] | None = None,
    alpha: float = 1.0,
    C: float = 1.0,
    test_size: float = 0.2,
    seed: int = 0,
) -> dict[str, Hyperplane]:
    """Fits one hyperplane per attribute from latent codes and their annotations (Sec. 4.1.1).

    Continuous attributes get ridge regression (`alpha`); boolean columns, and those named in
    `binary` (binarised at the given cut: value >= cut is the positive class), a linear SVM (`C`).
    One seeded split holds out `test_size` of the rows to score each fit; rows where an attribute
    is NaN are left out of that attribute's fit.

    Args:
        Z: `N x D` latent codes.
        annotations: `N` rows aligned with `Z` (annotation scores or the generator's truth).
        attributes: columns to fit (default: every numeric column).
        binary: attribute -> cut, e.g. `{"gender_presentation": 0.5}`.
        neutral: attribute -> value of a ridge hyperplane's decision 0 (default: the mean).

    Returns:
        attribute -> `Hyperplane`, in the order of `attributes`.
    """
    Z = np.asarray(Z, float)
    if Z.ndim != 2 or len(Z) != len(annotations):
        raise ParameterError(f"Z must be `N x D` with one row per annotation row; got {Z.shape} for {len(annotations)} rows.")
    if not 0 < test_size < 1:
        raise ParameterError(f"The 'test_size' parameter must be a number in (0, 1). Got {test_size!r} instead.")
    binary, neutral = dict(binary or {}), dict(neutral or {})
    numeric = [c for c in annotations.columns if pd.api.types.is_numeric_dtype(annotations[c])]
    attributes = numeric if attributes is None else list(attributes)
    unknown = [a for a in [*attributes, *binary, *neutral] if a not in numeric]
    if unknown:
        raise ParameterError(f"Unknown or non-numeric attribute(s) {unknown}. Numeric columns: {', '.join(map(str, numeric))}.")
    test = np.zeros(len(Z), bool)
    test[np.random.default_rng([seed, 0x4B1]).permutation(len(Z))[: round(test_size * len(Z))]] = True
    planes = {}
    for attribute in attributes:
        y = annotations[attribute].to_numpy(float)
        ok = np.isfinite(y)
        train, held = ok & ~test, ok & test
        if annotations[attribute].dtype == bool or attribute in binary:
            cut = binary.get(attribute, np.nan)
            labels = (y >= cut) if attribute in binary else y.astype(bool)
            if len(np.unique(labels[train])) < 2 or held.sum() == 0:
                raise ParameterError(
                    f"Cannot fit a binary hyperplane for {attribute!r}: its training rows hold one class only, or no rows are held out."
                )
            model = LinearSVC(C=C, max_iter=20_000, random_state=seed).fit(Z[train], labels[train])
            coef, intercept = model.coef_[0], float(model.intercept_[0])
            kind, metric, score, middle = "binary", "accuracy", float(model.score(Z[held], labels[held])), cut
        else:
            if train.sum() < 2 or held.sum() < 2:
                raise ParameterError(f"Cannot fit {attribute!r}: need at least 2 training and 2 held-out rows.")
            model = Ridge(alpha=alpha).fit(Z[train], y[train])
            coef, middle = model.coef_, float(neutral.get(attribute, y[ok].mean()))
            intercept = float(model.intercept_) - middle
            kind, metric, score = "continuous", "r2", float(r2_score(y[held], model.predict(Z[held])))
        norm = float(np.linalg.norm(coef))
        if norm == 0:
            raise ParameterError(f"The fit for {attribute!r} has a zero normal: the latents do not predict it.")
        planes[attribute] = Hyperplane(attribute, kind, coef / norm, intercept / norm, norm, middle, metric, score,
                                       int(train.sum()), int(held.sum()))
    return planes


def hyperplane_table(hyperplanes: Mapping[str, Hyperplane]) -> pd.DataFrame:
    """One row per hyperplane: attribute, kind, metric, held-out score, scale, neutral, offset,
    sample sizes, and the normal's coordinates `w0 .. w{D-1}`."""
    rows = []
    for p in hyperplanes.values():
        row = {k: getattr(p, k) for k in ("attribute", "kind", "metric", "score", "scale", "neutral", "offset", "n_train", "n_test")}
        row.update({f"w{i}": v for i, v in enumerate(p.normal)})
        rows.append(row)
    return pd.DataFrame(rows)


def attribute_vector(
    Z: np.ndarray, labels: np.ndarray, confounder: np.ndarray | pd.DataFrame, *, bins: int = 4, C: float = 1.0, seed: int = 0
) -> np.ndarray:
    """Unit attribute vector of Denton et al. (Sec. 4.2): the normal of a linear classifier
    separating latents with (`labels` true) and without the attribute, pointing towards it.

    The confounder is balanced first: within each confounder stratum both classes are subsampled
    (seeded) to the smaller class's count there, so the two classes have the same confounder
    distribution and the classifier cannot use it. Strata are the joint values of the confounder
    columns; a numeric column with more than `bins` distinct values is cut at its quantiles.

    Args:
        Z: `N x D` latent codes.
        labels: `N` booleans (or 0/1).
        confounder: `N` values, or an `N x m` array / DataFrame of several confounders.
    """
    Z, labels = np.asarray(Z, float), np.asarray(labels).astype(bool)
    conf = pd.DataFrame(confounder).reset_index(drop=True)
    if len(Z) != len(labels) or len(conf) != len(Z):
        raise ParameterError(f"Z, labels and confounder need one row each per code; got {len(Z)}, {len(labels)}, {len(conf)}.")
    for col in conf.columns:
        if pd.api.types.is_numeric_dtype(conf[col]) and conf[col].nunique() > bins:
            conf[col] = pd.qcut(conf[col], bins, labels=False, duplicates="drop")
    strata = conf.astype(str).agg("|".join, axis=1).to_numpy()
    rng = np.random.default_rng([seed, 0xDE7])
    chosen = []
    for stratum in np.unique(strata):
        pos = np.flatnonzero((strata == stratum) & labels)
        neg = np.flatnonzero((strata == stratum) & ~labels)
        k = min(len(pos), len(neg))
        chosen += [rng.choice(pos, k, replace=False), rng.choice(neg, k, replace=False)]
    keep = np.concatenate(chosen) if chosen else np.array([], int)
    if len(keep) < 4:
        raise ParameterError("Too few codes remain after balancing the confounder: each stratum needs both classes.")
    coef = LinearSVC(C=C, max_iter=20_000, random_state=seed).fit(Z[keep], labels[keep]).coef_[0]
    return coef / np.linalg.norm(coef)


# --------------------------------------------------------------------------- Algorithms 1 and 2


@dataclass
class Projection:
    """Result of `project_to_intersection`: the projected codes and how the iteration went."""

    z: np.ndarray
    iterations: int
    residual: float  # max |w_k . z + b_k - t_k| over rows and hyperplanes
    tolerance: float


def _stack(hyperplanes: Sequence[Hyperplane] | Mapping[str, Hyperplane]) -> tuple[np.ndarray, np.ndarray]:
    planes = list(hyperplanes.values()) if isinstance(hyperplanes, Mapping) else list(hyperplanes)
    if not planes:
        raise ParameterError("Need at least one hyperplane.")
    return np.stack([p.normal for p in planes]), np.array([p.offset for p in planes])


def project_to_intersection(
    z: np.ndarray,
    hyperplanes: Sequence[Hyperplane] | Mapping[str, Hyperplane],
    targets: np.ndarray | Sequence[float] | None = None,
    tol: float = 1e-10,
    max_iter: int = 10_000,
) -> Projection:
    """Projects codes onto the intersection of hyperplanes `{w_k . z + b_k = t_k}` (Algorithm 1, line 2).

    Projects onto each hyperplane in turn and repeats until every decision value is within `tol`
    of its target. For affine subspaces with a common point these cyclic projections converge to
    the point of the intersection closest to the start (Halperin); with orthogonal normals in one
    sweep. The paper reports fewer than 50 sweeps.

    Args:
        z: `D` or `N x D` codes.
        targets: `K` (or `N x K`) decision values; default 0, the hyperplanes themselves.

    Raises:
        ParameterError: the normals are (nearly) linearly dependent, so the intersection may be empty.
        SearcherError: no convergence within `max_iter` sweeps.
    """
    W, b = _stack(hyperplanes)
    z = np.array(np.atleast_2d(z), float)
    if z.shape[1] != W.shape[1]:
        raise ParameterError(f"Codes have {z.shape[1]} dimensions, the hyperplanes {W.shape[1]}.")
    t = np.broadcast_to(np.zeros(len(W)) if targets is None else np.asarray(targets, float), (len(z), len(W)))
    if np.linalg.svd(W, compute_uv=False).min() < 1e-6:
        raise ParameterError("The hyperplane normals are (nearly) linearly dependent; their intersection may be empty.")
    for iteration in range(1, max_iter + 1):
        for k in range(len(W)):
            z -= (z @ W[k] + b[k] - t[:, k])[:, None] * W[k]
        residual = float(np.abs(z @ W.T + b - t).max())
        if residual <= tol:
            return Projection(z, iteration, residual, tol)
    raise SearcherError(f"Iterated projections did not converge in {max_iter} sweeps (residual {residual:.2e} > {tol:g}).")


def orthogonalise(normals: np.ndarray | Sequence[np.ndarray]) -> np.ndarray:
    """Traversal directions `v_j` orthogonal to every other normal `n_k`, k != j (Algorithm 2).

    `v_j` is `n_j` minus its projection onto the span of the other normals (a QR factorisation of
    the others gives an orthonormal basis of that span), then scaled to unit length. As printed,
    Algorithm 2 factorises all normals once and subtracts the other columns of that one Q; that
    only makes `v_j` orthogonal to the normals *before* j (it returns the Gram-Schmidt vector
    `Q_j`), so here the others are factorised for each j, which gives the property the algorithm
    states. Moving along `v_j` then leaves every other attribute's decision value unchanged.

    Args:
        normals: `K x D`, one hyperplane normal per row (K <= D, linearly independent).

    Returns:
        `K x D` unit directions.
    """
    N = np.atleast_2d(np.asarray(normals, float))
    out = np.empty_like(N)
    for j in range(len(N)):
        v = N[j].copy()
        others = np.delete(N, j, axis=0)
        if len(others):
            q, _ = np.linalg.qr(others.T)
            v -= q @ (q.T @ v)
        norm = np.linalg.norm(v)
        if norm < 1e-8 * max(1.0, np.linalg.norm(N[j])):
            raise ParameterError(f"Normal {j} lies in the span of the others; it cannot be orthogonalised.")
        out[j] = v / norm
    return out


_algorithm2 = orthogonalise  # `orthogonalise` is also a boolean parameter below


# --------------------------------------------------------------------------- transects (Algorithm 1)


@dataclass
class Transects:
    """A set of transects: `n` grids of `size = (L_1, ..., L_K)` images each.

    Attributes:
        table: one row per image: `transect`, `image` (row of `latents`), `idx_<a>` (grid index)
            and `value_<a>` (target decision value) per manipulated attribute, `decision_<a>` (the
            achieved decision value) per hyperplane, and, once rendered, the generator's truth.
        latents: `n * prod(size) x D` codes, in `table.image` order.
        attributes: the manipulated attributes, one per grid axis.
        values: attribute -> its `L_k` decision values.
        directions: `K x D` unit traversal directions (orthogonalised or the normals).
        projection: how the base points were projected onto the intersection.
        images: `N x H x W x 3` uint8, when rendered by `make_transects`.
    """

    table: pd.DataFrame
    latents: np.ndarray
    attributes: tuple[str, ...]
    values: dict[str, np.ndarray]
    directions: np.ndarray
    projection: Projection
    images: np.ndarray | None = field(default=None, repr=False)


def _grid_values(attributes: Sequence[str], size: Sequence[int], steps: float | Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Decision values per axis: a half-span `s` gives `L` points evenly from -s to s (0 when L = 1)."""
    if len(size) != len(attributes) or any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1 for s in size):
        raise ParameterError(
            f"The 'size' parameter must hold one integer >= 1 per attribute ({len(attributes)}). Got {tuple(size)!r} instead."
        )
    spec = steps if isinstance(steps, Mapping) else {}
    unknown = [a for a in spec if a not in attributes]
    if unknown:
        raise ParameterError(f"Steps given for {unknown}, which are not manipulated. Manipulated attributes: {', '.join(attributes)}.")
    out = {}
    for attribute, length in zip(attributes, size):
        s = spec.get(attribute, 1.5) if isinstance(steps, Mapping) else steps
        if np.ndim(s) == 0:
            out[attribute] = np.linspace(-float(s), float(s), length) if length > 1 else np.zeros(1)
        else:
            out[attribute] = np.asarray(s, float)
            if len(out[attribute]) != length:
                raise ParameterError(f"{attribute!r} has {len(out[attribute])} decision values for an axis of length {length}.")
    return out


def plan_transects(
    hyperplanes: Mapping[str, Hyperplane],
    attributes: Sequence[str],
    size: Sequence[int] = (2, 2, 2),
    n: int = 10,
    steps: float | Mapping[str, float | Sequence[float]] = 1.5,
    seed: int = 0,
    orthogonalise: bool = True,
) -> Transects:
    """The latent codes of `n` transects (Algorithm 1), without rendering them.

    Base codes `z ~ N(0, I)` (seeded) are projected onto the intersection of the manipulated
    attributes' hyperplanes; grid point `(l_1, ..., l_K)` is
    `z0 + sum_k c_k[l_k] / <v_k, n_k> * v_k` with unit directions `v_k`, so its decision value on
    `h_k` moves by exactly `c_k[l_k]`. With `orthogonalise`, `v_k` is orthogonal to the normals of
    *all* `hyperplanes` but its own (Algorithm 2), manipulated or not, so every other hyperplane's
    decision value stays put; without, `v_k = n_k`, and a step on one axis also moves the decision
    values of attributes whose normals are correlated with it.

    Args:
        hyperplanes: every fitted hyperplane (N_a of them); the ones not manipulated are held.
        attributes: the K manipulated attributes, one per grid axis.
        size: `(L_1, ..., L_K)`.
        steps: decision values per axis: a half-span for all axes, or attribute -> half-span or
            an explicit list of `L_k` values. Latent units (see the module docstring).
    """
    attributes = tuple(attributes)
    missing = [a for a in attributes if a not in hyperplanes]
    if missing or len(set(attributes)) != len(attributes) or not attributes:
        raise ParameterError(
            f"Manipulate distinct attributes that have a hyperplane. Got {list(attributes)}; hyperplanes: {', '.join(hyperplanes)}."
        )
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ParameterError(f"The 'n' parameter must be an integer >= 1. Got {n!r} instead.")
    values = _grid_values(attributes, size, steps)
    names = list(hyperplanes)
    normals = np.stack([hyperplanes[a].normal for a in names])
    rows = [names.index(a) for a in attributes]
    directions = _algorithm2(normals)[rows] if orthogonalise else normals[rows]
    gains = np.einsum("kd,kd->k", directions, normals[rows])  # <v_k, n_k>
    base = np.random.default_rng([seed, 0x7A5E]).standard_normal((n, normals.shape[1]))
    projection = project_to_intersection(base, [hyperplanes[a] for a in attributes])
    grid = np.array(list(itertools.product(*(range(len(values[a])) for a in attributes))), int)
    steps_k = np.stack([values[a][grid[:, k]] for k, a in enumerate(attributes)], axis=1)  # G x K
    offsets = (steps_k / gains) @ directions  # G x D
    latents = (projection.z[:, None, :] + offsets[None]).reshape(-1, normals.shape[1])
    table = pd.DataFrame({"transect": np.repeat(np.arange(n), len(grid)), "image": np.arange(len(latents))})
    for k, a in enumerate(attributes):
        table[f"idx_{a}"] = np.tile(grid[:, k], n)
        table[f"value_{a}"] = np.tile(steps_k[:, k], n)
    for a in names:
        table[f"decision_{a}"] = hyperplanes[a].decision(latents)
    return Transects(table, latents, attributes, values, directions, projection)


def render_latents(
    generator: Any, latents: np.ndarray, batch_size: int = 256, seed: int = 0, keys: Sequence[Any] | None = None
) -> Iterator[tuple[int, Batch]]:
    """Renders codes with `generator.from_latent` in batches; yields `(first row, Batch)`.

    `keys` (one per code) share a nuisance draw between codes with the same key: pass each row's
    transect id so that a transect's images keep one background and framing.
    """
    if not callable(getattr(generator, "from_latent", None)):
        raise ParameterError(f"Transects need a generator with a latent space (`from_latent`), e.g. faces-latent; got {generator!r}.")
    if generator.latent_dim != latents.shape[1]:
        raise ParameterError(f"The hyperplanes live in {latents.shape[1]} dimensions, the generator's latents in {generator.latent_dim}.")
    for start in range(0, len(latents), batch_size):
        chunk = None if keys is None else list(keys[start : start + batch_size])
        yield start, generator.from_latent(latents[start : start + batch_size], seed=seed, keys=chunk)


def make_transects(
    generator: Any,
    hyperplanes: Mapping[str, Hyperplane],
    attributes: Sequence[str],
    size: Sequence[int] = (2, 2, 2),
    n: int = 10,
    steps: float | Mapping[str, float | Sequence[float]] = 1.5,
    seed: int = 0,
    orthogonalise: bool = True,
    batch_size: int = 256,
) -> Transects:
    """Plans `n` transects (`plan_transects`) and renders every grid point with the generator.

    Returns:
        `Transects` whose `table` also holds the generator's truth of each image and whose
        `images` holds the pixels. Keep `n * prod(size)` modest: all images stay in memory
        (stream with `plan_transects` + `render_latents` for large sets).
    """
    plan = plan_transects(hyperplanes, attributes, size, n, steps, seed, orthogonalise)
    keys = [("transect", int(t)) for t in plan.table["transect"]]
    batches = [batch for _, batch in render_latents(generator, plan.latents, batch_size, seed, keys)]
    truth = pd.concat([b.truth for b in batches], ignore_index=True)
    plan.table = pd.concat([plan.table, truth.drop(columns=[c for c in truth.columns if c in plan.table.columns])], axis=1)
    plan.images = np.concatenate([b.images for b in batches])
    return plan


# --------------------------------------------------------------------------- what stayed fixed


def transect_drift(table: pd.DataFrame, attributes: Sequence[str]) -> pd.DataFrame:
    """Range (max - min) and std of each attribute across each transect's grid.

    Pass the attributes that were *not* manipulated (from truth or annotation scores): in an ideal
    transect they do not move at all.

    Returns:
        Long table: `transect, attribute, range, std` (in the attribute's units).
    """
    missing = [a for a in attributes if a not in table.columns]
    if missing:
        raise ParameterError(f"No column for {missing} in the transect table. Columns: {', '.join(map(str, table.columns))}.")
    grouped = table.groupby("transect")[list(attributes)]
    spread = (grouped.max() - grouped.min()).melt(ignore_index=False, var_name="attribute", value_name="range")
    std = grouped.std(ddof=0).melt(ignore_index=False, var_name="attribute", value_name="std")
    out = spread.reset_index().merge(std.reset_index(), on=["transect", "attribute"])
    return out.sort_values(["transect", "attribute"], kind="stable").reset_index(drop=True)


def axis_drift(table: pd.DataFrame, axes: Sequence[str], attributes: Sequence[str]) -> pd.DataFrame:
    """Change of each attribute along each grid axis: value at the axis's last level minus its
    first, on every grid line (the other axes' indices held).

    Args:
        axes: the manipulated attributes (`idx_<a>` columns).
        attributes: the columns to measure; the axis's own attribute gives the intended change.

    Returns:
        Long table: `transect, axis, attribute, change`, and the `idx_<b>` of the other axes
        (NaN for the walking axis itself).
    """
    frames = []
    for axis in axes:
        idx = f"idx_{axis}"
        if idx not in table.columns:
            raise ParameterError(f"{axis!r} is not a grid axis of this table (no {idx} column).")
        if table[idx].max() == table[idx].min():
            continue
        others = [f"idx_{a}" for a in axes if a != axis]
        lo = table[table[idx] == table[idx].min()].set_index(["transect", *others])[list(attributes)]
        hi = table[table[idx] == table[idx].max()].set_index(["transect", *others])[list(attributes)]
        change = (hi - lo).melt(ignore_index=False, var_name="attribute", value_name="change").reset_index()
        change.insert(1, "axis", axis)
        frames.append(change)
    if not frames:
        raise ParameterError("No axis has more than one level; there is no change to measure.")
    return pd.concat(frames, ignore_index=True)


def prune_transects(drift: pd.DataFrame, max_range: float | Mapping[str, float]) -> PruneReport:
    """Drops transects whose held attributes moved too much, attribute by attribute.

    Args:
        drift: `transect_drift`'s table.
        max_range: one threshold for every attribute in `drift`, or attribute -> threshold (in the
            attribute's units; attributes not named are not checked).

    Returns:
        A `PruneReport` whose `kept` are transect ids.
    """
    limits = dict(max_range) if isinstance(max_range, Mapping) else {a: float(max_range) for a in drift["attribute"].unique()}
    unknown = [a for a in limits if a not in set(drift["attribute"])]
    if unknown:
        raise ParameterError(f"No drift measured for {unknown}. Measured: {', '.join(drift['attribute'].unique())}.")
    ranges = drift.pivot(index="transect", columns="attribute", values="range")
    keep = pd.Series(True, index=ranges.index)
    rows = []
    for attribute, limit in limits.items():
        removed = keep & (ranges[attribute] > limit)
        keep[removed] = False
        rows.append({"criterion": f"{attribute} range > {limit:g}", "removed": int(removed.sum()), "remaining": int(keep.sum())})
    return PruneReport(kept=ranges.index[keep.to_numpy()], steps=pd.DataFrame(rows, columns=["criterion", "removed", "remaining"]))

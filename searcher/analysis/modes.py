"""Scoring of failures, the one home used by `compare`, `bench`, the report and the export: distinct
failures and repeats, the failure modes a run hit, and its breadth and effective breadth.

Failures are distinct failing points: the targets are deterministic, so an evaluation that repeats
an earlier point (the same to 9 decimals: `repeated`) is counted under `repeats`, never as another
failure.

Failure modes: real targets do not say how many ways they fail, so the comparison defines modes
from the failures themselves. The failures of the uniform strategies (random, Sobol: draws from
the target's failure distribution) are cut into `modes` clusters by Ward linkage in the unit cube;
every campaign's failures are assigned to the nearest cluster centre, and a campaign's `modes` is
how many clusters it hit. Random search's own failures make the modes, so they fit its campaigns
a little better than another's: `modes` here counts a hit of any of them, and the benchmark suite,
which sets a breadth bar by random search, scores a campaign of seed k on the clusters of the
other seeds' failures instead (`mode_labels` with `seeds`). (A per-campaign clustering at a fixed
distance cannot do this in high dimension: 400 uniform points in a 26-D cube lie about 0.47 apart,
so every failure of a random search is its own cluster and every concentrated search looks narrow
or broad by construction.)

Breadth is how many regions (planted) or failure modes (campaigns) the failures hit; effective
breadth is `exp(entropy)` of the failures' distribution over them (Hill's number of order 1): 1.0
when every failure lies in one region, `n` when they are spread evenly over `n`, and 0 for a run
with no failures (so never NaN). It tells a run that found 100 failures in one region and 1 in
four others (breadth 5, effective 1.2) from one that spread them (effective 5).

Bounded at scale: Ward linkage and the mean pairwise distance cost memory and time in the square of
the failures (about 10 GB for 50,000), so above `MAX_POOL` failures each runs on a seeded uniform
sample of `MAX_POOL` of them (every failure still joins its nearest centre, as below the cap). The
cap lies above every pool behind a recorded figure (docs/results.md: campaigns of at most 1,200
evaluations, modes cut over at most a few thousand failures), so those figures are unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import pdist

from searcher.campaign.config import search_space
from searcher.causal import UNIFORM_STRATEGIES
from searcher.objective import FAILURE
from searcher.space import one_hot_weighted

__all__ = ["MAX_POOL", "N_MODES", "breadth", "diversity", "effective_breadth", "failure_modes", "mode_labels", "new_failures",
           "one_hot_blocks", "repeated", "run_scores"]

N_MODES = 16  # the failure modes the uniform strategies' failures are cut into (`compare`'s default, the suite's number)
MAX_POOL = 5_000  # failures Ward linkage and pdist see at most (50 MB of distances; above it, a seeded sample)
_CHUNK = 10_000  # failures assigned to their nearest centre at a time (bounds the n x modes x dim temporary)


def repeated(X: Sequence[np.ndarray] | np.ndarray) -> np.ndarray:
    """Per point (in evaluation order): True if an earlier point is the same to 9 decimals (found
    by one stable sort of all points, not a loop: 100,000 take a fraction of a second)."""
    if not len(X):
        return np.zeros(0, bool)
    rounded = np.round(np.asarray(X, float).reshape(len(X), -1), 9)
    order = np.lexsort(rounded.T[::-1])  # stable: equal points stay in evaluation order
    ranked = rounded[order]
    out = np.zeros(len(X), bool)
    out[order[1:]] = (ranked[1:] == ranked[:-1]).all(axis=1)
    return out


def _repeated(trials: pd.DataFrame) -> np.ndarray:
    """Per trial: True if an earlier trial evaluated the same unit-cube point."""
    return repeated(trials["x"].tolist())


def new_failures(trials: pd.DataFrame) -> np.ndarray:
    """Per trial: True if it failed at a point no earlier trial failed at. The targets are
    deterministic, so evaluating a point twice finds one failure, not two."""
    return (trials["loss"] >= FAILURE).to_numpy() & ~_repeated(trials)


def _failures(trials: pd.DataFrame) -> np.ndarray:
    fails = trials[new_failures(trials)]
    return np.array(fails["x"].tolist(), float) if len(fails) else np.zeros((0, 0))


def diversity(trials: pd.DataFrame, seed: int = 0) -> dict[str, float]:
    """Breadth of one campaign's failures: how many distinct points failed, how many evaluations
    repeated an earlier point, the planted regions hit (where the truth has a `region`), and the
    failures' mean pairwise distance in the unit cube (divided by sqrt(dim); above `MAX_POOL`
    failures, over a sample of them drawn with `seed`)."""
    fails = trials[new_failures(trials)]
    repeats = int(_repeated(trials).sum())
    out: dict[str, float] = {"failures": float(len(fails)), "repeats": float(repeats)}
    if len(fails) and "region" in fails["truth"].iloc[0]:
        out["regions_found"] = float(len({t["region"] for t in fails["truth"] if t["region"] >= 0}))
    X = _sample(np.array(fails["x"].tolist(), float), seed)
    out["mean_pairwise"] = float((pdist(X) / np.sqrt(X.shape[1])).mean()) if len(X) >= 2 else 0.0
    return out


def _sample(X: np.ndarray, seed: int) -> np.ndarray:
    """`X`, or above `MAX_POOL` rows a seeded uniform sample of `MAX_POOL` of them, in their order."""
    if len(X) <= MAX_POOL:
        return X
    return X[np.sort(np.random.default_rng(seed).choice(len(X), MAX_POOL, replace=False))]


def failure_modes(runs: Sequence[pd.DataFrame], strategies: Sequence[str], modes: int = N_MODES,
                  blocks: Sequence[tuple[int, int]] = ()) -> list[int]:
    """How many failure modes each campaign hit (see the module docstring and `mode_labels`)."""
    return [len(np.unique(m[m >= 0])) for m in mode_labels(runs, strategies, modes, blocks)]


def mode_labels(runs: Sequence[pd.DataFrame], strategies: Sequence[str], modes: int = N_MODES,
                blocks: Sequence[tuple[int, int]] = (), seeds: Sequence[int] | None = None, seed: int = 0) -> list[np.ndarray]:
    """Per campaign, per trial: the failure mode (0 .. modes-1) of each new failure, -1 for every
    other trial. Modes are Ward clusters of the uniform strategies' failures (of all campaigns' if
    none ran; above `MAX_POOL` of them, of a sample drawn with `seed`); each failure joins the
    nearest cluster centre.

    With `seeds` (one per campaign) and uniform campaigns of two seeds or more, the modes are
    cross-fitted: a campaign of seed k is scored on the clusters of the uniform campaigns of every
    other seed. Clusters cut from a run's own failures fit them: scored on modes its failures made,
    a random search looks more even than one it did not shape (measured on the suite's face cases,
    its effective modes 0.5-1.7 higher on five of seven; `lab/mode_shares.py`), and it sets
    the breadth bar. Every strategy's seed k is scored on the same modes, so the comparison stays
    like with like.

    `blocks` are the `(first column, width)` of the cube's one-hot blocks, scaled by 1/sqrt(12)
    (`searcher.space.one_hot_weighted`: every parameter counts as one coordinate). Weighted more,
    the clusters are the combinations of categories, and a search that repeats one continuous cause
    of failure (overexposure, say) across every hair colour looks as broad as random search (measured on dlib-cnn with 1/sqrt(2): a BO design that
    counted failures per category only hit 13.6 modes against random's 15.0, and 4.0 with
    1/sqrt(12)).
    """
    X = [one_hot_weighted(_failures(t), blocks) for t in runs]
    out = [np.full(len(t), -1) for t in runs]
    uniform = [s in UNIFORM_STRATEGIES and len(x) > 0 for x, s in zip(X, strategies)]
    folds = {k for k, u in zip(seeds, uniform) if u} if seeds is not None else set()
    if len(folds) < 2:  # one fold: every campaign on the clusters of every uniform failure
        groups = [(list(range(len(runs))), [x for x, u in zip(X, uniform) if u] or [x for x in X if len(x)])]
    else:
        groups = [([i for i, k in enumerate(seeds) if k == fold], [x for x, u, k in zip(X, uniform, seeds) if u and k != fold])
                  for fold in set(seeds)]
    for members, reference in groups:
        if not reference:
            continue
        centres = _centres(np.concatenate(reference), modes, seed)
        for i in members:
            if len(X[i]):
                out[i][new_failures(runs[i])] = _nearest(X[i], centres)
    return out


def _nearest(X: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """The index of each row's nearest centre (squared distance), `_CHUNK` rows at a time."""
    return np.concatenate([((X[i:i + _CHUNK, None, :] - centres[None]) ** 2).sum(-1).argmin(axis=1)
                           for i in range(0, len(X), _CHUNK)])


def _centres(pool: np.ndarray, modes: int, seed: int) -> np.ndarray:
    """The centres of `modes` Ward clusters of `pool` (fewer if it holds fewer points; above
    `MAX_POOL` points, of a sample of them drawn with `seed`)."""
    pool = _sample(pool, seed)
    k = min(modes, len(pool))
    labels = fcluster(linkage(pool, "ward"), k, "maxclust") if len(pool) > 1 else np.ones(1, int)
    return np.stack([pool[labels == c].mean(axis=0) for c in np.unique(labels)])


def one_hot_blocks(generator: str, options: dict[str, Any]) -> list[tuple[int, int]]:
    """The one-hot blocks of the cube a comparison of `generator` searches (`options`: the
    campaign options, for generator_options, vary and fix): categories weigh as one coordinate in
    the failure modes."""
    import generators

    space, _ = search_space(generators.load(generator, **dict(options.get("generator_options") or {})).space,
                            options.get("vary"), options.get("fix"))
    return space.cube.blocks


def breadth(counts: Sequence[int] | np.ndarray) -> int:
    """How many regions or modes hold at least one failure."""
    return int((np.asarray(counts) > 0).sum())


def effective_breadth(counts: Sequence[int] | np.ndarray) -> float:
    """`exp(entropy)` of the failures' distribution over regions or modes: 1.0 for one, `n` for
    equal counts over `n`, 0.0 when there are no failures."""
    c = np.asarray(counts, float)
    c = c[c > 0]
    if not len(c):
        return 0.0
    p = c / c.sum()
    return float(np.exp(-(p * np.log(p)).sum()))


def run_scores(labels: Sequence[int] | np.ndarray, repeats: int, of: int) -> dict[str, Any]:
    """The scores of one run from the region or mode of each *new* failure (-1 for every other
    evaluation, repeats included) and the number of repeated evaluations; `of` is how many
    regions or modes there are."""
    labels = np.asarray(labels, int)
    hits = labels[labels >= 0]
    counts = np.bincount(hits, minlength=of)
    return {"evaluations": len(labels), "failures": len(hits), "repeats": int(repeats), "breadth": breadth(counts), "of": int(of),
            "effective_breadth": round(effective_breadth(counts), 6),
            "first_failure": int(np.argmax(labels >= 0)) + 1 if len(hits) else None,
            "counts": " ".join(str(int(c)) for c in counts)}

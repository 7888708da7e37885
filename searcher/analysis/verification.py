"""Face verification bias measured from embedded pairs, after the synthetic benchmark of
docs/papers.md#liang (`searcher.studies.verification` renders the pseudo-identities and embeds them).

Genuine pairs (two images of one identity) and impostor pairs (two identities of one demographic
group) get a distance (`build_pairs`); then, per group, FNMR against FMR over a sweep of
thresholds, FNMR at one global threshold set for an overall FMR of 1e-3 (1e-2 when there are too
few impostor pairs), as NIST's demographic-effects reports compare groups, and the expected change
of identity distance per unit change of each unprotected attribute (the estimators of
`searcher.causal`): `analyze_pairs`.

    vs = render_pairs(n_identities=100, images_per_identity=4, seed=0)   # searcher.studies.verification
    report = analyze_pairs(vs.pairs, vs.images)
    report.threshold, report.rates, report.curves, report.effects

Images in which the verifier finds no face are failures to enrol: they are counted per group
(`no_face`) and left out of every pair, never scored as a non-match.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from searcher.causal import (
    FMRThreshold,
    fnmr_at_threshold,
    identity_distance_effects,
    threshold_at_fmr,
    verification_rates,
)

__all__ = ["N_GROUPS", "VerificationReport", "VerificationSet", "analyze_pairs", "build_pairs", "impostor_capacity"]

N_GROUPS = 4  # skin (light, dark) x gender presentation (masculine, feminine), balanced by design


@dataclass
class VerificationSet:
    """Rendered pseudo-identities and their pairs (see `render_pairs`).

    Attributes:
        images: one row per image: `image`, `identity`, `slot`, `group`, `skin`, `gender`, the
            identity's `skin_tone` and `gender_presentation`, each varied attribute, and `found`
            (False: the verifier found no face; the image is in no pair).
        pairs: one row per pair: `a`, `b` (rows of `images`), `identity_a`, `identity_b`, `same`
            (1 genuine, 0 impostor), `group`, `distance`, and `d_<attribute>` = |change| of each varied attribute.
        embeddings: `N x D` descriptors, NaN rows where no face was found.
        examples: pixels of the images of the first identity of each group, by image number.
    """

    images: pd.DataFrame
    pairs: pd.DataFrame
    embeddings: np.ndarray
    examples: dict[int, np.ndarray]


def impostor_capacity(n_identities: int, images_per_identity: int) -> int:
    """How many within-group impostor pairs `n_identities` x `images_per_identity` images allow
    (every face found): per group, all image pairs minus those of one identity."""
    total = 0
    for g in range(N_GROUPS):
        m = len(range(g, n_identities, N_GROUPS))
        total += math.comb(m * images_per_identity, 2) - m * math.comb(images_per_identity, 2)
    return total


def build_pairs(images: pd.DataFrame, emb: np.ndarray, vary: list[str], n_impostor: int, rng: np.random.Generator,
           distance: Callable | None) -> pd.DataFrame:
    """Genuine pairs (all, per identity) and within-group impostor pairs (all, or a seeded sample) of found images."""
    found = images[images["found"]]
    ident, group, idx = found["identity"].to_numpy(), found["group"].to_numpy(), found["image"].to_numpy()
    within = [np.flatnonzero(group == g) for g in sorted(set(group))]
    tri = [(sel[i], sel[j]) for sel in within for i, j in [np.triu_indices(len(sel), 1)]]
    a, b = (np.concatenate([t[s] for t in tri]) if tri else np.zeros(0, int) for s in (0, 1))
    genuine = ident[a] == ident[b]
    imp = np.flatnonzero(~genuine)
    if len(imp) > n_impostor:
        imp = np.sort(rng.choice(imp, n_impostor, replace=False))
    keep = np.concatenate([np.flatnonzero(genuine), imp])
    a, b = idx[a[keep]], idx[b[keep]]
    ea, eb = emb[a], emb[b]
    if distance is None:
        d = np.linalg.norm(ea - eb, axis=1)
    else:
        d = np.fromiter((distance(x, y) for x, y in zip(ea, eb)), float, len(a))
    att = images.set_index("image")
    out = pd.DataFrame({"a": a, "b": b, "identity_a": att["identity"].to_numpy()[a], "identity_b": att["identity"].to_numpy()[b],
                        "group": att["group"].to_numpy()[a], "distance": d})
    out["same"] = (out["identity_a"] == out["identity_b"]).astype(int)
    for v in vary:
        out[f"d_{v}"] = np.abs(att[v].to_numpy()[a] - att[v].to_numpy()[b])
    return out


@dataclass
class VerificationReport:
    """The measurements of `analyze_pairs`.

    Attributes:
        threshold: the global threshold (`FMRThreshold`: target, achieved FMR, whether it fell back).
        rates: per group and "all": `images`, `no_face`, `n_genuine`, `false_non_matches`, `fnmr`,
            `fnmr_low`, `fnmr_high` (bootstrap over identities), `n_impostor`, `false_matches`, `fmr`,
            `fmr_low`, `fmr_high` (Wilson), at `threshold`.
        curves: FNMR and FMR per group over a sweep of thresholds (`verification_rates`, flat).
        effects: change of genuine-pair distance per unit |change| of each varied attribute (OLS).
    """

    threshold: FMRThreshold
    rates: pd.DataFrame
    curves: pd.DataFrame
    effects: pd.DataFrame


def analyze_pairs(pairs: pd.DataFrame, images: pd.DataFrame | None = None, *, fmr: float = 1e-3,
                  fallback_fmr: float = 1e-2, n_boot: int = 1000, seed: int = 0) -> VerificationReport:
    """FNMR vs FMR per group, FNMR per group at one global FMR threshold with bootstrap bands,
    and identity-distance effects (Sec. 5 of docs/papers.md#liang; NIST's fixed-threshold comparison).

    The threshold is chosen on all impostor pairs pooled (`threshold_at_fmr`, FMR `fmr`, or
    `fallback_fmr` when there are fewer than 10 / `fmr` of them; its warning is absorbed and
    `threshold.fell_back` says so). FNMR bands resample identities (`cluster_col="identity_a"`),
    since one identity's genuine pairs are correlated. The effects regress genuine-pair distances on
    the `d_<attribute>` columns (`identity_distance_effects`).

    Raises:
        ValueError: too few impostor pairs even for `fallback_fmr`, or a group without genuine pairs.
    """
    imp = pairs.loc[pairs["same"] == 0, "distance"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        thr = threshold_at_fmr(imp, fmr, fallback_fmr=fallback_fmr)
    fixed = verification_rates(pairs, thresholds=[thr.threshold]).droplevel("threshold")
    fixed = pd.concat([fixed, verification_rates(pairs, group_col=None, thresholds=[thr.threshold]).droplevel("threshold")])
    fnmr = pd.concat([fnmr_at_threshold(pairs, thr, cluster_col="identity_a", n_boot=n_boot, seed=seed),
                      fnmr_at_threshold(pairs, thr, group_col=None, cluster_col="identity_a", n_boot=n_boot, seed=seed)])
    rates = fnmr.rename(columns={"low": "fnmr_low", "high": "fnmr_high"}).join(
        fixed[["n_impostor", "false_matches", "fmr", "fmr_low", "fmr_high"]])
    if images is not None:
        counts = images.groupby("group")["found"].agg(images="size", no_face=lambda f: int((~f).sum()))
        counts.loc["all"] = [len(images), int((~images["found"]).sum())]
        rates = counts.join(rates, how="right")
    rates.insert(0, "threshold", thr.threshold)
    rates.index.name = "group"

    gen_d, imp_d = np.sort(pairs.loc[pairs["same"] == 1, "distance"]), np.sort(imp)
    sweep = np.unique(np.concatenate([np.quantile(imp_d, np.logspace(-4, 0, 80)), np.quantile(gen_d, np.linspace(0, 1, 81)),
                                      [thr.threshold]]))
    curves = verification_rates(pairs, thresholds=sweep).reset_index()
    deltas = [c for c in pairs.columns if c.startswith("d_")]
    effects = identity_distance_effects(pairs[pairs["same"] == 1], "distance", deltas)
    return VerificationReport(threshold=thr, rates=rates, curves=curves, effects=effects)

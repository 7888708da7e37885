"""The measures of a generator's validation (`searcher.studies.generator_quality` renders and
judges; these compute): the Frechet distance between descriptor statistics, its extrapolation to
infinitely many samples, the PSNR of reconstructions, the yardstick blur, and the table of rates
and distances per condition combination, category and overall (`summarise_validation`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import linalg
from scipy.ndimage import gaussian_filter

from searcher.causal import wilson_interval

__all__ = ["blurred", "frechet_distance", "frechet_distance_curve", "frechet_distance_unbiased", "psnr", "summarise_validation"]


def frechet_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Frechet distance between Gaussians fitted to the rows of `a` and `b` (FID's formula,
    Heusel et al. 2017): `|mu_a - mu_b|^2 + Tr(S_a + S_b - 2 (S_a S_b)^(1/2))`."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if len(a) < 2 or len(b) < 2:
        return float("nan")
    mu = a.mean(0) - b.mean(0)
    sa, sb = np.atleast_2d(np.cov(a, rowvar=False)), np.atleast_2d(np.cov(b, rowvar=False))
    root = linalg.sqrtm(sa @ sb)
    root = root.real if np.iscomplexobj(root) else root
    return float(mu @ mu + np.trace(sa + sb - 2.0 * root))


def frechet_distance_curve(a: np.ndarray, b: np.ndarray, sizes: Sequence[int], seed: int = 0, repeats: int = 5) -> np.ndarray:
    """`frechet_distance` of `n` rows of each set, per `n` in `sizes`: the mean over `repeats` seeded
    random subsets (one where `n` takes all of the smaller set)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    m, rng = min(len(a), len(b)), np.random.default_rng(seed)
    return np.array([np.mean([frechet_distance(a[rng.choice(len(a), n, replace=False)], b[rng.choice(len(b), n, replace=False)])
                              for _ in range(repeats if n < m else 1)]) for n in sizes])


def frechet_distance_unbiased(a: np.ndarray, b: np.ndarray, seed: int = 0, points: int = 4, repeats: int = 5) -> float:
    """`frechet_distance` extrapolated to infinitely many samples (Chong and Forsyth 2020, "Effectively
    unbiased FID"): the distance of `n` samples exceeds the distributions' by a bias linear in `1/n`,
    so a line in `1/n` is fitted to `frechet_distance_curve` at `points` sizes from half the smaller
    set to all of it; its intercept. NaN below 8 rows."""
    m = min(len(a), len(b))
    if m < 8:
        return float("nan")
    sizes = np.unique(np.linspace(m // 2, m, points).astype(int))
    return float(np.polyfit(1.0 / sizes, frechet_distance_curve(a, b, sizes, seed, repeats), 1)[1])


def _rate(prefix: str, hits: np.ndarray) -> dict[str, float]:
    hits = np.asarray(hits, bool)
    k, n = int(hits.sum()), len(hits)
    lo, hi = wilson_interval(k, n) if n else (np.nan, np.nan)
    return {f"{prefix}.k": k, f"{prefix}.n": n, f"{prefix}.rate": k / n if n else np.nan, f"{prefix}.low": lo, f"{prefix}.high": hi}


def psnr(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    mse = ((a.astype(float) - b.astype(float)) ** 2).reshape(len(a), -1).mean(1)
    return 10 * np.log10(255.0**2 / np.maximum(mse, 1e-10))


def _stack(parts: list[np.ndarray]) -> np.ndarray:
    """The rows of every part with any (a part where no face was found has none)."""
    kept = [p for p in parts if len(p)]
    return np.concatenate(kept) if kept else np.zeros((0, 0))


def blurred(images: np.ndarray) -> np.ndarray:
    """uint8 `N x H x W x C` images blurred with a Gaussian of sigma `W / 64` px: the yardstick's damage."""
    sigma = images.shape[2] / 64
    return np.clip(gaussian_filter(images.astype(np.float32), sigma=(0, sigma, sigma, 0)), 0, 255).round().astype(np.uint8)


def summarise_validation(per_image: list[pd.DataFrame], embedded: Mapping[str, tuple[np.ndarray, ...]], names: list[str]) -> pd.DataFrame:
    """One row per combination, per condition category and overall; `embedded` holds each
    combination's (generated, reference, second reference, it blurred[, its reconstructions]) descriptors."""
    groups: list[tuple[str, list[pd.DataFrame]]] = [(df["group"].iloc[0], [df]) for df in per_image]
    if names:
        for c in names:
            for cat in dict.fromkeys(df[f"asked.{c}"].iloc[0] for df in per_image):
                groups.append((f"{c}={cat}", [df for df in per_image if df[f"asked.{c}"].iloc[0] == cat]))
        groups.append(("all", per_image))
    out = []
    for label, dfs in groups:
        df = pd.concat(dfs, ignore_index=True)
        row: dict[str, Any] = {"group": label, "n": len(df)}
        for col in df.columns:
            if col.startswith(("conditioned.", "reference_conditioned.", "detected.", "reference_detected.")) or col == "encoder_conditions":
                if col == "encoder_conditions":
                    row[col] = float(df[col].mean())
                else:
                    row.update(_rate(col, df[col].to_numpy(bool)))
        if "psnr" in df:
            row["psnr"] = float(df["psnr"].mean())
        cells = [d["group"].iloc[0] for d in dfs]
        if cells and all(c in embedded for c in cells):
            gen_e, ref_e, floor_e, blur_e, *recon_e = (_stack([embedded[c][k] for c in cells]) for k in range(len(embedded[cells[0]])))
            row.update(fd=frechet_distance(gen_e, ref_e), fd_inf=frechet_distance_unbiased(gen_e, ref_e),
                       fd_floor=frechet_distance(floor_e, ref_e), fd_blur=frechet_distance(blur_e, ref_e), embedded=len(gen_e))
            if recon_e:
                row["fd_recon"] = frechet_distance(recon_e[0], ref_e)
        out.append(row)
    return pd.DataFrame(out)

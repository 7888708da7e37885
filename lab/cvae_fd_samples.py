"""How the Frechet distances of `faces-cvae`'s groups, and their spread, depend on the number of
faces they are measured on. A distance between two finite samples is biased up by an amount that
falls as 1/n (Chong and Forsyth 2020), and the amount differs between groups; at the 200 faces per
combination of `validate-generator -n 200` it adds to every group's distance and narrows the ratio
between them. Here each combination's samples and reference renders are drawn as
`validate-generator` draws them (the same seeds), `--n` of each, embedded by dlib's descriptor once,
and the distance is taken on random subsets of 200 up to all of them (the mean of 10 seeded
subsets), then extrapolated to infinitely many (`frechet_distance_unbiased`); the same for each
condition's categories, the combinations pooled. Prints a table per combination and the spreads.

    python lab/cvae_fd_samples.py [--n 1000] [--seed 0]     # 17 min at 1,000 on one core
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from tqdm import tqdm

import generators
import targets
from searcher.analysis.generator_quality import frechet_distance_curve, frechet_distance_unbiased
from searcher.studies.generator_quality import cell_label, condition_cells, condition_samples, embeddings

SIZES = (200, 400, 600, 800)


def embedded(n: int, seed: int) -> dict[str, tuple[dict[str, str], np.ndarray, np.ndarray]]:
    """Per combination: its conditions, and the descriptors of `n` samples and of `n` reference
    renders (those in which the verifier finds a face), drawn with `validate_generator`'s seeds."""
    gen, verifier = generators.load("faces-cvae"), targets.load("dlib-verify")
    out = {}
    for k, cell in enumerate(tqdm(condition_cells(gen), desc="combinations")):
        samples = embeddings(verifier, condition_samples(gen, k, cell, n, seed).images)
        out[cell_label(cell)] = (cell, samples, embeddings(verifier, gen.reference(cell, n, seed=seed + 1).images))
    return out


def distances(sets: dict[str, tuple[np.ndarray, np.ndarray]], seed: int) -> pd.DataFrame:
    """Per group: the distance at each of `SIZES` below its size and at all of it, and extrapolated."""
    rows = {}
    for group, (samples, ref) in sets.items():
        m = min(len(samples), len(ref))
        sizes = [s for s in SIZES if s < m] + [m]
        curve = frechet_distance_curve(samples, ref, sizes, seed=seed, repeats=10)
        rows[group] = {**{f"n={s}": v for s, v in zip(sizes[:-1], curve)}, "all": curve[-1], "faces": m,
                       "extrapolated": frechet_distance_unbiased(samples, ref, seed=seed)}
    return pd.DataFrame(rows).T.astype({"faces": int})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000, help="samples and reference renders per combination")
    ap.add_argument("--seed", type=int, default=0, help="validate-generator's seed (the draws)")
    args = ap.parse_args()
    cells = embedded(args.n, args.seed)
    table = distances({g: (s, r) for g, (_, s, r) in cells.items()}, args.seed)
    print(table.to_string(float_format=lambda v: f"{v:.4f}"))
    print("\nspread over the combinations, largest over smallest:",
          ", ".join(f"{c} {table[c].max() / table[c].min():.2f}x" for c in table.columns if c != "faces"))
    for condition in next(iter(cells.values()))[0]:
        by_category: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
        for cell, samples, ref in cells.values():
            by_category.setdefault(cell[condition], []).append((samples, ref))
        pooled = distances({c: tuple(np.concatenate(part) for part in zip(*pairs)) for c, pairs in by_category.items()}, args.seed)
        print(f"\n{condition}, the combinations pooled:\n" + pooled[["all", "faces", "extrapolated"]].to_string(float_format=lambda v: f"{v:.4f}"))
        print(f"spread: {pooled['all'].max() / pooled['all'].min():.2f}x at all the faces, "
              f"{pooled['extrapolated'].max() / pooled['extrapolated'].min():.2f}x extrapolated")


if __name__ == "__main__":
    main()

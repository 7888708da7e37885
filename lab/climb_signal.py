"""Can a campaign read, from what it was told, whether climbing a confidence pays (`explore="climb"`)?

    python lab/climb_signal.py --planted planted --seeds 3           # the planted cases, run again by ask/tell
    python benchmarks/suite.py --cases faces-dlib-hog,faces-haar-face --strategies bo-modes --seeds 3 --jobs 2 --out runs/faces
    python lab/climb_signal.py runs/faces                             # every bo-modes campaign under it

Why: `explore="climb"` (docs/search.md) follows the model's mean up from the highest passes. On
the planted cases, whose confidences fall smoothly to every region, it spread the failures more
evenly; on faces it lost 3-15% of them. A default that climbs only where it pays needs a rule
the campaign can compute. The candidate read here: how well the model predicts the loss of a
pass from the other points, the Spearman correlation between each pass's normal score (the
copula `bo-modes` models, `gp.normal_scores`) and its leave-one-out posterior mean (Rasmussen &
Williams 2006, eq. 5.12: `y_i - [K^-1 y]_i / [K^-1]_ii`), for the model fitted cold on a run's
first n points, at several n. Where the loss among passes is smooth the correlation is high;
where much of it is not predictable from the parameters (a face's identity draws it), low. A
rule needs the planted runs and the face runs apart at every n where exploring happens.
Cases answered 0/1 are left out: there `explore="climb"` changes nothing.
Measured (docs/search.md, the section on this rule): the slabs read inside the faces' range, so no
threshold on it tells them apart.
"""

from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from scipy.stats import spearmanr

from searcher.bench import select_cases
from searcher.bench.planted import ask_tell
from searcher.campaign import load_campaign
from searcher.cli.args import seed_list
from searcher.objective import FAILURE
from searcher.strategies import make_strategy
from searcher.strategies.bo.gp import fit_ranked_gp, normal_scores

AT = (40, 80, 120, 160, 240)  # points told when the model is read (the schedule's split is at 160 of 400)


def loo_means(K: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    """Each point's posterior mean of the residuals `r` given every other point, under the covariance
    `K` (noise included): `r_i - [K^-1 r]_i / [K^-1]_ii` (Rasmussen & Williams 2006, eq. 5.12)."""
    K_inv = torch.cholesky_inverse(torch.linalg.cholesky(K))
    return r - (K_inv @ r) / K_inv.diagonal()


def loo_correlation(X: np.ndarray, loss: np.ndarray) -> float:
    """Spearman correlation, over the passes, between the normal score and the leave-one-out
    posterior mean of `bo-modes`'s ranked GP fitted cold on `X` (module docstring)."""
    gp, _ = fit_ranked_gp(torch.tensor(X), torch.tensor(normal_scores(loss)), None, 0)
    with torch.no_grad():
        inputs = gp.train_inputs[0]
        K = gp.covar_module(inputs).to_dense() + gp.likelihood.noise * torch.eye(len(X), dtype=inputs.dtype)
        means = loo_means(K, gp.train_targets - gp.mean_module(inputs))
    passes = loss < FAILURE
    return float(spearmanr(means.numpy()[passes], gp.train_targets.numpy()[passes])[0])


def row(case: str, seed: int, X: np.ndarray, loss: np.ndarray) -> dict:
    """The correlation at each of `AT` points told (NaN where the run is shorter)."""
    return {"case": case, "seed": seed, **{n: loo_correlation(X[:n], loss[:n]) if len(X) >= n else np.nan for n in AT}}


def planted_rows(cases: str, seeds: list[int], budget: int = 400) -> pd.DataFrame:
    """`bo-modes` (its defaults) run again on each planted case with a confidence, read at `AT`."""
    rows = []
    for case in select_cases(cases):
        if case.kind != "planted" or not case.score:
            continue
        regions = case.regions()
        for seed in seeds:
            strategy = make_strategy("bo-modes", regions.space, seed=seed, budget=budget)
            X, _ = ask_tell(strategy, partial(regions.loss, score=True), budget)
            rows.append(row(case.name, seed, X, regions.loss(X, score=True)))
            print(f"{case.name} seed {seed}: " + " ".join(f"{rows[-1][n]:.2f}" for n in AT), flush=True)
    return pd.DataFrame(rows)


def campaign_rows(root: Path) -> pd.DataFrame:
    """Each `root/CASE/runs/bo-modes-sSEED` campaign with a graded loss, in the order it asked, read at `AT`."""
    rows = []
    for run in sorted(root.glob("*/runs/bo-modes-s*")):
        result = load_campaign(run)
        t = result.searched
        t = t[np.isfinite(t["loss"].to_numpy(float))]  # a target's errors tell the model nothing
        loss = t["loss"].to_numpy(float)
        if np.isin(loss, (0.0, 1.0)).all():
            continue
        rows.append(row(run.parent.parent.name, int(result.config["seed"]), np.stack(t["x"].to_numpy()), loss))
    if not rows:
        raise SystemExit(f"No bo-modes campaign with a graded loss under {root} (expected {root}/CASE/runs/bo-modes-sSEED).")
    return pd.DataFrame(rows)


def summary(df: pd.DataFrame) -> str:
    """A markdown table: per case, the median correlation over seeds [min-max] at each of `AT`."""
    lines = ["| case | seeds | " + " | ".join(f"at {n}" for n in AT) + " |", "|---|---|" + "---|" * len(AT)]
    for case, g in df.groupby("case", sort=False):
        cells = [f"{g[n].median():.2f} [{g[n].min():.2f}, {g[n].max():.2f}]" if g[n].notna().any() else "-" for n in AT]
        lines.append(f"| {case} | {len(g)} | " + " | ".join(cells) + " |")
    every = df[list(AT[1:])].to_numpy().ravel()
    lines.append(f"\nFrom {AT[1]} points on, over every run: {np.nanmin(every):.2f} to {np.nanmax(every):.2f} "
                 f"(median {np.nanmedian(every):.2f}).")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path, nargs="?", help="a suite's --out folder (or any folder of CASE/runs/bo-modes-sSEED campaigns)")
    ap.add_argument("--planted", help="planted cases (names, or planted / held-out) to run again instead of reading campaigns")
    ap.add_argument("--seeds", default="3", help="with --planted: a count or a comma-separated list (default: 3)")
    args = ap.parse_args(argv)
    if (args.root is None) == (args.planted is None):
        ap.error("give a folder of campaigns or --planted CASES, one of the two")
    df = planted_rows(args.planted, seed_list(args.seeds)) if args.planted else campaign_rows(args.root)
    print(summary(df))


if __name__ == "__main__":
    main()

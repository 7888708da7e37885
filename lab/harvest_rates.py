"""How often `bo-modes`'s points fail, by what the schedule asked them to do: the Sobol start, the
exploring points (new failure modes), the harvesting points (inside the modes found) and the
probes (with `probe`: is a lone failure a region of its own?).

    python benchmarks/suite.py --cases faces-smile-cnn,faces-dlib-hog --strategies random,bo-modes,tpe --seeds 3 --jobs 2 --under bo-modes --out runs/bench
    python lab/harvest_rates.py runs/bench                      # every bo-modes campaign under it
    python lab/harvest_rates.py runs/bench --strategy bo-modes-nomodel
    python lab/harvest_rates.py --planted planted --seeds 5   # planted cases, run again by ask/tell (runs.csv keeps no points)

Why: a run's failures are `sobol + explore x rate + harvest x rate`, and the suite's failures check
asks for 80% of the best peer's. Where `bo-modes` misses it, this says whether the exploring points
or the harvest fall short. A point's role comes from the campaign's stored order and the strategy's
own schedule (`searcher.bench.bounds.schedule_roles`, rebuilt from the campaign's budget and options): the first
`n_init` points are Sobol, and until the first failure every point explores, as there is no mode to
harvest. (A harvesting point that found no new candidate in any mode explores instead; the stored
campaign does not say when, so it is counted as harvest.) A harvesting point at the midpoint of
two failures told before it is a probe (in a run with `--strategy-option ablation.probe=true`; none otherwise). Audit
points are left out.

Planted cases store no points, so `--planted` runs them again (deterministic: the suite's runs,
point for point) and adds what the truth knows: the share of the failures in the region harvested
most (1/k is even), how many of the regions hit were first hit by an exploring point, and how
many after the schedule's split (what exploring less late in the run would put at risk). For
`bo-modes` it also keeps the model's `p_fail` at each harvesting point when it proposed it, and
sets it against what the point did: the mean prediction beside the harvest's failure rate
(calibration), and the AUC of the prediction for the outcome (does the model tell the harvest's
hits from its misses?).
"""

from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.spatial import cKDTree
from sklearn.metrics import roc_auc_score

from searcher.bench import select_cases
from searcher.bench.bounds import schedule, schedule_roles
from searcher.bench.planted import ask_tell
from searcher.campaign import load_campaign
from searcher.cli.args import assignments, seed_list
from searcher.strategies import make_strategy, upgrade_options
from searcher.strategies.bo import FailureModes, ModesAblation

ROLES = ("sobol", "explore", "harvest", "probe")


def roles(searched: pd.DataFrame, config: dict) -> tuple[np.ndarray, np.ndarray]:
    """(role per searched point, failed per searched point), of a campaign's `searched` trials."""
    failed = searched["failure"].to_numpy(bool)
    options = upgrade_options(config.get("strategy"), config.get("strategy_options") or {})  # a campaign stored before the ablation table
    return point_roles(failed, np.stack(searched["x"].to_numpy()), int(config["budget"]), options), failed


def point_roles(failed: np.ndarray, X: np.ndarray, budget: int, options: dict) -> np.ndarray:
    """The role of each point `X` of a run: the schedule's, and a probe where the run probed (the
    switch `ablation.probe`; without it none is, and with `inside` many harvesting points, convex
    combinations of failures, lie near the midpoint of two)."""
    role = schedule_roles(failed, budget, options)
    return with_probes(role, X, failed) if ModesAblation.of(options.get("ablation")).probe else role


def with_probes(role: np.ndarray, X: np.ndarray, failed: np.ndarray, tol: float = 1e-3) -> np.ndarray:
    """`role` with each harvesting point that is the midpoint of two failures told before it (in
    every coordinate of the cube, to `tol`) called a "probe" (`bo-modes`'s option `probe`)."""
    role = role.copy()
    for i in np.flatnonzero(role == "harvest"):
        F = X[:i][failed[:i]]
        if len(F) >= 2:
            dist, j = cKDTree(F).query(2 * X[i] - F, p=np.inf)  # 2 x - f is another failure g: x = (f + g) / 2
            if ((dist <= 2 * tol) & (j != np.arange(len(F)))).any():
                role[i] = "probe"
    return role


class RecordingFailureModes(FailureModes):
    """`bo-modes` that keeps the model's `p_fail` at every harvesting point it proposes (by the point's bytes)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.predicted: dict[bytes, float] = {}

    def _harvest(self, model: Any, *rest: Any) -> tuple[np.ndarray | None, int | None]:
        x, mode = super()._harvest(model, *rest)
        if x is not None and model is not None:
            self.predicted[x.tobytes()] = float(np.exp(model.scores(x[None])[0][0]))
        return x, mode


def planted_rates(cases: str, seeds: list[int], strategy: str = "bo-modes", options: dict | None = None, budget: int = 400) -> pd.DataFrame:
    """`rates` for planted cases, each run again by ask/tell, with the largest region's share of the
    failures, the regions first hit by an exploring point and those first hit after the schedule's
    split (where exploring drops to the `late` rate)."""
    rows, options = [], upgrade_options(strategy, options or {})
    for case in select_cases(cases):
        if case.kind != "planted":
            continue
        regions = case.regions()
        late = schedule(budget, options).split * budget  # the first index explored at the `late` rate
        for seed in seeds:
            s = (RecordingFailureModes if strategy == "bo-modes" else partial(make_strategy, strategy))(
                regions.space, seed=seed, budget=budget, **(options or {}))
            X, _ = ask_tell(s, partial(regions.loss, score=case.score), budget)
            region = regions.region_of(X)
            failed = region >= 0
            predicted = np.array([getattr(s, "predicted", {}).get(x.tobytes(), np.nan) for x in X])
            role = point_roles(failed, X, budget, options or {})
            hit, first = np.unique(region[failed], return_index=True)
            first = np.flatnonzero(failed)[first]  # the index of each region's first hit
            rows.append({"case": case.name, "seed": seed, **_counts(role, failed), "regions": len(hit),
                         "largest_share": float(np.bincount(region[failed]).max() / failed.sum()) if failed.any() else float("nan"),
                         "found_exploring": int((role[first] == "explore").sum()),
                         "found_late": int((first >= late).sum()), "predicted": predicted, "failed": failed})
    return pd.DataFrame(rows)


def _counts(role: np.ndarray, failed: np.ndarray) -> dict[str, int]:
    """A run's failures, and its points and failures per role."""
    out = {"failures": int(failed.sum())}
    for r in ROLES:
        out[f"{r}_points"], out[f"{r}_failures"] = int((role == r).sum()), int(failed[role == r].sum())
    return out


def rates(root: Path, strategy: str = "bo-modes") -> pd.DataFrame:
    """One row per campaign `root/CASE/runs/STRATEGY-sSEED`: failures, and points and failures per role."""
    rows = []
    for run in sorted(root.glob(f"*/runs/{strategy}-s*")):
        result = load_campaign(run)
        role, failed = roles(result.searched, result.config)
        rows.append({"case": run.parent.parent.name, "seed": int(result.config["seed"]), **_counts(role, failed)})
    if not rows:
        raise SystemExit(f"No {strategy} campaign under {root} (expected {root}/CASE/runs/{strategy}-sSEED).")
    return pd.DataFrame(rows)


def summary(df: pd.DataFrame) -> str:
    """A markdown table per case: mean failures, and each role's failure rate (min-max over seeds)."""
    planted = "regions" in df  # what the truth of a planted case adds
    model = "predicted" in df and df["predicted"].map(lambda p: np.isfinite(p).any()).any()  # bo-modes run again: its predictions kept
    truth = ["regions hit (first hit exploring; after the split)", "largest region's share of failures"]
    heads = [f"{r}: failure rate (points)" for r in ROLES] + (truth if planted else []) + \
        (["harvest: model's mean p_fail / failure rate, AUC (points)"] if model else [])
    lines = ["| case | seeds | failures | " + " | ".join(heads) + " |", "|---|---|---|" + "---|" * len(heads)]
    for case, g in df.groupby("case", sort=False):
        cells = []
        for r in ROLES:
            if not g[f"{r}_points"].any():
                cells.append("-")
                continue
            rate = g[f"{r}_failures"] / g[f"{r}_points"].where(g[f"{r}_points"] > 0)
            span = f"{rate.min():.2f}-{rate.max():.2f}" if len(g) > 1 else f"{rate.iloc[0]:.2f}"
            cells.append(f"{g[f'{r}_failures'].sum() / max(1, g[f'{r}_points'].sum()):.2f} [{span}] ({g[f'{r}_points'].mean():.0f})")
        if planted:
            cells += [f"{g['regions'].mean():.1f} ({g['found_exploring'].mean():.1f}; {g['found_late'].mean():.1f})", f"{g['largest_share'].mean():.2f}"]
        if model:
            cells.append(_calibration(np.concatenate(g["predicted"].to_list()), np.concatenate(g["failed"].to_list())))
        lines.append(f"| {case} | {len(g)} | {g['failures'].mean():.1f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _calibration(predicted: np.ndarray, failed: np.ndarray) -> str:
    """The model's mean `p_fail` at the harvesting points it proposed, their failure rate, and the
    AUC of the prediction for the outcome (pooled over seeds)."""
    known = np.isfinite(predicted)
    p, f = predicted[known], failed[known]
    auc = f"{roc_auc_score(f, p):.2f}" if 0 < f.sum() < len(f) else "-"
    return f"{p.mean():.2f} / {f.mean():.2f}, {auc} ({len(p)})" if len(p) else "-"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path, nargs="?", help="a suite's --out folder (or any folder of CASE/runs/STRATEGY-sSEED campaigns)")
    ap.add_argument("--strategy", default="bo-modes", help="bo-modes or bo-modes-nomodel (default: bo-modes)")
    ap.add_argument("--planted", help="planted cases (names, or planted for all) to run again instead of reading campaigns")
    ap.add_argument("--seeds", default="5", help="with --planted: a count or a comma-separated list (default: 5)")
    ap.add_argument("--strategy-option", action="append", default=[], metavar="KEY=VALUE", help="with --planted: the strategy's options")
    args = ap.parse_args(argv)
    if (args.root is None) == (args.planted is None):
        ap.error("give a folder of campaigns or --planted CASES, one of the two")
    if args.planted:
        df = planted_rates(args.planted, seed_list(args.seeds), args.strategy, assignments(args.strategy_option, "--strategy-option", tables=True))
    else:
        df = rates(args.root, args.strategy)
    print(summary(df))
    print("\nEach cell: the role's failure rate over all seeds, [its range over seeds], (its points per run).")


if __name__ == "__main__":
    main()

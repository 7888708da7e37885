"""Does `bo-modes`'s model predict failures on trials it was not fitted on? Issue 15 asks to show
it on held-out trials (AUC), beside the ablation that shows its use changes what is found.

    python lab/model_auc.py --planted planted --seeds 3      # every planted case of the suite
    python lab/model_auc.py runs/bench                       # every face case under a suite's --out
    python lab/model_auc.py runs/bench --cases faces-dlib-hog --folds 5
    python lab/model_auc.py runs/bench --held-out bo-modes             # the searches' next points only
    python lab/model_auc.py --planted planted-d6-k5 --seeds 2 --likelihood gaussian   # the copula on 0/1 answers too

The model is the one `bo-modes` searches with (`FailureModes._fit`: its GP on the losses' normal
scores, the failure threshold between them, and with a classifier's truth cut the sign that reads
the target's evidence on either side of it), fitted cold on the trials given, its `p_fail` scored
by the AUC for what the held-out trials did:

- planted cases (run again by ask/tell, as the suite ran them): fitted on a `bo-modes` run's first
  300 points, scored on 20,000 uniform draws of the space (the truth is the planted regions: does
  the model know where failures are, over the whole space?) and on the run's last 100 points (the
  ones the search asked next: does it know which of its own next points fail?);
- face cases (a folder of stored campaigns): each random run's 400 trials in `--folds` folds
  (fitted on the rest, scored on the fold), and each `bo-modes` run's last 100 points, fitted on
  its first 300.

`--likelihood` is `bo-modes`'s option (and, on planted cases, the search is run with it too): by
default "auto", as the search, the classification model where every loss is 0 or 1 and the copula
otherwise; "gaussian" or "dirichlet" forces one.

Beside it, a yardstick nobody here wrote, fitted on the same points and outcomes: scikit-learn's
k-nearest-neighbour classifier (k = 5, distance-weighted) on the unit cube's coordinates; and the
plainest rule, the distance to the nearest failure fitted on (nearer ranks higher). AUC 0.5 is a
model that knows nothing; a ranking by the model that beats these is what a search can use
between its failures. Last, the GP's fitted lengthscales (the shortest, and the median over the
coordinates): a model that makes a region's edges sharp by shrinking them knows little beyond
its points. Means [range] over seeds per case; a fit whose held-out set holds one outcome only
counts no AUC.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.spatial import cKDTree
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold
from sklearn.neighbors import KNeighborsClassifier
from tqdm import tqdm

from searcher.bench import select_cases
from searcher.bench.planted import ask_tell
from searcher.campaign import CampaignConfig, load_campaign
from searcher.campaign.loop import set_up
from searcher.cli.args import seed_list
from searcher.objective import FAILURE
from searcher.strategies import make_strategy
from searcher.strategies.bo import FailureModes
from searcher.strategies.bo.modes import LIKELIHOODS

FIT, NEXT, UNIFORM = 300, 100, 20_000
HELD_OUT = ("random", "bo-modes")  # the runs a folder's fits hold out: the random runs' folds, the bo-modes runs' next NEXT points


class Fitted:
    """The model, the neighbours and the nearest-failure rule, fitted once on `X`, `loss` (the model
    cold, on a copy of the unused `strategy`: no hyperparameters carried from another fold)."""

    def __init__(self, strategy: FailureModes, X: np.ndarray, loss: np.ndarray) -> None:
        judged = np.isfinite(loss)  # an unjudged trial (NaN) tells the model nothing
        X, loss = X[judged], loss[judged]
        self.model = copy.deepcopy(strategy)._fit(X, loss)
        failed = loss >= FAILURE
        self.knn = KNeighborsClassifier(n_neighbors=min(5, len(X)), weights="distance").fit(X, failed) if failed.any() else None
        self.failures = cKDTree(X[failed]) if failed.any() else None
        scales = self.model.gp.covar_module.lengthscale.detach().numpy()
        self.lengthscales = scales.reshape(-1, scales.shape[-1])[-1]  # with one GP per class, the failure class's

    def at(self, H: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """At `H`: the model's `p_fail`, the neighbours' probability of failure, minus the distance to the nearest failure."""
        near = np.zeros(len(H)) if self.knn is None else self.knn.predict_proba(H)[:, list(self.knn.classes_).index(True)]
        nearest = np.zeros(len(H)) if self.failures is None else -self.failures.query(H)[0]
        return self.model.p_fail(H), near, nearest


def _auc(failed: np.ndarray, score: np.ndarray) -> float:
    return float(roc_auc_score(failed, score)) if 0 < failed.sum() < len(failed) else float("nan")


def _aucs(failed: np.ndarray, p: np.ndarray, near: np.ndarray, nearest: np.ndarray) -> dict[str, float]:
    return {"model": _auc(failed, p), "neighbours": _auc(failed, near), "nearest failure": _auc(failed, nearest)}


def _lengths(lengthscales: np.ndarray) -> dict[str, float]:
    return {"shortest lengthscale": float(lengthscales.min()), "median lengthscale": float(np.median(lengthscales))}


def planted_rows(cases: str, seeds: list[int], budget: int = FIT + NEXT, likelihood: str = "auto") -> list[dict]:
    rows = []
    for case in tqdm([c for c in select_cases(cases) if c.kind == "planted"], desc="planted cases"):
        regions = case.regions()
        loss = partial(regions.loss, score=case.score)
        for seed in seeds:
            strategy = partial(make_strategy, "bo-modes", regions.space, seed=seed, budget=budget, likelihood=likelihood)
            X, _ = ask_tell(strategy(), loss, budget)
            U = regions.space.cube.uniform(np.random.default_rng([seed, 0xA0C]), UNIFORM)
            fitted = Fitted(strategy(), X[:FIT], loss(X[:FIT]))
            for held, H in (("uniform", U), ("next 100", X[FIT:])):
                failed = regions.region_of(H) >= 0
                rows.append({"case": case.name, "held out": held, "seed": seed, "points": len(H), "failures": int(failed.sum()),
                             **_aucs(failed, *fitted.at(H)), **_lengths(fitted.lengthscales)})
    return rows


def campaign_rows(root: Path, cases: list[str] | None, folds: int, likelihood: str = "auto",
                  strategies: tuple[str, ...] = HELD_OUT) -> list[dict]:
    rows = []
    runs = sorted(r for r in root.glob("*/runs/*-s*") if r.name.rsplit("-s", 1)[0] in strategies)
    runs = [r for r in runs if cases is None or r.parent.parent.name in cases]
    if not runs:
        raise SystemExit(f"No {' or '.join(strategies)} campaign under {root} (expected {root}/CASE/runs/STRATEGY-sSEED).")
    set_ups: dict[str, FailureModes] = {}  # one set-up per case (generator and target built once): the fit draws no seed
    for run in tqdm(runs, desc="campaigns"):
        case, name = run.parent.parent.name, run.name.rsplit("-s", 1)[0]
        if case not in set_ups:
            config = dataclasses.replace(CampaignConfig.from_dir(run), strategy="bo-modes", strategy_options={"likelihood": likelihood})
            set_ups[case] = set_up(config).strategy
        strategy = set_ups[case]
        result = load_campaign(run)
        seed = int(result.config["seed"])
        trials = result.searched
        X, loss = np.stack(trials["x"].to_numpy()), trials["loss"].to_numpy(float)
        if name == "random":
            judged = np.isfinite(loss)
            X, loss = X[judged], loss[judged]
            failed = loss >= FAILURE
            p, near, nearest, scales = np.zeros(len(X)), np.zeros(len(X)), np.zeros(len(X)), []
            for train, test in StratifiedKFold(folds, shuffle=True, random_state=seed).split(X, failed):
                fitted = Fitted(strategy, X[train], loss[train])
                p[test], near[test], nearest[test] = fitted.at(X[test])
                scales.append(fitted.lengthscales)
            lengthscales = np.median(scales, axis=0)
            held = f"random, {folds}-fold"
        else:
            fitted = Fitted(strategy, X[:FIT], loss[:FIT])
            (p, near, nearest), lengthscales = fitted.at(X[FIT:]), fitted.lengthscales
            judged = np.isfinite(loss[FIT:])
            p, near, nearest, failed = p[judged], near[judged], nearest[judged], loss[FIT:][judged] >= FAILURE
            held = "bo-modes, next 100"
        rows.append({"case": case, "held out": held, "seed": seed, "points": len(failed), "failures": int(failed.sum()),
                     **_aucs(failed, p, near, nearest), **_lengths(lengthscales)})
    return rows


def summary(df: pd.DataFrame) -> str:
    """One row per case and held-out set: the AUCs and the lengthscales, mean [range] over seeds."""
    columns = ("model", "neighbours", "nearest failure", "shortest lengthscale", "median lengthscale")
    lines = ["| case | held out | seeds | failures held out (of points) | model's AUC | neighbours' AUC | nearest failure's AUC | "
             "model's shortest lengthscale | median lengthscale |", "|---|---|---|---|---|---|---|---|---|"]
    for (case, held), g in df.groupby(["case", "held out"], sort=False):
        cells = []
        for col in columns:
            a = g[col].dropna()
            cells.append("-" if a.empty else f"{a.mean():.2f} [{a.min():.2f}-{a.max():.2f}]" if len(a) > 1 else f"{a.iloc[0]:.3f}")
        lines.append(f"| {case} | {held} | {len(g)} | {g['failures'].mean():.1f} ({g['points'].mean():.0f}) | " + " | ".join(cells) + " |")
    model, near = df["model"], df["neighbours"]
    both = model.notna() & near.notna()
    lines.append(f"\nThe model's AUC above the neighbours' in {int((model[both] > near[both]).sum())} of {int(both.sum())} fits; "
                 f"median AUC {model.median():.2f} against {near.median():.2f}.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path, nargs="?", help="a suite's --out folder (CASE/runs/STRATEGY-sSEED campaigns)")
    ap.add_argument("--planted", help="planted cases (names, or planted for all) to run again instead of reading campaigns")
    ap.add_argument("--seeds", default="3", help="with --planted: a count or a comma-separated list (default: 3)")
    ap.add_argument("--cases", help="with a folder: comma-separated case names (default: every one under it)")
    ap.add_argument("--folds", type=int, default=5, help="with a folder: folds over each random run's trials (default: 5)")
    ap.add_argument("--held-out", default=",".join(HELD_OUT),
                    help="with a folder: the random runs' folds, the bo-modes runs' next 100, or both (default: random,bo-modes)")
    ap.add_argument("--likelihood", choices=LIKELIHOODS, default="auto", help="bo-modes's model (default: auto, as the search)")
    ap.add_argument("--csv", type=Path, help="also write one row per fit here")
    args = ap.parse_args(argv)
    if (args.root is None) == (args.planted is None):
        ap.error("give a folder of campaigns or --planted CASES, one of the two")
    if args.folds < 2:
        ap.error(f"--folds must be at least 2, got {args.folds}")
    held_out = tuple(args.held_out.split(","))
    if set(held_out) - set(HELD_OUT):
        ap.error(f"--held-out takes random, bo-modes or both (comma-separated), got {args.held_out!r}")
    rows = planted_rows(args.planted, seed_list(args.seeds), likelihood=args.likelihood) if args.planted else \
        campaign_rows(args.root, args.cases.split(",") if args.cases else None, args.folds, args.likelihood, held_out)
    df = pd.DataFrame(rows)
    if args.csv:
        df.to_csv(args.csv, index=False)
    print(summary(df))


if __name__ == "__main__":
    main()

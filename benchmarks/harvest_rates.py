"""How often `bo-modes`'s points fail, by what the schedule asked them to do: the Sobol start, the
exploring points (new failure modes) and the harvesting points (inside the modes found).

    python benchmarks/suite.py --cases faces-smile-cnn,faces-dlib-hog --strategies random,bo-modes,tpe --seeds 3 --jobs 2 --under bo-modes --out runs/bench
    python benchmarks/harvest_rates.py runs/bench                      # every bo-modes campaign under it
    python benchmarks/harvest_rates.py runs/bench --strategy bo-modes-nomodel

Why: a run's failures are `sobol + explore x rate + harvest x rate`, and the suite's failures check
asks for 80% of the best peer's. Where `bo-modes` misses it, this says whether the exploring points
or the harvest fall short. A point's role comes from the campaign's stored order and the strategy's
own schedule (`FailureModes.explores`, rebuilt from the campaign's budget and options): the first
`n_init` points are Sobol, and until the first failure every point explores, as there is no mode to
harvest. (A harvesting point that found no new candidate in any mode explores instead; the stored
campaign does not say when, so it is counted as harvest.) Audit points are left out.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from searcher.campaign import load_campaign
from searcher.space import Continuous, Space
from searcher.strategies.bo import FailureModes

ROLES = ("sobol", "explore", "harvest")
SCHEDULE = ("n_init", "early", "late", "split")


def roles(trials: pd.DataFrame, config: dict) -> tuple[np.ndarray, np.ndarray]:
    """(role per searched point, failed per searched point), in the order the strategy asked them."""
    searched = trials[trials["source"] != "audit"].sort_values(["step", "idx"])
    failed = searched["failure"].to_numpy(bool)
    options = {k: v for k, v in (config.get("strategy_options") or {}).items() if k in SCHEDULE}
    schedule = FailureModes(Space([Continuous("x", 0.0, 1.0)]), budget=int(config["budget"]), **options)
    first = int(np.argmax(failed)) if failed.any() else len(failed)
    role = np.array(["sobol" if i < schedule.n_init else "explore" if i <= first or schedule.explores(i) else "harvest"
                     for i in range(len(failed))])
    return role, failed


def rates(root: Path, strategy: str = "bo-modes") -> pd.DataFrame:
    """One row per campaign `root/CASE/runs/STRATEGY-sSEED`: failures, and points and failures per role."""
    rows = []
    for run in sorted(root.glob(f"*/runs/{strategy}-s*")):
        result = load_campaign(run)
        role, failed = roles(result.trials, result.config)
        row = {"case": run.parent.parent.name, "seed": int(result.config["seed"]), "failures": int(failed.sum())}
        for r in ROLES:
            row[f"{r}_points"], row[f"{r}_failures"] = int((role == r).sum()), int(failed[role == r].sum())
        rows.append(row)
    if not rows:
        raise SystemExit(f"No {strategy} campaign under {root} (expected {root}/CASE/runs/{strategy}-sSEED).")
    return pd.DataFrame(rows)


def summary(df: pd.DataFrame) -> str:
    """A markdown table per case: mean failures, and each role's failure rate (min-max over seeds)."""
    lines = ["| case | seeds | failures | " + " | ".join(f"{r}: failure rate (points)" for r in ROLES) + " |",
             "|---|---|---|" + "---|" * len(ROLES)]
    for case, g in df.groupby("case", sort=False):
        cells = []
        for r in ROLES:
            rate = g[f"{r}_failures"] / g[f"{r}_points"].where(g[f"{r}_points"] > 0)
            span = f"{rate.min():.2f}-{rate.max():.2f}" if len(g) > 1 else f"{rate.iloc[0]:.2f}"
            cells.append(f"{g[f'{r}_failures'].sum() / max(1, g[f'{r}_points'].sum()):.2f} [{span}] ({g[f'{r}_points'].mean():.0f})")
        lines.append(f"| {case} | {len(g)} | {g['failures'].mean():.1f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path, help="a suite's --out folder (or any folder of CASE/runs/STRATEGY-sSEED campaigns)")
    ap.add_argument("--strategy", default="bo-modes", help="bo-modes or bo-modes-nomodel (default: bo-modes)")
    args = ap.parse_args(argv)
    print(summary(rates(args.root, args.strategy)))
    print("\nEach cell: the role's failure rate over all seeds, [its range over seeds], (its points per run).")


if __name__ == "__main__":
    main()

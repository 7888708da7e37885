"""What a large batch costs the default search in failures and breadth, on the suite's planted cases.

    python benchmarks/batch_quality.py                                             # every planted case, batches 4, 64 and 256, 2,000 evaluations, seed 0
    python benchmarks/batch_quality.py --cases planted-d6-k5,ball-d6-k3-v1 --seeds 0,1 --jobs 2
    python benchmarks/batch_quality.py --cases shell-d6-k4-v0.2 --batches 4,64 --strategy-option ablation.near_best=1
    python benchmarks/batch_quality.py --batches 256 --strategy bo-modes:overlap     # each batch asked before the one before is told

Each run is the suite's (`searcher.bench.planted`: ask/tell on the planted regions, no image) with
the batch size changed: `bo-modes` asked `--batches` points at a time for `--budget` evaluations.
It prints, per case and batch, failures, regions hit and effective regions (means over the seeds)
and, for each batch but the first, their ratio to the first batch's, with the seconds the asks
took. `--strategy-option KEY=VALUE` (repeatable, as `searcher bench` takes it) sets the strategy's
options, kept in each row; a strategy named `NAME:overlap` asks each batch before the one before
is told, as a campaign with `--overlap` does. Rows are appended to `--out` (CSV) as runs finish; the same command
again skips the runs already there.
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from searcher.analysis.modes import repeated, run_scores
from searcher.bench.cases import select_cases
from searcher.bench.planted import ask_tell
from searcher.cli.args import assignments
from searcher.strategies import make_strategy

FIELDS = ("case", "strategy", "options", "batch", "seed", "budget", "failures", "breadth", "effective_breadth", "ask_seconds")


def run(case_name: str, strategy: str, batch: int, seed: int, budget: int, options: str = "{}") -> dict[str, Any]:
    """One run: the suite's scores of `strategy` (with `options`, as JSON) asked `batch` points at a time."""
    case = select_cases(case_name)[0]
    regions = case.regions()
    name, _, how = strategy.partition(":")
    s = make_strategy(name, regions.space, seed=seed, budget=budget, **json.loads(options))
    X, times = ask_tell(s, lambda X: regions.loss(X, score=case.score), budget, batch, overlap=how == "overlap")
    again = repeated(X)
    scores = run_scores(np.where(again, -1, regions.region_of(X)), int(again.sum()), int(case.options["k"]))
    return {"case": case_name, "strategy": strategy, "options": options, "batch": batch, "seed": seed, "budget": budget, "failures": scores["failures"],
            "breadth": scores["breadth"], "effective_breadth": scores["effective_breadth"], "ask_seconds": sum(times)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="planted", help="suite case names, comma-separated, or planted (default)")
    ap.add_argument("--strategy", default="bo-modes", help="the strategy, or NAME:overlap (default: bo-modes)")
    ap.add_argument("--batches", default="4,64,256", help="comma-separated; the first is the reference (default: 4,64,256)")
    ap.add_argument("--seeds", default="0", help="comma-separated (default: 0)")
    ap.add_argument("--budget", type=int, default=2000)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--strategy-option", action="append", default=[], metavar="KEY=VALUE",
                    help="a strategy option (repeatable); TABLE.KEY=VALUE sets a key of a table option, e.g. ablation.near_best=1")
    ap.add_argument("--out", type=Path, default=Path("runs/batch_quality.csv"))
    args = ap.parse_args()
    options = json.dumps(assignments(args.strategy_option, "--strategy-option", tables=True), sort_keys=True)
    cases = [c.name for c in select_cases(args.cases) if c.kind == "planted"]
    batches = [int(b) for b in args.batches.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    have = []
    if args.out.exists():
        with args.out.open() as fh:
            have = [{**r, "options": r.get("options") or "{}"} for r in csv.DictReader(fh)]
    done = {(r["case"], r["strategy"], int(r["batch"]), int(r["seed"]), int(r["budget"]), r["options"]) for r in have}
    todo = [(c, args.strategy, b, s, args.budget, options) for c in cases for s in seeds for b in batches
            if (c, args.strategy, b, s, args.budget, options) not in done]
    rows = [{k: r[k] for k in FIELDS} for r in have]
    with ProcessPoolExecutor(args.jobs) as pool, args.out.open("a", newline="") as fh:
        writer = csv.DictWriter(fh, FIELDS)
        if not have:
            writer.writeheader()
        start = time.perf_counter()
        for row in pool.map(run, *zip(*todo)) if todo else ():
            writer.writerow(row)
            fh.flush()
            rows.append(row)
            print(f"{row['case']} batch {row['batch']} seed {row['seed']}: {row['failures']} failures, {row['breadth']} regions "
                  f"({time.perf_counter() - start:.0f} s)", flush=True)
    print(f"\n| case | batch | failures | regions | effective | vs batch {batches[0]}: failures, regions, effective | ask s |")
    print("|---|---|---|---|---|---|---|")
    for c in cases:
        means = {}
        for b in batches:
            mine = [r for r in rows if r["case"] == c and r["strategy"] == args.strategy and int(r["batch"]) == b
                    and int(r["budget"]) == args.budget and int(r["seed"]) in seeds and r["options"] == options]
            if mine:
                means[b] = [np.mean([float(r[k]) for r in mine]) for k in ("failures", "breadth", "effective_breadth", "ask_seconds")]
        for b, (f, br, eff, sec) in means.items():
            ref = means.get(batches[0])
            ratio = "" if ref is None or b == batches[0] else ", ".join(
                f"{x / y:.2f}" if y else "-" for x, y in zip((f, br, eff), ref[:3]))
            print(f"| {c} | {b} | {f:.1f} | {br:.1f} | {eff:.2f} | {ratio} | {sec:.0f} |")


if __name__ == "__main__":
    main()

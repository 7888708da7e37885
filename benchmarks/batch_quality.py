"""What a large batch costs the default search in failures and breadth, on the suite's planted cases
and on face cases.

    python benchmarks/batch_quality.py                                             # every planted case, batches 4, 64 and 256, 2,000 evaluations, seed 0
    python benchmarks/batch_quality.py --cases planted-d6-k5,ball-d6-k3-v1 --seeds 0,1 --jobs 2
    python benchmarks/batch_quality.py --cases shell-d6-k4-v0.2 --batches 4,64 --strategy-option ablation.near_best=1
    python benchmarks/batch_quality.py --batches 256 --strategy bo-modes:overlap     # each batch asked before the one before is told
    python benchmarks/batch_quality.py --cases faces-gender-cnn,faces-haar-face --seeds 0,1,2   # face cases: campaigns under --dir

Each run is the suite's (`searcher.bench.planted`: ask/tell on the planted regions, no image) with
the batch size changed: `bo-modes` asked `--batches` points at a time for `--budget` evaluations.
It prints, per case and batch, failures, regions hit and effective regions (means over the seeds)
and, for each batch but the first, their ratio to the first batch's, with the seconds the asks
took. `--strategy-option KEY=VALUE` (repeatable, as `searcher bench` takes it) sets the strategy's
options, kept in each row; a strategy named `NAME:overlap` asks each batch before the one before
is told, as a campaign with `--overlap` does. A face case named in `--cases` runs as campaigns
(`searcher.compare`, resumable under `--dir`), with random search beside them at the largest
batch: its breadth is failure modes, the 16 clusters of random search's failures, as the suite
scores face cases, and random search's means are printed above the batches'. Rows are appended to
`--out` (CSV) as runs finish; the same command again skips the runs already there.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import itertools
import json
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from searcher.analysis.modes import N_MODES, mode_labels, one_hot_blocks, repeated, run_scores
from searcher.bench.cases import select_cases
from searcher.bench.planted import ask_tell
from searcher.campaign import load_campaign
from searcher.cli.args import assignments
from searcher.errors import ParameterError
from searcher.outputs import check_output_file
from searcher.strategies import make_strategy
from searcher.studies.compare import compare

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


def campaign_rows(case_name: str, strategy: str, batches: list[int], seeds: list[int], budget: int, options: str,
                  directory: Path) -> list[dict[str, Any]]:
    """A face case's runs: `strategy` at every batch and random search at the largest, as resumable
    `searcher.compare` campaigns under `directory/CASE`, scored together as the suite scores a
    campaign case: failures, and modes hit among the 16 Ward clusters of random search's failures,
    cross-fitted by seed (`searcher.analysis.modes.mode_labels`)."""
    o = select_cases(case_name)[0].options
    name, _, how = strategy.partition(":")
    common = {"generator": o["generator"], "target": o["target"], "seeds": seeds, "budget": budget, "progress": False, "loss": o["loss"],
              "generator_options": dict(o["generator_options"]), "target_options": dict(o["target_options"]),
              "truth_column": o["truth_column"], "cut": o["cut"]}
    runs = [("random", max(batches), "{}", directory / case_name / f"random-b{max(batches)}")]
    tag = "" if options == "{}" else "-" + hashlib.blake2b(options.encode(), digest_size=4).hexdigest()  # options as a folder name
    runs += [(strategy, b, options, directory / case_name / f"{strategy.replace(':', '-')}{tag}-b{b}") for b in batches]
    for s, b, opts, out in runs:
        plain = s.partition(":")[0]
        compare(out, strategies=[plain], batch=b, strategy_options=json.loads(opts), overlap=how == "overlap" and s == strategy, **common)
    keys = [(s, b, opts, seed, out / "runs" / f"{s.partition(':')[0]}-s{seed}") for s, b, opts, out in runs for seed in seeds]
    trials = [load_campaign(path).trials for *_, path in keys]
    labels = mode_labels(trials, [s.partition(":")[0] for s, *_ in keys], N_MODES, one_hot_blocks(o["generator"], o), [k[3] for k in keys])
    rows = []
    for (s, b, opts, seed, _), t, lab in zip(keys, trials, labels):
        scores = run_scores(lab, int(repeated(t["x"].tolist()).sum()), N_MODES)
        rows.append({"case": case_name, "strategy": s, "options": opts, "batch": b, "seed": seed, "budget": budget, "failures": scores["failures"],
                     "breadth": scores["breadth"], "effective_breadth": scores["effective_breadth"], "ask_seconds": float("nan")})
    return rows


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
    ap.add_argument("--dir", type=Path, default=Path("runs/batch_quality"), help="where a face case's campaigns are written (resumable)")
    args = ap.parse_args()
    try:
        options = json.dumps(assignments(args.strategy_option, "--strategy-option", tables=True), sort_keys=True)
        chosen = select_cases(args.cases)
        check_output_file(args.out)  # appended to: a folder or a store there is refused before any run
    except ParameterError as exc:
        ap.error(str(exc))
    cases = [c.name for c in chosen]
    batches = [int(b) for b in args.batches.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    have = []
    if args.out.exists():
        with args.out.open() as fh:
            have = [{**r, "options": r.get("options") or "{}"} for r in csv.DictReader(fh)]
    done = {(r["case"], r["strategy"], int(r["batch"]), int(r["seed"]), int(r["budget"]), r["options"]) for r in have}
    planted = {c.name for c in chosen if c.kind == "planted"}
    todo = [(c, args.strategy, b, s, args.budget, options) for c in cases for s in seeds for b in batches
            if c in planted and (c, args.strategy, b, s, args.budget, options) not in done]
    campaigns = [c for c in cases if c not in planted and any((c, args.strategy, b, s, args.budget, options) not in done
                                                              for s in seeds for b in batches)]
    rows = [{k: r[k] for k in FIELDS} for r in have]
    with ProcessPoolExecutor(args.jobs) as pool, args.out.open("a", newline="") as fh:
        writer = csv.DictWriter(fh, FIELDS)
        if not have:
            writer.writeheader()
        start = time.perf_counter()
        finished = pool.map(run, *zip(*todo)) if todo else iter(())
        for row in itertools.chain(finished, *(campaign_rows(c, args.strategy, batches, seeds, args.budget, options, args.dir)
                                              for c in campaigns)):
            if (row["case"], row["strategy"], int(row["batch"]), int(row["seed"]), int(row["budget"]), row["options"]) in done:
                continue  # a campaign case's rows are scored together: the ones already there stay as they were
            writer.writerow(row)
            fh.flush()
            rows.append(row)
            print(f"{row['case']} {row['strategy']} batch {row['batch']} seed {row['seed']}: {row['failures']} failures, {row['breadth']} regions "
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
        uniform = [r for r in rows if r["case"] == c and r["strategy"] == "random" and int(r["budget"]) == args.budget and int(r["seed"]) in seeds]
        if uniform and args.strategy != "random":
            print(f"| {c} | random, batch {uniform[0]['batch']} | " + " | ".join(
                f"{np.mean([float(r[k]) for r in uniform]):.2f}" for k in ("failures", "breadth", "effective_breadth")) + " | | |")
        for b, (f, br, eff, sec) in means.items():
            ref = means.get(batches[0])
            ratio = "" if ref is None or b == batches[0] else ", ".join(
                f"{x / y:.2f}" if y else "-" for x, y in zip((f, br, eff), ref[:3]))
            print(f"| {c} | {b} | {f:.1f} | {br:.1f} | {eff:.2f} | {ratio} | {sec:.0f} |")


if __name__ == "__main__":
    main()

"""`searcher compare`: strategies x seeds x alpha as campaigns, compared on failures found and breadth."""

from __future__ import annotations

import argparse

from searcher.cli.args import assignments, number_list, seed_list
from searcher.defaults import DEFAULT_BATCH, DEFAULT_BUDGET
from searcher.objective import LOSSES
from searcher.outputs import check_output_dir
from searcher.strategies import DEFAULT_STRATEGY

HELP = "run strategies x seeds x alpha as campaigns and compare failures found and their breadth"


def resume_hint(args: argparse.Namespace) -> str:
    """What to type after Ctrl-C."""
    return "Finished campaigns and trials are stored; the same command again resumes them."


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--generator", default="faces", help="generator name (default: faces)")
    p.add_argument("--target", default="dlib-cnn", help="target name (default: dlib-cnn)")
    p.add_argument("--strategies", default=f"random,{DEFAULT_STRATEGY}", help=f"comma-separated (default: random,{DEFAULT_STRATEGY})")
    p.add_argument("--seeds", default="5", help="a count (5 -> seeds 0..4) or a comma-separated list (3, -> seed 3 alone) (default: 5)")
    p.add_argument("--alphas", help="comma-separated alpha values for bo (default: its own, 0.6)")
    p.add_argument("--budget", type=int, default=DEFAULT_BUDGET, help=f"evaluations per campaign (default: {DEFAULT_BUDGET})")
    p.add_argument("--batch", type=int, default=DEFAULT_BATCH, help=f"points proposed and evaluated together (default: {DEFAULT_BATCH})")
    p.add_argument("--parallel", type=int, default=1, help="campaigns at once, on Ray when > 1 (default: 1)")
    p.add_argument("--fix", action="append", default=[], metavar="NAME=VALUE", help="hold a parameter at a value (repeatable)")
    p.add_argument("--option", "--target-option", dest="option", action="append", default=[], metavar="KEY=VALUE",
                   help="a target option (repeatable)")
    p.add_argument("--generator-option", action="append", default=[], metavar="KEY=VALUE", help="a generator option (repeatable)")
    p.add_argument("--strategy-option", action="append", default=[], metavar="KEY=VALUE",
                   help="an option of every strategy compared (repeatable; e.g. restarts=false for cmaes, "
                        "ablation.probe=true for bo-modes: TABLE.KEY=VALUE sets a key of a table option)")
    p.add_argument("--truth", "--truth-column", dest="truth", metavar="COLUMN",
                   help="classify targets: the truth column their label is judged against (default: the target's own)")
    p.add_argument("--cut", type=float, metavar="X", help="classify targets: truth >= X is the second label (default: the target's own)")
    p.add_argument("--loss", choices=LOSSES, default="zero-one", help="classify targets: 0/1 or 1 - p(true label) (default: zero-one)")
    p.add_argument("--out", default="runs/compare", help="output directory (default: runs/compare)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")


def run(args: argparse.Namespace) -> int:
    from searcher.studies.compare import compare

    check_output_dir(args.out, command="searcher compare")
    seeds = seed_list(args.seeds)
    alphas = number_list(args.alphas, float, "--alphas") if args.alphas else [None]
    table = compare(args.out, generator=args.generator, target=args.target, strategies=args.strategies.split(","),
                    seeds=seeds, alphas=alphas, budget=args.budget, batch=args.batch, parallel=args.parallel,
                    progress=not args.no_progress, fix=assignments(args.fix, "--fix"), target_options=assignments(args.option, "--option"),
                    generator_options=assignments(args.generator_option, "--generator-option"),
                    strategy_options=assignments(args.strategy_option, "--strategy-option", tables=True),
                    truth_column=args.truth, cut=args.cut, loss=args.loss)
    cols = [c for c in ("failures", "repeats", "failure_rate", "regions_found", "modes", "mean_pairwise") if c in table]
    print(table.groupby(["strategy", table["alpha"].fillna("-")])[cols].agg(["mean", "std"]).round(3).to_string())
    print(f"written: {args.out}/compare.csv, curves.csv, failures_vs_evaluations.png")
    return 0

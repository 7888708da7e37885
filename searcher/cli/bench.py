"""`searcher bench`: the benchmark suite, strategies scored together on planted landscapes and face campaigns."""

from __future__ import annotations

import argparse

from searcher.cli.args import assignments, seed_list
from searcher.defaults import DEFAULT_BATCH, DEFAULT_BUDGET
from searcher.outputs import check_output_dir
from searcher.strategies import DEFAULT_STRATEGY

HELP = "score search strategies together on the benchmark suite (planted landscapes and face campaigns)"
DESCRIPTION = ("Runs every case x strategy x seed of the suite (or the --cases given) and writes OUT/runs.csv (one row per run, "
               "appended as each finishes: the same command again resumes), suite.csv (means and sd over seeds), suite.md (one row "
               "per case: failures / breadth / effective breadth per strategy, and whether --under finds >= 80% of the best peer's "
               "failures and >= 90% of the broadest strategy's breadth) and suite.png. Strategies whose optional package is missing "
               "are skipped with a line saying how to install it. --list shows the cases.")


def resume_hint(args: argparse.Namespace) -> str:
    """What to type after Ctrl-C."""
    return "Finished runs are in OUT/runs.csv and campaigns are stored; the same command again resumes."


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cases", help="comma-separated case names, planted / campaign for every suite case of that kind, or held-out for the cases kept "
                        "aside from tuning (default: the whole suite; see --list)")
    p.add_argument("--strategies", help="comma-separated (default: random,bo,bo-modes,bo-modes-nomodel,tpe,cmaes,ax,cmame, those available)")
    p.add_argument("--seeds", default="5", help="a count (5 -> seeds 0..4) or a comma-separated list (3, -> seed 3 alone) (default: 5)")
    p.add_argument("--budget", type=int, default=DEFAULT_BUDGET, help=f"evaluations per run, in batches of {DEFAULT_BATCH} (default: {DEFAULT_BUDGET})")
    p.add_argument("--jobs", type=int, default=1, help="planted runs at once in processes, campaigns at once on Ray (default: 1)")
    p.add_argument("--strategy-option", action="append", default=[], metavar="KEY=VALUE",
                   help="an option for the strategies that take it (repeatable), e.g. late=0.05 for bo-modes and its ablation, or "
                        "ablation.probe=true (a key of a table option): a variant scored on the suite; give it its own --out")
    p.add_argument("--under", default=DEFAULT_STRATEGY, help=f"the strategy suite.md checks (default: {DEFAULT_STRATEGY})")
    p.add_argument("--out", default="runs/bench", help="output directory (default: runs/bench)")
    p.add_argument("--list", action="store_true", help="print the cases with their options, whether the defaults were tuned on them, "
                   "and the held-out ones")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")


def run(args: argparse.Namespace) -> int:
    from searcher.bench import DEFAULT_STRATEGIES, HELD_OUT, SUITE, bench, select_cases

    cases = select_cases(args.cases)
    if args.list:
        shown = cases if args.cases else [*SUITE, *HELD_OUT]
        held = {c.name for c in HELD_OUT}
        width = max(len(c.name) for c in shown)
        for case in shown:
            mark = "tuned" if case.tuned else "held-out" if case.name in held else ""
            print(f"  {case.name:<{width}}  {case.kind:<8}  {mark:<8}  {case.describe()}")
        print("tuned: the defaults were tuned on this case; every default was chosen on the suite's scores, and the held-out "
              "cases (--cases held-out) are kept aside to check that they generalise")
        return 0
    check_output_dir(args.out, command="searcher bench")
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()] if args.strategies else DEFAULT_STRATEGIES
    result = bench(args.out, cases=cases, strategies=strategies, seeds=seed_list(args.seeds), budget=args.budget, jobs=args.jobs,
                   progress=not args.no_progress, under=args.under,
                   strategy_options=assignments(args.strategy_option, "--strategy-option", tables=True))
    print(result.summary())
    print(f"written: {args.out}/runs.csv, suite.csv, suite.md, suite.png")
    return 0

"""What exploring at random can buy on the planted cases: could any split of the budget between
uniform exploring points and a perfect harvest pass both of the suite's checks?

    python benchmarks/suite.py --cases planted --strategies random,bo,bo-modes,bo-modes-nomodel,tpe,cmaes,cmame --seeds 5 --jobs 2 --out runs/bench
    python lab/breadth_bound.py runs/bench            # reads runs.csv; 1-2 min

A search that explores and harvests spends `n` points finding regions and the rest filling them.
Where the target answers 0/1 an exploring point is told nothing about where an unfound region
lies, and `n` uniform points hit, on average, `sum_r 1 - (1 - p_r)^n` of the regions, `p_r` the
share of the space region `r` fills (estimated here from `--draws` uniform points of the cube,
seeded). The breadth check asks for 90% of the broadest strategy's regions hit (and of the
broadest effective regions, which are fewer, and which an even harvest of the regions found can at
best match), so it needs the smallest `n` at which that expectation reaches the bar; the failures check asks for 80% of the
best peer's failures, and a harvest that never misses finds at most `budget - n` more beside the
`n p` the exploring points hit. Where the two cannot both hold, no search that explores no better
than uniform draws passes the case, whatever its harvest: it needs exploring points that find
regions more often than uniform ones (a confidence to follow, as the graded cases give, or a prior
on where regions lie). The table also sets what `bo-modes`'s exploring points found against what
as many uniform points would: the regions it hit beside `E[hit](n)` at its own exploring count
(the Sobol start, the points before its first failure and those its schedule explores), run by
run from runs.csv. A case whose `bo-modes` hits more than that explores better than uniform.

    python lab/breadth_bound.py runs/bench --explorers cmame,cmaes,random,bo-modes --jobs 2   # the measured explorers too

Uniform points are not the best explorer measured. `--explorers` asks the same question of the
strategies named, exploring as their own runs did: each of their seeds in the folder is run again
(point for point as the suite ran it, with the folder's options; the table says where a run again
does not score as stored), and the regions a strategy's runs had hit by point `n`, averaged over
the seeds, stand in for the uniform expectation. The smallest `n` at which they reach the breadth
bar leaves `budget - n` points for a harvest that never misses and spreads its failures evenly
over the regions found (so its effective regions equal its regions), beside the failures those `n`
points found. A case that no explorer passes this way is one where no search that finds regions
as fast as a strategy measured here, and harvests perfectly after, passes both checks.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from searcher.bench.bounds import DRAWS, bound, bound_markdown, explorer_bound, explorer_curves, explorer_markdown
from searcher.bench.store import read_runs


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path, help="a suite's --out folder holding the planted cases' runs.csv")
    ap.add_argument("--under", default="bo-modes", help="the strategy whose exploring points are set against uniform ones")
    ap.add_argument("--draws", type=int, default=DRAWS, help=f"uniform points per case for the regions' volumes (default: {DRAWS:,})")
    ap.add_argument("--explorers", default="", help="strategies of the folder whose runs are run again to explore as they did "
                    "(comma-separated, e.g. cmame,cmaes,random,bo-modes)")
    ap.add_argument("--jobs", type=int, default=1, help="processes for --explorers (default: 1)")
    args = ap.parse_args(argv)
    runs = read_runs(args.root / "runs.csv")
    if runs.empty:
        raise SystemExit(f"No runs in {args.root / 'runs.csv'}: run the suite's planted cases into {args.root} first.")
    explorers = [e for e in args.explorers.split(",") if e]
    missing = sorted(set(explorers) - set(runs["strategy"]))
    if missing:
        raise SystemExit(f"--explorers {', '.join(missing)}: no runs of them in {args.root / 'runs.csv'} "
                         f"(its strategies: {', '.join(sorted(runs['strategy'].unique()))}).")
    print(bound_markdown(bound(runs, args.draws, args.under), args.under))
    print("\nbreadth bar: 90% of the broadest strategy's regions hit (its name);"
          " failures bar: 80% of the best peer's failures; uniform points for the breadth bar: the fewest whose"
          " expected regions hit reach it; failures then, at most: the rest of the budget harvested without a miss,"
          " plus what those points hit.")
    if explorers:
        options_file = args.root / "options.json"
        options = json.loads(options_file.read_text()) if options_file.exists() else {}
        print("\n" + explorer_markdown(explorer_bound(runs, explorer_curves(runs, explorers, options, args.jobs))))
        print("\nper explorer: the fewest points at which its runs had hit the breadth bar's regions, on average over"
              " their seeds, and the failures then at most (the rest of the budget harvested without a miss, evenly"
              " over the regions found, plus those the points found); bold: both checks within reach.")


if __name__ == "__main__":
    main()

"""The public benchmark suite (issue 15): search strategies scored together on many cases.

    python benchmarks/suite.py                       # the whole SUITE: random, bo, bo-modes, bo-modes-nomodel, tpe, cmaes, ax, cmame x 5 seeds x 400
    python benchmarks/suite.py --list                # the cases, their options, those the defaults were tuned on, and the held-out ones
    python benchmarks/suite.py --cases held-out --strategies random,bo,bo-modes,bo-modes-nomodel,tpe,cmaes,cmame --jobs 2 --out runs/held-out
    python benchmarks/suite.py --cases planted-d6-k5,ball-d6-k3-v1 --strategies random,bo --seeds 2 --jobs 2
    python benchmarks/suite.py --strategies random,tpe,cmaes,bo --under bo --out runs/bench

Every flag is `searcher bench`'s (this script passes them through): planted cases run by ask/tell in
seconds to minutes each (`--jobs N` processes), the face campaigns take hours. Interrupted, the same
command resumes from OUT/runs.csv. Writes OUT/runs.csv, suite.csv, suite.md and suite.png. The
held-out cases (`searcher.bench.HELD_OUT`: the planted specifications with other regions, and two
pairings of generator and target no suite case has) are for reporting only: no default is chosen
on them.
"""

from __future__ import annotations

import sys

from searcher.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", *sys.argv[1:]]))

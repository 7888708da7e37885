"""The benchmark suite: search strategies scored together on many cases (`searcher bench`,
`searcher.bench(...)`).

    bench("runs/bench")                                           # the whole SUITE, 7 strategies x 5 seeds x 400
    bench("runs/b", cases=["planted-d6-k5", "ball-d6-k3-v1"], strategies=["random", "bo"], seeds=2)
    bench("runs/held-out", cases="held-out")                       # the cases kept aside from tuning, to report on

`cases.py` holds the cases (`Case`, `SUITE`, and `HELD_OUT`, kept aside to check that defaults
chosen on the suite generalise), the scores of one run (failures, repeats, breadth, effective breadth)
are `searcher.analysis.modes`'s, `planted.py` and `campaigns.py` run one planted case by
ask/tell and one campaign case through `searcher.compare`, `store.py` keeps `runs.csv` (the
resume log), `table.py` writes suite.csv and suite.md with the two checks of a strategy under test
and how often they survive a redraw of the seeds (`resampled(result.runs, case, under)`), and
`run.py` ties them together; the figure is `searcher.figures.bench`.
"""

from searcher.analysis.modes import breadth, effective_breadth
from searcher.bench.cases import HELD_OUT, SUITE, Case, select_cases
from searcher.bench.run import DEFAULT_STRATEGIES, SuiteResult, bench
from searcher.bench.table import resampled
from searcher.packages import answer_calls

__all__ = ["DEFAULT_STRATEGIES", "HELD_OUT", "SUITE", "Case", "SuiteResult", "bench", "breadth", "effective_breadth", "resampled", "select_cases"]

answer_calls(__name__, bench)

"""The defaults that more than one layer reads, each assigned here and nowhere else: a campaign's
budget, its ceiling and batch, when `overlap` starts, the most workers (read by `CampaignConfig`, `compare`, `bench`, the CLI's flags and bo-modes's
schedule). The number of failure modes is `searcher.analysis.modes.N_MODES`; the failure threshold
is `searcher.objective.FAILURE`.
"""

__all__ = ["DEFAULT_BATCH", "DEFAULT_BUDGET", "MAX_BUDGET", "MAX_WORKERS", "OVERLAP_AFTER"]

DEFAULT_BUDGET = 400  # evaluations per campaign (and per benchmark run)
DEFAULT_BATCH = 4  # points proposed and evaluated together
OVERLAP_AFTER = 10
"""With `overlap`, the batches evaluated in turn before each is evaluated while the next is asked:
one batch behind is then at most a tenth of what the search knows (read by the campaign loop and
the benchmark suite's `ask_tell`)."""
MAX_BUDGET = 10**9
"""The largest budget a campaign takes: a billion evaluations is years of any target; a larger
number is a typo (or `10**30`), refused before anything is written rather than run until killed."""
MAX_WORKERS = 4096
"""The most evaluation workers (Ray actors) a campaign starts: more than a large cluster holds."""

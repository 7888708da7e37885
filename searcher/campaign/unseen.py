"""What a campaign's uniform draws say about the failure modes it may have missed.

A count of the modes a campaign missed cannot be read off a sample of a campaign's size: modes no
draw hit leave no trace, and Chao1's 95% interval, even given every failure's true region, holds
the planted count in far fewer campaigns than it promises (`lab/missing_modes.py`,
docs/results.md#the-benchmark-suite). What uniform draws do bound is how large a mode they could
have missed: `n` independent draws all miss a mode filling a share `v` of the space with
probability `(1 - v)^n`, so a mode of at least `1 - (1 - confidence)^(1/n)` would have been hit by
one of them with that confidence. The draws are the campaign's audit sample (`--audit`), or every
trial of a uniform strategy (random, sobol); an adaptive search's own points say nothing of the
kind, because it chose where to look.
"""

from __future__ import annotations

import pandas as pd

from searcher.causal import UNIFORM_STRATEGIES
from searcher.validation import check_int, check_number

__all__ = ["audit_judged", "missed_share", "uniform_draws", "unseen_sentence"]


def audit_judged(trials: pd.DataFrame) -> int:
    """The audit sample's trials that got a judgement (what `Store.tally` counts in SQLite)."""
    return int((trials["source"].eq("audit") & trials["loss"].notna()).sum())


def uniform_draws(strategy: str | None, judged: int, audited: int) -> int:
    """The judged trials that are uniform draws: all of them for a uniform strategy, else the audit sample's."""
    return judged if strategy in UNIFORM_STRATEGIES else audited


def missed_share(n: int, confidence: float = 0.95) -> float:
    """The share of the space a failure mode may fill and still be missed by all of `n` uniform
    draws, with probability `1 - confidence`: `1 - (1 - confidence)^(1/n)` (1.0 with no draw)."""
    n = check_int("n", n, 0)
    confidence = check_number("confidence", confidence, 0.0, 1.0, open_low=True, open_high=True)
    return 1.0 if n == 0 else 1.0 - (1.0 - confidence) ** (1.0 / n)


def unseen_sentence(strategy: str | None, judged: int, audited: int) -> str:
    """One sentence for a campaign's summary: how large a failure mode its uniform draws could have
    missed, or that it has none and how to get them."""
    n = uniform_draws(strategy, judged, audited)
    if not n:
        return ("No uniform draws, so nothing bounds the failure modes this search may have missed: "
                "`--audit 0.1` spends a tenth of the budget on them.")
    who = f"the {strategy} search's" if strategy in UNIFORM_STRATEGIES else "the audit sample's"
    return (f"A failure mode filling at least {missed_share(n):.2%} of the space would have been hit, with 95% probability, by "
            f"one of {who} {n} uniform draws; smaller ones may be missing, and their number cannot be estimated from the draws.")

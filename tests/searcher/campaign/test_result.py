"""`CampaignResult.searched`: the strategy's own trials, in the order it asked them."""

from pathlib import Path

import pandas as pd

from searcher.campaign.result import CampaignResult


def test_searched_leaves_the_audit_sample_out_and_orders_by_step_then_index():
    trials = pd.DataFrame({"step": [1, 0, 1, 0, 1], "idx": [1, 1, 0, 0, 2],
                           "source": ["search", "search", "search", "search", "audit"], "loss": [0.1, 0.2, 0.3, 0.4, 0.5]})
    searched = CampaignResult(Path("."), trials).searched
    assert searched["loss"].tolist() == [0.4, 0.2, 0.3, 0.1]

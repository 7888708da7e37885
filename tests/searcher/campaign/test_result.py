"""`CampaignResult.searched`: the strategy's own trials, in the order it asked them."""

from pathlib import Path

import pandas as pd

from searcher.campaign.result import CampaignResult


def test_searched_leaves_the_audit_sample_out_and_orders_by_step_then_index():
    trials = pd.DataFrame({"step": [1, 0, 1, 0, 1], "idx": [1, 1, 0, 0, 2],
                           "source": ["search", "search", "search", "search", "audit"], "loss": [0.1, 0.2, 0.3, 0.4, 0.5]})
    searched = CampaignResult(Path("."), trials).searched
    assert searched["loss"].tolist() == [0.4, 0.2, 0.3, 0.1]


def test_a_run_reads_its_trials_only_when_asked_and_counts_its_summary_in_sqlite(tmp_path):
    """A run's result loads no trial to print its summary; the counts SQLite gives are those of the
    loaded trials (target errors and failures included), and `.trials` is the stored campaign."""
    from searcher.campaign import Campaign, load_campaign

    result = Campaign(generator="planted", target="planted", strategy="random", batch=20, budget=100, seed=0, out=str(tmp_path / "c"),
                      target_options={"error_rate": 0.3}).run(progress=False)
    assert result._trials is None
    lazy = result.summary()
    assert result._trials is None
    loaded = load_campaign(tmp_path / "c")
    assert lazy.splitlines()[:2] == loaded.summary().splitlines()[:2]
    t = loaded.trials
    assert 0 < t["error"].notna().sum() < 100 and (t["loss"] >= 1).sum() > 0  # both counts are exercised
    assert f"{(t['loss'] >= 1).sum()} failures" in lazy and f"{t['error'].notna().sum()} target errors" in lazy
    pd.testing.assert_frame_equal(result.trials, t)

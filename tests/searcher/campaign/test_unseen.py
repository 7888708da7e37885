"""What a campaign's uniform draws bound about the failure modes it may have missed."""

import numpy as np
import pytest

from searcher.campaign.unseen import missed_share, unseen_sentence
from searcher.errors import ParameterError


@pytest.mark.parametrize("n", [20, 400])
def test_a_mode_of_the_missed_share_is_hit_by_one_of_n_uniform_draws_95_times_in_100(n):
    """Simulated: a box filling `missed_share(n)` of a 5-D cube, and 4,000 samples of `n` uniform
    draws; the share of samples with a draw inside it is 95% (binomial sd 0.34%)."""
    side = missed_share(n) ** (1 / 5)
    rng = np.random.default_rng(0)
    hit = [(rng.random((n, 5)) < side).all(axis=1).any() for _ in range(4000)]
    assert abs(np.mean(hit) - 0.95) < 0.015


def test_no_draw_bounds_nothing_and_a_bad_count_is_named():
    assert missed_share(0) == 1.0
    with pytest.raises(ParameterError, match="-3"):
        missed_share(-3)


def test_the_sentence_counts_a_uniform_strategys_trials_or_the_audit_sample_and_says_how_to_get_one():
    assert "random search's 400 uniform draws" in unseen_sentence("random", 400, 0) and "sobol search's" in unseen_sentence("sobol", 9, 0)
    assert "0.75%" in unseen_sentence("random", 400, 0)
    assert "audit sample's 40 uniform draws" in unseen_sentence("bo-modes", 400, 40)
    assert "--audit" in unseen_sentence("bo-modes", 400, 0)


def test_a_campaigns_summary_bounds_what_its_audit_sample_could_have_missed(tmp_path):
    """A `bo-modes` campaign with an audit sample of a quarter says how large a mode those draws
    bound, counted from the store as from the loaded trials."""
    from searcher.campaign import Campaign, load_campaign

    result = Campaign(generator="planted", target="planted", strategy="bo-modes", batch=8, budget=40, seed=0, audit=0.25,
                      out=str(tmp_path / "c")).run(progress=False)
    audited = int(load_campaign(tmp_path / "c").trials["source"].eq("audit").sum())
    assert audited == 10
    assert f"{missed_share(10):.2%} of the space" in result.summary() and "audit sample's 10 uniform draws" in result.summary()
    assert result.summary().splitlines()[:2] == load_campaign(tmp_path / "c").summary().splitlines()  # the run adds its speed

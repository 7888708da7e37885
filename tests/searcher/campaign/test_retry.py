"""A resumed campaign evaluates again the trials that ended in a target error (the service's fault,
never the classifier's), at most `retries` times each, in place: no trial is added or lost."""

import dataclasses

import pandas as pd
import pytest

from searcher.campaign import Campaign, load_campaign
from searcher.cli import main
from searcher.errors import ParameterError
from searcher.testing.planted import PlantedTarget

PLANTED = {"generator": "planted", "target": "planted", "strategy": "random", "budget": 40, "batch": 8, "seed": 0,
           "target_options": {"error_rate": 0.3}}


def _answered_now(monkeypatch):
    """The service is back: the planted target stops injecting errors (the same model otherwise)."""
    real = PlantedTarget.predict

    def predict(self, images):
        self.error_rate = 0.0
        return real(self, images)

    monkeypatch.setattr(PlantedTarget, "predict", predict)


def test_resume_retries_errors_in_place_and_tells_the_strategy(tmp_path, monkeypatch, capsys):
    out = tmp_path / "c"
    first = Campaign(**PLANTED, out=str(out)).run(progress=False)
    errored = first.trials[first.trials["error"].notna()]
    assert 5 <= len(errored) < 40 and errored["loss"].isna().all()

    _answered_now(monkeypatch)
    assert main(["hunt", "--resume", str(out), "--no-progress"]) == 0
    assert f"{len(errored)} trials that had ended in a target error were evaluated again; {len(errored)} got an answer" \
        in capsys.readouterr().out
    after = load_campaign(out).trials
    assert len(after) == 40 and not after[["step", "idx"]].duplicated().any()
    again = after.set_index(["step", "idx"]).loc[list(zip(errored["step"], errored["idx"]))]
    assert again["error"].isna().all() and again["loss"].notna().all() and (again["attempts"] == 2).all()
    clean = Campaign(**{**PLANTED, "target_options": {}}, out=str(tmp_path / "clean")).run(progress=False).trials
    pd.testing.assert_series_equal(after["loss"], clean["loss"])  # the same judged trials as a run without faults
    untouched = after.set_index(["step", "idx"]).drop(index=again.index)
    assert (untouched["attempts"] == 1).all()


def test_retries_are_bounded_and_zero_means_never(tmp_path, monkeypatch):
    out = tmp_path / "c"
    Campaign(**PLANTED, out=str(out)).run(progress=False)
    errors = int(load_campaign(out).trials["error"].notna().sum())
    result = Campaign.from_dir(out).run(progress=False, resume=True)  # the faults persist: each is tried once more
    assert result.retried == (errors, 0) and (result.trials.loc[result.trials["error"].notna(), "attempts"] == 2).all()
    assert Campaign.from_dir(out).run(progress=False, resume=True).retried == (0, 0)  # no attempts left
    _answered_now(monkeypatch)
    assert dataclasses.replace(Campaign.from_dir(out), retries=0).run(progress=False, resume=True).retried == (0, 0)
    result = dataclasses.replace(Campaign.from_dir(out), retries=2).run(progress=False, resume=True)
    assert result.retried == (errors, errors) and result.trials["error"].isna().all()


def test_retries_is_checked(capsys):
    with pytest.raises(ParameterError, match="The 'retries' option of Campaign must be an integer >= 0. Got -1 instead."):
        Campaign(**PLANTED, retries=-1)
    with pytest.raises(SystemExit):
        main(["hunt", "--generator", "planted", "--target", "planted", "--retries", "x"])
    assert "--retries: invalid int value: 'x'" in capsys.readouterr().err


def test_a_campaign_never_stores_a_literal_header_value(tmp_path):
    """Header values are stored as written: a reference may be, a secret may not."""
    secret = "sk-live-123456"
    with pytest.raises(ParameterError, match="The header 'Authorization' in target_options holds a literal value") as refused:
        Campaign(generator="faces", target="http", target_options={"url": "http://127.0.0.1:9/predict",
                                                                     "headers": {"Authorization": f"Bearer {secret}"}})
    assert secret not in str(refused.value)
    for value in ("env:API_KEY", "Bearer env:API_KEY"):
        Campaign(generator="faces", target="http", target_options={"url": "http://127.0.0.1:9/predict", "headers": {"X": value}})


def test_a_target_that_goes_down_stops_the_campaign_and_resume_finishes_it(tmp_path, monkeypatch):
    """A service that stops answering after two batches: the third batch is all errors, the campaign
    stops there instead of spending the other 16 evaluations on errors, and a resume once the
    service is back asks those 8 again and finishes."""
    real, seen = PlantedTarget.predict, []

    def predict(self, images):
        seen.append(len(images))
        self.error_rate = 1.0 if sum(seen) > 17 else 0.0  # 1 + 16: the campaign's dry prediction, then two batches
        return real(self, images)

    monkeypatch.setattr(PlantedTarget, "predict", predict)
    out = tmp_path / "c"
    settings = {**PLANTED, "target_options": {}}
    with pytest.raises(ParameterError, match=r"Stopped after batch 3: 8 of 8 trials got no answer .* rest of the budget was not spent"):
        Campaign(**settings, out=str(out)).run(progress=False)
    assert len(load_campaign(out).trials) == 24
    monkeypatch.setattr(PlantedTarget, "predict", real)
    _answered_now(monkeypatch)
    result = Campaign.from_dir(out).run(progress=False, resume=True)
    assert result.retried == (8, 8) and len(result.trials) == 40 and result.trials["error"].isna().all()

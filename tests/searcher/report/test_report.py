"""`searcher report`: one self-contained page per campaign, comparison, transect run or analysis,
holding the store's own numbers, fetching nothing, with galleries that filter and sort in a real browser."""

from __future__ import annotations

import html
import shutil
import sqlite3

import numpy as np
import pandas as pd
import pytest

import searcher
from searcher.campaign import load_campaign
from searcher.cli import main
from searcher.errors import ParameterError
from searcher.export.source import read_source
from searcher.report import report
from searcher.studies.analyze import analyze

BOOT = 20  # bootstrap resamples: the effects' numbers are not under test here


@pytest.fixture(scope="module")
def comparison(tmp_path_factory):
    """Random against BO on the planted problem: a uniform campaign with rates and an adaptive one without."""
    out = tmp_path_factory.mktemp("report") / "cmp"
    searcher.compare(out, generator="planted", target="planted", strategies=("random", "bo"), seeds=(0,), budget=24, batch=8,
                     progress=False)
    return out


@pytest.fixture(scope="module")
def transects(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "transects"
    searcher.run_transects("gender-cnn", attributes=["hair_length"], size="3", n=3, fit_samples=40, resolution=64, out=out)
    return out


def test_a_campaign_report_holds_the_stores_numbers(campaign, read_report, tmp_path):
    path = report(campaign, out=tmp_path / "report.html", n_boot=BOOT)
    page = read_report(path)
    text = page.text
    page.assert_self_contained()
    trials = load_campaign(campaign).trials
    fails = trials[(trials["loss"] >= 0.5) & trials["error"].isna()]
    oks = trials[(trials["loss"] < 0.5) & trials["error"].isna() & trials["excluded"].isna()]
    assert {"summary", "found", "gallery-failures", "gallery-successes", "subgroups"} <= page.ids
    assert f"All {len(trials)} evaluations of its budget have landed: {len(fails)} failures at distinct points" in text
    assert "random search of the faces generator" in text and "haar-face target (detect)" in text
    # every failure and success is in its gallery, with its parameters
    failures, successes = page.gallery("failures"), page.gallery("successes")
    assert len(failures["rows"]) == len(fails) == text.count('class="item"') - len(oks) and len(successes["rows"]) == len(oks)
    got = pd.DataFrame(failures["rows"], columns=failures["columns"])
    assert got["eyewear"].tolist() == fails["param.eyewear"].tolist()
    assert np.allclose(got["yaw"], fails["param.yaw"], rtol=1e-3, atol=1e-3)
    # the failure modes are those the comparison would cut, in the select and the mode table
    modes = read_source(campaign).rows["mode"]
    assert sorted(set(got["mode"])) == sorted(set(modes[modes >= 0]))
    assert len(page.find("option")) >= len(set(got["mode"])) and len(page.find("a", class_="show-mode")) == len(set(got["mode"]))
    # the subgroup rates are `analyze`'s, word for word
    lines = analyze(campaign, out=tmp_path / "analysis", n_boot=BOOT).lines
    shown = html.unescape(text)
    assert all(line in shown for line in lines if line.startswith(("overall failure rate", "  skin_tone", "rates from")))
    assert "Failure rate by subgroup, with 95% Wilson intervals" in text and "Logistic effects on failure" in text


def test_a_running_campaign_shows_what_has_landed(campaign, read_report, tmp_path):
    running = tmp_path / "running"
    shutil.copytree(campaign, running, ignore=shutil.ignore_patterns("report.html", "analysis"))
    with sqlite3.connect(running / "campaign.sqlite") as db:  # as if batches 1 and 2 were still to come
        db.execute("DELETE FROM trials WHERE step >= 1")
        db.execute("DELETE FROM steps WHERE step >= 1")
    trials = load_campaign(running).trials
    page = read_report(searcher.report(running, n_boot=BOOT))  # the package is callable, as searcher.export is
    text = page.text
    assert len(trials) == 20 and "20 of its 60 evaluations have landed so far" in text
    assert f"searcher hunt --resume {running}" in html.unescape(text)
    assert len(page.gallery("failures")["rows"]) == int(((trials["loss"] >= 0.5) & trials["error"].isna()).sum())


def test_a_comparison_report_has_the_table_the_figures_and_the_reason_for_no_rates(comparison, read_report, tmp_path):
    page = read_report(report(comparison, out=tmp_path / "cmp.html", n_boot=BOOT))
    text = page.text
    page.assert_self_contained()
    table = pd.read_csv(comparison / "compare.csv")
    for row in table.itertuples():
        name = f"{row.strategy}-s{row.seed}"
        assert f"<td>{name}</td><td>{row.strategy}</td>" in text
    assert "A comparison of random, bo" in text or "A comparison of bo, random" in text
    assert "Distinct failures found against evaluations: mean over seeds" in text and "per strategy: mean and one sd" in text
    failures = pd.DataFrame(page.gallery("failures")["rows"], columns=page.gallery("failures")["columns"])
    assert failures.groupby("campaign").size().to_dict() == {f"{r.strategy}-s{r.seed}": r.failures for r in table.itertuples() if r.failures}
    # BO is adaptive and has no audit sample: the page says so in analyze's own words
    (reason,) = [line for line in analyze(comparison / "runs" / "bo-s0", out=tmp_path / "a").lines if line.startswith("no rates")]
    assert reason in html.unescape(text) and "rates from all 24 judged trials ('random' samples uniformly)" in html.unescape(text)


def test_a_transect_report_has_the_grids_the_drift_and_the_effects(transects, read_report, tmp_path):
    page = read_report(report(transects, out=tmp_path / "t.html", n_boot=BOOT))
    text = page.text
    page.assert_self_contained()
    table = pd.read_csv(transects / "transects.csv")
    kept = table[table["pruned"].astype(object).fillna("").eq("") & table["error"].notna()]
    assert {"grids", "drift", "subgroups", "gallery-failures", "gallery-successes"} <= page.ids
    assert text.count('<figure class="plot"><img src="data:image/png') >= len(list(transects.glob("transect_*.png"))) + 1
    assert "Drift along each axis" in text and "Drift of the held attributes" in text and "Treatment effects E^1 - E^0" in text
    assert "3 transects of 3 images along hair_length" in text and f"erred on {int(kept['error'].sum())} of the {len(kept)} kept" in text
    shown = [pd.DataFrame(page.gallery(g)["rows"], columns=page.gallery(g)["columns"]) for g in ("failures", "successes")]
    assert [len(s) for s in shown] == [int(kept["error"].sum()), int((kept["error"] == 0).sum())]
    assert "value_hair_length" in shown[0].columns


def test_an_analysis_directory_reports_its_tables(campaign, read_report, tmp_path):
    analyze(campaign, out=tmp_path / "analysis", n_boot=BOOT)
    page = read_report(report(tmp_path / "analysis"))
    text = page.text
    page.assert_self_contained()
    subgroups = pd.read_csv(tmp_path / "analysis" / "subgroups.csv")
    assert "Failure rate by subgroup" in text and f"<td>{subgroups['n'].iloc[0]}</td>" in text and "subgroups.csv" in text


def test_the_command_prints_the_path_and_bad_directories_get_one_line(comparison, tmp_path, capsys):
    assert main(["report", str(comparison), "--boot", str(BOOT)]) == 0
    out = capsys.readouterr().out
    assert out == f"{(comparison / 'report.html').resolve()}\n" and (comparison / "report.html").is_file()

    for where, why in ((tmp_path / "missing", "(no such directory)"), (tmp_path, "")):
        with pytest.raises(ParameterError, match=f"Nothing to report at {where}{' ' if why else ''}.*expected a campaign"):
            report(where)
        assert main(["report", str(where)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"searcher: error: Nothing to report at {where}") and err.count("\n") == 1 and "transects.csv" in err
    with pytest.raises(ParameterError, match="'limit' argument of report must be an integer >= 1. Got 0"):
        report(comparison, limit=0)


def test_the_page_filters_and_sorts_in_a_browser_and_fetches_nothing(open_page, campaign, tmp_path):
    path = report(campaign, out=tmp_path / "report.html", n_boot=BOOT)
    trials = load_campaign(campaign).trials
    fails = trials[(trials["loss"] >= 0.5) & trials["error"].isna()]
    modes = read_source(campaign).rows.query("mode >= 0")["mode"]
    page, requests, problems = open_page(path)
    items = "#failures figure.item"

    def visible() -> int:
        return page.locator(f"{items}:visible").count()

    assert visible() == len(fails) and page.locator("#failures-count").inner_text() == f"{len(fails)} of {len(fails)} match"
    mode = int(modes.value_counts().index[0])
    page.select_option("#failures-mode", str(mode))
    assert visible() == int((modes == mode).sum()) < len(fails)
    page.select_option("#failures-mode", "")
    page.fill("#failures-filter", "eyewear=glasses")
    assert visible() == int((fails["param.eyewear"] == "glasses").sum())
    page.fill("#failures-filter", "eyewear!=glasses yaw > 0")
    assert visible() == int(((fails["param.eyewear"] != "glasses") & (fails["param.yaw"] > 0)).sum())
    page.fill("#failures-filter", "")
    assert visible() == len(fails)

    def first_caption() -> str:
        return page.locator(items).first.locator("figcaption").inner_text()

    assert first_caption().startswith(f"#{trials.index.get_loc(fails.index[0]) + 1}")
    page.select_option("#failures-sort", label="age")
    page.click("#failures-dir")  # descending
    oldest = fails["param.age"].idxmax()
    assert first_caption().startswith(f"#{trials.index.get_loc(oldest) + 1}")
    page.locator(items).first.click()
    assert page.locator("#failures-detail").is_visible() and "age" in page.locator("#failures-detail").inner_text()
    page.locator("a.show-mode").first.click()  # the mode table's examples filter the gallery
    assert visible() == int((modes == int(page.locator("#failures-mode").input_value())).sum())
    page.close()
    assert requests == [path.as_uri()], requests
    assert not problems, problems

"""`searcher report`: one self-contained page per campaign, comparison, transect run or analysis,
holding the store's own numbers, fetching nothing, with galleries that filter and sort in a real browser."""

from __future__ import annotations

import html
import json
import shutil
import sqlite3
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import searcher
from searcher.analysis.subgroups import analyze
from searcher.campaign import load_campaign
from searcher.cli import main
from searcher.errors import ParameterError
from searcher.export.source import read_source
from searcher.report import report
from searcher.report.page import CSP

BOOT = 20  # bootstrap resamples: the effects' numbers are not under test here


@pytest.fixture(scope="module")
def campaign(stored_campaign):
    """60 random evaluations of the Haar detector (the export tests' campaign, shared within a session)."""
    return stored_campaign("haar", generator="faces", target="haar-face", strategy="random", budget=60, batch=20, seed=1,
                           generator_options={"resolution": 96})


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


class _Page(HTMLParser):
    """The parts of a report the tests look at: every tag with its attributes, and the sections' ids."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    def find(self, tag: str, **attrs: str) -> list[dict[str, str]]:
        return [a for t, a in self.tags if t == tag and all(a.get(k.rstrip("_").replace("_", "-")) == v for k, v in attrs.items())]

    @property
    def ids(self) -> set[str]:
        return {a["id"] for _, a in self.tags if "id" in a}


def _read(path: Path) -> tuple[str, _Page]:
    text = path.read_text()
    return text, _Page(text)


def _gallery(text: str, gid: str) -> dict:
    """The JSON values behind a gallery."""
    start = text.index(f'<script type="application/json" id="{gid}-data">') + len(f'<script type="application/json" id="{gid}-data">')
    return json.loads(text[start : text.index("</script>", start)])


def _assert_self_contained(text: str, page: _Page) -> None:
    """The CSP is there and blocks outside fetches; every src is inline and every link stays in the page."""
    (meta,) = page.find("meta", http_equiv="Content-Security-Policy")
    assert meta["content"] == CSP and "default-src 'none'" in CSP and "img-src data:" in CSP
    for tag, attrs in page.tags:
        assert tag not in ("link", "iframe", "object", "embed", "base", "form"), f"<{tag}> in the page"
        assert "srcset" not in attrs and "action" not in attrs
        if "src" in attrs:
            assert attrs["src"].startswith("data:"), f"<{tag} src={attrs['src'][:60]}>"
        if "href" in attrs:
            assert attrs["href"].startswith("#"), f"<{tag} href={attrs['href']}>"
    assert "url(" not in text and "@import" not in text and "fetch(" not in text and "XMLHttpRequest" not in text


def test_a_campaign_report_holds_the_stores_numbers(campaign, tmp_path):
    path = report(campaign, out=tmp_path / "report.html", n_boot=BOOT)
    text, page = _read(path)
    _assert_self_contained(text, page)
    trials = load_campaign(campaign).trials
    fails = trials[(trials["loss"] >= 0.5) & trials["error"].isna()]
    oks = trials[(trials["loss"] < 0.5) & trials["error"].isna() & trials["excluded"].isna()]
    assert {"summary", "found", "gallery-failures", "gallery-successes", "subgroups"} <= page.ids
    assert f"All {len(trials)} evaluations of its budget have landed: {len(fails)} failures at distinct points" in text
    assert "random search of the faces generator" in text and "haar-face target (detect)" in text
    # every failure and success is in its gallery, with its parameters
    failures, successes = _gallery(text, "failures"), _gallery(text, "successes")
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


def test_a_running_campaign_shows_what_has_landed(campaign, tmp_path):
    running = tmp_path / "running"
    shutil.copytree(campaign, running, ignore=shutil.ignore_patterns("report.html", "analysis"))
    with sqlite3.connect(running / "campaign.sqlite") as db:  # as if batches 1 and 2 were still to come
        db.execute("DELETE FROM trials WHERE step >= 1")
        db.execute("DELETE FROM steps WHERE step >= 1")
    trials = load_campaign(running).trials
    text, _ = _read(searcher.report(running, n_boot=BOOT))  # the package is callable, as searcher.export is
    assert len(trials) == 20 and "20 of its 60 evaluations have landed so far" in text
    assert f"searcher hunt --resume {running}" in html.unescape(text)
    assert len(_gallery(text, "failures")["rows"]) == int(((trials["loss"] >= 0.5) & trials["error"].isna()).sum())


def test_a_comparison_report_has_the_table_the_figures_and_the_reason_for_no_rates(comparison, tmp_path):
    text, page = _read(report(comparison, out=tmp_path / "cmp.html", n_boot=BOOT))
    _assert_self_contained(text, page)
    table = pd.read_csv(comparison / "compare.csv")
    for row in table.itertuples():
        name = f"{row.strategy}-s{row.seed}"
        assert f"<td>{name}</td><td>{row.strategy}</td>" in text
    assert "A comparison of random, bo" in text or "A comparison of bo, random" in text
    assert "Distinct failures found against evaluations: mean over seeds" in text and "per strategy: mean and one sd" in text
    failures = pd.DataFrame(_gallery(text, "failures")["rows"], columns=_gallery(text, "failures")["columns"])
    assert failures.groupby("campaign").size().to_dict() == {f"{r.strategy}-s{r.seed}": r.failures for r in table.itertuples() if r.failures}
    # BO is adaptive and has no audit sample: the page says so in analyze's own words
    (reason,) = [line for line in analyze(comparison / "runs" / "bo-s0", out=tmp_path / "a").lines if line.startswith("no rates")]
    assert reason in html.unescape(text) and "rates from all 24 judged trials ('random' samples uniformly)" in html.unescape(text)


def test_a_transect_report_has_the_grids_the_drift_and_the_effects(transects, tmp_path):
    text, page = _read(report(transects, out=tmp_path / "t.html", n_boot=BOOT))
    _assert_self_contained(text, page)
    table = pd.read_csv(transects / "transects.csv")
    kept = table[table["pruned"].astype(object).fillna("").eq("") & table["error"].notna()]
    assert {"grids", "drift", "subgroups", "gallery-failures", "gallery-successes"} <= page.ids
    assert text.count('<figure class="plot"><img src="data:image/png') >= len(list(transects.glob("transect_*.png"))) + 1
    assert "Drift along each axis" in text and "Drift of the held attributes" in text and "Treatment effects E^1 - E^0" in text
    assert "3 transects of 3 images along hair_length" in text and f"erred on {int(kept['error'].sum())} of the {len(kept)} kept" in text
    shown = [pd.DataFrame(_gallery(text, g)["rows"], columns=_gallery(text, g)["columns"]) for g in ("failures", "successes")]
    assert [len(s) for s in shown] == [int(kept["error"].sum()), int((kept["error"] == 0).sum())]
    assert "value_hair_length" in shown[0].columns


def test_an_analysis_directory_reports_its_tables(campaign, tmp_path):
    analyze(campaign, out=tmp_path / "analysis", n_boot=BOOT)
    text, page = _read(report(tmp_path / "analysis"))
    _assert_self_contained(text, page)
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
    with pytest.raises(ParameterError, match="'limit' option of report must be an integer >= 1. Got 0"):
        report(comparison, limit=0)


def test_the_page_filters_and_sorts_in_a_browser_and_fetches_nothing(browser, campaign, tmp_path):
    path = report(campaign, out=tmp_path / "report.html", n_boot=BOOT)
    trials = load_campaign(campaign).trials
    fails = trials[(trials["loss"] >= 0.5) & trials["error"].isna()]
    modes = read_source(campaign).rows.query("mode >= 0")["mode"]
    page = browser.new_page()
    requests, problems = [], []
    page.on("request", lambda r: requests.append(r.url))
    page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
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

"""A campaign's report shows what `searcher explain RUN --confirm` wrote to RUN/explain.json (each
mode's caption, rule, precision and coverage beside its thumbnails; each attribute set back, its
value and fix rate, the control marked) and the retraining in RUN/retrain/, as `searcher fix`
leaves them; without explain.json it says how to get one, and of a stale one that it is stale.

The campaign: the planted box (conftest's `planted`), whose modes `explain` rules over x0 and x1."""

from __future__ import annotations

import html
import io
import json
import shutil
import sqlite3
from contextlib import redirect_stdout
from pathlib import Path

import pandas as pd
import pytest

from searcher.cli import main
from searcher.errors import ParameterError
from searcher.export.source import read_source
from searcher.report import report
from searcher.report.explained import read_explained
from searcher.report.page import data_uri

LIMIT = 10  # images per gallery: the galleries are not under test here


def _copy(run: Path, to: Path) -> Path:
    return shutil.copytree(run, to, ignore=shutil.ignore_patterns("report.html", "analysis", "confirm", "retrain", "explain.json"))


def _explain(run: Path, *flags: str) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["explain", str(run), *flags]) == 0
    return out.getvalue()


@pytest.fixture(scope="module")
def fixed(planted, retrained, tmp_path_factory):
    """What `searcher fix` leaves: RUN/explain.json with fix rates from a real (small) confirmation,
    RUN/retrain/ a `searcher retrain` output; with what `explain` printed, and the report."""
    run = _copy(planted, tmp_path_factory.mktemp("explained") / "run")
    printed = _explain(run, "--confirm", "--confirm-budget", "60")
    shutil.copytree(retrained, run / "retrain")
    return run, printed, report(run, limit=LIMIT, n_boot=0)


def _records(run: Path) -> list[dict]:
    return json.loads((run / "explain.json").read_text())


def _share(s: list[float] | None) -> str:
    return f"{s[0]:.0%} [{s[1]:.0%}, {s[2]:.0%}]" if s else "-"


def _rule(rule: dict | None) -> str:
    return "; ".join(f"{name} ∈ [{low:g}, {high:g}]" for name, (low, high) in rule.items()) if rule else "-"


def _mode_row(r: dict) -> str:
    """The start of a mode's row in the failure-mode table: its failures, then its words."""
    return (f"<tr><td>{r['mode']}</td><td>{r['failures']}</td><td class=\"caption\">{html.escape(r['caption'], quote=True)}</td>"
            f"<td>{_rule(r['rule'])}</td><td>{_share(r['precision'])}</td><td>{_share(r['coverage'])}</td><td>#")


def test_the_mode_table_shows_each_modes_caption_rule_precision_and_coverage(fixed, read_report):
    run, _, path = fixed
    page = read_report(path)
    page.assert_self_contained()
    records = _records(run)
    ruled = [r for r in records if r["rule"]]
    assert ruled and {n for r in ruled for n in r["rule"]} <= {"x0", "x1", "x2"} and all(r["trials"] == 400 for r in records)
    for r in records:  # every mode of the table, joined to its record
        assert _mode_row(r) in page.text, r
    assert len(page.find("td", class_="caption")) == len(records) == len(page.find("a", class_="show-mode"))
    assert f"The captions and rules are <code>searcher explain {run}</code>&#39;s (explain.json)" in page.text
    assert "is of an earlier state" not in page.text and "puts each failure mode here in words" not in page.text


def test_the_fix_rates_are_worded_as_explain_prints_them_with_the_control_marked(fixed, read_report):
    run, printed, path = fixed
    page = read_report(path)
    assert "confirmed" in page.ids
    controls = 0
    for r in _records(run):
        for name, rate in (r["fix_rates"] or {}).items():
            i = r["interventions"][name]
            value = f"{i['value']:.3g}"
            if i["control"]:
                controls += 1
                row = f"<td>{name}</td><td class=\"control\">control</td><td>to {value}</td><td>{_share(rate)}</td>"
                line = f"  control {name} to {value}: {_share(rate)} ({i['evaluated']} re-rendered)"
            else:
                row = f"<td>{name}</td><td>in the rule</td><td>back to {value}</td><td>{_share(rate)}</td>"
                line = f"  {name} back to {value}: {_share(rate)} of this mode's failures pass ({i['evaluated']} re-rendered)"
            assert f"<tr><td>{r['mode']}</td>{row}<td>{i['evaluated']} re-rendered</td></tr>" in page.text, (r["mode"], name)
            assert line in printed  # the command's line says the same
    assert controls and len(page.find("td", class_="control")) == controls
    assert f"The re-renders are stored in <code>{run / 'confirm'}</code>" in page.text


def test_the_retraining_in_the_campaigns_retrain_folder_is_shown(fixed, retrained, read_report):
    run, _, path = fixed
    page = read_report(path)
    assert {"retraining", "scores", "groups"} <= page.ids
    text = page.text
    scores = pd.read_csv(retrained / "scores.csv")
    for (arm, test), s in scores.groupby(["arm", "test"]):  # the arms' rows, as the retraining's own page has them
        assert (f"<td>{arm}</td><td>{test}</td><td>{s['balanced_accuracy'].mean():.1%} ± {s['balanced_accuracy'].std():.1%}</td>"
                f"<td>{s['accuracy'].mean():.1%} ± {s['accuracy'].std():.1%}</td><td>2</td><td>{s['train_size'].iloc[0]}</td>") in text
    assert "hard, random, spread each add 20 images to the base&#39;s 100" in text
    assert f"Its files are in <code>{run / 'retrain'}</code>" in text
    assert data_uri((retrained / "retraining.png").read_bytes(), "image/png") in text
    assert text.index('id="found"') < text.index('id="confirmed"') < text.index('id="subgroups"') < text.index('id="retraining"')


def test_without_explain_json_the_page_says_how_to_get_it_and_a_retraining_can_be_given(planted, retrained, read_report, tmp_path,
                                                                                          capsys):
    run = _copy(planted, tmp_path / "bare")
    out = tmp_path / "bare.html"
    assert main(["report", str(run), "--out", str(out), "--max", str(LIMIT), "--boot", "0", "--retrain", str(retrained)]) == 0
    assert capsys.readouterr().out == f"{out.resolve()}\n"
    page = read_report(out)
    assert f"<code>searcher explain {run}</code> puts each failure mode here in words" in page.text
    assert not page.find("td", class_="caption") and "confirmed" not in page.ids and page.find("a", class_="show-mode")
    assert {"retraining", "scores"} <= page.ids and f"Its files are in <code>{retrained}</code>" in page.text
    # a retraining given where there is none, or for a page that is not a campaign's, is refused before anything is built
    with pytest.raises(ParameterError, match="holds no scores.csv"):
        report(run, out=tmp_path / "none.html", retrain=tmp_path)
    with pytest.raises(ParameterError, match="is a retraining"):
        report(retrained, out=tmp_path / "none.html", retrain=retrained)
    assert not (tmp_path / "none.html").exists()


def test_an_explain_json_of_an_earlier_state_of_the_campaign_is_said_to_be_stale(planted, read_report, tmp_path):
    """Explained while half of it had landed, then the campaign ran on: the page says so and shows no caption."""
    run = _copy(planted, tmp_path / "run")
    with sqlite3.connect(run / "campaign.sqlite") as db:
        db.execute("DELETE FROM trials WHERE step >= 1")
        db.execute("DELETE FROM steps WHERE step >= 1")
    _explain(run)
    for f in run.glob("campaign.sqlite*"):
        f.unlink()
    for f in planted.glob("campaign.sqlite*"):
        shutil.copy(f, run / f.name)  # the campaign ran on
    (run / "retrain").mkdir()  # `searcher retrain` not done yet
    records = _records(run)
    assert all(r["trials"] == 200 for r in records)
    page = read_report(report(run, limit=LIMIT, n_boot=0))
    assert "explain.json is of an earlier state of this campaign" in page.text
    assert "200 evaluations then" in page.text and "400 evaluations now" in page.text
    assert f"<code>searcher explain {run}</code> puts the modes as they are now in words" in page.text
    assert not page.find("td", class_="caption") and "confirmed" not in page.ids
    assert f"No retraining to show: {run / 'retrain'} holds no scores.csv" in page.text and "scores" not in page.ids


def test_an_explain_json_without_trials_is_shown_while_its_modes_match(fixed, read_report, tmp_path):
    """explain.json from before it recorded `trials`: shown while each mode's failures match, stale once one does not;
    with `trials`, stale when they are not the campaign's evaluations even where the modes match."""
    run = _copy(fixed[0], tmp_path / "run")
    records = [{k: v for k, v in r.items() if k != "trials"} for r in _records(fixed[0])]
    (run / "explain.json").write_text(json.dumps(records))
    page = read_report(report(run, limit=LIMIT, n_boot=0))
    assert all(_mode_row(r) in page.text for r in records) and "confirmed" in page.ids and "retraining" not in page.ids
    modes = read_source(run).rows["mode"]
    assert read_explained(run, modes, 400).records.keys() == {r["mode"] for r in records}
    for changed in ([{**r, "failures": r["failures"] + (r is records[0])} for r in records], [{**r, "trials": 399} for r in records]):
        (run / "explain.json").write_text(json.dumps(changed))
        words = read_explained(run, modes, 400)
        assert not words.records and words.status.startswith("explain.json is of an earlier state of this campaign")


def test_a_browser_finds_the_captions_the_fix_rates_and_the_retraining_table(fixed, open_page):
    run, _, path = fixed
    records = _records(run)
    page, requests, problems = open_page(path)
    assert page.locator("#found td.caption").all_inner_texts() == [r["caption"] for r in records]
    controls = sum(1 for r in records for i in r.get("interventions", {}).values() if i["control"])
    assert page.locator("#confirmed td.control").count() == controls > 0
    scores = page.locator("#retraining table", has_text="Scores per arm and test set")
    assert scores.is_visible() and "balanced accuracy" in scores.inner_text()
    page.locator("#found a.show-mode").first.click()  # the thumbnails still filter the gallery
    assert page.locator("#failures-mode").input_value() == str(records[0]["mode"])
    page.close()
    assert requests == [path.as_uri()], requests
    assert not problems, problems

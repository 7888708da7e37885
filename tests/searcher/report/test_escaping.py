"""A report shows markup as text (issue 73): a campaign in a directory named with HTML, whose stored
target error and predicted labels hold HTML, gives a page whose source holds them escaped and in
which a real browser finds no element they could have made. Removing the escape() of the `code`
filter (searcher/report/page.py) fails these tests: the directory name goes through it. Markup in
explain.json (captions and parameter names come from generators' vocabularies) is text too."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest

import searcher
from searcher.report import report

CAMPAIGN = {"generator": "faces", "target": "haar-face", "budget": 12, "batch": 4, "generator_options": {"resolution": 64},
            "strategy": "random"}
NAME = "<img src=x onerror=alert(1)>"
ERROR = "<script id=injected-error>document.title='pwned'</script> at <i id=injected-host>host</i>"
LABEL = "<b id=injected-label>dog</b>"
INJECTED = 'img[src="x"], #injected-error, #injected-host, #injected-label'


@pytest.fixture(scope="module")
def page_path(stored_campaign, tmp_path_factory):
    """The report of a running campaign (its last batch still to come, so its summary names the
    directory in the command that resumes it) in a directory named with markup, with one target
    error and every label holding markup."""
    directory = shutil.copytree(stored_campaign("annotate-random", **CAMPAIGN), tmp_path_factory.mktemp("escaping") / NAME)
    with sqlite3.connect(directory / "campaign.sqlite") as db:
        db.execute("DELETE FROM trials WHERE step >= 2")
        db.execute("DELETE FROM steps WHERE step >= 2")
        db.execute("UPDATE trials SET error = ?, loss = NULL, failure = NULL WHERE step = 0 AND idx = 2", (ERROR,))
        db.execute("UPDATE trials SET label = ? WHERE error IS NULL", (f'"{LABEL}"',))
    return report(directory, out=directory.parent / "report.html", n_boot=0)


def test_the_source_holds_the_markup_escaped(page_path, read_report):
    page = read_report(page_path)
    text = page.text
    assert f"<code>searcher hunt --resume {page_path.parent}/&lt;img src=x onerror=alert(1)&gt;</code>" in text  # the `code` filter
    assert "<img src=x" not in text and not page.find("img", src="x")
    assert "<td>&lt;script id=injected-error&gt;document.title=&#39;pwned&#39;&lt;/script&gt; at &lt;i id=injected-host&gt;" in text
    assert "<script id=injected-error" not in text and "<i id=injected-host" not in text
    assert "\\u003cb id=injected-label\\u003edog\\u003c/b\\u003e" in text and "<b id=injected-label" not in text
    assert not {"injected-error", "injected-host", "injected-label"} & page.ids


def test_a_browser_finds_no_injected_element_and_shows_the_markup_as_text(page_path, browser):
    page = browser.new_page()
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(page_path.as_uri())
    page.wait_for_load_state("load")
    assert page.eval_on_selector_all(INJECTED, "els => els.length") == 0
    assert f"searcher hunt --resume {page_path.parent}/{NAME}" in page.inner_text("#summary")
    assert NAME in page.inner_text("header h1")
    assert ERROR in page.inner_text("#errors")
    page.locator("figure.item").first.click()  # one image's values, the predicted label among them
    assert LABEL in page.locator("aside.detail:visible").inner_text()
    assert page.eval_on_selector_all(INJECTED, "els => els.length") == 0 and page.title() != "pwned" and not dialogs
    page.close()


CAPTION = "<b id=injected-caption>x0</b> & <script>document.title='pwned'</script>"
RULE = "<i id=injected-rule>x0</i>"
SKIPPED, WHY, VALUE = "<u id=injected-skip>x1</u>", "<em id=injected-why>why</em>", "<s id=injected-value>0.2</s>"
EXPLAINED = "#injected-caption, #injected-rule, #injected-skip, #injected-why, #injected-value"


@pytest.fixture(scope="module")
def explained_path(planted, tmp_path_factory):
    """The report of a campaign whose explain.json (written by `searcher.explain`, then edited) holds
    markup in a mode's caption, in the parameter its rule names and in its confirmation's words
    (in a generator's vocabulary they are its own words)."""
    run = shutil.copytree(planted, tmp_path_factory.mktemp("escaping") / "explained", ignore=shutil.ignore_patterns("*.html"))
    records = [m.to_dict() for m in searcher.explain(run)]
    first = next(r for r in records if r["rule"])
    first.update(caption=CAPTION, rule={RULE: [0.1, 0.5]}, fix_rates={RULE: [1.0, 0.5, 1.0]}, control=None, skipped={SKIPPED: WHY},
                 interventions={RULE: {"value": VALUE, "control": False, "evaluated": 4, "passed": 4, "failed": 0, "errors": 0,
                                       "excluded": 0}})
    (run / "explain.json").write_text(json.dumps(records))
    return report(run, out=run.parent / "explained.html", limit=5, n_boot=0)


def test_captions_and_rule_names_of_explain_json_are_text(explained_path, read_report, browser):
    page = read_report(explained_path)
    text = page.text
    assert "<td class=\"caption\">&lt;b id=injected-caption&gt;x0&lt;/b&gt; &amp; &lt;script&gt;document.title=&#39;pwned&#39;" in text
    assert "<td>&lt;i id=injected-rule&gt;x0&lt;/i&gt; ∈ [0.1, 0.5]</td>" in text
    assert "<td>back to &lt;s id=injected-value&gt;0.2&lt;/s&gt;</td>" in text
    assert "not set back, &lt;u id=injected-skip&gt;x1&lt;/u&gt;: &lt;em id=injected-why&gt;why&lt;/em&gt;" in text
    assert not {"injected-caption", "injected-rule", "injected-skip", "injected-why", "injected-value"} & page.ids
    assert "<script>document.title" not in text
    tab = browser.new_page()
    tab.goto(explained_path.as_uri())
    tab.wait_for_load_state("load")
    assert tab.eval_on_selector_all(EXPLAINED, "els => els.length") == 0 and tab.title() != "pwned"
    assert CAPTION in tab.locator("#found td.caption").all_inner_texts()
    assert RULE in tab.inner_text("#found") and SKIPPED in tab.inner_text("#confirmed") and VALUE in tab.inner_text("#confirmed")
    tab.close()

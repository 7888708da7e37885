"""The rating page shows markup as text (issue 73): a directory name, a question and level labels
that hold HTML reach the page escaped, and a real browser finds no element they could have made.
Turning off the template's autoescape fails these tests."""

from __future__ import annotations

import dataclasses
import shutil
import socket
import threading

import pytest
import uvicorn
from starlette.testclient import TestClient

import searcher.annotate.session as session_module
from searcher.annotate import app

CAMPAIGN = {"generator": "faces", "target": "haar-face", "budget": 12, "batch": 4, "generator_options": {"resolution": 64}}
NAME = "<img src=x onerror=alert(1)>"
QUESTION = "</script><i id=injected-question>How</i> light is this skin?"
LABEL = "<b id=injected-label>pale</b>"
INJECTED = 'img[src="x"], #injected-question, #injected-label, #injected-description'


@pytest.fixture
def marked_up(stored_campaign, tmp_path, monkeypatch):
    """A campaign in a directory named with markup, whose skin_tone question and first level's
    label and description hold markup too (as a plug-in generator's vocabulary could)."""
    directory = shutil.copytree(stored_campaign("annotate", **CAMPAIGN), tmp_path / NAME)
    asked = session_module.questions

    def with_markup(attributes, scales):
        first, *rest = asked(attributes, scales)
        levels = ((LABEL, "<u id=injected-description>a</u> & b"), *first.levels[1:])
        return [dataclasses.replace(first, text=QUESTION, levels=levels), *rest]

    monkeypatch.setattr(session_module, "questions", with_markup)
    return directory


def test_the_page_source_holds_the_markup_escaped(marked_up):
    html = TestClient(app(marked_up, "skin_tone", "alice"), base_url="http://127.0.0.1:8765").get("/").text
    assert "<span>&lt;img src=x onerror=alert(1)&gt;</span>" in html and "<img src=x" not in html
    assert "\\u003cb id=injected-label\\u003epale\\u003c/b\\u003e" in html and "<b id=injected-label" not in html
    assert "\\u003c/script\\u003e\\u003ci id=injected-question" in html and "</script><i id" not in html


def test_a_browser_finds_no_injected_element_and_shows_the_markup_as_text(marked_up, browser):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    server = uvicorn.Server(uvicorn.Config(app(marked_up, "skin_tone", "alice"), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    page = browser.new_page()
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    try:
        page.goto(f"http://127.0.0.1:{sock.getsockname()[1]}/")
        page.wait_for_load_state("networkidle")
        assert page.eval_on_selector_all(INJECTED, "els => els.length") == 0
        assert NAME in page.inner_text("header")
        assert page.text_content("#question") == QUESTION
        assert page.text_content("#levels button .label") == LABEL
        assert page.text_content("#levels button .desc") == "<u id=injected-description>a</u> & b"
        assert not dialogs
    finally:
        page.close()
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()

"""The rating page as people use it: `searcher annotate` in its own process, killed with SIGKILL
and restarted, and driven with the keyboard in headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
from urllib.parse import urlsplit

import httpx
import pytest

from searcher.analysis.annotations import read_annotations
from searcher.annotate.images import read_images

CAMPAIGN = {"generator": "faces", "target": "haar-face", "budget": 12, "batch": 4, "generator_options": {"resolution": 64}}


@pytest.fixture
def run_dir(stored_campaign, tmp_path):
    return shutil.copytree(stored_campaign("annotate", **CAMPAIGN), tmp_path / "run")


@pytest.fixture
def start(request):
    """`start(directory, annotator, attributes)` runs `searcher annotate` on a free port and returns
    (process, URL) once it printed the URL; every process is killed after the test."""
    procs = []

    def run(directory, annotator, attributes):
        cmd = [sys.executable, "-m", "searcher.cli", "annotate", str(directory), "--attributes", attributes,
               "--annotator", annotator, "--port", "0"]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(proc)
        line = proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:\d+/", line)
        if match is None:
            pytest.fail(f"searcher annotate printed no URL: {line!r} {proc.stderr.read() if proc.poll() is not None else ''}")
        return proc, match.group(0)

    yield run
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def page_state(url):
    html = httpx.get(url, timeout=10).text
    return json.loads(re.search(r'<script type="application/json" id="state"[^>]*>(.*?)</script>', html, re.S).group(1))


def test_a_server_killed_with_sigkill_loses_nothing_and_resumes(run_dir, start):
    proc, url = start(run_dir, "alice", "skin_tone,fakeness")
    keys = read_images(run_dir).keys
    given = [(0, "skin_tone", 2), (1, "skin_tone", 6), (2, "skin_tone", 1), (3, "skin_tone", 4)]
    with httpx.Client(base_url=url, timeout=10) as http:
        for image, attribute, value in given:
            assert http.post("/rate", json={"image": image, "attribute": attribute, "value": value}).status_code == 200
        assert http.post("/mark", json={"image": 1, "marked": True}).status_code == 200
    proc.send_signal(signal.SIGKILL)
    proc.wait()

    _, url = start(run_dir, "alice", "skin_tone,fakeness")
    state = page_state(url)
    assert state["position"] == 4 and state["answers"]["skin_tone"][:5] == [2, 6, 1, 4, 0] and state["marked"][:3] == [False, True, False]
    assert state["answers"]["fakeness"][:3] == [0, 5, 0]  # the mark answered the realism question
    with httpx.Client(base_url=url, timeout=10) as http:
        assert http.post("/rate", json={"image": 4, "attribute": "skin_tone", "value": 3}).status_code == 200
    lines = (run_dir / "annotations.csv").read_text().splitlines()
    assert len(lines) == 1 + len(given) + 1 + 1
    table = read_annotations(run_dir / "annotations.csv")
    assert sorted(map(tuple, table.to_numpy().tolist())) == sorted(
        [(keys[i], a, "alice", v) for i, a, v in [*given, (4, "skin_tone", 3), (1, "fakeness", 5)]])
    assert page_state(url)["position"] == 5


def test_number_keys_rate_in_a_real_browser_and_backspace_goes_back(run_dir, start, browser):
    _, url = start(run_dir, "carol", "gender_presentation,hair_length")
    keys = read_images(run_dir).keys
    page = browser.new_page()
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    response = page.goto(url)
    assert "default-src 'none'" in response.headers["content-security-policy"]
    page.wait_for_load_state("networkidle")
    n = len(keys)
    assert page.text_content("#progress") == f"0 of {2 * n} rated"
    assert page.text_content("#question") == "What would casual observers think about the gender of this face?"

    def rows():
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            path = run_dir / "annotations.csv"
            if path.is_file() and len(path.read_text().splitlines()) > expected:
                return [line.split(",") for line in path.read_text().splitlines()[1:]]
            time.sleep(0.05)
        pytest.fail(f"annotations.csv did not reach {expected} rows")

    for key in ("3", "5", "1"):
        page.keyboard.press(key)
    expected = 3
    assert rows() == [[keys[0], "gender_presentation", "carol", "3"], [keys[1], "gender_presentation", "carol", "5"],
                      [keys[2], "gender_presentation", "carol", "1"]]
    assert page.text_content("#where").startswith("image 4 of")
    page.keyboard.press("Backspace")
    assert page.text_content("#where").startswith("image 3 of") and page.text_content("button.chosen .label") == "masculine"
    page.keyboard.press("ArrowLeft")
    assert page.text_content("#where").startswith("image 2 of") and page.text_content("button.chosen .label") == "feminine"
    page.keyboard.press("2")  # a second answer for image 2: appended, and the one that counts
    page.keyboard.press("u")
    expected = 5
    assert rows()[3:] == [[keys[1], "gender_presentation", "carol", "2"], [keys[2], "fakeness", "carol", "5"]]
    assert page.is_visible("#badge") and page.text_content("#where").startswith("image 3 of")
    rated = read_annotations(run_dir / "annotations.csv").query("attribute == 'gender_presentation'")
    assert dict(zip(rated["image"], rated["value"])) == {keys[0]: 3, keys[1]: 2, keys[2]: 1}
    page.keyboard.press("9")  # no level 9 on a five-level scale: nothing happens
    assert page.text_content("#where").startswith("image 3 of")
    assert page.text_content("#progress") == f"3 of {2 * n} rated" and page.text_content("#status") == "saved 5"

    origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
    links = page.eval_on_selector_all("[src], [href]", "els => els.map(e => e.src || e.href)")
    assert links and all(link.startswith(origin + "/") for link in links), links
    page.reload()
    page.wait_for_load_state("networkidle")
    assert page.text_content("#where").startswith("image 4 of")  # the first image carol has not rated
    assert not errors, errors
    page.close()

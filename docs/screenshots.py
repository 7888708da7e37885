"""Makes the README's two screenshots: a campaign report (docs/report.png) and the rating page
(docs/annotate.png), each from a real run, in the system's headless Chromium (Playwright).

    python docs/screenshots.py            # about a minute; needs `apt-get install -y chromium`
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from playwright.sync_api import sync_playwright

import searcher
from searcher.campaign import Campaign
from searcher.testing.ports import free_port

HERE = Path(__file__).parent


def report_png(browser, work: Path) -> None:
    """The failures gallery of a 400-evaluation random campaign against the Haar detector, filtered,
    sorted and with one failure's values open."""
    run = work / "report_speed"
    Campaign(generator="faces", target="haar-face", strategy="random", budget=400, seed=0, out=str(run)).run(progress=False)
    page = browser.new_page(viewport={"width": 1200, "height": 760})
    page.goto(searcher.report(run).as_uri())
    page.fill("#failures-filter", "eyewear=none skin_tone>4")
    page.select_option("#failures-sort", label="yaw")
    page.locator("#failures figure.item:visible").nth(2).click()
    page.locator('#failures').evaluate("g => g.closest('section').scrollIntoView()")
    page.screenshot(path=str(HERE / "report.png"))


def annotate_png(browser, work: Path) -> None:
    """The rating page of alice on a small random campaign, after four answers and one step back."""
    run = work / "ann_demo"
    Campaign(generator="faces", target="dlib-hog", strategy="random", budget=24, batch=8, seed=3, out=str(run)).run(progress=False)
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "searcher.cli", "annotate", str(run), "--attributes",
                               "skin_tone,gender_presentation,fakeness", "--annotator", "alice", "--port", str(port)])
    try:
        url = f"http://127.0.0.1:{port}/"
        for _ in range(120):
            try:
                if httpx.get(url, timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.5)
        page = browser.new_page(viewport={"width": 1080, "height": 600})
        page.goto(url)
        for key in ("2", "3", "4", "3", "ArrowLeft"):
            page.keyboard.press(key)
            page.wait_for_timeout(150)
        page.screenshot(path=str(HERE / "annotate.png"))
    finally:
        server.terminate()
        server.wait()


def main() -> None:
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        sys.exit("headless Chromium not found: apt-get install -y chromium")
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        report_png(browser, Path(tmp))
        annotate_png(browser, Path(tmp))
        browser.close()
    print(f"wrote {HERE / 'report.png'} and {HERE / 'annotate.png'}")


if __name__ == "__main__":
    main()

"""Fixtures shared by several test modules."""

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

import generators
from searcher.campaign import Campaign
from searcher.testing.ports import free_port

sys.path.insert(0, str(Path(__file__).parent))  # shared test helpers (tiny_checkpoint.py, project_scripts.py) import by name


@pytest.fixture(scope="session")
def latent():
    """`faces-latent` at 64 px: renders fast, same latent space."""
    return generators.load("faces-latent", resolution=64)


@pytest.fixture(scope="session")
def stored_campaign(tmp_path_factory):
    """`stored_campaign(name, **settings)`: the directory `name` of a finished campaign with these
    settings, run once per test session; tests read it and never write into it."""
    made = {}

    def make(name: str, **settings) -> Path:
        key = json.dumps([name, settings], sort_keys=True)
        if key not in made:
            made[key] = tmp_path_factory.mktemp("campaigns") / name
            Campaign(**settings, out=str(made[key])).run(progress=False)
        return made[key]

    return make


@pytest.fixture(scope="session")
def haar_campaign(stored_campaign):
    """60 random evaluations of OpenCV's Haar face detector on 96 px faces (the export and report tests read it)."""
    return stored_campaign("haar", generator="faces", target="haar-face", strategy="random", budget=60, batch=20, seed=1,
                           generator_options={"resolution": 96})


@pytest.fixture
def unused_port() -> int:
    """A loopback port nothing listens on (free when asked)."""
    return free_port()


@pytest.fixture(scope="module")
def serve_target(request):
    """`serve_target(name, *flags)` starts `searcher serve-target NAME` on a free loopback port in a
    subprocess (stopped after the module) and returns the URL of /predict once /health answers."""

    def start(name: str, *extra: str) -> str:
        port = free_port()
        cmd = [sys.executable, "-m", "searcher.cli", "serve-target", name, "--host", "127.0.0.1", "--port", str(port), *extra]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

        def stop() -> None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

        request.addfinalizer(stop)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"serve-target exited with {proc.returncode}: {proc.stderr.read()}")
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    return f"{base}/predict"
            except httpx.TransportError:
                time.sleep(0.1)
        pytest.fail("serve-target did not answer /health within 90 s")

    return start


CHROMIUM_MISSING = ("headless Chromium not found (no `chromium` on PATH): install the distribution's package with "
                    "`apt-get install -y chromium` (.ci/run does so as root) to run the browser tests")


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium (the system's package, never a download) driven by Playwright; the test is
    skipped with the reason where either is missing."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed: pip install -e '.[test]'")
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        pytest.skip(CHROMIUM_MISSING)
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def open_page(browser):
    """`open_page(path)` -> (page, requests, problems): a Chromium page loaded from the file `path`,
    with every URL it requested and every console error or warning and script error it raised (a
    self-contained report requests its own file only, and raises nothing)."""

    def load(path):
        page = browser.new_page()
        requests, problems = [], []
        page.on("request", lambda r: requests.append(r.url))
        page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        return page, requests, problems

    return load

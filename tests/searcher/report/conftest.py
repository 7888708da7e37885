"""What every report test shares: the Haar campaign they report on, a retraining directory, and
reading a report back (its tags and sections, the values behind a gallery, the check that the page
is self-contained)."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from searcher.report.page import CSP
from searcher.retrain.harness import RetrainResult, _write


class ReportPage(HTMLParser):
    """The parts of a report the tests look at: its text, every tag with its attributes, and the sections' ids."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    def find(self, tag: str, **attrs: str) -> list[dict[str, str]]:
        return [a for t, a in self.tags if t == tag and all(a.get(k.rstrip("_").replace("_", "-")) == v for k, v in attrs.items())]

    @property
    def ids(self) -> set[str]:
        return {a["id"] for _, a in self.tags if "id" in a}

    def gallery(self, gid: str) -> dict:
        """The JSON values behind a gallery (`columns`, `rows`)."""
        opening = f'<script type="application/json" id="{gid}-data">'
        start = self.text.index(opening) + len(opening)
        return json.loads(self.text[start : self.text.index("</script>", start)])

    def assert_self_contained(self) -> None:
        """The CSP is there and blocks outside fetches; every src is inline and every link stays in the page."""
        (meta,) = self.find("meta", http_equiv="Content-Security-Policy")
        assert meta["content"] == CSP and "default-src 'none'" in CSP and "img-src data:" in CSP
        for tag, attrs in self.tags:
            assert tag not in ("link", "iframe", "object", "embed", "base", "form"), f"<{tag}> in the page"
            assert "srcset" not in attrs and "action" not in attrs
            if "src" in attrs:
                assert attrs["src"].startswith("data:"), f"<{tag} src={attrs['src'][:60]}>"
            if "href" in attrs:
                assert attrs["href"].startswith("#"), f"<{tag} href={attrs['href']}>"
        text = self.text
        assert "url(" not in text and "@import" not in text and "fetch(" not in text and "XMLHttpRequest" not in text


@pytest.fixture(scope="module")
def campaign(haar_campaign):
    """60 random evaluations of the Haar detector (tests/conftest.py's, shared within a session)."""
    return haar_campaign


@pytest.fixture(scope="module")
def planted(stored_campaign):
    """400 random evaluations of a planted target that fails in one box over two of the generator's
    three coordinates: a third of them fail, in modes large enough for `searcher explain` to rule
    (renders and judges in a second or two)."""
    return stored_campaign("planted-modes", generator="planted", target="planted", strategy="random", budget=400, batch=200,
                           generator_options={"dim": 3}, target_options={"dim": 2, "k": 1, "volume": 0.3})


@pytest.fixture(scope="session")
def read_report():
    """`read_report(path)`: the report written at `path`, as a `ReportPage`."""
    return lambda path: ReportPage(Path(path).read_text())


@pytest.fixture(scope="module")
def retrained(tmp_path_factory):
    """A retraining directory written by the harness's own writer from a small made-up table: five
    arms, two seeds, two test sets, two subgroups (no model is trained)."""
    rng = np.random.default_rng(0)
    sizes = {"base": 100, "hard": 120, "random": 120, "spread": 120, "balanced": 100}
    scores = pd.DataFrame([{"arm": arm, "seed": seed, "test": test, "train_size": size, "accuracy": rng.uniform(0.6, 0.9),
                            "balanced_accuracy": rng.uniform(0.5, 0.9)}
                           for seed in (0, 1) for arm, size in sizes.items() for test in ("balanced", "ppb")])
    groups = pd.DataFrame([{"arm": r.arm, "seed": r.seed, "test": r.test, "group": group, "n": 40, "errors": int(rng.integers(0, 40))}
                           for r in scores.itertuples() for group in ("short-haired feminine", "long-haired masculine")])
    out = tmp_path_factory.mktemp("retrain") / "gender20"
    out.mkdir()
    _write(RetrainResult(out, scores, groups, 20))
    return out

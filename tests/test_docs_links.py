"""The README and docs/ link to each other by section: a renamed heading or a moved file must not
leave a link that lands nowhere. Every relative link (images included) names a file that exists,
and every `#anchor` a heading of that file, as GitHub slugs headings."""

import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "lab" / "README.md", ROOT / "experiments" / "README.md"]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped but for hyphens, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@functools.cache  # a page is linked to many times: read and slugged once
def anchors(page: Path) -> frozenset[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)  # a '#' in a code block is no heading
    return frozenset(slug(m.group(1)) for m in re.finditer(r"^#+\s+(.+)$", text, flags=re.M))


def test_slug_follows_github() -> None:
    assert slug("The benchmark suite (`searcher bench`)") == "the-benchmark-suite-searcher-bench"
    assert slug("`faces-cvae`: a conditional VAE with an encoder, shipped") == "faces-cvae-a-conditional-vae-with-an-encoder-shipped"
    assert slug("Denton et al.'s counterfactuals") == "denton-et-als-counterfactuals"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_lands(page: Path) -> None:
    broken = []
    for link in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", link):
            continue  # http(s), mailto: not ours to check offline
        path, _, anchor = link.partition("#")
        target = ((page.parent / path) if path else page).resolve()  # docs/../README.md is README.md: one cache entry
        if not target.exists():
            broken.append(f"{link} (no file {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target})")
        elif anchor and target.suffix == ".md" and anchor not in anchors(target):
            broken.append(f"{link} (no heading with that anchor)")
    assert not broken, f"{page.name}: " + "; ".join(broken)

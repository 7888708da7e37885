"""Reports and exports of large campaigns stay bounded: a gallery over its limit samples the
campaign (past 20 times the limit, over a seeded uniform sample), shows only the images a
campaign kept, and a reader that needs an image the campaign did not keep says so in one line."""

from __future__ import annotations

import sqlite3
from contextlib import closing

import pytest

from searcher.campaign import Campaign
from searcher.errors import ParameterError
from searcher.export.select import exportable
from searcher.export.source import read_source
from searcher.report.gallery import galleries

PLANTED = {"k": 2, "volume": 0.1}


@pytest.fixture(scope="module")
def sampled(tmp_path_factory):
    """A 300-trial planted campaign that kept its failures' images and a fifth of the others', as
    one run with `images=0.2` stores them (image NULL for the rest)."""
    out = tmp_path_factory.mktemp("scale") / "c"
    Campaign(generator="planted", target="planted", strategy="random", budget=300, batch=100, out=str(out),
             generator_options=PLANTED, target_options=PLANTED).run(progress=False)
    with closing(sqlite3.connect(out / "campaign.sqlite")) as db, db:
        db.execute("UPDATE trials SET image = NULL WHERE failure = 0 AND (step * 100 + idx) % 5 != 0")
    return read_source(out)


def test_gallery_over_its_limit_samples_the_campaign(sampled):
    fails, passes = galleries(sampled, 2, lambda truth: [])
    assert len(fails.images) == 2 and fails.note.startswith("2 of ") and "sample" not in fails.note
    assert len(passes.images) == 2 and "a seeded uniform sample of 40" in passes.note  # more than 20 x 2 kept an image


def test_gallery_shows_only_kept_images(sampled):
    kept = int(sampled.rows["image"].notna().sum())
    _, passes = galleries(sampled, 1000, lambda truth: [])
    n_passes = int((sampled.rows["loss"] < 0.5).sum())
    assert len(passes.images) == kept - int((sampled.rows["loss"] >= 0.5).sum()) < n_passes
    assert f"of the {n_passes} kept an image" in passes.note


def test_reader_of_an_image_not_kept_gives_one_line(sampled):
    dropped = sampled.rows[sampled.rows["image"].isna()].iloc[:1]
    with pytest.raises(ParameterError, match="was not kept") as info:
        next(sampled.png(dropped))
    assert "\n" not in str(info.value) and f"trial {dropped['trial'].iloc[0]}" in str(info.value)


def test_export_leaves_out_trials_without_an_image(sampled):
    rows = exportable(sampled.rows)
    assert rows["image"].notna().all() and len(rows) == int(sampled.rows["image"].notna().sum())
    assert sum(1 for _ in sampled.png(rows)) == len(rows)

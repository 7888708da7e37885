"""The store's writes on a thread of their own (`Writer`): in order, a failure stops those after it
and reaches the loop, and a campaign stopped by one resumes to the run never stopped."""

from __future__ import annotations

import errno
import sqlite3
from contextlib import closing

import pandas as pd
import pytest

from searcher.campaign import Campaign, load_campaign
from searcher.campaign.loop import run_or_resume
from searcher.campaign.store import Store
from searcher.campaign.writer import Writer
from searcher.errors import SearcherError


def test_writes_run_in_order_and_a_failure_stops_those_after_it_and_is_raised_once():
    done, writer = [], Writer(depth=1)
    for i in range(5):
        writer.submit(lambda i=i: done.append(i))
    writer.drain()
    assert done == [0, 1, 2, 3, 4]

    def fail():
        raise OSError(errno.ENOSPC, "No space left on device")

    writer.submit(fail)
    writer.submit(lambda: done.append("after"))
    with pytest.raises(OSError, match="No space"):
        writer.drain()
    writer.drain()  # raised once
    writer.submit(lambda: done.append("later"))
    writer.close()
    assert done == [0, 1, 2, 3, 4]  # nothing after the failed write ran


def test_a_full_disk_on_the_writer_stops_the_campaign_whole_and_its_resume_equals_the_run_never_stopped(tmp_path, monkeypatch):
    settings = {"generator": "planted", "target": "planted", "strategy": "bo-modes", "budget": 48, "batch": 8, "seed": 4}
    write, calls = Store._save_image, []

    def save(self, image):
        calls.append(1)
        if len(calls) == 21:  # in the third batch
            raise OSError(errno.ENOSPC, "No space left on device")
        return write(self, image)

    monkeypatch.setattr(Store, "_save_image", save)
    campaign = Campaign(**settings, out=str(tmp_path / "full"))
    with pytest.raises(SearcherError, match="the disk is full"):
        run_or_resume(campaign, progress=False)
    monkeypatch.undo()
    with closing(sqlite3.connect(tmp_path / "full" / "campaign.sqlite")) as db:
        steps = [s for (s,) in db.execute("SELECT step FROM steps ORDER BY step")]
        stored = dict(db.execute("SELECT step, COUNT(*) FROM trials GROUP BY step").fetchall())
    assert steps == [0, 1] and stored == {0: 8, 1: 8}  # whole batches; the failed one rolled back, nothing after it written
    run_or_resume(campaign, progress=False)
    reference = Campaign(**settings, out=str(tmp_path / "clean")).run(progress=False)
    columns = ["step", "idx", "loss", "image", "source"]
    resumed = load_campaign(tmp_path / "full").trials
    pd.testing.assert_frame_equal(resumed[columns], reference.trials[columns])
    assert resumed["x"].map(tuple).tolist() == reference.trials["x"].map(tuple).tolist()

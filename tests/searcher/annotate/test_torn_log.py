"""A torn line in annotations.csv costs no rating (issue 73, defect 8): a new rating never lands on
the fragment a killed writer or a full disk left, a failed write is refused in one line and leaves
the file as it was, and the page, `searcher analyze` and `searcher report` skip a damaged line,
say which one, and count every other rating."""

from __future__ import annotations

import errno
import html
import json
import logging
import os
import re
import shutil

import pytest
from starlette.testclient import TestClient

from searcher.analysis.annotations import read_annotations
from searcher.annotate import app
from searcher.annotate.images import read_images
from searcher.annotate.log import RatingLog
from searcher.report import report
from searcher.studies.analyze import analyze

CAMPAIGN = {"generator": "faces", "target": "haar-face", "budget": 12, "batch": 4, "generator_options": {"resolution": 64},
            "strategy": "random"}
HEADER = "image,attribute,annotator,value\n"


@pytest.fixture
def run_dir(stored_campaign, tmp_path):
    """A copy of a small finished random campaign, to rate and analyse."""
    return shutil.copytree(stored_campaign("annotate-random", **CAMPAIGN), tmp_path / "run")


def client(directory, annotator):
    return TestClient(app(directory, "skin_tone", annotator), base_url="http://127.0.0.1:8765")


def answers(c):
    """This annotator's skin_tone answers as the page starts from them (0: none)."""
    page = c.get("/")
    assert page.status_code == 200, page.text
    return json.loads(re.search(r'<script type="application/json" id="state"[^>]*>(.*?)</script>', page.text, re.S).group(1))[
        "answers"]["skin_tone"]


def test_a_rating_after_a_torn_last_line_starts_a_line_of_its_own(run_dir):
    keys = read_images(run_dir).keys
    path = run_dir / "annotations.csv"
    path.write_text(f"{HEADER}{keys[0]},skin_tone,alice,2\n{keys[1]},skin_to")  # killed in the middle of a rating
    alice = client(run_dir, "alice")
    assert alice.post("/rate", json={"image": 2, "attribute": "skin_tone", "value": 4}).json() == {"ok": True}

    assert path.read_text().splitlines()[1:] == [f"{keys[0]},skin_tone,alice,2", f"{keys[1]},skin_to", f"{keys[2]},skin_tone,alice,4"]
    assert answers(alice)[:4] == [2, 0, 4, 0]  # the rating after the fragment is read back, the fragment is not a rating
    table = read_annotations(path)
    assert sorted(map(tuple, table.to_numpy().tolist())) == sorted([(keys[0], "skin_tone", "alice", 2), (keys[2], "skin_tone", "alice", 4)])


def test_a_torn_header_is_completed_rather_than_glued_to(tmp_path):
    path = tmp_path / "annotations.csv"
    path.write_text("image,attri")  # the first rating's write, torn inside the header
    assert read_annotations(path).empty
    RatingLog(path).append("img-1", "skin_tone", "alice", 3)
    assert path.read_text() == f"{HEADER}img-1,skin_tone,alice,3\n"


def test_garbage_in_the_middle_is_skipped_and_named_and_every_other_rating_counts(run_dir, tmp_path, caplog):
    keys = read_images(run_dir).keys
    path = run_dir / "annotations.csv"
    good = [(0, "alice", 2), (1, "bob", 5), (2, "alice", 6), (3, "bob", 1)]
    lines = [f"{keys[i]},skin_tone,{who},{v}".encode() for i, who, v in good]
    path.write_bytes(HEADER.encode() + b"\n".join([
        lines[0],
        f"{keys[4]},skin_to{keys[5]},skin_tone,bob,3".encode(),  # a rating glued to a fragment, as before the fix
        lines[1],
        b"\xff\xfe\x00 garbage",                                  # bytes that are no text at all
        f"{keys[6]},skin_tone,alice,".encode(),                   # torn just before the value
        lines[2],
        f'{keys[7]},"skin_tone,alice,3'.encode(),                 # an unclosed quote swallows nothing after it
        lines[3],
    ]) + b"\n")

    with caplog.at_level(logging.WARNING, logger="searcher.annotations"):
        assert answers(client(run_dir, "alice"))[:8] == [2, 0, 6, 0, 0, 0, 0, 0]
    (warning,) = [r.getMessage() for r in caplog.records]
    assert warning.startswith(f"{path}: skipped 4 line(s) that are not a rating") and all(
        f"line {n} (" in warning for n in (3, 5, 6, 8)), warning

    table = read_annotations(path)
    assert sorted(map(tuple, table.to_numpy().tolist())) == sorted((keys[i], "skin_tone", who, v) for i, who, v in good)
    counted = "human ratings (annotations.csv) from 2 annotator(s) (alice, bob): 4 ratings of 4 images"
    assert counted in analyze(run_dir, out=tmp_path / "analysis", attributes=["skin_tone"], n_boot=0).summary()
    assert counted in html.unescape(report(run_dir, out=tmp_path / "report.html", n_boot=0).read_text())


def test_a_full_disk_is_refused_in_one_line_and_the_next_rating_is_whole(run_dir, monkeypatch):
    keys = read_images(run_dir).keys
    path = run_dir / "annotations.csv"
    alice = client(run_dir, "alice")
    assert alice.post("/rate", json={"image": 0, "attribute": "skin_tone", "value": 3}).status_code == 200
    before = path.read_bytes()
    real_write, target = os.write, str(path.resolve())

    def full_disk(fd, data):
        """Writes half the bytes to the ratings file, then finds the disk full; other files are untouched."""
        if os.readlink(f"/proc/self/fd/{fd}") != target:
            return real_write(fd, data)
        real_write(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with monkeypatch.context() as patch:
        patch.setattr(os, "write", full_disk)
        r = alice.post("/rate", json={"image": 1, "attribute": "skin_tone", "value": 5})
    assert r.status_code == 507 and r.json() == {"error": f"could not save the rating: disk full ({path})"}
    assert path.read_bytes() == before  # the half line is cut off again

    assert alice.post("/rate", json={"image": 1, "attribute": "skin_tone", "value": 6}).status_code == 200  # space is back
    assert path.read_text().splitlines() == [HEADER.strip(), f"{keys[0]},skin_tone,alice,3", f"{keys[1]},skin_tone,alice,6"]
    assert answers(alice)[:3] == [3, 6, 0]


def test_a_fragment_left_when_even_cutting_it_off_fails_is_ended_before_the_next_rating(run_dir, monkeypatch):
    keys = read_images(run_dir).keys
    path = run_dir / "annotations.csv"
    alice = client(run_dir, "alice")
    real_write, target = os.write, str(path.resolve())

    def full_disk(fd, data):
        if os.readlink(f"/proc/self/fd/{fd}") != target:
            return real_write(fd, data)
        real_write(fd, data[: len(data) - 3])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def no_truncate(fd, size):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    with monkeypatch.context() as patch:
        patch.setattr(os, "write", full_disk)
        patch.setattr(os, "ftruncate", no_truncate)
        assert alice.post("/rate", json={"image": 0, "attribute": "skin_tone", "value": 3}).status_code == 507
    assert not path.read_text().endswith("\n")  # the torn line is still there

    assert alice.post("/rate", json={"image": 1, "attribute": "skin_tone", "value": 2}).status_code == 200
    assert path.read_text().splitlines()[-1] == f"{keys[1]},skin_tone,alice,2"
    assert answers(alice)[:2] == [0, 2]


def test_a_rating_the_page_cannot_read_is_named_in_one_line_not_a_traceback(run_dir):
    keys = read_images(run_dir).keys
    (run_dir / "annotations.csv").write_text(f"{HEADER}{keys[0]},wings,alice,2\n")  # parses, but no such scale
    page = client(run_dir, "alice").get("/")
    assert page.status_code == 500 and page.headers["content-type"].startswith("text/plain")
    assert page.text.startswith("searcher annotate: No annotation scale for attribute 'wings'") and page.text.count("\n") == 1

"""`searcher doctor`: a campaign's state read back, each kind of damage named with what to do."""

import sqlite3

from searcher.campaign import Campaign
from searcher.campaign.doctor import check_campaign
from searcher.cli import main

PLANTED = {"generator": "planted", "target": "planted", "strategy": "random", "budget": 24, "batch": 8,
           "target_options": {"error_rate": 0.2}}


def test_a_healthy_campaign(tmp_path, capsys):
    Campaign(**PLANTED, out=str(tmp_path / "c")).run(progress=False)
    up = check_campaign(tmp_path / "c", decode=True)
    assert up.ok and (up.trials, up.steps, up.unfinished) == (24, 3, 0) and up.errors > 0
    assert main(["doctor", str(tmp_path / "c")]) == 0
    out = capsys.readouterr().out
    assert "24 trials in 3 committed batches" in out and "evaluates them again" in out and out.strip().endswith("healthy")


def test_damage_is_listed_with_what_to_do(tmp_path, capsys):
    out = tmp_path / "c"
    trials = Campaign(**PLANTED, out=str(out)).run(progress=False).trials
    digests = trials["image"].dropna().unique()
    (out / "images" / digests[0][:2] / f"{digests[0]}.png").unlink()
    (out / "images" / digests[1][:2] / f"{digests[1]}.png").write_bytes(b"not a png")
    with sqlite3.connect(out / "campaign.sqlite") as db:
        db.execute("UPDATE trials SET truth = '{broken' WHERE step = 1 AND idx = 2")
        db.execute("DELETE FROM steps WHERE step = 2")
    up = check_campaign(out, decode=True)
    assert not up.ok and len(up.missing) == 1 and len(up.unreadable) == 1 and up.bad_rows == ["trial 1-2"] and up.unfinished == 8
    assert main(["doctor", str(out), "--decode"]) == 1
    text = capsys.readouterr().out
    assert "1 images missing: trial" in text and "1 rows that do not parse: trial 1-2" in text and "unfinished batch" in text


def test_a_damaged_store_is_one_paragraph_not_a_traceback(tmp_path, capsys):
    Campaign(**PLANTED, out=str(tmp_path / "c")).run(progress=False)
    (tmp_path / "c" / "campaign.sqlite").write_bytes(b"garbage" * 100)
    for wal in ("campaign.sqlite-wal", "campaign.sqlite-shm"):
        (tmp_path / "c" / wal).unlink(missing_ok=True)
    assert main(["doctor", str(tmp_path / "c")]) == 1
    text = capsys.readouterr().out
    assert "campaign.sqlite is damaged" in text and "images under images/ are intact" in text and "Traceback" not in text
    assert main(["doctor", str(tmp_path / "nothing")]) == 1
    assert "campaign.sqlite is missing" in capsys.readouterr().out

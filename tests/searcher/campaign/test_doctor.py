"""`searcher doctor`: a campaign's state read back, each kind of damage named with what to do."""

import sqlite3

import pytest

from searcher.campaign import Campaign, load_campaign
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


def test_doctor_opens_exactly_the_directory_it_is_given(tmp_path, capsys):
    """`%41`, `?` and `#` in a name once changed the file an unescaped SQLite URI opened (`aA`, made new)."""
    out = tmp_path / "a%41?b#c"
    Campaign(**PLANTED, out=str(out)).run(progress=False)
    listing = sorted(p.name for p in tmp_path.iterdir())
    assert main(["doctor", str(out)]) == 0
    assert "24 trials in 3 committed batches" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == listing and not (tmp_path / "aA").exists()


def _corrupt(out, sql, *args):
    db = sqlite3.connect(out / "campaign.sqlite")
    db.execute(sql, args)
    db.commit()
    db.close()


@pytest.mark.parametrize("sql, named", [
    ("UPDATE meta SET value = '{broken' WHERE key = 'config'", "configuration does not parse"),
    ("UPDATE meta SET value = json_set(value, '$.budget', -5) WHERE key = 'config'", "configuration does not parse"),
    ("UPDATE meta SET value = json_set(value, '$.colour', 1) WHERE key = 'config'", "configuration does not parse"),
    ("UPDATE steps SET state = 'nope' WHERE step = 1", "1 strategy states that do not parse: step 1"),
    ("UPDATE steps SET state = '[1, 2]' WHERE step = 2", "1 strategy states that do not parse: step 2"),
])
def test_doctor_checks_what_a_resume_parses(tmp_path, capsys, sql, named):
    """Once "healthy" about stores on which `--resume` then tracebacked; the resume now ends in one line."""
    out = tmp_path / "c"
    Campaign(**PLANTED, out=str(out)).run(progress=False)
    _corrupt(out, sql)
    assert main(["doctor", str(out)]) == 1
    text = capsys.readouterr().out
    assert named in text and text.strip().endswith("problems found") and "--salvage NEW" in text and "24 trials can be saved" in text
    code = main(["hunt", "--resume", str(out), "--budget", "32", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err


def test_doctor_restores_each_strategy_state_as_a_resume_does(tmp_path, capsys):
    """A state that is JSON but that the strategy's own `restore` refuses (bo's `fitted_on`)."""
    out = tmp_path / "c"
    Campaign(**{**PLANTED, "strategy": "bo", "budget": 16, "strategy_options": {"n_init": 8}}, out=str(out)).run(progress=False)
    _corrupt(out, "UPDATE steps SET state = json_set(state, '$.fitted_on', 'many') WHERE step = 1")
    up = check_campaign(out)
    assert not up.ok and len(up.bad_states) == 1 and up.bad_states[0].startswith("step 1 (ValueError")
    assert main(["doctor", str(out)]) == 1 and "strategy states that do not parse: step 1" in capsys.readouterr().out
    assert main(["hunt", "--resume", str(out), "--budget", "24", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "does not restore" in err and "searcher doctor" in err


def test_salvage_saves_the_trials_that_read_into_a_store_the_readers_read(tmp_path, capsys):
    out, saved = tmp_path / "c", tmp_path / "saved"
    trials = Campaign(**PLANTED, out=str(out)).run(progress=False).trials
    _corrupt(out, "UPDATE trials SET x = '[0.1,' WHERE step = 1 AND idx = 2")
    assert main(["doctor", str(out)]) == 1
    assert "23 trials can be saved: `searcher doctor" in capsys.readouterr().out
    assert main(["doctor", str(out), "--salvage", str(saved)]) == 0
    assert "salvaged 23 trials" in capsys.readouterr().out
    kept = load_campaign(saved)
    assert len(kept.trials) == 23 and kept.config["generator"] == "planted"
    assert (kept.trials["step"].astype(str) + "-" + kept.trials["idx"].astype(str)).tolist() == [
        f"{s}-{i}" for s, i in zip(trials["step"], trials["idx"]) if (s, i) != (1, 2)]
    assert all((saved / "images" / h[:2] / f"{h}.png").is_file() for h in kept.trials["image"].dropna())
    assert main(["report", str(saved), "--out", str(tmp_path / "r.html"), "--boot", "2"]) == 0
    assert main(["analyze", str(saved), "--out", str(tmp_path / "a"), "--boot", "2"]) == 0
    assert main(["doctor", str(saved)]) == 0 and "salvaged from" in capsys.readouterr().out
    assert main(["hunt", "--resume", str(saved), "--no-progress"]) == 2
    assert "not resumed" in capsys.readouterr().err
    assert main(["doctor", str(out), "--salvage", str(saved)]) == 2  # not new or empty
    assert "not empty" in capsys.readouterr().err


def test_salvage_reads_past_a_damaged_page(tmp_path, capsys):
    """A page of the trials table overwritten: the rows on the other pages are saved."""
    out, saved = tmp_path / "c", tmp_path / "saved"
    trials = Campaign(**PLANTED, out=str(out)).run(progress=False).trials
    db_path = out / "campaign.sqlite"
    digest = trials.loc[(trials.step == 1) & (trials.idx == 2), "image"].iloc[0]
    data = bytearray(db_path.read_bytes())
    page = data.find(digest.encode()) // 4096  # the default page size
    data[page * 4096] = 0xFF  # not a b-tree page any more
    db_path.write_bytes(bytes(data))
    up = check_campaign(out)
    assert not up.ok and up.lost_rows > 0 and up.damaged is None
    assert main(["doctor", str(out), "--salvage", str(saved)]) == 0
    kept = load_campaign(saved).trials
    assert 0 < len(kept) < 24 and digest not in set(kept["image"])

"""Read-only campaigns (issue 73, defect 4): the commands that only read open the store read-only,
read an archive whose directory cannot be written, and never call it damaged; `--resume` of one
says it is read-only and how to go on."""

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys

import pytest

from searcher.campaign import Campaign, load_campaign
from searcher.campaign.store import Store, read_only_uri
from searcher.cli import main

PLANTED = {"generator": "planted", "target": "planted", "strategy": "random", "budget": 16, "batch": 8}


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _columns(db_path):
    db = sqlite3.connect(db_path)
    try:
        return {row[1] for row in db.execute("PRAGMA table_info(trials)")}
    finally:
        db.close()


@pytest.fixture
def old_store(tmp_path):
    """A finished campaign whose store is as schema version 1 wrote it (no `source`, `composite`):
    opening it to write would upgrade it, so any write by a reader shows."""
    out = tmp_path / "c"
    Campaign(**PLANTED, out=str(out)).run(progress=False)
    db = sqlite3.connect(out / "campaign.sqlite")
    db.execute("ALTER TABLE trials DROP COLUMN source")
    db.execute("ALTER TABLE trials DROP COLUMN composite")
    db.close()
    return out


def test_a_store_opened_read_only_reads_everything_and_writes_nothing(old_store):
    db_path = old_store / "campaign.sqlite"
    before = _digest(db_path)
    store = Store(old_store, readonly=True)
    try:
        trials = store.trials()
        assert len(trials) == 16 and trials["source"].isna().all() and "composite" in trials  # filled in, not upgraded
        assert store.config["generator"] == "planted" and len(store.steps()) == 2
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            store.save_config({"generator": "x"})
    finally:
        store.close()
    assert _digest(db_path) == before and "source" not in _columns(db_path)


def test_the_reading_commands_leave_the_store_as_it_was(old_store, tmp_path, capsys):
    """report, gallery, doctor, analyze and export read the store; none upgrades or writes it."""
    db_path = old_store / "campaign.sqlite"
    before = _digest(db_path)
    assert main(["report", str(old_store), "--out", str(tmp_path / "r.html"), "--boot", "2"]) == 0
    assert main(["gallery", str(old_store), "--out", str(tmp_path / "g.png")]) == 0
    assert main(["doctor", str(old_store)]) == 0
    assert main(["analyze", str(old_store), "--out", str(tmp_path / "a"), "--boot", "2"]) == 0
    assert main(["export", str(old_store), "--out", str(tmp_path / "e")]) in (0, 2)  # a campaign may have nothing to export
    assert "Traceback" not in capsys.readouterr().err
    assert _digest(db_path) == before and "source" not in _columns(db_path)
    assert len(load_campaign(old_store).trials) == 16


def test_resume_of_a_campaign_it_cannot_write_says_read_only(tmp_path, monkeypatch, capsys):
    """Root may write anything, so the read-only directory is emulated where the store asks."""
    out = tmp_path / "c"
    Campaign(**PLANTED, out=str(out)).run(progress=False)
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if mode & os.W_OK and str(p).startswith(str(out)) else real(p, mode, **kw))
    assert main(["hunt", "--resume", str(out), "--budget", "24", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{out} is read-only" in err and "cp -r" in err and "damaged" not in err
    with pytest.raises(Exception, match="is read-only"):
        Campaign(**{**PLANTED, "budget": 24}, out=str(out)).run(progress=False, resume=True)


@pytest.mark.parametrize("name", ["a%41?b#c", "sp ace", "ünï", "x?mode=rw"])
def test_the_read_only_uri_names_exactly_the_file(tmp_path, name):
    path = tmp_path / name / "campaign.sqlite"
    path.parent.mkdir()
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE t (v)")
    db.execute("INSERT INTO t VALUES (7)")
    db.commit()
    db.close()
    listing = sorted(p.name for p in tmp_path.iterdir())
    db = sqlite3.connect(read_only_uri(path), uri=True)
    try:
        assert db.execute("SELECT v FROM t").fetchone() == (7,)
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            db.execute("INSERT INTO t VALUES (8)")
    finally:
        db.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == listing  # nothing stray beside it


_AS_READER = r"""
import json, sys
from searcher.cli import main
from searcher.campaign.store import Store
d, tmp = sys.argv[1], sys.argv[2]
out = {}
for name, argv in [("doctor", ["doctor", d]), ("report", ["report", d, "--out", f"{tmp}/r.html", "--boot", "2"]),
                   ("gallery", ["gallery", d, "--out", f"{tmp}/g.png"]), ("analyze", ["analyze", d, "--out", f"{tmp}/a", "--boot", "2"]),
                   ("resume", ["hunt", "--resume", d, "--no-progress"]), ("default-out", ["report", d])]:
    out[name] = main(argv)
for name in sys.argv[3:]:
    try:
        store = Store(name, readonly=True)
        out[name] = len(store.trials())
        store.close()
    except Exception as exc:
        out[name] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out))
"""


def _unprivileged() -> list[str] | None:
    """The prefix that runs a command without the right to write what it does not own: none needed
    for a user; for root, `setpriv` dropping its capability to ignore file modes (None if it cannot)."""
    if os.geteuid() != 0:
        return []
    prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]
    if shutil.which("setpriv") is None or subprocess.run([*prefix, "true"], capture_output=True).returncode != 0:
        return None
    return prefix


def test_a_read_only_directory_is_read_and_never_called_damaged(tmp_path):
    """The real thing: `chmod -R a-w` copies of a campaign, read by another process: a cleanly
    closed store (no -wal: opened immutable), and one killed with its -wal and -shm (read through
    them); one whose -wal holds trials but whose -shm is gone says to copy it."""
    prefix = _unprivileged()
    if prefix is None:
        pytest.skip("running as root without setpriv able to drop CAP_DAC_OVERRIDE: root writes a chmod a-w directory")
    c = tmp_path / "c"
    Campaign(**PLANTED, out=str(c)).run(progress=False)
    killed, torn = tmp_path / "killed", tmp_path / "torn"
    for copy in (killed, torn):
        shutil.copytree(c, copy)
        subprocess.run([sys.executable, "-c", "import os, sqlite3, sys; db = sqlite3.connect(sys.argv[1], isolation_level=None); "
                        "db.execute('PRAGMA wal_autocheckpoint=0'); db.execute('DELETE FROM trials WHERE step = 1'); os._exit(0)",
                        str(copy / "campaign.sqlite")], check=True)
    (torn / "campaign.sqlite-shm").unlink()
    for d in (c, killed, torn):
        subprocess.run(["chmod", "-R", "a-w", str(d)], check=True)
    work = tmp_path / "work"
    work.mkdir()
    try:
        env = {**os.environ, "MPLCONFIGDIR": str(work / "mpl")}
        proc = subprocess.run([*prefix, sys.executable, "-c", _AS_READER, str(c), str(work), str(killed), str(torn)],
                              capture_output=True, text=True, env=env, timeout=300)
    finally:
        for d in (c, killed, torn):
            subprocess.run(["chmod", "-R", "u+w", str(d)], check=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert {k: got[k] for k in ("doctor", "report", "gallery", "analyze")} == dict.fromkeys(("doctor", "report", "gallery", "analyze"), 0)
    assert got["resume"] == 2 and got["default-out"] == 2 and (work / "r.html").is_file()
    assert got[str(killed)] == 8 and "is read-only" in got[str(torn)] and "cp -r" in got[str(torn)]
    assert "damaged" not in proc.stdout + proc.stderr and "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("searcher: error:")]
    assert any(f"{c} is read-only" in line and "cp -r" in line for line in errors)
    assert any("Cannot write the report" in line for line in errors)
    assert sorted(p.name for p in c.iterdir()) == ["campaign.lock", "campaign.sqlite", "images"]

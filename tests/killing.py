"""Killing a running campaign once its store holds a number of trials (the resume-after-kill tests)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path


def kill_when_stored(proc: subprocess.Popen, out: Path, trials: int, timeout: float = 60.0) -> None:
    """SIGKILLs `proc` once the campaign at `out` has stored `trials` trials (or it has ended, or
    `timeout` seconds have passed), and waits for it."""
    db = out / "campaign.sqlite"
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        if db.exists():
            with sqlite3.connect(db) as con:
                try:
                    if con.execute("SELECT COUNT(*) FROM trials").fetchone()[0] >= trials:
                        break
                except sqlite3.OperationalError:  # the table is not there yet
                    pass
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()

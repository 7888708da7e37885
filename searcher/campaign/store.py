"""A campaign's record: SQLite (WAL) rows for the config, every trial and every batch, and the
images as PNG files named by content hash.

Layout of a campaign directory::

    DIR/campaign.sqlite     config, the target's spending, trials (one row per evaluation), steps (one row per batch)
    DIR/images/ab/abcdef....png

The trials of an evaluation are committed once it returns, in one statement (`add_trials`,
`executemany`), together with what the target has spent by then (`targets.base.SpendingTarget`;
one transaction), and a batch's row (with the strategy
state after `tell`) after its trials (the loop writes both in that order on a thread of its own,
`writer.py`, but for a target that spends), so a campaign killed at any moment — `kill -9`
included — loses at most the evaluations in flight or waiting to be written, a resumed campaign reuses every trial already
stored, and its target's spending cap counts every request sent (the loop stores the most an
evaluation can spend before sending it). PNGs are written to a temporary name and renamed, so a
file is whole or absent. A write that fails (a full disk) rolls its transaction back and is a
one-line `SearcherError`: nothing is stored half, and a resume once there is room goes on.
A trial may keep no image (`TrialRecord.keep_image`: a large campaign keeps its failures' and a
seeded share of the others'); its `image` is NULL, and a reader that needs it says so in one line (`not_kept`).

Commands that only read (report, gallery, analyze, export, compare, doctor) open the store with
`Store(DIR, readonly=True)` (`connect_read_only`): they change nothing, and read an archive whose
directory is read-only. Such a directory's campaign cannot be resumed in place; the message says
to copy it. A store written by `searcher doctor --salvage` is marked so and is read, never resumed.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import hashlib
import io
import json
import os
import sqlite3
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from PIL import Image

from searcher.errors import ParameterError, SearcherError
from searcher.objective import Outcome

__all__ = ["SCHEMA_VERSION", "TRIAL_COLUMNS", "DirectoryLock", "Store", "TrialRecord", "connect_read_only", "encode_png", "image_file",
           "not_kept", "read_only_uri"]

SCHEMA_VERSION = 2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS trials (
    step INTEGER NOT NULL, idx INTEGER NOT NULL, params TEXT NOT NULL, x TEXT NOT NULL,
    loss REAL, failure INTEGER, label TEXT, score REAL, boxes TEXT, truth TEXT, image TEXT,
    error TEXT, excluded TEXT, worker TEXT, seconds REAL, created REAL NOT NULL, composite REAL, source TEXT, attempts INTEGER,
    PRIMARY KEY (step, idx)
);
CREATE TABLE IF NOT EXISTS steps (step INTEGER PRIMARY KEY, size INTEGER NOT NULL, state TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS planned (step INTEGER PRIMARY KEY, x TEXT NOT NULL);
"""


_ADDED_COLUMNS = (("composite", "REAL"), ("source", "TEXT"), ("attempts", "INTEGER"))  # (name, type) added after schema version 1
#: the columns of the trials table, in order
TRIAL_COLUMNS = ("step", "idx", "params", "x", "loss", "failure", "label", "score", "boxes", "truth", "image", "error",
                 "excluded", "worker", "seconds", "created", "composite", "source", "attempts")
_TABLES = ("meta", "trials", "steps")
_SQLITE_FULL, _SQLITE_IOERR = 13, 10  # SQLite's primary result codes for a full disk and a failed read or write


def read_only_uri(path: str | os.PathLike, immutable: bool = False) -> str:
    """The SQLite URI that opens exactly the file `path` read-only: its absolute path percent-encoded
    (`Path.as_uri`), so `%41`, `?` or `#` in a directory name stay part of the name. `immutable`
    also tells SQLite that nothing changes the file, so it needs no `-shm` file beside it (a
    read-only directory); only safe when no `-wal` file holds trials not yet merged into it."""
    return f"{Path(path).absolute().as_uri()}?mode=ro{'&immutable=1' if immutable else ''}"


def connect_read_only(path: str | os.PathLike, timeout: float = 5.0) -> sqlite3.Connection:
    """A connection that reads the SQLite file `path` and cannot write it.

    SQLite reads a WAL store through a `-shm` file it creates beside it. In a directory that is not
    writable it cannot, so a store with nothing left in its `-wal` file is opened `immutable`;
    one whose `-wal` still holds trials (a campaign killed, then archived) and has no `-shm` is a
    ParameterError saying to copy it. A file that is not an SQLite database raises
    `sqlite3.DatabaseError`.
    """
    path = Path(path)
    db = sqlite3.connect(read_only_uri(path), uri=True, timeout=timeout, isolation_level=None, check_same_thread=False)
    try:
        db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return db
    except sqlite3.OperationalError:
        db.close()
        if os.access(path.parent, os.W_OK):
            raise
    wal = path.with_name(f"{path.name}-wal")
    if wal.is_file() and wal.stat().st_size > 0:
        raise ParameterError(f"{path.parent} is read-only and the last trials of {path} are still in {wal.name}, which SQLite "
                             f"reads only with a {path.name}-shm file it cannot create there. Copy the directory elsewhere "
                             f"(`cp -r {path.parent} COPY`) and read the copy.")
    db = sqlite3.connect(read_only_uri(path, immutable=True), uri=True, timeout=timeout, isolation_level=None,
                         check_same_thread=False)
    try:
        db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError:
        db.close()
        raise
    return db


def read_only_message(directory: Path) -> str:
    """What to do with a campaign whose directory (or store file) cannot be written."""
    return (f"{directory} is read-only, so its campaign cannot be resumed there. Copy it elsewhere and resume the copy "
            f"(`cp -r {directory} COPY && searcher hunt --resume COPY`); report, analyze, gallery, export and doctor read it as it is.")


def _writable(directory: Path, path: Path) -> bool:
    """Whether this process may write the store `path` in `directory` (and SQLite its -wal and -shm files)."""
    return os.access(directory, os.W_OK) and (not path.exists() or os.access(path, os.W_OK))


def _json(value: Any) -> str:
    return json.dumps(value, default=_plain, sort_keys=True)


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot store {type(value).__name__} in a campaign")


def _reads(method: Callable[..., Any]) -> Callable[..., Any]:
    """A read of the store that meets a damaged page (SQLite says "database disk image is
    malformed" only when it reads that page, long after the store opened) is a ParameterError
    naming the store and `searcher doctor`, never a traceback; a busy or locked store is left as it is."""

    @functools.wraps(method)
    def read(self: Store, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError):
                raise
            raise ParameterError(f"{self.path} is damaged ({exc}). `searcher doctor {self.dir}` says which trials can be saved "
                                 "and how; its images under images/ are intact.") from None

    return read


@dataclass(frozen=True)
class TrialRecord:
    """One evaluation to store: where it sits (`step`, `idx`), its unit-cube point `x`, what came
    back, the worker that ran it, who chose the point ("search" or "audit"), how many times it was
    evaluated, and whether its image is kept (`keep_image`; a trial that keeps none stores NULL)."""

    step: int
    idx: int
    x: np.ndarray
    outcome: Outcome
    worker: str = ""
    source: str = "search"
    attempts: int = 1
    keep_image: bool = True


class Store:
    """The SQLite record of one campaign directory: created if missing, or, with `readonly`, read
    as it is (nothing created, upgraded or written; a directory that is read-only is fine)."""

    def __init__(self, directory: str | os.PathLike, readonly: bool = False) -> None:
        self.dir = Path(directory)
        self.path = self.dir / "campaign.sqlite"
        self.readonly = readonly
        if readonly:
            self._db = self._open_read_only()
            return
        if self.path.is_file() and not _writable(self.dir, self.path):
            raise ParameterError(read_only_message(self.dir))
        try:
            (self.dir / "images").mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except (OSError, sqlite3.Error) as exc:
            raise ParameterError(f"Cannot write a campaign to {self.dir}: {getattr(exc, 'strerror', None) or exc}. "
                                 "Choose another --out.") from None
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
            salvaged = self._db.execute("SELECT value FROM meta WHERE key = 'salvaged'").fetchone()
            if salvaged is not None:
                self._db.close()
                raise ParameterError(f"{self.dir} was salvaged from {salvaged[0]} by `searcher doctor --salvage`: report, analyze "
                                     "and export read it, but it is not resumed (its strategy's history is incomplete). "
                                     "Start a new campaign with `searcher hunt` into another --out.")
            have = {row[1] for row in self._db.execute("PRAGMA table_info(trials)")}
            for column, kind in _ADDED_COLUMNS:  # stores written before a column existed
                if column not in have:
                    self._db.execute(f"ALTER TABLE trials ADD COLUMN {column} {kind}")
            self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        except sqlite3.DatabaseError as exc:
            self._db.close()
            if not _writable(self.dir, self.path):
                raise ParameterError(read_only_message(self.dir)) from None
            raise ParameterError(f"{self.path} is damaged or not a campaign store ({exc}). Move it aside and run the "
                                 "campaign again; its images under images/ are intact.") from None

    def _open_read_only(self) -> sqlite3.Connection:
        """The read-only connection; a missing, damaged or foreign file is a ParameterError naming it."""
        if not self.path.is_file():
            raise ParameterError(f"No campaign at {self.dir} (campaign.sqlite is missing).")
        try:
            db = connect_read_only(self.path)
        except sqlite3.DatabaseError as exc:
            raise ParameterError(f"{self.path} is damaged or not a campaign store ({exc}). `searcher doctor {self.dir}` "
                                 "says which trials can be saved; its images under images/ are intact.") from None
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if missing := [t for t in _TABLES if t not in tables]:
            db.close()
            raise ParameterError(f"{self.path} is not a campaign store (it has no {' or '.join(missing)} table). "
                                 "Give the directory of a campaign `searcher hunt` wrote.")
        return db

    def close(self) -> None:
        self._db.close()

    # ---------------------------------------------------------------- config

    @property
    @_reads
    def config(self) -> dict[str, Any] | None:
        """The stored configuration (None when none is stored yet); one that does not parse as a JSON
        object is a ParameterError naming the store."""
        row = self._db.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()
        if row is None:
            return None
        try:
            config = json.loads(row[0])
        except (TypeError, ValueError):
            config = None
        if not isinstance(config, dict):
            raise ParameterError(f"{self.path} holds a configuration that does not parse ({str(row[0])[:80]!r}). "
                                 f"`searcher doctor {self.dir}` says which trials can be saved, and how.")
        return config

    def save_config(self, config: dict[str, Any]) -> None:
        with self._written():
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('config', ?)", (_json(config),))

    @property
    @_reads
    def spending(self) -> dict[str, Any] | None:
        """What the campaign's targets have spent, by worker (`{"local": {"requests": 10, ...}}`), or
        None when its target spends nothing a resume must keep."""
        row = self._db.execute("SELECT value FROM meta WHERE key = 'spending'").fetchone()
        if row is None:
            return None
        try:
            state = json.loads(row[0])
        except ValueError:
            state = None
        if not isinstance(state, dict) or not all(isinstance(v, dict) for v in state.values()):
            raise ParameterError(f"{self.path} holds a target spending record that does not parse ({row[0][:80]!r}); "
                                 "a resume cannot know what its target has spent, so it does not resume it.")
        return state

    def save_spending(self, state: Mapping[str, Any]) -> None:
        """Keeps the record of what the targets have spent (in the open `transaction`, if any)."""
        self._db.execute("INSERT OR REPLACE INTO meta VALUES ('spending', ?)", (_json(dict(state)),))

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Everything written inside commits together, or not at all."""
        with self._written(), self._db:
            self._db.execute("BEGIN")
            yield

    @contextmanager
    def _written(self) -> Iterator[None]:
        """Turns a write that fails for want of room or a working disk (an image file, or SQLite's own)
        into one SearcherError saying so; the transaction around it has been rolled back by then."""
        try:
            yield
        except (OSError, sqlite3.OperationalError) as exc:
            code = getattr(exc, "sqlite_errorcode", None)
            if isinstance(exc, sqlite3.OperationalError) and (code is None or code & 0xFF not in (_SQLITE_FULL, _SQLITE_IOERR)):
                raise
            full = (code is not None and code & 0xFF == _SQLITE_FULL) or getattr(exc, "errno", None) in (errno.ENOSPC, errno.EDQUOT)
            why = "the disk is full" if full else f"{getattr(exc, 'strerror', None) or exc}"
            raise SearcherError(f"Cannot write to the store in {self.dir}: {why}. Every trial stored before is kept and nothing "
                                f"was stored half: make room, then run the command again (a campaign: `searcher hunt --resume "
                                f"{self.dir}`) to go on from there.") from None

    # ---------------------------------------------------------------- trials and steps

    def add_trial(self, step: int, idx: int, x: np.ndarray, outcome: Outcome, worker: str = "", source: str = "search",
                  attempts: int = 1) -> None:
        """Stores one evaluation (and its image), replacing an earlier one of the same trial; `source`
        says who chose the point: "search" (the strategy) or "audit" (the campaign's uniform audit
        sample); `attempts` counts evaluations after target errors."""
        self.add_trials([TrialRecord(step, idx, x, outcome, worker, source, attempts)])

    def add_trials(self, records: Iterable[TrialRecord]) -> None:
        """Stores evaluations (and the images they keep) in one statement, replacing earlier ones of
        the same trials; inside `transaction` they commit together with whatever else it writes."""
        self._db.executemany(
            "INSERT OR REPLACE INTO trials VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, julianday('now'), NULL, ?, ?)",
            [self._row(r) for r in records])

    def _row(self, r: TrialRecord) -> tuple[Any, ...]:
        """The trials row of `r` but for its timestamp and composite, its image saved first if it keeps one."""
        o = r.outcome
        image = self._save_image(o.image) if r.keep_image and o.image is not None else None
        return (r.step, r.idx, _json(o.params), _json(np.asarray(r.x, float)), o.loss, None if o.failure is None else int(o.failure),
                None if o.label is None else _json(o.label), o.score, _json(o.boxes), _json(o.truth), image, o.error, o.excluded,
                r.worker, o.seconds, r.source, r.attempts)

    @_reads
    def errored(self, max_attempts: int) -> list[tuple[int, int, dict[str, Any], np.ndarray, str, int]]:
        """Trials that ended in a target error and were evaluated fewer than `max_attempts` times:
        (step, idx, params, unit-cube point, source, attempts so far)."""
        rows = self._db.execute("SELECT step, idx, params, x, source, COALESCE(attempts, 1) FROM trials WHERE error IS NOT NULL "
                                "AND COALESCE(attempts, 1) < ? ORDER BY step, idx", (max_attempts,)).fetchall()
        return [(s, i, json.loads(p), np.array(json.loads(x)), src or "search", a) for s, i, p, x, src, a in rows]

    def finish_step(self, step: int, size: int, state: dict[str, Any], composite: np.ndarray | None = None,
                    planned: np.ndarray | None = None) -> None:
        """Marks batch `step` complete, with the strategy state after it was told and, for
        strategies that have one, the composite objective of eq. (4) of each of its trials; with
        `planned`, the strategy's points of batch `step + 1`, asked before this one was told (a
        campaign with `overlap`), which a resume evaluates rather than asks again."""
        with self._written(), self._db:
            self._db.execute("BEGIN")
            if composite is not None:
                self._db.executemany("UPDATE trials SET composite = ? WHERE step = ? AND idx = ?",
                                     [(None if np.isnan(c) else float(c), step, i) for i, c in enumerate(composite)])
            self._db.execute("INSERT OR REPLACE INTO steps VALUES (?, ?, ?, julianday('now'))", (step, size, _json(state)))
            if planned is not None:
                self._db.execute("DELETE FROM planned WHERE step <= ?", (step + 1,))
                self._db.execute("INSERT INTO planned VALUES (?, ?)", (step + 1, _json(planned)))

    @_reads
    def planned(self, step: int) -> np.ndarray | None:
        """The strategy's points of batch `step` stored by `finish_step` (None if none were)."""
        row = self._db.execute("SELECT x FROM planned WHERE step = ?", (step,)).fetchone()
        return None if row is None else np.array(json.loads(row[0]), float)

    @_reads
    def steps(self) -> list[tuple[int, int, dict[str, Any]]]:
        """Completed batches, in order: (step, size, strategy state); a state that does not parse as
        a JSON object is a ParameterError naming its step (a resume cannot rebuild the strategy)."""
        out = []
        for s, n, text in self._db.execute("SELECT step, size, state FROM steps ORDER BY step").fetchall():
            try:
                state = json.loads(text)
            except (TypeError, ValueError):
                state = None
            if not isinstance(state, dict):
                raise ParameterError(f"{self.path} holds a strategy state of step {s} that does not parse ({str(text)[:80]!r}), "
                                     f"so the campaign cannot be resumed. `searcher doctor {self.dir}` says which trials can be saved, and how.")
            out.append((s, n, state))
        return out

    @_reads
    def step_trials(self, step: int) -> dict[int, tuple[np.ndarray, float | None]]:
        """idx -> (unit-cube point, loss) of the trials stored for one batch."""
        rows = self._db.execute("SELECT idx, x, loss FROM trials WHERE step = ?", (step,)).fetchall()
        return {i: (np.array(json.loads(x)), loss) for i, x, loss in rows}

    @_reads
    def count(self) -> int:
        """How many trials are stored (counted by SQLite)."""
        return self._db.execute("SELECT COUNT(*) FROM trials").fetchone()[0]

    @_reads
    def failures(self) -> int:
        """How many stored trials are failures (counted by SQLite: no row is loaded)."""
        return self._db.execute("SELECT COUNT(*) FROM trials WHERE failure = 1").fetchone()[0]

    @_reads
    def tally(self, failure: float) -> tuple[int, int, int, int, int, int]:
        """Counted by SQLite, no row loaded: trials, those judged (a loss), failures (loss at least
        `failure`), target errors, those excluded as ambiguous, and the audit sample's judged."""
        row = self._db.execute("SELECT COUNT(*), COUNT(loss), COALESCE(SUM(loss >= ?), 0), COUNT(error), COUNT(excluded), "
                               "COALESCE(SUM(source = 'audit' AND loss IS NOT NULL), 0) FROM trials", (failure,)).fetchone()
        return tuple(int(v) for v in row)

    @_reads
    def trials(self) -> pd.DataFrame:
        """Every trial, one row each, in evaluation order: params and truth as columns too."""
        df = pd.read_sql_query("SELECT * FROM trials ORDER BY step, idx", self._db)
        for column, _ in _ADDED_COLUMNS:  # a store from before the column, read without upgrading it
            if column not in df:
                df[column] = None
        if df.empty:
            return df
        for col in ("params", "x", "boxes", "truth"):  # one parse of the column as a JSON array: 100,000 rows in a second
            df[col] = json.loads(f"[{','.join(df[col])}]")
        df["label"] = df["label"].map(lambda v: None if v is None or (isinstance(v, float) and np.isnan(v)) else json.loads(v))
        df["failure"] = df["failure"].map(lambda v: None if pd.isna(v) else bool(v)).astype(object)
        params = pd.DataFrame(df["params"].tolist(), index=df.index)
        return pd.concat([df, params.add_prefix("param.")], axis=1)

    def put_salvaged(self, source: Path, trials: Iterable[Mapping[str, Any]], steps: Iterable[tuple[int, int, str, float]],
                     meta: Mapping[str, str]) -> None:
        """Writes rows read from the store in `source` as they were (`searcher doctor --salvage`), in
        one transaction, and marks this store salvaged: it is read from now on, never resumed."""
        with self.transaction():
            self._db.executemany(f"INSERT INTO trials ({', '.join(TRIAL_COLUMNS)}) VALUES ({', '.join('?' * len(TRIAL_COLUMNS))})",
                                 [tuple(row.get(c) for c in TRIAL_COLUMNS) for row in trials])
            self._db.executemany("INSERT INTO steps VALUES (?, ?, ?, ?)", steps)
            self._db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", list(meta.items()))
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('salvaged', ?)", (str(source),))

    def image_path(self, digest: str) -> Path:
        return image_file(self.dir, digest)

    def load_image(self, digest: str | None, trial: str = "") -> np.ndarray:
        """The stored image with content hash `digest`; a trial that kept none (`digest` None: see
        `not_kept`) or a missing or unreadable file is a ParameterError naming it."""
        if not isinstance(digest, str):
            raise ParameterError(not_kept(self.dir, trial or "this trial"))
        path = self.image_path(digest)
        try:
            with Image.open(path) as im:
                return np.asarray(im.convert("RGB"))
        except (OSError, ValueError) as exc:
            raise ParameterError(f"The image {path} of the campaign in {self.dir} is missing or unreadable ({exc}). "
                                 "Every other trial is intact; re-run `searcher hunt` into a new --out to render it again.") from None

    def _save_image(self, image: np.ndarray) -> str:
        data = encode_png(image)
        digest = hashlib.sha256(data).hexdigest()
        path = self.image_path(digest)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        return digest


def encode_png(image: np.ndarray) -> bytes:
    """The PNG bytes of an `H x W x 3` uint8 image, as a campaign stores it (compress level 1: fast)."""
    buf = io.BytesIO()
    Image.fromarray(np.asarray(image, np.uint8)).save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


def not_kept(directory: str | os.PathLike, trial: str) -> str:
    """The one-line message of a reader that needs the image of `trial` (e.g. "trial 3-1"), which
    the campaign in `directory` did not keep (its `images` setting keeps every failure's image and
    a seeded share of the others)."""
    return (f"The image of {trial} of the campaign in {directory} was not kept: the campaign keeps the images of its failures "
            "and a seeded share of the others (its `images` setting). Choose trials that kept one (the `image` column is set), "
            "or run the campaign again with images=1 to keep every image.")


def image_file(directory: str | os.PathLike, digest: str) -> Path:
    """Where the campaign in `directory` keeps the image with content hash `digest` (no store opened)."""
    return Path(directory) / "images" / digest[:2] / f"{digest}.png"


class DirectoryLock:
    """One running campaign per directory: an exclusive `flock` on `DIR/campaign.lock`, holding
    the holder's process id for the message a second process gets.

    The kernel drops the lock when its process dies, `kill -9` included, so a stale lock file is
    simply taken over; nothing has to guess whether its process is still alive.
    """

    def __init__(self, directory: str | os.PathLike) -> None:
        self.path = Path(directory) / "campaign.lock"
        self._fd: int | None = None

    def acquire(self) -> None:
        """Takes the lock, or raises a ParameterError naming the process that holds it."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS) and (self.path.parent / "campaign.sqlite").is_file():
                raise ParameterError(read_only_message(self.path.parent)) from None
            raise ParameterError(f"Cannot write a campaign to {self.path.parent}: {exc.strerror or exc}. "
                                 "Choose another --out.") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise ParameterError(f"{self.path.parent} is in use by process {holder}, which is running this campaign. "
                                 "Wait for it to finish or stop it; then `searcher hunt --resume` continues.") from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd

    def release(self) -> None:
        """Lets the next process in (the file stays, with the last holder's id)."""
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

"""People's ratings as an append-only log: `DIR/annotations.csv`, one row per rating, written the
moment it is given so that a closed tab or a killed server loses nothing.

Each rating is one `write` of a whole line to a file opened for appending, under an exclusive
`flock` (the header too, when the file is new), then flushed to disk with `fsync`: several rating
pages on one directory (one per annotator) never interleave partial lines. Rows are never rewritten;
a corrected answer is a new row, and `searcher.analysis.annotations.read_annotations` keeps the
last row of each (image, attribute, annotator).

A torn line never takes a rating with it: a write that fails (a full disk) is cut back off the
file and refused with a `SearcherError`, and a fragment left by a killed writer is ended (or a
torn header completed) before the next rating is appended, so each rating starts a line of its
own; readers skip, and log, a line that is not a rating.
"""

from __future__ import annotations

import csv
import errno
import fcntl
import io
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from generators.base import Scale
from searcher.analysis.annotations import COLUMNS, read_annotations
from searcher.errors import SearcherError

__all__ = ["RatingLog"]

_HEADER = b",".join(c.encode() for c in COLUMNS) + b"\n"


def _line(*values: Any) -> bytes:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(values)
    return buf.getvalue().encode()


class RatingLog:
    """The ratings file of one directory, shared by every annotator and process rating it."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)

    def append(self, image: Any, attribute: str, annotator: str, value: int) -> None:
        """Adds one rating, on disk when this returns, on a line of its own.

        Raises:
            SearcherError: the rating could not be written (a full disk); the file is as it was.
        """
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise _not_saved(exc, self.path) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # released when fd closes
            size = os.fstat(fd).st_size
            try:
                data = _mend(fd, size) + _line(image, attribute, annotator, value)
                while data:
                    data = data[os.write(fd, data):]
                os.fsync(fd)
            except OSError:
                _cut(fd, size)
                raise
        except OSError as exc:
            raise _not_saved(exc, self.path) from None
        finally:
            os.close(fd)

    def read(self, annotator: str, scales: Mapping[str, Scale]) -> dict[tuple[str, str], int]:
        """(image key as text, attribute) -> level of `annotator`'s ratings so far, the last of each."""
        if not self.path.is_file():
            return {}
        with open(self.path, encoding="utf-8", errors="replace") as fh:
            fcntl.flock(fh, fcntl.LOCK_SH)  # no half-written line from a concurrent append
            text = io.StringIO(fh.read())
        text.name = str(self.path)  # how read_annotations names the file when it skips a torn line
        table = read_annotations(text, scales)
        mine = table[table["annotator"].astype(str) == annotator]
        return {(str(i), str(a)): int(v) for i, a, v in zip(mine["image"], mine["attribute"], mine["value"])}


def _mend(fd: int, size: int) -> bytes:
    """What goes before the next rating of a file `size` bytes long: the header (or the rest of a
    torn one) when the file holds no whole line yet, a newline ending a torn last line, else nothing."""
    if size < len(_HEADER):
        start = os.pread(fd, size, 0)
        if _HEADER.startswith(start):
            return _HEADER[size:]
    return b"" if os.pread(fd, 1, size - 1) == b"\n" else b"\n"


def _cut(fd: int, size: int) -> None:
    """Cuts off what a failed append wrote past `size` (under the lock, so only its own bytes);
    where even that fails, the next append ends the fragment with a newline."""
    try:
        os.ftruncate(fd, size)
    except OSError:
        pass


def _not_saved(exc: OSError, path: Path) -> SearcherError:
    """The one-line error of a rating `exc` kept from reaching `path`."""
    why = "disk full" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else exc.strerror or str(exc)
    return SearcherError(f"could not save the rating: {why} ({path})")

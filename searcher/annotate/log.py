"""People's ratings as an append-only log: `DIR/annotations.csv`, one row per rating, written the
moment it is given so that a closed tab or a killed server loses nothing.

Each rating is one `write` of a whole line to a file opened for appending, under an exclusive
`flock` (the header too, when the file is new), then flushed to disk with `fsync`: several rating
pages on one directory (one per annotator) never interleave partial lines. Rows are never rewritten;
a corrected answer is a new row, and `searcher.analysis.annotations.read_annotations` keeps the
last row of each (image, attribute, annotator).
"""

from __future__ import annotations

import csv
import fcntl
import io
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from generators.base import Scale
from searcher.analysis.annotations import COLUMNS, read_annotations

__all__ = ["RatingLog"]


def _line(*values: Any) -> bytes:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(values)
    return buf.getvalue().encode()


class RatingLog:
    """The ratings file of one directory, shared by every annotator and process rating it."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)

    def append(self, image: Any, attribute: str, annotator: str, value: int) -> None:
        """Adds one rating, on disk when this returns."""
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # released when fd closes
            data = (_line(*COLUMNS) if os.fstat(fd).st_size == 0 else b"") + _line(image, attribute, annotator, value)
            while data:
                data = data[os.write(fd, data):]
            os.fsync(fd)
        finally:
            os.close(fd)

    def read(self, annotator: str, scales: Mapping[str, Scale]) -> dict[tuple[str, str], int]:
        """(image key as text, attribute) -> level of `annotator`'s ratings so far, the last of each."""
        if not self.path.is_file():
            return {}
        with open(self.path) as fh:
            fcntl.flock(fh, fcntl.LOCK_SH)  # no half-written line from a concurrent append
            text = fh.read()
        if not text:
            return {}
        table = read_annotations(io.StringIO(text), scales)
        mine = table[table["annotator"].astype(str) == annotator]
        return {(str(i), str(a)): int(v) for i, a, v in zip(mine["image"], mine["attribute"], mine["value"])}

"""Whole or absent: an export is written into hidden staging directories beside its destinations
and renamed into place only once everything is written.

A staging directory is named `.NAME.partial-PID`; one left by a process that was killed
(`kill -9` included) is removed by the next export to the same destination.

Each destination is checked by `searcher.outputs.check_output_dir` before anything is written, and
again just before it is replaced: only a new or empty directory, or with `overwrite` an earlier
export (it holds the `.searcher-export` marker every export leaves), is ever replaced; never a
source, a campaign, the working directory or an ancestor of one of them.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from searcher.errors import ParameterError
from searcher.outputs import check_output_dir, leave_marker

__all__ = ["MARKER", "Staging"]

#: the file every export leaves in its directory, so that `--overwrite` knows it may replace it.
MARKER = ".searcher-export"
_COMMAND = "searcher export"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Staging:
    """Staging directories for a set of destinations; `commit` renames them all into place.

    Use as a context manager: leaving it by an exception removes every staging directory and
    leaves the destinations as they were. `sources` are the directories the export reads (never replaced).
    """

    def __init__(self, destinations: list[Path], overwrite: bool = False, sources: list[Path] | tuple[()] = ()) -> None:
        self.given = [Path(d) for d in destinations]
        self.overwrite, self.sources = overwrite, list(sources)
        self.final = self._check()
        self.staged: list[Path] = []

    def _check(self) -> list[Path]:
        """The destinations, resolved, once each passed `check_output_dir`."""
        return [check_output_dir(dest, replace=True, overwrite=self.overwrite, marker=MARKER, sources=self.sources,
                                 command=_COMMAND) for dest in self.given]

    def __enter__(self) -> list[Path]:
        for dest in self.final:
            try:
                dest.parent.mkdir(parents=True, exist_ok=True)
                for stale in dest.parent.glob(f".{dest.name}.partial-*"):
                    pid = stale.name.rsplit("-", 1)[-1]
                    if not (pid.isdigit() and _alive(int(pid))):
                        shutil.rmtree(stale, ignore_errors=True)
                path = dest.parent / f".{dest.name}.partial-{os.getpid()}"
                shutil.rmtree(path, ignore_errors=True)
                path.mkdir()
                leave_marker(path, MARKER, _COMMAND)
            except OSError as exc:
                self._discard()
                raise ParameterError(f"Cannot write an export to {dest}: {exc.strerror or exc}. Choose another --out.") from None
            self.staged.append(path)
        return list(self.staged)

    def __exit__(self, kind, value, traceback) -> None:  # noqa: ANN001 - the context-manager protocol
        if kind is not None:
            self._discard()

    def commit(self) -> None:
        """Moves every staging directory to its destination (replacing what was there), once every
        destination has passed its check again (it may have changed while the export was written)."""
        self._check()
        for path, dest in zip(self.staged, self.final):
            if dest.exists():
                old = dest.parent / f".{dest.name}.replaced-{os.getpid()}"
                dest.rename(old)
                path.rename(dest)
                shutil.rmtree(old, ignore_errors=True)
            else:
                path.rename(dest)
        self.staged = []

    def _discard(self) -> None:
        for path in self.staged:
            shutil.rmtree(path, ignore_errors=True)
        self.staged = []

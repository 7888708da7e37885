"""Whole or absent: an export is written into hidden staging directories beside its destinations
and renamed into place only once everything is written.

A staging directory is named `.NAME.partial-PID`; one left by a process that was killed
(`kill -9` included) is removed by the next export to the same destination.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from searcher.errors import ParameterError

__all__ = ["Staging"]


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
    leaves the destinations as they were.
    """

    def __init__(self, destinations: list[Path], overwrite: bool = False) -> None:
        self.final = [Path(d) for d in destinations]
        for dest in self.final:
            if dest.exists() and not dest.is_dir():
                raise ParameterError(f"--out {dest} is a file, not a directory. Choose another --out.")
            if dest.is_dir() and any(dest.iterdir()) and not overwrite:
                raise ParameterError(f"--out {dest} already exists and is not empty. Choose another --out, or pass --overwrite to replace it.")
        self.staged: list[Path] = []

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
            except OSError as exc:
                self._discard()
                raise ParameterError(f"Cannot write an export to {dest}: {exc.strerror or exc}. Choose another --out.") from None
            self.staged.append(path)
        return list(self.staged)

    def __exit__(self, kind, value, traceback) -> None:  # noqa: ANN001 - the context-manager protocol
        if kind is not None:
            self._discard()

    def commit(self) -> None:
        """Moves every staging directory to its destination (replacing what was there)."""
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

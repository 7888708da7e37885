"""One rule for every path a command writes, checked before anything is written.

A command's output is a *file* (report.html, a PNG, a CSV), a directory it *replaces* whole (an
export, renamed into place from a staging directory), or a directory it writes *into* (a campaign,
a comparison, a transect run). The path must be new, or already be of that kind:

- a symbolic link, a FIFO, a socket or a device node (`/dev/null`) is refused, never replaced and
  never written through; the error names what it is (and, for a link, where it points);
- a file output may replace a regular file, but never a directory, nor a campaign's store
  (`campaign.sqlite` and its `-wal`/`-shm` files);
- a directory output must be a directory; one that is replaced must be new or empty, or, with
  `--overwrite`, hold the marker file the same command left when it wrote it (`.searcher-export`
  for `searcher export`). Never replaced, even with `--overwrite`: a directory holding a campaign,
  a source of the command or an ancestor of one, the working directory or an ancestor of it, the
  home directory or an ancestor of it, and the filesystem root.

Every refusal is a `ParameterError` that names the path, what it is, and what to do instead.

Example:
    >>> check_output_file("runs/bo/report.html")
    PosixPath('runs/bo/report.html')
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from searcher.errors import ParameterError

__all__ = ["STORE_FILE", "check_output_dir", "check_output_file", "leave_marker", "write_text"]

#: the file that makes a directory a campaign (`searcher.campaign.store.Store.path`; a test keeps the two equal).
STORE_FILE = "campaign.sqlite"
_STORE_FILES = (STORE_FILE, f"{STORE_FILE}-wal", f"{STORE_FILE}-shm", f"{STORE_FILE}-journal")


def _what(path: Path, mode: int) -> str:
    """What the (lstat) `mode` of `path` says it is, in words."""
    if stat.S_ISLNK(mode):
        try:
            return f"a symbolic link (to {os.readlink(path)})"
        except OSError:
            return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISREG(mode):
        return "a regular file"
    return "neither a file nor a directory"


def _lstat(path: Path, flag: str) -> os.stat_result | None:
    """`path`'s own status (a link not followed), None when nothing is there; a parent that is not a
    directory, or that cannot be read, is refused."""
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        pass
    except OSError as exc:
        raise ParameterError(f"{flag} {path} cannot be checked: {exc.strerror or exc}. Choose another {flag}.") from None
    for parent in path.absolute().parents:  # the nearest existing ancestor must be a directory
        if parent.exists():
            if not parent.is_dir():
                raise ParameterError(f"{flag} {path} cannot be created: {parent} is a file, not a directory. Choose another {flag}.")
            break
    return None


def _refuse_special(path: Path, mode: int, flag: str, kind: str) -> None:
    """A link, FIFO, socket or device at `path`: refused, with what it is and what to do."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return
    if stat.S_ISLNK(mode):
        hint = f"pass the path it points to as {flag} if that is where the {kind} should go, or choose another {flag}"
    else:
        hint = f"choose a new path or {'a regular file' if kind == 'file' else 'a directory'} as {flag}"
    raise ParameterError(f"{flag} {path} is {_what(path, mode)}; searcher never replaces or writes through one. "
                         f"Nothing was written: {hint}.")


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _within(inner: Path, outer: Path) -> bool:
    """`inner` is `outer` or lies below it."""
    return inner == outer or outer in inner.parents


def _named(path: str | os.PathLike, flag: str) -> Path:
    """`path` as a `Path`; an empty or blank one (an unset shell variable) is refused, never taken
    as the working directory or written as a file named by spaces."""
    if not str(path).strip():
        raise ParameterError(f"{flag} must name a file or directory. Got {str(path)!r} instead. Nothing was written.")
    return Path(path)


def check_output_file(path: str | os.PathLike, *, flag: str = "--out") -> Path:
    """Checks `path` as a file output: new, or a regular file that may be replaced.

    Args:
        path: the file a command is about to write.
        flag: how to name it in a message (`--out`, `--truth`).

    Returns:
        `path` as a `Path`.

    Raises:
        ParameterError: `path` is a directory, a link, a FIFO, a socket or a device, a campaign's
            store file, or cannot be created (its parent is a file).
    """
    path = _named(path, flag)
    st = _lstat(path, flag)
    if st is None:
        return path
    _refuse_special(path, st.st_mode, flag, "file")
    if stat.S_ISDIR(st.st_mode):
        raise ParameterError(f"{flag} {path} is a directory; a file is written here. Nothing was written: "
                             f"choose a file path such as {path / 'NAME'}.")
    if path.name in _STORE_FILES:
        raise ParameterError(f"{flag} {path} is a campaign's store; it is never replaced. Nothing was written: choose another {flag}.")
    return path


def check_output_dir(path: str | os.PathLike, *, flag: str = "--out", replace: bool = False, overwrite: bool = False,
                     marker: str | None = None, sources: Iterable[str | os.PathLike] = (), command: str = "searcher") -> Path:
    """Checks `path` as a directory output; returns it resolved (links in its parents followed).

    Args:
        path: the directory a command is about to write.
        flag: how to name it in a message.
        replace: the command replaces the directory whole (an export); else it writes files into it.
        overwrite: with `replace`, the user allowed replacing a non-empty directory (`--overwrite`).
        marker: with `replace`, the file the command leaves in what it writes (see `leave_marker`);
            only a directory holding it is replaced by `overwrite`.
        sources: what the command reads; none of them, nor an ancestor of one, is replaced.
        command: the command, as a message names it (`searcher export`).

    Raises:
        ParameterError: see the module docstring; nothing has been written then.
    """
    path = _named(path, flag)
    st = _lstat(path, flag)
    if st is not None:
        _refuse_special(path, st.st_mode, flag, "directory")
        if not stat.S_ISDIR(st.st_mode):
            raise ParameterError(f"{flag} {path} is {_what(path, st.st_mode)}, not a directory; {command} writes a directory "
                                 f"there. Nothing was written: choose another {flag}.")
    real = _real(path)
    if not replace:
        return real
    _refuse_protected(path, real, flag, sources, command)
    try:
        empty = st is None or not any(real.iterdir())
    except OSError as exc:
        raise ParameterError(f"{flag} {path} cannot be read: {exc.strerror or exc}. Choose another {flag}.") from None
    if empty:
        return real
    if not overwrite:
        raise ParameterError(f"{flag} {path} already exists and is not empty. Choose another {flag}, or pass --overwrite "
                             f"to replace it (only a directory an earlier {command} wrote is replaced).")
    store = _find_store(real)
    if store is not None:
        raise ParameterError(f"{flag} {path} holds a campaign ({store}); --overwrite never replaces one. "
                             f"Nothing was written: choose another {flag}.")
    if marker is not None and not (real / marker).is_file():
        raise ParameterError(f"{flag} {path} was not written by {command} (it holds no {marker} marker), so --overwrite "
                             f"does not replace it. Nothing was written: choose another {flag}, or move {path} aside yourself.")
    return real


def _refuse_protected(path: Path, real: Path, flag: str, sources: Iterable[str | os.PathLike], command: str) -> None:
    """The directories a replacing command never replaces, whatever they hold."""
    for source in sources:
        src = _real(Path(source))
        if _within(src, real):
            what = f"the source {command} reads" if src == real else f"an ancestor of {source}, the source {command} reads"
            raise ParameterError(f"{flag} {path} is {what}; it is never replaced. "
                                 f"Nothing was written: choose a new directory outside the source as {flag}.")
    try:
        cwd = _real(Path.cwd())
    except OSError:
        cwd = None
    if cwd is not None and _within(cwd, real):
        what = "the working directory" if cwd == real else "an ancestor of the working directory"
        raise ParameterError(f"{flag} {path} is {what}; it is never replaced. Nothing was written: "
                             f"choose a new directory as {flag}, e.g. {flag} export.")
    try:
        home = _real(Path.home())
    except (OSError, RuntimeError):
        home = None
    if real == Path(real.anchor) or (home is not None and _within(home, real)):
        what = "the filesystem root" if real == Path(real.anchor) else "the home directory or an ancestor of it"
        raise ParameterError(f"{flag} {path} is {what}; it is never replaced. Nothing was written: choose a new directory as {flag}.")


def _find_store(directory: Path) -> Path | None:
    """The first campaign store below `directory` (links not followed), or None."""
    for root, dirs, files in os.walk(directory):
        if STORE_FILE in files:
            return Path(root) / STORE_FILE
        dirs.sort()
    return None


def leave_marker(directory: str | os.PathLike, marker: str, command: str) -> None:
    """Writes the marker that lets `command --overwrite` recognise `directory` as its own output."""
    (Path(directory) / marker).write_text(f"Written by `{command}`; `{command} --overwrite` may replace this directory.\n",
                                          encoding="utf-8")


def write_text(path: str | os.PathLike, text: str, *, what: str = "", hint: str = "Nothing was written there.") -> Path:
    """Writes `text` to `path` whole or not at all: through a temporary file beside it, renamed into
    place, so that a reader (a browser reloading a report), or a rerun after `kill -9`, finds the old
    file or the new one, never half of one. `path` is checked first (`check_output_file`): a link,
    a FIFO, a device or a directory there is refused, never replaced. `what` and `hint` word the
    error ("Cannot write the report to PATH: ... HINT"). Returns `path`.

    Raises:
        ParameterError: `path` is refused (see `check_output_file`), or cannot be written (nothing was).
    """
    path = check_output_file(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:  # a read-only directory, a full disk
        tmp.unlink(missing_ok=True)
        raise ParameterError(f"Cannot write {what + ' to ' if what else ''}{path}: {exc.strerror or exc}. {hint}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path

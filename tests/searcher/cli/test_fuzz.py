"""The command-line fuzz matrix (issue 73): every command and every argument of the parser table
(`searcher.cli.build_parser()`, read at collection time, so a new command or flag joins the matrix
by itself), each given one hostile value at a time — empty, wrong type, out of range, huge, NaN and
inf, unicode, a path of the wrong kind, a file of the wrong encoding or content, a damaged store —
while the other arguments hold small valid values (`BASE`) that make the command finish or fail fast.

Each case runs `main(argv)` in-process with the working directory in a temporary tree and asserts:
a clean success or the tool's one-line error (a `SearcherError` or argparse's usage error), no
traceback, no exception out of `main`, and nothing changed in the tree outside what the command
writes (`--out`, the run directory it was given). Flags that take no value (`store_true`) have no
hostile value and are not varied. Servers (`serve-target`, `annotate`) never listen: uvicorn's run
is stubbed, so an accepted value returns at once instead of blocking. A case that runs past
`CASE_SECONDS` (a hang: a FIFO opened, real work started) fails.

CI runs one hostile class per argument (`_tiered`): every command and argument, and across them
every class; `pytest -m slow` runs the whole matrix (about 15 minutes on one core).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import io
import os
import re
import shutil
import signal
import string
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from searcher.campaign import Campaign
from searcher.cli import build_parser, main

CASE_SECONDS = 30
PLANTED = ["--generator", "planted", "--target", "planted"]

# Small valid values per command (placeholders: {out} a fresh output path, {camp} a copy of a
# finished 4-trial planted campaign): with them a command finishes or is refused within a second or
# two, so a hostile value that is accepted starts no real work. A command not listed (a new one)
# gets its required arguments filled generically (`_fill`).
BASE: dict[str, list[str]] = {
    "list": [],
    "params": ["planted"],
    "render": ["--generator", "planted", "-n", "1", "--out", "{out}/sheet.png"],
    "serve-target": ["planted", "--port", "0"],
    "hunt": [*PLANTED, "--strategy", "random", "--budget", "2", "--batch", "1", "--out", "{out}", "--no-progress"],
    "compare": [*PLANTED, "--strategies", "random", "--seeds", "0,", "--budget", "2", "--batch", "1", "--out", "{out}", "--no-progress"],
    "bench": ["--cases", "planted-d6-k5", "--strategies", "random", "--seeds", "0,", "--budget", "2", "--out", "{out}", "--no-progress"],
    "transect": ["--generator", "planted", "--target", "planted", "-n", "1", "--out", "{out}", "--no-progress"],
    "verify": ["--generator", "planted", "--target", "planted", "-n", "8", "--out", "{out}", "--no-progress"],
    "validate-generator": ["planted", "-n", "2", "--detectors", "planted", "--no-descriptor", "--out", "{out}", "--no-progress"],
    "analyze": ["{camp}", "--out", "{out}"],
    "gallery": ["{camp}", "--out", "{out}/gallery.png"],
    "explain": ["{camp}"],
    "annotate": ["{camp}", "--attributes", "yaw", "--annotator", "fuzz", "--port", "0"],
    "doctor": ["{camp}"],
    "export": ["{camp}", "--out", "{out}", "--select", "all"],
    "retrain": ["--target", "planted", "-n", "8", "--seeds", "0,", "--budget", "2", "--test-n", "8", "--out", "{out}", "--no-progress"],
    "fix": ["--target", "planted", "--budget", "2", "--confirm-budget", "2", "-n", "8", "--seeds", "0,", "--test-n", "8", "--out", "{out}",
            "--no-progress"],
    "report": ["{camp}", "--out", "{out}/report.html"],
    "results": [],
}

# arguments a command writes to: a hostile path given to one of them may be created or replaced
WRITES = {"out", "salvage", "truth", "resume"}

_INT = {"empty": "", "wrong-type": "abc", "fraction": "1.5", "negative": "-1", "zero": "0", "huge": "1" + "0" * 30,
        "nan": "nan", "inf": "inf", "unicode-digits": "\u0661\u0662"}
_FLOAT = {"empty": "", "wrong-type": "abc", "negative": "-1", "zero": "0", "huge": "1e308", "overflow": "1e400", "nan": "nan",
          "inf": "inf", "minus-inf": "-inf", "unicode-digits": "\u0661.\u0665"}
_PATHS = ("file", "dir", "fifo", "junk", "latin1", "damaged-store", "missing")
_TEXT = {"empty": "", "blank": " ", "negative": "-1", "zero": "0", "huge": "9" * 30, "nan": "nan", "inf": "inf",
         "unicode": "\ufb01\u540d\u202e\U0001f600"}
_PATH_CLASSES = {kind: "{" + kind + "}" for kind in _PATHS}
PATH_METAVARS = ("DIR", "OUT", "TOML", "CSV", "PATH", "RUN")
_ASSIGN = {"no-equals": "abc", "no-key": "=1", "no-value": "k=", "nan-value": "k=nan", "unicode": "\u540d=\u0661\u202e",
           "path-value": "k={file}"}


@functools.cache
def _parser() -> argparse.ArgumentParser:
    return build_parser()


@functools.cache
def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = _parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _valued(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The arguments that take a value (not --help, not store_true)."""
    return [a for a in parser._actions if a.nargs != 0 and not isinstance(a, argparse._HelpAction)]


def _names_a_path(action: argparse.Action) -> bool:
    """The parser says the argument is a path: by its metavar, a positional's name, or --out."""
    return (action.metavar in PATH_METAVARS or action.dest in ("out", "resume", "config", "file", "hard")
            or not action.option_strings and action.dest in ("directory", "campaign", "run"))


def _classes(action: argparse.Action) -> dict[str, str]:
    if action.type is int:
        return _INT
    if action.type is float:
        return _FLOAT
    if isinstance(action, argparse._AppendAction) and (action.metavar or "").count("=") == 1:
        return {**_TEXT, **_ASSIGN}
    if _names_a_path(action):
        return {**_TEXT, **_PATH_CLASSES}
    return {**_TEXT, "file": "{file}"}  # a path where a name is meant


def _cases() -> Iterator[tuple[str, str, str, str]]:
    for command, parser in _commands().items():
        for action in _valued(parser):
            for kind, value in _classes(action).items():
                yield command, action.dest, kind, value


CASES = list(_cases())



# valid values that start real work: skipped so the matrix stays bounded
ACCEPTED_WORK = {(command, dest, "unicode-digits"): f"Python reads '\\u0661\\u0662' as 12: {what}, which start real work"
                 for command, dest, what in (("hunt", "workers", "twelve Ray workers"), ("compare", "parallel", "twelve campaigns at once"))}


def _tiered(cases: list[tuple[str, str, str, str]]) -> list:
    """Each case, marked slow unless it is in the CI share: one hostile class per argument of every
    command, the class turning with the argument's place, so CI puts every argument through one
    class and, across arguments, every class; `-m slow` runs the rest."""
    out, place = [], {}
    for case in cases:
        argument = case[:2]
        if argument not in place:
            place[argument] = (len(place), 0)
        index, seen = place[argument]
        place[argument] = (index, seen + 1)
        classes = sum(1 for c in cases if c[:2] == argument)
        marks = () if seen == index % classes else (pytest.mark.slow,)
        if case[:3] in ACCEPTED_WORK:
            marks = (pytest.mark.skip(reason=ACCEPTED_WORK[case[:3]]),)
        out.append(pytest.param(*case, marks=marks, id="-".join(case[:3])))
    return out


def _fill(parser: argparse.ArgumentParser) -> list[str]:
    """Required arguments of a command without a `BASE` entry: a run directory for a positional, "x"
    for a required flag, and `--out` when the command has one."""
    argv = []
    for action in _valued(parser):
        if not action.option_strings:
            argv.append("{camp}")
        elif action.required:
            argv += [action.option_strings[0], "x"]
        elif action.dest == "out":
            argv += [action.option_strings[0], "{out}"]
    return argv


def _substitute(argv: list[str], parser: argparse.ArgumentParser, dest: str, value: str) -> list[str]:
    """`argv` with `value` as the argument `dest`, in place of the base's value (positionals come
    first in every base, in the parser's order)."""
    action = next(a for a in _valued(parser) if a.dest == dest)
    if not action.option_strings:
        index = [a for a in _valued(parser) if not a.option_strings].index(action)
        return [*argv[:index], value, *argv[index + 1:]]
    out, i = [], 0
    while i < len(argv):
        if argv[i] in action.option_strings:
            i += 2
            continue
        out.append(argv[i])
        i += 1
    flag = action.option_strings[0]
    if flag.startswith("--"):
        return [*out, f"{flag}={value}"]
    return [*out, flag + value] if value.startswith("-") else [*out, flag, value]


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    """A finished 4-trial planted campaign, copied into each case."""
    out = tmp_path_factory.mktemp("fuzz-source") / "camp"
    Campaign(generator="planted", target="planted", strategy="random", budget=4, batch=2, out=str(out)).run(progress=False)
    return out


def _inputs(root: Path, source: Path, wanted: str) -> dict[str, str]:
    """The hostile files and directories a case names (`wanted`: its argv), under `root/inputs`."""
    inputs = root / "inputs"
    inputs.mkdir()
    paths = {"file": inputs / "file.txt", "dir": inputs / "dir", "fifo": inputs / "fifo", "junk": inputs / "junk.bin",
             "latin1": inputs / "latin1.txt", "damaged-store": inputs / "damaged", "missing": inputs / "missing" / "nothing"}
    make = {
        "file": lambda p: p.write_text("a plain text file\n"),
        "dir": lambda p: p.mkdir(),
        "fifo": os.mkfifo,
        "junk": lambda p: p.write_bytes(bytes(range(256)) * 8),
        "latin1": lambda p: p.write_bytes('name = "caf\xe9"\nr\xe9sum\xe9,\xff\n'.encode("latin-1")),
        "damaged-store": lambda p: _damaged(source, p),
        "missing": lambda p: None,
    }
    for kind, path in paths.items():
        if "{" + kind + "}" in wanted:
            make[kind](path)
    return {kind: str(path) for kind, path in paths.items()}


def _damaged(source: Path, path: Path) -> None:
    """A copy of `source` with a torn page in the middle of its store."""
    shutil.copytree(source, path)
    with open(path / "campaign.sqlite", "r+b") as db:
        db.seek(4096)
        db.write(b"\xde\xad\xbe\xef" * 1024)


def _snapshot(root: Path, allowed: list[Path]) -> dict[str, tuple]:
    """Every entry under `root` except the `allowed` subtrees: kind, size and content hash (a FIFO
    is never opened)."""
    seen = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            if any(path == a or a in path.parents for a in allowed) or name.endswith(("-shm", "-wal")):
                continue  # SQLite's shared memory and log beside a WAL store, which a reader may create
            st_ = path.lstat()
            digest = hashlib.sha1(path.read_bytes()).hexdigest() if path.is_file() and not path.is_symlink() else ""
            seen[str(path.relative_to(root))] = (st_.st_mode, st_.st_size if digest else 0, digest)
    return seen


class _TooLong(BaseException):
    """A case ran past `CASE_SECONDS`."""


@contextlib.contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    def expire(signum, frame):
        raise _TooLong(f"ran past {seconds} s: a hang, or real work started")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def no_servers(monkeypatch):
    """uvicorn returns at once instead of serving; `main` reuses one parser (building it is most of a
    refused case's time, and parsing leaves no state in it)."""
    import uvicorn

    import searcher.cli

    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: None)
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, *a, **k: None)
    monkeypatch.setattr(searcher.cli, "build_parser", _parser)


ONE_LINE_ERROR = re.compile(r"^(searcher|usage: searcher|searcher [\w-]+): error: ")


def _run_case(root: Path, source: Path, monkeypatch, command: str, dest: str | None, value: str) -> None:
    parser = _commands()[command]
    work, out = root / "work", root / "out"
    work.mkdir()
    monkeypatch.chdir(work)
    base = BASE.get(command) or _fill(parser)
    values = _inputs(root, source, " ".join([*base, value]))
    camp = work / "camp"
    if "{camp}" in base:
        shutil.copytree(source, camp)
    values |= {"out": str(out), "camp": str(camp)}
    argv = [a.format(**values) for a in base]
    given = value.format(**values) if "{" in value else value
    if dest is not None:
        argv = _substitute(argv, parser, dest, given)
    allowed = [out, camp]
    if dest in WRITES and given:  # the path the command was told to write
        allowed.append(work / given)
    allowed += [a for p in allowed for a in p.parents if root in a.parents and not a.exists()]  # parents it may create for them
    before = _snapshot(root, allowed)
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr), _deadline(CASE_SECONDS):
        try:
            code = main([command, *argv])
        except SystemExit as exc:  # argparse's usage error (2) or --help (0)
            code = exc.code
    err = stderr.getvalue()
    problem = _problem(code, err, stdout.getvalue(), before == _snapshot(root, allowed))
    if problem and os.environ.get("FUZZ_LOG"):  # every failing case, for a long exploration (-m slow)
        with open(os.environ["FUZZ_LOG"], "a") as log:
            log.write(f"=== {problem} ({code}): searcher {command} {' '.join(argv)}\n{err[-1500:]}\n")
    assert not problem, f"{problem}: searcher {command} {' '.join(argv)}\n{err}"


def _problem(code: object, err: str, out: str, unchanged: bool) -> str:
    """What is wrong with a case's outcome, or ""."""
    if "Traceback" in err or "Traceback" in out:
        return "a traceback"
    if not isinstance(code, int):
        return f"exit status {code!r}"
    errors = [line for line in err.splitlines() if ONE_LINE_ERROR.match(line)]
    verdict = code == 1 and "error:" not in err  # doctor's "not healthy", results' "a figure moved": an answer, not an error
    if code != 0 and not verdict and not (len(errors) == 1 and err.rstrip().splitlines()[-1] == errors[0]):
        return "not a one-line error"
    if not unchanged:
        return "files changed outside --out"
    return ""


@pytest.mark.parametrize(("command", "dest", "kind", "value"), _tiered(CASES))
def test_a_hostile_value_is_refused_in_one_line_or_works(tmp_path, monkeypatch, no_servers, source, command, dest, kind, value):
    _run_case(tmp_path, source, monkeypatch, command, dest, value)


@pytest.mark.parametrize("command", list(_commands()))
def test_the_base_values_finish_or_fail_fast(tmp_path, monkeypatch, no_servers, source, command):
    _run_case(tmp_path, source, monkeypatch, command, None, "")


@pytest.mark.parametrize(("command", "argv"), [
    ("validate-generator", ["planted", "-n", "2", "--detectors", "planted", "--no-descriptor", "--out", ""]),
    ("render", ["--generator", "planted", "-n", "1", "--out", " "]),
])
def test_an_empty_output_path_is_refused_not_the_working_directory(tmp_path, monkeypatch, capsys, command, argv):
    """Found by the matrix: `--out ""` (an unset shell variable) wrote into the working directory."""
    monkeypatch.chdir(tmp_path)
    assert main([command, *argv]) == 2
    assert "--out must name a file or directory" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_every_command_and_argument_is_in_the_matrix():
    """Read from the parser table: a new command or flag is fuzzed without editing this file."""
    for command, parser in _commands().items():
        varied = {d for c, d, _, _ in CASES if c == command}
        assert varied == {a.dest for a in _valued(parser)}, command


_TEXT_ARGS = [(c, a.dest) for c, p in _commands().items() for a in _valued(p) if a.type not in (int, float) and not a.choices]


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(target=st.sampled_from(_TEXT_ARGS), text=st.text(string.printable + "\u00e9\u540d\u202e\U0001f600\u0661", max_size=12))
def test_any_text_is_refused_in_one_line_or_works(tmp_path_factory, monkeypatch, no_servers, source, target, text):
    """Random strings (Hypothesis, a fixed budget) for the arguments that take text."""
    root = tmp_path_factory.mktemp("text")
    command, dest = target
    _run_case(root, source, monkeypatch, command, dest, text.replace("{", "(").replace("}", ")").replace("\x00", ""))

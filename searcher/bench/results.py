"""`docs/results.md`, read and measured again: a figure that has moved since it was written is
flagged, so the one home of every measured figure stays true (`searcher results --check`).

    rows = read_results("docs/results.md")           # every row of every results table
    outcomes = check(rows, only="render")            # re-runs the cheap rows, skips the others

A results table's header is `HEADER`; each row holds the figure, its value as text ("312 vs 48",
"0.13 s carried", "2 min 35 s"), the exact command in backticks and a cost: `cheap` (under about a
minute on 2 cores, and the command prints the figure), a duration ("43 min") or "unrecorded". Only
the cheap rows are run again. A re-run matches when every number of the value is in the command's
output at the value's own precision (0.13 matches 0.128). Durations and speeds depend on the
machine (and so does every number of a row whose figure is a time or a speed): they match within a
relative tolerance, and one outside it is reported as "timing", not as a moved figure, unless
`strict_timings`.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from searcher.errors import ParameterError
from searcher.validation import check_number

__all__ = ["COST_KINDS", "DEFAULT_FILE", "FAILING", "HEADER", "STATUSES", "Comparison", "Figure", "Outcome", "Row", "check", "compare", "cost_kind",
           "figures", "numbers", "read_results", "select", "timing_row"]

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_FILE = ROOT / "docs" / "results.md"
HEADER = ("figure", "value", "command", "cost", "date", "machine", "goal", "paper")
COST_KINDS = ("cheap", "duration", "unrecorded")
STATUSES = ("matched", "timing", "moved", "failed", "timed out", "skipped")
FAILING = ("moved", "failed", "timed out")  # `--check` exits 1 on these (a timing off is "moved" under strict_timings)
TAIL_LINES = 12  # lines of output kept from a failed command


@dataclass(frozen=True)
class Row:
    """One row of a results table, its cells as written (a `\\|` read as `|`), and the command
    without its backticks; `line` is its line in the file, from 1."""

    section: str
    figure: str
    value: str
    command: str
    cost: str
    date: str
    machine: str
    goal: str
    paper: str
    line: int


# ---------------------------------------------------------------- reading the file

def read_results(path: str | Path = DEFAULT_FILE) -> list[Row]:
    """Every row of every results table in `path`, with the `## ` section it sits under.

    Raises:
        ParameterError: the file is missing, or naming the line of a row with the wrong number of
            cells or of a results header that lacks a column.
    """
    path = Path(path)
    if not path.is_file():
        raise ParameterError(f"No results file at {str(path)!r}; give one with --file (default: {DEFAULT_FILE}).")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise ParameterError(f"{str(path)!r} is not a results file: byte {exc.start} is not UTF-8 text (a binary file?); "
                             f"give docs/results.md or a copy of it with --file.") from None
    rows: list[Row] = []
    section = ""
    i = 0
    while i < len(lines):
        text = lines[i].strip()
        if text.startswith("## "):
            section = text[3:].strip()
        elif text.startswith("|") and (i == 0 or not lines[i - 1].strip().startswith("|")):
            header = [c.lower() for c in _cells(text)]
            if tuple(header) == HEADER:
                i = _read_table(lines, i, section, path, rows)
                continue
            if "figure" in header and "command" in header:
                missing = [c for c in HEADER if c not in header]
                what = f"lacks {', '.join(missing)}" if missing else f"has the columns {' | '.join(header)}"
                raise ParameterError(f"{path} line {i + 1}: this results table's header {what}; "
                                     f"a results header is | {' | '.join(HEADER)} |.")
        i += 1
    return rows


def _read_table(lines: Sequence[str], start: int, section: str, path: Path, rows: list[Row]) -> int:
    """Appends the rows of the table whose header is on line `start` (from 0); returns the index of
    the first line after it."""
    if start + 1 >= len(lines) or not re.fullmatch(r"\|?(\s*:?-+:?\s*\|)*\s*:?-+:?\s*\|?", lines[start + 1].strip()):
        raise ParameterError(f"{path} line {start + 2}: a results header must be followed by its | --- | line.")
    i = start + 2
    while i < len(lines) and lines[i].strip().startswith("|"):
        cells = _cells(lines[i].strip())
        if len(cells) != len(HEADER):
            raise ParameterError(f"{path} line {i + 1}: {len(cells)} cells; a results row has {len(HEADER)} "
                                 f"({', '.join(HEADER)}). Write a pipe inside a cell as \\|.")
        named = dict(zip(HEADER, cells))
        named["command"] = _command(named["command"])
        rows.append(Row(section=section, line=i + 1, **named))
        i += 1
    return i


def _cells(line: str) -> list[str]:
    """The cells of one table line: split on pipes that are not escaped, `\\|` read as `|`."""
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", body)]


def _command(cell: str) -> str:
    """The command of a cell: its code spans joined by `&&` (the cell as it is when it has none)."""
    spans = [m.group(2).strip() for m in re.finditer(r"(`+)(.+?)\1", cell)]
    return " && ".join(s for s in spans if s) if spans else cell.strip()


def cost_kind(cost: str) -> str | None:
    """"cheap", "duration" ("43 min", "about 2 h", "under a minute", "seconds"), "unrecorded", or
    None for anything else."""
    text = cost.strip(" `*_").lower()
    if text.startswith("cheap"):
        return "cheap"
    if text.startswith("unrecorded"):
        return "unrecorded"
    if any(f.dimension == "duration" for f in figures(text)) or re.search(r"\b(?:seconds|minutes|hours|an? (?:second|minute|hour))\b", text):
        return "duration"
    return None


def select(rows: Sequence[Row], only: str | None) -> list[Row]:
    """The rows whose figure or section contains `only` (any case); all of them when it is None.

    Raises:
        ParameterError: naming `only` and the sections, when no row has it.
    """
    if not only:
        return list(rows)
    chosen = [r for r in rows if only.lower() in r.figure.lower() or only.lower() in r.section.lower()]
    if not chosen:
        sections = ", ".join(dict.fromkeys(r.section for r in rows)) or "none"
        raise ParameterError(f"No row's figure or section contains {only!r} (--only); the sections are: {sections}.")
    return chosen


# ---------------------------------------------------------------- the numbers in a text

# seconds per unit; a duration is stored in seconds
_SECONDS = {"ms": 1e-3, "µs": 1e-6, "us": 1e-6, "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0, "min": 60.0,
            "mins": 60.0, "minute": 60.0, "minutes": 60.0, "h": 3600.0, "hr": 3600.0, "hrs": 3600.0, "hour": 3600.0, "hours": 3600.0}
_DURATION = r"ms|µs|us|seconds?|secs?|s|minutes?|mins?|hours?|hrs?|h"
_SPEED = r"(?:[A-Za-z]+\s?)?(?:/\s?s(?:ec|econd)?|per\s+s(?:ec|econd)?|an?\s+second)"
_RATIO = r"(?:x|×|\s?times)\s+(?:faster|slower|quicker|the\s+speed|speed-?up)"
_TIMING_WORDS = re.compile(r"\b(?:speed|time|per second|throughput|latency|faster|slower|seconds?|ms)\b|/\s?s\b", re.IGNORECASE)
_FIGURE = re.compile(rf"""
    (?<![\w.])
    (?P<sign>[+\-−]?)
    (?P<int>\d{{1,3}}(?:,\d{{3}})+|\d+)(?:\.(?P<frac>\d+))?(?:[eE](?P<exp>[+\-]?\d+))?
    (?:\s?(?P<unit>%|{_RATIO}|{_SPEED}|{_DURATION}|x|×))?
    (?!\w)
""", re.VERBOSE)


@dataclass(frozen=True)
class Figure:
    """One number in a text: its value (a duration in seconds), its decimals as written, its
    dimension ("duration", "speed", "ratio" for "x faster", or "" for a count, a share or a score),
    the seconds per unit it was written in (1 when not a duration) and the text it was read from."""

    value: float
    decimals: int
    dimension: str
    scale: float
    text: str

    @property
    def timing(self) -> bool:
        """A duration or a speed: it depends on the machine."""
        return bool(self.dimension)


def figures(text: str) -> list[Figure]:
    """The numbers of `text`, in order: "1,234.5", "-0.7", "+8.8", "3.8x", "84%", "0.13 s", "480 ms"
    (0.48 s), "2 min 35 s" (one figure, 155 s), "120 images/s", "3.8x faster"; the first number of a range
    takes the unit of the second ("314 – 465 images/s"). A number glued to a word ("d6", "6da19ce")
    is not one."""
    found: list[Figure] = []
    last_end = -1
    for m in _FIGURE.finditer(text):
        fig = _figure(m)
        prev = found[-1] if found else None
        between = text[last_end:m.start()]
        if (prev and prev.dimension == fig.dimension == "duration" and fig.scale < prev.scale
                and re.fullmatch(r"\s*(?:and\s+)?", between)):
            found[-1] = Figure(prev.value + fig.value, 0, "duration", 1.0, f"{prev.text} {fig.text}")  # "2 min 35 s"
        elif prev and fig.dimension and prev.text == _bare(prev.text) and re.fullmatch(r"\s*[-–—]\s*|\s+to\s+", between):
            found[-1] = Figure(prev.value * fig.scale, prev.decimals, fig.dimension, fig.scale, prev.text)  # "314 – 465 images/s"
            found.append(fig)
        else:
            found.append(fig)
        last_end = m.end()
    return found


def _figure(m: re.Match[str]) -> Figure:
    frac, exp = m.group("frac") or "", int(m.group("exp") or 0)
    value = float(f"{m.group('int').replace(',', '')}.{frac or '0'}e{exp}")
    value = -value if m.group("sign") in ("-", "−") else value
    decimals = len(frac) - exp
    unit = re.sub(r"\s+", " ", (m.group("unit") or "").strip().lower())
    if unit in _SECONDS:
        return Figure(value * _SECONDS[unit], decimals, "duration", _SECONDS[unit], m.group(0).strip())
    if unit and re.fullmatch(_SPEED, unit):
        return Figure(value, decimals, "speed", 1.0, m.group(0).strip())
    if unit and re.fullmatch(_RATIO, unit):
        return Figure(value, decimals, "ratio", 1.0, m.group(0).strip())
    return Figure(value, decimals, "", 1.0, m.group(0).strip())


def _bare(text: str) -> str:
    """`text` when it is a number alone (no unit, no sign); "" otherwise."""
    return text if re.fullmatch(r"[\d,.]+", text) else ""


def numbers(text: str) -> list[float]:
    """The figures of `text` as floats, durations in seconds: "2 min 35 s" -> [155.0]."""
    return [f.value for f in figures(text)]


# ---------------------------------------------------------------- comparing a value with an output

@dataclass(frozen=True)
class Comparison:
    """A row's value against a command's output: the value's figures not in the output (`missing`),
    its timings as (figure, nearest output figure or None, within tolerance), and the output's figures."""

    missing: tuple[str, ...]
    timings: tuple[tuple[str, str | None, bool], ...]
    output: tuple[str, ...]

    @property
    def timings_ok(self) -> bool:
        return all(ok for _, _, ok in self.timings)


def timing_row(row: Row) -> bool:
    """The row's figure is a time or a speed ("predictions per second", "render time relative to
    dlib CNN"): every number of its value then depends on the machine, units or not."""
    return bool(_TIMING_WORDS.search(row.figure))


def compare(value: str, output: str, time_tolerance: float = 0.5, *, timing: bool = False) -> Comparison:
    """Whether each number of `value` is in `output`: a count, share or score at the value's own
    precision (312 is 312; 0.13 is 0.128 or 0.13; 84% is 84.2% or a share of 0.842), a duration or
    speed within `time_tolerance` of the value (relative) among the output's figures of the same
    kind (among its bare numbers, read in the value's unit, when it prints none of that kind).
    Every number is a timing when `timing` (the value of a `timing_row`)."""
    wanted, seen = figures(value), figures(output)
    missing = tuple(f.text for f in wanted if not (f.timing or timing) and not any(_same(f, o) for o in seen))
    timings = tuple(_timing(f, seen, time_tolerance) for f in wanted if f.timing or timing)
    return Comparison(missing, timings, tuple(dict.fromkeys(o.text for o in seen)))


def _same(wanted: Figure, seen: Figure) -> bool:
    """`seen` rounds to `wanted` at `wanted`'s decimals (a percentage also as a share of 1)."""
    half = 0.5 * 10.0 ** -wanted.decimals * (1 + 1e-9) + 1e-12
    candidates = [seen.value, seen.value * 100] if wanted.text.endswith("%") and not seen.text.endswith("%") else [seen.value]
    return any(abs(c - wanted.value) <= half for c in candidates)


def _timing(wanted: Figure, seen: Sequence[Figure], tolerance: float) -> tuple[str, str | None, bool]:
    pool = [(o.value, o.text) for o in seen if o.dimension == wanted.dimension or not wanted.dimension and o.dimension != "duration"]
    if not pool:
        pool = [(o.value * wanted.scale, o.text) for o in seen if not o.dimension]
    if not pool:
        return wanted.text, None, False
    near, text = min(pool, key=lambda p: abs(p[0] - wanted.value))
    return wanted.text, text, abs(near - wanted.value) <= tolerance * abs(wanted.value) + 1e-12


# ---------------------------------------------------------------- running the cheap rows

@dataclass(frozen=True)
class Outcome:
    """What re-running one row gave. `status` is one of `STATUSES`: matched (every figure found,
    timings within tolerance), timing (every count found, a timing outside the tolerance), moved (a
    figure not in the output: `missing`), failed (`exit_code` != 0; `tail` holds the last lines),
    timed out, or skipped (not cheap: `row.cost` says how long it takes)."""

    row: Row
    status: str
    missing: tuple[str, ...] = ()
    timings: tuple[tuple[str, str | None, bool], ...] = ()
    output: tuple[str, ...] = ()
    exit_code: int | None = None
    tail: str = ""
    seconds: float = 0.0
    notes: tuple[str, ...] = ()

    def describe(self, shown: int = 40) -> str:
        """A few lines on what happened (the first `shown` figures of the output)."""
        lines = []
        if self.missing:
            lines.append(f"not in the output: {', '.join(self.missing)}")
        for fig, near, ok in self.timings:
            lines.append(f"timing {'ok' if ok else 'off'}: {fig} " + (f"(nearest printed: {near})" if near else "(no timing printed)"))
        if self.status in ("moved", "timing") and self.output:
            more = f" ... ({len(self.output)} in all)" if len(self.output) > shown else ""
            lines.append(f"the output's figures: {', '.join(self.output[:shown])}{more}")
        if self.status == "failed":
            lines.append(f"exit code {self.exit_code}; last lines:")
        if self.status in ("failed", "timed out") and self.tail:
            lines += ["  " + t for t in self.tail.splitlines()]
        return "\n".join([*self.notes, *lines])


def check(rows: Iterable[Row], only: str | None = None, *, timeout: float = 120.0, time_tolerance: float = 0.5,
          strict_timings: bool = False, root: str | Path = ROOT, progress: bool = False) -> list[Outcome]:
    """Runs the command of each cheap row of `rows` (those `only` selects, see `select`; a command
    several rows share runs once) in a shell at `root`, with this interpreter's bin folder first on PATH (so `python` and `searcher` are the
    project's) and progress bars off, and compares its output (stdout and stderr) with the row's
    value; the other rows come back as skipped. A timing outside `time_tolerance` is "moved"
    under `strict_timings`. A progress bar over the rows run when `progress`.

    Raises:
        ParameterError: naming a timeout or tolerance that is not a positive number, or an `only`
            that no row has.
    """
    timeout = check_number("timeout", timeout, low=0, open_low=True, owner="check")
    time_tolerance = check_number("time_tolerance", time_tolerance, low=0, owner="check")
    chosen = select(list(rows), only)
    cheap = [r for r in chosen if cost_kind(r.cost) == "cheap"]
    from tqdm import tqdm

    runs: dict[str, tuple[int | None, str, float]] = {}  # command -> (exit code, output, seconds): each command runs once
    done: dict[int, Outcome] = {}
    for row in tqdm(cheap, desc="results", unit="row", disable=not progress):
        if row.command and row.command not in runs:
            start = time.perf_counter()
            runs[row.command] = (*_run(row.command, Path(root), timeout), time.perf_counter() - start)
        done[id(row)] = _judge(row, runs.get(row.command), timeout, time_tolerance, strict_timings)
    return [done.get(id(r)) or Outcome(r, "skipped") for r in chosen]


def _judge(row: Row, run: tuple[int | None, str, float] | None, timeout: float, tolerance: float, strict: bool) -> Outcome:
    """The outcome of `row` given its command's (exit code, output, seconds)."""
    if run is None:
        return Outcome(row, "failed", tail="the row has no command")
    code, output, seconds = run
    tail = "\n".join(output.rstrip().splitlines()[-TAIL_LINES:])
    if code is None:
        return Outcome(row, "timed out", tail=tail, seconds=seconds, notes=(f"no answer in {timeout:g} s",))
    if code != 0:
        return Outcome(row, "failed", exit_code=code, tail=tail, seconds=seconds)
    got = compare(row.value, _visible(output), tolerance, timing=timing_row(row))
    if not figures(row.value):
        return Outcome(row, "moved", output=got.output, exit_code=0, seconds=seconds, notes=("the value holds no number to check",))
    if got.missing or (strict and not got.timings_ok):
        status = "moved"
    else:
        status = "matched" if got.timings_ok else "timing"
    return Outcome(row, status, got.missing, got.timings, got.output, exit_code=0, seconds=seconds)


_BAR = re.compile(r"\d+%\|.*\|\s*\d+/\d+\s*\[")  # a tqdm progress bar: "40%|████      | 64/160 [00:03<00:05, 21.2it/s]"


def _visible(output: str) -> str:
    """`output` as a terminal leaves it (the last part of a line rewritten with `\\r`), without
    progress bars: their counts and rates are no figures of the row."""
    lines = (line.split("\r")[-1] for line in output.splitlines())
    return "\n".join(line for line in lines if not _BAR.search(line))


def _run(command: str, cwd: Path, timeout: float) -> tuple[int | None, str]:
    """(exit code, stdout and stderr together) of `command` in a shell; (None, what it printed)
    when it runs past `timeout` (its whole process group is killed)."""
    env = dict(os.environ, TQDM_DISABLE="1")
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    proc = subprocess.Popen(command, shell=True, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, text=True, errors="replace", start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return None, out or ""
    return proc.returncode, out or ""


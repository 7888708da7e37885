"""`OUT/runs.csv`: every finished run of the suite, one row per case x strategy x seed x budget,
appended (and flushed) the moment the run ends, so an interrupted suite loses at most the runs in
flight and the same call again skips every run already there. `OUT/options.json` holds the
strategy options the runs were made with: a run is only reused by a call that asks for the same."""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from searcher.errors import ParameterError
from searcher.strategies import upgrade_options

__all__ = ["COLUMNS", "KEY", "append_run", "claim_options", "done_keys", "read_runs", "show_options"]

COLUMNS = ("case", "kind", "strategy", "seed", "budget", "evaluations", "failures", "repeats", "breadth", "of", "effective_breadth",
           "first_failure", "counts", "median_ask_s", "seconds")
KEY = ("case", "strategy", "seed", "budget")


def read_runs(path: Path) -> pd.DataFrame:
    """The runs stored at `path` (none when it does not exist); a run stored twice counts once (the last)."""
    if not path.exists() or path.stat().st_size == 0:
        return pd.DataFrame(columns=list(COLUMNS))
    runs = pd.read_csv(path, dtype={"case": str, "strategy": str, "counts": str}, keep_default_na=True)
    return runs.drop_duplicates(list(KEY), keep="last").reset_index(drop=True)


def done_keys(path: Path) -> set[tuple[str, str, int, int]]:
    """The `(case, strategy, seed, budget)` of every stored run."""
    runs = read_runs(path)
    return {(str(c), str(s), int(seed), int(b)) for c, s, seed, b in runs[list(KEY)].itertuples(index=False)}


def append_run(path: Path, row: Mapping[str, Any]) -> None:
    """Appends one run (the header first when the file is new) and flushes it to disk."""
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not path.exists() or path.stat().st_size == 0
    with path.open("a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(COLUMNS), extrasaction="ignore")
        if new:
            writer.writeheader()
        writer.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in COLUMNS})
        f.flush()


def claim_options(out: Path, options: Mapping[str, Any], has_runs: bool) -> None:
    """Records the strategy `options` of the suite in `out` (`options.json`), or, when the folder
    `has_runs`, checks that they are those its runs were made with: runs of `bo-modes` with
    `late=0.05` are not runs of `bo-modes`, and resuming one as the other would mix them in one
    row. A folder without the file was made with no options.

    Raises:
        ParameterError: naming both sets of options, when they differ.
    """
    path = Path(out) / "options.json"
    asked = {str(k): options[k] for k in sorted(options)}
    stored = upgrade_options(None, json.loads(path.read_text())) if path.exists() else {}  # a folder of before the ablation table
    if stored != asked and has_runs:
        raise ParameterError(f"The runs in {out} were made with strategy options {show_options(stored)}; this call asks for "
                             f"{show_options(asked)}. Give another --out for runs with other options.")
    if asked or path.exists():
        path.write_text(json.dumps(asked, indent=1) + "\n")


def show_options(options: Mapping[str, Any]) -> str:
    """`late=0.05, ablation.probe=true`, or "none"."""
    flat = {f"{k}.{key}" if isinstance(v, Mapping) else k: value for k, v in options.items()
            for key, value in (v.items() if isinstance(v, Mapping) else [(None, v)])}
    return ", ".join(f"{k}={v}" for k, v in flat.items()) or "none"

"""`bench`: every case x strategy x seed of the suite, resumable, then its tables and figure.

Planted runs go through ask/tell (`planted.py`), in a process pool when `jobs > 1` (spawned
processes: every random choice is seeded, so the scores equal those of `jobs=1`); campaign cases
through `searcher.compare` (`campaigns.py`, on Ray when `jobs > 1`). Each finished run is appended
to `OUT/runs.csv` at once and skipped by the same call again. Strategies are reached through the
registry only: one whose optional package is missing is skipped with one logged line saying how
to install it, and so is a default strategy this version does not register; a strategy or case
named that does not exist is an error listing the valid ones.
"""

from __future__ import annotations

import logging
import multiprocessing
from collections.abc import Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from searcher.bench.campaigns import run_campaigns
from searcher.bench.cases import Case, select_cases
from searcher.bench.planted import run_planted
from searcher.bench.store import KEY, append_run, claim_options, done_keys, read_runs
from searcher.bench.table import markdown, summarise
from searcher.defaults import DEFAULT_BUDGET, MAX_BUDGET
from searcher.errors import ParameterError, PluginError
from searcher.figures.bench import plot_suite
from searcher.space import Continuous, Space
from searcher.strategies import DEFAULT_STRATEGY, STRATEGIES, make_strategy, upgrade_options
from searcher.strategies import strategy_options as strategy_options_of
from searcher.validation import check_int, checked

__all__ = ["DEFAULT_STRATEGIES", "SuiteResult", "bench"]

DEFAULT_STRATEGIES = ("random", "bo", "bo-modes", "bo-modes-nomodel", "tpe", "cmaes", "ax", "cmame")
logger = logging.getLogger("searcher.bench")


@dataclass
class SuiteResult:
    """What `bench` wrote: the runs of this call's cases x strategies x seeds, `suite.csv`'s table,
    `suite.md`'s text, and the strategies skipped (name -> why)."""

    dir: Path
    runs: pd.DataFrame
    table: pd.DataFrame
    markdown: str
    skipped: dict[str, str] = field(default_factory=dict)

    def summary(self) -> str:
        """suite.md."""
        return self.markdown


def _strategies(names: Sequence[str], budget: int) -> tuple[list[str], dict[str, str]]:
    """The strategies that can run, and those skipped with the reason (see the module docstring)."""
    names = [names] if isinstance(names, str) else list(names)
    if not names or len(set(names)) != len(names):
        raise ParameterError(f"bench needs one or more strategies, each once. Got {names}. "
                             f"Registered strategies: {', '.join(STRATEGIES.available())}.")
    defaults = tuple(names) == DEFAULT_STRATEGIES
    probe = Space([Continuous("x0", 0.0, 1.0), Continuous("x1", 0.0, 1.0)])
    chosen, skipped = [], {}
    for name in names:
        if name not in STRATEGIES.available() and defaults:
            skipped[name] = f"this version registers no strategy {name!r} (registered: {', '.join(STRATEGIES.available())})"
            continue
        try:
            make_strategy(name, probe, seed=0, budget=budget)  # unknown name: PluginError listing the valid ones
        except PluginError as exc:
            if name not in STRATEGIES.available():
                raise
            skipped[name] = str(exc)  # an optional package is missing: the message says what to install
            continue
        except ImportError as exc:
            skipped[name] = f"its module could not be imported ({exc}); install the package it needs, e.g. pip install 'searcher[baselines]'"
            continue
        chosen.append(name)
    for name, why in skipped.items():
        logger.warning("bench: skipping strategy %s: %s", name, why)
    if not chosen:
        raise ParameterError(f"None of the strategies {names} can run here: {'; '.join(f'{k}: {v}' for k, v in skipped.items())}.")
    return chosen, skipped


def _seeds(seeds: int | Sequence[int]) -> list[int]:
    if isinstance(seeds, int) and not isinstance(seeds, bool):
        return list(range(check_int("seeds", seeds, 1, owner="bench")))
    out = [check_int("seeds", s, 0, owner="bench") for s in seeds]
    if not out or len(set(out)) != len(out):
        raise ParameterError(f"The 'seeds' option of bench must be a count >= 1 or distinct seeds >= 0. Got {list(seeds)!r} instead.")
    return out


def _run_planted(todo: list[tuple[Case, str, int]], budget: int, jobs: int, runs_csv: Path, bar: Any,
                 options: Mapping[str, Mapping[str, Any]]) -> None:
    """Runs the planted runs `todo` (each strategy built with its `options`), appending each row the moment it is done."""
    if jobs == 1 or len(todo) <= 1:
        for case, strategy, seed in todo:
            bar.set_postfix_str(f"{case.name} {strategy} s{seed}")
            append_run(runs_csv, run_planted(case, strategy, seed, budget, options[strategy]))
            bar.update()
        return
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(todo)), mp_context=multiprocessing.get_context("spawn"))
    try:
        pending = {pool.submit(run_planted, case, strategy, seed, budget, options[strategy]) for case, strategy, seed in todo}
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                row = future.result()
                append_run(runs_csv, row)
                bar.set_postfix_str(f"{row['case']} {row['strategy']} s{row['seed']}")
                bar.update()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # Ctrl-C or an error: runs not started are dropped


class _NoBar:
    def set_postfix_str(self, text: str) -> None:
        """No bar."""

    def update(self) -> None:
        """No bar."""

    def close(self) -> None:
        """No bar."""


@checked("bench")
def bench(out: str | Path = "runs/bench", cases: Sequence[str | Case] | str | None = None, strategies: Sequence[str] = DEFAULT_STRATEGIES,
          seeds: int | Sequence[int] = 5, budget: int = DEFAULT_BUDGET, jobs: int = 1, progress: bool = True, under: str = DEFAULT_STRATEGY,
          strategy_options: Mapping[str, Any] | None = None) -> SuiteResult:
    """Runs (or resumes) the benchmark suite and writes `out/runs.csv`, `suite.csv`, `suite.md` and `suite.png`.

    Args:
        out: the suite's directory (campaign cases keep their campaigns in `out/CASE/`).
        cases: SUITE or HELD_OUT names, or `Case` objects, or as `select_cases` takes them (None: all of `SUITE`).
        strategies: registered strategy names (see the module docstring for those skipped).
        seeds: a count (5: seeds 0..4) or the seeds themselves.
        budget: evaluations per run, in batches of 4.
        jobs: planted runs at once in a process pool, and campaigns at once on Ray.
        progress: a bar over the planted runs, and `compare`'s bars over campaigns.
        under: the strategy the two checks of suite.md are about.
        strategy_options: options for the strategies that take them (`{"late": 0.05}` goes to
            bo-modes and its ablation, not to random), as `compare` passes them: a variant of a
            strategy scored on the whole suite. A folder keeps the options its runs were made
            with (`options.json`); a call with other options is an error, not a mix.

    Returns:
        The `SuiteResult`; `summary()` is suite.md.

    Raises:
        ParameterError: an unknown case or strategy (the valid ones are listed), a bad count, an
            option no strategy takes (each one's options are listed), or options other than
            those of the runs already in `out`.
    """
    chosen = select_cases(cases)
    budget = check_int("budget", budget, 1, MAX_BUDGET, owner="bench")
    jobs = check_int("jobs", jobs, 1, owner="bench")
    seed_list = _seeds(seeds)
    names, skipped = _strategies(strategies, budget)
    asked = upgrade_options(None, strategy_options or {})  # the ablation switches as bo-modes takes them now
    options = strategy_options_of(names, asked)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    runs_csv = out / "runs.csv"
    done = done_keys(runs_csv)
    claim_options(out, asked, has_runs=bool(done))

    def missing(case: Case) -> list[tuple[str, int]]:
        return [(s, seed) for s in names for seed in seed_list if (case.name, s, seed, budget) not in done]

    for case in chosen:  # a bad planted layout fails before anything runs
        if case.kind == "planted" and missing(case):
            case.regions()
    todo = [(case, s, seed) for case in chosen if case.kind == "planted" for s, seed in missing(case)]
    if progress and todo:
        from tqdm import tqdm

        bar: Any = tqdm(total=len(todo), desc="bench (planted runs)", unit="run")
    else:
        bar = _NoBar()
    try:
        _run_planted(todo, budget, jobs, runs_csv, bar, options)
    finally:
        bar.close()
    for case in chosen:
        if case.kind == "campaign" and missing(case):
            keys = set(missing(case))
            for row in run_campaigns(case, names, seed_list, budget, out, parallel=jobs, progress=progress, strategy_options=asked):
                if (row["strategy"], row["seed"]) in keys:
                    append_run(runs_csv, row)

    runs = read_runs(runs_csv)
    runs = runs[runs["case"].isin([c.name for c in chosen]) & runs["strategy"].isin(names) & runs["seed"].isin(seed_list)
                & (runs["budget"] == budget)].reset_index(drop=True)
    table = summarise(runs, chosen, names)
    table.to_csv(out / "suite.csv", index=False)
    text = markdown(table, runs, chosen, names, under, budget, len(seed_list), float(runs["seconds"].astype(float).sum()), asked)
    (out / "suite.md").write_text(text)
    plot_suite(table, out / "suite.png", under=under, tuned=[c.name for c in chosen if c.tuned])
    return SuiteResult(out, runs.sort_values(list(KEY)).reset_index(drop=True), table, text, skipped)

"""Bounds on what a search that explores and harvests can reach on the planted cases, in the
suite's own terms: the regions uniform points hit (`volumes`, `expected_hits`), the suite's two
bars per case (`bars`), the fewest points at which exploring reaches the breadth bar and the
failures a harvest that never misses could find after them (`bound` for uniform points,
`explorer_bound` for strategies run again as the suite ran them), and `bo-modes`'s schedule of
roles (`schedule_roles`). `lab/breadth_bound.py` prints the tables; docs/search.md reports them.

    table = bound(read_runs("runs/bench/runs.csv"))        # one row per planted case
    print(bound_markdown(table))
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from searcher.bench.cases import select_cases
from searcher.bench.planted import planted_labels
from searcher.bench.table import BREADTH_SHARE, PEERS, YIELD_SHARE
from searcher.space import Continuous, Space
from searcher.strategies import DEFAULT_STRATEGY, strategy_options, upgrade_options
from searcher.strategies.bo import FailureModes
from searcher.testing.planted import PlantedRegions

__all__ = ["DRAWS", "SCHEDULE_OPTIONS", "bars", "bound", "bound_markdown", "discovery", "expected_hits", "explorer_bound", "explorer_curves",
           "explorer_markdown", "exploring_points", "first_reaching", "schedule", "schedule_roles", "volumes"]

SCHEDULE_OPTIONS = ("n_init", "early", "late", "split")  # the options of bo-modes that set its schedule of roles

DRAWS = 2_000_000  # uniform points per case for the regions' volumes
_CHUNK = 200_000


def volumes(regions: PlantedRegions, draws: int = DRAWS, seed: int = 0) -> np.ndarray:
    """The share of the cube each region fills (its level's share included), from `draws` uniform points."""
    rng, counts = np.random.default_rng(seed), np.zeros(regions.k)
    cube = regions.space.cube
    for start in range(0, draws, _CHUNK):
        hit = regions.region_of(cube.uniform(rng, min(_CHUNK, draws - start)))
        counts += np.bincount(hit[hit >= 0], minlength=regions.k)
    return counts / draws


def expected_hits(p: np.ndarray, n: np.ndarray | int) -> np.ndarray:
    """Regions that `n` independent uniform points hit, on average: `sum_r 1 - (1 - p_r)^n`."""
    n = np.asarray(n, float)
    return (1.0 - np.power.outer(1.0 - np.asarray(p, float), n)).sum(axis=0)


def exploring_points(first_failure: float, budget: int) -> int:
    """`bo-modes`'s exploring points in a run of its default schedule whose first failure was point
    `first_failure` (0-based; NaN when none): the Sobol start, every point up to the first failure,
    and those the schedule explores after it (`schedule_roles`, which reads only where the first
    failure fell)."""
    failed = np.zeros(budget, bool)
    if np.isfinite(first_failure):
        failed[int(first_failure)] = True
    return int((schedule_roles(failed, budget, {}) != "harvest").sum())


def bars(part: pd.DataFrame) -> tuple[dict[str, Any], dict[str, Any]]:
    """A case's breadth bar (90% of the broadest strategy's mean regions hit: the effective regions'
    bar is lower, and never above the regions found) and failures bar (80% of the best peer's mean
    failures), each with the strategy that sets it, from the case's runs."""
    means = part.groupby("strategy")[["failures", "breadth"]].mean()
    peers = means.loc[means.index.isin(PEERS)]
    return ({"breadth bar": BREADTH_SHARE * means["breadth"].max(), "broadest": means["breadth"].idxmax()},
            {"failures bar": YIELD_SHARE * peers["failures"].max() if len(peers) else np.nan,
             "best peer": peers["failures"].idxmax() if len(peers) else None})


def first_reaching(curve: np.ndarray, bar: float) -> int | None:
    """The first index at which a non-decreasing `curve` (regions hit by point n) reaches `bar`; None if it never does."""
    reached = np.asarray(curve) >= bar
    return int(np.argmax(reached)) if reached.any() else None


def discovery(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per `n` = 0..len(labels): the regions hit and the failures found by a run's first `n` points,
    from the region each point found anew (-1: none; `planted_labels`)."""
    labels = np.asarray(labels, int)
    hit = labels >= 0
    first = np.zeros(len(labels), bool)
    first[hit] = ~pd.Series(labels[hit]).duplicated().to_numpy()
    return np.concatenate([[0], np.cumsum(first)]), np.concatenate([[0], np.cumsum(hit)])


def _run_again(job: tuple[str, str, int, int, dict]) -> tuple[tuple[str, str, int], np.ndarray, np.ndarray]:
    case, strategy, seed, budget, options = job
    labels, _, _ = planted_labels(select_cases([case])[0], strategy, seed, budget, options)
    return (case, strategy, seed), *discovery(labels)


def explorer_curves(runs: pd.DataFrame, explorers: Sequence[str], options: Mapping[str, Any] | None = None, jobs: int = 1,
                    progress: bool = True) -> dict[tuple[str, str, int], tuple[np.ndarray, np.ndarray]]:
    """`(case, strategy, seed) -> (regions hit, failures found)` by each point, for every planted run
    in `runs` of the `explorers`, run again with the folder's strategy `options` (`jobs` processes,
    a progress bar with `progress`)."""
    from tqdm import tqdm

    per = strategy_options(list(explorers), upgrade_options(None, options or {}))
    todo = [(r.case, r.strategy, int(r.seed), int(r.budget), per[r.strategy])
            for r in runs[runs["strategy"].isin(explorers) & (runs["kind"] == "planted")].itertuples()]
    bar = partial(tqdm, total=len(todo), desc="explorers, run again", disable=not progress)
    if jobs == 1:
        done = list(bar(map(_run_again, todo)))
    else:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            done = list(bar(pool.map(_run_again, todo)))
    return {key: (regions, failures) for key, regions, failures in done}


def explorer_bound(runs: pd.DataFrame, curves: dict[tuple[str, str, int], tuple[np.ndarray, np.ndarray]]) -> pd.DataFrame:
    """One row per planted case and explorer: the fewest points at which the explorer's runs had hit
    the breadth bar's regions on average, the failures a harvest that never misses could reach
    after them (with those the points found), whether both checks could then hold, and whether
    every run again found the failures runs.csv holds for it."""
    rows = []
    for case in select_cases("planted"):
        part = runs[runs["case"] == case.name]
        if part.empty:
            continue
        bar, need = bars(part)
        for strategy in sorted({s for c, s, _ in curves if c == case.name}):
            seeds = sorted(k for c, s, k in curves if c == case.name and s == strategy)
            regions = np.mean([curves[case.name, strategy, k][0] for k in seeds], axis=0)
            failures = np.mean([curves[case.name, strategy, k][1] for k in seeds], axis=0)
            stored = part[part["strategy"] == strategy].set_index("seed").loc[seeds, "failures"].to_numpy()
            again = np.array([curves[case.name, strategy, k][1][-1] for k in seeds])
            budget = len(regions) - 1
            n = first_reaching(regions, bar["breadth bar"])
            most = None if n is None else budget - n + failures[n]
            rows.append({"case": case.name, "explorer": strategy, **bar, **need, "points for the breadth bar": n,
                         "failures then, at most": most, "possible": bool(n is not None and most >= need["failures bar"]),
                         "regions hit by the end": regions[-1], "as stored": bool((again == stored).all())})
    return pd.DataFrame(rows)


def explorer_markdown(table: pd.DataFrame) -> str:
    """A row per case: the bars, then per explorer the points it needs for the breadth bar and the
    failures a perfect harvest could reach after them (bold where both checks could hold)."""
    explorers = sorted(table["explorer"].unique())
    head = ["case", "breadth bar", "failures bar", *[f"{e}: points for the bar, failures then" for e in explorers], "any explorer?"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for case, part in table.groupby("case", sort=False):
        r = part.iloc[0]
        cells = [case, f"{r['breadth bar']:.2f} ({r['broadest']})", f"{r['failures bar']:.0f} ({r['best peer']})"]
        for e in explorers:
            row = part[part["explorer"] == e]
            if row.empty:
                cells.append("-")
                continue
            row = row.iloc[0]
            text = "never" if pd.isna(row["points for the breadth bar"]) else \
                f"{row['points for the breadth bar']:.0f}, {row['failures then, at most']:.0f}"
            cells.append((f"**{text}**" if row["possible"] else text) + ("" if row["as stored"] else " (not as stored)"))
        cells.append("yes" if part["possible"].any() else "**no**")
        lines.append("| " + " | ".join(cells) + " |")
    within = table.groupby("case")["possible"].any()
    lines.append(f"\nBoth checks within reach of an explorer and a perfect harvest on {int(within.sum())} of {len(within)} cases.")
    return "\n".join(lines)


def bound(runs: pd.DataFrame, draws: int = DRAWS, under: str = DEFAULT_STRATEGY) -> pd.DataFrame:
    """One row per planted case with runs: its volume, the bars, the uniform points the breadth bar
    needs and the failures a perfect harvest could then find, and `under`'s regions against
    uniform points as many as it explored."""
    rows = []
    for case in select_cases("planted"):
        part = runs[runs["case"] == case.name]
        if part.empty:
            continue
        budget = int(part["budget"].iloc[0])
        means = part.groupby("strategy")[["failures", "breadth", "effective_breadth"]].mean()
        regions = case.regions()
        p = volumes(regions, draws)
        bar, need = bars(part)
        hits = expected_hits(p, np.arange(budget + 1))
        n = first_reaching(hits, bar["breadth bar"])
        most = None if n is None else budget - n + n * p.sum()  # a harvest that never misses, after n uniform points
        row = {"case": case.name, "volume": p.sum(), "regions": regions.k, **bar, **need,
               "uniform points for the breadth bar": n, "failures then, at most": most,
               "possible": bool(n is not None and most >= need["failures bar"]), "random: regions hit": means["breadth"].get("random", np.nan),
               "random: E[hit]": hits[budget]}
        mine = part[part["strategy"] == under]
        if len(mine):
            explored = np.array([exploring_points(f, budget) for f in mine["first_failure"].astype(float)])
            row.update({f"{under}: exploring points": explored.mean(), f"{under}: regions hit": mine["breadth"].mean(),
                        "uniform: E[hit] at as many": float(np.mean([expected_hits(p, k) for k in explored]))})
        rows.append(row)
    return pd.DataFrame(rows).set_index("case")


def bound_markdown(table: pd.DataFrame, under: str = DEFAULT_STRATEGY) -> str:
    """`bound`'s table as markdown, a row per case."""
    head = ["case", "regions (volume)", "breadth bar", "failures bar", "uniform points for the breadth bar", "failures then, at most",
            "both, exploring uniformly?", "random: regions hit (uniform, expected)", f"{under}: exploring points", f"{under}: regions hit",
            "uniform: as many points hit"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for case, r in table.iterrows():
        n = "more than the budget" if pd.isna(r["uniform points for the breadth bar"]) else f"{r['uniform points for the breadth bar']:.0f}"
        most = "-" if pd.isna(r["failures then, at most"]) else f"{r['failures then, at most']:.0f}"
        cells = [case, f"{r['regions']} ({100 * r['volume']:.2g}%)", f"{r['breadth bar']:.2f} ({r['broadest']})",
                 f"{r['failures bar']:.0f} ({r['best peer']})", n, most, "yes" if r["possible"] else "**no**",
                 f"{r['random: regions hit']:.1f} ({r['random: E[hit]']:.1f})",
                 f"{r.get(f'{under}: exploring points', np.nan):.0f}", f"{r.get(f'{under}: regions hit', np.nan):.1f}",
                 f"{r.get('uniform: E[hit] at as many', np.nan):.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def schedule(budget: int, options: Mapping[str, Any] | None = None) -> FailureModes:
    """A `bo-modes` strategy whose schedule is a run's: its `budget` and the schedule's options
    among its strategy `options` (`SCHEDULE_OPTIONS`; the rest do not move the schedule)."""
    return FailureModes(Space([Continuous("x", 0.0, 1.0)]), budget=budget, **{k: v for k, v in (options or {}).items() if k in SCHEDULE_OPTIONS})


def schedule_roles(failed: np.ndarray, budget: int, options: Mapping[str, Any] | None = None) -> np.ndarray:
    """The role of each point of a `bo-modes` run of `budget` with these strategy options, from where
    its points `failed`: "sobol" for the first `n_init`, "explore" until the first failure (no mode
    to harvest yet) and where the schedule explores, "harvest" otherwise."""
    s = schedule(budget, options)
    first = int(np.argmax(failed)) if failed.any() else len(failed)
    return np.array(["sobol" if i < s.n_init else "explore" if i <= first or s.explores(i) else "harvest" for i in range(len(failed))])

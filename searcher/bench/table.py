"""The suite's tables: `suite.csv` (per case x strategy, mean and sd over seeds) and `suite.md`
(one row per case, "failures / breadth / effective breadth" per strategy, and two checks of a
strategy under test).

The checks, per case, on means over seeds:
- yield: the strategy under test finds >= 80% of the failures of the best peer optimiser that ran
  (`PEERS`: tpe, cmaes, ax, cmame);
- breadth: it reaches >= 90% of the broadest strategy's breadth (random included) both in breadth
  and in effective breadth (when no strategy found anything, 0 of 0 passes).

Five seeds make a mean that moves from one draw to the next, so beside each verdict suite.md gives
how often it holds when the seeds are drawn again: the share of bootstrap resamples (each
strategy's runs drawn with replacement, independently) in which both checks pass (`resampled`).
A verdict near 0% or 100% is the search's; one in between is the draw's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from searcher.analysis.modes import N_MODES
from searcher.bench.cases import Case
from searcher.bench.store import show_options

__all__ = ["BREADTH_SHARE", "PEERS", "RESAMPLES", "YIELD_SHARE", "checks", "markdown", "resampled", "summarise"]

PEERS = ("tpe", "cmaes", "ax", "cmame")
YIELD_SHARE, BREADTH_SHARE = 0.8, 0.9
_SCORES = ("failures", "repeats", "breadth", "effective_breadth", "seconds")
_CHECKED = ("failures", "breadth", "effective_breadth")  # what the checks read, in this order
RESAMPLES = 2000  # bootstrap resamples of the seeds behind `resampled`


def summarise(runs: pd.DataFrame, cases: Sequence[Case], strategies: Sequence[str]) -> pd.DataFrame:
    """Per case x strategy (in the given orders, those with runs): seeds, mean and sd (0 for one
    seed) of each score, the median seconds per ask, the regions or modes there are, and the
    case's kind and tuned flag."""
    rows = []
    for case in cases:
        for strategy in strategies:
            grp = runs[(runs["case"] == case.name) & (runs["strategy"] == strategy)]
            if grp.empty:
                continue
            row: dict[str, Any] = {"case": case.name, "kind": case.kind, "tuned": case.tuned, "strategy": strategy,
                                   "seeds": len(grp), "of": int(grp["of"].iloc[0])}
            for score in _SCORES:
                values = grp[score].astype(float)
                row[f"{score}_mean"] = float(values.mean())
                row[f"{score}_sd"] = float(values.std(ddof=1)) if len(values) > 1 else 0.0
            ask = grp["median_ask_s"].astype(float)
            row["median_ask_s"] = float(ask.median()) if ask.notna().any() else float("nan")
            rows.append(row)
    columns = ["case", "kind", "tuned", "strategy", "seeds", "of", *(f"{s}_{m}" for s in _SCORES for m in ("mean", "sd")), "median_ask_s"]
    return pd.DataFrame(rows, columns=columns)


def _ratio(value: float, best: float) -> float:
    return 1.0 if best <= 0 else value / best


def _verdicts(means: Mapping[str, np.ndarray], under: str) -> tuple[str | None, np.ndarray | None, np.ndarray]:
    """The two checks on means of (failures, breadth, effective breadth), `k x 3` per strategy (one
    row per draw of them): the best peer (by its first row), whether `under` passes the yield check
    (None when no peer ran) and the breadth check, each a length-`k` bool array."""
    me = means[under]
    peers = [s for s in means if s in PEERS and s != under]
    best = max(peers, key=lambda s: means[s][0, 0]) if peers else None
    yield_ok = None
    if peers:
        yield_ok = me[:, 0] >= YIELD_SHARE * np.max([means[s][:, 0] for s in peers], axis=0)
    broadest = np.max([m[:, 1:] for m in means.values()], axis=0)
    return best, yield_ok, np.all(me[:, 1:] >= BREADTH_SHARE * broadest, axis=1)


def checks(suite: pd.DataFrame, case: str, under: str) -> dict[str, Any] | None:
    """The two checks of `under` on `case` (see the module docstring): `yield_ok` (None when no
    peer ran), `yield_ratio`, `best_peer`, `breadth_ok`, `breadth_ratio`, `effective_ratio`,
    `broadest`; None when `under` did not run on the case."""
    rows = suite[suite["case"] == case].set_index("strategy")
    if under not in rows.index:
        return None
    means = {s: rows.loc[[s], [f"{c}_mean" for c in _CHECKED]].to_numpy(float) for s in rows.index}
    best, yield_ok, breadth_ok = _verdicts(means, under)
    me = rows.loc[under]
    out: dict[str, Any] = {"yield_ok": None, "yield_ratio": float("nan"), "best_peer": best}
    if best is not None:
        out["yield_ratio"] = _ratio(me["failures_mean"], rows.loc[best, "failures_mean"])
        out["yield_ok"] = bool(yield_ok[0])
    out.update(broadest=rows["effective_breadth_mean"].idxmax(), breadth_ok=bool(breadth_ok[0]),
               breadth_ratio=_ratio(me["breadth_mean"], rows["breadth_mean"].max()),
               effective_ratio=_ratio(me["effective_breadth_mean"], rows["effective_breadth_mean"].max()))
    return out


def resampled(runs: pd.DataFrame, case: str, under: str, draws: int = RESAMPLES, seed: int = 0) -> dict[str, float] | None:
    """How often each check of `under` on `case` passes when the seeds are drawn again: the share
    of `draws` bootstrap resamples (each strategy's runs of the case drawn with replacement,
    independently; seeded) in which the yield check (`yield`, NaN when no peer ran), the breadth
    check (`breadth`) and both (`both`) pass. None when `under` did not run on the case."""
    grp = runs[runs["case"] == case]
    if under not in set(grp["strategy"]):
        return None
    rng = np.random.default_rng(seed)
    means = {}
    for strategy, part in grp.groupby("strategy"):  # in name order, each strategy's runs in seed order: one draw per seed
        values = part.sort_values("seed")[list(_CHECKED)].to_numpy(float)
        means[strategy] = values[rng.integers(0, len(values), (draws, len(values)))].mean(axis=1)
    _, yield_ok, breadth_ok = _verdicts(means, under)
    both = breadth_ok if yield_ok is None else yield_ok & breadth_ok
    return {"yield": float("nan") if yield_ok is None else float(yield_ok.mean()), "breadth": float(breadth_ok.mean()),
            "both": float(both.mean())}


def _cell(row: pd.Series) -> str:
    return f"{row['failures_mean']:.1f} / {row['breadth_mean']:.1f} / {row['effective_breadth_mean']:.2f}"


def _mark(ok: bool | None) -> str:
    return "n/a" if ok is None else ("✓" if ok else "✗")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _duration(seconds: float) -> str:
    minutes = int(round(seconds / 60))
    return f"{seconds:.0f} s" if seconds < 60 else f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{minutes} min"


def markdown(suite: pd.DataFrame, runs: pd.DataFrame, cases: Sequence[Case], strategies: Sequence[str], under: str, budget: int,
             seeds: int, seconds: float, options: Mapping[str, Any] | None = None) -> str:
    """suite.md: a title, a key (with the strategy `options` the runs were made with), the table
    (the checks on the means of `suite`, and how often both hold over resamples of `runs`' seeds),
    and the line counting the cases `under` passes."""
    ran = [s for s in strategies if s in set(suite["strategy"])]
    head = ["case", "landscape", *ran, f"{under}: failures >= {YIELD_SHARE:.0%} of best peer",
            f"{under}: breadth >= {BREADTH_SHARE:.0%} of broadest", "both, in seed resamples"]
    lines = [f"# Benchmark suite: {_count(len(cases), 'case')}, {budget} evaluations per run, {_count(seeds, 'seed')}", "",
             "Each cell: failures / breadth / effective breadth, means over seeds. Failures are distinct failing points; breadth is "
             f"the planted regions (of k) or failure modes (of {N_MODES}) hit; effective breadth is exp(entropy) of the failures over them "
             "(1 for one region, 0 for none). `*`: the defaults were tuned on this case. The last column: the share of "
             f"{RESAMPLES} bootstrap resamples of the seeds in which both checks pass (near 0% or 100%: the search's verdict; "
             "in between: the draw's)."
             + (f" Strategy options: {show_options(options)} (each to the strategies that take it)." if options else ""), "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    counts = {"yield": [0, 0], "breadth": [0, 0], "both": [0, 0], "untuned": [0, 0]}
    for case in cases:
        rows = suite[suite["case"] == case.name].set_index("strategy")
        if rows.empty:
            continue
        cells = [_cell(rows.loc[s]) if s in rows.index else "—" for s in ran]
        check = checks(suite, case.name, under)
        if check is None:
            marks = ["n/a", "n/a", "n/a"]
        else:
            peer = f" ({check['yield_ratio']:.2f}x {check['best_peer']})" if check["best_peer"] else ""
            marks = [_mark(check["yield_ok"]) + peer,
                     f"{_mark(check['breadth_ok'])} ({check['breadth_ratio']:.2f}, {check['effective_ratio']:.2f})",
                     f"{resampled(runs, case.name, under)['both']:.0%}"]
            for key, ok in (("yield", check["yield_ok"]), ("breadth", check["breadth_ok"])):
                if ok is not None:
                    counts[key][0] += ok
                    counts[key][1] += 1
            if check["yield_ok"] is not None:
                both = bool(check["yield_ok"] and check["breadth_ok"])
                counts["both"][0] += both
                counts["both"][1] += 1
                if not case.tuned:
                    counts["untuned"][0] += both
                    counts["untuned"][1] += 1
        name = f"{case.name}{' *' if case.tuned else ''}"
        lines.append("| " + " | ".join([name, case.describe(), *cells, *marks]) + " |")
    lines.append("")
    if under not in ran:
        verdict = f"{under} did not run: no checks."
    elif not counts["both"][1]:
        verdict = (f"{under} passes the breadth check on {counts['breadth'][0]} of {_count(counts['breadth'][1], 'case')}; "
                   f"no peer ({', '.join(PEERS)}) ran, so no failure check.")
    else:
        untuned = f" ({counts['untuned'][0]} of {counts['untuned'][1]} untuned)" if counts["untuned"][1] else ""
        verdict = (f"{under} passes both checks on {counts['both'][0]} of {_count(counts['both'][1], 'case')}{untuned}; "
                   f"failures: {counts['yield'][0]} of {counts['yield'][1]}, breadth: {counts['breadth'][0]} of {counts['breadth'][1]}.")
    lines.append(f"{verdict} Total run time: {_duration(seconds)} (the runs' own seconds, summed).")
    return "\n".join(lines) + "\n"

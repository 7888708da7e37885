"""The suite's tables: `suite.csv` (per case x strategy, mean and sd over seeds) and `suite.md`
(one row per case, "failures / breadth / effective breadth" per strategy, and two checks of a
strategy under test).

The checks, per case, on means over seeds:
- yield: the strategy under test finds >= 80% of the failures of the best peer optimiser that ran
  (`PEERS`: tpe, cmaes, ax, cmame);
- breadth: it reaches >= 90% of the broadest strategy's breadth (random included) both in breadth
  and in effective breadth (when no strategy found anything, 0 of 0 passes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from searcher.bench.cases import Case
from searcher.bench.store import show_options

__all__ = ["BREADTH_SHARE", "PEERS", "YIELD_SHARE", "checks", "markdown", "summarise"]

PEERS = ("tpe", "cmaes", "ax", "cmame")
YIELD_SHARE, BREADTH_SHARE = 0.8, 0.9
_SCORES = ("failures", "repeats", "breadth", "effective_breadth", "seconds")


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


def checks(suite: pd.DataFrame, case: str, under: str) -> dict[str, Any] | None:
    """The two checks of `under` on `case` (see the module docstring): `yield_ok` (None when no
    peer ran), `yield_ratio`, `best_peer`, `breadth_ok`, `breadth_ratio`, `effective_ratio`,
    `broadest`; None when `under` did not run on the case."""
    rows = suite[suite["case"] == case].set_index("strategy")
    if under not in rows.index:
        return None
    me = rows.loc[under]
    peers = rows[rows.index.isin(PEERS) & (rows.index != under)]
    out: dict[str, Any] = {"yield_ok": None, "yield_ratio": float("nan"), "best_peer": None}
    if len(peers):
        best = peers["failures_mean"].idxmax()
        out["best_peer"] = best
        out["yield_ratio"] = _ratio(me["failures_mean"], peers.loc[best, "failures_mean"])
        out["yield_ok"] = bool(me["failures_mean"] >= YIELD_SHARE * peers.loc[best, "failures_mean"])
    broadest = rows["effective_breadth_mean"].idxmax()
    b_ratio = _ratio(me["breadth_mean"], rows["breadth_mean"].max())
    e_ratio = _ratio(me["effective_breadth_mean"], rows["effective_breadth_mean"].max())
    out.update(broadest=broadest, breadth_ratio=b_ratio, effective_ratio=e_ratio,
               breadth_ok=bool(me["breadth_mean"] >= BREADTH_SHARE * rows["breadth_mean"].max()
                               and me["effective_breadth_mean"] >= BREADTH_SHARE * rows["effective_breadth_mean"].max()))
    return out


def _cell(row: pd.Series) -> str:
    return f"{row['failures_mean']:.1f} / {row['breadth_mean']:.1f} / {row['effective_breadth_mean']:.2f}"


def _mark(ok: bool | None) -> str:
    return "n/a" if ok is None else ("✓" if ok else "✗")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _duration(seconds: float) -> str:
    minutes = int(round(seconds / 60))
    return f"{seconds:.0f} s" if seconds < 60 else f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{minutes} min"


def markdown(suite: pd.DataFrame, cases: Sequence[Case], strategies: Sequence[str], under: str, budget: int, seeds: int,
             seconds: float, options: Mapping[str, Any] | None = None) -> str:
    """suite.md: a title, a key (with the strategy `options` the runs were made with), the table,
    and the line counting the cases `under` passes."""
    ran = [s for s in strategies if s in set(suite["strategy"])]
    head = ["case", "landscape", *ran, f"{under}: failures >= {YIELD_SHARE:.0%} of best peer",
            f"{under}: breadth >= {BREADTH_SHARE:.0%} of broadest"]
    lines = [f"# Benchmark suite: {_count(len(cases), 'case')}, {budget} evaluations per run, {_count(seeds, 'seed')}", "",
             "Each cell: failures / breadth / effective breadth, means over seeds. Failures are distinct failing points; breadth is "
             "the planted regions (of k) or failure modes (of 16) hit; effective breadth is exp(entropy) of the failures over them "
             "(1 for one region, 0 for none). `*`: the defaults were tuned on this case."
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
            marks = ["n/a", "n/a"]
        else:
            peer = f" ({check['yield_ratio']:.2f}x {check['best_peer']})" if check["best_peer"] else ""
            marks = [_mark(check["yield_ok"]) + peer,
                     f"{_mark(check['breadth_ok'])} ({check['breadth_ratio']:.2f}, {check['effective_ratio']:.2f})"]
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

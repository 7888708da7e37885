"""`searcher results`: the rows of docs/results.md, and the cheap ones measured again (`--check`)."""

from __future__ import annotations

import argparse

HELP = "list the measured figures of docs/results.md, or run the cheap rows again and flag a figure that has moved"
DESCRIPTION = ("Reads every results table of docs/results.md (or --file). --list shows each row's section, figure and cost. --check "
               "runs the command of each cheap row (under about a minute) from the repository root and looks for every number of "
               "the row's value in what it prints, at the value's precision; durations and speeds match within --time-tolerance "
               "and are reported as timing, not as moved, unless --strict-timings. The other rows are listed with their cost. "
               "Exits 1 when a figure moved or a command failed or timed out.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    from searcher.bench.results import DEFAULT_FILE

    what = p.add_mutually_exclusive_group()
    what.add_argument("--list", action="store_true", help="the rows: section, figure, cost (the default)")
    what.add_argument("--check", action="store_true", help="run the cheap rows again; exit 1 if a figure moved or a command failed")
    p.add_argument("--only", metavar="SUBSTRING", help="the rows whose figure or section contains it (any case)")
    p.add_argument("--file", default=str(DEFAULT_FILE), metavar="PATH", help="the results file (default: docs/results.md at the repository root)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds a row's command may run (default: 120)")
    p.add_argument("--time-tolerance", type=float, default=0.5,
                   help="how far a duration or speed may move, relative to the written one, and still match (default: 0.5)")
    p.add_argument("--strict-timings", action="store_true", help="a timing outside the tolerance counts as moved")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    from searcher.bench.results import FAILING, check, cost_kind, read_results, select

    rows = read_results(args.file)
    if not args.check:
        chosen = select(rows, args.only)
        wide = max((len(r.section) for r in chosen), default=0)
        for r in chosen:
            kind = cost_kind(r.cost)
            print(f"  {r.section:<{wide}}  {r.figure}  [{r.cost if kind else r.cost + ': not cheap, a duration or unrecorded'}]")
        print(f"{len(chosen)} rows, {sum(cost_kind(r.cost) == 'cheap' for r in chosen)} cheap (--check runs them again)")
        return 0
    outcomes = check(rows, args.only, timeout=args.timeout, time_tolerance=args.time_tolerance, strict_timings=args.strict_timings,
                     progress=not args.no_progress)
    for o in outcomes:
        cost = f" ({o.row.cost})" if o.status == "skipped" else f" ({o.seconds:.1f} s)"
        print(f"{o.status:>9}  {o.row.section}: {o.row.figure} [line {o.row.line}]{cost}")
        if o.status != "skipped":
            print(f"           `{o.row.command}` -> {o.row.value}")
        detail = o.describe()
        if detail:
            print("\n".join("           " + line for line in detail.splitlines()))
    counts = {s: sum(o.status == s for o in outcomes) for s in ("matched", "timing", "moved", "failed", "timed out", "skipped")}
    print(", ".join(f"{n} {s}" for s, n in counts.items()))
    return 1 if any(o.status in FAILING for o in outcomes) else 0


"""`searcher explain RUN`: each failure mode of a campaign in words, with its rule, precision and coverage;
with `--confirm`, each rule's attributes set back on the mode's failures and the fix rates against a control."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from searcher.errors import ParameterError
from searcher.validation import check_int

HELP = "each failure mode of a campaign in words: the rule over the generator's parameters, its precision and coverage"
DESCRIPTION = ("Prints one block per failure mode (the modes of `searcher report`): its failures, the rule that sets them "
               "apart from the campaign's passes in the generator's own names and units, a caption, and the rule's precision "
               "(share of the campaign's points inside it that fail) and coverage (share of the mode's failures inside it), "
               "with Wilson 95% intervals; writes RUN/explain.json. It reads the store only, so it can run while the "
               "campaign searches. With --confirm it also re-renders each mode's failures with one attribute of its rule "
               "set back to where the target passes, everything else held, asks the target again and gives the fix rate "
               "(the share that now pass) beside a control attribute outside the rule; those evaluations are counted "
               "against --confirm-budget and stored in RUN/confirm/, and the same command resumes them.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run", metavar="RUN", help="a campaign directory (searcher hunt)")
    p.add_argument("--min-failures", type=int, default=10, help="modes with fewer failures are listed without a rule (default: 10)")
    p.add_argument("--depth", type=int, default=3, help="depth of each mode's decision tree, 1 to 10 (default: 3)")
    p.add_argument("--json", action="store_true", help="print explain.json instead of the blocks")
    p.add_argument("--confirm", action="store_true",
                   help="confirm each rule by intervention: set each attribute back on the mode's failures and ask the target again")
    p.add_argument("--confirm-budget", type=int, default=None, metavar="N",  # default: confirm.DEFAULT_BUDGET (a test keeps the help equal)
                   help="evaluations --confirm may spend, resumes included (default: 400)")
    p.add_argument("--probe", action="store_true",
                   help="measure each mode's extent by intervention: move one parameter at a time from the mode's central "
                        "failure toward each end of its range and bisect to where the target passes")
    p.add_argument("--probe-budget", type=int, default=None, metavar="N",  # default: probe.DEFAULT_BUDGET (a test keeps the help equal)
                   help="evaluations --probe may spend, resumes included (default: 1000)")


def resume_hint(args: argparse.Namespace) -> str:
    if not args.confirm and not args.probe:
        return "explain.json is written whole or not at all: run the same command again."
    from searcher.studies import confirm, probe

    kept = " and ".join(str(Path(args.run) / m.FOLDER) for m, asked in ((confirm, args.confirm), (probe, args.probe)) if asked)
    return f"Every evaluation committed is kept in {kept}; the same command again evaluates only what is missing."


def run(args: argparse.Namespace) -> int:
    from searcher.analysis.explain import explain, share_text, write_explained
    from searcher.studies.confirm import confirmation_lines

    check_int("--min-failures", args.min_failures, 1)
    check_int("--depth", args.depth, 1, 10)
    for flag, budget, asked in (("confirm", args.confirm_budget, args.confirm), ("probe", args.probe_budget, args.probe)):
        if budget is not None and not asked:
            raise ParameterError(f"--{flag}-budget {budget} sets what --{flag} spends; add --{flag}, or leave it out.")
    progress = not args.json and sys.stderr.isatty()
    if args.confirm:
        from searcher.studies.confirm import confirm

        budget = {} if args.confirm_budget is None else {"budget": check_int("--confirm-budget", args.confirm_budget, 1)}
        modes = confirm(args.run, **budget, min_failures=args.min_failures, depth=args.depth, progress=progress)
    else:
        modes = explain(args.run, min_failures=args.min_failures, depth=args.depth)
    records = [m.to_dict() for m in modes]
    if args.probe:
        from searcher.studies.probe import probe

        budget = {} if args.probe_budget is None else {"budget": check_int("--probe-budget", args.probe_budget, 1)}
        probed = {m.fitted.mode: m.to_dict()["probe"] for m in probe(args.run, **budget, min_failures=args.min_failures,
                                                                     depth=args.depth, progress=progress)}
        records = [{**r, "probe": probed[r["mode"]]} for r in records]
    out = write_explained(args.run, records)
    if args.json:
        print(out.read_text(encoding="utf-8"), end="")
        return 0
    if not records:
        print(f"{args.run}: no failures, so no failure modes to explain")
    for r in records:
        print(f"mode {r['mode']}: {r['failures']} failures\n  {r['caption']}")
        if r["rule"] is not None:
            print(f"  precision {share_text(r['precision'])}  coverage {share_text(r['coverage'])}")
        for line in confirmation_lines(r) if args.confirm else ():
            print(f"  {line}")
        if args.probe and r["rule"] is not None:
            p = r["probe"]
            print(f"  measured by intervention ({p['evaluated']} renders): {p['caption']}\n"
                  f"    precision {share_text(p['precision'])}  coverage {share_text(p['coverage'])}" if "rule" in p
                  else f"  not measured: {p['skipped']}")
    print(f"-> {out}")
    return 0

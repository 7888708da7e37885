"""`searcher explain RUN`: each failure mode of a campaign in words, with its rule, precision and coverage;
with `--confirm`, each rule's attributes set back on the mode's failures and the fix rates against a control."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

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


def _interval(share: list[float] | None) -> str:
    return f"{share[0]:.0%} [{share[1]:.0%}, {share[2]:.0%}]" if share else "-"


def _confirmed(r: dict[str, Any]) -> list[str]:
    """The lines of one mode's confirmation: each attribute set back, then the control, then what was not set back."""
    lines = []
    for name, rate in (r.get("fix_rates") or {}).items():
        i = r["interventions"][name]
        left = [f"{n} {what} left out" for n, what in ((i["errors"], "target errors"), (i["excluded"], "ambiguous")) if n]
        how = f"{name.replace('_', ' ')} {'to' if i['control'] else 'back to'} {_value(i['value'])}"
        rest = f" ({i['evaluated']} re-rendered{', ' + ', '.join(left) if left else ''})"
        lines.append(f"  control {how}: {_interval(rate)}{rest}" if i["control"]
                     else f"  {how}: {_interval(rate)} of this mode's failures pass{rest}")
    reasons: dict[str, list[str]] = {}
    for name, why in (r.get("skipped") or {}).items():
        reasons.setdefault(why, []).append(name.replace("_", " "))
    lines += [f"  not set back, {', '.join(names)}: {why}" for why, names in reasons.items()]
    if r["rule"] is not None and not any(i["control"] for i in r["interventions"].values()):
        lines.append("  no control: every continuous parameter is in the rule or cannot be set back")
    return lines


def _value(value: Any) -> str:
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def resume_hint(args: argparse.Namespace) -> str:
    if not args.confirm:
        return "explain.json is written whole or not at all: run the same command again."
    from searcher.studies.confirm import FOLDER

    return (f"Every evaluation committed is kept in {Path(args.run) / FOLDER}; the same command again evaluates only "
            "what is missing.")


def run(args: argparse.Namespace) -> int:
    from searcher.analysis.explain import explain
    from searcher.report.page import write

    check_int("--min-failures", args.min_failures, 1)
    check_int("--depth", args.depth, 1, 10)
    if args.confirm_budget is not None and not args.confirm:
        raise ParameterError(f"--confirm-budget {args.confirm_budget} sets what --confirm spends; add --confirm, or leave it out.")
    if args.confirm:
        from searcher.studies.confirm import confirm

        budget = {} if args.confirm_budget is None else {"budget": check_int("--confirm-budget", args.confirm_budget, 1)}
        records = [m.to_dict() for m in confirm(args.run, **budget, min_failures=args.min_failures, depth=args.depth,
                                                progress=not args.json and sys.stderr.isatty())]
    else:
        records = [m.to_dict() for m in explain(args.run, min_failures=args.min_failures, depth=args.depth)]
    out = Path(args.run) / "explain.json"
    text = json.dumps(records, indent=1, ensure_ascii=False)
    write(text + "\n", out)
    if args.json:
        print(text)
        return 0
    if not records:
        print(f"{args.run}: no failures, so no failure modes to explain")
    for r in records:
        print(f"mode {r['mode']}: {r['failures']} failures\n  {r['caption']}")
        if r["rule"] is not None:
            print(f"  precision {_interval(r['precision'])}  coverage {_interval(r['coverage'])}")
        for line in _confirmed(r) if args.confirm else ():
            print(line)
    print(f"-> {out}")
    return 0

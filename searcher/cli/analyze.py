"""`searcher analyze DIR`: error rates by subgroup, effects and sensitivity of a campaign or transect directory."""

from __future__ import annotations

import argparse

from searcher.outputs import check_output_dir

HELP = "error rates by subgroup, effects and sensitivity of a campaign or transect directory"
DESCRIPTION = ("Failure rates per subgroup with Wilson intervals, logistic effects of the binned attributes with bootstrap "
               "errors and, for transects, treatment effects and sensitivity curves; CSV tables and PNG plots. Rates of an "
               "adaptive campaign come from its audit sample only (searcher hunt --audit F).")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("directory", metavar="DIR", help="a campaign directory (searcher hunt) or a transect directory (searcher transect)")
    p.add_argument("--out", help="output directory (default: DIR/analysis)")
    p.add_argument("--attributes", help="comma-separated attributes (default: demographics and pose for campaigns, "
                   "the manipulated attributes and their pairs for transects)")
    p.add_argument("--bins", type=int, default=3, help="quantile bins of numeric attributes (default: 3, tertiles)")
    p.add_argument("--boot", type=int, default=1000, help="bootstrap resamples of the logistic effects (default: 1000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default: 0)")
    p.add_argument("--biased", action="store_true",
                   help="adaptive campaigns: tables on every trial, searched ones included, not on the audit sample (*_biased files)")
    p.add_argument("--keep-pruned", action="store_true",
                   help="include pruned images: transects, and campaign images people rated likely fake (DIR/annotations.csv)")


def run(args: argparse.Namespace) -> int:
    from searcher.studies.analyze import analyze

    if args.out is not None:
        check_output_dir(args.out, command="searcher analyze")
    attributes = [a.strip() for a in args.attributes.split(",") if a.strip()] if args.attributes is not None else None
    result = analyze(args.directory, out=args.out, attributes=attributes, bins=args.bins, n_boot=args.boot, seed=args.seed,
                     biased=args.biased, keep_pruned=args.keep_pruned)
    print(result.summary())
    return 0

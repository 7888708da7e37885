"""`searcher report DIR`: one self-contained HTML page of a campaign, comparison, transect run, analysis,
export or retraining."""

from __future__ import annotations

import argparse

HELP = "one self-contained HTML report of a campaign, comparison, transect run, analysis, export or retraining directory"
DESCRIPTION = ("Writes DIR/report.html and prints its path: the configuration and a summary in words, failures against "
               "evaluations and the failure modes (in words, with fix rates, where `searcher explain` wrote "
               "DIR/explain.json), galleries of failures and successes (filter and sort them in the page), "
               "subgroup error rates and effects as `searcher analyze` finds them, transect grids and drift, for a "
               "comparison the table and figures per strategy; for an export its README, counts per label, failure mode "
               "and source and a gallery of its images; for a retraining the gains over the base, the scores and the "
               "subgroup errors (on a campaign's page too, where DIR/retrain holds one). Everything is inside the file "
               "(no CDN, no server); it reads the store only, so it can be built while a campaign runs.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("directory", metavar="DIR", help="a campaign (searcher hunt), comparison (searcher compare), transect run "
                   "(searcher transect), analysis (searcher analyze), export (searcher export) or retraining (searcher "
                   "retrain) directory")
    p.add_argument("--out", help="the HTML file, new or a regular file to replace (default: DIR/report.html)")
    p.add_argument("--max", type=int, default=400, help="at most this many images per gallery; over it, the most different "
                   "ones (in an export, its first ones; default: 400)")
    p.add_argument("--boot", type=int, default=200, help="bootstrap resamples of the logistic effects (default: 200)")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default: 0)")
    p.add_argument("--retrain", metavar="RETRAIN", help="a retraining directory (searcher retrain) to show on a campaign's page "
                   "(default: DIR/retrain when there)")


def run(args: argparse.Namespace) -> int:
    from searcher.report import report

    path = report(args.directory, out=args.out, limit=args.max, n_boot=args.boot, seed=args.seed, retrain=args.retrain)
    print(path.resolve())
    return 0

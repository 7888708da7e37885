"""`searcher doctor DIR`: what state a campaign directory is in (read-only), and what to do;
`--salvage OUT` copies what can be read of a damaged one into a new store."""

from __future__ import annotations

import argparse

HELP = ("check a campaign directory: damaged store, configuration and strategy states that do not parse, unreadable rows, "
        "missing images, unfinished batch, errors to retry; --salvage saves what can be read")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("campaign", metavar="DIR", help="a campaign directory")
    p.add_argument("--decode", action="store_true", help="also decode every image (slower)")
    p.add_argument("--salvage", metavar="OUT", help="copy the trials that read and parse, their images and the configuration "
                   "into a new store OUT (new or empty) that report, analyze and export read; it is not resumed")


def run(args: argparse.Namespace) -> int:
    from searcher.campaign.doctor import check_campaign, salvage

    if args.salvage is not None:
        print(salvage(args.campaign, args.salvage).summary())
        return 0
    checkup = check_campaign(args.campaign, decode=args.decode)
    print(checkup.summary())
    return 0 if checkup.ok else 1

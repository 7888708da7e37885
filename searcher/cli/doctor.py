"""`searcher doctor DIR`: what state a campaign directory is in (read-only), and what to do."""

from __future__ import annotations

import argparse

HELP = "check a campaign directory: damaged store, unreadable rows, missing images, unfinished batch, errors to retry"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("campaign", metavar="DIR", help="a campaign directory")
    p.add_argument("--decode", action="store_true", help="also decode every image (slower)")


def run(args: argparse.Namespace) -> int:
    from searcher.campaign.doctor import check_campaign

    checkup = check_campaign(args.campaign, decode=args.decode)
    print(checkup.summary())
    return 0 if checkup.ok else 1

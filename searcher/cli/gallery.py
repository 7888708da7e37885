"""`searcher gallery DIR`: a contact sheet of a campaign's failures."""

from __future__ import annotations

import argparse
from pathlib import Path

from searcher.errors import ParameterError
from searcher.outputs import check_output_file
from searcher.validation import check_int

HELP = "a contact sheet of a campaign's failures"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("campaign", help="a campaign directory")
    p.add_argument("--limit", type=int, default=48, help="at most this many failures (default: 48)")
    p.add_argument("--first", action="store_true", help="the first failures found, not the most different ones")
    p.add_argument("--out", help="PNG path, new or a regular file to replace (default: CAMPAIGN/failures.png)")


def run(args: argparse.Namespace) -> int:
    from searcher.figures.gallery import failure_gallery

    check_int("--limit", args.limit, 1)
    out = check_output_file(args.out or Path(args.campaign) / "failures.png")
    sheet = failure_gallery(args.campaign, limit=args.limit, diverse=not args.first)
    if sheet is None:
        print(f"{args.campaign}: no failures to show")
        return 0
    out = check_output_file(out)  # again: it may have changed while the gallery was drawn
    try:
        sheet.save(out)
    except OSError as exc:  # a read-only campaign directory, a full disk
        raise ParameterError(f"Cannot write the gallery to {out}: {exc.strerror or exc}. Choose another --out.") from None
    print(f"failure gallery -> {out}")
    return 0

"""`searcher annotate DIR --attributes A,B --annotator NAME`: a local page where a person rates a
run's images on the paper's scales; a thin shell over `searcher.annotate.serve`."""

from __future__ import annotations

import argparse

HELP = "rate a campaign's or transect run's images on the paper's scales, in a local page"
DESCRIPTION = ("Serve a rating page on this machine (the URL is printed): one image and one attribute at a time, on the "
               "attribute's scale from Balakrishnan et al. (Fig. 6). Number keys rate and go on, arrow keys and Backspace go "
               "back, U marks an image unrealistic. Every rating is appended to DIR/annotations.csv at once; run the command "
               "again to resume where you stopped. `searcher analyze` and `searcher transect` use these ratings.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("directory", metavar="DIR", help="a campaign directory (searcher hunt) or a transect directory (searcher transect)")
    p.add_argument("--attributes", required=True,
                   help="comma-separated attributes to rate, one after the other, e.g. skin_tone,gender_presentation,fakeness")
    p.add_argument("--annotator", required=True, help="your name as it goes into annotations.csv (letters, digits, _ . @ -)")
    p.add_argument("--host", default="127.0.0.1", help="a loopback address to listen on (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=8765, help="port to listen on; 0 picks a free one (default: 8765)")


def resume_hint(args: argparse.Namespace) -> str:
    return (f"Every rating is saved in {args.directory}/annotations.csv; the same command again resumes where "
            f"{args.annotator} stopped.")


def run(args: argparse.Namespace) -> int:
    from searcher.annotate import serve

    def ready(url: str) -> None:
        print(f"rating page for {args.annotator}: {url}\nratings go to {args.directory}/annotations.csv; Ctrl-C stops", flush=True)

    serve(args.directory, args.attributes, args.annotator, host=args.host, port=args.port, ready=ready)
    return 0

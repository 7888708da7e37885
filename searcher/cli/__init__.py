"""The `searcher` command line: one module per command, one table of commands (`COMMANDS`).

    searcher list                                   generators, targets and strategies you can use
    searcher params faces                           a generator's parameters, ranges and meaning
    searcher render --generator faces -n 64 --seed 0 --out sheet.png
    searcher hunt --generator faces --target dlib-cnn --strategy bo --budget 400 --out runs/bo
    searcher hunt --resume runs/bo                  continue a campaign that was stopped
    searcher compare --strategies random,bo --seeds 5 --out runs/cmp
    searcher bench --cases planted-d6-k5,ball-d6-k3-v1 --strategies random,bo --seeds 2 --out runs/bench
    searcher transect --target dlib-hog --out runs/transects
    searcher analyze runs/transects
    searcher verify -n 100 --out runs/verify
    searcher validate-generator faces-cvae -n 200 --out runs/validate
    searcher gallery runs/bo
    searcher explain runs/bo                        each failure mode in words: runs/bo/explain.json
    searcher annotate runs/transects --attributes skin_tone,fakeness --annotator alice
    searcher doctor runs/bo                         what state a campaign directory is in
    searcher export runs/bo --out hard --max 200 --spread --control random
    searcher retrain --target gender-cnn --seeds 3 --out runs/retrain
    searcher fix --target gender-cnn --out runs/fix    hunt, explain, confirm, retrain, report in one command; again to resume
    searcher report runs/bo                         one self-contained HTML page of a run: runs/bo/report.html
    searcher serve-target dlib-hog --port 8000       a local target over HTTP, for the `http` target
    searcher results --check                        run the cheap rows of docs/results.md again, flag a figure that moved

Each command module has `HELP` (and optionally `DESCRIPTION` and `resume_hint(args)`, printed
after Ctrl-C), `add_arguments(parser)` and `run(args) -> int`; `run` is a thin shell over a library call a Python user can make too (Optuna's
`cli.py` is the model). Only this package parses arguments and prints.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from searcher.errors import SearcherError

__all__ = ["COMMANDS", "build_parser", "main", "one_line"]

DESCRIPTION = """\
searcher hunts for the failures of image classifiers and face-analysis services.

A generator renders controllable synthetic faces; a target (a detector, a classifier or an
HTTP API) judges them. Start with `searcher list`, look at the faces with `searcher render`,
and see a generator's knobs with `searcher params faces`."""

#: command name -> module under `searcher.cli`, in the order `searcher --help` lists them.
COMMANDS: dict[str, str] = {
    "list": "listing",
    "params": "params",
    "render": "render",
    "serve-target": "serve_target",
    "hunt": "hunt",
    "compare": "compare",
    "bench": "bench",
    "transect": "transect",
    "verify": "verify",
    "validate-generator": "validate_generator",
    "analyze": "analyze",
    "gallery": "gallery",
    "explain": "explain",
    "annotate": "annotate",
    "doctor": "doctor",
    "export": "export",
    "retrain": "retrain",
    "fix": "fix",
    "report": "report",
    "results": "results",
}


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command, from `COMMANDS`."""
    parser = argparse.ArgumentParser(prog="searcher", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module_name in COMMANDS.items():
        module = importlib.import_module(f"searcher.cli.{module_name}")
        p = sub.add_parser(name, help=module.HELP, description=getattr(module, "DESCRIPTION", None) or module.HELP)
        module.add_arguments(p)
        p.set_defaults(func=module.run)
    return parser


def one_line(message: str) -> str:
    """`message` on one line: a control character a user typed into a value (a stray `\\r`, a tab,
    a newline in a path) shown escaped, as `repr` would, so an error is always one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs one command; a `SearcherError` is printed as one line and exits 2, Ctrl-C exits 130
    (during start-up too: the commands' modules import torch and friends, which takes seconds)."""
    try:
        parser = build_parser()
    except KeyboardInterrupt:
        print("searcher: interrupted while starting; nothing was run.", file=sys.stderr)
        return 130
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return args.func(args)
    except SearcherError as exc:
        print(f"searcher: error: {one_line(str(exc))}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `searcher params faces | head`: the reader left, nothing is wrong
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - replaces the closed stdout for the interpreter's exit flush
        return 0
    except KeyboardInterrupt:
        hint = getattr(sys.modules[args.func.__module__], "resume_hint", None)
        print(f"searcher: interrupted.{' ' + hint(args) if hint else ''}", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

"""`searcher params NAME`: a generator's parameters, ranges and meaning."""

from __future__ import annotations

import argparse

HELP = "show a generator's parameters: range, default and meaning"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("generator", help="a name from `searcher list`, e.g. faces")


def run(args: argparse.Namespace) -> int:
    import generators

    gen = generators.load(args.generator)
    print(f"{args.generator}: {gen!r}\n{gen.space.describe()}")
    return 0

"""`searcher list`: the generators, targets and strategies you can use."""

from __future__ import annotations

import argparse

HELP = "list the generators, targets and strategies you can use"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No arguments."""


def run(args: argparse.Namespace) -> int:
    import generators
    import targets
    from searcher.strategies import STRATEGIES

    for title, registry in (("generators", generators), ("targets", targets), ("strategies (searcher hunt --strategy)", STRATEGIES)):
        print(f"{title}:")
        for name, doc in registry.describe().items():
            print(f"  {name:<14} {doc}")
    return 0

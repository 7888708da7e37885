"""The `searcher` command line.

    searcher list                                   generators (and targets) you can use
    searcher params faces                           a generator's parameters, ranges and meaning
    searcher render --generator faces -n 64 --seed 0 --out sheet.png
    searcher render --set yaw=40 --set eyewear=sunglasses -n 16 --out turned.png
    searcher serve-target dlib-hog --port 8000       a local target over HTTP, for the `http` target
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from searcher.errors import SearcherError

__all__ = ["main"]

DESCRIPTION = """\
searcher hunts for the failures of image classifiers and face-analysis services.

A generator renders controllable synthetic faces; a target (a detector, a classifier or an
HTTP API) judges them. Start with `searcher list`, look at the faces with `searcher render`,
and see a generator's knobs with `searcher params faces`."""


def _parse_set(items: Sequence[str], flag: str = "--set") -> dict[str, Any]:
    """`name=value` pairs; numbers become floats, anything else stays a string."""
    out: dict[str, Any] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise SearcherError(f"{flag} expects name=value, got {item!r}.")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            out[name.strip()] = value.strip()
    return out


def _cmd_list(args: argparse.Namespace) -> int:
    import generators
    import targets

    print("generators:")
    for name, doc in generators.describe().items():
        print(f"  {name:<14} {doc}")
    print("targets:")
    for name, doc in targets.describe().items():
        print(f"  {name:<14} {doc}")
    return 0


def _cmd_params(args: argparse.Namespace) -> int:
    import generators

    gen = generators.load(args.generator)
    print(f"{args.generator}: {gen!r}\n{gen.space.describe()}")
    return 0


def _cmd_render(args: argparse.Namespace) -> int:
    import generators
    from searcher.contact_sheet import contact_sheet

    if args.n < 1:
        raise SearcherError(f"-n must be >= 1, got {args.n}.")
    gen = generators.load(args.generator, resolution=args.resolution)
    fixed = _parse_set(args.set)
    params = [{**p, **fixed} for p in gen.space.sample(args.n, seed=args.seed)]
    start = time.perf_counter()
    batch = gen.generate(params, seed=args.seed)
    elapsed = time.perf_counter() - start
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    contact_sheet(batch.images, batch.truth).save(out)
    if args.truth:
        batch.truth.to_csv(args.truth, index=False)
    print(f"rendered {len(batch)} faces in {elapsed:.2f}s -> {out}")
    return 0


def _cmd_serve_target(args: argparse.Namespace) -> int:
    from searcher.serve import Faults, serve

    faults = Faults(fail_rate=args.fail_rate, slow_rate=args.slow_rate, slow_seconds=args.slow_seconds,
                    malformed_rate=args.malformed_rate, sleep=args.sleep, seed=args.fault_seed)
    serve(args.target, _parse_set(args.option, "--option"), host=args.host, port=args.port, faults=faults)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="searcher", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("list", help="list the generators and targets you can use")
    p.set_defaults(func=_cmd_list)

    p = sub.add_parser("params", help="show a generator's parameters: range, default and meaning")
    p.add_argument("generator", help="a name from `searcher list`, e.g. faces")
    p.set_defaults(func=_cmd_params)

    p = sub.add_parser("render", help="render faces from a generator's default prior onto a labelled contact sheet")
    p.add_argument("--generator", default="faces", help="generator name (default: faces)")
    p.add_argument("-n", type=int, default=64, help="how many faces (default: 64)")
    p.add_argument("--seed", type=int, default=0, help="seed of the prior draw and of the rendering (default: 0)")
    p.add_argument("--resolution", type=int, default=128, help="image side in pixels, 64 to 256 (default: 128)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="hold a parameter fixed, e.g. --set yaw=30 (repeatable)")
    p.add_argument("--out", default="sheet.png", help="where to write the contact sheet PNG (default: sheet.png)")
    p.add_argument("--truth", metavar="CSV", help="also write the rendered attributes to this CSV")
    p.set_defaults(func=_cmd_render)

    p = sub.add_parser("serve-target", help="serve a local target over HTTP at POST /predict, in the contract the http target expects")
    p.add_argument("target", help="a target name from `searcher list`, e.g. dlib-hog")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1, this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port to bind (default: 8000)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="a target option, e.g. --option upsample=0 (repeatable)")
    p.add_argument("--fail-rate", type=float, default=0.0, metavar="F", help="fraction of requests answered 503 (default: 0)")
    p.add_argument("--slow-rate", type=float, default=0.0, metavar="F", help="fraction of requests answered --slow-seconds late (default: 0)")
    p.add_argument("--slow-seconds", type=float, default=15.0, metavar="S", help="delay of a slow answer, past the http target's default 10 s timeout (default: 15)")
    p.add_argument("--malformed-rate", type=float, default=0.0, metavar="F", help="fraction answered 200 with a truncated JSON body (default: 0)")
    p.add_argument("--fault-seed", type=int, default=0, help="seed of the fault draws (default: 0)")
    p.add_argument("--sleep", type=float, default=0.0, metavar="S", help="seconds every request waits, without blocking others (default: 0)")
    p.set_defaults(func=_cmd_serve_target)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return args.func(args)
    except SearcherError as exc:
        print(f"searcher: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

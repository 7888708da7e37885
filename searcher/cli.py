"""The `searcher` command line.

    searcher list                                   generators (and targets) you can use
    searcher params faces                           a generator's parameters, ranges and meaning
    searcher render --generator faces -n 64 --seed 0 --out sheet.png
    searcher render --set yaw=40 --set eyewear=sunglasses -n 16 --out turned.png
    searcher serve-target dlib-hog --port 8000       a local target over HTTP, for the `http` target
    searcher hunt --generator faces --target dlib-cnn --strategy bo --budget 400 --out runs/bo
    searcher hunt --resume runs/bo                  continue a campaign that was stopped
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from searcher.cli_args import assignments, number_list
from searcher.errors import SearcherError

__all__ = ["main"]

DESCRIPTION = """\
searcher hunts for the failures of image classifiers and face-analysis services.

A generator renders controllable synthetic faces; a target (a detector, a classifier or an
HTTP API) judges them. Start with `searcher list`, look at the faces with `searcher render`,
and see a generator's knobs with `searcher params faces`."""


def _cmd_list(args: argparse.Namespace) -> int:
    import generators
    import targets

    print("generators:")
    for name, doc in generators.describe().items():
        print(f"  {name:<14} {doc}")
    print("targets:")
    for name, doc in targets.describe().items():
        print(f"  {name:<14} {doc}")
    from searcher.strategies import STRATEGIES

    print("strategies (searcher hunt --strategy):")
    for name, (_, doc) in STRATEGIES.items():
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
    fixed = assignments(args.set)
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
    serve(args.target, assignments(args.option, "--option"), host=args.host, port=args.port, faults=faults)
    return 0


HUNT_KEYS = ("generator", "target", "strategy", "budget", "batch", "workers", "seed", "out", "alpha", "vary", "fix",
             "executor", "ray_address", "generator_options", "target_options", "strategy_options", "truth_column", "cut",
             "margin", "loss", "cube", "audit")


def _hunt_config(args: argparse.Namespace) -> dict[str, Any]:
    """Campaign keywords from a TOML file (same keys as the flags), overridden by explicit flags."""
    config: dict[str, Any] = {}
    if args.config:
        import tomllib

        try:
            config = tomllib.loads(Path(args.config).read_text())
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise SearcherError(f"Cannot read the config {args.config}: {exc}") from exc
        unknown = sorted(set(config) - set(HUNT_KEYS))
        if unknown:
            raise SearcherError(f"Unknown key(s) {unknown} in {args.config}. Valid keys: {', '.join(HUNT_KEYS)}.")
    flags = {
        "generator": args.generator, "target": args.target, "strategy": args.strategy, "budget": args.budget,
        "batch": args.batch, "workers": args.workers, "seed": args.seed, "out": args.out, "alpha": args.alpha,
        "vary": args.vary, "executor": args.executor, "ray_address": args.ray_address, "truth_column": args.truth_column,
        "cut": args.cut, "margin": args.margin, "loss": args.loss, "cube": args.cube, "audit": args.audit,
    }
    config.update({k: v for k, v in flags.items() if v is not None})
    for key, items, flag in (("fix", args.fix, "--fix"), ("target_options", args.option, "--option"),
                             ("generator_options", args.generator_option, "--generator-option"),
                             ("strategy_options", args.strategy_option, "--strategy-option")):
        if items:
            config[key] = {**config.get(key, {}), **assignments(items, flag)}
    return config


def _cmd_hunt(args: argparse.Namespace) -> int:
    from searcher.campaign import Campaign

    if args.resume:
        campaign = Campaign.from_dir(args.resume)
        print(f"resuming {args.resume}")
    else:
        campaign = Campaign(**_hunt_config(args))
    result = campaign.run(progress=not args.no_progress, resume=bool(args.resume))
    print(result.summary())
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from searcher.compare import compare

    seeds = list(range(int(args.seeds))) if args.seeds.isdigit() else number_list(args.seeds, int, "--seeds")
    alphas = number_list(args.alphas, float, "--alphas") if args.alphas else [None]
    table = compare(args.out, generator=args.generator, target=args.target, strategies=args.strategies.split(","),
                    seeds=seeds, alphas=alphas, budget=args.budget, batch=args.batch, parallel=args.parallel,
                    progress=not args.no_progress, fix=assignments(args.fix, "--fix"), target_options=assignments(args.option, "--option"))
    cols = [c for c in ("failures", "repeats", "failure_rate", "regions_found", "modes", "mean_pairwise") if c in table]
    print(table.groupby(["strategy", table["alpha"].fillna("-")])[cols].agg(["mean", "std"]).round(3).to_string())
    print(f"written: {args.out}/compare.csv, curves.csv, failures_vs_evaluations.png")
    return 0


def _cmd_gallery(args: argparse.Namespace) -> int:
    from searcher.gallery import failure_gallery

    sheet = failure_gallery(args.campaign, limit=args.limit, diverse=not args.first)
    if sheet is None:
        print(f"{args.campaign}: no failures to show")
        return 0
    out = Path(args.out or Path(args.campaign) / "failures.png")
    sheet.save(out)
    print(f"failure gallery -> {out}")
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

    p = sub.add_parser("hunt", help="search a generator + target for failures and record every evaluation",
                       description="Search a generator + target for failures (a campaign). Every flag can also come from "
                       "--config, a TOML file with the same keys (underscores for dashes); flags win.")
    p.add_argument("--config", metavar="TOML", help="campaign settings as TOML")
    p.add_argument("--resume", metavar="DIR", help="continue the campaign stored in DIR (other flags are ignored)")
    p.add_argument("--generator", help="generator name (default: faces)")
    p.add_argument("--target", help="target name (default: dlib-cnn)")
    p.add_argument("--strategy", help="random, sobol, bo (default), tpe or cmaes")
    p.add_argument("--budget", type=int, help="evaluations in all (default: 400)")
    p.add_argument("--batch", type=int, help="points proposed and evaluated together (default: 4)")
    p.add_argument("--workers", type=int, help="evaluation workers; more than one runs on Ray (default: 1)")
    p.add_argument("--seed", type=int, help="seed of the strategy and the rendering (default: 0)")
    p.add_argument("--out", help="campaign directory (default: runs/campaign)")
    p.add_argument("--alpha", type=float, help="weight of the diversity term, eq. (4) (default: 0.6)")
    p.add_argument("--vary", help="comma-separated parameters to search (default: all)")
    p.add_argument("--fix", action="append", default=[], metavar="NAME=VALUE", help="hold a parameter at a value (repeatable)")
    p.add_argument("--executor", choices=["local", "ray"], help="default: ray when --workers > 1")
    p.add_argument("--ray-address", help="join a running Ray cluster (e.g. auto, or ray://host:10001)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="a target option (repeatable)")
    p.add_argument("--generator-option", action="append", default=[], metavar="KEY=VALUE", help="a generator option (repeatable)")
    p.add_argument("--strategy-option", action="append", default=[], metavar="KEY=VALUE", help="a strategy option (repeatable)")
    p.add_argument("--truth-column", help="classify targets: the truth column their label is judged against")
    p.add_argument("--cut", type=float, help="classify targets: truth >= cut is the second label")
    p.add_argument("--margin", type=float, help="classify targets: truth this close to the cut is ambiguous (default: 0.1)")
    p.add_argument("--loss", choices=["zero-one", "score"], help="classify targets: 0/1 or 1 - p(true label)")
    p.add_argument("--cube", choices=["prior", "box"], help="search prior quantiles (default) or the raw parameter box")
    p.add_argument("--audit", type=float, metavar="F",
                   help="fraction of the budget drawn uniformly at random beside the search, for unbiased error rates (default: 0)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_hunt)

    p = sub.add_parser("compare", help="run strategies x seeds x alpha as campaigns and compare failures found and their breadth")
    p.add_argument("--generator", default="faces")
    p.add_argument("--target", default="dlib-cnn")
    p.add_argument("--strategies", default="random,bo", help="comma-separated (default: random,bo)")
    p.add_argument("--seeds", default="5", help="a count (5 -> seeds 0..4) or a comma-separated list (default: 5)")
    p.add_argument("--alphas", help="comma-separated alpha values for bo (default: its own, 0.6)")
    p.add_argument("--budget", type=int, default=400)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--parallel", type=int, default=1, help="campaigns at once, on Ray when > 1 (default: 1)")
    p.add_argument("--fix", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="a target option (repeatable)")
    p.add_argument("--out", default="runs/compare")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=_cmd_compare)

    from searcher.analyze import add_parser as add_analyze_parser
    from searcher.transect_cli import add_parser as add_transect_parser
    from searcher.verify_cli import add_parser as add_verify_parser

    add_transect_parser(sub)
    add_verify_parser(sub)
    add_analyze_parser(sub)

    p = sub.add_parser("gallery", help="a contact sheet of a campaign's failures")
    p.add_argument("campaign", help="a campaign directory")
    p.add_argument("--limit", type=int, default=48, help="at most this many failures (default: 48)")
    p.add_argument("--first", action="store_true", help="the first failures found, not the most different ones")
    p.add_argument("--out", help="PNG path (default: CAMPAIGN/failures.png)")
    p.set_defaults(func=_cmd_gallery)
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

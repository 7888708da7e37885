"""`searcher serve-target NAME`: a local target over HTTP, in the contract the `http` target expects."""

from __future__ import annotations

import argparse

from searcher.cli.args import assignments
from searcher.validation import check_int

HELP = "serve a local target over HTTP at POST /predict, in the contract the http target expects"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", help="a target name from `searcher list`, e.g. dlib-hog")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1, this machine only)")
    p.add_argument("--token", metavar="env:NAME", help="require Authorization: Bearer <value of NAME> on /predict "
                   "(required with a --host other than loopback)")
    p.add_argument("--port", type=int, default=8000, help="port to bind (default: 8000)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="a target option, e.g. --option upsample=0 (repeatable)")
    p.add_argument("--fail-rate", type=float, default=0.0, metavar="F", help="fraction of requests answered 503 (default: 0)")
    p.add_argument("--slow-rate", type=float, default=0.0, metavar="F", help="fraction of requests answered --slow-seconds late (default: 0)")
    p.add_argument("--slow-seconds", type=float, default=15.0, metavar="S",
                  help="delay of a slow answer, past the http target's default 10 s timeout (default: 15)")
    p.add_argument("--malformed-rate", type=float, default=0.0, metavar="F", help="fraction answered 200 with a truncated JSON body (default: 0)")
    p.add_argument("--fault-seed", type=int, default=0, help="seed of the fault draws (default: 0)")
    p.add_argument("--sleep", type=float, default=0.0, metavar="S", help="seconds every request waits, without blocking others (default: 0)")


def run(args: argparse.Namespace) -> int:
    from searcher.serve import Faults, resolve_token, serve

    check_int("--port", args.port, 0, 65535)
    resolve_token(args.token, args.host)  # refused before the model loads
    faults = Faults(fail_rate=args.fail_rate, slow_rate=args.slow_rate, slow_seconds=args.slow_seconds,
                    malformed_rate=args.malformed_rate, sleep=args.sleep, seed=args.fault_seed)
    auth = f"; /predict needs Authorization: Bearer ${args.token[4:]}" if args.token else ""
    print(f"serving {args.target} at http://{args.host}:{args.port}/predict (health: /health{auth}); Ctrl-C stops", flush=True)
    serve(args.target, assignments(args.option, "--option"), host=args.host, port=args.port, faults=faults, token=args.token)
    return 0

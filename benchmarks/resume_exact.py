"""A large campaign killed half-way and resumed equals the one never interrupted, trial for trial.

    python benchmarks/resume_exact.py                                     # 100,000 evaluations, killed at 50,000 (about 8 min)
    python benchmarks/resume_exact.py --budget 10000 --kill-at 5000       # a quick look

Runs `searcher hunt` of the planted target (1 ms an image, `--delay`) twice with the same seed, in
processes of their own: once to the end, and once killed with SIGKILL as soon as its store holds
`--kill-at` trials, then `searcher hunt --resume` to the end. It then reads both stores with
SQLite and compares every trial (step, index, point, parameters, loss, failure, truth, image kept,
who chose it) and every batch row, and prints how many differ, how many trials each holds, and the
seconds each run took. Exit status 1 if anything differs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

_TRIAL = "step, idx, x, params, loss, failure, truth, image, source, error"


def hunt(out: Path, args: argparse.Namespace, resume: bool = False) -> list[str]:
    """The `searcher hunt` command line of the benchmark's campaign in `out` (or its resume)."""
    if resume:
        return [sys.executable, "-m", "searcher.cli", "hunt", "--resume", str(out), "--no-progress"]
    return [sys.executable, "-m", "searcher.cli", "hunt", "--generator", "planted", "--target", "planted",
            "--strategy", args.strategy, "--budget", str(args.budget), "--batch", str(args.batch), "--seed", str(args.seed),
            "--images", str(args.images), "--option", f"delay={args.delay}", "--out", str(out), "--no-progress"]


def stored(out: Path) -> int:
    """How many trials the store in `out` holds now (0 before it exists or while it is being made)."""
    try:
        with sqlite3.connect(f"file:{out / 'campaign.sqlite'}?mode=ro", uri=True) as db:
            return db.execute("SELECT COUNT(*) FROM trials").fetchone()[0]
    except sqlite3.Error:
        return 0


def killed_at(out: Path, args: argparse.Namespace) -> int:
    """Runs the campaign until its store holds `--kill-at` trials, kills it with SIGKILL, and
    returns how many trials it held once killed."""
    proc = subprocess.Popen(hunt(out, args), stdout=subprocess.DEVNULL)
    while proc.poll() is None and stored(out) < args.kill_at:
        time.sleep(0.05)
    if proc.poll() is not None:
        raise SystemExit(f"The campaign ended before it held {args.kill_at} trials: nothing was killed.")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return stored(out)


def rows(out: Path, query: str) -> list[tuple]:
    with sqlite3.connect(f"file:{out / 'campaign.sqlite'}?mode=ro", uri=True) as db:
        return db.execute(query).fetchall()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budget", type=int, default=100_000)
    ap.add_argument("--kill-at", type=int, default=50_000, help="trials stored when the run is killed (default: 50,000)")
    ap.add_argument("--strategy", default="random")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--images", type=float, default=0.01, help="share of passing images kept (default: 0.01)")
    ap.add_argument("--delay", type=float, default=0.001, help="the target's seconds per image (default: 0.001)")
    ap.add_argument("--dir", type=Path, default=Path("runs/resume-exact"))
    args = ap.parse_args()
    shutil.rmtree(args.dir, ignore_errors=True)
    whole, cut = args.dir / "uninterrupted", args.dir / "killed"
    start = time.perf_counter()
    subprocess.run(hunt(whole, args), check=True, stdout=subprocess.DEVNULL)
    seconds_whole = time.perf_counter() - start
    start = time.perf_counter()
    at_kill = killed_at(cut, args)
    subprocess.run(hunt(cut, args, resume=True), check=True, stdout=subprocess.DEVNULL)
    seconds_cut = time.perf_counter() - start
    a, b = (rows(d, f"SELECT {_TRIAL} FROM trials ORDER BY step, idx") for d in (whole, cut))
    differ = sum(x != y for x, y in zip(a, b)) + abs(len(a) - len(b))
    steps_a, steps_b = (rows(d, "SELECT step, size, state FROM steps ORDER BY step") for d in (whole, cut))
    steps_differ = sum(x != y for x, y in zip(steps_a, steps_b)) + abs(len(steps_a) - len(steps_b))
    print(f"{args.strategy}, batch {args.batch}, {args.budget:,} evaluations, seed {args.seed}: killed with {at_kill:,} trials stored, "
          f"then resumed. Trials: {len(a):,} uninterrupted, {len(b):,} killed and resumed; {differ} differ. "
          f"Batches: {len(steps_a):,} and {len(steps_b):,}; {steps_differ} differ (strategy state included). "
          f"Seconds: {seconds_whole:.0f} uninterrupted, {seconds_cut:.0f} killed and resumed.")
    sys.exit(1 if differ or steps_differ else 0)


if __name__ == "__main__":
    main()

"""Where a face case's failures fall among its 16 failure modes, strategy by strategy: which modes a
search starves or floods against random search, and how much of random search's effective breadth
is the small number of failures it finds.

    python benchmarks/suite.py --cases faces-dlib-hog,faces-haar-smile --strategies random,bo-modes --seeds 3 --jobs 2 --out runs/bench
    python lab/mode_shares.py runs/bench                              # every campaign case under it
    python lab/mode_shares.py runs/bench --cases faces-dlib-hog --strategies random,bo-modes,tpe

Why: the suite's breadth check asks a strategy's effective modes (exp of the entropy of its
failures over the modes, per run) for 90% of the broadest strategy's, which on faces is random
search. Modes are the suite's own (`searcher.analysis.modes.mode_labels`: 16 Ward clusters of
the uniform strategies' failures, every failure joined to the nearest, a run of seed k on the
clusters of the other seeds' failures), so the per-run figures here are the suite's. Beside them,
each run scored on the clusters of every random failure, its own included, as the suite did
before: the difference is how much a random run gains from modes cut from its own failures. Per
case it prints each run's failures per mode and effective modes; per strategy, its failures pooled
over seeds as shares of each mode (on that one set of modes) beside random search's, and the
modes it starves (under half random's share) or floods (over twice); and what random search's
effective modes would be with as many failures as the strategy found (its pooled shares drawn
that many times, 200 draws, seeded): an effective number counted on few failures runs low, so
random search's per-run figure is partly its sample size.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from searcher.analysis.modes import N_MODES, mode_labels, one_hot_blocks
from searcher.analysis.modes import effective_breadth as effective
from searcher.bench.cases import select_cases
from searcher.campaign import load_campaign

DRAWS = 200


def counts_per_run(root: Path, case: str, strategies: list[str]) -> tuple[dict[tuple[str, int], np.ndarray], dict[tuple[str, int], np.ndarray]]:
    """Per (strategy, seed) campaign found under `root/case/runs`, its new failures per mode: on the
    suite's modes (cross-fitted by seed), and on one set of modes for every run (the clusters of
    every random failure, its own included), from one reading of the campaigns."""
    options = select_cases([case])[0].options
    runs_dir = root / case / "runs"
    jobs = sorted((p.name.rsplit("-s", 1)[0], int(p.name.rsplit("-s", 1)[1])) for p in runs_dir.iterdir() if "-s" in p.name)
    jobs = [(s, seed) for s, seed in jobs if not strategies or s in strategies]
    trials = [load_campaign(runs_dir / f"{s}-s{seed}").trials for s, seed in jobs]
    names, blocks = [s for s, _ in jobs], one_hot_blocks(options["generator"], options)

    def counts(seeds: list[int] | None) -> dict[tuple[str, int], np.ndarray]:
        return {job: np.bincount(lab[lab >= 0], minlength=N_MODES) for job, lab in zip(jobs, mode_labels(trials, names, N_MODES, blocks, seeds))}

    return counts([seed for _, seed in jobs]), counts(None)


def report(case: str, scored: dict[tuple[str, int], np.ndarray], pooled_modes: dict[tuple[str, int], np.ndarray], seed: int = 0) -> str:
    """The case's table, as text (module docstring). `scored`: the suite's counts (cross-fitted);
    `pooled_modes`: counts on one set of modes for every run (needed to pool runs of different seeds)."""
    lines = [f"== {case}", "run            failures  effective  | failures per mode (the suite's modes for the run's seed)"]
    for (s, k), c in scored.items():
        lines.append(f"{s + '-s' + str(k):14s} {c.sum():8d}  {effective(c):9.2f}  | " + " ".join(f"{v:3d}" for v in c))
    pooled: dict[str, np.ndarray] = {}
    for (s, _), c in pooled_modes.items():
        pooled[s] = pooled.get(s, 0) + c
    if "random" not in pooled or not pooled["random"].sum():
        return "\n".join(lines + ["(no random search failures: no reference shares)"])
    ref = pooled["random"] / pooled["random"].sum()
    rng = np.random.default_rng(seed)
    lines.append("on one set of modes (every random failure's clusters), pooled over seeds:")
    lines.append("strategy   per-run eff (suite's)  per-run eff (own modes)  pooled eff  random at its failures  "
                 "starved modes (share / random's)  |  flooded modes")
    for s, c in pooled.items():
        runs = [v for (t, _), v in scored.items() if t == s]
        share = c / max(c.sum(), 1)
        n = int(round(np.mean([v.sum() for v in runs])))
        at_n = np.mean([effective(rng.multinomial(n, ref)) for _ in range(DRAWS)]) if n else 0.0
        starved = [f"{m}: {share[m]:.3f}/{ref[m]:.3f}" for m in np.flatnonzero(share < 0.5 * ref)]
        flooded = [f"{m}: {share[m]:.3f}/{ref[m]:.3f}" for m in np.flatnonzero(share > 2.0 * ref)]
        own = np.mean([effective(v) for (t, _), v in pooled_modes.items() if t == s])
        lines.append(f"{s:10s} {np.mean([effective(v) for v in runs]):21.2f}  {own:23.2f}  {effective(c):10.2f}  {at_n:22.2f}  "
                     f"{', '.join(starved) or '-'}  |  {', '.join(flooded) or '-'}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path, help="a suite's --out folder (CASE/runs/STRATEGY-sSEED campaigns)")
    ap.add_argument("--cases", default="", help="comma-separated campaign cases (default: every one under root)")
    ap.add_argument("--strategies", default="", help="comma-separated strategies (default: every one found; random is the reference)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the resampling (default: 0)")
    args = ap.parse_args(argv)
    if not args.root.is_dir():
        ap.error(f"no folder {args.root}")
    cases = [c for c in args.cases.split(",") if c] or sorted(p.name for p in args.root.iterdir() if (p / "runs").is_dir())
    if not cases:
        ap.error(f"no campaign case (a CASE/runs folder) under {args.root}")
    strategies = [s for s in args.strategies.split(",") if s]
    if strategies and "random" not in strategies:
        strategies.append("random")
    for case in cases:
        print(report(case, *counts_per_run(args.root, case, strategies), args.seed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

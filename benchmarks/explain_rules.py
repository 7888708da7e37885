"""Do `explain`'s rules find the planted boxes? The bar of issue 70: the rule of every failure mode
with at least 10 failures overlaps its planted box with IoU >= 0.5, over the whole space (a
parameter the rule leaves open spans its full range, a categorical one counts its levels).

    python benchmarks/explain_rules.py --strategies bo-modes --budget 400   # the suite's boxes, bo-modes
    python benchmarks/explain_rules.py --strategies random --budget 1000    # the suite's boxes, random search
    python benchmarks/explain_rules.py --covered --strategies random --budget 1000
    python benchmarks/explain_rules.py --strategies bo-modes --budget 400 --probe 1   # the rules `explain --probe` measures

Cases: the suite's box cases (`searcher.bench.cases`), on which the rule learner was built, and the
same specifications with their regions placed afresh (`HELD_OUT`'s layouts), only reported. Random
search finds too few failures there for a mode of 10, and `bo-modes` walks lines through a box, so
`--covered` adds larger boxes that a random search of 1,000 fills (`COVERED`: layout 0 looked at,
layouts 2-4 held out). Each campaign runs by ask/tell without images, seed 0
(`searcher.bench.planted.ask_tell`, as the suite runs planted cases), its points kept in `--cache`;
its trials, modes (`mode_labels`, as `searcher report` cuts them) and rules (`explain_modes`) are the
command's. A mode's box is the planted region most of its failures lie in. Prints, per case and
strategy: failures, modes with >= 10 failures, how many reach IoU 0.5, the median and least IoU, the least
precision of a rule, and the seconds `explain_modes` took. `--probe STARTS` scores the rules measured
by intervention instead (`searcher.analysis.probe`, the algorithm of `searcher explain --probe`,
asking the planted answer directly), and counts the evaluations they cost.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from searcher.analysis.explain import explain_modes
from searcher.analysis.modes import mode_labels
from searcher.analysis.probe import Bisection, central
from searcher.bench.cases import HELD_OUT, SUITE, Case
from searcher.bench.planted import ask_tell
from searcher.objective import FAILURE
from searcher.strategies import make_strategy
from searcher.testing.planted import PlantedRegions

TUNE = ("planted-d6-k5", "box-d10-k8-v1", "box-d10-k3-v5-01", "box-d14-k3-v0.1", "box-d8-k6-v2-c3")
COVERED = ((4, 3, 0.2), (5, 3, 0.1), (6, 3, 0.1))  # (dim, k, volume): boxes a random search of 1,000 fills with modes of 10+ failures
COVERED_HELD_OUT = (2, 3, 4)  # their held-out layouts (layout 0 was looked at; 1 is skipped: it was looked at for one of them)


def covered(layouts: Sequence[int]) -> list[Case]:
    """The `COVERED` boxes at `layouts`, answered 0/1 (a layout that cannot place them is left out)."""
    from searcher.errors import ParameterError

    out = []
    for dim, k, volume in COVERED:
        for layout in layouts:
            case = Case.planted(f"box-d{dim}-k{k}-v{100 * volume:g}-l{layout}", dim, k, volume, layout=layout, score=False)
            try:
                case.regions()
            except ParameterError:
                continue
            out.append(case)
    return out


def iou(rule: Mapping[str, Sequence[Any]], regions: PlantedRegions, box: int) -> float:
    """IoU of a rule and planted box `box` over the whole space: every `x` the rule leaves open spans
    [0, 1]; with a categorical `c`, the rule's levels against the box's one level."""
    lo = np.array([rule.get(f"x{d}", (0.0, 1.0))[0] for d in range(regions.dim)], float)
    hi = np.array([rule.get(f"x{d}", (0.0, 1.0))[1] for d in range(regions.dim)], float)
    inter = float(np.prod(np.clip(np.minimum(hi, regions.upper[box]) - np.maximum(lo, regions.lower[box]), 0, None)))
    ours, theirs = float(np.prod(hi - lo)), float(np.prod(regions.upper[box] - regions.lower[box]))
    if regions.categories:
        levels = rule.get("c", [f"c{j}" for j in range(regions.categories)])
        inter *= (f"c{regions.levels[box]}" in levels) / regions.categories
        ours *= len(levels) / regions.categories
        theirs /= regions.categories
    return inter / (ours + theirs - inter)


def campaign(case: Case, strategy: str, budget: int, cache: Path, seed: int = 0) -> tuple[pd.DataFrame, PlantedRegions]:
    """A campaign of `strategy` on the planted `case` by ask/tell, as trials `explain_modes` reads;
    its points kept in `cache` so that a second call reads them instead of searching again."""
    regions = case.regions()
    space = regions.space
    kept = cache / f"{case.name}-{strategy}-{budget}-s{seed}.npy"
    if kept.is_file():
        X = np.load(kept)
    else:
        X, _ = ask_tell(make_strategy(strategy, space, seed=seed, budget=budget), lambda X: regions.loss(X, score=case.score), budget)
        cache.mkdir(parents=True, exist_ok=True)
        np.save(kept, X)
    rows = space.from_unit(X)
    trials = pd.DataFrame({"loss": regions.loss(X, score=case.score), "error": None, "excluded": None, "x": list(X),
                           **{f"param.{name}": [r[name] for r in rows] for name in space.names}})
    return trials, regions


def probed(rules: Sequence[Any], trials: pd.DataFrame, modes: np.ndarray, regions: PlantedRegions, starts: int) -> tuple[list[Any], int]:
    """The rules measured by intervention (`searcher.analysis.probe`), as `searcher explain --probe`
    measures them: from each ruled mode's `starts` most central failures, every parameter bisected
    toward each end against the planted answer. Returns the rules and the evaluations they cost."""
    space, X = regions.space, np.array(trials["x"].tolist(), float)
    params, given, cost = space.from_unit(X), {}, 0
    for m in rules:
        if m.rule is None:
            continue
        b = Bisection([params[i] for i in central(X, np.flatnonzero(modes == m.mode), starts)], space, space.names)
        while not b.done():
            rows = b.rows()
            cost += len(rows)
            b.tell(regions.loss(space.to_unit(rows)) >= FAILURE)
        given[m.mode] = b.rule()
    return explain_modes(trials, space, modes, given=given), cost


def score(case: Case, strategy: str, budget: int, cache: Path, starts: int = 0) -> dict[str, Any]:
    """One row of the table: the case's campaign, its modes' rules (probed from `starts` failures a
    mode when `starts` > 0) and their IoU with their boxes."""
    trials, regions = campaign(case, strategy, budget, cache)
    modes = mode_labels([trials], [strategy], blocks=regions.space.cube.blocks)[0]
    start = time.perf_counter()
    rules = explain_modes(trials, regions.space, modes)
    seconds = time.perf_counter() - start
    cost = 0
    if starts:
        rules, cost = probed(rules, trials, modes, regions, starts)
    region = regions.region_of(np.array(trials["x"].tolist()))
    ruled = [m for m in rules if m.rule is not None]
    ious = []
    for m in ruled:
        mine = region[modes == m.mode]
        ious.append(iou(m.rule, regions, int(np.bincount(mine[mine >= 0]).argmax())) if (mine >= 0).any() else 0.0)
    return {"case": case.name, "strategy": strategy, "failures": int((trials["loss"] >= FAILURE).sum()), "modes": len(ious),
            "iou>=0.5": sum(v >= 0.5 for v in ious), "median IoU": float(np.median(ious)) if ious else float("nan"),
            "min IoU": min(ious, default=float("nan")), "min precision": min((m.precision[0] for m in ruled), default=float("nan")),
            "explain s": seconds, **({"probe evaluations": cost} if starts else {})}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budget", type=int, default=1000, help="evaluations per campaign (default: 1000)")
    ap.add_argument("--strategies", default="random,bo-modes", help="comma-separated (default: random,bo-modes)")
    ap.add_argument("--cases", help="comma-separated names of the tuning cases to run (default: all of them)")
    ap.add_argument("--cache", type=Path, default=Path("runs/explain_rules"), help="where the campaigns' points are kept (default: runs/explain_rules)")
    ap.add_argument("--held-out", choices=("yes", "no", "only"), default="yes", help="run the held-out cases too, not, or only them")
    ap.add_argument("--covered", action="store_true", help="instead of the suite's boxes, the larger boxes of COVERED, random search only")
    ap.add_argument("--probe", type=int, default=0, metavar="STARTS",
                    help="score the rules `explain --probe` measures from STARTS failures a mode (default: 0, the rules read off the campaign)")
    args = ap.parse_args()
    if args.covered:
        tune, held = covered([0]), covered(COVERED_HELD_OUT)
    else:
        tune = [c for c in SUITE if c.name in (args.cases.split(",") if args.cases else TUNE)]
        held = [c for c in HELD_OUT if c.name.rsplit("-l", 1)[0] in {t.name for t in tune}]
    parts = {"yes": (("tune cases (layout 0, the suite's)", tune), ("held-out cases (regions placed afresh)", held)),
             "no": (("tune cases (layout 0, the suite's)", tune),), "only": (("held-out cases (regions placed afresh)", held),)}
    for title, cases in parts[args.held_out]:
        rows = [score(case, s, args.budget, args.cache, args.probe) for case in cases for s in args.strategies.split(",")]
        table = pd.DataFrame(rows)
        total, hit = int(table["modes"].sum()), int(table["iou>=0.5"].sum())
        print(f"\n{title}: {hit} of {total} modes with >= 10 failures reach IoU 0.5\n")
        print(table.to_string(index=False, float_format=lambda v: f"{v:.2f}"))


if __name__ == "__main__":
    main()

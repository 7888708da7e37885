"""How long `searcher.explain` takes on a 1,000-trial campaign (the goal: under 10 seconds, issue 70).

    python benchmarks/explain_speed.py                    # a 1,000-trial random campaign of the planted problem
    python benchmarks/explain_speed.py --campaign runs/g  # an existing campaign instead

The planted campaign (4 parameters, 3 boxes failing on 20% of the cube, so that its 16 failure modes
each hold enough failures for a rule) is built once in a temporary directory and not timed. Explain
is timed end to end as the command runs it (loading the store, the modes, one tree per mode),
best of three.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from searcher.analysis.explain import explain
from searcher.campaign import Campaign

PLANTED = {"dim": 4, "k": 3, "volume": 0.2}


def _time(run: Path) -> None:
    best, modes = float("inf"), []
    for _ in range(3):
        start = time.perf_counter()
        modes = explain(run)
        best = min(best, time.perf_counter() - start)
    ruled = sum(m.rule is not None for m in modes)
    print(f"explain {run}: {len(modes)} modes ({ruled} with a rule): {best:.2f} s (best of 3)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000, help="trials of the planted campaign (default: 1000)")
    ap.add_argument("--campaign", type=Path, help="time this campaign directory instead")
    args = ap.parse_args()
    if args.campaign:
        _time(args.campaign)
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "planted"
        Campaign(generator="planted", target="planted", strategy="random", budget=args.n, batch=250, seed=0, out=str(out),
                 generator_options=PLANTED, target_options=PLANTED).run(progress=False)
        _time(out)


if __name__ == "__main__":
    main()

"""How much the planted cases favour a search that starts at the cube's centre.

    python lab/planted_centre.py                 # every planted case of the suite
    python lab/planted_centre.py --sd 0.1,0.2 --points 100000

Why: a planted region has a fixed volume and lies wholly inside the unit cube. In 10-20
dimensions a box of 0.1-1% of the volume has sides of 0.5-0.7, so each side covers the middle
of its axis, and every region crowds around the centre. CMA-ES and CMA-ME start there (the
packages' habit, `start="centre"`), uniform and Sobol draws almost never come near it (their
distance to the centre concentrates around sqrt(dim / 12)). This prints, per case, the share of
points that fail and the regions they hit, for uniform points and for Gaussian points around the
centre (each coordinate `0.5 + sd * N(0, 1)`, clipped to the cube; the categorical level uniform).
A ratio well above 1 says the centre is a shortcut to the failures that no real target promises.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from searcher.bench import select_cases


def shares(cases: str, sds: list[float], points: int, seed: int) -> pd.DataFrame:
    """Per case: the failing share and regions hit of uniform points, and of Gaussian points around the centre per `sd`."""
    rows = []
    for case in select_cases(cases):
        regions = case.regions()
        rng = np.random.default_rng([seed, len(rows)])
        uniform = regions.space.cube.uniform(rng, points)
        row = {"case": case.name, "uniform": 100 * (regions.region_of(uniform) >= 0).mean()}
        for sd in sds:
            X = regions.space.cube.uniform(rng, points)  # the categorical level stays uniform
            X[:, : regions.dim] = np.clip(0.5 + sd * rng.standard_normal((points, regions.dim)), 0.0, 1.0)
            hit = regions.region_of(X)
            row[f"centre sd {sd:g}"] = 100 * (hit >= 0).mean()
            row[f"x uniform (sd {sd:g})"] = row[f"centre sd {sd:g}"] / max(row["uniform"], 1e-9)
            row[f"regions (sd {sd:g})"] = f"{len(np.unique(hit[hit >= 0]))} of {regions.k}"
        rows.append(row)
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default="planted", help="planted case names, or planted (every one)")
    parser.add_argument("--sd", default="0.2", help="comma-separated spreads of the Gaussian around the centre")
    parser.add_argument("--points", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    table = shares(args.cases, [float(s) for s in args.sd.split(",")], args.points, args.seed)
    print("Failing share of the points (%), uniform and around the centre:")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.2f}"))


if __name__ == "__main__":
    main()

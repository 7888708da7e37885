"""Can a campaign say how many failure modes it missed? Chao1's interval over a uniform sample,
scored against the planted cases' true region counts.

    pip install scikit-bio                              # Chao1 and its interval (EstimateS's equations)
    python lab/missing_modes.py                         # n = 100, 400, 1000, 4000 uniform points; under a minute

Issue 71 asks every campaign's summary for an estimate of the failure modes it has not found, with
an interval that holds the true count in at least 80% of planted campaigns: "Chao1 or similar over
the modes' counts among exploring or audit points". This script gives Chao1 its best chance. For
every planted case of the suite and of the held-out set, and 20 seeds, it draws `n` uniform points
(an audit sample, or a random search) and labels each failure with its **true** region, so no
clustering error enters; Chao1's bias-corrected estimate and its 95% log-normal interval
(`skbio.diversity.alpha.chao1_ci`) are then scored against the case's `k`. Beside it, a bound that
assumes no unseen mode is smaller than the smallest seen: the unseen failing volume is at most
`-ln(0.05) / n` (95%), so at most that divided by the smallest seen mode's share more modes.

What it says (docs/results.md#the-benchmark-suite): even with true labels, Chao1's interval holds
`k` in far fewer campaigns than the 80% asked, at every size. Uniform points hit the small regions
of the suite once or never, so the singletons and doubletons Chao1 reads are few, and modes no
point hit leave no trace at all. A count of missed modes is not estimable from a sample of a
campaign's size; the share of the space a uniform sample would have seen a mode in is.
"""

from __future__ import annotations

import argparse

import numpy as np

from searcher.bench.cases import HELD_OUT, SUITE

Z95 = 1.96


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,400,1000,4000", help="uniform sample sizes (default: 100,400,1000,4000)")
    parser.add_argument("--seeds", type=int, default=20, help="samples per case and size (default: 20)")
    args = parser.parse_args()
    try:
        from skbio.diversity.alpha import chao1_ci
    except ImportError:
        raise SystemExit("lab/missing_modes.py needs scikit-bio: pip install scikit-bio") from None
    cases = [c for c in (*SUITE, *HELD_OUT) if c.kind == "planted"]
    regions = [c.regions() for c in cases]
    print("| uniform points | Chao1's 95% interval holds k | the volume bound holds k (campaigns with a failure) | campaigns with a failure |")
    print("|---|---|---|---|")
    for n in (int(s) for s in args.sizes.split(",")):
        chao = bound = seen = total = 0
        for R in regions:
            for seed in range(args.seeds):
                region = R.region_of(R.space.cube.uniform(np.random.default_rng(seed), n))
                counts = np.bincount(region[region >= 0], minlength=R.k)
                counts = counts[counts > 0]
                total += 1
                if not len(counts):
                    continue  # no failure: Chao1 says 0 modes, which never holds k
                low, high = chao1_ci(counts, zscore=Z95)
                chao += low - 1e-9 <= R.k <= high + 1e-9
                seen += 1
                unseen_volume = -np.log(0.05) / n
                bound += len(counts) <= R.k <= len(counts) + np.floor(unseen_volume / (counts.min() / n))
        print(f"| {n} | {chao / total:.0%} | {bound / max(1, seen):.0%} | {seen / total:.0%} |")


if __name__ == "__main__":
    main()

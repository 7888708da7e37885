"""`searcher verify`: face verification bias per demographic group on rendered pseudo-identities,
a thin shell over `searcher.studies.verification.verify`.

    searcher verify --generator faces -n 100 --images 4 --out runs/verify
    searcher verify -n 200 --images 5 --vary yaw,age,smile --fmr 1e-3 --boot 1000 --out runs/verify200

Renders `-n` pseudo-identities (balanced over light/dark skin x masculine/feminine presentation)
with `--images` images each that differ in pose, age, expression and light, embeds them with a
verifier (`dlib-verify`), and compares genuine and within-group impostor pairs
(docs/papers.md#liang; see `searcher.studies.verification`).

Writes to `--out`: images.csv (one row per image; `found` False = no face, left out of every
pair), pairs.csv, rates.csv (per group at one global threshold set for an overall FMR of `--fmr`,
or `--fallback-fmr` with too few impostor pairs: FNMR with bootstrap bands over identities, FMR
with Wilson intervals, failures to enrol), curves.csv (FNMR and FMR per group and threshold),
roc.png (FNMR against FMR per group, log FMR axis), effects.csv (change of genuine-pair distance
per unit change of each varied attribute) and identities.png (the first identities, one row each).
"""

from __future__ import annotations

import argparse

from searcher.analysis.verification import N_GROUPS
from searcher.outputs import check_output_dir
from searcher.studies.verification import VARIATIONS
from searcher.validation import SEED_MAX, check_int, check_number

MAX_IDENTITIES = 100_000  # pseudo-identities one verification renders (-n): past this, days of rendering

HELP = "face verification error per demographic group on rendered pseudo-identities"
DESCRIPTION = ("Render pseudo-identities under varied pose, age, expression and light, embed them with a face verifier, and "
               "measure FNMR against FMR per group, FNMR per group at one global FMR threshold, and how much each varied "
               "attribute moves the identity distance (docs/papers.md#liang).")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--generator", default="faces", help="a generator with an identity parameter (default: faces)")
    p.add_argument("-n", type=int, default=100, help="pseudo-identities, balanced over 4 groups (default: 100); at least 8, and enough for "
                   "1,000 impostor pairs (the FMR 1e-2 fallback): 25 or more with --images 4, 47 with --images 2")
    p.add_argument("--images", type=int, default=4, help="images per identity, >= 2 (default: 4)")
    p.add_argument("--vary", default=",".join(VARIATIONS),
                   help=f"comma-separated attributes varied per image (default: {','.join(VARIATIONS)})")
    p.add_argument("--impostors", type=int, default=20_000, help="most within-group impostor pairs kept (default: 20000)")
    p.add_argument("--fmr", type=float, default=1e-3, help="overall FMR the global threshold is set for (default: 1e-3)")
    p.add_argument("--fallback-fmr", type=float, default=1e-2, help="FMR used when impostor pairs are too few (default: 1e-2)")
    p.add_argument("--boot", type=int, default=1000, help="bootstrap resamples of the FNMR bands (default: 1000)")
    p.add_argument("--target", default="dlib-verify", help="a verify target (default: dlib-verify)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="a target option (repeatable)")
    p.add_argument("--resolution", type=int, default=128, help="image side in pixels, 64 to 256 (default: 128)")
    p.add_argument("--batch-size", type=int, default=64, help="images rendered and embedded together (default: 64)")
    p.add_argument("--seed", type=int, default=0, help="seed of identities, variations, rendering and sampling (default: 0)")
    p.add_argument("--out", default="runs/verify", help="output directory (default: runs/verify)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    from searcher.cli.args import assignments
    from searcher.studies.verification import verify

    for flag, value, low, high in (("-n", args.n, 2 * N_GROUPS, MAX_IDENTITIES), ("--images", args.images, 2, None),
                                   ("--impostors", args.impostors, 1, None), ("--boot", args.boot, 0, None),
                                   ("--batch-size", args.batch_size, 1, None), ("--seed", args.seed, 0, SEED_MAX)):
        check_int(flag, value, low, high)
    for flag, value in (("--fmr", args.fmr), ("--fallback-fmr", args.fallback_fmr)):
        check_number(flag, value, 0.0, 1.0, open_low=True, open_high=True)
    check_output_dir(args.out, command="searcher verify")
    result = verify(args.out, args.generator, args.n, args.images, [v.strip() for v in args.vary.split(",") if v.strip()],
                    n_impostor=args.impostors, fmr=args.fmr, fallback_fmr=args.fallback_fmr, n_boot=args.boot, target=args.target,
                    target_options=assignments(args.option, "--option"), resolution=args.resolution, batch_size=args.batch_size,
                    seed=args.seed, progress=not args.no_progress)
    print(result.summary())
    return 0

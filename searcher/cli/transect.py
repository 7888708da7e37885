"""`searcher transect`: fit attribute hyperplanes, render transects, judge them with a target.

    searcher transect --target dlib-hog --out runs/transects
    searcher transect --attributes skin_tone,hair_length,gender_presentation --size 2x2x2 -n 200 \\
        --target gender-cnn --hold facial_hair --out runs/gender

A thin shell over `searcher.studies.transects.run_transects`, whose docstring says what is written.
"""

from __future__ import annotations

import argparse

from searcher.cli.args import assignments, number_assignments
from searcher.errors import ParameterError
from searcher.outputs import check_output_dir
from searcher.studies.transects import DEFAULT_ATTRIBUTES

HELP = "render transects along attribute hyperplanes and measure a target on them"
DESCRIPTION = ("Fit latent-to-attribute hyperplanes on annotated samples, render transects (grids of faces that differ along "
               "the chosen attributes only; Algorithms 1 and 2 of Balakrishnan et al.), judge every image with a target, and "
               "mark the images and transects the paper prunes.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--generator", default="faces-latent", help="a generator with a latent space (default: faces-latent)")
    p.add_argument("--attributes", default=",".join(DEFAULT_ATTRIBUTES),
                   help=f"comma-separated attributes, one per grid axis (default: {','.join(DEFAULT_ATTRIBUTES)})")
    p.add_argument("--size", default="2x2x2", help="grid size per axis, e.g. 2x2x2 or 5 (default: 2x2x2)")
    p.add_argument("-n", type=int, default=20, help="how many transects (default: 20)")
    p.add_argument("--target", required=True, help="a detect or classify target from `searcher list`, e.g. dlib-hog")
    p.add_argument("--out", default="runs/transects", help="output directory (default: runs/transects)")
    p.add_argument("--seed", type=int, default=0, help="seed of every draw: latents, annotators, rendering (default: 0)")
    p.add_argument("--no-orthogonalise", action="store_true", help="walk along the raw normals (no Algorithm 2)")
    p.add_argument("--fit-samples", type=int, default=2000, help="latents annotated to fit the hyperplanes (default: 2000)")
    p.add_argument("--fit-on", choices=["annotations", "truth"], default="annotations",
                   help="fit on simulated annotators' scores, or on the generator's truth (default: annotations)")
    p.add_argument("--annotators", type=int, default=5, help="simulated annotators per image and attribute (default: 5)")
    p.add_argument("--hold", default="",
                   help="comma-separated attributes also fitted and held fixed by orthogonalisation, e.g. facial_hair,age")
    p.add_argument("--steps", action="append", default=[], metavar="NAME=S",
                   help="decision values -S..S along NAME's axis, latent units (default 1.5; repeatable)")
    p.add_argument("--binary", action="append", default=[], metavar="NAME=CUT",
                   help="fit NAME with a linear SVM, binarised at CUT (repeatable)")
    p.add_argument("--ambiguous", action="append", default=[], metavar="NAME=LO:HI",
                   help="prune images whose score of NAME lies in [LO, HI] (default: the paper's ranges for manipulated attributes)")
    p.add_argument("--max-drift", action="append", default=[], metavar="NAME=R",
                   help="prune transects where held NAME's truth ranges over more than R (repeatable)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="a target option (repeatable)")
    p.add_argument("--truth-column", help="classify targets: the truth column their label is judged against")
    p.add_argument("--cut", type=float, help="classify targets: truth >= cut is the second label")
    p.add_argument("--resolution", type=int, default=128, help="image side in pixels, 64 to 256 (default: 128)")
    p.add_argument("--batch-size", type=int, default=64, help="images rendered and judged together (default: 64)")
    p.add_argument("--sheets", type=int, default=4, help="transects drawn as PNG contact sheets (default: 4)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def _ranges(items: list[str]) -> dict[str, tuple[float, float]]:
    """`NAME=LO:HI` items -> {name: (lo, hi)}."""
    out = {}
    for name, value in assignments(items, "--ambiguous").items():
        low, _, high = str(value).partition(":")
        try:
            out[name] = (float(low), float(high))
        except ValueError:
            raise ParameterError(f"--ambiguous {name}= expects LO:HI, e.g. 0.4:0.6. Got {value!r} instead.") from None
    return out


def run(args: argparse.Namespace) -> int:
    from searcher.studies.transects import run_transects

    check_output_dir(args.out, command="searcher transect")
    attributes = [a.strip() for a in args.attributes.split(",") if a.strip()]
    result = run_transects(
        args.target, generator=args.generator, attributes=attributes, size=args.size, n=args.n,
        out=args.out, seed=args.seed, orthogonalise=not args.no_orthogonalise, fit_samples=args.fit_samples, fit_on=args.fit_on,
        annotators=args.annotators, hold=[a.strip() for a in args.hold.split(",") if a.strip()],
        steps=number_assignments(args.steps, "--steps"), binary=number_assignments(args.binary, "--binary"),
        ambiguous=_ranges(args.ambiguous), max_drift=number_assignments(args.max_drift, "--max-drift"),
        target_options=assignments(args.option, "--option"), truth_column=args.truth_column, cut=args.cut,
        resolution=args.resolution, batch_size=args.batch_size, sheets=args.sheets, progress=not args.no_progress,
    )
    print(result.summary())
    return 0

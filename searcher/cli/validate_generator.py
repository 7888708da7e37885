"""`searcher validate-generator`: how well a learned generator renders what it is asked for, a thin
shell over `searcher.studies.generator_quality.validate_generator`.

    searcher validate-generator faces-cvae -n 200 --out runs/validate
    searcher validate-generator checkpoint --generator-option spec=my_gan.toml --judge gender=my-gender-api -n 100

For every combination of the generator's conditions, `-n` samples with z from the prior: how
often a classifier trained on real data reads the asked condition (the spec's judge, or a
`--judge CONDITION=TARGET`), how often each `--detectors` finds a face, the Frechet distance of
dlib face descriptors to reference images of the condition (with the distance between two
reference samples as its floor, and that of a reference sample encoded and drawn again: the
decoder's own distance, with the prior out of the way, and that of a reference sample blurred:
what the descriptor makes of the same damage in each group), and the encoder's reconstruction. Writes validation.csv,
validation.md and a contact sheet per combination to `--out`.
"""

from __future__ import annotations

import argparse

from searcher.outputs import check_output_dir

HELP = "validate a learned generator: conditioning accuracy, detection rate, Frechet distance, reconstruction"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("generator", help="a generator name, e.g. faces-cvae, or checkpoint with --generator-option spec=...")
    p.add_argument("--generator-option", action="append", default=[], metavar="KEY=VALUE", help="a generator option (repeatable)")
    p.add_argument("-n", type=int, default=100, help="samples per combination of conditions (default: 100)")
    p.add_argument("--seed", type=int, default=0, help="seed of the latent draws and the reference renders (default: 0)")
    p.add_argument("--detectors", default="dlib-cnn", help="comma-separated detect targets (default: dlib-cnn)")
    p.add_argument("--judge", action="append", default=[], metavar="CONDITION=TARGET",
                   help="a classify target whose labels are a condition's categories reads that condition (repeatable)")
    p.add_argument("--no-descriptor", action="store_true", help="skip the Frechet distance (dlib-verify's descriptors)")
    p.add_argument("--out", default="runs/validate", help="output directory (default: runs/validate)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    import generators
    import targets
    from searcher.cli.args import assignments
    from searcher.studies.generator_quality import validate_generator
    from searcher.validation import SEED_MAX, check_int, check_names

    check_int("-n", args.n, 1)
    check_int("--seed", args.seed, 0, SEED_MAX)
    check_output_dir(args.out, command="searcher validate-generator")
    gen = generators.load(args.generator, **assignments(args.generator_option, "--generator-option"))
    detectors = check_names(args.detectors, targets.available(), what="target", flag="--detectors")
    progress = None
    if not args.no_progress:
        from tqdm import tqdm

        def progress(items):
            return tqdm(items, desc=f"validating {args.generator}", unit="combination")

    result = validate_generator(gen, n=args.n, seed=args.seed, detectors=detectors, judges=assignments(args.judge, "--judge"),
                                descriptor=None if args.no_descriptor else "dlib-verify", progress=progress)
    result.generator = args.generator
    paths = result.write(args.out)  # --out was checked before the validation ran
    print(result.markdown())
    print(f"\nwrote {', '.join(str(p) for p in paths[:2])} and {len(paths) - 2} contact sheets")
    return 0

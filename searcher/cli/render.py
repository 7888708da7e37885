"""`searcher render`: faces from a generator's default prior on a captioned contact sheet."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from searcher.cli.args import assignments
from searcher.errors import ParameterError
from searcher.outputs import check_output_file
from searcher.validation import check_int

MAX_SHEET = 10_000  # faces on one contact sheet: past this the sheet is no longer an image anyone opens
HELP = "render faces from a generator's default prior onto a labelled contact sheet"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--generator", default="faces", help="generator name (default: faces)")
    p.add_argument("-n", type=int, default=64, help="how many faces (default: 64)")
    p.add_argument("--seed", type=int, default=0, help="seed of the prior draw and of the rendering (default: 0)")
    p.add_argument("--resolution", type=int, help="image side in pixels, 64 to 256 (default: the generator's, 128 for faces)")
    p.add_argument("--generator-option", action="append", default=[], metavar="KEY=VALUE",
                   help="a generator option, e.g. spec=my_gan.toml for checkpoint (repeatable)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="hold a parameter fixed, e.g. --set yaw=30 (repeatable)")
    p.add_argument("--out", default="sheet.png", help="where to write the contact sheet PNG (default: sheet.png)")
    p.add_argument("--truth", metavar="CSV", help="also write the rendered attributes to this CSV")


def run(args: argparse.Namespace) -> int:
    import generators
    from searcher.figures.contact_sheet import contact_sheet

    check_int("-n", args.n, 1, MAX_SHEET)
    check_int("--seed", args.seed, 0)
    out = check_output_file(args.out)
    _check_image_suffix(out)
    if args.truth:
        check_output_file(args.truth, flag="--truth")
    options = assignments(args.generator_option, "--generator-option")
    if args.resolution is not None:
        options["resolution"] = args.resolution
    gen = generators.load(args.generator, **options)
    fixed = assignments(args.set)
    params = [{**p, **fixed} for p in gen.space.sample(args.n, seed=args.seed)]
    start = time.perf_counter()
    batch = gen.generate(params, seed=args.seed)
    elapsed = time.perf_counter() - start
    out.parent.mkdir(parents=True, exist_ok=True)
    contact_sheet(batch.images, batch.truth, caption=generators.vocabulary(args.generator).caption).save(out)
    if args.truth:
        Path(args.truth).parent.mkdir(parents=True, exist_ok=True)
        batch.truth.to_csv(args.truth, index=False)
    print(f"rendered {len(batch)} faces in {elapsed:.2f}s -> {out}")
    return 0


def _check_image_suffix(out: Path) -> None:
    """Refuses, before rendering, an --out whose extension names no image format PIL writes."""
    from PIL import Image

    if out.suffix.lower() not in Image.registered_extensions():
        raise ParameterError(f"--out must end in an image extension such as .png or .jpg. Got {str(out)!r} instead.")

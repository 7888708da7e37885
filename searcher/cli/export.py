"""`searcher export DIR --out EXPORT`: hard examples in formats training pipelines read."""

from __future__ import annotations

import argparse

HELP = "export hard examples (failures, near-boundary images) for retraining"
DESCRIPTION = ("Writes the failures of a campaign, a comparison or a transect run, with their right labels, what the target "
               "answered, their failure modes, training weights, parameters and truth, as a Hugging Face / torchvision "
               "ImageFolder (default), one parquet file, or COCO boxes (detect targets); a README.md inside says where they "
               "came from. --control random writes as many random images beside it, for the retraining control; "
               "--balance-labels adds images of the under-represented label from the campaign's own trials.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("directory", metavar="DIR", help="a campaign, comparison or transect directory")
    p.add_argument("--out", required=True, help="the export directory (written whole, or not at all)")
    p.add_argument("--format", default="imagefolder", help="imagefolder, parquet or coco (detect targets) (default: imagefolder)")
    p.add_argument("--select", default="failures", help="failures, all or near-boundary (default: failures)")
    p.add_argument("--max", type=int, default=None, help="at most this many images (default: all selected)")
    p.add_argument("--spread", action="store_true", help="with --max: spread the images over the failure modes, not the first found")
    p.add_argument("--control", default=None, help="random: also write as many random images, labelled the same way, to OUT-control")
    p.add_argument("--band", type=float, default=0.1, help="near-boundary: |P(right label) - 0.5| <= BAND (default: 0.1)")
    p.add_argument("--balance-labels", action="store_true", help="classify targets: add, for each image of the commonest "
                   "label, the nearest judged trial of the other label (in the searched cube, each once) until the labels "
                   "are balanced; after --max, so the set can hold up to twice --max")
    p.add_argument("--recipe", default=None, help="instead of --select, a retraining set of --max images (default: as many as "
                   "the failures) built from the campaign's failures and causes, as `searcher retrain` adds it: balanced-hard, "
                   "twins, crossed, crossed-draws or decorrelated")
    p.add_argument("--seed", type=int, default=0, help="seed of the control draw and of a recipe's draws (default: 0)")
    p.add_argument("--overwrite", action="store_true", help="replace an earlier export at --out (never a campaign, the source, "
                   "the working directory or an ancestor of one of them)")


def run(args: argparse.Namespace) -> int:
    from searcher.export import export

    result = export(args.directory, args.out, fmt=args.format, selection=args.select, limit=args.max, spread=args.spread,
                    control=args.control, band=args.band, overwrite=args.overwrite, seed=args.seed,
                    balance_labels=args.balance_labels, recipe=args.recipe)
    print(result.summary())
    return 0

"""`searcher verify`: face verification bias per demographic group on rendered pseudo-identities.

    searcher verify --generator faces -n 100 --images 4 --out runs/verify
    searcher verify -n 200 --images 5 --vary yaw,age,smile --fmr 1e-3 --boot 1000 --out runs/verify200

Renders `-n` pseudo-identities (balanced over light/dark skin x masculine/feminine presentation)
with `--images` images each that differ in pose, age, expression and light, embeds them with a
verifier (`dlib-verify`), and compares genuine and within-group impostor pairs
(004_99dde84edfbe8adb.txt; see `searcher.verification`).

Writes to `--out`: images.csv (one row per image; `found` False = no face, left out of every
pair), pairs.csv, rates.csv (per group at one global threshold set for an overall FMR of `--fmr`,
or `--fallback-fmr` with too few impostor pairs: FNMR with bootstrap bands over identities, FMR
with Wilson intervals, failures to enrol), curves.csv (FNMR and FMR per group and threshold),
roc.png (FNMR against FMR per group, log FMR axis), effects.csv (change of genuine-pair distance
per unit change of each varied attribute) and identities.png (the first identities, one row each).
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path
from typing import Any

from searcher.errors import ParameterError

__all__ = ["add_parser", "cmd_verify"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Adds the `verify` command to a `build_parser()`'s subparsers; returns its parser."""
    from searcher.verification import VARIATIONS

    p = subparsers.add_parser(
        "verify", help="face verification error per demographic group on rendered pseudo-identities",
        description="Render pseudo-identities under varied pose, age, expression and light, embed them with a face "
        "verifier, and measure FNMR against FMR per group, FNMR per group at one global FMR threshold, and how much "
        "each varied attribute moves the identity distance (004_99dde84edfbe8adb.txt).",
    )
    p.add_argument("--generator", default="faces", help="a generator with an identity parameter (default: faces)")
    p.add_argument("-n", type=int, default=100, help="pseudo-identities, >= 8, balanced over 4 groups (default: 100)")
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
    p.set_defaults(func=cmd_verify)
    return p


def _check(args: argparse.Namespace) -> None:
    """Refuses bad arguments before anything is rendered, naming the value and the valid range."""
    from searcher.verification import impostor_capacity

    for flag, value, low in (("-n", args.n, 8), ("--images", args.images, 2), ("--impostors", args.impostors, 1),
                             ("--boot", args.boot, 0), ("--batch-size", args.batch_size, 1)):
        if value < low:
            raise ParameterError(f"{flag} must be an integer >= {low}. Got {value} instead.")
    for flag, value in (("--fmr", args.fmr), ("--fallback-fmr", args.fallback_fmr)):
        if not 0 < value < 1:
            raise ParameterError(f"{flag} must be a number in (0, 1), e.g. 1e-3. Got {value!r} instead.")
    pairs = min(impostor_capacity(args.n, args.images), args.impostors)
    need = math.ceil(10 / max(args.fmr, args.fallback_fmr))
    if pairs < need:
        raise ParameterError(f"-n {args.n} x --images {args.images} (--impostors {args.impostors}) give at most {pairs} "
                             f"impostor pairs; an FMR of {max(args.fmr, args.fallback_fmr):g} needs {need}. "
                             "Raise -n or --images.")


def cmd_verify(args: argparse.Namespace) -> int:
    """Runs `searcher verify` (see the module docstring); returns the exit status."""
    import numpy as np

    from searcher.cli_args import assignments
    from searcher.contact_sheet import contact_sheet
    from searcher.verification import analyze_pairs, plot_curves, render_pairs

    _check(args)
    start = time.perf_counter()
    vary = [v.strip() for v in args.vary.split(",") if v.strip()]
    vs = render_pairs(args.generator, args.n, args.images, vary, n_impostor=args.impostors, target=args.target,
                      target_options=assignments(args.option, "--option"), resolution=args.resolution,
                      batch_size=args.batch_size, seed=args.seed, progress=not args.no_progress)
    try:
        report = analyze_pairs(vs.pairs, vs.images, fmr=args.fmr, fallback_fmr=args.fallback_fmr, n_boot=args.boot,
                               seed=args.seed)
    except ValueError as exc:  # too few impostor pairs after failures to enrol, or a group without genuine pairs
        raise ParameterError(f"{exc} Raise -n or --images.") from exc
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    vs.images.to_csv(out / "images.csv", index=False)
    vs.pairs.to_csv(out / "pairs.csv", index=False)
    report.rates.to_csv(out / "rates.csv")
    report.curves.to_csv(out / "curves.csv", index=False)
    report.effects.to_csv(out / "effects.csv")
    plot_curves(report.curves, report.threshold, out / "roc.png")
    shown = vs.images.loc[list(vs.examples)].sort_values(["group", "slot"])  # one identity per group, a row each
    labels = [[r.group, "" if r.found else "NO FACE"] for r in shown.itertuples()]
    contact_sheet(np.stack([vs.examples[i] for i in shown.index]), labels=labels, columns=args.images).save(out / "identities.png")

    thr, rates = report.threshold, report.rates
    lost = vs.images[~vs.images["found"]]
    print(f"{len(vs.images)} images of {args.n} identities in {time.perf_counter() - start:.0f}s; no face found in "
          f"{len(lost)} (failures to enrol, left out of every pair)")
    print(f"{int(vs.pairs['same'].sum())} genuine and {int((vs.pairs['same'] == 0).sum())} impostor pairs; mean distance "
          + ", ".join(f"{name} {vs.pairs.loc[vs.pairs['same'] == s, 'distance'].mean():.3f}" for name, s in (("genuine", 1), ("impostor", 0))))
    fell = f" (too few impostor pairs for {thr.fmr_requested:g})" if thr.fell_back else ""
    print(f"global threshold {thr.threshold:.4f} for FMR {thr.fmr:g}{fell}; achieved {thr.fmr_achieved:.2g}")
    for g, r in rates.iterrows():
        print(f"  {g:<16} FNMR {r['fnmr']:.3f} [{r['fnmr_low']:.3f}, {r['fnmr_high']:.3f}]  FMR {r['fmr']:.4f} "
              f"[{r['fmr_low']:.4f}, {r['fmr_high']:.4f}]  no face {int(r['no_face'])}/{int(r['images'])}")
    eff = report.effects
    print("distance per unit change (genuine pairs): " + ", ".join(
        f"{a[2:]} {c:+.2g}±{s:.1g}" for a, c, s in zip(eff.index, eff["coef"], eff["std"])))
    print(f"wrote {out}/images.csv, pairs.csv, rates.csv, curves.csv, roc.png, effects.csv, identities.png")
    return 0


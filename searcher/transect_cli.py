"""`searcher transect`: fit attribute hyperplanes, render transects, judge them with a target.

    searcher transect --target dlib-hog --out runs/transects
    searcher transect --attributes skin_tone,hair_length,gender_presentation --size 2x2x2 -n 200 \\
        --target gender-cnn --hold facial_hair --out runs/gender

Steps (000_086d20e137b04667.txt, Sec. 4-5): sample `--fit-samples` latents, annotate them (simulated
annotators, or the generator's truth with `--fit-on truth`), fit one hyperplane per attribute,
build `-n` transects of `--size` around projected base points (Algorithms 1 and 2), render them,
run the target on every image, annotate the transect images, and mark what the paper prunes:
images rated likely fake or lying in an ambiguous range, and transects whose held attributes drifted.

Writes to `--out`: transects.csv (one row per image), hyperplanes.csv, drift.csv, axis_drift.csv,
pruning.csv, annotations.csv (the transect images' simulated ratings, in the import format),
latents.npy (row `image` of transects.csv) and transect_000.png .. (the first `--sheets` transects).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from searcher.cli_args import assignments, name_list, number_assignments
from searcher.errors import ParameterError

__all__ = ["add_parser", "cmd_transect"]

DEFAULT_ATTRIBUTES = "skin_tone,hair_length,gender_presentation"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Adds the `transect` command to a `build_parser()`'s subparsers; returns its parser."""
    p = subparsers.add_parser(
        "transect", help="render transects along attribute hyperplanes and measure a target on them",
        description="Fit latent-to-attribute hyperplanes on annotated samples, render transects (grids of faces that "
        "differ along the chosen attributes only; Algorithms 1 and 2 of Balakrishnan et al.), judge every image with "
        "a target, and mark the images and transects the paper prunes.",
    )
    p.add_argument("--generator", default="faces-latent", help="a generator with a latent space (default: faces-latent)")
    p.add_argument("--attributes", default=DEFAULT_ATTRIBUTES,
                   help=f"comma-separated attributes, one per grid axis (default: {DEFAULT_ATTRIBUTES})")
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
    p.set_defaults(func=cmd_transect)
    return p


def _parse_size(text: str, k: int) -> tuple[int, ...]:
    """`"2x2x2"` -> (2, 2, 2); one positive integer per attribute."""
    parts = text.lower().replace("×", "x").split("x")
    try:
        size = tuple(int(p) for p in parts)
    except ValueError:
        size = ()
    if len(size) != k or any(s < 1 for s in size):
        raise ParameterError(
            f"--size must be {k} positive integers joined by 'x' (one per attribute), e.g. {'x'.join(['2'] * k)}. Got {text!r} instead."
        )
    return size


def _judge(target: Any, labels: list, truth: Any, column: str | None, cut: float | None) -> np.ndarray:
    """Per-image error (1 wrong, 0 right): a missed face for detect targets; for classify
    targets a label other than the truth's (`column` >= `cut` is `labels[1]`)."""
    if target.task == "detect":
        return 1.0 - np.asarray(labels, bool)
    expected = np.where(truth[column].to_numpy(float) >= cut, target.labels[1], target.labels[0])
    return (np.asarray(labels, object) != expected).astype(float)


def cmd_transect(args: argparse.Namespace) -> int:
    """Runs `searcher transect` (see the module docstring); returns the exit status."""
    import pandas as pd
    from tqdm import tqdm

    import generators
    import targets
    from searcher import annotations as ann
    from searcher import transects as tr
    from searcher.contact_sheet import contact_sheet

    valid = [a for a in ann.SCALES if a != "fakeness"]
    attributes = name_list(args.attributes, valid, "--attributes")
    if not attributes:
        raise ParameterError(f"--attributes needs at least one attribute. Valid attributes: {', '.join(valid)}.")
    hold = [a for a in name_list(args.hold, valid, "--hold") if a not in attributes]
    size = _parse_size(args.size, len(attributes))
    steps = number_assignments(args.steps, "--steps")
    binary = number_assignments(args.binary, "--binary")
    max_drift = number_assignments(args.max_drift, "--max-drift")
    ambiguous = {a: r for a, r in ann.PAPER_AMBIGUOUS.items() if a in attributes}
    for name, value in assignments(args.ambiguous, "--ambiguous").items():
        low, _, high = str(value).partition(":")
        try:
            ambiguous[name] = (float(low), float(high))
        except ValueError:
            raise ParameterError(f"--ambiguous {name}= expects LO:HI, e.g. 0.4:0.6. Got {value!r} instead.") from None
    fitted = attributes + hold
    for flag, names, allowed in (("--steps", steps, attributes), ("--binary", binary, fitted), ("--ambiguous", ambiguous, valid),
                                 ("--max-drift", max_drift, [a for a in valid if a not in attributes])):
        name_list(",".join(names), allowed, flag)
    for flag, value, low in (("-n", args.n, 1), ("--fit-samples", args.fit_samples, 10), ("--annotators", args.annotators, 1),
                             ("--batch-size", args.batch_size, 1), ("--sheets", args.sheets, 0)):
        if value < low:
            raise ParameterError(f"{flag} must be an integer >= {low}. Got {value} instead.")

    gen = generators.load(args.generator, resolution=args.resolution)
    if not callable(getattr(gen, "from_latent", None)):
        raise ParameterError(f"Transects walk a latent space; {args.generator!r} has none. Use a latent generator, e.g. faces-latent.")
    target = targets.load(args.target, **assignments(args.option, "--option"))
    column, cut = args.truth_column, args.cut
    if target.task == "classify":
        declared = getattr(target, "truth", None) or (None, None)
        column, cut = column or declared[0], cut if cut is not None else declared[1]
        if column is None or cut is None:
            raise ParameterError(f"{args.target} is a classify target that declares no truth: give --truth-column and --cut.")
    elif target.task != "detect":
        raise ParameterError(f"Transects judge detect and classify targets; {args.target} is a {target.task!r} target.")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    progress = not args.no_progress

    # 1. the annotated fit set and the hyperplanes (Sec. 4.1.1)
    z_fit = np.random.default_rng([args.seed, 1]).standard_normal((args.fit_samples, gen.latent_dim))
    fit_batches = tr.render_latents(gen, z_fit, args.batch_size, args.seed)
    truth_fit = pd.concat([b.truth for _, b in tqdm(fit_batches, desc="fit set", total=math.ceil(len(z_fit) / args.batch_size),
                                                    disable=not progress)], ignore_index=True)
    if column is not None and column not in truth_fit.columns:
        raise ParameterError(f"--truth-column {column!r} is not a truth column. Columns: {', '.join(truth_fit.columns)}.")
    if args.fit_on == "annotations":
        ratings = ann.simulate_annotations(truth_fit, fitted, args.annotators, seed=(args.seed, 1))
        data = ann.wide(ann.aggregate(ratings))
    else:
        data = truth_fit
    planes = tr.fit_hyperplanes(z_fit, data, fitted, binary=binary, seed=args.seed)
    tr.hyperplane_table(planes).to_csv(out / "hyperplanes.csv", index=False)

    # 2. transects (Algorithms 1 and 2), rendered and judged batch by batch
    plan = tr.plan_transects(planes, attributes, size, args.n, steps, args.seed, orthogonalise=not args.no_orthogonalise)
    per_transect = int(np.prod(size))
    shown = min(args.sheets, args.n) * per_transect
    truth_parts, judged, images = [], [], []
    with tqdm(total=len(plan.latents), desc=f"{args.target} on transects", unit="img", disable=not progress) as bar:
        keys = [("transect", int(t)) for t in plan.table["transect"]]
        for start, batch in tr.render_latents(gen, plan.latents, args.batch_size, args.seed, keys):
            pred = target.predict(batch.images)
            truth_parts.append(batch.truth)
            judged.append(pd.DataFrame({"target_label": pred.label, "target_score": pred.score, "target_error": pred.error,
                                        "error": _judge(target, pred.label, batch.truth, column, cut)}))
            if start < shown:
                images.append(batch.images[: shown - start])
            bar.update(len(batch))
    truth = pd.concat(truth_parts, ignore_index=True)
    truth["fakeness"] = ann.latent_fakeness(plan.latents)
    judged = pd.concat(judged, ignore_index=True)
    judged.loc[judged["target_error"].notna(), "error"] = np.nan  # no answer is never a classifier failure

    # 3. annotate the transect images, then prune as in Sec. 5.2.1, and transects that drifted
    ratings = ann.simulate_annotations(truth, [*fitted, *[a for a in ambiguous if a not in fitted], "fakeness"],
                                       args.annotators, seed=(args.seed, 2))
    ann.write_annotations(ratings, out / "annotations.csv")
    scores = ann.wide(ann.aggregate(ratings))
    image_report = ann.prune(scores, ambiguous=ambiguous)
    held = [a for a in ann.SCALES if a in truth.columns and a not in attributes and a != "fakeness"]
    measured = pd.concat([plan.table[["transect"]], truth[held]], axis=1)
    drift = tr.transect_drift(measured, held)
    drift.to_csv(out / "drift.csv", index=False)
    table = pd.concat([plan.table, truth, scores.add_prefix("annot_").reset_index(drop=True), judged], axis=1)
    tr.axis_drift(table, attributes, [*attributes, *held]).to_csv(out / "axis_drift.csv", index=False)
    table["pruned"] = ""
    table.loc[~table["image"].isin(image_report.kept), "pruned"] = "image"
    reports = [("images", image_report)]
    if max_drift:
        transect_report = tr.prune_transects(drift, max_drift)
        table.loc[~table["transect"].isin(transect_report.kept), "pruned"] += "+transect"
        reports.append(("transects", transect_report))
    table["pruned"] = table["pruned"].str.strip("+")
    table.to_csv(out / "transects.csv", index=False)
    pd.concat([r.steps.assign(unit=unit) for unit, r in reports], ignore_index=True).to_csv(out / "pruning.csv", index=False)
    np.save(out / "latents.npy", plan.latents)

    # 4. contact sheets of the first transects: one cell per grid point, last axis across
    if shown:
        pixels = np.concatenate(images)
        for t in range(min(args.sheets, args.n)):
            rows = table.iloc[t * per_transect : (t + 1) * per_transect]
            labels = [[f"{a[:6]} {r[f'value_{a}']:+.1f}" for a in attributes]
                      + [_verdict(r["target_label"], r["error"])] for _, r in rows.iterrows()]
            contact_sheet(pixels[rows["image"].to_numpy()], labels=labels, columns=size[-1]).save(out / f"transect_{t:03d}.png")

    _summary(planes, table, attributes, reports, out)
    return 0


def _verdict(label: Any, error: float) -> str:
    text = ("found" if label else "missed") if isinstance(label, (bool, np.bool_)) else str(label)[:12]
    return text + (" ERR" if error == 1 else "")


def _summary(planes: dict, table: Any, attributes: Sequence[str], reports: list, out: Path) -> None:
    print("hyperplanes (held-out):", ", ".join(f"{p.attribute} {p.metric} {p.score:.2f}" for p in planes.values()))
    for unit, report in reports:
        print(f"{unit} {report}")
    kept = table[table["pruned"] == ""]
    print(f"error rate {kept['error'].mean():.3f} on {kept['error'].notna().sum()} kept images "
          f"({table['error'].mean():.3f} on all {table['error'].notna().sum()})")
    for a in attributes:
        rates = kept.groupby(f"value_{a}")["error"].mean()
        print(f"  by {a}: " + ", ".join(f"{v:+.2f} -> {e:.3f}" for v, e in rates.items()))
    print(f"wrote {out}/transects.csv, hyperplanes.csv, drift.csv, axis_drift.csv, pruning.csv, annotations.csv, latents.npy")

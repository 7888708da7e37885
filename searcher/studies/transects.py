"""The transect pipeline end to end: fit attribute hyperplanes, render transects, judge them with a
target (`run_transects`, the library call behind `searcher transect`).

    run_transects("dlib-hog", out="runs/transects")
    run_transects("gender-cnn", attributes=["skin_tone", "hair_length", "gender_presentation"], size=(2, 2, 2),
                  n=200, hold=["facial_hair"], out="runs/gender")

Steps (docs/papers.md#balakrishnan, Sec. 4-5): sample `fit_samples` latents, annotate them (simulated
annotators, or the generator's truth with `fit_on="truth"`), fit one hyperplane per attribute,
build `n` transects of `size` around projected base points (Algorithms 1 and 2), render them,
run the target on every image, annotate the transect images, and mark what the paper prunes:
images rated likely fake or lying in an ambiguous range, and transects whose held attributes drifted.

People's ratings of the transect images (`out/annotations.csv`, from `searcher annotate out`)
replace the simulated ones of the attributes they rated when the run is made again into the same
`out` (Sec. 4.3: human annotations are the ground truth of the transect images). The run must then
render the very images they rated; other settings are refused before anything is overwritten.

Writes to `out`: transects.csv (one row per image), hyperplanes.csv, drift.csv, axis_drift.csv,
pruning.csv, simulated_annotations.csv (the transect images' simulated ratings, in the import
format), latents.npy (row `image` of transects.csv), transect.json (the settings that render the
images again, for `searcher export`, and the ambiguous ranges pruned, for `searcher analyze`) and
transect_000.png .. (the first `sheets` transects).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from searcher.analysis.annotations import HUMAN_RATINGS
from searcher.analysis.transects import TRANSECT_CONFIG
from searcher.errors import ParameterError
from searcher.objective import Judge
from searcher.validation import check_choice, check_int, check_names, checked

__all__ = ["DEFAULT_ATTRIBUTES", "TRANSECT_CONFIG", "TransectRun", "run_transects"]

DEFAULT_ATTRIBUTES = ("skin_tone", "hair_length", "gender_presentation")


@dataclass
class TransectRun:
    """What `run_transects` wrote: the per-image table (transects.csv), the hyperplanes, the
    pruning reports and the summary in words."""

    table: pd.DataFrame
    hyperplanes: dict[str, Any]
    reports: list[tuple[str, Any]]
    lines: list[str]
    out: Path

    def summary(self) -> str:
        return "\n".join(self.lines)


def _grid_size(size: Sequence[int] | str | None, k: int) -> tuple[int, ...]:
    """Grid points per axis from `(2, 2, 2)` or `"2x2x2"` (default 2 each); one positive integer per attribute."""
    if size is None:
        return (2,) * k
    text = size if isinstance(size, str) else "x".join(map(str, size))
    try:
        parsed = tuple(int(p) for p in text.lower().replace("×", "x").split("x"))
    except ValueError:
        parsed = ()
    if len(parsed) != k or any(s < 1 for s in parsed):
        raise ParameterError(f"--size must be {k} positive integers joined by 'x' (one per attribute), e.g. "
                             f"{'x'.join(['2'] * k)}. Got {text!r} instead.")
    return parsed


@checked("run_transects")
def run_transects(
    target: str,
    *,
    generator: str = "faces-latent",
    attributes: Sequence[str] = DEFAULT_ATTRIBUTES,
    size: Sequence[int] | str | None = None,
    n: int = 20,
    out: str | Path = "runs/transects",
    seed: int = 0,
    orthogonalise: bool = True,
    fit_samples: int = 2000,
    fit_on: str = "annotations",
    annotators: int = 5,
    hold: Sequence[str] = (),
    steps: Mapping[str, float] | None = None,
    binary: Mapping[str, float] | None = None,
    ambiguous: Mapping[str, tuple[float, float]] | None = None,
    max_drift: Mapping[str, float] | None = None,
    target_options: Mapping[str, Any] | None = None,
    truth_column: str | None = None,
    cut: float | None = None,
    resolution: int = 128,
    batch_size: int = 64,
    sheets: int = 4,
    progress: bool = False,
) -> TransectRun:
    """Fits hyperplanes, renders `n` transects of `size` along `attributes`, judges them with
    `target`, annotates and prunes as the paper does, and writes the files the module docstring lists.

    Args:
        target: a detect or classify target name; `target_options` its options.
        generator: a generator with a latent space (`from_latent`).
        attributes: one per grid axis, each with an annotation scale in the generator's vocabulary.
        size: grid points per axis, `(2, 2, 2)` or `"2x2x2"` (default 2 each).
        hold: attributes also fitted and held fixed by orthogonalisation.
        steps: decision values -S..S along an axis (latent units; default 1.5).
        binary: attributes fitted with a linear SVM, binarised at the given cut.
        ambiguous: score ranges to prune per attribute (default: the vocabulary's for the axes).
        max_drift: prune transects where a held attribute's truth ranges over more than this.
        truth_column, cut: how a classify target is judged (default: what it declares).
        fit_on: "annotations" (simulated annotators) or "truth" (the generator's truth).

    Raises:
        ParameterError: a bad value, named with the valid ones, before anything is rendered.
    """
    from tqdm import tqdm

    import generators
    import targets
    from searcher.analysis import annotations as ann
    from searcher.analysis import transects as tr
    from searcher.figures.contact_sheet import contact_sheet

    vocabulary = generators.vocabulary(generator)
    valid = [a for a in vocabulary.scales if a != "fakeness"]
    attributes = check_names(attributes, valid, flag="--attributes")
    if not attributes:
        raise ParameterError(f"--attributes needs at least one attribute. Valid attributes: {', '.join(valid)}.")
    hold = [a for a in check_names(hold, valid, flag="--hold") if a not in attributes]
    size = _grid_size(size, len(attributes))
    steps, binary, max_drift = dict(steps or {}), dict(binary or {}), dict(max_drift or {})
    ambiguous = {**{a: r for a, r in vocabulary.ambiguous.items() if a in attributes}, **dict(ambiguous or {})}
    fitted = attributes + hold
    for flag, names, allowed in (("--steps", steps, attributes), ("--binary", binary, fitted), ("--ambiguous", ambiguous, valid),
                                 ("--max-drift", max_drift, [a for a in valid if a not in attributes])):
        check_names(list(names), allowed, flag=flag)
    for flag, value, low in (("-n", n, 1), ("--fit-samples", fit_samples, 10), ("--annotators", annotators, 1),
                             ("--batch-size", batch_size, 1), ("--sheets", sheets, 0), ("--seed", seed, 0)):
        check_int(flag, value, low)
    check_choice("fit_on", fit_on, ("annotations", "truth"))

    gen = generators.load(generator, resolution=resolution)
    if not callable(getattr(gen, "from_latent", None)):
        raise ParameterError(f"Transects walk a latent space; {generator!r} has none. Use a latent generator, e.g. faces-latent.")
    model = targets.load(target, **dict(target_options or {}))
    judge = Judge.of(model, truth_column, cut, margin=0.0)  # every image judged: pruning, not the judge, drops ambiguous ones
    column = judge.truth_column
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    human = ann.human_ratings(out, vocabulary.scales)
    config = {"generator": generator, "resolution": resolution, "seed": seed, "target": target,
              "target_options": dict(target_options or {}), "truth_column": column, "cut": judge.cut,
              "attributes": list(attributes), "size": list(size), "n": n, "ambiguous": {a: list(r) for a, r in ambiguous.items()}}

    # 1. the annotated fit set and the hyperplanes (Sec. 4.1.1)
    z_fit = np.random.default_rng([seed, 1]).standard_normal((fit_samples, gen.latent_dim))
    fit_batches = tr.render_latents(gen, z_fit, batch_size, seed)
    truth_fit = pd.concat([b.truth for _, b in tqdm(fit_batches, desc="fit set", total=math.ceil(len(z_fit) / batch_size),
                                                    disable=not progress)], ignore_index=True)
    if column is not None and column not in truth_fit.columns:
        raise ParameterError(f"--truth-column {column!r} is not a truth column. Columns: {', '.join(truth_fit.columns)}.")
    if fit_on == "annotations":
        ratings = ann.simulate_annotations(truth_fit, fitted, annotators, scales=vocabulary.scales, seed=(seed, 1))
        data = ann.wide(ann.aggregate(ratings, vocabulary.scales))
    else:
        data = truth_fit
    planes = tr.fit_hyperplanes(z_fit, data, fitted, binary=binary, seed=seed)

    # 2. transects (Algorithms 1 and 2), rendered and judged batch by batch
    plan = tr.plan_transects(planes, attributes, size, n, steps, seed, orthogonalise=orthogonalise)
    if human is not None:
        _check_same_images(out, config, plan.latents)
    (out / TRANSECT_CONFIG).write_text(json.dumps(config, indent=2))
    tr.hyperplane_table(planes).to_csv(out / "hyperplanes.csv", index=False)
    per_transect = int(np.prod(size))
    shown = min(sheets, n) * per_transect
    truth_parts, judged, images = [], [], []
    with tqdm(total=len(plan.latents), desc=f"{target} on transects", unit="img", disable=not progress) as bar:
        keys = [("transect", int(t)) for t in plan.table["transect"]]
        for start, batch in tr.render_latents(gen, plan.latents, batch_size, seed, keys):
            pred = model.predict(batch.images)
            truth_parts.append(batch.truth)
            errors = [judge(label, score, row)[0] for label, score, row in zip(pred.label, pred.score, batch.truth.to_dict("records"))]
            judged.append(pd.DataFrame({"target_label": pred.label, "target_score": pred.score, "target_error": pred.error,
                                        "error": errors}))
            if start < shown:
                images.append(batch.images[: shown - start])
            bar.update(len(batch))
    truth = pd.concat(truth_parts, ignore_index=True)
    truth["fakeness"] = ann.latent_fakeness(plan.latents)
    judged = pd.concat(judged, ignore_index=True)
    judged.loc[judged["target_error"].notna(), "error"] = np.nan  # no answer is never a classifier failure

    # 3. annotate the transect images, then prune as in Sec. 5.2.1, and transects that drifted
    ratings = ann.simulate_annotations(truth, [*fitted, *[a for a in ambiguous if a not in fitted], "fakeness"],
                                       annotators, scales=vocabulary.scales, seed=(seed, 2))
    ann.write_annotations(ratings, out / ann.SIMULATED_RATINGS)
    if human is not None:
        ratings = ann.overlay(ratings, human)
    scores = ann.wide(ann.aggregate(ratings, vocabulary.scales)).reindex(truth.index)
    image_report = ann.prune(scores, ambiguous=ambiguous)
    held = [a for a in vocabulary.scales if a in truth.columns and a not in attributes and a != "fakeness"]
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
        for t in range(min(sheets, n)):
            rows = table.iloc[t * per_transect : (t + 1) * per_transect]
            labels = [[f"{a[:6]} {r[f'value_{a}']:+.1f}" for a in attributes]
                      + [_verdict(r["target_label"], r["error"])] for _, r in rows.iterrows()]
            contact_sheet(pixels[rows["image"].to_numpy()], labels=labels, columns=size[-1]).save(out / f"transect_{t:03d}.png")

    lines = _summary(planes, table, attributes, reports, out)
    if human is not None:
        lines.insert(1, f"human ratings ({HUMAN_RATINGS}) from {human['annotator'].nunique()} annotator(s) replace the simulated "
                        f"ones of {', '.join(sorted(set(human['attribute'])))}")
    return TransectRun(table, planes, reports, lines, out)


def _check_same_images(out: Path, config: dict[str, Any], latents: np.ndarray) -> None:
    """Refuses a run whose images differ from those people rated in `out` (their ratings name images
    by row of latents.npy), before anything there is overwritten."""
    previous = json.loads((out / TRANSECT_CONFIG).read_text()) if (out / TRANSECT_CONFIG).is_file() else {}
    same = (out / "latents.npy").is_file() and all(previous.get(k) == config[k] for k in ("generator", "resolution", "seed"))
    if same:
        rated = np.load(out / "latents.npy")
        same = rated.shape == latents.shape and np.allclose(rated, latents, rtol=0, atol=1e-9)
    if not same:
        raise ParameterError(f"{out} holds people's ratings ({out / HUMAN_RATINGS}) of the images of an earlier run, and these "
                             f"settings render other images. Re-run with the settings in {out / TRANSECT_CONFIG} to use the "
                             "ratings, or write to another --out.")


def _verdict(label: Any, error: float) -> str:
    text = ("found" if label else "missed") if isinstance(label, (bool, np.bool_)) else str(label)[:12]
    return text + (" ERR" if error == 1 else "")


def _summary(planes: dict, table: pd.DataFrame, attributes: Sequence[str], reports: list, out: Path) -> list[str]:
    """The summary in words: hyperplane quality, what was pruned, error rates by axis step."""
    lines = ["hyperplanes (held-out): " + ", ".join(f"{p.attribute} {p.metric} {p.score:.2f}" for p in planes.values())]
    lines += [f"{unit} {report}" for unit, report in reports]
    kept = table[table["pruned"] == ""]
    lines.append(f"error rate {kept['error'].mean():.3f} on {kept['error'].notna().sum()} kept images "
                 f"({table['error'].mean():.3f} on all {table['error'].notna().sum()})")
    for a in attributes:
        rates = kept.groupby(f"value_{a}")["error"].mean()
        lines.append(f"  by {a}: " + ", ".join(f"{v:+.2f} -> {e:.3f}" for v, e in rates.items()))
    lines.append(f"wrote {out}/transects.csv, hyperplanes.csv, drift.csv, axis_drift.csv, pruning.csv, simulated_annotations.csv, "
                 "latents.npy, transect.json")
    return lines

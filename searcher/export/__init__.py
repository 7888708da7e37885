"""Hard examples out, in formats training pipelines read (`searcher export`, `searcher.export`).

    export("runs/campaign", "hard")                                   # every failure, Hugging Face ImageFolder
    export("demo", "hard", limit=200, spread=True, control="random")  # 200 spread failures + 200 random, beside
    export("runs/campaign", "hard.parquet-dir", fmt="parquet", selection="all")
    export("runs/smile", "hard", balance_labels=True)                 # as many of each label (see `balance_labels`)
    export("runs/campaign", "twins", recipe="twins", limit=500)       # a retraining set built from causes (`recipes`)

The source is a campaign, a comparison (all its campaigns) or a transect run. Each export holds
the right label of every image, what the target answered, its failure mode and training weight,
every generator parameter and truth column, and a README.md saying where it came from. The
control set (`control="random"`) is written to `OUT-control`, in the same format, columns and
types (one `Schema`), so the two concatenate. Nothing is
half-written: the export is staged beside `out` and renamed into place at the end. `overwrite`
replaces only an earlier export (see `searcher.outputs`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from searcher.errors import ParameterError
from searcher.export.control import CONTROLS, random_control
from searcher.export.readme import readme
from searcher.export.recipes import RECIPES, build_set
from searcher.export.select import SELECTIONS, select
from searcher.export.select import balance_labels as balance_labels_of
from searcher.export.source import read_source
from searcher.export.staging import Staging
from searcher.export.writers import FORMATS, Schema, card, metadata, write
from searcher.packages import answer_calls
from searcher.validation import check_choice, check_int, checked

__all__ = ["CONTROLS", "FORMATS", "RECIPES", "SELECTIONS", "ExportResult", "export"]


@dataclass
class ExportResult:
    """Where an export went and what it holds (the metadata of each written set)."""

    out: Path
    metadata: pd.DataFrame
    control_out: Path | None = None
    control: pd.DataFrame | None = None
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        m = self.metadata
        labels = ", ".join(f"{n} {lab}" for lab, n in m["label"].value_counts().sort_index().items())
        lines = [f"exported {len(m)} images ({int(m['failure'].sum())} failures, "
                 f"{m.loc[m['mode'] >= 0, 'mode'].nunique()} failure modes; {labels}) -> {self.out}", *self.notes]
        if self.control is not None:
            lines.append(f"control: {len(self.control)} random images ({int(self.control['failure'].sum())} failures) -> {self.control_out}")
        return "\n".join(lines)


@checked("export")
def export(
    source: str | Path,
    out: str | Path,
    fmt: str = "imagefolder",
    selection: str = "failures",
    limit: int | None = None,
    spread: bool = False,
    control: str | None = None,
    band: float = 0.1,
    overwrite: bool = False,
    seed: int = 0,
    balance_labels: bool = False,
    recipe: str | None = None,
) -> ExportResult:
    """Writes the chosen images of `source` to `out` (see the module docstring).

    Args:
        source: a campaign, comparison or transect-run directory.
        fmt: "imagefolder" (default), "parquet" or "coco" (detect targets).
        selection: "failures" (default), "all" (every judged image) or "near-boundary".
        limit: at most this many images; with `spread`, spread over the failure modes by
            farthest-point traversal, else the first found.
        control: "random" also writes as many random images, labelled the same way, to `OUT-control`.
        band: near-boundary means |P(right label) - 0.5| <= band.
        overwrite: replace a non-empty `out` that an earlier export wrote (it holds the `.searcher-export`
            marker every export leaves); never a source, a campaign, the working directory or an ancestor
            of one of them (`searcher.outputs`).
        seed: seeds the control draw.
        balance_labels: add images of the under-represented labels from the source's own judged
            trials, nearest the selected images' failure modes, until each label has as many as the
            commonest (`searcher.export.select.balance_labels` says the rule); after `limit`, so the
            set can hold up to twice `limit`. Classify targets only. The control is drawn as large.
        recipe: one of `RECIPES` (balanced-hard, twins, crossed, crossed-draws, decorrelated): instead of `selection`, the
            retraining set `searcher retrain`'s arm of that name adds, of `limit` images (default: as
            many as the campaign's failures), built from its failures and causes (`searcher.export.recipes`).

    Raises:
        ParameterError: a bad value (named, with the valid ones), nothing to export, an existing
            `out` without `overwrite`, or an `out` that may not be replaced (a link, a FIFO, a device,
            a file, a source or a directory no export wrote); nothing is written then.
    """
    check_choice("--format", fmt, FORMATS)
    check_choice("--select", selection, SELECTIONS)
    if control is not None:
        check_choice("--control", control, CONTROLS)
    check_int("--seed", seed, 0)
    if recipe is not None:
        check_choice("--recipe", recipe, RECIPES)
        if balance_labels:
            raise ParameterError("--recipe builds its own set (balanced-hard is the label-balanced one); leave --balance-labels out.")
    out = Path(out)
    destinations = [out] + ([out.with_name(out.name + "-control")] if control else [])
    staging = Staging(destinations, overwrite, sources=[Path(source)])  # a bad --out fails before anything is read
    src = read_source(source)
    if fmt == "coco" and src.task != "detect":
        raise ParameterError(f"--format coco labels face boxes and needs a detect target; {src.config.get('target')!r} is a "
                             f"{src.task} target. Use --format imagefolder or parquet.")
    if balance_labels and src.task != "classify":
        raise ParameterError(f"--balance-labels balances a classify target's labels; {src.config.get('target')!r} is a {src.task} "
                             "target (every image is labelled face). Leave --balance-labels out.")
    rows = select(src.rows, src.task, selection, limit, spread, band)
    notes, pngs = [], None
    if recipe is not None:
        built = build_set(src, recipe, limit or int(select(src.rows, src.task, "failures")["failure"].sum()), seed)
        rows, pngs, notes = built.rows, built.pngs, built.notes
    if balance_labels:
        chosen, rows = rows, balance_labels_of(rows, src.rows)
        notes.append(_balance_note(chosen, rows))
    options = {"format": fmt, "select": selection, "max": limit, "spread": spread, "control": control, "band": band, "seed": seed,
               "balance_labels": balance_labels, "recipe": recipe}
    meta = metadata(rows, src.task, "train")
    crows, images = random_control(src, len(rows), seed) if control else (None, [])
    cmeta = metadata(crows, src.task, "train") if control else None
    schema = Schema.of([m for m in (meta, cmeta) if m is not None], src.judge.labels if src.task == "classify" else ["face"])
    meta = schema.conform(meta)
    result = ExportResult(out, meta, notes=notes)
    with staging as (path, *control_path):
        write(fmt, path, meta, pngs if pngs is not None else (png for _, png in src.png(rows)), schema, list(rows["boxes"]))
        title = f"Retraining set: {recipe}" if recipe else f"Hard examples: {selection}"
        (path / "README.md").write_text(readme(out, fmt, f"{title} of {src.kind} {src.dir.resolve().name}", meta,
                                               src.dir, src.config, options, card(schema, fmt), notes))
        if control:
            cmeta = schema.conform(cmeta)
            write(fmt, control_path[0], cmeta, images, schema, list(crows["boxes"]), first_id=len(meta) + 1)
            (control_path[0] / "README.md").write_text(readme(destinations[1], fmt, f"Random control for {out.name}", cmeta,
                                                              src.dir, src.config, options, card(schema, fmt)))
            result.control_out, result.control = destinations[1], cmeta
        staging.commit()
    return result


def _balance_note(chosen: pd.DataFrame, rows: pd.DataFrame) -> str:
    """What `--balance-labels` added, per label, and whether the set reached balance."""
    before, after = chosen["true_label"].astype(str).value_counts(), rows["true_label"].astype(str).value_counts()
    added = ", ".join(f"{after[lab] - before.get(lab, 0)} {lab}" for lab in sorted(after.index) if after[lab] > before.get(lab, 0))
    counts = ", ".join(f"{n} {lab}" for lab, n in sorted(after.items()))
    short = "" if after.nunique() == 1 else f"; still short of balance ({counts}): the campaign holds no more"
    return (f"--balance-labels added {added or 'nothing'} (for each image of the commonest label, the nearest judged trial of the "
            f"other label in the searched cube, each trial once){short}")


answer_calls(__name__, export)

"""Hard examples out, in formats training pipelines read (`searcher export`, `searcher.export`).

    export("runs/campaign", "hard")                                   # every failure, Hugging Face ImageFolder
    export("demo", "hard", limit=200, spread=True, control="random")  # 200 spread failures + 200 random, beside
    export("runs/campaign", "hard.parquet-dir", fmt="parquet", selection="all")

The source is a campaign, a comparison (all its campaigns) or a transect run. Each export holds
the right label of every image, what the target answered, its failure mode and training weight,
every generator parameter and truth column, and a README.md saying where it came from. The
control set (`control="random"`) is written to `OUT-control`, in the same format. Nothing is
half-written: the export is staged beside `out` and renamed into place at the end. `overwrite`
replaces only an earlier export (see `searcher.outputs`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from searcher.errors import ParameterError
from searcher.export.control import CONTROLS, random_control
from searcher.export.readme import readme
from searcher.export.select import SELECTIONS, select
from searcher.export.source import read_source
from searcher.export.staging import Staging
from searcher.export.writers import FORMATS, metadata, write
from searcher.packages import answer_calls
from searcher.validation import check_choice, check_int

__all__ = ["CONTROLS", "FORMATS", "SELECTIONS", "ExportResult", "export"]


@dataclass
class ExportResult:
    """Where an export went and what it holds (the metadata of each written set)."""

    out: Path
    metadata: pd.DataFrame
    control_out: Path | None = None
    control: pd.DataFrame | None = None

    def summary(self) -> str:
        m = self.metadata
        lines = [f"exported {len(m)} images ({int(m['failure'].sum())} failures, "
                 f"{m.loc[m['mode'] >= 0, 'mode'].nunique()} failure modes) -> {self.out}"]
        if self.control is not None:
            lines.append(f"control: {len(self.control)} random images ({int(self.control['failure'].sum())} failures) -> {self.control_out}")
        return "\n".join(lines)


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
    out = Path(out)
    destinations = [out] + ([out.with_name(out.name + "-control")] if control else [])
    staging = Staging(destinations, overwrite, sources=[Path(source)])  # a bad --out fails before anything is read
    src = read_source(source)
    if fmt == "coco" and src.task != "detect":
        raise ParameterError(f"--format coco labels face boxes and needs a detect target; {src.config.get('target')!r} is a "
                             f"{src.task} target. Use --format imagefolder or parquet.")
    rows = select(src.rows, src.task, selection, limit, spread, band)
    options = {"format": fmt, "select": selection, "max": limit, "spread": spread, "control": control, "band": band, "seed": seed}
    meta = metadata(rows, src.task, "train")
    result = ExportResult(out, meta)
    with staging as (path, *control_path):
        write(fmt, path, meta, (png for _, png in src.png(rows)))
        (path / "README.md").write_text(readme(out, fmt, f"Hard examples: {selection} of {src.kind} {src.dir.name}", meta,
                                               str(src.dir), src.config, options))
        if control:
            crows, images = random_control(src, len(rows), seed)
            cmeta = metadata(crows, src.task, "train")
            write(fmt, control_path[0], cmeta, images)
            (control_path[0] / "README.md").write_text(readme(destinations[1], fmt, f"Random control for {out.name}", cmeta,
                                                              str(src.dir), src.config, options))
            result.control_out, result.control = destinations[1], cmeta
        staging.commit()
    return result


answer_calls(__name__, export)

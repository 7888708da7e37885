"""The transect parts of a report: the summary in words, the settings (transect.json), the grids
`searcher transect` drew (transect_NNN.png) and its tables of fit quality, pruning and drift."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from searcher.analysis.transects import TRANSECT_CONFIG
from searcher.report.page import Section, Table, png_figure, table
from searcher.tables import read_csv

__all__ = ["transect_config", "transect_sections", "transect_summary"]

_TABLES = {  # file -> (caption, what it says)
    "hyperplanes.csv": ("Attribute hyperplanes", "How well each attribute is read off the latent code (held-out score); the "
                        "direction itself (w0..) is left out."),
    "pruning.csv": ("Pruning", "Images rated unrealistic or ambiguous, and transects whose held attributes drifted, removed step by step."),
}
_ROWS = 40


def transect_config(directory: Path) -> list[tuple[str, str]]:
    """The settings the run was made with, key by key (empty for runs older than transect.json)."""
    path = directory / TRANSECT_CONFIG
    config = json.loads(path.read_text()) if path.is_file() else {}
    return [(k, v if isinstance(v, str) else json.dumps(v)) for k, v in config.items()]


def transect_summary(directory: Path) -> str:
    """What was walked, by which target, how much was pruned and how often the target erred."""
    t = read_csv(directory / "transects.csv", "searcher transect")
    config = dict(transect_config(directory))
    axes = [c.removeprefix("value_") for c in t.columns if c.startswith("value_")]
    size = "x".join(str(t[f"idx_{a}"].nunique()) for a in axes if f"idx_{a}" in t)
    pruned = t["pruned"].astype(object).fillna("").ne("") if "pruned" in t else pd.Series(False, index=t.index)
    answered = t["error"].notna()
    kept = ~pruned & answered
    when = datetime.fromtimestamp((directory / "transects.csv").stat().st_mtime, UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (f"{t['transect'].nunique()} transects of {size} images along {', '.join(axes)}, rendered by the "
            f"{config.get('generator', 'latent')} generator and judged by the {config.get('target', '?')} target: {len(t)} images, "
            f"{int(pruned.sum())} pruned (rated unrealistic or ambiguous, or in a transect that drifted), {int((~answered).sum())} "
            f"without an answer from the target. The target erred on {int(t.loc[kept, 'error'].sum())} of the {int(kept.sum())} "
            f"kept images ({t.loc[kept, 'error'].mean():.1%}). Written {when}.")


def _drift_tables(directory: Path) -> list[Table]:
    """Drift, summed up over the transects: how much each attribute changed while each axis was
    walked (the walked one should change, the others not), and the spread of the held attributes."""
    tables = []
    if (directory / "axis_drift.csv").is_file():
        axis = read_csv(directory / "axis_drift.csv", "searcher transect").groupby(["attribute", "axis"], sort=False)["change"].mean().unstack("axis")
        tables.append(table(axis.add_prefix("walking ").reset_index(), "Drift along each axis",
                            note="Mean change of each attribute's truth from one end of an axis to the other, over the transects "
                            "(axis_drift.csv has each transect)."))
    if (directory / "drift.csv").is_file():
        held = read_csv(directory / "drift.csv", "searcher transect").groupby("attribute", sort=False).agg(
            mean_range=("range", "mean"), max_range=("range", "max"), mean_std=("std", "mean"))
        tables.append(table(held.reset_index(), "Drift of the held attributes",
                            note="Range and std of each attribute that should stay fixed within a transect, over the transects "
                            "(drift.csv has each transect)."))
    return tables


def transect_sections(directory: Path) -> list[Section]:
    """The grids (one sheet per transect drawn, the last axis across) and the tables of fit, pruning and drift."""
    sheets = sorted(directory.glob("transect_[0-9][0-9][0-9].png"))
    t = read_csv(directory / "transects.csv", "searcher transect", usecols=["transect"])
    grids = Section("grids", "Transect grids", [
        f"The first {len(sheets)} of {t['transect'].nunique()} transects, one image per grid point (the last axis across), "
        "captioned with the decision values and the target's answer (ERR: the target erred)."],
        figures=[png_figure(p, f"transect {int(p.stem.split('_')[1])}") for p in sheets])
    drift = Section("drift", "Fit, pruning and drift", tables=_drift_tables(directory))
    for name, (caption, note) in _TABLES.items():
        if (directory / name).is_file():
            frame = read_csv(directory / name, "searcher transect")
            frame = frame[[c for c in frame.columns if not (c[:1] == "w" and c[1:].isdigit())]]
            drift.tables.append(table(frame, caption, _ROWS, note))
    return [grids, drift]

"""The export part of a report: what a `searcher export` directory holds (its README, the images
per label, failure mode and source, the control set beside it) and a gallery of its images with
their metadata, read back from whichever format it was written in.

Every format keeps the same columns (`searcher.export.writers.metadata`): imagefolder in
`train/metadata.csv` beside the PNGs, parquet in `train.parquet` with the PNG bytes in its `image`
struct, coco in the `searcher` field of each image of `annotations/instances_train.json`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from searcher.errors import ParameterError
from searcher.report.gallery import Gallery, gallery, named
from searcher.report.page import Table, table
from searcher.tables import read_csv

__all__ = ["FILES", "Export", "control_of", "count_tables", "export_gallery", "export_summary", "read_export"]

SPLIT = "train"  # the split `searcher export` writes
#: the file that makes a directory an export, per format.
FILES = {"imagefolder": f"{SPLIT}/metadata.csv", "parquet": f"{SPLIT}.parquet", "coco": f"annotations/instances_{SPLIT}.json"}
_HIDDEN = ("file_name", "split")  # metadata columns a reader does not filter on
_NEEDED = ("label", "weight", "campaign", "trial", "strategy", "source", "prediction", "failure", "mode")  # what the page reads


@dataclass
class Export:
    """An export read back: its directory and format, one metadata row per image (the columns of
    `searcher.export.writers.metadata`), its README.md text ("" when absent), and `png(i)`, the
    PNG bytes of row `i`."""

    dir: Path
    fmt: str
    meta: pd.DataFrame
    readme: str
    png: Callable[[int], bytes]


def _imagefolder(directory: Path) -> tuple[pd.DataFrame, Callable[[int], bytes]]:
    meta = read_csv(directory / FILES["imagefolder"], "searcher export")
    return meta, lambda i: (directory / SPLIT / meta["file_name"].iloc[i]).read_bytes()


def _parquet(directory: Path) -> tuple[pd.DataFrame, Callable[[int], bytes]]:
    import pyarrow.parquet as pq

    data = pq.read_table(directory / FILES["parquet"])
    pngs = data.column("image").combine_chunks().field("bytes").to_pylist()
    return data.drop_columns(["image"]).to_pandas(), pngs.__getitem__


def _coco(directory: Path) -> tuple[pd.DataFrame, Callable[[int], bytes]]:
    images = json.loads((directory / FILES["coco"]).read_text())["images"]
    meta = pd.DataFrame([{"file_name": entry["file_name"], **entry["searcher"]} for entry in images])
    return meta, lambda i: (directory / SPLIT / meta["file_name"].iloc[i]).read_bytes()


_READERS = {"imagefolder": _imagefolder, "parquet": _parquet, "coco": _coco}


def read_export(directory: Path) -> Export:
    """The export in `directory`, in the first format whose file is there (see `FILES`).

    Raises:
        ParameterError: `directory` holds no export, or one whose metadata lacks the columns `searcher export` writes.
    """
    fmt = next((f for f, name in FILES.items() if (directory / name).is_file()), None)
    if fmt is None:
        raise ParameterError(f"No export in {directory}: expected one of {', '.join(FILES.values())} (from `searcher export`).")
    meta, png = _READERS[fmt](directory)
    missing = [c for c in _NEEDED if c not in meta.columns]
    if missing:
        raise ParameterError(f"The export in {directory} ({FILES[fmt]}) lacks the columns {', '.join(missing)}: "
                             "expected the metadata `searcher export` writes.")
    readme = directory / "README.md"
    return Export(directory, fmt, meta, readme.read_text() if readme.is_file() else "", png)


def control_of(export: Export) -> Export | None:
    """The random control `searcher export --control random` wrote beside `export` (`OUT-control`), if there is one."""
    beside = export.dir.resolve()
    beside = beside.with_name(f"{beside.name}-control")
    return read_export(beside) if any((beside / name).is_file() for name in FILES.values()) else None


def _counts(meta: pd.DataFrame, by: str, caption: str, note: str = "") -> Table:
    """Images, failures and total training weight per value of the `by` column, most images first."""
    counts = meta.groupby(by, sort=False).agg(images=("label", "size"), failures=("failure", "sum"), weight=("weight", "sum"))
    counts = counts.sort_values("images", ascending=False, kind="stable").reset_index()
    return table(counts.astype({"failures": int}), caption, note=note)


def count_tables(export: Export, control: Export | None) -> list[Table]:
    """The export counted per label, per failure mode and per source (search, audit, control...),
    per campaign when it holds several, and the control beside it per label."""
    meta = export.meta.assign(mode=export.meta["mode"].map(lambda m: str(m) if m >= 0 else "none"))
    tables = [_counts(meta, "label", "Per label (the right answer)"),
              _counts(meta, "mode", "Per failure mode", "`weight` makes each failure mode weigh the same in all; none: not a failure."),
              _counts(meta, "source", "Per source")]
    if meta["campaign"].nunique() > 1:
        tables.append(_counts(meta, "campaign", "Per campaign"))
    if control is not None:
        tables.append(_counts(control.meta, "label", f"The random control beside it ({control.dir.name}), per label"))
    return tables


def export_summary(export: Export, control: Export | None) -> str:
    """What the export holds, in words: how many images of which labels, failures and modes, and from which runs."""
    m = export.meta
    labels = ", ".join(f"{n} {label}" for label, n in m["label"].value_counts().sort_index().items())
    modes = m.loc[m["mode"] >= 0, "mode"].nunique()
    runs = ", ".join(f"{c} ({s})" for c, s in m[["campaign", "strategy"]].drop_duplicates().itertuples(index=False))
    sources = ", ".join(f"{n} {s}" for s, n in m["source"].value_counts().items())
    beside = (f" A random control of {len(control.meta)} images ({int(control.meta['failure'].sum())} failures), drawn from "
              f"the same generator and prior and labelled the same way, is beside it in `{control.dir.name}` "
              f"(`searcher report {export.dir.parent / control.dir.name}` shows it)." if control is not None else " No random control is beside it.")
    return (f"{len(m)} images written by `searcher export` as {export.fmt} (`{FILES[export.fmt]}`): {labels}. "
            f"{int(m['failure'].sum())} of them are failures of the target, from {modes} failure modes; by source: {sources}; "
            f"from {runs}.{beside} Its README.md, below, says where it came from and how to load it.")


def export_gallery(export: Export, limit: int) -> Gallery:
    """The exported images (the first `limit`, in the export's order) with their metadata columns:
    label, weight, prediction, failure mode, where each came from, every parameter and the truth no parameter holds."""
    meta = export.meta
    shown = meta.head(limit)
    note = f"All {len(meta)} shown." if len(shown) == len(meta) else f"The first {limit} of {len(meta)} shown, in the export's order."
    facts = shown[[c for c in meta.columns if not c.startswith(("param.", "truth.")) and c not in _HIDDEN]]
    values = pd.concat([facts, named(shown)], axis=1)
    values = values.loc[:, ~values.columns.duplicated()]
    captions = [_caption(row) for _, row in shown.iterrows()]
    return gallery("exported", "Exported images", (export.png(i) for i in range(len(shown))), values, captions, note)


def _caption(row: pd.Series) -> list[str]:
    """An exported image's caption: where it came from (campaign, trial) and its failure mode; its label and the target's answer."""
    where = " ".join(str(row[c]) for c in ("campaign", "trial") if pd.notna(row[c]) and row[c] != "")
    said = f", said {row['prediction']}" if pd.notna(row["prediction"]) else ""
    return [where + (f" · mode {row['mode']}" if row["mode"] >= 0 else ""), f"{row['label']}{said}"]

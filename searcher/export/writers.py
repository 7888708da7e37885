"""The formats an export is written in, each readable by a training pipeline nobody here wrote.

- `imagefolder`: `OUT/<split>/<label>/<id>.png` and `OUT/<split>/metadata.csv`. `datasets.load_dataset(OUT)`
  reads it with every column typed as the dataset card (`card`, the YAML header of OUT/README.md)
  says, `label` a `ClassLabel`; torchvision's `ImageFolder(OUT/<split>)` reads it by folder (the
  label folders sorted, the `ClassLabel`'s own order).
- `parquet`: `OUT/<split>.parquet`, one row per image with the PNG bytes in an `image` struct
  (`bytes`, `path`) and the stored columns' Hugging Face types in the schema metadata, so
  `pyarrow.parquet.read_table` and `load_dataset("parquet", ...)` read it (`label` as its name), and
  `load_dataset(OUT)` reads it as the dataset card types it (`label` a `ClassLabel`).
- `coco`: detect targets only: `OUT/<split>/<id>.png`, `OUT/annotations/instances_<split>.json`
  with the true face box the renderer knows as each image's annotation (a face the detector missed
  becomes a box label; its `segmentation` is the box's polygon, so `annToMask` works), and
  `OUT/annotations/detections_<split>.json`, the detector's own boxes in COCO's results format
  (`COCO.loadRes`). The rest of each row is in the image's `searcher` field.

Every set of one export (the hard set and its control) is written with one `Schema`: the same
columns, in the same order, with the same types, so they concatenate.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from PIL import Image

from searcher.errors import ParameterError

__all__ = ["FORMATS", "Schema", "card", "metadata", "write"]

FORMATS = ("imagefolder", "parquet", "coco")
BOX = ("truth.face_x0", "truth.face_y0", "truth.face_x1", "truth.face_y1")
#: the types of the columns every export holds; `param.*` and `truth.*` columns are typed by `Schema.of`.
_TYPES = {"file_name": "string", "label": "label", "weight": "float64", "split": "string", "campaign": "string", "trial": "string",
          "strategy": "string", "source": "string", "prediction": "string", "score": "float64", "loss": "float64",
          "failure": "bool", "mode": "int64"}


def _slug(label: Any) -> str:
    return re.sub(r"[^\w.-]+", "_", str(label)).strip("_") or "label"


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return value


def metadata(rows: pd.DataFrame, task: str, split: str) -> pd.DataFrame:
    """The exported columns of `rows`: the right `label` (the rendered truth's label for a classify
    target, "face" for a detect target), `file_name` under its label's folder, the training weight,
    where the image came from, what the target answered, and every parameter and truth column."""
    label = rows["true_label"].astype(str) if task == "classify" else pd.Series("face", index=rows.index)
    out = pd.DataFrame({
        "file_name": [f"{_slug(lab)}/{i}.png" for lab, i in zip(label, rows["id"])],
        "label": label, "weight": rows["weight"].astype(float), "split": split,
        "campaign": rows["campaign"], "trial": rows["trial"], "strategy": rows["strategy"], "source": rows["source"],
        "prediction": rows["prediction"].map(lambda v: None if v is None or (isinstance(v, float) and np.isnan(v)) else str(_plain(v))),
        "score": rows["score"].astype(float), "loss": rows["loss"].astype(float),
        "failure": rows["failure"].astype(bool), "mode": rows["mode"].astype(int),
    }, index=rows.index)
    extra = sorted(c for c in rows.columns if c.startswith(("param.", "truth.")))
    return pd.concat([out[list(_TYPES)], rows[extra]], axis=1).reset_index(drop=True)



_ARROW = {"string": "string", "label": "string", "float64": "float64", "int64": "int64", "bool": "bool_"}


def _type(values: pd.Series) -> str:
    """A column's type: bool, int64 or float64 when every value is one (missing values make an
    integer column float64 and a bool column string), else string."""
    if pd.api.types.is_bool_dtype(values):
        return "bool"
    if pd.api.types.is_integer_dtype(values):
        return "int64"
    if pd.api.types.is_float_dtype(values):
        return "float64"
    present = values.dropna()
    if len(present) == len(values) and present.map(lambda v: isinstance(v, (bool, np.bool_))).all():
        return "bool"
    if present.map(lambda v: isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))).all():
        return "float64"
    return "string"


@dataclass(frozen=True)
class Schema:
    """The columns of every set of one export, in order, with their types ("string", "float64",
    "int64", "bool", or "label": strings declared as a `ClassLabel` of `labels`), so that a set
    and its control load with the same features and concatenate."""

    types: dict[str, str]
    labels: tuple[str, ...]

    @classmethod
    def of(cls, frames: Sequence[pd.DataFrame], labels: Sequence[Any]) -> Schema:
        """The schema of `frames` (from `metadata`) together: every column any of them has, typed
        over all of them; `labels` sorted, as torchvision's `ImageFolder` orders its folders."""
        both = pd.concat(frames, ignore_index=True)
        extra = sorted(c for c in both.columns if c not in _TYPES)
        return cls({**_TYPES, **{c: _type(both[c]) for c in extra}}, tuple(sorted(str(v) for v in labels)))

    def conform(self, meta: pd.DataFrame) -> pd.DataFrame:
        """`meta` with this schema's columns (a missing one empty), in order, cast to their types."""
        out = meta.reindex(columns=list(self.types))
        for column, kind in self.types.items():
            values = out[column]
            if kind in ("string", "label"):
                out[column] = values.map(lambda v: None if v is None or (isinstance(v, float) and np.isnan(v)) else str(_plain(v))).astype("str")
            else:
                out[column] = values.astype({"float64": float, "int64": int, "bool": bool}[kind])
        return out

    def hf(self) -> dict[str, Any]:
        """The Hugging Face features of the stored columns, in `Features.to_dict` form, for a parquet
        file's schema metadata: `label` is stored as its name, so it is declared a string there
        (`datasets` drops a declared type that does not match the stored one); the dataset card
        (`card`) declares it a `ClassLabel`, which `load_dataset(OUT)` casts the names to."""
        return {c: {"_type": "Value", "dtype": "string" if kind == "label" else kind} for c, kind in self.types.items()}

    def arrow(self) -> Any:
        """The pyarrow schema of the metadata columns (the label stored as its name)."""
        import pyarrow as pa

        return pa.schema([(c, getattr(pa, _ARROW[kind])()) for c, kind in self.types.items()])


def _yaml_features(schema: Schema, fmt: str, indent: str) -> list[str]:
    """The YAML list of a dataset card's `features` for a `fmt` export (imagefolder: `file_name`
    becomes the `image`; parquet: the `image` struct first, then every column)."""
    columns = [c for c in schema.types if not (fmt == "imagefolder" and c == "file_name")]
    lines = [f"{indent}- name: image", f"{indent}  dtype: image"]
    for column in columns:
        kind = schema.types[column]
        lines.append(f"{indent}- name: {json.dumps(column)}")
        if kind == "label":
            lines += [f"{indent}  dtype:", f"{indent}    class_label:", f"{indent}      names:"]
            lines += [f"{indent}        {json.dumps(str(i))}: {json.dumps(name)}" for i, name in enumerate(schema.labels)]
        else:
            lines.append(f"{indent}  dtype: {kind}")
    return lines


def card(schema: Schema, fmt: str, split: str = "train") -> str:
    """The YAML header of the export's README.md, its Hugging Face dataset card: the feature types
    (`label` a `ClassLabel`) and the data files, which `datasets.load_dataset(OUT)` reads (the
    `configs` entry's features are what its imagefolder and parquet builders cast to); "" for
    coco, which `datasets` does not load."""
    if fmt == "coco":
        return ""
    path = f"{split}/**" if fmt == "imagefolder" else f"{split}.parquet"
    features = _yaml_features(schema, fmt, "  ")
    lines = ["---", "dataset_info:", "  features:", *features, "configs:", "- config_name: default", "  data_files:",
             f"  - split: {split}", f"    path: {json.dumps(path)}", "  features:", *features, "---", ""]
    return "\n".join(lines)


def write(fmt: str, out: Path, meta: pd.DataFrame, images: Iterable[bytes], schema: Schema, boxes: Sequence[Sequence] = (),
          first_id: int = 1, split: str = "train") -> None:
    """Writes one split of `meta` (from `metadata`, conformed to `schema`) and its PNGs (in the
    same order) to `out`. coco only: `boxes`, the detector's `(x0, y0, x1, y1)` boxes per row, and
    `first_id`, the first image and annotation id (a control's follow its set's, so the two merge)."""
    if fmt == "imagefolder":
        _imagefolder(out / split, meta, images)
    elif fmt == "parquet":
        _parquet(out / f"{split}.parquet", meta, images, schema)
    elif fmt == "coco":
        _coco(out, split, meta, images, boxes, first_id)
    else:
        raise ParameterError(f"Unknown export format {fmt!r}. Valid formats: {', '.join(FORMATS)}.")


def _imagefolder(root: Path, meta: pd.DataFrame, images: Iterable[bytes]) -> None:
    for folder in meta["file_name"].map(lambda f: f.split("/")[0]).unique():
        (root / folder).mkdir(parents=True, exist_ok=True)
    for name, png in zip(meta["file_name"], images):
        (root / name).write_bytes(png)
    meta.to_csv(root / "metadata.csv", index=False)


def _parquet(path: Path, meta: pd.DataFrame, images: Iterable[bytes], schema: Schema) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    data = list(images)
    table = pa.Table.from_pandas(meta, schema=schema.arrow(), preserve_index=False)
    image = pa.StructArray.from_arrays([pa.array(data, pa.binary()), pa.array(list(meta["file_name"]), pa.string())], ["bytes", "path"])
    table = table.add_column(0, "image", image)
    features = {"image": {"_type": "Image"}, **schema.hf()}
    hf = json.dumps({"info": {"features": features}})
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), b"huggingface": hf.encode()})
    pq.write_table(table, path)


def _polygon(box: Sequence[float]) -> list[list[float]]:
    """A COCO `segmentation` polygon tracing the `[x, y, w, h]` box."""
    x, y, w, h = box
    return [[x, y, x + w, y, x + w, y + h, x, y + h]]


def _coco(root: Path, split: str, meta: pd.DataFrame, images: Iterable[bytes], boxes: Sequence[Sequence], first_id: int) -> None:
    missing = [c for c in BOX if c not in meta.columns or meta[c].isna().all()]
    if missing:
        raise ParameterError("--format coco needs the true face box in the generator's truth "
                             f"({', '.join(c[6:] for c in BOX)}); this generator's truth lacks {', '.join(c[6:] for c in missing)}. "
                             "Use --format imagefolder or parquet.")
    (root / split).mkdir(parents=True, exist_ok=True)
    (root / "annotations").mkdir(parents=True, exist_ok=True)
    entries, annotations, detections = [], [], []
    records = meta.drop(columns=["file_name"]).to_dict("records")
    found = list(boxes) or [[] for _ in records]
    for k, (name, png, record, predicted) in enumerate(zip(meta["file_name"], images, records, found), start=first_id):
        file_name = name.split("/")[-1]
        (root / split / file_name).write_bytes(png)
        with Image.open(io.BytesIO(png)) as im:
            width, height = im.size
        x0, y0, x1, y1 = (float(record[c]) for c in BOX)
        x0, y0, x1, y1 = max(0.0, x0), max(0.0, y0), min(float(width), x1), min(float(height), y1)
        clean = {key: (None if isinstance(v, float) and np.isnan(v) else _plain(v)) for key, v in record.items()}
        entries.append({"id": k, "file_name": file_name, "width": width, "height": height, "searcher": clean})
        box = [x0, y0, max(0.0, x1 - x0), max(0.0, y1 - y0)]
        annotations.append({"id": k, "image_id": k, "category_id": 1, "bbox": box, "area": box[2] * box[3], "iscrowd": 0,
                            "segmentation": _polygon(box)})
        score = 1.0 if clean["score"] is None else float(clean["score"])
        for b in predicted:
            bx0, by0, bx1, by1 = (float(v) for v in b)
            detections.append({"image_id": k, "category_id": 1, "bbox": [bx0, by0, bx1 - bx0, by1 - by0], "score": score})
    coco = {"info": {"description": "searcher export: the true face box of every image"}, "images": entries,
            "annotations": annotations, "categories": [{"id": 1, "name": "face", "supercategory": "face"}]}
    (root / "annotations" / f"instances_{split}.json").write_text(json.dumps(coco))
    (root / "annotations" / f"detections_{split}.json").write_text(json.dumps(detections))

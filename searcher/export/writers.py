"""The formats an export is written in, each readable by a training pipeline nobody here wrote.

- `imagefolder`: `OUT/<split>/<label>/<id>.png` and `OUT/<split>/metadata.csv`, which Hugging Face
  `datasets.load_dataset("imagefolder", data_dir=OUT)` reads with every column (the explicit
  `label` column: with a metadata file present, it no longer takes labels from folder names) and
  torchvision's `ImageFolder(OUT/<split>)` reads by folder.
- `parquet`: `OUT/<split>.parquet`, one row per image with the PNG bytes in an `image` struct
  (`bytes`, `path`) and the Hugging Face feature types in the schema metadata, so
  `pyarrow.parquet.read_table` and `load_dataset("parquet", ...)` both read it.
- `coco`: detect targets only: `OUT/<split>/<id>.png` and `OUT/annotations/instances_<split>.json`
  with the true face box the renderer knows as each image's annotation, so a face the detector
  missed becomes a box label; the rest of each row is in the image's `searcher` field.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from PIL import Image

from searcher.errors import ParameterError

__all__ = ["FORMATS", "metadata", "write"]

FORMATS = ("imagefolder", "parquet", "coco")
BOX = ("truth.face_x0", "truth.face_y0", "truth.face_x1", "truth.face_y1")
_FIRST = ["file_name", "label", "weight", "split", "campaign", "trial", "strategy", "source", "prediction", "score", "loss",
          "failure", "mode"]


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
    extra = [c for c in rows.columns if c.startswith(("param.", "truth."))]
    return pd.concat([out[_FIRST], rows[extra]], axis=1).reset_index(drop=True)


def write(fmt: str, out: Path, meta: pd.DataFrame, images: Iterable[bytes], split: str = "train") -> None:
    """Writes one split of `meta` (from `metadata`) and its PNGs (in the same order) to `out`."""
    if fmt == "imagefolder":
        _imagefolder(out / split, meta, images)
    elif fmt == "parquet":
        _parquet(out / f"{split}.parquet", meta, images)
    elif fmt == "coco":
        _coco(out, split, meta, images)
    else:
        raise ParameterError(f"Unknown export format {fmt!r}. Valid formats: {', '.join(FORMATS)}.")


def _imagefolder(root: Path, meta: pd.DataFrame, images: Iterable[bytes]) -> None:
    for folder in meta["file_name"].map(lambda f: f.split("/")[0]).unique():
        (root / folder).mkdir(parents=True, exist_ok=True)
    for name, png in zip(meta["file_name"], images):
        (root / name).write_bytes(png)
    meta.to_csv(root / "metadata.csv", index=False)


_HF_TYPES = {"int64": "int64", "double": "float64", "bool": "bool", "string": "string", "large_string": "large_string"}


def _parquet(path: Path, meta: pd.DataFrame, images: Iterable[bytes]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    data = list(images)
    table = pa.Table.from_pandas(meta, preserve_index=False)
    image = pa.StructArray.from_arrays([pa.array(data, pa.binary()), pa.array(list(meta["file_name"]), pa.string())], ["bytes", "path"])
    table = table.add_column(0, "image", image)
    features = {"image": {"_type": "Image"}}
    for f in table.schema:
        if f.name != "image":
            features[f.name] = {"_type": "Value", "dtype": _HF_TYPES.get(str(f.type), "string")}
    hf = json.dumps({"info": {"features": features}})
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), b"huggingface": hf.encode()})
    pq.write_table(table, path)


def _coco(root: Path, split: str, meta: pd.DataFrame, images: Iterable[bytes]) -> None:
    missing = [c for c in BOX if c not in meta.columns]
    if missing:
        raise ParameterError("--format coco needs the true face box in the generator's truth "
                             f"({', '.join(c[6:] for c in BOX)}); this generator's truth lacks {', '.join(c[6:] for c in missing)}. "
                             "Use --format imagefolder or parquet.")
    (root / split).mkdir(parents=True, exist_ok=True)
    (root / "annotations").mkdir(parents=True, exist_ok=True)
    entries, annotations = [], []
    records = meta.drop(columns=["file_name"]).to_dict("records")
    for k, (name, png, record) in enumerate(zip(meta["file_name"], images, records), start=1):
        file_name = name.split("/")[-1]
        (root / split / file_name).write_bytes(png)
        with Image.open(io.BytesIO(png)) as im:
            width, height = im.size
        x0, y0, x1, y1 = (float(record[c]) for c in BOX)
        x0, y0, x1, y1 = max(0.0, x0), max(0.0, y0), min(float(width), x1), min(float(height), y1)
        clean = {key: (None if isinstance(v, float) and np.isnan(v) else _plain(v)) for key, v in record.items()}
        entries.append({"id": k, "file_name": file_name, "width": width, "height": height, "searcher": clean})
        box = [x0, y0, max(0.0, x1 - x0), max(0.0, y1 - y0)]
        annotations.append({"id": k, "image_id": k, "category_id": 1, "bbox": box, "area": box[2] * box[3], "iscrowd": 0})
    coco = {"info": {"description": "searcher export: the true face box of every image"}, "images": entries,
            "annotations": annotations, "categories": [{"id": 1, "name": "face", "supercategory": "face"}]}
    (root / "annotations" / f"instances_{split}.json").write_text(json.dumps(coco))

"""The README.md inside every export: what it holds, where it came from, how to load it, with the
Hugging Face dataset card (the feature types) as its YAML header. It names the source and every
path in the run's configuration by its last part only: an export is moved and shared, and a path
of the machine it was written on says nothing there."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["readme", "tool_version"]

_LOAD = {
    "imagefolder": """```python
from datasets import load_dataset
data = load_dataset("{out}")["train"]   # image, label (a ClassLabel), weight and every column of metadata.csv, typed by the card above
# torchvision: torchvision.datasets.ImageFolder("{out}/train") reads the label folders (the same sorted classes)
```""",
    "parquet": """```python
import pyarrow.parquet as pq
table = pq.read_table("{out}/train.parquet")   # image.bytes is the PNG
# Hugging Face: datasets.load_dataset("{out}")["train"], label a ClassLabel
```""",
    "coco": """```python
from pycocotools.coco import COCO
coco = COCO("{out}/annotations/instances_train.json")           # one true face box per image in {out}/train/
found = coco.loadRes("{out}/annotations/detections_train.json") # the detector's own boxes (loadRes needs at least one)
```""",
}


def tool_version() -> str:
    """searcher's version and the commit of the checkout it runs from (when it is one)."""
    try:
        version = importlib_metadata.version("searcher")
    except importlib_metadata.PackageNotFoundError:
        version = "unknown"
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).parent, capture_output=True,
                                text=True, timeout=5, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = "not a git checkout"
    return f"searcher {version}, commit {commit}"


def _portable(value: Any) -> Any:
    """`value` with every absolute path in it (a string, or inside a dict or list) cut to its last part."""
    if isinstance(value, dict):
        return {k: _portable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_portable(v) for v in value]
    if isinstance(value, str) and Path(value).is_absolute():
        return Path(value).name
    return value


def readme(out: Path, fmt: str, what: str, meta: pd.DataFrame, source: Path, config: dict[str, Any], options: dict[str, Any],
           header: str = "", notes: Sequence[str] = ()) -> str:
    """The text of `out/README.md`: `header` (the dataset card's YAML, `writers.card`) first, and
    `notes` as more lines of what it holds."""
    counts = meta["label"].value_counts().sort_index()
    modes = meta.loc[meta["mode"] >= 0, "mode"].nunique()
    lines = [
        header + f"# {what}",
        "",
        f"{len(meta)} images ({', '.join(f'{n} {lab}' for lab, n in counts.items())}), exported by `searcher export` "
        f"({tool_version()}) from `{source.resolve().name}`.",
        "",
        f"- failures among them: {int(meta['failure'].sum())}, from {modes} failure modes" if modes else
        f"- failures among them: {int(meta['failure'].sum())}",
        "- `label` is the right answer (the rendered truth), not the target's; `prediction` and `score` are the target's.",
        "- `weight` makes each failure mode weigh the same in all (one over its size, averaging 1 over the failures); 1 elsewhere.",
        "- `param.*` are the generator parameters the image was rendered from, `truth.*` what the renderer reports it drew.",
        *(f"- {note}" for note in notes),
        "- Synthetic faces are not photographs: a model that learns from them learns about the renderer too.",
        "",
        "## Load it",
        "",
        _LOAD[fmt].format(out=out.name),
        "",
        "## Where it came from",
        "",
        "Export options:",
        "",
        "```json",
        json.dumps(options, indent=2, sort_keys=True, default=str),
        "```",
        "",
        "The configuration of the run it was exported from:",
        "",
        "```json",
        json.dumps(_portable(config), indent=2, sort_keys=True, default=str),
        "```",
        "",
    ]
    return "\n".join(lines)

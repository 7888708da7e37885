"""The images a rating page shows, and nothing else: the directory's own table of images, read by
`searcher.export.source.read_source` (a campaign's stored PNGs; a transect run's images rendered
again from latents.npy), addressed by position in that table, never by a path from a request.

Each image has the key its ratings carry in the `image` column of annotations.csv, the one the
rest of the engine joins on: a campaign image's content hash (the `image` of its trials; trials
that rendered the same image share it and are rated once), a transect image's row of latents.npy
(the `image` of transects.csv, as in simulated_annotations.csv).
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from generators.base import Vocabulary
from searcher.errors import ParameterError
from searcher.export.source import Source, read_source

__all__ = ["Images", "read_images"]


@dataclass
class Images:
    """The rateable images of one directory: `keys[i]` is image i's key in annotations.csv and
    `png(i)` its PNG bytes (the last 64 kept, so stepping back costs no render)."""

    source: Source
    rows: pd.DataFrame
    keys: list[Any]
    vocabulary: Vocabulary
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self.png = functools.lru_cache(maxsize=64)(self._png)

    def __len__(self) -> int:
        return len(self.keys)

    def _png(self, index: int) -> bytes:
        with self._lock:  # renderers need not be thread-safe
            return next(self.source.png(self.rows.iloc[[index]]))[1]


def read_images(directory: str | Path) -> Images:
    """The images of a campaign or transect run directory, in the order they were made.

    Raises:
        ParameterError: not a campaign or transect directory (a comparison's campaigns are rated
            one at a time), or no image to rate.
    """
    import generators

    path = Path(directory)
    if not ((path / "campaign.sqlite").is_file() or (path / "transects.csv").is_file()):
        runs = ", ".join(str(p.parent) for p in sorted(path.glob("runs/*/campaign.sqlite")))
        raise ParameterError(f"{path} is neither a campaign directory (campaign.sqlite, written by `searcher hunt`) nor a transect "
                             "run (transects.csv, written by `searcher transect`)"
                             + (f"; it holds a comparison: rate one of its campaigns at a time ({runs})." if runs else "."))
    source = read_source(path)
    rows = source.rows
    if source.kind == "campaign":
        rows = rows[rows["image"].notna()].drop_duplicates("image")
        keys = rows["image"].astype(str).tolist()
    else:
        keys = rows["image"].astype(int).tolist()
    if not keys:
        raise ParameterError(f"{path} holds no image to rate yet; run the campaign first.")
    return Images(source, rows.reset_index(drop=True), keys, generators.vocabulary(source.config["generator"]))

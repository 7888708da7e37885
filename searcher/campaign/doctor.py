"""`searcher doctor DIR`: what state a campaign directory is in, and what to do about it.

Reads the store without changing it and lists what a resume, an analysis or an export would trip
on: a damaged `campaign.sqlite`, rows that do not parse, images that are missing or unreadable,
the last committed batch and the trials of an unfinished one, target errors left to retry.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image

from searcher.campaign.store import image_file

__all__ = ["Checkup", "check_campaign"]

_JSON_COLUMNS = ("params", "x", "boxes", "truth")


@dataclass
class Checkup:
    """What `check_campaign` found; `ok` when nothing needs doing."""

    dir: Path
    damaged: str | None = None
    trials: int = 0
    steps: int = 0
    unfinished: int = 0  # trials stored for a batch not yet committed (a resume completes it)
    errors: int = 0
    bad_rows: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.damaged is None and not (self.bad_rows or self.missing or self.unreadable)

    def summary(self) -> str:
        if self.damaged is not None:
            images = sum(1 for _ in (self.dir / "images").rglob("*.png")) if (self.dir / "images").is_dir() else 0
            return (f"{self.dir}: campaign.sqlite is damaged or not a campaign store ({self.damaged}); its {images} images under "
                    "images/ are intact. Move campaign.sqlite aside and run the campaign again into this or another --out.")
        lines = [f"{self.dir}: {self.trials} trials in {self.steps} committed batches"
                 + (f", and {self.unfinished} of an unfinished batch (`searcher hunt --resume` completes it)" if self.unfinished else "")]
        if self.errors:
            lines.append(f"{self.errors} trials ended in a target error; `searcher hunt --resume` evaluates them again (--retries)")
        for what, items, fix in (("rows that do not parse", self.bad_rows, "analysis and export cannot read them; re-run the campaign"),
                                 ("images missing", self.missing, "re-run the campaign into a new --out to render them"),
                                 ("images unreadable", self.unreadable, "re-run the campaign into a new --out to render them")):
            if items:
                shown = ", ".join(items[:5]) + (f" and {len(items) - 5} more" if len(items) > 5 else "")
                lines.append(f"{len(items)} {what}: {shown}; {fix}")
        lines.append("healthy" if self.ok else "problems found")
        return "\n".join(lines)


def check_campaign(directory: str | Path, decode: bool = False) -> Checkup:
    """Checks the campaign in `directory` read-only; `decode` also decodes every image (slower)."""
    path = Path(directory)
    up = Checkup(path)
    db_path = path / "campaign.sqlite"
    if not db_path.is_file():
        up.damaged = "campaign.sqlite is missing"
        return up
    try:
        db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
        try:
            rows = db.execute("SELECT step, idx, image, error, " + ", ".join(_JSON_COLUMNS) + " FROM trials ORDER BY step, idx").fetchall()
            committed = {s for (s,) in db.execute("SELECT step FROM steps")}
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        up.damaged = str(exc)
        return up
    up.trials, up.steps = len(rows), len(committed)
    for step, idx, image, error, *blobs in rows:
        name = f"trial {step}-{idx}"
        up.unfinished += step not in committed
        up.errors += error is not None
        try:
            for blob in blobs:
                if blob is not None:
                    json.loads(blob)
        except (TypeError, ValueError):
            up.bad_rows.append(name)
        if image is None:
            continue
        png = image_file(path, image)
        if not png.is_file():
            up.missing.append(f"{name} ({png.relative_to(path)})")
        elif png.stat().st_size == 0 or decode and not _decodes(png):
            up.unreadable.append(f"{name} ({png.relative_to(path)})")
    return up


def _decodes(png: Path) -> bool:
    try:
        with Image.open(png) as im:
            im.load()
        return True
    except (OSError, ValueError):
        return False

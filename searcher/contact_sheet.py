"""Contact sheets: a grid of images, each captioned with its key attributes."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from PIL import Image, ImageDraw, ImageFont

__all__ = ["caption", "contact_sheet"]


def caption(row: pd.Series) -> list[str]:
    """Two short lines that tell faces apart: skin type, gender presentation, age; pose and light."""
    lines = []
    if {"fitzpatrick", "gender_presentation", "age"} <= set(row.index):
        lines.append(f"F{int(row['fitzpatrick'])} g{row['gender_presentation']:.1f} {row['age']:.0f}y")
    if {"yaw", "light_intensity"} <= set(row.index):
        extra = " " + str(row["eyewear"])[:5] if row.get("eyewear", "none") != "none" else ""
        lines.append(f"yaw{row['yaw']:+.0f} L{row['light_intensity']:.1f}{extra}")
    return lines


def contact_sheet(
    images: np.ndarray, truth: pd.DataFrame | None = None, columns: int | None = None, labels: Sequence[Sequence[str]] | None = None
) -> Image.Image:
    """Lays `N x H x W x 3` uint8 images on a grid, with captions under each (from `labels`, or
    from `truth` via `caption`)."""
    n, h, w, _ = images.shape
    if labels is None:
        labels = [caption(row) for _, row in truth.iterrows()] if truth is not None else [[] for _ in range(n)]
    cols = columns or max(1, math.ceil(math.sqrt(n)))
    rows = math.ceil(n / cols)
    font = ImageFont.load_default()
    line_h = 11
    text_h = line_h * max((len(lbl) for lbl in labels), default=0) + 4
    pad = 4
    sheet = Image.new("RGB", (cols * (w + pad) + pad, rows * (h + text_h + pad) + pad), (250, 250, 250))
    draw = ImageDraw.Draw(sheet)
    for i in range(n):
        x = pad + (i % cols) * (w + pad)
        y = pad + (i // cols) * (h + text_h + pad)
        sheet.paste(Image.fromarray(images[i]), (x, y))
        for k, line in enumerate(labels[i]):
            draw.text((x + 2, y + h + 2 + k * line_h), line, fill=(30, 30, 30), font=font)
    return sheet

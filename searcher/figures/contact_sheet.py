"""Contact sheets: a grid of images, each captioned with its key attributes."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from PIL import Image, ImageDraw, ImageFont

from generators.base import Vocabulary

__all__ = ["contact_sheet"]


def contact_sheet(
    images: np.ndarray, truth: pd.DataFrame | None = None, columns: int | None = None, labels: Sequence[Sequence[str]] | None = None,
    caption: Callable[[pd.Series], list[str]] | None = None,
) -> Image.Image:
    """Lays `N x H x W x 3` uint8 images on a grid, with captions under each: `labels`, or each
    row of `truth` through `caption` (a generator's `vocabulary.caption`; default: its first values)."""
    n, h, w, _ = images.shape
    if labels is None:
        caption = caption or Vocabulary().caption
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

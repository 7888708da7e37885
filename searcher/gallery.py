"""A campaign's failures at a glance: a captioned contact sheet of the failing images."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

from searcher.campaign import load_campaign
from searcher.contact_sheet import caption, contact_sheet
from searcher.objective import FAILURE
from searcher.store import Store

__all__ = ["failure_gallery"]


def failure_gallery(directory: str | Path, limit: int = 48, columns: int = 8) -> Image.Image | None:
    """Contact sheet of up to `limit` failures of the campaign in `directory`, in the order found
    (None when it found none)."""
    trials = load_campaign(directory).trials
    fails = trials[(trials["loss"] >= FAILURE) & trials["image"].notna()].head(limit)
    if fails.empty:
        return None
    store = Store(directory)
    try:
        images = np.stack([store.load_image(h) for h in fails["image"]])
    finally:
        store.close()
    truth = pd.DataFrame(list(fails["truth"]))
    labels = [[f"#{i}", *caption(row)] for i, (_, row) in zip(fails.index, truth.iterrows())]
    return contact_sheet(images, labels=labels, columns=columns)

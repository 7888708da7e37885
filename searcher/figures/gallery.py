"""A campaign's failures at a glance: a captioned contact sheet of the failing images."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

from searcher.campaign import load_campaign
from searcher.campaign.store import Store
from searcher.figures.contact_sheet import contact_sheet
from searcher.objective import FAILURE
from searcher.space import farthest_points

__all__ = ["failure_gallery"]


def failure_gallery(directory: str | Path, limit: int = 48, columns: int = 8, diverse: bool = True) -> Image.Image | None:
    """Contact sheet of up to `limit` failures of the campaign in `directory`, in the order found:
    the most different ones (`farthest_points` over their unit-cube points) or, with `diverse=False`, the
    first ones. None when it found none."""
    campaign = load_campaign(directory)
    trials = campaign.trials
    fails = trials[(trials["loss"] >= FAILURE) & trials["image"].notna()]
    if fails.empty:
        return None
    keep = farthest_points(np.array(fails["x"].tolist(), float), limit) if diverse else np.arange(min(limit, len(fails)))
    fails = fails.iloc[keep]
    store = Store(directory, readonly=True)
    try:
        images = np.stack([store.load_image(h) for h in fails["image"]])
    finally:
        store.close()
    truth = pd.DataFrame(list(fails["truth"]))
    labels = [[f"#{i}", *campaign.vocabulary.caption(row)] for i, (_, row) in zip(fails.index, truth.iterrows())]
    return contact_sheet(images, labels=labels, columns=columns)

"""The galleries of a report: failures and successes (or the images of an export) as small JPEG
thumbnails with every parameter and truth value of each, which the page's script filters (by
failure mode, by attribute) and sorts.

A gallery holds at most `limit` images, so a long campaign's report stays small: over the cap it
shows the most different ones (farthest-point spread over the searched points, as `searcher
gallery` picks; past 20 times the cap, over a seeded uniform sample of that many, so a
100,000-trial campaign costs what an 8,000-trial one does) and says how many of how many it shows.
A campaign that keeps only a share of its images (its `images` setting) shows those it kept.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from PIL import Image

from searcher.export.source import Source
from searcher.report.page import data_uri
from searcher.space import farthest_points
from searcher.tables import read_csv

__all__ = ["THUMB", "Gallery", "galleries", "gallery", "judged", "named"]

THUMB = 80  # thumbnail side in pixels: 2-4 KB of JPEG each
_META = ("campaign", "strategy", "source", "mode", "prediction", "true_label", "loss", "score")
_CANDIDATES = 20  # past this many times its limit, a gallery spreads over a seeded sample of that many: its cost stays bounded
_FACTS = {*_META, "evaluation", "transect", "trial", "label", "weight", "failure"}  # not attributes of the image


@dataclass
class Gallery:
    """One gallery: an image and caption per item, the values the script filters and sorts on
    (`columns` x `rows`, one row per item), the failure modes present, a note saying how many it
    shows of how many, and example filter conditions."""

    id: str
    title: str
    images: list[str]
    captions: list[list[str]]
    columns: list[str]
    rows: list[list[Any]]
    modes: list[int]
    note: str
    examples: list[str]

    @property
    def data(self) -> dict[str, Any]:
        """What the page's script reads (as JSON)."""
        return {"columns": self.columns, "rows": self.rows}


def judged(rows: pd.DataFrame) -> pd.Series:
    """Rows the target answered and the judge kept: not an error, not excluded (ambiguous or pruned)."""
    return rows["error"].isna() & rows["excluded"].isna() & rows["loss"].notna()


def _plain(value: Any) -> Any:
    """A JSON value the script compares: numbers (4 significant digits), else text."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value)).lower()
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(f"{value:.4g}")
    return str(value)


def _attributes(rows: pd.DataFrame, kind: str) -> pd.DataFrame:
    """The columns a reader filters on, named plainly: facts of the run first, then the parameters
    searched, then the truth the generator reports that no parameter holds (for a transect run,
    whose parameters are latent codes: its truth and its axis values)."""
    first = rows["transect"] if kind == "transect" else rows.groupby("campaign", sort=False).cumcount().add(1).rename("evaluation")
    meta = [c for c in _META if c in rows and c != first.name
            and not (c in ("campaign", "strategy", "source") and rows[c].nunique() == 1)
            and not (c == "score" and rows[c].isna().all()) and not (c == "mode" and (rows[c] < 0).all())]
    out = pd.concat([first, rows[meta], named(rows, params=kind != "transect")], axis=1)
    return out.loc[:, ~out.columns.duplicated()]


def named(rows: pd.DataFrame, params: bool = True) -> pd.DataFrame:
    """The `param.NAME` columns of `rows` (unless `params` is false), the `truth.NAME` columns no
    parameter holds and a transect's `value_*` axis values, named plainly (`NAME`) as a reader filters on them."""
    searched = [c for c in rows.columns if c.startswith("param.")] if params else []
    names = {c.removeprefix("param.") for c in searched}
    extra = [c for c in rows.columns if (c.startswith("truth.") and c.removeprefix("truth.") not in names) or c.startswith("value_")]
    return rows[searched + extra].rename(columns=lambda c: c.removeprefix("param.").removeprefix("truth."))


def _thumbnail(png: bytes) -> str:
    with Image.open(io.BytesIO(png)) as im:
        im = im.convert("RGB")
        im.thumbnail((THUMB, THUMB), Image.Resampling.BILINEAR, reducing_gap=2.0)
        buf = io.BytesIO()
        im.save(buf, format="JPEG", quality=80)
    return data_uri(buf.getvalue(), "image/jpeg")


def _heading(values: pd.Series) -> str:
    """An item's first caption line: where it came from (transect, or campaign and evaluation) and its failure mode."""
    where = f"t{values['transect']}" if "transect" in values else f"{values.get('campaign', '')} #{values['evaluation']}".strip()
    return where + (f" · mode {values['mode']}" if values.get("mode", -1) >= 0 else "")


def _gallery(src: Source, rows: pd.DataFrame, attrs: pd.DataFrame, gid: str, title: str, limit: int,
             caption: Callable[[pd.Series], list[str]]) -> Gallery:
    total = len(rows)
    rows = rows[rows["image"].notna()]  # a campaign that keeps a share of its images (`images`) shows those it kept
    kept = "" if len(rows) == total else f" ({len(rows)} of the {total} kept an image: the campaign keeps a share of them)"
    if len(rows) > limit:
        spread = "the searched points"
        if len(rows) > _CANDIDATES * limit:
            rows = rows.iloc[np.sort(np.random.default_rng(0).choice(len(rows), _CANDIDATES * limit, replace=False))]
            spread = f"a seeded uniform sample of {len(rows)} of them"
        rows = rows.iloc[farthest_points(np.array(rows["x"].tolist(), float), limit)]
        note = f"{limit} of {total} shown{kept}: the most different ones (farthest-point spread over {spread})."
    else:
        note = (f"All {total} shown." if len(rows) == total else f"{len(rows)} of {total} shown{kept}.") if total else "None."
    values = attrs.loc[rows.index]
    truth = rows[[c for c in rows.columns if c.startswith("truth.")]].rename(columns=lambda c: c.removeprefix("truth."))
    captions = [[_heading(v), *caption(t)] for (_, v), (_, t) in zip(values.iterrows(), truth.iterrows())]
    return gallery(gid, title, (png for _, png in src.png(rows)), values, captions, note)


def gallery(gid: str, title: str, pngs: Iterable[bytes], values: pd.DataFrame, captions: list[list[str]], note: str) -> Gallery:
    """A gallery of `pngs` (as thumbnails), one row of `values` and one caption (lines) per image:
    the columns of `values` are what the page's script filters and sorts on, and a `mode` column
    (failure mode, -1 for none) fills the failure-mode menu, or is dropped when no image has one."""
    images = [_thumbnail(png) for png in pngs]
    modes = sorted(int(m) for m in values.get("mode", pd.Series(dtype=int)).unique() if m >= 0)
    if not modes:
        values = values.drop(columns="mode", errors="ignore")
    return Gallery(gid, title, images, captions, list(values.columns),
                   [[_plain(v) for v in row] for row in values.itertuples(index=False)], modes, note, _examples(values))


def _examples(values: pd.DataFrame) -> list[str]:
    """Two filter conditions that make sense here: a numeric attribute of the images above its median,
    a category's most common value (never a fact of the run or the judgement: loss, score, weight...)."""
    attrs = values[[c for c in values.columns if c not in _FACTS]]
    numeric = [c for c in attrs if pd.api.types.is_numeric_dtype(attrs[c]) and attrs[c].nunique() > 2]
    text = [c for c in attrs if not pd.api.types.is_numeric_dtype(attrs[c]) and 1 < attrs[c].nunique() < 10]
    out = [f"{numeric[0]}>{attrs[numeric[0]].median():.3g}"] if numeric else []
    return out + ([f"{text[0]}={attrs[text[0]].mode().iloc[0]}"] if text else [])


def galleries(src: Source, limit: int, caption: Callable[[pd.Series], list[str]]) -> tuple[Gallery, Gallery]:
    """The failures and the successes among the judged images of `src`, at most `limit` each;
    `caption` turns a truth row into the short caption lines the generator's vocabulary writes."""
    rows = src.rows
    if src.kind == "transect":  # its axis values, row for row of transects.csv
        table = read_csv(src.dir / "transects.csv", "searcher transect")
        rows = rows.join(table[[c for c in table.columns if c.startswith("value_")]].set_axis(rows.index))
    attrs = _attributes(rows, src.kind)  # on every row, so that evaluations are numbered as they ran
    rows = rows[judged(rows)]
    failed = rows["failure"].astype(bool)
    return (_gallery(src, rows[failed], attrs, "failures", "Failures", limit, caption),
            _gallery(src, rows[~failed], attrs, "successes", "Successes", limit, caption))

"""Annotations: several annotators per image and attribute, aggregated and used for pruning.

Balakrishnan et al. (docs/papers.md#balakrishnan, Sec. 4.3) collect 5 ratings per image and attribute
on discrete scales of 3 to 6 levels (Fig. 6), measure agreement by the per-image standard deviation
in units of the attribute's dynamic range (Fig. 8), and prune images judged fake or lying in an
ambiguous middle range (Sec. 5.2.1). This module does the same with

- **imported** ratings: a CSV with columns `image, attribute, annotator, value`, where `value` is
  the level an annotator chose, 1 .. L on the attribute's scale (`read_annotations`). People's
  ratings of a run's images live in `DIR/annotations.csv` (`HUMAN_RATINGS`, written by the rating
  page of `searcher annotate`, read by `human_ratings`); an annotator who rates an image's
  attribute again changes their answer: the last row of an (image, attribute, annotator) wins;
- **simulated** ratings from a generator's truth (`simulate_annotations`): each annotator reports
  the level of truth + Gaussian noise, with a seeded bias of their own per attribute
  (`searcher transect` writes its own to `DIR/simulated_annotations.csv`, `SIMULATED_RATINGS`).

Where people rated, their ratings replace the simulated ones attribute by attribute (`overlay`).

A level ``l`` of an L-level scale is the normalised score ``(l - 1) / (L - 1)`` in [0, 1], the
paper's "normalized range" (so "Likely fake", level 4 of 5, is 0.75). `gender_presentation` keeps
this project's orientation: level 1 is clearly masculine, level 5 clearly feminine (the paper's
form lists Female first); it is a perception scale, not anyone's gender.

Example:
    >>> truth = pd.DataFrame({"skin_tone": [1.2, 5.8], "hair_length": [0.1, 0.9]})
    >>> ratings = simulate_annotations(truth, n_annotators=5, seed=0)
    >>> wide(aggregate(ratings)).round(1).to_dict("list")
    {'hair_length': [0.1, 0.9], 'skin_tone': [0.1, 0.9]}
"""

from __future__ import annotations

import csv
import io
import logging
import os
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np
import pandas as pd
from scipy.stats import chi2

from generators.base import Scale, Vocabulary
from searcher.errors import ParameterError

__all__ = [
    "COLUMNS",
    "HUMAN_RATINGS",
    "SIMULATED_RATINGS",
    "PruneReport",
    "aggregate",
    "agreement",
    "human_ratings",
    "krippendorff_alpha",
    "latent_fakeness",
    "overlay",
    "prune",
    "read_annotations",
    "simulate_annotations",
    "wide",
    "write_annotations",
]

COLUMNS = ("image", "attribute", "annotator", "value")
HUMAN_RATINGS = "annotations.csv"  # people's ratings of a run directory's images (`searcher annotate`)
SIMULATED_RATINGS = "simulated_annotations.csv"  # simulated ratings of a transect run's images (`searcher transect`)

_log = logging.getLogger("searcher.annotations")


def _default_vocabulary() -> Vocabulary:
    """The vocabulary of the default generator (`faces`), for callers who name no scales."""
    import generators

    return generators.vocabulary("faces")


def _scales(scales: Mapping[str, Scale] | None) -> Mapping[str, Scale]:
    """`scales`, or the default generator's when None."""
    return scales if scales is not None else _default_vocabulary().scales


def _scale(attribute: str, scales: Mapping[str, Scale]) -> Scale:
    if attribute not in scales:
        raise ParameterError(
            f"No annotation scale for attribute {attribute!r}. Known attributes: {', '.join(scales)}; "
            "pass scales={..., name: Scale(levels, low, high)} for others."
        )
    return scales[attribute]


def simulate_annotations(
    truth: pd.DataFrame,
    attributes: Sequence[str] | None = None,
    n_annotators: int = 5,
    noise: float = 0.1,
    bias: float = 0.05,
    scales: Mapping[str, Scale] | None = None,
    seed: int | Sequence[int] = 0,
) -> pd.DataFrame:
    """Ratings of `n_annotators` simulated annotators for every image (row of `truth`, keyed by its index).

    Annotator ``a`` rates image ``i`` at ``scale.level(x_i + (b_a + e_ai) * (high - low))`` with a
    per-annotator bias ``b_a ~ N(0, bias)`` and per-rating noise ``e_ai ~ N(0, noise)``, both in
    units of the attribute's dynamic range (the paper's median per-image std is about 0.1).

    Args:
        truth: one row per image, e.g. `Batch.truth`; its index is the image id.
        attributes: columns to rate (default: every column that has a scale).
        seed: an int or a sequence of ints; the ratings of one attribute depend only on `seed`,
            the attribute's name and `truth`.

    Returns:
        A long table with columns `image, attribute, annotator, value` (value: the level, 1 .. L).
    """
    if n_annotators < 1 or noise < 0 or bias < 0:
        raise ParameterError(f"Need n_annotators >= 1, noise >= 0 and bias >= 0. Got {n_annotators=}, {noise=}, {bias=} instead.")
    scales = _scales(scales)
    attributes = [c for c in truth.columns if c in scales] if attributes is None else list(attributes)
    missing = [a for a in attributes if a not in truth.columns]
    if missing:
        raise ParameterError(f"Attributes {missing} are not columns of the truth table. Columns: {', '.join(map(str, truth.columns))}.")
    frames = []
    for attribute in attributes:
        scale = _scale(attribute, scales)
        rng = np.random.default_rng([*np.atleast_1d(seed).tolist(), zlib.crc32(attribute.encode())])
        x = truth[attribute].to_numpy(float)
        offsets = rng.normal(0.0, bias, n_annotators)[None, :] + rng.normal(0.0, noise, (len(x), n_annotators))
        levels = scale.level(x[:, None] + offsets * (scale.high - scale.low))
        frames.append(pd.DataFrame({
            "image": np.repeat(truth.index.to_numpy(), n_annotators),
            "attribute": attribute,
            "annotator": np.tile(np.arange(n_annotators), len(x)),
            "value": levels.ravel().astype(np.int64),
        }))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(COLUMNS))


def latent_fakeness(z: np.ndarray) -> np.ndarray:
    """A simulated "fakeness" truth in [0, 1] for latent codes: how atypical ``||z||^2`` is under N(0, I_D).

    Generators look least real far from their training mass. The chi-square CDF of ``||z||^2``
    is uniform on the prior; its top 10% maps linearly to 0 .. 1, so about 2.5% of prior samples
    (the paper saw under 10%) and more of the far corners of transects reach "likely fake". A
    stand-in for the paper's realism question until people rate the images.
    """
    z = np.atleast_2d(np.asarray(z, float))
    return np.clip((chi2.cdf((z**2).sum(axis=1), z.shape[1]) - 0.9) / 0.1, 0.0, 1.0)


def read_annotations(source: str | os.PathLike | IO[str], scales: Mapping[str, Scale] | None = None) -> pd.DataFrame:
    """Reads ratings from a CSV with columns `image, attribute, annotator, value` and checks them.

    Every attribute needs a scale and every value must be a level 1 .. L of it. An annotator may
    rate the same image and attribute again (a corrected answer, appended to the file): the last
    row of each (image, attribute, annotator) is the one returned.

    One rating per line: a line that is not one (too few or too many fields, an empty field, a
    value that is not a whole number: the fragment a full disk or a killed writer leaves) is
    skipped, and one warning on the `searcher.annotations` logger names the file, counts the
    skipped lines and gives their numbers, so one torn line never costs the other ratings.
    """
    scales = _scales(scales)
    name, rows = _rating_rows(source)
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    table = pd.read_csv(io.StringIO(buf.getvalue())) if rows else pd.DataFrame(columns=list(COLUMNS))
    missing = [c for c in COLUMNS if c not in table.columns]
    if missing:
        raise ParameterError(f"The annotation CSV {name} lacks columns {missing}. It needs: {', '.join(COLUMNS)}.")
    table = table[list(COLUMNS)]
    for attribute, values in table.groupby("attribute")["value"]:
        scale = _scale(str(attribute), scales)
        bad = values[~values.isin(range(1, scale.levels + 1))]
        if len(bad):
            raise ParameterError(
                f"Annotations of {attribute!r} must be levels 1 .. {scale.levels}. Got {bad.iloc[0]} (and {len(bad) - 1} more) instead."
            )
    table = table.drop_duplicates(["image", "attribute", "annotator"], keep="last")
    return table.astype({"value": np.int64}).reset_index(drop=True)


def _rating_rows(source: str | os.PathLike | IO[str]) -> tuple[str, list[list[str]]]:
    """The name of `source`, and its header and ratings as CSV fields; every other line is logged and left out.

    Each line is parsed on its own, so a torn line (an unclosed quote included) never swallows the
    next. A header torn before its first rating (part of the header line, alone in the file) reads
    as no ratings. Blank lines are left out silently, as a CSV reader does.
    """
    if isinstance(source, (str, os.PathLike)):
        name, text = str(source), Path(source).read_bytes().decode("utf-8-sig", errors="replace")
    else:
        name, text = str(getattr(source, "name", "(a stream)")), source.read().removeprefix("\ufeff")
    lines = [(n, line.removesuffix("\r")) for n, line in enumerate(text.split("\n"), 1) if line.strip()]
    if not lines:
        return name, []
    (_, header), *rest = lines
    if not rest and ",".join(COLUMNS).startswith(header) and header != ",".join(COLUMNS):
        _log.warning("%s: line 1 is a torn header (%r), so the file holds no ratings yet", name, header)
        return name, []
    fields = next(csv.reader([header]))
    if any(c not in fields for c in COLUMNS):
        return name, [fields]  # read_annotations names the missing columns
    at = [fields.index(c) for c in COLUMNS]
    rows, skipped = [fields], []
    for number, line in rest:
        row = next(csv.reader([line]), [])
        why = _not_a_rating(row, len(fields), at)
        if why:
            skipped.append(f"line {number} ({why})")
        else:
            rows.append(row)
    if skipped:
        shown = ", ".join(skipped[:5]) + (f" and {len(skipped) - 5} more" if len(skipped) > 5 else "")
        _log.warning("%s: skipped %d line(s) that are not a rating, as a full disk or a killed writer leaves them: %s",
                     name, len(skipped), shown)
    return name, rows


def _not_a_rating(row: list[str], width: int, at: list[int]) -> str:
    """Why a CSV row is not one rating of a table `width` columns wide whose `image, attribute,
    annotator, value` are at `at` ("": it is one)."""
    if len(row) != width:
        return f"{len(row)} fields, expected {width}"
    if any(not row[i].strip() for i in at):
        return "an empty field"
    try:
        whole = float(row[at[-1]]).is_integer()
    except ValueError:
        whole = False
    return "" if whole else f"the value {row[at[-1]]!r} is not a level"


def human_ratings(directory: str | os.PathLike, scales: Mapping[str, Scale] | None = None) -> pd.DataFrame | None:
    """People's ratings of the images of a run directory (`DIR/annotations.csv`), or None when nobody rated.

    Numbered annotators are simulated ones (people's names start with a letter): a transect run
    made before its simulated ratings moved to `SIMULATED_RATINGS` wrote them here, and they are
    left out rather than taken for people's."""
    path = Path(directory) / HUMAN_RATINGS
    if not path.is_file():
        return None
    table = read_annotations(path, scales)
    table = table[~table["annotator"].astype(str).str.fullmatch(r"\d+")]
    return table.reset_index(drop=True) if len(table) else None


def overlay(simulated: pd.DataFrame, human: pd.DataFrame) -> pd.DataFrame:
    """People's ratings, plus the simulated ratings of the attributes nobody rated: for each attribute,
    one source only, so a mean never mixes simulated annotators with people."""
    rest = simulated[~simulated["attribute"].isin(set(human["attribute"]))]
    return pd.concat([human[list(COLUMNS)], rest[list(COLUMNS)]], ignore_index=True)


def write_annotations(annotations: pd.DataFrame, path: str | os.PathLike) -> None:
    """Writes ratings as the CSV `read_annotations` reads."""
    annotations[list(COLUMNS)].to_csv(path, index=False)


def aggregate(annotations: pd.DataFrame, scales: Mapping[str, Scale] | None = None) -> pd.DataFrame:
    """Mean, spread and agreement of the ratings, per image and attribute.

    Returns:
        A table indexed by `(image, attribute)` with columns `n` (ratings), `mean` and `std`
        (population std) in levels, `mode` (the most frequent level, the lower on a tie),
        `agreement` (fraction of ratings equal to the mode), and `score` = (mean - 1) / (L - 1)
        and `spread` = std / (L - 1), both in units of the dynamic range as in Fig. 8.
    """
    scales = _scales(scales)
    keys = ["image", "attribute"]
    grouped = annotations.groupby(keys)["value"]
    out = grouped.agg(n="size", mean="mean")
    out["std"] = grouped.std(ddof=0)
    counts = annotations.groupby([*keys, "value"]).size().rename("count").reset_index()
    top = counts.sort_values([*keys, "count", "value"], ascending=[True, True, False, True]).drop_duplicates(keys)
    top = top.set_index(keys)
    out["mode"] = top["value"]
    out["agreement"] = top["count"] / out["n"]
    span = out.index.get_level_values("attribute").map(lambda a: _scale(a, scales).levels - 1).to_numpy(float)
    out["score"] = (out["mean"] - 1.0) / span
    out["spread"] = out["std"] / span
    return out


def wide(aggregated: pd.DataFrame, column: str = "score") -> pd.DataFrame:
    """One row per image, one column per attribute, of an `aggregate` column (default: `score`)."""
    table = aggregated[column].unstack("attribute")
    table.columns.name = None
    return table


def agreement(annotations: pd.DataFrame, scales: Mapping[str, Scale] | None = None) -> pd.DataFrame:
    """How far annotators agree, per attribute (Sec. 4.3, Fig. 8): `annotators`, `images`, `ratings`,
    `spread` (median per-image std, units of the dynamic range, over images rated twice or more),
    `agreement` (mean fraction of an image's ratings equal to its mode) and Krippendorff's `alpha`.
    """
    per_image = aggregate(annotations, scales)
    shared = per_image[per_image["n"] > 1]
    grouped = annotations.groupby("attribute")
    out = pd.DataFrame({
        "annotators": grouped["annotator"].nunique(),
        "images": grouped["image"].nunique(),
        "ratings": grouped.size(),
        "spread": shared.groupby("attribute")["spread"].median(),
        "agreement": shared.groupby("attribute")["agreement"].mean(),
        "alpha": krippendorff_alpha(annotations),
    })
    out.index.name = "attribute"
    return out.reset_index()


def krippendorff_alpha(annotations: pd.DataFrame) -> pd.Series:
    """Krippendorff's alpha with the interval metric, per attribute: 1 - D_o / D_e.

    D_o is the mean squared difference between ratings of the same image (pairable images, with two
    or more ratings), D_e that between any two ratings; 1 is perfect agreement, 0 chance level.
    """
    out = {}
    for attribute, table in annotations.groupby("attribute"):
        groups = table.groupby("image")["value"]
        m = groups.transform("size").to_numpy()
        values = table["value"].to_numpy(float)[m > 1]
        dev = (values - groups.transform("mean").to_numpy()[m > 1]) ** 2
        m = m[m > 1]
        n = len(values)
        # sum over ordered pairs within an image of (x_i - x_j)^2 = 2 m sum (x_i - mean)^2
        observed = (2.0 * m * dev / (m - 1)).sum() / n if n > 1 else np.nan
        expected = 2.0 * ((values - values.mean()) ** 2).sum() / (n - 1) if n > 1 else np.nan
        out[attribute] = 1.0 - observed / expected if expected > 0 else np.nan
    return pd.Series(out, name="alpha", dtype=float)


@dataclass
class PruneReport:
    """What pruning kept, and how many each step removed, in order.

    Attributes:
        kept: the ids (images or transects) that survived.
        steps: one row per step: `criterion`, `removed` (by this step), `remaining` (after it).
    """

    kept: pd.Index
    steps: pd.DataFrame

    def __str__(self) -> str:
        total = int(self.steps["removed"].sum()) + len(self.kept)
        lines = [f"pruning: {len(self.kept)} of {total} kept"]
        lines += [f"  {r.criterion:<36} -{r.removed:<6} {r.remaining} left" for r in self.steps.itertuples()]
        return "\n".join(lines)


def prune(
    scores: pd.DataFrame,
    max_fakeness: float | None = 0.75,
    ambiguous: Mapping[str, tuple[float, float]] | None = None,
    fakeness: str = "fakeness",
) -> PruneReport:
    """Drops unrealistic and ambiguous images, as in Sec. 5.2.1.

    First every image whose mean `fakeness` score is >= `max_fakeness` ("likely fake", 0.75), then,
    attribute by attribute, every image whose score lies in the closed range `ambiguous[attribute]`.

    Args:
        scores: normalised scores, one row per image and one column per attribute (`wide(aggregate(...))`).
        max_fakeness: None skips the realism step.
        ambiguous: attribute -> (low, high) to drop; default the default generator's (`faces`:
            the paper's skin tone and gender [0.4, 0.6] and hair length [0.3, 0.5]).
    """
    if ambiguous is None:
        ambiguous = _default_vocabulary().ambiguous
    needed = ([fakeness] if max_fakeness is not None else []) + list(ambiguous)
    missing = [c for c in needed if c not in scores.columns]
    if missing:
        raise ParameterError(f"Cannot prune on {missing}: no such score column. Columns: {', '.join(map(str, scores.columns))}.")
    keep = pd.Series(True, index=scores.index)
    rows = []

    def step(criterion: str, drop: pd.Series) -> None:
        removed = keep & drop
        keep[removed] = False
        rows.append({"criterion": criterion, "removed": int(removed.sum()), "remaining": int(keep.sum())})

    if max_fakeness is not None:
        step(f"{fakeness} >= {max_fakeness:g}", scores[fakeness] >= max_fakeness)
    for attribute, (low, high) in ambiguous.items():
        if low > high:
            raise ParameterError(f"The ambiguous range of {attribute!r} must have low <= high. Got ({low}, {high}) instead.")
        step(f"{attribute} in [{low:g}, {high:g}]", scores[attribute].between(low, high))
    return PruneReport(kept=scores.index[keep.to_numpy()], steps=pd.DataFrame(rows, columns=["criterion", "removed", "remaining"]))

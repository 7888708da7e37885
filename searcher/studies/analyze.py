"""What goes with a target's failures, as tables (CSV) and plots (PNG): `analyze(DIR)`, the
library call behind `searcher analyze DIR`.

    analyze("runs/random")                            a campaign directory (campaign.sqlite)
    analyze("runs/transects", n_boot=200)             a transect directory (transects.csv)
    analyze("runs/bo", attributes=["skin_tone", "age"], bins=4, out="report")

The estimates, and why they are these, are `searcher.analysis.subgroups`'s. Rates are search-aware:
for an adaptive campaign without an audit sample nothing is written unless `--biased` asks for a
description of the searched trials (files suffixed `_biased`).

Writes to DIR/analysis (or --out): subgroups.csv, effects.csv, subgroups.png, effects.png; for
transects also ate.csv, and sensitivity.csv with sensitivity.png when an axis has more than two levels;
with people's ratings also agreement.csv (per attribute) and ratings.csv (mean level per image).

Bounded at scale: each bootstrap resample refits the effects on every trial, so resamples x trials
stay within `max_boot_rows` (`BOOT_ROWS`, 1,000 resamples of 10,000 trials; at least `MIN_BOOT`
resamples), and the summary says when fewer were drawn than asked. The bound lies above every
recorded analysis (docs/results.md: 8,000 transect images at 1,000 resamples), which it leaves unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from searcher.analysis.subgroups import estimate, highlights
from searcher.validation import check_int, checked

if TYPE_CHECKING:
    from searcher.campaign.result import CampaignResult

__all__ = ["BOOT_ROWS", "MIN_BOOT", "Analysis", "analyze"]

_BIASED_TITLE = "search trials, not population rates"
BOOT_ROWS = 10_000_000  # bootstrap resamples x trials refitted at most (a campaign of 100,000 trials: 100 resamples)
MIN_BOOT = 10  # resamples drawn whatever the size, fewer only when fewer are asked


@dataclass(eq=False)  # compares as the mapping of its tables
class Analysis(Mapping[str, pd.DataFrame]):
    """What `analyze` found: name -> table (a read-only mapping), the summary in words, the files
    written (none when an adaptive campaign gave no rates), and the bootstrap resamples drawn."""

    tables: dict[str, pd.DataFrame]
    lines: list[str]
    written: list[Path] = field(default_factory=list)
    n_boot: int = 0

    def __getitem__(self, name: str) -> pd.DataFrame:
        return self.tables[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.tables)

    def __len__(self) -> int:
        return len(self.tables)

    def summary(self) -> str:
        """The summary a person reads: where the rates come from, the rates, the largest effects."""
        return "\n".join(self.lines)


@checked("analyze")
def analyze(directory: str | Path, out: str | Path | None = None, attributes: Sequence[str] | None = None, bins: int = 3,
            n_boot: int = 1000, seed: int = 0, biased: bool = False, keep_pruned: bool = False,
            max_boot_rows: int = BOOT_ROWS, campaign: CampaignResult | None = None) -> Analysis:
    """Analyses a campaign or transect directory and writes its tables and plots.

    Args:
        directory: a campaign directory (campaign.sqlite) or a transect directory (transects.csv).
        out: where the files go (default `directory/analysis`).
        attributes: campaigns: truth columns (default: the generator's `vocabulary.analysed`, else
            all of its truth); transects: manipulated attributes (default: all, plus their pairwise intersections).
        bins: campaigns: numeric attributes with more values are cut at this many quantiles.
        n_boot, seed: bootstrap resamples of the logistic effects and their seed.
        max_boot_rows: resamples x trials drawn at most; over it, fewer resamples (at least `MIN_BOOT`).
        campaign: the campaign in `directory` already loaded (`load_campaign`), so that a caller
            holding it (the report) does not read the store again.
        biased: for an adaptive campaign, compute the tables on every judged trial, searched ones
            included, instead of on the audit sample (or, without one, instead of writing nothing);
            the files are suffixed `_biased` and the plot titles say so.
        keep_pruned: include pruned images: transects, the images and transects `searcher transect`
            (or people's ratings) pruned; campaigns, the images people rated likely fake.

    Returns:
        An `Analysis`: name -> table, `subgroups` (attribute, level, n, errors, rate, low, high) and `effects`
        (covariate, attribute, level, reference, coef, std, low, high) when written, for transects
        `ate` and, with an axis of more than two steps and probability scores, `sensitivity`; with
        people's ratings (DIR/annotations.csv) `agreement` (per attribute) and `ratings` (mean level
        per image); empty when an adaptive campaign has no audit sample and `biased` is False
        (nothing is written).
        Its `summary()` says where the rates come from and what they are, and how many resamples
        were drawn when `max_boot_rows` cut them.

    Raises:
        ParameterError: not a campaign or transect directory, unknown attributes, bad options, or
        no judged rows.
    """
    from searcher.figures.analysis import plot_effects, plot_sensitivity, plot_subgroups

    path = Path(directory)
    asked = check_int("n_boot", n_boot, 0, owner="analyze")
    cap = check_int("max_boot_rows", max_boot_rows, 1, owner="analyze")
    trials = _trials(path)
    n_boot = max(min(asked, MIN_BOOT), min(asked, cap // max(trials, 1)))
    found = estimate(path, attributes, bins, n_boot, seed, biased, keep_pruned, campaign)
    tables, lines, attrs, suffix = found.tables, found.lines, found.attributes, found.suffix
    if found.rate is None:
        return Analysis({}, lines, n_boot=n_boot)
    if n_boot < asked and "effects" in tables:
        lines.append(f"effects from {n_boot} bootstrap resamples, not the {asked} asked: each refits the model on the "
                     f"{trials:,} trials, and resamples x trials are capped at {cap:,} (at least {MIN_BOOT} resamples)")

    dest = Path(out) if out is not None else path / "analysis"
    dest.mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        table.to_csv(dest / f"{name}{suffix}.csv", index=False)
    tail = f" — {_BIASED_TITLE}" if suffix else ""
    plot_subgroups(tables["subgroups"], attrs, found.rate, f"failure rate by subgroup{tail}", dest / f"subgroups{suffix}.png")
    written = [f"{name}{suffix}.csv" for name in tables] + [f"subgroups{suffix}.png"]
    if "effects" in tables:
        plot_effects(tables["effects"], f"logistic effects on failure (eq. 2){tail}", dest / f"effects{suffix}.png")
        written.append(f"effects{suffix}.png")
    if "sensitivity" in tables:
        plot_sensitivity(tables["sensitivity"], dest / "sensitivity.png")
        written.append("sensitivity.png")
    lines += [*highlights(tables, attrs), f"wrote {dest}/: {', '.join(written)}"]
    return Analysis(tables, lines, [dest / w for w in written], n_boot)


def _trials(path: Path) -> int:
    """How many trials (a campaign) or images (a transect run) `path` holds, counted without
    loading them; 0 when it is neither (`estimate` says so)."""
    if (path / "campaign.sqlite").is_file():
        from searcher.campaign.store import Store

        store = Store(path, readonly=True)
        try:
            return store.count()
        finally:
            store.close()
    if (path / "transects.csv").is_file():
        with (path / "transects.csv").open("rb") as f:
            return max(sum(1 for _ in f) - 1, 0)  # rows below the header
    return 0



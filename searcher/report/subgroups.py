"""The subgroup part of a report: what `searcher analyze` finds (error rates by subgroup with
Wilson intervals, covariate-adjusted logistic effects, for transects treatment effects and
sensitivity), computed by `analyze` itself into a scratch folder, or read from the folder an
earlier `searcher analyze` wrote.

When the rates are not valid (an adaptive search without an audit sample), `analyze` writes no
table and says why; the report quotes its words.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from searcher.errors import ParameterError
from searcher.report.page import Section, png_figure, table
from searcher.tables import read_csv

if TYPE_CHECKING:
    from searcher.campaign.result import CampaignResult

__all__ = ["ANALYSIS_FILES", "analysis_section", "written_section"]

#: what `analyze` writes, in the order a reader wants it, with what each file is.
ANALYSIS_FILES = {
    "subgroups": "Failure rate by subgroup, with 95% Wilson intervals",
    "effects": "Logistic effects on failure (eq. 2): log odds against each attribute's reference level, with bootstrap std",
    "ate": "Treatment effects E^1 - E^0 (high side - low side of each axis), with 95% Newcombe intervals",
    "sensitivity": "Score sensitivity along each axis (eq. 3 of Denton et al.), with 95% t intervals",
    "agreement": "Agreement of people's ratings per attribute (Fig. 8 of Balakrishnan et al.)",
}
_ROWS = 60  # rows of a table shown in the page
_BOOT_ROWS = 400_000  # bootstrap resamples x trials a report refits at most (200 resamples of 2,000 trials)


def analysis_section(directory: Path, scratch: Path, n_boot: int, seed: int, sid: str = "subgroups",
                     title: str = "Subgroups and effects", campaign: CampaignResult | None = None) -> Section:
    """Runs `analyze` on a campaign or transect `directory` (its files go to `scratch`) and shows
    its summary lines, tables and plots; its refusal, when it gives one, is the section. A report
    keeps resamples x trials under `_BOOT_ROWS`: at 100,000 trials 10 resamples (`analyze`'s
    least), whose summary says so; the standard errors are tiny there and 10 say as much. The
    report passes the `campaign` it has loaded, so the store is read once."""
    from searcher.studies.analyze import analyze

    try:
        result = analyze(directory, out=scratch, n_boot=n_boot, seed=seed, max_boot_rows=_BOOT_ROWS, campaign=campaign)
    except ParameterError as exc:
        return Section(sid, title, paragraphs=["`searcher analyze` gives no rates here:"], lines=[str(exc)])
    section = written_section(scratch, sid, title) if result.written else Section(sid, title)
    section.lines = [line for line in result.lines if not line.startswith("wrote ")]  # the scratch folder is gone
    section.paragraphs = [f"As `searcher analyze {directory}` reports it (effects from {result.n_boot} bootstrap resamples; "
                          "`searcher analyze` writes these tables as CSV):"]
    return section


def written_section(folder: Path, sid: str = "subgroups", title: str = "Subgroups and effects") -> Section:
    """The tables and plots `analyze` wrote to `folder` (`*_biased` ones, from `--biased`, flagged as such)."""
    section = Section(sid, title)
    for name, caption in ANALYSIS_FILES.items():
        for suffix, note in (("", ""), ("_biased", "Written with --biased: these describe the searched trials, not a population.")):
            if (folder / f"{name}{suffix}.csv").is_file():
                section.tables.append(table(read_csv(folder / f"{name}{suffix}.csv", "searcher analyze"), caption, _ROWS, note))
            if (folder / f"{name}{suffix}.png").is_file():
                section.figures.append(png_figure(folder / f"{name}{suffix}.png", caption + (f" ({note})" if note else "")))
    return section

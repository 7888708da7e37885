"""One self-contained HTML page per run, to open in a browser or hand to someone who will not run
Python (`searcher report DIR`, `searcher.report(DIR)`).

    report("runs/bo")               # a campaign -> runs/bo/report.html
    report("runs/bo", retrain="r")  # ... with the retraining in r (default: runs/bo/retrain/, if there)
    report("demo")                  # a comparison (searcher compare): the table and figures per strategy
    report("runs/transects")        # a transect run: grids, drift, treatment effects
    report("runs/bo/analysis")      # the tables and plots an earlier `searcher analyze` wrote
    report("hard")                  # an export (searcher export): its README, counts, its images
    report("runs/gender500")        # a retraining (searcher retrain): gains, scores, subgroup errors

As fits the run: the configuration and a summary in words; failures against evaluations and the
failure modes; galleries of failures and of successes with their parameters, filtered and sorted
in the page; subgroup error rates with intervals and adjusted effects as `searcher analyze` finds
them (or its reason when they are not valid); transect grids and drift tables. For an export
(imagefolder, parquet or coco): its README.md, the images counted per label, failure mode and
source, the random control beside it (`OUT-control`) counted, and a gallery of the images with
their metadata columns. For a retraining: each added arm's gain over the base and the share of the
gap to balanced closed (summary.md's own lines), the scores per arm and test set (mean ± sd over
seeds), the subgroup errors with Wilson intervals, and retraining.png. A campaign's page also gives
each mode's caption, rule and fix rates from RUN/explain.json (`searcher explain RUN [--confirm]`;
read, never computed) and the retraining in RUN/retrain/. CSS, script, plots and thumbnails are
inline and a Content-Security-Policy blocks every outside fetch: no CDN, no server. The page is
built from the store each time, reading it only, so the report of a running campaign shows what
has landed so far.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from searcher.errors import ParameterError
from searcher.outputs import check_output_file
from searcher.packages import answer_calls
from searcher.report.build import KINDS, build, kind_of
from searcher.report.page import render, write
from searcher.validation import checked

__all__ = ["KINDS", "report"]


@checked("report")
def report(directory: str | Path, out: str | Path | None = None, limit: int = 400, n_boot: int = 200, seed: int = 0,
           retrain: str | Path | None = None) -> Path:
    """Writes the report of `directory` and returns where (default `directory/report.html`).

    Args:
        directory: a campaign, comparison, transect-run, analysis, export or retraining directory (see `KINDS`).
        out: the HTML file to write instead: a new path or a regular file, replaced (never a
            directory, a link, a FIFO or a device; see `searcher.outputs`).
        limit: at most this many images in each gallery (failures, successes); over it, the most different ones
            (for an export, the first in its order).
        n_boot, seed: bootstrap resamples of the logistic effects and their seed (`searcher analyze`
            uses 1,000; fewer keep the report quick, and the page says how many).
        retrain: a `searcher retrain` output to show on a campaign's page (default: the campaign's
            `retrain/` subfolder, where there is one).

    Raises:
        ParameterError: a bad value, a directory that is none of the kinds (named, with what was
            expected), a `retrain` for a page that is not a campaign's or that holds no retraining,
            or an `out` that is not a new path or a regular file; nothing is written then.
    """
    path = Path(directory)
    kind = kind_of(path)
    if retrain is not None and kind != "campaign":
        raise ParameterError(f"retrain= puts a retraining on a campaign's page; {path} is a{'n' if kind[0] in 'aeiou' else ''} {kind}.")
    dest = check_output_file(Path(out) if out is not None else path / "report.html")  # before the page is built
    with tempfile.TemporaryDirectory(prefix="searcher-report-") as scratch:
        page = build(path, kind, Path(scratch), limit, n_boot, seed, Path(retrain) if retrain is not None else None)
    write(render(page), dest)
    return dest


answer_calls(__name__, report)

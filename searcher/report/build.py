"""Which kind of directory a report is of, and the page of each kind, assembled from the parts
the other modules of this package make."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from searcher.errors import ParameterError
from searcher.export.source import Source, read_source
from searcher.report import campaigns, explained, exported, retraining, transects
from searcher.report.gallery import galleries, judged
from searcher.report.page import Page, Section, Table, table
from searcher.report.subgroups import analysis_section, written_section

__all__ = ["KINDS", "build", "kind_of"]

#: what a report can be of: the files that say a directory is one (any of them), and the command
#: that writes it. The first kind whose file is there wins: a campaign stays a campaign whatever lies beside its store.
KINDS = {"campaign": (("campaign.sqlite",), "searcher hunt"), "comparison": (("runs/*/campaign.sqlite",), "searcher compare"),
         "transect run": (("transects.csv",), "searcher transect"), "analysis": (("subgroups*.csv",), "searcher analyze"),
         "export": (tuple(exported.FILES.values()), "searcher export"), "retraining": (("scores.csv",), "searcher retrain")}


def kind_of(path: Path) -> str:
    """The kind of run in `path` (a key of `KINDS`), the first whose file is there.

    Raises:
        ParameterError: `path` is missing, or is none of them.
    """
    for kind, (patterns, _) in KINDS.items():
        if any(p.is_file() for pattern in patterns for p in path.glob(pattern)):
            return kind
    where = " (no such directory)" if not path.exists() else " (not a directory)" if not path.is_dir() else ""
    *others, last = (f"a{'n' if kind[0] in 'aeiou' else ''} {kind} ({' or '.join(patterns)}, from `{command}`)"
                     for kind, (patterns, command) in KINDS.items())
    expected = f"{', '.join(others)} or {last}"
    raise ParameterError(f"Nothing to report at {path}{where}: expected {expected}.")


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _gallery_sections(src: Source, limit: int, caption: Callable[[pd.Series], list[str]]) -> tuple[list[Section], list[Table]]:
    """The two gallery sections and, when any failure has a mode, the failure-mode table."""
    failures, successes = galleries(src, limit, caption)
    intro = {"failures": "Images the target got wrong, with every parameter and truth value (click one).",
             "successes": "Images the target got right."}
    sections = [Section(f"gallery-{g.id}", g.title, [intro[g.id]], gallery=g) for g in (failures, successes)]
    return sections, [campaigns.failure_modes(src, failures)] if failures.modes else []


def _errors(rows: pd.DataFrame) -> Section | None:
    """The target's errors and the exclusions, counted by message (none: no section)."""
    tables = [table(rows[c].dropna().value_counts().rename_axis(what).reset_index(name="count"), title, 20)
              for c, what, title in (("error", "message", "Target errors"), ("excluded", "reason", "Excluded"))
              if rows[c].notna().any()]
    if not tables:
        return None
    return Section("errors", "Errors and exclusions", [
        "Evaluations the target gave no answer for (never counted as failures) and images the judge or the pruning left out; "
        "neither is in the galleries."], tables=tables)


def _campaigns_page(path: Path, kind: str, scratch: Path, limit: int, n_boot: int, seed: int, retrain: Path | None) -> Page:
    retrained = retraining.campaign_retraining(path, retrain) if kind == "campaign" else None  # first: a bad `retrain` is refused at once
    src = read_source(path)
    results = src.results
    runs = campaigns.runs_table(results, src)
    curve = campaigns.curves(results)
    figures = campaigns.figures(runs, curve, scratch)
    found = Section("found", "Failures found", figures=figures)
    if kind == "comparison":
        summary = campaigns.comparison_summary(runs, results)
        per = runs.groupby(["strategy", runs["alpha"].fillna(-1)], sort=False)
        measured = [c for c in ("evaluations", "failures", "repeats", "regions_found", "modes", "failure_rate", "mean_pairwise") if c in runs]
        means = per[measured].mean().reset_index()
        means["alpha"] = means["alpha"].where(means["alpha"] >= 0)
        found.tables = [table(means.assign(campaigns=per.size().to_numpy()), "Per strategy (mean over seeds)"),
                        table(runs, "Per campaign", note="Counted as compare.csv counts: failures are distinct failing points.")]
        title = f"Comparison {path.resolve().name}: {', '.join(dict.fromkeys(runs['strategy']))}"
    else:
        summary = campaigns.campaign_summary(results[0], runs.iloc[0], src)
        c = results[0].config
        title = f"Campaign {path.resolve().name}: {c.get('strategy')} search, {c.get('generator')} → {c.get('target')}"
    gallery, modes = _gallery_sections(src, limit, results[0].vocabulary.caption)
    confirmed = None
    if kind == "campaign":  # explain reads one campaign's modes; a comparison's are cut over all its campaigns
        words = explained.read_explained(path, src.rows["mode"], len(results[0].trials))
        if modes:
            found.paragraphs.append(words.status)
            modes = [explained.join_modes(modes[0], words)]
        confirmed = explained.confirmation_section(words, path)
    found.tables += modes
    if kind == "comparison":
        subgroups = Section("subgroups", "Subgroups and effects", [
            "Each campaign analysed on its own, as `searcher analyze DIR/runs/NAME` does; rates are valid only for campaigns "
            "that sample uniformly (or have an audit sample), and the others say why not."],
            children=[analysis_section(r.dir, scratch / r.dir.name, n_boot, seed, f"subgroups-{r.dir.name}", r.dir.name, r)
                      for r in results])
    else:
        subgroups = analysis_section(path, scratch / "analysis", n_boot, seed, campaign=results[0] if results else None)
    sections = [found, *filter(None, [confirmed]), *gallery, subgroups, *filter(None, [retrained, _errors(src.rows)])]
    return Page(title, kind, str(path), summary, campaigns.configuration(results), sections, _now())


def _transect_page(path: Path, scratch: Path, limit: int, n_boot: int, seed: int) -> Page:
    import generators

    src = read_source(path)
    grids, drift = transects.transect_sections(path)
    gallery, _ = _gallery_sections(src, limit, generators.vocabulary(src.config["generator"]).caption)
    sections = [grids, analysis_section(path, scratch / "analysis", n_boot, seed), *gallery, drift,
                *filter(None, [_errors(src.rows)])]
    judged_rows = int(judged(src.rows).sum())
    summary = transects.transect_summary(path) + f" The galleries show the {judged_rows} kept images the target answered."
    return Page(f"Transects {path.resolve().name}: {src.config['target']}", "transect run", str(path), summary,
                transects.transect_config(path), sections, _now())


def _analysis_page(path: Path) -> Page:
    section = written_section(path)
    files = ", ".join(sorted(p.name for p in path.iterdir() if p.suffix in (".csv", ".png")))
    summary = (f"The tables and plots `searcher analyze` wrote to {path}: {files}. Run `searcher report` on the campaign or "
               "transect directory itself for the whole picture, galleries included.")
    return Page(f"Analysis {path}", "analysis", str(path), summary, [], [section], _now())


def _export_page(path: Path, limit: int) -> Page:
    export = exported.read_export(path)
    control = exported.control_of(export)
    contents = Section("contents", "What it holds", [
        "The exported images counted by their right label, their failure mode and where they came from (`source`: a search, "
        "an audit sample, a random control)."], tables=exported.count_tables(export, control))
    gallery = exported.export_gallery(export, limit)
    sections = [contents, Section(f"gallery-{gallery.id}", gallery.title, [
        "Every exported image with its metadata columns (click one): filter and sort them as a training pipeline would see them."],
        gallery=gallery)]
    if export.readme:
        sections.append(Section("readme", "README.md", ["The README.md the export carries, as written:"], lines=[export.readme]))
    text = export.readme.split("\n---\n", 1)[-1] if export.readme.startswith("---\n") else export.readme  # past the dataset card's YAML
    heading = text.partition("\n")[0].removeprefix("# ").strip() if text.startswith("# ") else export.fmt
    return Page(f"Export {path.resolve().name}: {heading}", "export", str(path), exported.export_summary(export, control), [],
                sections, _now())


def _retraining_page(path: Path) -> Page:
    scores, groups = retraining.read_retraining(path)
    return Page(f"Retraining {path.resolve().name}", "retraining", str(path), retraining.retraining_summary(scores),
                retraining.retraining_config(scores), retraining.retraining_sections(path, scores, groups), _now())


def build(path: Path, kind: str, scratch: Path, limit: int, n_boot: int, seed: int, retrain: Path | None = None) -> Page:
    """The page of the `kind` directory `path`; `scratch` is an empty folder for the plots on their
    way in; `retrain` a `searcher retrain` output for a campaign's page (else its `retrain/`, if any)."""
    if kind in ("campaign", "comparison"):
        return _campaigns_page(path, kind, scratch, limit, n_boot, seed, retrain)
    if kind == "transect run":
        return _transect_page(path, scratch, limit, n_boot, seed)
    if kind == "export":
        return _export_page(path, limit)
    if kind == "retraining":
        return _retraining_page(path)
    return _analysis_page(path)

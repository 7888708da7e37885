"""The retraining part of a report: what a `searcher retrain` directory says (scores.csv,
groups.csv, retraining.png), with the gains and the share of the gap to balanced closed computed
by the harness's own functions, so the page states them as summary.md does. The page of a
retraining directory is made of it, and so is the retraining section of a campaign's page (its
`retrain/` subfolder, where `searcher fix` writes one, or a directory given).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from searcher.errors import ParameterError
from searcher.report.page import Section, Table, png_figure, table
from searcher.retrain.harness import ARMS, gains, score_table, summary_lines
from searcher.tables import read_csv

__all__ = ["FOLDER", "campaign_retraining", "read_retraining", "retraining_config", "retraining_sections", "retraining_summary"]

FOLDER = "retrain"
"""Where a campaign's page looks for a retraining on its failures, inside the campaign's directory."""

_COLUMNS = {"scores.csv": ("arm", "seed", "test", "train_size", "accuracy", "balanced_accuracy"),
            "groups.csv": ("arm", "test", "group", "n", "errors", "sd", "error", "ci_low", "ci_high")}


def _read(path: Path) -> pd.DataFrame:
    frame = read_csv(path, "searcher retrain")
    missing = [c for c in _COLUMNS[path.name] if c not in frame.columns]
    if missing or frame.empty:
        raise ParameterError(f"{path} {'lacks the columns ' + ', '.join(missing) if missing else 'is empty'}: expected the "
                             f"{path.name} `searcher retrain` writes ({', '.join(_COLUMNS[path.name])}).")
    return frame


def read_retraining(directory: Path) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """scores.csv (arm x seed x test set) and groups.csv (errors per subgroup pooled over seeds, None when absent).

    Raises:
        ParameterError: either file is no CSV, lacks the columns `searcher retrain` writes, or holds no rows.
    """
    groups = directory / "groups.csv"
    return _read(directory / "scores.csv"), _read(groups) if groups.is_file() else None


def _sizes(scores: pd.DataFrame) -> pd.DataFrame:
    """Training images per seed (rows) and arm (columns)."""
    return scores.drop_duplicates(["seed", "arm"]).pivot(index="seed", columns="arm", values="train_size")


def retraining_config(scores: pd.DataFrame) -> list[tuple[str, str]]:
    """What was trained: the arms, the seeds, the test sets and each arm's training images."""
    arms = [a for a in ARMS if a in set(scores["arm"])]
    sizes = _sizes(scores).iloc[0]
    return [("arms", ", ".join(arms)), ("seeds", ", ".join(str(s) for s in sorted(scores["seed"].unique()))),
            ("test sets", ", ".join(dict.fromkeys(scores["test"]))),
            ("training images", ", ".join(f"{a} {int(sizes[a])}" for a in arms))]


def _added(scores: pd.DataFrame) -> str:
    """How many images the added arms add, from the training sizes (balanced has the base's size), or "" when it cannot be told."""
    sizes = _sizes(scores)
    added = [a for a in ("hard", "random", "spread") if a in sizes]
    ref = next((a for a in ("base", "balanced") if a in sizes), None)
    if ref is None or not added:
        return ""
    return f"; {', '.join(added)} each add {int((sizes[added[0]] - sizes[ref]).iloc[0])} images to the base's {int(sizes[ref].iloc[0])}"


def _gain_words(scores: pd.DataFrame, test: str) -> str:
    """The gains over the base on `test` and the share of the gap to balanced closed, as `harness.gains` finds them."""
    g = gains(scores, test)
    if not g:
        return f"On the {test} test set there is no base arm to measure a gain from."
    words = f"On the {test} test set, balanced accuracy gained over the base (mean of the per-seed gains): " + ", ".join(
        f"{arm} {g[f'gain_{arm}']:+.1%}" for arm in ("hard", "spread", "random", "balanced") if f"gain_{arm}" in g) + "."
    closed = [f"{arm} {g[f'gap_closed_{arm}']:.0%}" for arm in ("hard", "spread", "random") if f"gap_closed_{arm}" in g]
    return words + (f" Share of the gap to balanced closed: {', '.join(closed)}." if closed else "")


def retraining_summary(scores: pd.DataFrame) -> str:
    """The paragraph a reader starts from: what was trained and tested, and what the added images bought on each test set."""
    arms = [a for a in ARMS if a in set(scores["arm"])]
    tests = list(dict.fromkeys(scores["test"]))
    head = (f"`searcher retrain` trained {scores.drop_duplicates(['arm', 'seed']).shape[0]} models with one recipe, differing in "
            f"their data only: the arms {', '.join(arms)} on {scores['seed'].nunique()} seeds{_added(scores)}; each was tested on the "
            f"{', '.join(tests)} test set{'s' if len(tests) > 1 else ''}.")
    return " ".join([head, *(_gain_words(scores, t) for t in tests)])


def _pm(mean: float, sd: float) -> str:
    return f"{mean:.1%} ± {0 if pd.isna(sd) else sd:.1%}"


def _score_table(scores: pd.DataFrame) -> Table:
    """Balanced accuracy and accuracy per arm and test set, mean ± sd over seeds."""
    balanced, plain = score_table(scores, "balanced_accuracy"), score_table(scores, "accuracy")
    size = scores.groupby(["arm", "test"])["train_size"].first()
    frame = pd.DataFrame({
        "arm": balanced["arm"], "test set": balanced["test"],
        "balanced accuracy": [_pm(m, s) for m, s in zip(balanced["mean"], balanced["std"])],
        "accuracy": [_pm(m, s) for m, s in zip(plain["mean"], plain["std"])],
        "seeds": balanced["count"], "training images": [int(size[a, t]) for a, t in zip(balanced["arm"], balanced["test"])]})
    return table(frame, "Scores per arm and test set (mean ± sd over seeds)",
                 note="scores.csv has each seed; balanced accuracy is the mean recall over the labels.")


def _group_tables(groups: pd.DataFrame) -> list[Table]:
    """Per test set: each subgroup's error under each arm, pooled over seeds, with its Wilson interval and the per-seed sd."""
    order = {a: i for i, a in enumerate(ARMS)}
    tables = []
    for test, grp in groups.groupby("test", sort=False):
        grp = grp.assign(first=grp["group"].map({g: i for i, g in enumerate(dict.fromkeys(grp["group"]))}), rank=grp["arm"].map(order))
        grp = grp.sort_values(["first", "rank"], kind="stable")
        frame = pd.DataFrame({
            "group": grp["group"], "arm": grp["arm"], "errors / n": [f"{e}/{n}" for e, n in zip(grp["errors"], grp["n"])],
            "error": [f"{e:.1%}" for e in grp["error"]],
            "95% Wilson interval": [f"[{lo:.1%}, {hi:.1%}]" for lo, hi in zip(grp["ci_low"], grp["ci_high"])],
            "sd over seeds": [f"{0 if pd.isna(s) else s:.1%}" for s in grp["sd"]]})
        tables.append(table(frame, f"Error by subgroup, {test} test set"))
    return tables


def retraining_sections(directory: Path, scores: pd.DataFrame, groups: pd.DataFrame | None) -> list[Section]:
    """The scores (summary.md's own lines, the table and retraining.png) and the subgroup errors."""
    figure = directory / "retraining.png"
    figures = [png_figure(figure, "Left: balanced accuracy per arm and test set (mean, sd over seeds, each seed a dot). Right: the "
                          "first test set's subgroup errors per arm, with Wilson intervals.")] if figure.is_file() else []
    sections = [Section("scores", "Scores", ["What retraining bought, as `summary.md` states it:"], lines=summary_lines(scores),
                        tables=[_score_table(scores)], figures=figures)]
    if groups is not None:
        sections.append(Section("groups", "Errors by subgroup", [
            "Where the errors fall: each subgroup's error pooled over seeds, with its 95% Wilson interval and the sd of the "
            "per-seed rates (`groups.csv`)."], tables=_group_tables(groups)))
    return sections


def campaign_retraining(campaign: Path, directory: Path | None = None) -> Section | None:
    """The retraining section of a campaign's page: the summary in words, then the scores and the
    subgroup errors (`retraining_sections`), of `directory` or else of the campaign's `retrain/`
    subfolder; None when neither is given nor there. A subfolder that holds no retraining yet (or
    a broken one) is said in one line, since the campaign's page stands without it.

    Raises:
        ParameterError: `directory` was given and holds no `searcher retrain` output.
    """
    where = directory if directory is not None else campaign / FOLDER
    if directory is None and not where.is_dir():
        return None
    try:
        if not (where / "scores.csv").is_file():
            raise ParameterError(f"{where} holds no scores.csv: give a directory `searcher retrain` wrote to, or let it finish.")
        scores, groups = read_retraining(where)
    except ParameterError as exc:
        if directory is not None:
            raise
        return Section("retraining", "Retraining", [f"No retraining to show: {exc}"])
    return Section("retraining", "Retraining", [retraining_summary(scores), f"Its files are in `{where}` (`searcher report {where}` "
                                                "gives it a page of its own)."], children=retraining_sections(where, scores, groups))

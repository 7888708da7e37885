"""The failure modes in words on a campaign's page: each mode's caption, rule, precision and
coverage as `searcher explain RUN` wrote them to RUN/explain.json, joined on the mode to the
page's failure-mode table, and after `searcher explain RUN --confirm` each mode's fix rates, worded
as the command prints them (`searcher.studies.confirm.fix_words`).

The report only reads explain.json: it never fits a rule nor asks the target anything (that is
`explain`'s work, and a report stays read-only and quick). An explain.json of an earlier state of
the campaign (it ran on since: other failure counts per mode, or another number of evaluations
where the file records it) is said to be stale in one line instead of captioning modes it does not
describe.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from searcher.analysis.explain import FILE, share_text
from searcher.report.page import Cell, Section, Table
from searcher.studies.confirm import FOLDER, fix_words, unconfirmed_lines

__all__ = ["Explained", "confirmation_section", "join_modes", "read_explained", "rule_text"]

_KEYS = ("mode", "failures", "rule", "caption", "precision", "coverage")  # what every record of explain.json holds


@dataclass
class Explained:
    """What a campaign's explain.json says of its modes as they are now.

    Attributes:
        records: mode -> its explain.json record; empty when the file is absent, unreadable or stale.
        status: one line for the page: what the captions are, or why there are none and how to get them.
    """

    records: dict[int, dict[str, Any]] = field(default_factory=dict)
    status: str = ""

    @property
    def confirmed(self) -> bool:
        """Whether the records carry the fix rates of `searcher explain --confirm`."""
        return any("fix_rates" in r for r in self.records.values())


def read_explained(directory: Path, modes: pd.Series, evaluations: int) -> Explained:
    """`directory`/explain.json checked against the campaign as the page counts it: `modes` (per
    trial, its failure mode; -1 for none) and `evaluations` (its trials). Stale when a mode's
    failures differ, or when the file records another number of evaluations (`trials`)."""
    path = directory / FILE
    command = f"`searcher explain {directory}`"
    if not path.is_file():
        return Explained(status=f"{command} puts each failure mode here in words: the rule over the generator's parameters that "
                         "sets its failures apart from the passes, a caption, the rule's precision and coverage (`--confirm` adds "
                         "fix rates).")
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
        missing = sorted({k for r in records for k in _KEYS if k not in r})
        if missing:
            raise ValueError(f"records without {', '.join(missing)}")
        by_mode = {int(r["mode"]): r for r in records}
        stored = {m: int(r["failures"]) for m, r in by_mode.items()}
    except (OSError, ValueError, TypeError) as exc:
        return Explained(status=f"{path} cannot be read ({exc}); {command} writes it again.")
    counts = {int(m): int(n) for m, n in modes[modes >= 0].value_counts().items()}
    seen = {r["trials"] for r in records if r.get("trials") is not None}
    confirmed = any("fix_rates" in r for r in records)
    if stored != counts or seen - {evaluations}:
        def state(modes: Mapping[int, int], trials: Any) -> str:
            return f"{len(modes)} failure modes, {sum(modes.values())} failures" + (f", {trials} evaluations" if seen else "")

        return Explained(status=f"{FILE} is of an earlier state of this campaign ({state(stored, max(seen, default=''))} then; "
                         f"{state(counts, evaluations)} now), so its captions are not shown: `searcher explain {directory}"
                         f"{' --confirm' if confirmed else ''}` puts the modes as they are now in words.")
    confirm = "" if confirmed else f" (`searcher explain {directory} --confirm` adds fix rates)"
    return Explained(by_mode, f"The captions and rules are {command}'s ({FILE}){confirm}: each rule bounds the "
                     "generator's parameters in their own units (both ends included; a parameter not named is free), its "
                     "precision is the share of the campaign's distinct judged points inside it that fail, its coverage the "
                     "share of the mode's failures inside it, each with a Wilson 95% interval.")


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def rule_text(rule: Mapping[str, list[Any]] | None) -> str:
    """A rule of explain.json as written, in the parameters' own names and units: `yaw ∈ [38, 90];
    eyewear ∈ {sunglasses}`; "-" for a mode without a rule or a rule with no side."""
    if not rule:
        return "-"
    return "; ".join(f"{name} ∈ [{_number(bound[0])}, {_number(bound[1])}]"
                     if len(bound) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in bound)
                     else f"{name} ∈ {{{', '.join(map(str, bound))}}}" for name, bound in rule.items())


def join_modes(modes: Table, explained: Explained) -> Table:
    """The page's failure-mode table (first column the mode) with each mode's caption, rule,
    precision and coverage after its failures; the table as it is without records."""
    if not explained.records:
        return modes
    at = modes.columns.index("failures") + 1
    rows = []
    for row in modes.rows:
        r = explained.records[int(row[0])]
        words = [Cell(r["caption"], "caption"), rule_text(r["rule"]), share_text(r["precision"]), share_text(r["coverage"])]
        rows.append([*row[:at], *words, *row[at:]])
    columns = [*modes.columns[:at], "in words", "rule", "precision [95% interval]", "coverage [95% interval]", *modes.columns[at:]]
    return Table(modes.caption, columns, rows, modes.note)


def confirmation_section(explained: Explained, directory: Path) -> Section | None:
    """Each mode's fix rates after `searcher explain --confirm`: every attribute of its rule set
    back and the control, with where each was set, its fix rate and what was re-rendered; then
    what was not set back and why. None before `--confirm` (or without current records)."""
    if not explained.confirmed:
        return None
    rates, unset = [], []
    for mode, r in sorted(explained.records.items()):
        rates += [[str(mode), w.attribute, Cell("control", "control") if w.control else "in the rule", w.setting, w.rate, w.counts]
                  for w in fix_words(r)]
        unset += [[str(mode), line] for line in unconfirmed_lines(r)]
    tables = [Table("Fix rates", ["mode", "attribute", "role", "set", "fix rate [95% interval]", "evaluations"], rates,
                    "The fix rate is the share of the re-rendered failures the target now gets right; target errors and "
                    "ambiguous images are left out of it.")] if rates else []
    tables += [Table("Not set back", ["mode", "why"], unset)] if unset else []
    return Section("confirmed", "Causes confirmed by intervention", [
        f"`searcher explain {directory} --confirm` re-rendered each mode's failures with one attribute of its rule set back "
        "to where the campaign's passes lie, everything else held, and asked the target again. The control is the parameter "
        "outside the rule on which the passes lie farthest from the mode's failures, set to where the passes lie: the largest "
        "change the search says is not the cause. A cause fixes far more failures than the control; a control that fixes "
        f"failures says that any large change moves the target. The re-renders are stored in `{directory / FOLDER}`."],
        tables=tables)

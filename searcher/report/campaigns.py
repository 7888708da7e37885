"""The campaign and comparison parts of a report: each campaign's numbers counted as `searcher
compare` counts them (distinct failing points, repeats, failure modes), the summary in words, the
configuration, failures against evaluations, and the failure modes with examples.

Everything is counted from the stores as they are now, so the report of a campaign or comparison
still running shows what has landed so far and says so.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from searcher.analysis.modes import diversity, new_failures
from searcher.campaign import CampaignResult
from searcher.campaign.unseen import audit_judged, unseen_sentence
from searcher.export.source import Source
from searcher.report.gallery import Gallery
from searcher.report.page import Examples, Figure, Table, png_figure

__all__ = ["campaign_summary", "comparison_summary", "configuration", "curves", "failure_modes", "figures", "runs_table"]

_EXAMPLES = 4  # thumbnails per failure mode


def runs_table(results: Sequence[CampaignResult], src: Source) -> pd.DataFrame:
    """One row per campaign, with the columns of compare.csv (strategy, alpha, seed, evaluations,
    errors, failure_rate, failures, repeats, mean_pairwise, modes, ...) and its name, budget and exclusions."""
    modes = src.rows[src.rows["mode"] >= 0].groupby("campaign")["mode"].nunique()
    rows = []
    for r in results:
        t, c = r.trials, r.config
        row = {"campaign": r.dir.name, "strategy": c.get("strategy"), "alpha": c.get("alpha"), "seed": c.get("seed"),
               "evaluations": len(t), "budget": c.get("budget")}
        if len(t):
            row |= {"errors": int(t["error"].notna().sum()), "excluded": int(t["excluded"].notna().sum()),
                    "failure_rate": float(new_failures(t).mean()), **diversity(t), "modes": int(modes.get(r.dir.name, 0))}
        rows.append(row)
    return pd.DataFrame(rows)


def curves(results: Sequence[CampaignResult]) -> pd.DataFrame:
    """Distinct failures found against evaluations, per campaign (the curves.csv of `compare`)."""
    parts = [pd.DataFrame({"strategy": r.config.get("strategy"), "alpha": r.config.get("alpha"), "seed": r.config.get("seed"),
                           "evaluation": np.arange(1, len(r.trials) + 1), "failures": np.cumsum(new_failures(r.trials))})
             for r in results if len(r.trials)]
    return pd.concat(parts, ignore_index=True)


def figures(table: pd.DataFrame, curve: pd.DataFrame, tmp: Path) -> list[Figure]:
    """Failures against evaluations (Fig. 4a of McDuff et al.); for several campaigns also the
    figures `compare` draws: failures and breadth per strategy and, when several alphas ran, failures against alpha."""
    from searcher.figures import pyplot, save
    from searcher.figures.compare import plot_comparison, plot_failure_curves

    if len(table) > 1:
        captions = {"failures_vs_evaluations": "Distinct failures found against evaluations: mean over seeds and a band of one sd.",
                    "failures_vs_alpha": "Failures, % of evaluations, against BO's diversity weight alpha.",
                    "diversity": "Failures found and breadth (failure modes, or planted regions) per strategy: mean and one sd over seeds."}
        return [png_figure(p, captions[p.stem]) for p in plot_comparison(table, curve, tmp)]
    fig, ax = pyplot().subplots(figsize=(6, 3.4))
    plot_failure_curves(ax, curve)
    ax.set_ylabel("distinct failures found")
    return [png_figure(save(fig, tmp / "curve.png", dpi=100), "Distinct failures found against evaluations.")]


def failure_modes(src: Source, gallery: Gallery) -> Table:
    """Per failure mode: how many failures, when it was first hit (and, in a comparison, by which
    campaigns), and the first few shown in the gallery, with a link that filters the gallery to it."""
    fails = src.rows[src.rows["mode"] >= 0]
    several = src.rows["campaign"].nunique() > 1
    evaluation = src.rows.groupby("campaign", sort=False).cumcount().add(1)
    mode_at = gallery.columns.index("mode")
    rows = []
    for mode, grp in fails.groupby("mode"):
        first = evaluation[grp.index].idxmin()  # the earliest evaluation, whichever campaign made it
        examples = [uri for uri, r in zip(gallery.images, gallery.rows) if r[mode_at] == mode][:_EXAMPLES]
        found = f"#{evaluation[first]}" + (f" of {grp.loc[first, 'campaign']}" if several else "")
        hit = [", ".join(f"{k} {v}" for k, v in grp["campaign"].value_counts().sort_index().items())] if several else []
        rows.append([str(mode), str(len(grp)), found, *hit, Examples(examples, int(mode))])
    columns = ["mode", "failures", "first found at", *(["failures per campaign"] if several else []), "examples (click: filter the gallery)"]
    return Table("Failure modes", columns, rows,
                 "Modes are Ward clusters of the uniform strategies' failures (of all failures if none ran) in the unit cube, "
                 "as `searcher compare` cuts them; each failure joins the nearest cluster. Repeated failing points are not counted.")


def _when(results: Sequence[CampaignResult]) -> str:
    """When the evaluations ran, from the stored timestamps (Julian days, UTC)."""
    created = pd.concat([r.trials["created"] for r in results if len(r.trials)])
    start, end = ((created.agg(f) - 2440587.5) * 86400 for f in ("min", "max"))
    fmt = "%Y-%m-%d %H:%M"
    first, last = (datetime.fromtimestamp(s, UTC) for s in (start, end))
    last_text = last.strftime("%H:%M" if last.date() == first.date() else fmt)
    return f"They ran from {first.strftime(fmt)} to {last_text} UTC ({_duration(end - start)})."


def _duration(seconds: float) -> str:
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def campaign_summary(result: CampaignResult, row: pd.Series, src: Source) -> str:
    """The one paragraph a reader starts from: what was searched and how, how far it got, what it found."""
    c, t = result.config, result.trials
    fixed = ", ".join(f"{k}={v}" for k, v in (c.get("fix") or {}).items())
    searched = f"{len(src.space.names)} parameters" + (f" ({fixed} held fixed)" if fixed else "")
    landed = (f"All {row['evaluations']} evaluations of its budget have landed" if row["evaluations"] >= row["budget"] else
              f"{row['evaluations']} of its {row['budget']} evaluations have landed so far (the campaign is running, or was "
              f"stopped: `searcher hunt --resume {result.dir}` continues it)")
    judged = int(t["loss"].notna().sum())
    audit = int(t["source"].eq("audit").sum())
    found = (f"{_count(int(row['failures']), 'failure')} at distinct points ({row['failures'] / max(judged, 1):.1%} of the {judged} judged)"
             + (f" and {_count(int(row['repeats']), 'repeat')} of an earlier point" if row["repeats"] else "")
             + f", in {_count(int(row['modes']), 'failure mode')}")
    return (f"A {c.get('strategy')} search of the {c.get('generator')} generator's {searched} for failures of the "
            f"{c.get('target')} target ({src.task}), seed {c.get('seed')}" + (f", {audit} evaluations from a uniform audit sample" if audit else "")
            + f". {landed}: {found}; {_count(int(row['errors']), 'evaluation')} got no answer from the target (never counted as "
            f"failures) and {row['excluded']} {'was' if row['excluded'] == 1 else 'were'} excluded as ambiguous. "
            f"{unseen_sentence(c.get('strategy'), judged, audit_judged(t))} {_when([result])}")


def comparison_summary(table: pd.DataFrame, results: Sequence[CampaignResult]) -> str:
    """The paragraph of a comparison: which strategies on what, how far, and what each found on average."""
    c = results[0].config
    strategies = list(dict.fromkeys(table["strategy"]))
    per = table.groupby("strategy", sort=False)[["failures", "modes"]].mean().reindex(strategies)
    landed, budget = int(table["evaluations"].sum()), int(table["budget"].sum())
    progress = ("all have landed" if landed >= budget else
                f"{landed} of {budget} have landed so far (the comparison is running, or was stopped: run the same "
                "`searcher compare` again to resume it)")
    return (f"A comparison of {', '.join(strategies)} searching the {c.get('generator')} generator for failures of the "
            f"{c.get('target')} target: {_count(len(table), 'campaign')} ({_count(table['seed'].nunique(), 'seed')}), "
            f"{budget} evaluations in all; {progress}. Distinct failures found, mean over seeds: "
            + ", ".join(f"{s} {v:.1f}" for s, v in per["failures"].items())
            + "; failure modes hit: " + ", ".join(f"{s} {v:.1f}" for s, v in per["modes"].items())
            + f"; {_count(int(table['errors'].sum()), 'evaluation')} got no answer from the target. {_when(results)}")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def configuration(results: Sequence[CampaignResult]) -> list[tuple[str, str]]:
    """The stored configuration, key by key; in a comparison, the keys its campaigns differ in list each value once."""
    keys = dict.fromkeys(k for r in results for k in r.config)
    out = []
    for key in keys:
        values = list(dict.fromkeys(_text(r.config.get(key)) for r in results))
        out.append((key, values[0] if len(values) == 1 else "varies: " + ", ".join(values)))
    return out

"""What goes with a target's failures, estimated from a stored campaign or transect run:
`estimate(DIR)` gives the tables and the summary that `searcher.studies.analyze` (the library call
behind `searcher analyze DIR`) writes and plots.

Why (Balakrishnan et al., docs/papers.md#balakrishnan): the failure rate of each subgroup (E_j^s of
eq. 1, with Wilson intervals; intersections as in Fig. 13) shows who fails, but on an observational
sample it can blame an attribute that only travels with the cause. A logistic regression of the
failure on all the binned attributes (eq. 2; coefficients with bootstrap errors as in Fig. 15) holds
the others fixed, and transects, where the attributes are set by design, give the treatment effect
E_j^1 - E_j^0 directly; where an axis has more than two steps the score sensitivity of Denton et al.
(docs/papers.md#denton, eq. 3) is drawn along it.

Rates are search-aware: an adaptive search (bo, tpe, cmaes) samples failures on purpose, so its
trials are no population. Rates then come from the campaign's uniform audit sample
(`searcher hunt --audit F`) only; without one there are none unless `biased` asks for a
description of the searched trials (tables suffixed `_biased`). Trials whose target gave no answer
or that were excluded as ambiguous are dropped and counted; a failure is a loss >= 0.5.

People's ratings (DIR/annotations.csv, from `searcher annotate`) are used where they exist, as the
paper uses its annotators' (Sec. 4.3, 5.2.1): images whose mean fakeness reaches "likely fake" are
pruned; in a campaign, a rated attribute is the mean level people chose on its scale instead of
the generator's truth (trials nobody rated on an analysed attribute are dropped and counted); in a
transect run, people's ratings replace the simulated ones attribute by attribute before the images
are pruned again (fakeness and the ambiguous ranges). Their agreement is reported as in Fig. 8.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from generators.base import Scale
from searcher.analysis import annotations as ann
from searcher.analysis.transects import TRANSECT_CONFIG
from searcher.errors import ParameterError
from searcher.objective import FAILURE
from searcher.tables import read_csv
from searcher.validation import check_int, check_names

if TYPE_CHECKING:
    from searcher.campaign.result import CampaignResult

__all__ = ["Estimates", "estimate", "highlights"]

OUTCOME = "failure"


@dataclass
class _Rows:
    """The judged rows of one directory: `OUTCOME` (0/1), the attribute columns and, for campaigns,
    `strategy` (the strategy of each trial, "audit" for the audit sample)."""

    kind: str  # "campaign" or "transects"
    frame: pd.DataFrame
    valid: list[str]
    default: list[str]
    note: str
    strategy: str | None = None
    human: _Human | None = None


@dataclass
class _Human:
    """What people's ratings changed: the attributes whose values are their mean levels (campaigns),
    the tables (agreement, ratings), the summary lines and, for transects, the images now pruned."""

    rated: list[str]
    tables: dict[str, pd.DataFrame]
    lines: list[str]
    pruned: pd.Series | None = None  # transects: which images are pruned now


def _people(ratings: pd.DataFrame, scales: Mapping[str, Scale]) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """The tables `agreement` (per attribute) and `ratings` (mean level per image), and lines saying
    whose ratings these are and how far they agree."""
    means = ann.wide(ann.aggregate(ratings, scales), "mean")
    agreement = ann.agreement(ratings, scales)
    names = sorted(map(str, ratings["annotator"].unique()))
    lines = [f"human ratings ({ann.HUMAN_RATINGS}) from {len(names)} annotator(s) ({', '.join(names)}): {len(ratings)} ratings "
             f"of {ratings['image'].nunique()} images"]
    lines += [f"  {r.attribute}: {r.images} image(s), {r.annotators} annotator(s)"
              + (f", median spread {r.spread:.2f} of the range (Fig. 8)" if pd.notna(r.spread) else "")
              + (f", Krippendorff alpha {r.alpha:.2f}" if pd.notna(r.alpha) else "") for r in agreement.itertuples()]
    return {"agreement": agreement, "ratings": means.reset_index()}, lines


def _pruned_images(ratings: pd.DataFrame, scales: Mapping[str, Scale], ambiguous: Mapping[str, tuple[float, float]]) -> pd.Index:
    """The images `prune` drops (Sec. 5.2.1): mean fakeness >= "likely fake", 0.75 (when rated), then
    scores in the `ambiguous` ranges of the attributes that were rated."""
    scores = ann.wide(ann.aggregate(ratings, scales))
    report = ann.prune(scores, max_fakeness=0.75 if "fakeness" in scores else None,
                       ambiguous={a: r for a, r in ambiguous.items() if a in scores})
    return scores.index.difference(report.kept)


def _rated_campaign(frame: pd.DataFrame, images: pd.Series, ratings: pd.DataFrame, scales: Mapping[str, Scale],
                    keep_pruned: bool) -> tuple[pd.DataFrame, _Human]:
    """Campaign rows as people see them: a rated attribute is its mean level over annotators (NaN
    where nobody rated it), and trials whose image people found unrealistic are dropped (kept with `keep_pruned`)."""
    tables, lines = _people(ratings, scales)
    means = tables["ratings"].set_index("image")
    human = _Human([a for a in means.columns if a != "fakeness"], tables, lines)
    frame = frame.assign(**{a: images.map(means[a]) for a in human.rated})
    fake = images.isin(_pruned_images(ratings, scales, {}))
    if fake.any():
        human.lines.append(f"  {int(fake.sum())} judged trials whose image people rated likely fake "
                           + ("kept (--keep-pruned)" if keep_pruned else "dropped (Sec. 5.2.1; --keep-pruned keeps them)"))
    if human.rated:
        human.lines.append(f"  {', '.join(human.rated)}: the mean level people chose (1 .. L of the scale), not the generator's truth")
    return (frame if keep_pruned else frame[~fake]), human


def _campaign_rows(path: Path, keep_pruned: bool, loaded: CampaignResult | None = None) -> _Rows:
    from searcher.campaign.result import load_campaign

    result = loaded if loaded is not None else load_campaign(path)
    t = result.trials
    if t.empty:
        raise ParameterError(f"The campaign at {path} has no trials yet; run it first (searcher hunt --resume {path}).")
    strategy = str(result.config.get("strategy"))
    errors, excluded = t["error"].notna(), t["excluded"].notna() & t["error"].isna()
    keep = ~errors & ~excluded & t["loss"].notna()
    if not keep.any():
        first = f" (first error: {t.loc[errors, 'error'].iloc[0]})" if errors.any() else ""
        raise ParameterError(f"The campaign at {path} has no judged trial to analyse: {int(errors.sum())} of {len(t)} got no "
                             f"answer from the target{first} and {int(excluded.sum())} were excluded as ambiguous.")
    truth = pd.DataFrame([d or {} for d in t.loc[keep, "truth"]], index=t.index[keep])
    source = t.loc[keep, "source"].fillna("search")
    frame = truth.assign(**{OUTCOME: (t.loc[keep, "loss"] >= FAILURE).astype(np.int64),
                            "strategy": np.where(source == "audit", "audit", strategy)})
    valid = list(truth.columns)
    default = [a for a in result.vocabulary.analysed if a in valid] or valid
    note = (f"{path}: campaign ({strategy}), {len(t)} trials; dropped {int(errors.sum())} with a target error and "
            f"{int(excluded.sum())} excluded as ambiguous; {int(keep.sum())} judged")
    ratings = ann.human_ratings(path, result.vocabulary.scales)
    human = None
    if ratings is not None:
        frame, human = _rated_campaign(frame, t.loc[keep, "image"], ratings, result.vocabulary.scales, keep_pruned)
        valid += [a for a in human.rated if a not in valid]
    return _Rows("campaign", frame, valid, default, note, strategy, human)


def _transect_rows(path: Path, keep_pruned: bool) -> _Rows:
    t = read_csv(path / "transects.csv", "searcher transect")
    axes = [c.removeprefix("value_") for c in t.columns if c.startswith("value_")]
    if not axes or not {"transect", "error"} <= set(t.columns):
        raise ParameterError(f"{path / 'transects.csv'} lacks the transect, error or value_<attribute> columns; "
                             "write it with `searcher transect`.")
    pruned = t["pruned"].fillna("").ne("") if "pruned" in t.columns else pd.Series(False, index=t.index)
    human = _rated_transects(path, t, axes)
    if human is not None:
        pruned = human.pruned
    failed = t["error"].isna()
    keep = ~failed & (keep_pruned | ~pruned)
    extra = [c for c in ("transect", "target_label", "target_score") if c in t.columns]
    frame = pd.DataFrame({a: t.loc[keep, f"value_{a}"] for a in axes}).join(t.loc[keep, extra])
    frame[OUTCOME] = t.loc[keep, "error"].astype(np.int64)
    note = (f"{path}: {t['transect'].nunique()} transects along {', '.join(axes)}, "
            f"{len(t)} images; dropped {int(failed.sum())} with a target error and "
            + (f"kept {int((pruned & ~failed).sum())} pruned (--keep-pruned)" if keep_pruned
               else f"{int((pruned & ~failed).sum())} pruned") + f"; {int(keep.sum())} judged")
    return _Rows("transects", frame, axes, axes, note, human=human)


def _rated_transects(path: Path, t: pd.DataFrame, axes: list[str]) -> _Human | None:
    """People's ratings of a transect run, if any, and which images are pruned once they replace the
    simulated ratings of the attributes they rated (`annotations.overlay`): pruned again as
    `searcher transect` prunes (fakeness, then the ambiguous ranges it used), with the transects it
    pruned for drift still pruned (and, without the simulated ratings to redo it from, every image
    it pruned). A transect's attributes stay its design values."""
    import generators

    config = json.loads((path / TRANSECT_CONFIG).read_text()) if (path / TRANSECT_CONFIG).is_file() else {}
    vocabulary = generators.vocabulary(config.get("generator", "faces"))
    ratings = ann.human_ratings(path, vocabulary.scales)
    if ratings is None:
        return None
    ambiguous = config.get("ambiguous", {a: r for a, r in vocabulary.ambiguous.items() if a in axes})
    simulated = path / ann.SIMULATED_RATINGS
    combined = ann.overlay(ann.read_annotations(simulated, vocabulary.scales), ratings) if simulated.is_file() else ratings
    dropped = t["image"].isin(_pruned_images(combined, vocabulary.scales, {a: tuple(r) for a, r in ambiguous.items()}))
    before = t["pruned"].fillna("") if "pruned" in t.columns else pd.Series("", index=t.index)
    still = before.str.contains("transect") if simulated.is_file() else before.ne("")
    tables, lines = _people(ratings, vocabulary.scales)
    lines.append(f"  images pruned with people's ratings: {int(dropped.sum())} of {len(t)}"
                 + ("" if simulated.is_file() else f" (no {ann.SIMULATED_RATINGS}: on top of those pruned before)"))
    return _Human([], tables, lines, dropped | still)


def _load(path: Path, keep_pruned: bool, loaded: CampaignResult | None = None) -> _Rows:
    if (path / "campaign.sqlite").is_file():
        return _campaign_rows(path, keep_pruned, loaded)
    if (path / "transects.csv").is_file():
        return _transect_rows(path, keep_pruned)
    where = "" if path.is_dir() else " (no such directory)"
    raise ParameterError(f"{path}{where} is neither a campaign directory (campaign.sqlite, written by `searcher hunt`) "
                         "nor a transect directory (transects.csv, written by `searcher transect`).")


def _select(rows: _Rows, biased: bool) -> tuple[pd.DataFrame | None, str, str]:
    """The rows that give rates, the file suffix, and a line saying which and why (search-aware)."""
    from searcher.causal import UNIFORM_STRATEGIES

    frame, s = rows.frame, rows.strategy
    if rows.kind == "transects":
        return frame, "", "transects set the attributes by design: rates and effects from every kept image"
    uniform = frame["strategy"].isin(UNIFORM_STRATEGIES)
    if uniform.all():
        audit = int(frame["strategy"].eq("audit").sum())
        return frame, "", f"rates from all {len(frame)} judged trials ({s!r} samples uniformly{', as does the audit' if audit else ''})"
    if biased:
        return frame, "_biased", (f"--biased: rates from all {len(frame)} judged trials, {int((~uniform).sum())} of them "
                                  f"chosen by the adaptive {s!r} search; they describe the search, not a population")
    if uniform.any():
        return frame[uniform], "", (f"rates from the {int(uniform.sum())} audit trials only: the {int((~uniform).sum())} "
                                    f"trials chosen by the adaptive {s!r} search over-sample failures on purpose")
    return None, "", (
        f"no rates written: the {s!r} search is adaptive and samples failures on purpose, so error rates over its "
        f"{len(frame)} trials describe the search, not the target on a population, and the campaign has no uniform "
        "audit sample. Remedies: re-run the campaign with an audit sample (`searcher hunt ... --audit 0.2`, or "
        "Campaign(audit=0.2)) and analyze the audit trials, or run a random campaign (`--strategy random`). "
        "`--biased` writes the tables anyway, as a description of the searched trials (files *_biased).")


EVENTS_PER_COEFFICIENT = 10  # the usual floor for a logistic model (Peduzzi et al., J Clin Epidemiol 1996)


def _label(value: Any) -> str:
    return f"{value:g}" if isinstance(value, (float, np.floating)) else str(value)


def _levels(frame: pd.DataFrame, attr: str, bins: int | None) -> pd.DataFrame:
    """0/1 indicators, one column per level of `attr` in order: numeric columns with more than
    `bins` values are cut at their quantiles (`bins=None`: never), anything else keeps its values."""
    from searcher.causal import one_hot_bins

    x = frame[attr]
    if bins and pd.api.types.is_numeric_dtype(x) and not pd.api.types.is_bool_dtype(x) and x.nunique() > bins:
        edges = np.unique(np.quantile(x, np.linspace(0, 1, bins + 1)))
        labels = [f"[{lo:.3g}, {hi:.3g}{']' if i == len(edges) - 2 else ')'}" for i, (lo, hi) in enumerate(itertools.pairwise(edges))]
        return one_hot_bins(frame, attr, edges, labels)
    values = sorted(x.unique(), key=lambda v: (isinstance(v, str), v))
    return pd.DataFrame({_label(v): (x == v).astype(np.int64) for v in values}, index=frame.index)


def _subgroups(levels: dict[str, pd.DataFrame], frame: pd.DataFrame, groups: list[tuple[str, ...]], biased: bool) -> pd.DataFrame:
    from searcher.causal import subgroup_error_rates

    cats = pd.DataFrame({a: pd.Categorical(oh.idxmax(axis=1), categories=oh.columns) for a, oh in levels.items()}, index=frame.index)
    data = cats.join(frame[[c for c in (OUTCOME, "strategy") if c in frame.columns]])
    parts = []
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*allow_biased=True")  # the summary and file names say so
        for by in groups:
            rates = subgroup_error_rates(data, OUTCOME, list(by), allow_biased=biased)
            level = [" | ".join(map(str, v)) if isinstance(v, tuple) else str(v) for v in rates.index]
            parts.append(rates.reset_index(drop=True).assign(attribute=" x ".join(by), level=level))
    return pd.concat(parts, ignore_index=True)[["attribute", "level", "n", "errors", "rate", "low", "high"]]


def _design(levels: dict[str, pd.DataFrame]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One-hot covariates without each attribute's first (reference) level, and what each column is."""
    cols, about = {}, []
    for attr, oh in levels.items():
        oh = oh.loc[:, oh.any()]  # empty bins carry nothing
        for level in oh.columns[1:]:
            cols[f"{attr}={level}"] = oh[level]
            about.append({"covariate": f"{attr}={level}", "attribute": attr, "level": level, "reference": oh.columns[0]})
    return pd.DataFrame(cols, index=next(iter(levels.values())).index), pd.DataFrame(about)


def _effects(X: pd.DataFrame, about: pd.DataFrame, outcome: pd.Series, n_boot: int, seed: int) -> pd.DataFrame:
    from searcher.causal import logistic_effects

    fit = logistic_effects(X.assign(**{OUTCOME: outcome}), OUTCOME, list(X.columns), n_boot=n_boot, seed=seed)
    return about.join(fit.reset_index(drop=True))


def _ates(frame: pd.DataFrame, axes: Sequence[str]) -> pd.DataFrame:
    """E_j^1 - E_j^0 per manipulated attribute: images on its high side (decision value > 0) against the low side."""
    from searcher.causal import ate

    rows = []
    for a in axes:
        side = pd.Series(np.where(frame[a] > 0, "high", np.where(frame[a] < 0, "low", "")), index=frame.index)
        sub = frame[side != ""].assign(side=side)
        if sub["side"].nunique() == 2:
            rows.append({"attribute": a, "treated": f"{a} > 0", "control": f"{a} < 0",
                         **dataclasses.asdict(ate(sub, OUTCOME, "side", treated="high"))})
    return pd.DataFrame(rows)


def _sensitivity(frame: pd.DataFrame, axes: Sequence[str]) -> tuple[pd.DataFrame | None, str]:
    """Score sensitivity along every axis with more than two steps: lambda is the decision value
    minus the step nearest 0 (0 itself on grids with a centre); an image is a transect and a point
    of the other axes; the score is the probability of one label (`positive`)."""
    from searcher.causal import score_sensitivity

    long = [a for a in axes if frame[a].nunique() > 2]
    if not long:
        return None, ""
    score = frame.get("target_score", pd.Series(np.nan, index=frame.index))
    if "target_label" not in frame or not score.between(0, 1).all():
        return None, "no sensitivity curves: the target gave no probability score in [0, 1] for every image (detectors give none)"
    label = frame["target_label"].astype(str)
    positive = label.max()
    f = np.where(label == positive, score, 1 - score)
    parts = []
    for a in long:
        ref = min(frame[a].unique(), key=abs)
        image = frame[["transect", *[b for b in axes if b != a]]].astype(str).agg("/".join, axis=1)
        tidy = pd.DataFrame({"image": image, "lambda": frame[a] - ref, "score": f})
        tidy = tidy[tidy.groupby("image")["lambda"].transform(lambda v: (v == 0).any())]  # its reference step was kept
        parts.append(score_sensitivity(tidy).reset_index().assign(attribute=a, reference=ref, positive=positive))
    out = pd.concat(parts, ignore_index=True)
    return out[["attribute", "reference", "positive", "lambda", "n", "sensitivity", "std", "low", "high"]], ""


@dataclass
class Estimates:
    """What `estimate` found: name -> table, the summary lines so far, the attributes analysed, the
    file suffix (`_biased` for the searched trials of an adaptive campaign), and the overall failure
    rate (None when an adaptive campaign gave no rates: `tables` is then empty)."""

    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    attributes: list[str] = field(default_factory=list)
    suffix: str = ""
    rate: float | None = None


def estimate(directory: str | Path, attributes: Sequence[str] | None = None, bins: int = 3, n_boot: int = 1000, seed: int = 0,
             biased: bool = False, keep_pruned: bool = False, campaign: CampaignResult | None = None) -> Estimates:
    """The subgroup rates, logistic effects and, for transects, treatment effects and score
    sensitivity of a campaign or transect directory (the arguments are `searcher.studies.analyze`'s).

    Raises:
        ParameterError: not a campaign or transect directory, unknown attributes, bad options, or
        no judged rows.
    """
    from searcher.causal import wilson_interval

    check_int("bins", bins, 2, owner="analyze")
    check_int("n_boot", n_boot, 0, owner="analyze")
    check_int("seed", seed, 0, owner="analyze")
    path = Path(directory)
    rows = _load(path, keep_pruned, campaign)
    attrs = check_names(attributes, rows.valid, flag="--attributes") if attributes is not None else rows.default
    if not attrs:
        raise ParameterError(f"Give at least one attribute. Valid attributes: {', '.join(rows.valid)}.")
    lines = [rows.note]
    if rows.human is not None:
        lines += rows.human.lines
        unrated = rows.frame[[a for a in attrs if a in rows.human.rated]].isna().any(axis=1)
        if unrated.any():
            rows.frame = rows.frame[~unrated]
            lines.append(f"  {int(unrated.sum())} judged trials nobody rated on {', '.join(a for a in attrs if a in rows.human.rated)} dropped")
    frame, suffix, why = _select(rows, biased)
    lines.append(why)
    if frame is None:
        return Estimates({}, lines, list(attrs), suffix)
    if frame.empty:
        raise ParameterError(f"{path}: no judged rows left to analyse ({'; '.join(lines)}).")
    transects = rows.kind == "transects"
    levels = {a: _levels(frame, a, None if transects else bins) for a in attrs}
    groups = [(a,) for a in attrs] + (list(itertools.combinations(attrs, 2)) if transects else [])
    tables = {"subgroups": _subgroups(levels, frame, groups, biased), **(rows.human.tables if rows.human is not None else {})}
    k, n = int(frame[OUTCOME].sum()), len(frame)
    low, high = wilson_interval(k, n)
    lines.append(f"overall failure rate {k / n:.3f} [{low:.3f}, {high:.3f}] ({k} of {n})")
    X, about = _design(levels)
    if 0 < k < n and X.shape[1]:
        tables["effects"] = _effects(X, about, frame[OUTCOME], n_boot, seed)
        rarer = min(k, n - k)
        if rarer < EVENTS_PER_COEFFICIENT * X.shape[1]:
            lines.append(f"few data: {k} failures and {n - k} successes for {X.shape[1]} coefficients, under "
                         f"{EVENTS_PER_COEFFICIENT} of the rarer outcome per coefficient; the effects are unstable (their "
                         "bootstrap intervals say how much). A longer campaign, or --audit, gives more.")
    else:
        lines.append("no effects: " + (f"{'every' if k else 'no'} row is a failure" if not 0 < k < n
                                       else "every attribute has a single level") + ", so there is nothing to regress")
    if transects:
        tables["ate"] = _ates(frame, attrs)
        sensitivity, reason = _sensitivity(frame, attrs)
        lines += [reason] if reason else []
        if sensitivity is not None:
            tables["sensitivity"] = sensitivity
    return Estimates(tables, lines, list(attrs), suffix, k / n)


def highlights(tables: dict[str, pd.DataFrame], attrs: Sequence[str]) -> list[str]:
    """Summary lines: rates per level of each attribute, the largest effects, the treatment effects."""
    sub = tables["subgroups"]
    out = [f"  {a}: " + ", ".join(f"{r.level} {r.rate:.2f} (n {r.n})" for r in sub[sub["attribute"] == a].itertuples())
           for a in attrs]
    if "effects" in tables:
        eff = tables["effects"]
        top = eff.reindex(eff["coef"].abs().sort_values(ascending=False).index).head(5)
        out.append("largest effects (log odds vs the reference level, ± bootstrap std):")
        out += [f"  {r.covariate:<32} {r.coef:+.2f} ± {r.std:.2f} (vs {r.reference})" for r in top.itertuples()]
    if len(tables.get("ate", [])):
        out.append("treatment effects E^1 - E^0 (high side - low side, 95% Newcombe):")
        out += [f"  {r.attribute:<24} {r.value:+.3f} [{r.low:+.3f}, {r.high:+.3f}]" for r in tables["ate"].itertuples()]
    if "sensitivity" in tables:
        sens = tables["sensitivity"]
        out.append(f"score sensitivity of P({sens['positive'].iloc[0]}) (mean change from the reference step):")
        out += [f"  {a:<24} " + ", ".join(f"{r['lambda']:+g} -> {r.sensitivity:+.3f}" for _, r in g.iterrows() if r["lambda"])
                for a, g in sens.groupby("attribute", sort=False)]
    return out

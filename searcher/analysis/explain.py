"""Failure modes in words: for each failure mode of a campaign, the box of attributes that sets its
failures apart from the campaign's passes, with a caption, its precision and its coverage (issue 70,
part 1; docs/transects-and-causes.md#failure-modes-in-words).

The modes are the report's (`searcher.analysis.modes.mode_labels` on the one campaign, with the
cube's one-hot blocks), so "mode 3" here is mode 3 of `searcher report` and `searcher export`.

A rule bounds the generator's own parameters, at the values that were rendered (not the unit cube:
in a prior cube one cube threshold can decode to the same value on both sides). A generator
searched through a latent code gets rules over the rendered truth attributes its vocabulary
analyses instead, where every judged trial carries them (`faces-latent`): `z3 > 1.2` describes
nothing. `ModeRule.over` says which ("parameters" or "truth").

Per mode, against every distinct pass (the audit sample's among them; other modes' failures sit
out of step 1's tree and count as failures everywhere else):

1. seed: a shallow tree (`depth`) of the mode's failures against the passes; the mode's failures
   in the leaf with the highest Wilson lower bound on their share are the seed, so that a mode
   Ward linkage drew around two places starts from one;
2. box: the seed's bounding box, with the levels of each categorical attribute that it holds;
3. grow: each side of each number moves out from the seed through failures of any mode (the 16
   modes can cut one region of failure in parts, and a part should grow to the whole region) to
   the last failure before the nearest pass that lies inside the box on every other attribute,
   then on by the unbiased end correction of a uniform sample's range, range / (n - 1) over the n
   failures spanned, but no further than halfway to that pass; attribute after attribute, the box
   growing on the others as it goes, until nothing moves;
4. prune: a side (or a level set) is dropped while the Wilson lower bound of the box's precision
   does not fall without it (greedy, as C4.5's rule post-pruning), so the sides left are those that
   separate, and captions stay short where most attributes do not.

The tree's own path is not the rule: a depth-3 path bounds three sides at most, and a planted box
bounds every dimension (`benchmarks/explain_rules.py` scores the rules against the suite's boxes).

Precision is the share of the campaign's distinct judged points inside the rule that failed (in
any mode); coverage is the share of the mode's failures inside the rule. Both count distinct
points (repeats, target errors and excluded images left out) and carry Wilson 95% intervals. On a
search that over-samples failures (bo, bo-modes) precision is a property of the campaign's points,
not of the everyday population.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from searcher.analysis.modes import mode_labels, repeated
from searcher.campaign.config import CampaignConfig, search_space
from searcher.campaign.result import CampaignResult, load_campaign
from searcher.causal import wilson_interval
from searcher.errors import ParameterError
from searcher.objective import FAILURE
from searcher.outputs import write_text
from searcher.space import Categorical, Integer, Space
from searcher.validation import check_int, checked

if TYPE_CHECKING:
    from generators.base import Vocabulary

__all__ = ["ModeRule", "explain", "explain_modes", "share_text"]

Bounds = dict[str, Any]  # attribute -> [low, high] (numbers, both ends inside) or a set of levels
_UNITS = {"degrees": "°", "years": " y", "pixels": " px"}  # a unit a parameter's doc names ("head turn in degrees")
_ROUNDS = 10  # passes of the growing step at most; it stops as soon as a pass moves nothing
MIN_CUT = 0.05  # a numeric side closer than this share of its range to the range's end is left open (`_prune`)
CAPTION_SIDES = 5  # sides a caption names, those that keep most passes out first; explain.json keeps every side
FILE = "explain.json"
"""Where, inside the campaign's directory, its modes in words are written (`write_explained`)."""




@dataclass(frozen=True)
class ModeRule:
    """One failure mode in words.

    Attributes:
        mode: the mode's number, as in `searcher report` and `searcher export`.
        failures: its distinct failures.
        rule: attribute -> `[low, high]` in the attribute's units (both inclusive), or the list of a
            categorical attribute's levels; an attribute absent is unconstrained. None for a mode
            with fewer failures than asked for.
        caption: the rule in words.
        precision, coverage: `(share, low, high)` with Wilson 95% bounds, None without a rule.
        over: what the rule bounds: "parameters" (the generator's) or "truth" (the rendered
            attributes its vocabulary analyses, for a generator searched through a latent code).
        trials: the campaign's evaluations the rules were fitted to (all of them, errors
            included), so that a reader of explain.json can tell it is of an earlier state of a
            campaign that ran on (`searcher report` says so); None where unknown.
    """

    mode: int
    failures: int
    rule: dict[str, list[Any]] | None
    caption: str
    precision: tuple[float, float, float] | None
    coverage: tuple[float, float, float] | None
    over: str = "parameters"
    trials: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON record of `explain.json`."""
        return {"mode": self.mode, "failures": self.failures, "rule": self.rule, "caption": self.caption,
                "precision": list(self.precision) if self.precision else None,
                "coverage": list(self.coverage) if self.coverage else None, "over": self.over, "trials": self.trials}


def share_text(share: Sequence[float] | None) -> str:
    """`95% [75%, 99%]`: a `(share, low, high)` of explain.json (precision, coverage, a fix rate)
    as `searcher explain` prints it and the report shows it; "-" for none (a mode without a rule)."""
    return f"{share[0]:.0%} [{share[1]:.0%}, {share[2]:.0%}]" if share else "-"


@dataclass(frozen=True)
class _Attribute:
    """One attribute a rule can bound: its value per trial, its range (a number) or its levels (a
    category), whether it takes whole numbers, and the unit its description names."""

    name: str
    values: np.ndarray
    low: float = 0.0
    high: float = 1.0
    levels: tuple[Any, ...] | None = None
    integer: bool = False
    unit: str = ""


@checked("explain")
def explain(run: str | Path | CampaignResult, min_failures: int = 10, depth: int = 3) -> list[ModeRule]:
    """Each failure mode of the campaign in `run` (a directory or a loaded campaign) as a rule, a
    caption, a precision and a coverage; modes with fewer than `min_failures` failures get no rule.
    Reads the store only (no lock), so it can run beside a campaign that is still searching.

    Raises:
        ParameterError: no campaign there (a comparison names its campaigns), none evaluated yet,
            or a bad option.
    """
    if not isinstance(run, CampaignResult):
        path = Path(run)
        if not (path / "campaign.sqlite").is_file() and any(path.glob("runs/*/campaign.sqlite")):
            raise ParameterError(f"{path} is a comparison; explain one of its campaigns ({path / 'runs' / 'NAME'}): each has its own modes.")
        run = load_campaign(path)
    if run.trials.empty:
        raise ParameterError(f"{run.dir} holds no evaluations yet; run the campaign first.")
    import generators

    config = CampaignConfig.with_defaults(run.config)
    generator = generators.load(config["generator"], **dict(config.get("generator_options") or {}))
    space, _ = search_space(generator.space, config.get("vary"), config.get("fix"), config["cube"])
    modes = mode_labels([run.trials], [config.get("strategy", "")], blocks=space.cube.blocks)[0]
    return explain_modes(run.trials, space, modes, run.vocabulary, min_failures=min_failures, depth=depth)


def write_explained(run: str | Path, modes: Sequence[Any]) -> Path:
    """Writes `run/explain.json`, the modes' records (`ModeRule.to_dict`, a confirmation's with its
    fix rates, or such records as dicts, a probe's added) whole or not at all, and returns its path:
    the one writer of the file that `searcher explain`, `searcher fix`, the report and the export recipes read."""
    records = [m if isinstance(m, Mapping) else m.to_dict() for m in modes]
    return write_text(Path(run) / FILE, json.dumps(records, indent=1, ensure_ascii=False) + "\n")


def explain_modes(trials: pd.DataFrame, space: Space, modes: np.ndarray | Sequence[int], vocabulary: Vocabulary | None = None,
                  min_failures: int = 10, depth: int = 3, given: Mapping[int, Mapping[str, Sequence[Any]]] | None = None) -> list[ModeRule]:
    """The rule of each mode (see the module docstring), in mode order.

    Args:
        trials: a campaign's trials as `load_campaign` gives them (`loss`, `error`, `excluded`, `x`,
            one `param.NAME` column per parameter of `space`, and `truth` where a latent space's
            rules are to read the rendered attributes).
        space: the space the campaign searched (its parameters' names, ranges, levels and docs).
        modes: per trial, its failure mode, -1 for every other trial (`mode_labels`).
        vocabulary: the generator's: the truth attributes it analyses, and its scales, whose
            labels name the levels a rule spans.
        min_failures, depth: the smallest mode given a rule; the depth of the tree that picks each
            mode's seed.
        given: mode -> a rule found otherwise (measured by `searcher.studies.probe`), captioned and
            scored on the campaign's points in place of the one fitted here.
    """
    min_failures, depth = check_int("min_failures", min_failures, 1), check_int("depth", depth, 1, 10)
    modes = np.asarray(modes, int)
    if len(modes) != len(trials):
        raise ParameterError(f"explain_modes: {len(modes)} mode labels for {len(trials)} trials.")
    loss = pd.to_numeric(trials["loss"], errors="coerce").to_numpy(float)
    judged = ~np.isnan(loss) & trials["error"].isna().to_numpy() & trials["excluded"].isna().to_numpy() & ~repeated(trials["x"].tolist())
    failed = judged & (loss >= FAILURE)
    attributes, over = _attributes(trials, space, vocabulary, judged)
    scales = dict(vocabulary.scales) if vocabulary is not None else {}
    out = []
    for mode in sorted(set(modes[modes >= 0].tolist())):
        mine = modes == mode
        n = int(mine.sum())
        if n < min_failures:
            out.append(ModeRule(mode, n, None, f"{n} failures, fewer than {min_failures}: no rule fitted", None, None, over, len(trials)))
            continue
        if given is not None and mode in given:
            rule = _rounded({k: set(v) if attributes[k].levels is not None else list(v) for k, v in given[mode].items()}, attributes)
        else:
            rule = _rounded(_fit(attributes, failed, judged & ~failed, mine, depth), attributes)
        inside = _inside(rule, attributes)
        precision = _share(int((inside & failed).sum()), int((inside & judged).sum()))
        coverage = _share(int((inside & mine).sum()), n)
        caption = _caption(_by_weight(rule, attributes, judged & ~failed), attributes, scales, over)
        out.append(ModeRule(mode, n, rule, caption, precision, coverage, over, len(trials)))
    return out


def _by_weight(rule: dict[str, list[Any]], attributes: Mapping[str, _Attribute], passed: np.ndarray) -> dict[str, list[Any]]:
    """The rule's sides, the one that keeps the most passes out first: each ranked by the passes the
    rule would admit without it (ties keep the rule's order), so a caption can say the few that
    separate and leave the ones the search merely held."""
    kept = {name: int((_inside({k: v for k, v in rule.items() if k != name}, attributes) & passed).sum()) for name in rule}
    return {name: rule[name] for name in sorted(rule, key=lambda k: -kept[k])}


def _attributes(trials: pd.DataFrame, space: Space, vocabulary: Vocabulary | None, judged: np.ndarray) -> tuple[dict[str, _Attribute], str]:
    """What the rules bound, by name, and over what: the space's parameters ("parameters"), or its
    named parameters and the rendered truth attributes in place of a latent code ("truth")."""
    out = {}
    for p in space.params:
        values = trials[f"param.{p.name}"].to_numpy()
        if isinstance(p, Categorical):
            out[p.name] = _Attribute(p.name, values, levels=tuple(p.choices))
        else:
            found = re.search(r"\bin (degrees|years|pixels)\b", p.doc or "")
            out[p.name] = _Attribute(p.name, values.astype(float), float(p.low), float(p.high), integer=isinstance(p, Integer),  # type: ignore[attr-defined]
                                     unit=_UNITS[found.group(1)] if found else "")
    truth = _truth(trials, space, vocabulary, judged)
    if truth:
        return {**out, **{a.name: a for a in truth}}, "truth"
    if space.latent is not None:
        b = float(space.latent.bound)
        out.update({name: _Attribute(name, trials[f"param.{name}"].to_numpy(float), -b, b) for name in space.latent.names})
    return out, "parameters"


def _truth(trials: pd.DataFrame, space: Space, vocabulary: Vocabulary | None, judged: np.ndarray) -> list[_Attribute]:
    """The truth attributes the vocabulary analyses, for a latent space whose judged trials all carry
    them (else none): numbers over their scale's range (or the range rendered), the rest as levels.
    An attribute rendered at one value everywhere cannot separate anything and is left out."""
    if space.latent is None or vocabulary is None or "truth" not in trials:
        return []
    names = [a for a in vocabulary.analysed if a not in space.names]
    rows = [t if isinstance(t, Mapping) else {} for t in trials["truth"]]
    if not names or not judged.any() or any(a not in rows[i] for i in np.flatnonzero(judged) for a in names):
        return []
    out = []
    for name in names:
        values = pd.Series([r.get(name) for r in rows], dtype=object)
        numbers = pd.to_numeric(values, errors="coerce").to_numpy(float)
        if np.isfinite(numbers[judged]).all():
            scale = vocabulary.scales.get(name)
            low, high = (scale.low, scale.high) if scale is not None else (numbers[judged].min(), numbers[judged].max())
            if high > low:
                out.append(_Attribute(name, numbers, float(low), float(high)))
        else:
            out.append(_Attribute(name, values.to_numpy(), levels=tuple(sorted(set(values[judged]), key=str))))
    return out


def _fit(attributes: Mapping[str, _Attribute], failed: np.ndarray, passed: np.ndarray, mine: np.ndarray, depth: int) -> Bounds:
    """The mode's box: the seed's bounding box, grown, then pruned (the module docstring's steps)."""
    seed = _seed(attributes, passed, mine, depth)
    bounds: Bounds = {name: set(a.values[seed].tolist()) if a.levels is not None else [float(a.values[seed].min()), float(a.values[seed].max())]
                      for name, a in attributes.items()}
    _grow(bounds, attributes, failed, passed, seed)
    return _prune(bounds, attributes, failed, failed | passed)


def _seed(attributes: Mapping[str, _Attribute], passed: np.ndarray, mine: np.ndarray, depth: int) -> np.ndarray:
    """The mode's failures in the leaf, of a `depth`-deep tree of them against the passes, with the
    highest Wilson lower bound on their share (the purest leaf that is not a lucky few points)."""
    from sklearn.tree import DecisionTreeClassifier

    columns: list[np.ndarray] = []
    for a in attributes.values():
        columns += [(a.values == level).astype(float) for level in a.levels] if a.levels is not None else [a.values]
    rows = mine | passed
    X, y = np.stack(columns, axis=1)[rows], mine[rows]
    leaf_of = DecisionTreeClassifier(max_depth=depth, class_weight="balanced", random_state=0).fit(X, y).apply(X)
    leaves = np.unique(leaf_of[y])
    low = wilson_interval(np.array([y[leaf_of == leaf].sum() for leaf in leaves]), np.array([(leaf_of == leaf).sum() for leaf in leaves]))[0]
    seed = np.zeros(len(mine), bool)
    seed[np.flatnonzero(rows)[y & (leaf_of == leaves[int(np.argmax(low))])]] = True
    return seed


def _mask(bounds: Bounds, attributes: Mapping[str, _Attribute], n: int) -> np.ndarray:
    """Which of the `n` trials lie inside `bounds` (both ends of a number inside)."""
    inside = np.ones(n, bool)
    for name, b in bounds.items():
        v = attributes[name].values
        inside &= np.isin(v, list(b)) if isinstance(b, set) else (v >= b[0]) & (v <= b[1])
    return inside


def _grow(bounds: Bounds, attributes: Mapping[str, _Attribute], failed: np.ndarray, passed: np.ndarray, seed: np.ndarray) -> None:
    """Step 3 of the module docstring, in place: each side of each number, from the seed out through
    failures to the last before the nearest pass inside the failures' box on the other attributes,
    then on by range / (n - 1) but at most halfway to that pass; in turn until nothing moves. The
    walls are looked for inside the failures' own box, not the extended one, so that a side the end
    correction took past the region's edge does not let in passes that stop the others."""
    judged = failed | passed
    hull = {name: list(b) if not isinstance(b, set) else b for name, b in bounds.items()}
    for _ in range(_ROUNDS):
        before = {name: list(b) for name, b in bounds.items() if not isinstance(b, set)}
        for name, a in attributes.items():
            if a.levels is not None:
                continue
            v = a.values
            others = judged & _mask({k: b for k, b in hull.items() if k != name}, attributes, len(v))
            last, wall = [], []
            for sign, edge in ((-1.0, v[seed].min()), (1.0, v[seed].max())):  # the low side as the high side of -v
                u = sign * v
                beyond = others & (u > sign * edge)
                wall.append(u[beyond & passed].min() if (beyond & passed).any() else math.inf)
                last.append(max(sign * edge, u[beyond & failed & (u < wall[-1])].max(initial=-math.inf)))
            lo, hi = -last[0], last[1]
            n = int((others & failed & (v >= lo) & (v <= hi)).sum())
            extend = (hi - lo) / (n - 1) if n > 1 else 0.0
            hull[name] = [lo, hi]
            bounds[name] = [max(a.low, lo - extend, 0.5 * (lo - wall[0])), min(a.high, hi + extend, 0.5 * (hi + wall[1]))]
        if before == {name: b for name, b in bounds.items() if not isinstance(b, set)}:
            break


def _low_precision(inside: np.ndarray, failed: np.ndarray, judged: np.ndarray) -> np.ndarray:
    """The Wilson lower bound of the share of failures among the judged points of each row of `inside` (0 for none)."""
    low = wilson_interval((inside & failed).sum(axis=-1), (inside & judged).sum(axis=-1))[0]
    return np.nan_to_num(np.asarray(low, float), nan=0.0)


def _prune(bounds: Bounds, attributes: Mapping[str, _Attribute], failed: np.ndarray, judged: np.ndarray) -> Bounds:
    """Step 4 of the module docstring: drops, one at a time, the side (or level set) whose removal
    leaves the highest Wilson lower bound of the box's precision, while that bound does not fall.
    A side within `MIN_CUT` of its attribute's end is opened first: it keeps out a pass or two of
    a campaign that is mostly failures, and says nothing a reader could act on ("earrings < 0.96")."""
    sides: list[tuple[str, int | None]] = []
    for name, b in bounds.items():
        a = attributes[name]
        if isinstance(b, set):
            sides += [(name, None)] if len(b) < len(a.levels) else []  # type: ignore[arg-type]
        else:
            sides += [(name, side) for side, end in ((0, a.low), (1, a.high)) if abs(b[side] - end) >= MIN_CUT * (a.high - a.low)]
    if not sides:
        return {}
    holds = np.stack([np.isin(attributes[name].values, list(bounds[name])) if side is None
                      else attributes[name].values >= bounds[name][0] if side == 0 else attributes[name].values <= bounds[name][1]
                      for name, side in sides])
    keep = np.ones(len(sides), bool)
    while keep.any():
        broken = (~holds[keep]).sum(axis=0)
        current = _low_precision(broken == 0, failed, judged)
        scores = _low_precision((broken == 0) | ((broken == 1) & ~holds[keep]), failed, judged)
        if scores.max() < current - 1e-12:
            break
        keep[np.flatnonzero(keep)[int(np.argmax(scores))]] = False
    out: Bounds = {}
    for (name, side), kept in zip(sides, keep):
        a = attributes[name]
        if kept and side is None:
            out[name] = bounds[name]
        elif kept:
            out.setdefault(name, [a.low, a.high])[side] = bounds[name][side]
    return out


def _decimals(a: _Attribute, extra: int = 0) -> int:
    """Decimals that show a value of `a` to about a thousandth of its range (`extra` fewer or more)."""
    return max(0, 3 + extra - math.floor(math.log10(a.high - a.low)))


def _rounded(bounds: Bounds, attributes: Mapping[str, _Attribute]) -> dict[str, list[Any]]:
    """The rule as written: numbers as `[low, high]` in the attribute's range (whole numbers inward),
    levels in their order, attributes in the space's order."""
    rule: dict[str, list[Any]] = {}
    for name, a in attributes.items():
        if name not in bounds:
            continue
        b = bounds[name]
        if a.levels is not None:
            rule[name] = [c for c in a.levels if c in b]
        elif a.integer:
            rule[name] = [math.ceil(max(b[0], a.low)), math.floor(min(b[1], a.high))]
        else:
            rule[name] = [round(float(max(b[0], a.low)), _decimals(a)), round(float(min(b[1], a.high)), _decimals(a))]
    return rule


def _inside(rule: Mapping[str, list[Any]], attributes: Mapping[str, _Attribute]) -> np.ndarray:
    """Which trials lie inside the rule as written (both ends inclusive)."""
    return _mask({name: set(r) if attributes[name].levels is not None else r for name, r in rule.items()}, attributes,
                 len(next(iter(attributes.values())).values))


def _share(k: int, n: int) -> tuple[float, float, float]:
    """`(k / n, Wilson low, high)` to 4 decimals; a rule holding no point says nothing: (0, 0, 1)."""
    low, high = wilson_interval(k, n)
    return (round(k / n, 4), round(float(low), 4), round(float(high), 4)) if n else (0.0, 0.0, 1.0)


def _caption(rule: Mapping[str, list[Any]], attributes: Mapping[str, _Attribute], scales: Mapping[str, Any], over: str) -> str:
    """The rule in words, its first `CAPTION_SIDES` sides (`_by_weight` puts those that separate
    most first) and how many more it bounds: `yaw > 38°, hair length < 0.31 (very short to short),
    eyewear: sunglasses, and 4 more bounds`; a rule over the rendered attributes starts `as rendered:`."""
    if not rule:
        return f"no {'rendered attribute' if over == 'truth' else 'parameter'} separates this mode's failures from the passes"
    parts = []
    for name, r in list(rule.items())[:CAPTION_SIDES]:
        a, words = attributes[name], name.replace("_", " ")
        if a.levels is not None:
            parts.append(f"{words}: {' or '.join(map(str, r))}")
            continue
        digits = _decimals(a, -1)
        fmt = [f"{v}{a.unit}" if isinstance(v, int) else f"{v:.{digits}f}{a.unit}" for v in r]
        if r[0] > a.low and r[1] < a.high:
            text = f"{words} {fmt[0]} to {fmt[1]}"
        elif r[0] > a.low:
            text = f"{words} > {fmt[0]}"
        elif r[1] < a.high:
            text = f"{words} < {fmt[1]}"
        else:
            text = f"{words} anywhere"
        scale = scales.get(name)
        if scale is not None and scale.labels:
            first, last = (int(k) - 1 for k in scale.level(np.array(r, float)))
            text += f" ({scale.labels[first]})" if first == last else f" ({scale.labels[first]} to {scale.labels[last]})"
        parts.append(text)
    more = len(rule) - CAPTION_SIDES
    return ("as rendered: " if over == "truth" else "") + ", ".join(parts) + (f", and {more} more bound{'s' * (more > 1)}" if more > 0 else "")

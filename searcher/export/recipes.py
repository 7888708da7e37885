"""Retraining sets built from a campaign's failures and their causes (`searcher export --recipe`,
the arms of `searcher retrain` of the same names; issue 70, part 3).

Adding the failures a search found (`hard`) teaches a model little when they are nearly all of one
label (it learns to say that label more) or when the shortcut that caused them stays in the rest
of its data. Jain et al. (ICLR 2023, *Distilling Model Failures as Directions in Latent Space*)
show that targeted synthetic data beats random additions; this engine can go further, because its
generator renders any image again with one attribute changed and everything else held. Each
recipe builds a set of `n` images from what the campaign found (its failures, failure modes, mode
rules and, where `searcher explain RUN --confirm` ran, the confirmed causes), never from knowing
a planted correlation. The label attribute is the judge's truth column, the column the target's
label is read from (`LabelParameter` finds the generator parameter that sets it).

- `balanced-hard`: at most `n // 2` failures of each label (first found), then, per
  `searcher.export.select.balance_labels`, for each failure of the commonest label the nearest
  judged trial of the other label in the searched cube (the same modes), then further failures
  until `n`;
- `twins`: counterfactual twins. The first `n // 2` failures whose twin takes the other label, each
  re-rendered with its label attribute flipped (a number mirrored across the judge's cut, into
  the other label's clear band; a level swapped for one of the other label's) and everything else
  held, identity and render seed included; the set is those failures, their twins and, for an odd
  `n`, one more failure. The model sees both labels under the shortcut that misled it;
- `crossed`: twins that cross the shortcut. A failure is an image of its label that the
  shortcut reads as the other; `twins` pairs it with a twin the shortcut reads rightly. Here the
  twin gets the label flipped *and* its mode's strongest confirmed cause set back to where the
  confirmation made the mode's failures pass, everything else held, so the shortcut reads the twin
  wrongly too: the set holds both counter-stereotypical cells, half of each label, where `hard`
  holds one label and `twins` one such cell. Only failures of modes with a cause confirmed by
  `searcher explain RUN --confirm` are paired;
- `crossed-draws`: the pairs of `crossed`, drawn afresh. Failure `i` (cycling where there are
  fewer than `n / 2`) gives image `2i` its label value and its mode's strongest confirmed cause
  drawn uniform in the mode's box, and image `2i + 1` the label flipped as `twins` flips it and
  that cause drawn uniform from its set-back value to the end of its range away from the box (a
  level: the set-back level). Every other attribute of both is drawn as the campaign's cube draws
  it. `crossed` holds each failure's context, so its set is as narrow as the modes' boxes; this
  one spreads both counter-stereotypical cells over the whole space, as the random control
  spreads its images;
- `decorrelated`: new draws inside each failure mode's rule, the mode's cause attributes sampled
  independently of the label: the label 50/50 in its clear bands, the causes jointly uniform over
  the rule's box in half the draws and over its complement in the other half, crossed with the
  label (each label x inside/outside cell a quarter), the rule's other attributes uniform in the
  box and every attribute the rule leaves free drawn as the campaign's cube draws it. `n` is
  shared over the modes in proportion to their failures. Causes are those `RUN/explain.json`
  confirms (fix rate's lower bound above the control attribute's upper bound; modes with none are
  left out); without fix rates there, every attribute of the rule stands in for a cause (a note
  says so).

Just Train Twice's upweighting (Liu et al., ICML 2021) needs a model to choose its weight on, so it
is a `searcher retrain` arm only (`upweight`, `random-upweight`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from searcher.campaign.store import encode_png
from searcher.errors import ParameterError
from searcher.export.control import judged_row
from searcher.export.select import balance_labels, exportable, select, weights
from searcher.export.source import Source
from searcher.space import Categorical, Integer
from searcher.validation import check_choice, check_int

__all__ = ["RECIPES", "LabelParameter", "ModeCauses", "RecipeSet", "build_set", "label_parameter", "mode_causes", "set_backs"]

RECIPES = ("balanced-hard", "twins", "crossed", "crossed-draws", "decorrelated")
_TWIN_STREAM, _DRAW_STREAM, _CROSS_STREAM, _FRESH_STREAM = 11, 13, 17, 19  # the recipes' own seeded streams, apart from the campaign's and the control's
_EDGE = 1e-6  # a clear band's end stays this far inside it: the judge's margin test is strict
_TRIES = 20  # rounds of drawing before a recipe gives up on reaching n


@dataclass
class RecipeSet:
    """A recipe's images: rows in the `Source.rows` layout (weights over the whole set), their PNGs
    in order, and what the recipe has to say about how it built them."""

    rows: pd.DataFrame
    pngs: list[bytes]
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class LabelParameter:
    """The generator parameter that sets the label: the judge's truth column itself (a number cut
    in two, or a category holding the labels), or, where the truth column is derived from the
    parameters, the categorical parameter each of whose levels gave one label in the campaign.

    Attributes:
        name: the parameter.
        labels: the target's labels.
        low, high, cut, margin: a number's range, the judge's cut and its ambiguous margin.
        levels: a category's level -> the label it gives (None for a number).
    """

    name: str
    labels: tuple[Any, ...]
    low: float = 0.0
    high: float = 1.0
    cut: float | None = None
    margin: float = 0.0
    levels: Mapping[Any, Any] | None = None

    def band(self, label: Any) -> tuple[float, float]:
        """The clear band of `label` on a number: below the cut minus the margin, or above the cut plus it."""
        edge = self.margin + _EDGE
        return (self.low, self.cut - edge) if str(label) == str(self.labels[0]) else (self.cut + edge, self.high)  # type: ignore[operator]

    def draw(self, label: Any, rng: np.random.Generator) -> Any:
        """A value giving `label`: uniform in its clear band, or one of its levels."""
        if self.levels is None:
            return float(rng.uniform(*self.band(label)))
        return _choice(rng, [level for level, lab in self.levels.items() if str(lab) == str(label)])

    def flip(self, value: Any, label: Any, rng: np.random.Generator) -> Any:
        """`value` (giving `label`) turned to give another label: a number mirrored across the cut
        (`2 cut - value`, 1 - v for a 0-1 attribute cut at 0.5) and kept in the other label's clear
        band; a level swapped for one of another label's levels (seeded)."""
        if self.levels is None:
            other = self.labels[1] if str(label) == str(self.labels[0]) else self.labels[0]
            return float(np.clip(2.0 * self.cut - float(value), *self.band(other)))  # type: ignore[operator]
        return _choice(rng, [level for level, lab in self.levels.items() if str(lab) != str(label)])


@dataclass(frozen=True)
class ModeCauses:
    """A failure mode as a retraining recipe uses it: its rule (`searcher.analysis.explain`), its
    failures, the attributes taken as its causes (`confirmed`: by intervention, else the rule's),
    and `set_back`: its strongest confirmed cause (the highest fix rate) and the value the
    confirmation set it back to (`explain.json`'s interventions), or None."""

    mode: int
    failures: int
    rule: Mapping[str, list[Any]]
    causes: tuple[str, ...]
    confirmed: bool
    set_back: tuple[str, Any] | None = None


def label_parameter(source: Source) -> LabelParameter:
    """The parameter that sets the label of `source`'s classify target (see `LabelParameter`).

    Raises:
        ParameterError: a detect target, or a truth column no parameter sets.
    """
    judge, space = source.judge, source.objective.generator.space
    if source.task != "classify":
        raise ParameterError(f"Retraining recipes flip and draw a classify target's label; {source.config.get('target')!r} is a "
                             f"{source.task} target. Export its failures without --recipe.")
    column, labels = str(judge.truth_column), tuple(judge.labels)
    if column in space.names:
        p = space[column]
        if isinstance(p, Categorical):
            return LabelParameter(column, labels, levels={c: c for c in p.choices if c in labels})
        return LabelParameter(column, labels, float(p.low), float(p.high), judge.cut, judge.margin)  # type: ignore[union-attr]
    judged = exportable(source.rows)
    for p in space.params:
        if not isinstance(p, Categorical) or f"param.{p.name}" not in judged:
            continue
        given = judged.groupby(judged[f"param.{p.name}"].astype(str))["true_label"].agg(lambda s: set(s.astype(str)))
        if len(given) and all(len(v) == 1 for v in given) and len(set().union(*given)) == len(labels):
            return LabelParameter(p.name, labels, levels={level: next(iter(v)) for level, v in given.items()})
    raise ParameterError(f"The label of {source.config.get('target')!r} is read from {column!r}, which is not a parameter of "
                         f"{source.config.get('generator')!r} nor given by one of its categorical parameters in this campaign; "
                         f"its parameters: {', '.join(space.names)}.")


def mode_causes(source: Source) -> tuple[list[ModeCauses], str]:
    """The campaign's failure modes with rules, and their causes, and a note on where they came from.

    `RUN/explain.json` is read where it exists (`searcher explain RUN`, `--confirm` adding fix
    rates); else the rules are fitted now (`searcher.analysis.explain.explain`). A cause is
    confirmed when its fix rate's Wilson lower bound lies above the control attribute's upper
    bound; modes with no confirmed cause are left out. Without fix rates every attribute of a
    mode's rule stands in for a cause. The label's own parameter is never a cause: recipes draw it.

    Raises:
        ParameterError: not one campaign, rules over rendered attributes (a latent generator's),
            or no mode with a rule.
    """
    if source.kind != "campaign":
        raise ParameterError(f"Recipes built from failure modes read one campaign's modes; {source.dir} is a {source.kind}. "
                             "Give one of its campaigns.")
    path = source.dir / "explain.json"
    if path.is_file():
        records = json.loads(path.read_text())
    else:
        from searcher.analysis.explain import explain

        records = [m.to_dict() for m in explain(source.results[0] if source.results else source.dir)]
    label = label_parameter(source).name
    confirming = any(r.get("fix_rates") for r in records)
    out = []
    for r in records:
        if r.get("over", "parameters") != "parameters":
            raise ParameterError(f"The failure modes of {source.dir} are ruled over rendered attributes (a latent generator's), "
                                 "which a recipe cannot set; use --recipe twins or balanced-hard.")
        rule = {k: v for k, v in (r.get("rule") or {}).items() if k != label}
        set_back = None
        if confirming:
            rates, control, done = r.get("fix_rates") or {}, r.get("control"), r.get("interventions") or {}
            ceiling = rates[control][2] if control in rates else 0.0
            causes = tuple(a for a in rule if a in rates and a != control and rates[a][1] > ceiling)
            known = [a for a in causes if a in done]
            if known:
                best = max(known, key=lambda a: (rates[a][0], rates[a][1]))
                set_back = (best, done[best]["value"])
        else:
            causes = tuple(rule)
        if causes:
            out.append(ModeCauses(int(r["mode"]), int(r["failures"]), rule, causes, confirming, set_back))
    if not out:
        raise ParameterError(f"No failure mode of {source.dir} has {'a confirmed cause' if confirming else 'a rule'} to draw from; "
                             "search longer, or use --recipe twins or balanced-hard.")
    where = ("causes confirmed by intervention (explain.json fix rates)" if confirming else
             "causes not confirmed (no fix rates: run `searcher explain RUN --confirm`); each mode's rule attributes stand in for them")
    return out, f"{len(out)} failure modes drawn from, {where}"


def build_set(source: Source, recipe: str, n: int, seed: int = 0) -> RecipeSet:
    """The `recipe` set of `n` images from `source` (see the module docstring), seeded by `seed`.

    Raises:
        ParameterError: an unknown recipe (naming the valid ones), a bad `n`, or a campaign that
            cannot give `n` images this way (naming how many it could).
    """
    check_choice("--recipe", recipe, RECIPES)
    check_int("-n", n, 1)
    build = {"balanced-hard": _balanced_hard, "twins": _twins, "crossed": _crossed, "crossed-draws": _crossed_draws,
             "decorrelated": _decorrelated}[recipe]
    built = build(source, n, seed)
    if len(built.rows) < n:
        raise ParameterError(f"The {recipe} recipe could build only {len(built.rows)} of {n} images from {source.dir}; "
                             f"ask for at most {len(built.rows)}, or search longer.")
    built.rows = built.rows.assign(weight=weights(built.rows)).reset_index(drop=True)
    return built


def _stored(source: Source, rows: pd.DataFrame) -> list[bytes]:
    return [png for _, png in source.png(rows)]


def _balanced_hard(source: Source, n: int, seed: int) -> RecipeSet:
    label_parameter(source)  # a classify target's
    fails = select(source.rows, "classify", "failures")
    label = fails["true_label"].astype(str)
    first = fails[label.groupby(label).cumcount() < n // 2]
    rows = balance_labels(first, source.rows)
    more = fails[~fails["id"].isin(rows["id"])]
    rows = pd.concat([rows, more.iloc[: max(0, n - len(rows))]]).iloc[:n]
    counts = ", ".join(f"{k} {v}" for k, v in sorted(rows["true_label"].astype(str).value_counts().items()))
    return RecipeSet(rows, _stored(source, rows), [f"balanced-hard: {int(rows['failure'].sum())} failures and "
                                                   f"{int((~rows['failure'].astype(bool)).sum())} other trials of the same modes ({counts})"])


def _params(source: Source, row: pd.Series) -> dict[str, Any]:
    """The parameters a campaign row was rendered with (the cube's held ones included), as plain values."""
    out = dict(source.held)
    for key, value in row.items():
        if str(key).startswith("param.") and not (isinstance(value, float) and np.isnan(value)):
            out[str(key)[6:]] = value.item() if isinstance(value, np.generic) else value
    return out


def _render(source: Source, params: Sequence[Mapping[str, Any]], keys: Sequence[dict[str, Any]]) -> list[tuple[dict[str, Any], bytes]]:
    """`params` rendered with the campaign's seed and judged; (row, PNG) for those with a right label.
    `keys[i]` gives row i's `judged_row` arguments."""
    out = []
    for outcome, key in zip(source.objective.evaluate(list(params), seed=int(source.config.get("seed", 0))), keys):
        right = source.judge.true_label(outcome.truth) if outcome.error is None else None
        if right is not None:
            out.append((judged_row(outcome, right, campaign=source.dir.name, **key), encode_png(outcome.image)))
    return out


def _twins(source: Source, n: int, seed: int) -> RecipeSet:
    lp, rng = label_parameter(source), np.random.default_rng([seed, _TWIN_STREAM])
    fails = select(source.rows, "classify", "failures")
    rows, pngs, pairs = _paired(source, fails, n, "twins", "twin", lambda r: {lp.name: lp.flip(r[f"param.{lp.name}"], r["true_label"], rng)})
    return RecipeSet(rows, pngs, [f"twins: {len(rows) - pairs} failures and {pairs} twins ({lp.name} flipped, everything else held)"])


def _crossed(source: Source, n: int, seed: int) -> RecipeSet:
    lp, rng = label_parameter(source), np.random.default_rng([seed, _CROSS_STREAM])
    back = {m: mc.set_back for m, mc in set_backs(source).items()}
    fails = select(source.rows, "classify", "failures")
    fails = fails[fails["mode"].isin(list(back))]
    rows, pngs, pairs = _paired(source, fails, n, "crossed", "crossed",
                                lambda r: {lp.name: lp.flip(r[f"param.{lp.name}"], r["true_label"], rng), **dict([back[int(r["mode"])]])})
    causes = ", ".join(f"{m}: {_setting(*back[m])}" for m in sorted(back))
    return RecipeSet(rows, pngs, [f"crossed: {len(rows) - pairs} failures and {pairs} twins ({lp.name} flipped and each mode's "
                                  f"strongest confirmed cause set back, everything else held; per mode {causes})"])


def _crossed_draws(source: Source, n: int, seed: int) -> RecipeSet:
    lp, rng = label_parameter(source), np.random.default_rng([seed, _FRESH_STREAM])
    modes, space = set_backs(source), source.objective.generator.space
    fails = select(source.rows, "classify", "failures")
    fails = fails[fails["mode"].isin(list(modes))].reset_index(drop=True)
    wanted = []  # per image: (label, {cause: value}, mode)
    for j in range(n):
        r = fails.iloc[(j // 2) % len(fails)]
        mode = int(r["mode"])
        cause, value = modes[mode].set_back
        other = next(lab for lab in lp.labels if str(lab) != str(r["true_label"]))
        own, box = r[f"param.{lp.name}"], modes[mode].rule[cause]
        wanted.append((r["true_label"], {lp.name: own, cause: _uniform(space[cause], box, rng)}, mode) if j % 2 == 0 else
                      (other, {lp.name: lp.flip(own, r["true_label"], rng), cause: _beyond(space[cause], box, value, rng)}, mode))
    found: dict[int, tuple[dict[str, Any], bytes]] = {}
    for _ in range(_TRIES):
        todo = [j for j in range(n) if j not in found]
        if not todo:
            break
        base = [{**source.held, **p} for p in source.space.from_unit(source.space.cube.uniform(rng, len(todo)))]
        params = [{**b, **wanted[j][1]} for b, j in zip(base, todo)]
        keys = [{"key": f"crossed-draws-{j:05d}", "strategy": "crossed-draws", "kind": "crossed-draws", "mode": wanted[j][2]}
                for j in todo]
        for row, png in _render(source, params, keys):
            j = int(row["id"].rsplit("-", 1)[1])
            if str(row["true_label"]) == str(wanted[j][0]):
                found[j] = (row, png)
    kept = [found[j] for j in sorted(found)]
    causes = ", ".join(sorted({_setting(*m.set_back) for m in modes.values()}))
    return RecipeSet(pd.DataFrame([r for r, _ in kept]), [png for _, png in kept],
                     [f"crossed-draws: {len(kept)} fresh draws of the pairs of the {len(fails)} confirmed failures (each failure's "
                      f"{lp.name} with its mode's cause inside the mode's box; {lp.name} flipped with the cause set back and beyond: "
                      f"{causes}), everything else drawn from the cube"])


def _beyond(p: Any, box: list[Any], value: Any, rng: np.random.Generator) -> Any:
    """A value of `p` uniform from the set-back `value` to `p`'s end on the far side of the mode's
    `box`: where the confirmation made the mode pass, and further (a level: `value` itself)."""
    if isinstance(p, Categorical) or box[0] <= value <= box[1]:
        return value
    return _uniform(p, [p.low, value] if value < box[0] else [value, p.high], rng)


def _paired(source: Source, fails: pd.DataFrame, n: int, recipe: str, kind: str,
            changed: Callable[[pd.Series], dict[str, Any]]) -> tuple[pd.DataFrame, list[bytes], int]:
    """The first `n // 2` of `fails` whose twin (each re-rendered with `changed(row)` set and
    everything else held; its id the failure's with `-kind`) takes the other label, those twins,
    and for an odd `n` one more failure: (rows, PNGs, how many twins)."""
    pairs: list[tuple[pd.Series, dict[str, Any], bytes]] = []
    start, want = 0, n // 2
    while len(pairs) < want and start < len(fails):
        batch = fails.iloc[start : start + 2 * (want - len(pairs)) + 8]
        start += len(batch)
        params = [{**_params(source, r), **changed(r)} for _, r in batch.iterrows()]
        keys = [{"key": f"{r['id']}-{kind}", "strategy": recipe, "kind": kind, "mode": int(r["mode"])} for _, r in batch.iterrows()]
        rendered = {row["id"]: (row, png) for row, png in _render(source, params, keys)}
        for _, r in batch.iterrows():
            twin = rendered.get(f"{r['id']}-{kind}")
            if twin is not None and str(twin[0]["true_label"]) != str(r["true_label"]) and len(pairs) < want:
                twin[0].update(trial=f"{r['trial']}-{kind}", campaign=r["campaign"])
                pairs.append((r, *twin))
    used = pd.DataFrame([r for r, _, _ in pairs])
    odd = fails[~fails["id"].isin(used["id"] if len(used) else [])].iloc[: n - 2 * want]
    originals = pd.concat([used, odd]) if len(used) else odd
    rows = pd.concat([originals, pd.DataFrame([t for _, t, _ in pairs])], ignore_index=True)
    return rows, _stored(source, originals) + [png for _, _, png in pairs], len(pairs)


def set_backs(source: Source) -> dict[int, ModeCauses]:
    """The failure modes with a cause confirmed by intervention and its set-back value
    (`ModeCauses.set_back`), by mode.

    Raises:
        ParameterError: no confirmation in the campaign, or no mode with a confirmed cause.
    """
    path = source.dir / "explain.json"
    if not (path.is_file() and any(r.get("fix_rates") for r in json.loads(path.read_text()))):
        raise ParameterError(f"The crossed recipe sets each mode's confirmed cause back; {source.dir} has no confirmation. "
                             f"Run `searcher explain {source.dir} --confirm` first.")
    out = {m.mode: m for m in mode_causes(source)[0] if m.set_back is not None}
    if not out:
        raise ParameterError(f"No failure mode of {source.dir} has a confirmed cause with its set-back value; search longer, or "
                             "use --recipe twins or balanced-hard.")
    return out


def _setting(attribute: str, value: Any) -> str:
    """`attribute to value`, a number to four figures, for the recipes' notes."""
    return f"{attribute} to {value:.4g}" if isinstance(value, float) else f"{attribute} to {value}"


def _decorrelated(source: Source, n: int, seed: int) -> RecipeSet:
    lp, rng = label_parameter(source), np.random.default_rng([seed, _DRAW_STREAM])
    modes, note = mode_causes(source)
    sizes = np.array([m.failures for m in modes], float)
    share = n * sizes / sizes.sum()
    quota = np.floor(share).astype(int)
    quota[np.argsort(-(share - quota), kind="stable")[: n - quota.sum()]] += 1
    space = source.objective.generator.space
    found: list[tuple[dict[str, Any], bytes]] = []
    for m, k in zip(modes, quota):
        kept: list[tuple[dict[str, Any], bytes]] = []
        for _ in range(_TRIES):
            if len(kept) >= k:
                break
            draws = _draws(source, space, m, lp, k - len(kept), rng)
            keys = [{"key": f"decorrelated-{len(found) + len(kept) + i:05d}", "strategy": "decorrelated", "kind": "decorrelated",
                     "mode": m.mode} for i in range(len(draws))]
            kept += _render(source, draws, keys)[: k - len(kept)]
        found += kept
    rows = pd.DataFrame([r for r, _ in found])
    return RecipeSet(rows, [png for _, png in found], [f"decorrelated: {note}; per mode " +
                                                       ", ".join(f"{m.mode}: {k} ({', '.join(m.causes)})" for m, k in zip(modes, quota))])


def _draws(source: Source, space: Any, m: ModeCauses, lp: LabelParameter, k: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    """`k` parameter dicts for mode `m`: free attributes as the campaign's cube draws them, the
    rule's non-causes inside its box, and (label, causes inside the box or not) crossed evenly."""
    base = [{**source.held, **p} for p in source.space.from_unit(source.space.cube.uniform(rng, k))]
    cells = rng.permutation(np.arange(k) % 4)  # label = cell % 2, causes inside = cell < 2: each cell a quarter
    box = {a: r for a, r in m.rule.items() if a != lp.name}
    outside_room = any(_has_outside(space[a], box[a]) for a in m.causes)
    for params, cell in zip(base, cells):
        for a, r in box.items():
            if a not in m.causes:
                params[a] = _uniform(space[a], r, rng)
        inside = cell < 2 or not outside_room
        for _ in range(1000 if not inside else 1):
            values = {a: _uniform(space[a], box[a] if inside else None, rng) for a in m.causes}
            if inside or not all(_holds(box[a], v) for a, v in values.items()):
                break
        params.update(values)
        params[lp.name] = lp.draw(lp.labels[cell % 2], rng)
    return base


def _uniform(p: Any, r: list[Any] | None, rng: np.random.Generator) -> Any:
    """A value of parameter `p` uniform over the rule's `r` (a `[low, high]` or levels), or over `p`'s whole range (None)."""
    if isinstance(p, Categorical):
        return _choice(rng, list(r if r is not None else p.choices))
    low, high = (max(r[0], p.low), min(r[1], p.high)) if r is not None else (p.low, p.high)
    return int(rng.integers(int(np.ceil(low)), int(np.floor(high)) + 1)) if isinstance(p, Integer) else float(rng.uniform(low, high))


def _holds(r: list[Any], value: Any) -> bool:
    return value in r if isinstance(value, str) else r[0] <= value <= r[1]


def _has_outside(p: Any, r: list[Any]) -> bool:
    """Whether parameter `p` takes values outside the rule's `r`."""
    return len(r) < len(p.choices) if isinstance(p, Categorical) else r[0] > p.low or r[1] < p.high


def _choice(rng: np.random.Generator, options: Sequence[Any]) -> Any:
    return options[int(rng.integers(len(options)))]

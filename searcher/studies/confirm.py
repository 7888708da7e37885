"""Causes confirmed by intervention: each failure mode's rule (`searcher.analysis.explain`) says
which attributes set its failures apart; this study sets each of them back, one at a time, on the
mode's own failures and asks the target again (issue 70, part 2;
docs/transects-and-causes.md#confirming-a-cause).

This is Denton et al.'s classification sensitivity (docs/papers.md#denton: the share of images
whose label flips when one attribute moves) measured with the renderer's exact interventions
instead of latent directions, per mode, and only on failures: the **fix rate** of an attribute is
the share of the mode's failures that pass once that attribute alone is set back. Everything else
the trial rendered is held: its stored parameters (identity included) and the campaign's render
seed, so an unchanged re-render is the stored image (checked on the first batch to be evaluated,
before the target is asked anything: `searcher.studies.rerender.check_rerender`, which allows for
`faces` rounding a few pixels otherwise when it renders an image in another batch).

Where an attribute is set back, from the campaign's distinct passes of the mode's right answer
(the true labels of its failures: a face of the same gender, not any face the target read right;
every pass where none of those will do):

- a number: the middle of the rule's complement on the side of its interval where more of those
  passes lie (halfway between the rule's bound and the end of the range). Not the passes' median:
  a search crowds its passes against the boundaries it bisects, and avoids where the target
  plainly passes, so their median sits at the edge of the mode the attribute should leave.
  Integers round to the nearest whole value;
- a categorical parameter: the most common level among those passes whose level the rule leaves out.

Beside the rule's attributes, one **control**: the continuous parameter outside the rule (not the
truth the target is judged by, not a latent coordinate) whose passes' median (the same passes)
lies farthest, in units of its range, from the median of the mode's failures, set to that median.
It is the largest change the search says is not the cause: a control that fixes failures says
that any large change moves the target (and the rule's fix rates mean less), or that the rule
missed a cause.

Not set back, with the reason: an attribute the campaign did not search (a latent generator's
rule is over its rendered truth, `ModeRule.over == "truth"`), a latent coordinate (moving it
redraws whatever else the code holds, and a latent generator keys its nuisance draw on the code),
the face's `identity` (what every intervention holds: the face itself, and the key of the render's
nuisance draw, so changing it is another face in another frame), and the truth column the target
is judged by (moving it changes the right answer, not the cause).

Cost and resumption: every re-render is one evaluation of the target, counted against `budget`.
Each mode's failures are drawn (seeded by the campaign's seed and the mode) up to one cap for all
modes, the largest that fits the budget, and the same draw serves every attribute of the mode, so
their fix rates are paired. The evaluations are stored like a campaign's trials, with source
"confirm", in a store of their own at `RUN/confirm/` (campaign.sqlite + images, under its own
directory lock), one committed step per (mode, attribute); running `confirm` again evaluates only
what is not committed, so a confirmation killed at any moment resumes to the same fix rates. A
target error is neither a pass nor a failure: left out of the rate and counted.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from searcher.analysis.explain import ModeRule, share_text
from searcher.analysis.modes import repeated
from searcher.causal import wilson_interval
from searcher.errors import ParameterError
from searcher.objective import FAILURE, Judge
from searcher.space import Categorical, Continuous, Integer, Space
from searcher.studies.rerender import Reopened, check_rerender, evaluate_rows, not_settable, reopen, study_store, study_target
from searcher.validation import checked

__all__ = ["DEFAULT_BUDGET", "FOLDER", "SOURCE", "FixWords", "Intervention", "ModeConfirmation", "confirm",
           "confirmation_lines", "fix_words", "unconfirmed_lines"]

DEFAULT_BUDGET = 400
"""Evaluations a confirmation spends by default, over every (mode, attribute) batch: 40 failures
each for 10 batches, 4 for the 100 of a 300-trial `gender-cnn` campaign (docs/results.md)."""
FOLDER = "confirm"
"""Where, inside the campaign's directory, the confirmation's evaluations are stored."""
SOURCE = "confirm"
"""The `source` of the confirmation's trials in its store."""


@dataclass(frozen=True)
class Intervention:
    """One attribute set back on a mode's failures, and what the target said then.

    Attributes:
        attribute: the parameter set back.
        value: where it was set, in the parameter's units (or its level).
        control: True for the control attribute (outside the rule).
        evaluated: re-renders the target was asked about (what the budget paid for).
        passed, failed: of those, the ones the target now gets right, and still gets wrong.
        errors: target errors (no answer), left out of the fix rate.
        excluded: images whose truth is ambiguous (no loss), left out of the fix rate.
    """

    attribute: str
    value: Any
    control: bool
    evaluated: int
    passed: int
    failed: int
    errors: int
    excluded: int

    @property
    def fix_rate(self) -> tuple[float, float, float]:
        """`(share of the judged re-renders that pass, Wilson 95% low, high)` to 4 decimals; `(0, 0, 1)` when none was judged."""
        n = self.passed + self.failed
        if not n:
            return 0.0, 0.0, 1.0
        low, high = wilson_interval(self.passed, n)
        return round(self.passed / n, 4), round(float(low), 4), round(float(high), 4)

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "control": self.control, "evaluated": self.evaluated, "passed": self.passed,
                "failed": self.failed, "errors": self.errors, "excluded": self.excluded}


@dataclass(frozen=True)
class ModeConfirmation:
    """A failure mode's rule with the fix rate of each of its attributes and of the control.

    Attributes:
        rule: the mode in words (`searcher.analysis.explain.ModeRule`).
        interventions: the rule's attributes set back, then the control (if any); none for a mode
            without a rule.
        skipped: attribute of the rule -> why it was not set back.
    """

    rule: ModeRule
    interventions: tuple[Intervention, ...] = ()
    skipped: dict[str, str] = field(default_factory=dict)

    @property
    def control(self) -> Intervention | None:
        return next((i for i in self.interventions if i.control), None)

    def to_dict(self) -> dict[str, Any]:
        """The record of `explain.json` after `--confirm`: the rule's, plus `fix_rates` (attribute
        -> `[rate, low, high]`, the control's among them; null for a mode without a rule),
        `control` (its name, or null), `interventions` (attribute -> where it was set and the
        counts) and `skipped` (attribute -> why it was not set back)."""
        ruled = self.rule.rule is not None
        return {**self.rule.to_dict(),
                "fix_rates": {i.attribute: list(i.fix_rate) for i in self.interventions} if ruled else None,
                "control": self.control.attribute if self.control else None,
                "interventions": {i.attribute: i.to_dict() for i in self.interventions},
                "skipped": dict(self.skipped)}


@dataclass(frozen=True)
class _Batch:
    """One (mode, attribute) batch of the plan: the campaign trials `(step, idx)` to re-render with `attribute` at `value`."""

    mode: int
    attribute: str
    value: Any
    control: bool
    trials: tuple[tuple[int, int], ...]

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "attribute": self.attribute, "value": self.value, "control": self.control,
                "trials": [list(t) for t in self.trials]}


@checked("confirm")
def confirm(run: str | Path, budget: int = DEFAULT_BUDGET, min_failures: int = 10, depth: int = 3,
            progress: bool = False) -> list[ModeConfirmation]:
    """Each failure mode of the campaign in `run` with the fix rates of its rule's attributes and of
    a control (see the module docstring); evaluations stored in `run/confirm/`, resumed from there.

    Args:
        run: a campaign directory (`searcher hunt`); it is read, never written (only `run/confirm/` is).
        budget: the most evaluations of the target the whole confirmation may spend, resumes included.
        min_failures, depth: as `searcher.analysis.explain.explain`: the modes given a rule, the trees' depth.
        progress: show a progress bar of the evaluations.

    Raises:
        ParameterError: no campaign or no evaluation there, a bad option, a budget too small for one
            failure per (mode, attribute), a stored confirmation planned otherwise (another budget,
            min_failures or depth, or a campaign that has grown since), or a generator that no
            longer renders the campaign's trials as they were stored.
    """
    r = reopen(run, min_failures, depth)
    batches, skipped = _plan(r.trials, r.space, r.modes, r.rules, r.objective.judge, budget, r.config.seed)
    counts: dict[int, Intervention] = {}
    if batches:
        counts = _run(r, batches, {"budget": budget, "min_failures": min_failures, "depth": depth}, progress)
    return [ModeConfirmation(rule, tuple(counts[k] for k, b in enumerate(batches) if b.mode == rule.mode), skipped.get(rule.mode, {}))
            for rule in r.rules]


# --------------------------------------------------------------------------- the words


@dataclass(frozen=True)
class FixWords:
    """One intervention of an explain.json record in words, as `searcher explain --confirm` prints
    it and `searcher report` tabulates it (one wording for both).

    Attributes:
        attribute: the attribute in words ("hair length").
        setting: where it was set: "back to 0.359", or "to 0" for the control.
        rate: the fix rate with its Wilson 95% interval, "95% [75%, 99%]".
        counts: what was evaluated and left out, "19 re-rendered, 2 target errors left out".
        control: True for the control attribute.
    """

    attribute: str
    setting: str
    rate: str
    counts: str
    control: bool

    @property
    def line(self) -> str:
        """The line `searcher explain --confirm` prints (without its indent)."""
        if self.control:
            return f"control {self.attribute} {self.setting}: {self.rate} ({self.counts})"
        return f"{self.attribute} {self.setting}: {self.rate} of this mode's failures pass ({self.counts})"


def _value_text(value: Any) -> str:
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def fix_words(record: dict[str, Any]) -> list[FixWords]:
    """Each intervention of an explain.json `record` (`ModeConfirmation.to_dict`) in words, the
    rule's attributes first, then the control; none before `--confirm` or for a mode without a rule."""
    out = []
    for name, rate in (record.get("fix_rates") or {}).items():
        i = record["interventions"][name]
        left = [f"{n} {what} left out" for n, what in ((i["errors"], "target errors"), (i["excluded"], "ambiguous")) if n]
        out.append(FixWords(name.replace("_", " "), f"{'to' if i['control'] else 'back to'} {_value_text(i['value'])}",
                            share_text(rate), ", ".join([f"{i['evaluated']} re-rendered", *left]), bool(i["control"])))
    return out


def unconfirmed_lines(record: dict[str, Any]) -> list[str]:
    """What an explain.json `record` after `--confirm` did not set back, one line per reason, and
    that it had no control where its rule found none."""
    reasons: dict[str, list[str]] = {}
    for name, why in (record.get("skipped") or {}).items():
        reasons.setdefault(why, []).append(name.replace("_", " "))
    lines = [f"not set back, {', '.join(names)}: {why}" for why, names in reasons.items()]
    if record["rule"] is not None and not any(i["control"] for i in (record.get("interventions") or {}).values()):
        lines.append("no control: every continuous parameter is in the rule or cannot be set back")
    return lines


def confirmation_lines(record: dict[str, Any]) -> list[str]:
    """The lines of one mode's confirmation, as `searcher explain --confirm` prints them: each
    attribute set back, then the control, then what was not set back."""
    return [w.line for w in fix_words(record)] + unconfirmed_lines(record)


# --------------------------------------------------------------------------- the plan


def _plan(trials: pd.DataFrame, space: Space, modes: np.ndarray, rules: list[ModeRule], judge: Judge, budget: int,
          seed: int) -> tuple[list[_Batch], dict[int, dict[str, str]]]:
    """The batches to evaluate (every ruled mode's attributes, then its control), each mode's
    failures drawn to one cap that fits `budget`; and per mode, the attributes not set back and why."""
    loss = pd.to_numeric(trials["loss"], errors="coerce").to_numpy(float)
    judged = ~np.isnan(loss) & trials["error"].isna().to_numpy() & trials["excluded"].isna().to_numpy() & ~repeated(trials["x"].tolist())
    passes = judged & (loss < FAILURE)
    right = np.array([str(judge.true_label(t)) if ok else "" for t, ok in zip(trials["truth"], judged)], object)
    settings: list[tuple[int, str, Any, bool]] = []  # (mode, attribute, value, control)
    skipped: dict[int, dict[str, str]] = {}
    for rule in rules:
        if rule.rule is None:
            continue
        mine = modes == rule.mode
        alike = passes & np.isin(right, np.unique(right[mine]))
        why: dict[str, str] = {}
        for name, bound in rule.rule.items():
            reason = not_settable(name, space, judge)
            value = None
            if reason is None:
                values = trials[f"param.{name}"].to_numpy()
                value = _set_back(space[name], bound, values[alike])
                value = _set_back(space[name], bound, values[passes]) if value is None else value
            if reason is None and value is None:
                reason = "no pass of the campaign lies outside the rule on it, so there is nowhere to set it back to"
            if reason:
                why[name] = reason
            else:
                settings.append((rule.mode, name, value, False))
        control = _control(space, judge, rule.rule, trials, alike if alike.any() else passes, mine)
        if control is not None:
            settings.append((rule.mode, *control, True))
        skipped[rule.mode] = why
    if not settings:
        return [], skipped
    failures = {m: [(int(s), int(i)) for s, i in trials.loc[modes == m, ["step", "idx"]].itertuples(index=False)]
                for m in {m for m, *_ in settings}}
    per_mode = Counter(m for m, *_ in settings)
    cap = _cap({m: len(f) for m, f in failures.items()}, per_mode, budget)
    drawn = {}
    for m, refs in failures.items():
        order = np.random.default_rng([seed, m]).permutation(len(refs))[: min(cap, len(refs))]
        drawn[m] = tuple(refs[k] for k in sorted(order.tolist()))
    return [_Batch(m, name, value, control, drawn[m]) for m, name, value, control in settings], skipped


def _set_back(param: Any, bound: list[Any], passed: np.ndarray) -> Any:
    """Where `param` leaves the rule's `bound`: the middle of the range beyond the bound on the side
    holding more of the passes (numbers), or the passes' most common level outside the rule's
    (categories); None if no pass lies outside."""
    if isinstance(param, Categorical):
        outside = [v for v in passed.tolist() if v not in bound]
        if not outside:
            return None
        counts = Counter(outside)
        return max(param.choices, key=lambda c: counts.get(c, 0))  # ties: the first in the space's order
    v = passed.astype(float)
    below, above = int((v < bound[0]).sum()), int((v > bound[1]).sum())
    if not below and not above:
        return None
    return _value(param, (param.low + bound[0]) / 2 if below >= above else (bound[1] + param.high) / 2)


def _value(param: Any, value: float) -> Any:
    return int(round(value)) if isinstance(param, Integer) else value


def _control(space: Space, judge: Judge, rule: dict[str, list[Any]], trials: pd.DataFrame, passes: np.ndarray,
             mine: np.ndarray) -> tuple[str, float] | None:
    """The control: the continuous parameter outside the rule whose passes' median lies farthest,
    in units of its range, from the median of the mode's failures; with that median. Ties go to
    the first in the space's order; None when no parameter qualifies."""
    if not passes.any():
        return None
    best: tuple[float, str, float] | None = None
    for p in space.params:
        if not isinstance(p, Continuous) or p.name in rule or not_settable(p.name, space, judge):
            continue
        values = trials[f"param.{p.name}"].to_numpy(float)
        median = float(np.median(values[passes]))
        distance = abs(median - float(np.median(values[mine]))) / (p.high - p.low)
        if best is None or distance > best[0]:
            best = (distance, p.name, median)
    return None if best is None else (best[1], best[2])


def _cap(failures: dict[int, int], batches: Counter, budget: int) -> int:
    """The largest number of failures per mode such that every batch of every mode fits `budget`
    together (a mode with fewer failures re-renders all of them)."""

    def cost(cap: int) -> int:
        return sum(batches[m] * min(cap, n) for m, n in failures.items())

    cap = 0
    while cap < max(failures.values()) and cost(cap + 1) <= budget:
        cap += 1
    if cap == 0:
        raise ParameterError(f"A confirmation budget of {budget} cannot re-render even one failure for each of the "
                             f"{sum(batches.values())} (mode, attribute) batches; give at least {cost(1)}.")
    return cap


# --------------------------------------------------------------------------- the evaluations


def _run(r: Reopened, batches: list[_Batch], options: dict[str, int], progress: bool) -> dict[int, Intervention]:
    """Evaluates the batches not yet committed in `RUN/confirm/` (`study_store`: under its lock,
    refused when planned otherwise) and counts every batch."""
    from tqdm import tqdm

    with study_store(r, FOLDER, [b.to_dict() for b in batches], options, "confirmation") as store:
        done = {s for s, _, _ in store.steps()}
        params = r.params()
        todo = [k for k in range(len(batches)) if k not in done]
        if todo:
            check_rerender(r, batches[todo[0]].trials)
            total = sum(len(b.trials) for b in batches)
            with study_target(r) as target, tqdm(total=total, initial=total - sum(len(batches[k].trials) for k in todo), unit="eval",
                                                 desc="confirm", disable=not progress) as bar:
                for k in todo:
                    b = batches[k]
                    evaluate_rows(store, target, r.space, k, [{**params[t], b.attribute: b.value} for t in b.trials],
                                  r.config.seed, {"mode": b.mode, "attribute": b.attribute, "control": b.control}, SOURCE)
                    bar.update(len(b.trials))
        return _counts(store.trials(), batches)


def _counts(stored: pd.DataFrame, batches: list[_Batch]) -> dict[int, Intervention]:
    """Per batch, what the target said of its re-renders."""
    out = {}
    for k, b in enumerate(batches):
        t = stored[stored["step"] == k]
        loss = pd.to_numeric(t["loss"], errors="coerce").to_numpy(float)
        errors = t["error"].notna().to_numpy()
        out[k] = Intervention(b.attribute, b.value, b.control, len(t), int((loss < FAILURE).sum()), int((loss >= FAILURE).sum()),
                              int(errors.sum()), int((t["excluded"].notna().to_numpy() & ~errors).sum()))
    return out

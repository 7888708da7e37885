"""Each failure mode's extent measured by intervention (`searcher explain RUN --probe`,
`searcher.probe`): the mode's most central failures re-rendered with one parameter at a time
moved toward each end of its range and bisected to where the target passes
(`searcher.analysis.probe.Bisection`; docs/transects-and-causes.md#measuring-a-modes-extent).

A rule `explain` reads off the campaign bounds a mode only where the search left passes; the
probed rule bounds it where the target says it ends. Its caption, precision and coverage are
computed on the campaign's points as `explain`'s are (`explain_modes(given=...)`).

What is probed: every mode with a rule, largest first, as many as `budget` pays for; from each,
its `starts` failures nearest the median of its failures (in the search's unit cube); every
parameter that can be moved alone (`searcher.studies.rerender.not_settable`: not the face itself,
not the truth the target is judged by, not a latent coordinate). A latent generator's rules are over
what it rendered, which no parameter sets alone: its modes are not probed, and say why.

Cost and resumption: every re-render is one evaluation of the target, counted against `budget`,
the most a mode's bisection can ask for reserved before it is planned. All modes' rounds are
evaluated together, one committed step per round, in `RUN/probe/` (campaign.sqlite + images,
under its own lock); a round's renders follow from the answers before it, so running `probe` again
replays the stored rounds and evaluates only what is missing, to the same rules.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from searcher.analysis.explain import ModeRule, explain_modes
from searcher.analysis.probe import STEPS, Bisection, central
from searcher.errors import ParameterError
from searcher.objective import FAILURE
from searcher.space import Categorical
from searcher.studies.rerender import Reopened, check_rerender, evaluate_rows, not_settable, reopen, study_store, study_target
from searcher.validation import checked

__all__ = ["DEFAULT_BUDGET", "DEFAULT_STARTS", "FOLDER", "SOURCE", "ModeProbe", "probe"]

DEFAULT_BUDGET = 1000
"""Evaluations a probe spends by default: four modes of a `faces` campaign (15 parameters,
one start each, at most 2 x 8 renders a number)."""
DEFAULT_STARTS = 1
"""Failures probed per mode: chosen on the suite's tune cases (`benchmarks/explain_rules.py
--probe`, docs/results.md), where one start found as many boxes as three at a third of the cost."""
FOLDER = "probe"
"""Where, inside the campaign's directory, the probe's evaluations are stored."""
SOURCE = "probe"
"""The `source` of the probe's trials in its store."""


@dataclass(frozen=True)
class ModeProbe:
    """A failure mode's rule read off the campaign (`fitted`) and, where it was probed, the rule
    measured by intervention (`probed`: captioned and scored on the campaign's points).

    Attributes:
        starts: the mode's failures probed, as (step, idx) of the campaign.
        evaluated: renders the target was asked about for this mode; errors: of them, target errors
            (each closed its side where it stood).
        skipped: why the mode was not probed, or None.
    """

    fitted: ModeRule
    probed: ModeRule | None = None
    starts: tuple[tuple[int, int], ...] = ()
    evaluated: int = 0
    errors: int = 0
    skipped: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The record of `explain.json` after `--probe`: the fitted rule's, plus `probe`: the probed
        `rule`, `caption`, `precision`, `coverage`, `starts`, `evaluated` and `errors`, or `skipped`."""
        if self.probed is None:
            return {**self.fitted.to_dict(), "probe": {"skipped": self.skipped}}
        p = self.probed.to_dict()
        return {**self.fitted.to_dict(), "probe": {k: p[k] for k in ("rule", "caption", "precision", "coverage")}
                | {"starts": [list(s) for s in self.starts], "evaluated": self.evaluated, "errors": self.errors}}


@checked("probe")
def probe(run: str | Path, budget: int = DEFAULT_BUDGET, starts: int = DEFAULT_STARTS, steps: int = STEPS, min_failures: int = 10,
          depth: int = 3, progress: bool = False) -> list[ModeProbe]:
    """Each failure mode of the campaign in `run` with its extent measured by intervention (see
    the module docstring); evaluations stored in `run/probe/`, resumed from there.

    Args:
        run: a campaign directory (`searcher hunt`); it is read, never written (only `run/probe/` is).
        budget: the most evaluations of the target the whole probe may spend, resumes included.
        starts: failures probed per mode (the sides' medians make its rule).
        steps: bisection rounds after each side's end: a side is placed to within 2**-steps of the
            way from the start to its range's end.
        min_failures, depth: as `searcher.analysis.explain.explain`.
        progress: show a progress bar of the rounds.

    Raises:
        ParameterError: no campaign or no evaluation there, a bad option, a budget that pays for no
            mode, a stored probe planned otherwise, or a generator that no longer renders the
            campaign's trials as they were stored.
    """
    r = reopen(run, min_failures, depth)
    plan, skipped = _plan(r, budget, starts, steps)
    answers: dict[int, list[bool | None]] = {}
    if plan:
        options = {"budget": budget, "starts": starts, "steps": steps, "min_failures": min_failures, "depth": depth}
        answers = _run(r, plan, steps, options, progress)
    given = {mode: b.rule() for mode, (_, b) in plan.items()}
    only = np.where(np.isin(r.modes, list(given)), r.modes, -1)  # the probed modes alone: the others keep the rules `reopen` fitted
    probed = {m.mode: m for m in explain_modes(r.trials, r.space, only, r.campaign.vocabulary, min_failures=min_failures,
                                               depth=depth, given=given)}
    out = []
    for rule in r.rules:
        if rule.mode in plan:
            refs, _ = plan[rule.mode]
            asked = answers.get(rule.mode, [])
            out.append(ModeProbe(rule, probed[rule.mode], refs, len(asked), sum(a is None for a in asked)))
        else:
            out.append(ModeProbe(rule, skipped=skipped.get(rule.mode, f"{rule.failures} failures, fewer than {min_failures}")))
    return out


def _plan(r: Reopened, budget: int, starts: int, steps: int) -> tuple[dict[int, tuple[tuple[tuple[int, int], ...], Bisection]], dict[int, str]]:
    """Per mode probed: its starts (step, idx) and their bisection; per mode not probed, why."""
    names = [p.name for p in r.space.params if not_settable(p.name, r.space, r.objective.judge) is None]
    skipped: dict[int, str] = {}
    if not names:
        return {}, {m.mode: "no parameter of the space can be moved alone" for m in r.rules if m.rule is not None}
    per_start = sum(len(r.space[n].choices) - 1 if isinstance(r.space[n], Categorical) else 2 * (1 + steps) for n in names)
    X = np.array(r.trials["x"].tolist(), float)
    refs = list(zip(r.trials["step"].astype(int), r.trials["idx"].astype(int)))
    params = r.params()
    plan: dict[int, tuple[tuple[tuple[int, int], ...], Bisection]] = {}
    left = budget
    for rule in sorted((m for m in r.rules if m.rule is not None), key=lambda m: (-m.failures, m.mode)):
        if rule.over != "parameters":
            skipped[rule.mode] = "its rule is over rendered attributes, which no parameter of the generator sets alone"
            continue
        mine = np.flatnonzero(r.modes == rule.mode)
        k = min(starts, len(mine))
        if k * per_start > left:
            skipped[rule.mode] = f"the budget is spent on larger modes ({k * per_start} more evaluations would probe it)"
            continue
        left -= k * per_start
        chosen = tuple(refs[i] for i in central(X, mine, k))
        plan[rule.mode] = (chosen, Bisection([params[ref] for ref in chosen], r.space, names, steps))
    if not plan and any("budget" in why for why in skipped.values()):
        raise ParameterError(f"A probe budget of {budget} pays for no mode: one start of a mode costs up to {per_start} "
                             f"evaluations here ({len(names)} parameters); give at least {per_start}.")
    return dict(sorted(plan.items())), skipped


def _run(r: Reopened, plan: dict[int, tuple[tuple[tuple[int, int], ...], Bisection]], steps: int, options: dict[str, int],
         progress: bool) -> dict[int, list[bool | None]]:
    """Every round of every mode's bisection, one committed step per round in `RUN/probe/`:
    stored rounds are replayed, the rest evaluated. Returns per mode its answers (True: still a
    failure, False: a pass, None: a target error or an ambiguous image)."""
    from tqdm import tqdm

    answers: dict[int, list[bool | None]] = {m: [] for m in plan}
    head = {"starts": {str(m): [list(s) for s in refs] for m, (refs, _) in plan.items()}, "names": next(iter(plan.values()))[1].names}
    with study_store(r, FOLDER, head, options, "probe") as store, ExitStack() as stack:
        target = None  # opened at the first round not stored: a replay asks the target nothing
        for step in tqdm(range(1 + steps), desc="probe", unit="round", disable=not progress):
            asked = [(m, b.rows()) for m, (_, b) in plan.items()]
            rows = [row for _, part in asked for row in part]
            if not rows:
                break
            if step in {s for s, _, _ in store.steps()}:
                losses = {k: loss for k, (_, loss) in store.step_trials(step).items()}
            else:
                if target is None:
                    check_rerender(r, [ref for refs, _ in plan.values() for ref in refs])
                    target = stack.enter_context(study_target(r))
                losses = evaluate_rows(store, target, r.space, step, rows, r.config.seed, {"round": step}, SOURCE)
            k = 0
            for m, part in asked:
                said = [_said(losses.get(k + j)) for j in range(len(part))]
                k += len(part)
                answers[m] += said
                plan[m][1].tell([bool(a) for a in said])
    return answers


def _said(loss: float | None) -> bool | None:
    """A stored loss as an answer: a failure, a pass, or None (no answer: an error or an ambiguous image)."""
    if loss is None or np.isnan(loss):
        return None
    return bool(loss >= FAILURE)

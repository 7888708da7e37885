"""What every study that re-renders a campaign's trials with one attribute changed shares
(`searcher.studies.confirm`, `searcher.studies.probe`): the campaign reopened with its generator,
space, modes, rules and objective; which parameters can be moved alone; the check that the
generator still renders the stored images; and a store of its own inside the campaign's
directory, under its own lock, that refuses to mix in evaluations planned otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from searcher.analysis.explain import ModeRule, explain_modes
from searcher.analysis.modes import mode_labels
from searcher.campaign.config import CampaignConfig, search_space
from searcher.campaign.executors import make_executor
from searcher.campaign.result import CampaignResult, load_campaign
from searcher.campaign.store import DirectoryLock, Store
from searcher.errors import ParameterError
from searcher.objective import Judge
from searcher.space import Space
from targets.base import CAP_REACHED

__all__ = ["HELD", "RENDER_PIXELS", "RENDER_TOLERANCE", "Reopened", "check_rerender", "evaluate_rows", "not_settable", "reopen",
           "study_store", "study_target"]

RENDER_TOLERANCE = 1
"""Grey levels (of 255) an unchanged re-render may differ from the stored image by and still count as
the same render: `faces` rounds a few pixels one level apart when it renders one image in another
batch (float32 kernels that differ with the batch size)."""
RENDER_PIXELS = 0.005
"""The share of pixels that may differ by more than `RENDER_TOLERANCE` in a re-render that still
counts as the same: the same rounding flips a hard edge (a hair mask's threshold) on a few pixels,
by up to 24 levels on 9 of the 49,152 values of a 128 x 128 colour image; another generator version or
option changes far more."""
HELD = ("identity",)
"""Parameters every intervention holds, never moved: the faces generators' pseudo-identity,
which keys the render's nuisance draw (framing jitter, background tint, sensor noise)."""


@dataclass(frozen=True)
class Reopened:
    """A campaign ready to be rendered again: its trials, configuration, space, failure modes (as
    the report cuts them), the rules `explain` reads off them, and its objective (generator and target)."""

    campaign: CampaignResult
    config: CampaignConfig
    space: Space
    modes: np.ndarray
    rules: list[ModeRule]
    objective: Any

    @property
    def trials(self) -> pd.DataFrame:
        return self.campaign.trials

    def params(self) -> dict[tuple[int, int], dict[str, Any]]:
        """(step, idx) -> the parameters the trial was rendered from."""
        t = self.trials
        return dict(zip(zip(t["step"], t["idx"]), t["params"]))


def reopen(run: str | Path, min_failures: int, depth: int) -> Reopened:
    """The campaign in `run` with its generator and target built as its configuration says.

    Raises:
        ParameterError: no campaign there, or none of its trials evaluated yet.
    """
    campaign = load_campaign(run)
    if campaign.trials.empty:
        raise ParameterError(f"{campaign.dir} holds no evaluations yet; run the campaign first.")
    import generators

    settings = CampaignConfig.with_defaults(campaign.config)
    config = CampaignConfig(**{**{k: v for k, v in settings.items() if k in CampaignConfig.keys()}, "out": str(campaign.dir)})
    generator = generators.load(config.generator, **dict(config.generator_options))
    space, _ = search_space(generator.space, config.vary, config.fix, config.cube)
    modes = mode_labels([campaign.trials], [config.strategy], blocks=space.cube.blocks)[0]
    rules = explain_modes(campaign.trials, space, modes, campaign.vocabulary, min_failures=min_failures, depth=depth)
    return Reopened(campaign, config, space, modes, rules, config.spec().build(generator))


def not_settable(name: str, space: Space, judge: Judge) -> str | None:
    """Why the parameter `name` cannot be moved with everything else held, or None."""
    latent = space.latent is not None and name in space.latent.names
    if not latent and name not in {p.name for p in space.params}:
        return ("a rendered attribute the generator takes no parameter for (a latent generator's rule is over what it "
                "rendered), so it cannot be set alone; latent directions are not fitted here")
    if latent or "latent coordinate" in (space[name].doc or ""):
        return ("a latent coordinate, not an attribute: moving it changes whatever else the code holds, so it is not "
                "set back (no encoder direction is fitted here)")
    if name in HELD:
        return "the face itself, which every intervention holds (it keys the render's nuisance draw too)"
    if name == judge.truth_column:
        return "the truth the target is judged by: setting it back changes the right answer, not the cause"
    return None


def check_rerender(reopened: Reopened, refs: Sequence[tuple[int, int]]) -> None:
    """Refuses a generator that renders the trials `refs` (rendered unchanged, in one batch as
    their interventions will be) otherwise than the campaign stored them: an intervention would then
    change more than its one attribute. Within `RENDER_TOLERANCE` on all but `RENDER_PIXELS` of the
    pixels counts as the same render."""
    campaign, t = reopened.campaign, reopened.trials
    params, images = reopened.params(), dict(zip(zip(t["step"], t["idx"]), t["image"]))
    stored = Store(campaign.dir, readonly=True)
    try:
        again = reopened.objective.generator.generate([params[ref] for ref in refs], seed=reopened.config.seed).images
        for ref, image in zip(refs, again):
            if not isinstance(images[ref], str):
                continue
            before = stored.load_image(images[ref])
            if image.shape != before.shape or (np.abs(image.astype(int) - before.astype(int)) > RENDER_TOLERANCE).mean() > RENDER_PIXELS:
                raise ParameterError(f"The generator renders trial {ref[0]}.{ref[1]} of {campaign.dir} otherwise than the campaign "
                                     "stored it (another version or options?), so setting one attribute back would change more "
                                     "than that attribute; run this with the generator that ran the campaign.")
    finally:
        stored.close()


@contextmanager
def study_store(reopened: Reopened, folder: str, plan: Any, options: Mapping[str, Any], what: str) -> Iterator[Store]:
    """The store of a study at `RUN/folder`, under its directory lock: created with the campaign's
    configuration, `options` and `plan` (under the key `folder`) the first time; refused (with the options that differ)
    when it holds a study planned otherwise, never mixed in. `what` names the study in the message."""
    path = reopened.campaign.dir / folder
    plan = json.loads(json.dumps(plan))
    lock = DirectoryLock(path)
    lock.acquire()
    try:
        store = Store(path)
        try:
            stored = store.config
            if stored is not None and stored.get(folder) != plan:
                was = stored.get("options") or {}
                changed = [f"{k.replace('_', '-')} {was.get(k)}, not {v}" for k, v in options.items() if was.get(k) != v]
                why = (f"with {'; '.join(changed)}: run it again with those" if changed else
                       "for the campaign as it was (it has changed since, or explain finds other rules now)")
                raise ParameterError(f"{path} holds a {what} planned {why}, or move {path} aside to start afresh.")
            if stored is None:
                store.save_config({**reopened.campaign.config, "out": str(path), "budget": options["budget"], "options": dict(options),
                                   folder: plan})
            yield store
        finally:
            store.close()
    finally:
        lock.release()


@contextmanager
def study_target(reopened: Reopened) -> Iterator[tuple[Any, Store | None]]:
    """The executor a study evaluates with (the campaign's own target) and, for a target that
    spends (a paid API with a cap), the campaign's store as its ledger: the study then holds the
    campaign's directory lock (so it never runs beside the campaign, whose spending it shares), the
    target's spending is restored from it, and `evaluate_rows` stores what the study sends there, so
    the campaign, its resumes and every study count against one cap. None for a free target."""
    executor = make_executor(None, reopened.config.spec(), objective=reopened.objective)
    lock = ledger = None
    try:
        if executor.spending() is not None:
            lock = DirectoryLock(reopened.campaign.dir)
            lock.acquire()
            ledger = Store(reopened.campaign.dir)
            spent = ledger.spending
            if spent is not None:
                executor.restore_spending(spent)
        yield executor, ledger
    finally:
        if ledger is not None:
            ledger.close()
        if lock is not None:
            lock.release()
        executor.close()


def evaluate_rows(store: Store, target: tuple[Any, Store | None], space: Space, step: int, rows: Sequence[Mapping[str, Any]],
                  seed: int, state: Mapping[str, Any], source: str) -> dict[int, float | None]:
    """Evaluates the `rows` of batch `step` not stored yet (a resume evaluates only what is
    missing) with `target` (`study_target`'s executor and ledger), stores them with `source`,
    commits the step with `state`; returns idx -> loss (None for a target error or an ambiguous
    image). With a ledger, the target's spending is stored there before the requests (the most
    they can cost, so a kill leaves the cap counting them) and again once their answers are
    stored; an image the cap kept from being sent is not stored, and the study stops in one line.

    Raises:
        ParameterError: the target's spending cap is reached."""
    have = store.step_trials(step)
    missing = [k for k in range(len(rows)) if k not in have]
    if missing:
        X = space.to_unit([{n: rows[k][n] for n in space.names} for k in missing])
        executor, ledger = target
        if ledger is not None:
            with ledger.transaction():
                ledger.save_spending(executor.spending(ahead=len(missing)))
        outcomes = executor.evaluate([dict(rows[k]) for k in missing], seed)
        with store.transaction():
            for k, x, (outcome, worker) in zip(missing, X, outcomes):
                if outcome.error != CAP_REACHED:
                    store.add_trial(step, k, x, outcome, worker, source=source)
        if ledger is not None:
            with ledger.transaction():
                ledger.save_spending(executor.spending())
        if any(outcome.error == CAP_REACHED for outcome, _ in outcomes):
            raise ParameterError(f"The target's spending cap is reached: these re-renders count against the cap of the campaign in "
                                 f"{ledger.dir if ledger else store.dir.parent}, with everything it sent. Every evaluation paid for is "
                                 f"kept in {store.dir}; raise the cap (`searcher hunt --resume {store.dir.parent} --option budget=N`) "
                                 "and run the same command again to evaluate the rest.")
    if step not in {s for s, _, _ in store.steps()}:
        store.finish_step(step, len(rows), dict(state))
    return {k: loss for k, (_, loss) in store.step_trials(step).items()}

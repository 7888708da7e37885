"""A campaign and its loop: ask, evaluate, store, tell, in synchronous batches, until the budget is spent.

    >>> c = Campaign(generator="faces", target="dlib-hog", strategy="random", budget=40, out="runs/try")
    >>> c.run()                                        # doctest: +SKIP
    >>> load_campaign("runs/try").trials.loss.mean()   # doctest: +SKIP

In batches of `batch` points: the strategy asks, the executor renders and judges, the batch's
trials are committed to the store as they come back (one transaction, with the images
`keeps_image` keeps), the strategy is told the losses, and the batch is marked complete with the
strategy's state. Both writes go, in that order, to a thread of their own (`writer.py`), so the
next batch is proposed and evaluated while they are written; a run that ends or stops waits for
them. A resumed campaign first replays the store: it tells the
strategy the stored history and restores the last state, re-asks the first incomplete batch (the
same points, because proposals depend only on seed, step and history), and evaluates only the
trials of it that are not stored yet: nothing is lost and nothing is evaluated twice.

With `overlap`, once `OVERLAP_AFTER` batches are told, batch `k + 1` is asked while batch `k` is
evaluated on a thread of its own (the strategy told which points are pending), and batch `k`'s
completion stores those points with it, in the same transaction; a resume evaluates the stored
points instead of asking them again, and the strategy's state, saved after batch `k` was told,
already holds what batch `k + 1`'s ask changed. So a resumed overlapped campaign asks what the
uninterrupted one asked, too.

A target that spends what a resume cannot give back (`targets.base.SpendingTarget`, e.g. a paid
HTTP API with a budget) has the most an evaluation can spend stored before it is sent, what it did
spend stored with the evaluation's trials, in the same transaction, and the record restored on
resume before the first request, so its cap holds across resumes, a kill -9 mid-batch included
(its writes stay in the loop's thread).
Once the cap is reached the campaign stops and says so; the images the target did not send get no
trial, so a resume with a raised cap (the one change to the target's options a resume accepts)
evaluates them.

The generator is built once here and the target once for a local run (Ray actors build their own).
"""

from __future__ import annotations

import copy
import gc
import hashlib
import json
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from searcher.campaign.config import CampaignConfig, search_space
from searcher.campaign.executors import LocalExecutor, RayExecutor, make_executor
from searcher.campaign.result import CampaignResult
from searcher.campaign.store import DirectoryLock, Store, TrialRecord
from searcher.campaign.writer import Writer
from searcher.defaults import OVERLAP_AFTER
from searcher.errors import ParameterError
from searcher.objective import Judge, Objective
from searcher.space import Continuous, Space
from searcher.strategies import STRATEGIES, Strategy, make_strategy
from targets.base import CAP_REACHED, SpendingTarget

__all__ = ["Campaign", "SetUp", "audited", "dry_prediction", "keeps_image", "run", "run_or_resume", "same_campaign", "set_up"]

_AUDIT_STREAM = 0xA0D17  # keys the audit sample's draws apart from the strategies'


@dataclass(frozen=True)
class Campaign(CampaignConfig):
    """A campaign: its configuration (`CampaignConfig`, whose fields are the `searcher hunt` flags)
    and `run()`, the loop below."""

    def run(self, progress: bool = True, resume: bool = False) -> CampaignResult:
        """Runs (or, with `resume`, continues) the campaign until the budget is spent."""
        return run(self, progress=progress, resume=resume)


def audited(campaign: CampaignConfig, step: int, n: int) -> int:
    """How many of batch `step`'s `n` points are the uniform audit sample (the last ones): the
    running total is `round(audit * evaluations)`, so the fraction holds over the campaign."""
    before = step * campaign.batch
    return min(n, round(campaign.audit * (before + n)) - round(campaign.audit * before))


def keeps_image(campaign: CampaignConfig, step: int, idx: int, failure: bool | None) -> bool:
    """Whether trial `idx` of batch `step` keeps its image: always for a failure; otherwise with
    probability `images` (the campaign's share of other images kept), decided by a hash of seed,
    step and idx, so a resumed or re-run campaign keeps the same images."""
    share = campaign.images
    if failure or share >= 1.0:
        return True
    key = hashlib.blake2b(f"{campaign.seed}:{step}:{idx}".encode(), digest_size=8).digest()
    return int.from_bytes(key, "little") < share * 2**64


def _losses(losses: Mapping[int, float | None], n: int) -> np.ndarray:
    """The losses of trials 0 .. n-1 of a batch (index -> loss; None, a target error, as NaN)."""
    return np.array([np.nan if losses[i] is None else losses[i] for i in range(n)])


class _Loop:
    """One run of a campaign: its space, strategy, store and executor."""

    def __init__(self, campaign: CampaignConfig, resume: bool) -> None:
        self.campaign = c = campaign
        setup = set_up(c)  # fails fast on a bad generator, target or strategy, before anything is locked or evaluated
        self.space, self.held, self.strategy = setup.space, setup.held, setup.strategy
        objective = setup.objective
        target = objective.target
        self.cap_options: tuple[str, ...] = tuple(target.cap_options) if isinstance(target, SpendingTarget) else ()
        out = Path(c.out)
        if not resume and not (out / "campaign.sqlite").exists():
            dry_prediction(setup, c)  # a target that cannot answer one image refuses the campaign before it is written
        self._new = [p for p in (out / "campaign.lock", out / "images", out) if not p.exists()]  # what a refusal removes
        self.fresh = False  # this run writes the campaign's first configuration: nothing else is stored yet
        self.store: Store | None = None
        self.executor: LocalExecutor | RayExecutor | None = None
        self._unsaved = False  # an evaluation is under way whose spending is not stored yet
        self._answers: dict[int, float | None] = {}  # index -> loss of the batch being evaluated, as stored (`finish` reads no row back)
        self._first_step = 0  # the first batch this run evaluates: the only one that may hold trials already
        self.writer: Writer | None = None  # set by `write_behind`
        self.lock = DirectoryLock(c.out)  # one process per campaign directory, taken only once the config is sound
        self.lock.acquire()
        try:
            self.executor = make_executor(c.executor, c.spec(), c.workers, c.ray_address, objective=objective,
                                          gpus_per_worker=c.gpus_per_worker)  # before the store
            self.store = Store(c.out)
            self.fresh = self.store.config is None
            self._check_stored(resume)
            spent = self.store.spending if resume else None
            if spent is not None:
                self.executor.restore_spending(spent)  # before the first request: the cap counts what earlier runs sent
        except BaseException:
            self.close()
            raise

    def _check_stored(self, resume: bool) -> None:
        c, stored = self.campaign, self.store.config
        if stored is not None and not resume:
            raise ParameterError(f"{c.out} already holds a campaign; resume it with `searcher hunt --resume {c.out}` or choose another --out.")
        if stored is not None:
            before = type(c).with_defaults(stored)
            if not same_campaign(stored, c, self.cap_options):
                caps = f", the target's {' and '.join(map(repr, self.cap_options))} option, to raise its cap," if self.cap_options else ""
                raise ParameterError(f"{c.out} holds a campaign with another configuration; resume it as it was "
                                     f"(only --budget, to extend it{caps} and --retries may change).")
            if c.budget < before["budget"]:
                raise ParameterError(f"A resumed campaign can be extended, not shortened: {c.out} has a budget of "
                                     f"{before['budget']}. Got {c.budget} instead.")
        self.store.save_config(c.config())

    def retry_errors(self) -> tuple[int, int]:
        """Evaluates again the stored trials that ended in a target error and have attempts left
        (`retries`), replacing them; returns (retried, answered now). Run before `replay`, so the
        strategy is told the new answers."""
        todo = self.store.errored(self.campaign.retries + 1)
        if not todo:
            return 0, 0
        self.stop_if_capped(todo[0][0])
        outcomes = self._evaluate([params for _, _, params, _, _, _ in todo])  # stored with the held values
        self._keep(todo[0][0], outcomes, lambda k, outcome, worker: TrialRecord(
            todo[k][0], todo[k][1], todo[k][3], outcome, worker, todo[k][4], todo[k][5] + 1,
            keeps_image(self.campaign, todo[k][0], todo[k][1], outcome.failure)))
        return len(todo), sum(o.error is None for o, _ in outcomes)

    def stop_if_capped(self, step: int, not_sent: bool = False) -> None:
        """Raises the ParameterError that stops the campaign at batch `step` once the target's spending cap is reached."""
        reason = self.executor.cap_reached() if self.cap_options else None  # a target with no cap is never asked (a Ray round trip a batch)
        if reason is not None or not_sent:
            raise ParameterError(_capped(reason or "spending cap reached", self.campaign, step, self.cap_options))

    def _evaluate(self, params: list[dict[str, Any]]) -> list:
        """The outcomes of `params`. A target that spends has the most these can spend stored first:
        killed while they are in flight, the campaign resumes with them counted, so its cap holds."""
        if self.cap_options:
            with self.store.transaction():
                self.store.save_spending(self.executor.spending(ahead=len(params)))
        self._unsaved = True
        return self.executor.evaluate(params, self.campaign.seed)

    def _keep(self, step: int, outcomes: list, record: Callable[[int, Any, Any], TrialRecord]) -> None:
        """Stores outcome `k` as `record(k, outcome, worker)`, all of them in one statement, with the
        target's spending, in one transaction; an image the cap kept from being sent gets no trial (a
        resume with a raised cap asks it), and stops the campaign."""
        records = [record(k, outcome, worker) for k, (outcome, worker) in enumerate(outcomes) if outcome.error != CAP_REACHED]
        if self.writer is not None:  # no spending to store with them (`write_behind`)
            self.writer.submit(lambda: self._add(records))
            self._unsaved = False
            return
        with self.store.transaction():
            self.store.add_trials(records)
            self._save_spending()
        if any(o.error == CAP_REACHED for o, _ in outcomes):
            self.stop_if_capped(step, not_sent=True)

    def _add(self, records: list[TrialRecord]) -> None:
        with self.store.transaction():
            self.store.add_trials(records)

    def flush(self) -> None:
        """Waits until every trial and batch handed to the writer is stored; raises a write's error."""
        if self.writer is not None:
            self.writer.drain()

    def write_behind(self) -> None:
        """From here on the trials and batches are written by a `Writer` thread while the next batch
        is evaluated (`writer.py`), unless the target spends: its record is stored before each
        request and with the trials it paid for, in the loop's own thread."""
        if not self.cap_options:
            self.writer = Writer()

    def _save_spending(self) -> None:
        """Stores what the target has spent (inside the caller's transaction, with the trials it paid for)."""
        state = self.executor.spending() if self.cap_options else None
        if state is not None:
            self.store.save_spending(state)
        self._unsaved = False

    def replay(self) -> tuple[int, int]:
        """Tells the strategy every completed batch and restores its last state; returns the
        evaluations done and the next step."""
        done = 0
        steps = self.store.steps()
        for step, size, state in steps:
            searched = size - audited(self.campaign, step, size)
            trials = self.store.step_trials(step)
            self.strategy.tell(np.stack([trials[i][0] for i in range(searched)]), _losses({i: t[1] for i, t in trials.items()}, searched))
            try:
                self.strategy.restore(state)
            except (KeyError, TypeError, ValueError) as exc:
                raise ParameterError(f"The stored state of batch {step} of {self.campaign.out} does not restore ({exc}); "
                                     f"`searcher doctor {self.campaign.out}` says what can be saved.") from None
            done += size
        self._first_step = len(steps)
        return done, len(steps)

    def search(self, step: int, n: int, pending: np.ndarray | None = None) -> np.ndarray:
        """The strategy's points of batch `step` of `n` (the rest are the audit sample's), asked with
        `pending`, the points asked before and not yet told, where the campaign overlaps."""
        k = audited(self.campaign, step, n)
        if n <= k:
            return np.zeros((0, self.space.dim))
        asked = self.strategy.ask(n - k, step) if pending is None else self.strategy.ask(n - k, step, pending=pending)
        return np.clip(np.asarray(asked, float), 0.0, 1.0)

    def propose(self, step: int, n: int, planned: np.ndarray | None = None) -> tuple[np.ndarray, int]:
        """Batch `step`'s `n` points: the strategy's (`planned`, where they were asked already), then
        the audit sample's; and how many are audit."""
        k = audited(self.campaign, step, n)
        X = self.search(step, n) if planned is None else np.asarray(planned, float).reshape(-1, self.space.dim)
        if k:
            rng = np.random.default_rng([self.campaign.seed, step, _AUDIT_STREAM])
            X = np.concatenate([X, self.space.cube.uniform(rng, k)])
        return X, k

    def evaluate(self, step: int, X: np.ndarray, audit: int) -> int:
        """Evaluates and stores the trials of batch `step` not stored yet; returns the failures among them.

        Raises:
            ParameterError: no trial of the batch got an answer from the target (a target that is
                down or refuses the key), or the first batch got no judgement at all (every trial an
                error or excluded as ambiguous): the rest of the budget would be spent the same way.
                Also once the target's spending cap is reached: trials it did not send are not
                stored, and a resume with a raised cap evaluates them.
        """
        n = len(X)
        have = self.store.step_trials(step) if step == self._first_step else {}  # later batches are this run's alone
        self._answers = {i: loss for i, (_, loss) in have.items()}
        todo = [i for i in range(n) if i not in have]
        if not todo:
            return 0
        self.stop_if_capped(step)
        params = self.space.from_unit(X)
        outcomes = self._evaluate([{**self.held, **params[i]} for i in todo])
        self._keep(step, outcomes, lambda k, outcome, worker: TrialRecord(
            step, todo[k], X[todo[k]], outcome, worker, "audit" if todo[k] >= n - audit else "search",
            keep_image=keeps_image(self.campaign, step, todo[k], outcome.failure)))
        self._answers.update((todo[k], outcome.loss) for k, (outcome, _) in enumerate(outcomes))  # every one stored: `_keep` stops at the cap
        if all(o.error is not None for o, _ in outcomes) or (step == 0 and all(o.loss is None for o, _ in outcomes)):
            raise ParameterError(_unjudged([o for o, _ in outcomes], self.campaign, step))
        return sum(bool(o.failure) for o, _ in outcomes)

    def finish(self, step: int, X: np.ndarray, audit: int, planned: np.ndarray | None = None) -> None:
        """Tells the strategy the searched points of batch `step` and marks the batch complete (with
        `planned`, the strategy's points of the next batch, asked while this one was evaluated)."""
        searched = len(X) - audit
        loss = _losses(self._answers, len(X))[:searched]
        composite = self.strategy.composite(X[:searched], loss) if searched else None
        if searched:
            self.strategy.tell(X[:searched], loss)
        size, state = len(X), self.strategy.state()
        if self.writer is None:
            self.store.finish_step(step, size, state, composite, planned)
        else:
            state = copy.deepcopy(state)  # as it is now: the strategy goes on while the row waits
            self.writer.submit(lambda: self.store.finish_step(step, size, state, composite, planned))

    def close(self) -> None:
        """Stores what was spent, stops the executor and lets the directory go; a campaign refused or
        stopped before it stored anything (no trial, no spending) is removed, so the same command,
        corrected, starts it afresh."""
        try:
            if self.writer is not None:
                writer, self.writer = self.writer, None
                writer.close()  # everything evaluated is stored before the store is read or closed
            if self._unsaved and self.store is not None:  # stopped while evaluating (Ctrl-C, an error): what was sent counts on resume
                with self.store.transaction():
                    self._save_spending()
        except Exception:  # noqa: BLE001 - the executor itself failed (a lost Ray actor): nothing more to learn from it
            pass
        finally:
            try:
                if self.executor is not None:
                    self.executor.close()
            finally:
                if self.fresh and self.store is not None and not self.store.step_trials(0) and self.store.spending is None:
                    self._discard()
                self.lock.release()
                for path in self._new if self.store is None else ():
                    _remove(path)

    def _discard(self) -> None:
        """Removes the store of a campaign that holds nothing (and the lock file, image folder and
        directory when this run made them); `self.store` becomes None."""
        self.store.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            _remove(self.store.path.with_name(self.store.path.name + suffix))
        self.store = None


def _remove(path: Path) -> None:
    """Removes the file, the folder of empty folders, or the empty directory `path`, if it is there."""
    try:
        if path.is_dir() and not path.is_symlink():
            for folder in sorted((p for p in path.rglob("*") if p.is_dir()), reverse=True):
                folder.rmdir()
            path.rmdir()
        else:
            path.unlink(missing_ok=True)
    except OSError:  # not empty (something else was put there) or already gone: left as it is
        pass


@dataclass(frozen=True)
class SetUp:
    """What a campaign searches with: the searched space, the parameters held fixed, the objective
    (the generator, target and loss built) and the strategy."""

    space: Space
    held: dict[str, Any]
    objective: Objective
    strategy: Strategy


def set_up(campaign: CampaignConfig) -> SetUp:
    """Builds campaign `campaign`'s generator, objective and strategy as its loop does (with a
    classify target, the band of the truth's cut that the target never judges is the strategy's
    `unjudged`); a stored campaign's `CampaignConfig.from_dir(path)`, with another `strategy`
    (`dataclasses.replace`), gives the strategy another search would have run on the same space
    (`lab/model_auc.py` fits its model on a random campaign's trials so)."""
    c = campaign
    generator = c.spec().load_generator()  # on its device; fails fast on a bad name or a GPU this machine lacks
    space, held = search_space(generator.space, c.vary, c.fix, c.cube)
    objective = c.spec().build(generator)  # the target and loss too, before anything is evaluated
    unjudged = None
    if objective.judge.task == "classify":  # the truth it is judged by exists and is a number: one render shows it
        shown = {**generator.space.defaults(), **held}
        truth = generator.generate([shown]).truth.to_dict("records")[0]
        objective.judge.check(truth)
        _check_cut(objective.judge, generator.space)
        unjudged = unjudged_band(objective.judge, space, shown, truth)
    strategy = make_strategy(c.strategy, space, seed=c.seed, budget=c.budget, unjudged=unjudged, **c.strategy_arguments())
    if c.overlap and not getattr(strategy, "overlaps", False):
        raise ParameterError(f"overlap asks the next batch before this one is told, which the {c.strategy!r} strategy does not "
                             f"take. Strategies that do: {', '.join(_overlapping())}. Use one of them, or leave overlap out.")
    return SetUp(space, held, objective, strategy)


def _overlapping() -> list[str]:
    """The strategies whose `overlaps` is True (those whose module loads here)."""
    names = []
    for name in STRATEGIES.describe():
        try:
            if getattr(STRATEGIES.factory(name), "overlaps", False):
                names.append(name)
        except ImportError:  # a peer's optional package
            continue
    return names


@contextmanager
def _ahead(overlap: bool) -> Iterator[ThreadPoolExecutor | None]:
    """With `overlap`, a thread that evaluates a batch while the next is asked, and torch on one
    thread meanwhile (the ask sets one thread for its algebra, and a target computing beside it
    must see the same setting whenever it runs: the same seed gives the same campaign); else None.
    Each step's GP is cyclic garbage (torch's module hooks): asked beside an evaluation, several
    steps' models piled up before Python's collector ran, and a 100,000-evaluation campaign peaked
    at twice the memory. So the loop collects after every ask, with what lived before the loop
    frozen out of the collector's scans (`gc.freeze`: a tenth of the time a collection)."""
    if not overlap:
        yield None
        return
    torch = sys.modules.get("torch")  # loaded by every strategy that uses it
    before = torch.get_num_threads() if torch is not None else None
    if torch is not None:
        torch.set_num_threads(1)
    gc.collect()
    gc.freeze()
    thread = ThreadPoolExecutor(1, thread_name_prefix="searcher-evaluate")
    try:
        yield thread
    finally:
        thread.shutdown(wait=True, cancel_futures=True)  # a batch under way is evaluated and stored before the loop closes
        gc.unfreeze()
        if torch is not None:
            torch.set_num_threads(before)


def dry_prediction(setup: SetUp, campaign: CampaignConfig) -> None:
    """Renders one image (the held values, the defaults elsewhere) and asks the target about it,
    before a new campaign writes anything: a target that raises on it (an option it cannot use, a
    model it cannot load) would raise on every trial. An answer that is an error for this image
    alone (a flaky service) is no refusal. A target that keeps count of what it spends
    (`SpendingTarget`, e.g. a paid API) is not asked: its request would be paid outside the count
    the store keeps, and its cap must count every request; its first batch is its check.

    Raises:
        ParameterError: the target raised, named with its error; nothing was written.
    """
    objective = setup.objective
    if isinstance(objective.target, SpendingTarget):
        return
    shown = {**objective.generator.space.defaults(), **setup.held}
    images = objective.generator.generate([shown], seed=campaign.seed).images
    try:
        objective.target.predict(images)
    except Exception as exc:  # noqa: BLE001 - whatever the target raises refuses the campaign, in one line
        reason = (f"{type(exc).__name__}: {exc}".strip().splitlines() or [type(exc).__name__])[0][:300]
        raise ParameterError(f"The target {campaign.target!r} fails on its first image ({reason}), so the campaign was not "
                             f"started and nothing was written to {campaign.out}. Check the target's options (--option; "
                             f"now {campaign.target_options or 'none'}).") from None


def unjudged_band(judge: Judge, space: Space, shown: Mapping[str, Any], truth: Mapping[str, Any]) -> tuple[int, float, float] | None:
    """The band of `space`'s unit cube whose faces `judge` never judges, as `(column, low, high)`:
    the coordinate of its truth column strictly between `low` and `high` puts the truth within the
    margin of the cut. None unless the truth column is a searched continuous parameter that the
    render `truth` of the parameters `shown` reports as it was asked (a generator whose truth is
    another function of its parameters gets none), and the margin is not 0."""
    column = judge.truth_column
    if judge.cut is None or not judge.margin or column not in space.names or not isinstance(space[column], Continuous):
        return None
    if not isinstance(truth.get(column), (int, float, np.integer, np.floating)) or not np.isclose(truth[column], shown[column]):
        return None
    start = next(c.start for c in space.cube.columns if c.name == column)
    base = np.full(space.dim, 0.5)  # the other coordinates do not move this one's decode

    def crossing(level: float) -> float:
        """The coordinate where the decoded value reaches `level` (it rises with the coordinate), by bisection."""
        lo, hi = 0.0, 1.0
        for _ in range(50):
            base[start] = mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if space.from_unit(base[None])[0][column] >= level else (mid, hi)
        return hi

    return start, crossing(judge.cut - judge.margin), crossing(judge.cut + judge.margin)


def _check_cut(judge: Judge, space: Space) -> None:
    """A cut outside the range of the parameter its truth column renders puts every face on one
    side: the whole budget would judge one label. Refused before anything is evaluated."""
    column = judge.truth_column
    if column not in space.names or not isinstance(space[column], Continuous):
        return
    p = space[column]
    if not p.low < judge.cut < p.high:
        side = judge.labels[0] if judge.cut >= p.high else judge.labels[1]
        raise ParameterError(f"--cut {judge.cut:g} lies outside {column}'s range [{p.low:g}, {p.high:g}]: every face would be "
                             f"judged {side!r}. Choose a cut inside the range (e.g. {(p.low + p.high) / 2:g}).")


def _unjudged(outcomes: list, campaign: CampaignConfig, step: int) -> str:
    """Why a batch got no judgement, and what to change."""
    errors = [o.error for o in outcomes if o.error is not None]
    batch = "the first batch" if step == 0 else f"batch {step + 1}"
    if errors:
        return (f"Stopped after {batch}: {len(errors)} of {len(outcomes)} trials got no answer from the target "
                f"{campaign.target!r} (first: {errors[0]}), so the rest of the budget was not spent. Check the target "
                f"(its URL, its key, that it runs), then `searcher hunt --resume {campaign.out}`: it asks again what got no answer.")
    return (f"Stopped after {batch}: all {len(outcomes)} trials were excluded as ambiguous ({outcomes[0].excluded}): "
            f"the truth the target is judged by sits at its cut. Vary that attribute or fix it away from the cut "
            f"(--vary / --fix), or lower --margin.")


def _capped(reason: str, campaign: CampaignConfig, step: int, options: tuple[str, ...]) -> str:
    """Why a campaign stopped at its target's spending cap, and how to go on."""
    batch = "the first batch" if step == 0 else f"batch {step + 1}"
    option = options[0] if options else "budget"
    return (f"Stopped at {batch}: the target {campaign.target!r} reports {reason}. Nothing more was sent, and every trial "
            f"stored is kept. Resuming as it is sends nothing: raise the cap (the target option {option!r}, e.g. "
            f"`searcher hunt --resume {campaign.out} --option {option}=N`), and the resumed campaign evaluates what was not sent.")


def run(campaign: CampaignConfig, progress: bool = True, resume: bool = False, desc: str | None = None) -> CampaignResult:
    """Runs (or, with `resume`, continues) `campaign` until its budget is spent; `desc` labels
    the progress bar (default "STRATEGY vs TARGET"), which shows evaluations and failures."""
    loop = _Loop(campaign, resume)
    try:
        retried = loop.retry_errors() if resume else (0, 0)
        done, step = loop.replay()
        failures = loop.store.failures() if done else 0
        loop.write_behind()
        bar = tqdm(total=campaign.budget, initial=done, disable=not progress, unit="eval",
                   desc=desc or f"{campaign.strategy} vs {campaign.target}")
        bar.set_postfix(failures=failures)
        start = time.perf_counter()
        try:
            with _ahead(campaign.overlap) as ahead:
                planned = loop.store.planned(step) if ahead is not None and done else None  # asked before a stop, stored
                while done < campaign.budget:
                    X, audit = loop.propose(step, min(campaign.batch, campaign.budget - done), planned)
                    left, planned = campaign.budget - done - len(X), None
                    if ahead is None or done < OVERLAP_AFTER * campaign.batch:
                        failures += loop.evaluate(step, X, audit)
                    else:  # the batch is evaluated on the thread while the next is asked here
                        evaluating = ahead.submit(loop.evaluate, step, X, audit)
                        if left > 0:
                            planned = loop.search(step + 1, min(campaign.batch, left), X[: len(X) - audit])
                            gc.collect()  # the step's model, before the next piles on it (`_ahead`)
                        failures += evaluating.result()
                    loop.finish(step, X, audit, planned)
                    done += len(X)
                    step += 1
                    bar.update(len(X))
                    bar.set_postfix(failures=failures)
            loop.flush()
        finally:
            bar.close()
    finally:
        loop.close()  # a new campaign that stored nothing is removed here
    result = CampaignResult(Path(campaign.out), None, loop.store.config or {}, time.perf_counter() - start, retried)  # trials read when asked for
    loop.store.close()
    return result


def same_campaign(stored: Mapping[str, Any], campaign: CampaignConfig, cap_options: Sequence[str] = ()) -> bool:
    """Whether the configuration `stored` with a campaign is `campaign`'s, but for what a resume may
    change: where it is, its budget (extended), its retries and its target's spending-cap options
    `cap_options` (raised to spend more), and where it runs (`device`, `gpus_per_worker`)."""
    before = type(campaign).with_defaults(stored)
    now = json.loads(json.dumps(campaign.config()))
    if isinstance(before.get("target_options"), dict):
        before["target_options"] = {k: v for k, v in before["target_options"].items() if k not in cap_options}
    now["target_options"] = {k: v for k, v in now["target_options"].items() if k not in cap_options}
    where = {"device": campaign.device, "gpus_per_worker": campaign.gpus_per_worker}
    return {**before, "out": campaign.out, "budget": campaign.budget, "retries": campaign.retries, **where} == now


def run_or_resume(campaign: CampaignConfig, progress: bool = True, desc: str | None = None) -> CampaignResult:
    """Runs `campaign`, or resumes it when its directory already holds it (a rerun of the same
    command picks up where a stopped one left off)."""
    return run(campaign, progress=progress, resume=(Path(campaign.out) / "campaign.sqlite").exists(), desc=desc)

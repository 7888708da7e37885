"""A campaign: search a generator + target for failures within a budget, recording everything.

    >>> c = Campaign(generator="faces", target="dlib-hog", strategy="random", budget=40, out="runs/try")
    >>> c.run()                                        # doctest: +SKIP
    >>> load_campaign("runs/try").trials.loss.mean()   # doctest: +SKIP

The loop, in synchronous batches of `batch` points: the strategy asks, the executor renders and
judges, every trial is committed to the store as it comes back, the strategy is told the losses,
and the batch is marked complete with the strategy's state. `resume` rebuilds the strategy by
telling it the stored history and restoring the last state, re-asks the first incomplete batch
(the same points, because proposals depend only on seed, step and history), and evaluates only
the trials of it that are not stored yet: nothing is lost and nothing is evaluated twice.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm import tqdm

from searcher.errors import ParameterError
from searcher.executors import EXECUTORS, make_executor
from searcher.objective import FAILURE, ObjectiveSpec
from searcher.space import Space
from searcher.store import Store
from searcher.strategies.common import Cube

__all__ = ["CUBES", "Campaign", "CampaignResult", "load_campaign", "search_space"]

CUBES = ("prior", "box")  # what a point of the unit cube means: prior quantiles, or the raw parameter box


def search_space(space: Space, vary: Sequence[str] | None, fix: Mapping[str, Any] | None) -> tuple[Space, dict[str, Any]]:
    """The sub-space a campaign searches, and the values it holds constant.

    `vary` names the parameters to search (default: all); `fix` pins values (validated); every
    other parameter stays at its default. A latent block is searched whole when `vary` is None
    or names any of its coordinates.
    """
    fix = dict(fix or {})
    names = {p.name for p in space.params} | set(space.latent.names if space.latent else [])
    for name in [*(vary or []), *fix]:
        if name not in names:
            raise ParameterError(f"Unknown parameter {name!r} in vary/fix. Valid parameters: {', '.join(space.names)}.")
    fixed = space.validate(fix)[0]  # checks the values; fills the rest with defaults
    overlap = sorted(set(vary or []) & set(fix))
    if overlap:
        raise ParameterError(f"A parameter cannot be both varied and fixed: {overlap}.")
    chosen = [p for p in space.params if (vary is None or p.name in vary) and p.name not in fix]
    latent = space.latent
    if latent is not None and (any(n in fix for n in latent.names) or (vary is not None and not set(vary) & set(latent.names))):
        latent = None
    if not chosen and latent is None:
        raise ParameterError("Nothing left to search: vary names no free parameter.")
    sub = Space(chosen, latent)
    held = {k: v for k, v in fixed.items() if k not in sub.names}
    return sub, held

_AUDIT_STREAM = 0xA0D17  # keys the audit sample's draws apart from the strategies'


@dataclass
class Campaign:
    """One failure-hunting campaign; keywords as the `searcher hunt` flags.

    Args:
        generator, target, strategy: plug-in and strategy names (`searcher list`).
        budget: evaluations in all.
        batch: points proposed and evaluated together.
        workers: evaluation workers (more than one runs on Ray).
        seed: seeds the strategy and the rendering.
        out: the campaign directory (SQLite record and images).
        alpha: weight of the diversity term of eq. (4) (BO only; default the strategy's, 0.6).
        vary, fix: search only these parameters / hold these at a value.
        executor: "local" or "ray" (default: ray when workers > 1).
        ray_address: join an existing Ray cluster.
        generator_options, target_options, strategy_options: passed to the plug-ins.
        truth_column, cut, margin, loss: how a classify target is judged (see searcher.objective).
        audit: fraction of every batch drawn uniformly at random (in the same cube, from its own
            seeded stream) instead of by the strategy, and stored with `source = "audit"`: an
            unbiased sample for population error rates beside an adaptive search, which
            over-samples failures on purpose. The strategy is not told these points. Default 0.
        cube: "prior" (default): the strategies' unit cube holds quantiles of each parameter's
            everyday prior, so uniform search samples ordinary faces and conditions and failures
            are the rare thing to find; "box": the raw parameter ranges, where most of the volume
            is extreme (uniform blur, noise and yaw) and most faces fail.
    """

    generator: str = "faces"
    target: str = "dlib-cnn"
    strategy: str = "bo"
    budget: int = 400
    batch: int = 4
    workers: int = 1
    seed: int = 0
    out: str = "runs/campaign"
    alpha: float | None = None
    vary: Sequence[str] | None = None
    fix: Mapping[str, Any] | None = None
    executor: str | None = None
    ray_address: str | None = None
    generator_options: Mapping[str, Any] = field(default_factory=dict)
    target_options: Mapping[str, Any] = field(default_factory=dict)
    strategy_options: Mapping[str, Any] = field(default_factory=dict)
    truth_column: str | None = None
    cut: float | None = None
    margin: float = 0.1
    loss: str = "zero-one"
    cube: str = "prior"
    audit: float = 0.0

    def __post_init__(self) -> None:
        for name in ("budget", "batch", "workers"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ParameterError(f"The {name!r} option must be an integer >= 1. Got {value!r} instead.")
        if self.alpha is not None and not (isinstance(self.alpha, (int, float)) and 0.0 <= self.alpha <= 1.0):
            raise ParameterError(f"The 'alpha' option must be a number in [0, 1]. Got {self.alpha!r} instead.")
        if isinstance(self.audit, bool) or not isinstance(self.audit, (int, float)) or not 0.0 <= self.audit < 1.0:
            raise ParameterError(f"The 'audit' option must be a fraction in [0, 1). Got {self.audit!r} instead.")
        if self.executor is not None and self.executor not in EXECUTORS:
            raise ParameterError(f"The 'executor' option must be one of {', '.join(EXECUTORS)}. Got {self.executor!r} instead.")
        if self.cube not in CUBES:
            raise ParameterError(f"The 'cube' option must be one of {', '.join(CUBES)}. Got {self.cube!r} instead.")
        if isinstance(self.vary, str):
            self.vary = [v.strip() for v in self.vary.split(",") if v.strip()]

    @classmethod
    def from_dir(cls, directory: str | Path) -> Campaign:
        """The campaign stored in `directory`, to resume it."""
        path = Path(directory)
        if not (path / "campaign.sqlite").is_file():
            raise ParameterError(f"No campaign to resume at {path} (campaign.sqlite is missing).")
        store = Store(path)
        try:
            config = store.config
        finally:
            store.close()
        if config is None:
            raise ParameterError(f"The campaign at {path} has no configuration stored.")
        return cls(**config)

    # ------------------------------------------------------------------ set-up, checked before any evaluation

    def spec(self) -> ObjectiveSpec:
        return ObjectiveSpec(self.generator, self.target, dict(self.generator_options), dict(self.target_options),
                             self.loss, self.truth_column, self.cut, self.margin)

    def config(self) -> dict[str, Any]:
        """The JSON-serialisable configuration stored with the campaign."""
        out = dataclasses.asdict(self)
        out["vary"] = list(self.vary) if self.vary is not None else None
        out["fix"] = dict(self.fix or {})
        return out

    @classmethod
    def _with_defaults(cls, stored: dict[str, Any]) -> dict[str, Any]:
        """A stored configuration completed with the defaults of options added since it was written."""
        defaults = cls().config()
        return json.loads(json.dumps({**{k: v for k, v in defaults.items() if k not in stored}, **stored}))

    def _prepare(self):
        import generators
        from searcher.strategies import make_strategy

        generator = generators.load(self.generator, **dict(self.generator_options))  # fails fast on a bad name
        space, held = search_space(generator.space, self.vary, self.fix)
        options = dict(self.strategy_options)
        if self.alpha is not None:
            options["alpha"] = self.alpha
        strategy = make_strategy(self.strategy, space, seed=self.seed, budget=self.budget, **options)
        self.spec().build()  # the target and loss too, before anything is evaluated
        return space, held, strategy

    def _audited(self, step: int, n: int) -> int:
        """How many of batch `step`'s `n` points are the uniform audit sample (the last ones):
        the running total is `round(audit * evaluations)`, so the fraction holds over the campaign."""
        before = step * self.batch
        return min(n, round(self.audit * (before + n)) - round(self.audit * before))

    # ------------------------------------------------------------------ the loop

    def run(self, progress: bool = True, resume: bool = False) -> CampaignResult:
        """Runs (or, with `resume`, continues) the campaign until the budget is spent."""
        space, held, strategy = self._prepare()
        store = Store(self.out)
        stored = store.config
        if stored is not None and not resume:
            raise ParameterError(f"{self.out} already holds a campaign; resume it with `searcher hunt --resume {self.out}` or choose another --out.")
        if stored is not None and {**self._with_defaults(stored), "out": self.out} != json.loads(json.dumps(self.config())):
            raise ParameterError(f"{self.out} holds a campaign with another configuration; resume it as it was.")
        store.save_config(self.config())

        done = 0
        for step, size, state in store.steps():  # replay the completed batches into the strategy
            trials = store.step_trials(step)
            searched = size - self._audited(step, size)
            X = np.stack([trials[i][0] for i in range(searched)])
            strategy.tell(X, np.array([np.nan if trials[i][1] is None else trials[i][1] for i in range(searched)]))
            strategy.restore(state)
            done += size
        step = len(store.steps())
        audit_cube = Cube(space)
        executor = make_executor(self.executor, self.spec(), self.workers, self.ray_address)
        failures = int(store.trials()["failure"].eq(True).sum()) if done else 0
        bar = tqdm(total=self.budget, initial=done, disable=not progress, desc=f"{self.strategy} vs {self.target}", unit="eval")
        start = time.perf_counter()
        try:
            while done < self.budget:
                n = min(self.batch, self.budget - done)
                audited = self._audited(step, n)
                X = np.clip(np.asarray(strategy.ask(n - audited, step), float), 0.0, 1.0) if n > audited else np.zeros((0, space.dim))
                if audited:
                    X = np.concatenate([X, audit_cube.uniform(np.random.default_rng([self.seed, step, _AUDIT_STREAM]), audited)])
                have = store.step_trials(step)
                todo = [i for i in range(n) if i not in have]
                params = space.from_unit(X, quantiles=self.cube == "prior")
                if todo:
                    outcomes = executor.evaluate([{**held, **params[i]} for i in todo], self.seed)
                    for i, (outcome, worker) in zip(todo, outcomes):
                        store.add_trial(step, i, X[i], outcome, worker, "audit" if i >= n - audited else "search")
                        failures += bool(outcome.failure)
                have = store.step_trials(step)
                loss = np.array([np.nan if have[i][1] is None else have[i][1] for i in range(n)])
                searched = n - audited
                composite = strategy.composite(X[:searched], loss[:searched]) if hasattr(strategy, "composite") and searched else None
                if searched:
                    strategy.tell(X[:searched], loss[:searched])
                store.finish_step(step, n, strategy.state(), composite)
                done += n
                step += 1
                bar.update(n)
                bar.set_postfix(failures=failures)
        finally:
            bar.close()
            executor.close()
        result = CampaignResult(Path(self.out), store.trials(), time.perf_counter() - start)
        store.close()
        return result


@dataclass
class CampaignResult:
    """A campaign's trials and where they are."""

    dir: Path
    trials: pd.DataFrame
    seconds: float = 0.0

    @property
    def config(self) -> dict[str, Any]:
        store = Store(self.dir)
        try:
            return store.config or {}
        finally:
            store.close()

    def summary(self) -> str:
        t = self.trials
        if t.empty:
            return f"{self.dir}: no trials yet"
        judged = t["loss"].notna()
        fails = int((t["loss"] >= FAILURE).sum())
        errors = int(t["error"].notna().sum())
        excluded = int(t["excluded"].notna().sum())
        lines = [
            (f"{self.dir}: {len(t)} evaluations, {fails} failures ({fails / max(1, judged.sum()):.1%} of judged), "
             f"{errors} target errors, {excluded} excluded as ambiguous"),
        ]
        if self.seconds:
            lines.append(f"{len(t) / self.seconds:.1f} evaluations/s this run")
        return "\n".join(lines)


def load_campaign(directory: str | Path) -> CampaignResult:
    """A stored campaign: `.trials` is a DataFrame with `loss`, `error`, `x` (the unit-cube point),
    `params`, `truth`, `label`, `image` (content hash) and one `param.NAME` column per parameter."""
    path = Path(directory)
    if not (path / "campaign.sqlite").is_file():
        raise ParameterError(f"No campaign at {path} (campaign.sqlite is missing).")
    store = Store(path)
    try:
        return CampaignResult(path, store.trials())
    finally:
        store.close()

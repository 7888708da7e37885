"""`bo-modes`: a Gaussian process that looks for new failure modes, and a trust region per mode found.

The engine wants many failures *and* many failure modes per evaluation (eq. (4) of McDuff et al.,
docs/papers.md#mcduff). `bo` trades one for the other through a weight; here the two jobs are kept
apart and split by a schedule (TuRBO's trust regions, Eriksson et al. 2019, one per failure mode).
Each `ask`, after a Sobol start of `n_init` points:

1. **Model.** A GP of the told points (`gp.py`): with `likelihood="auto"`, a classification of
   failed and passed points where every loss is 0 or 1, else a GP on the losses' normal scores.
   `p_fail(x)` is its posterior probability that `x` fails.
2. **Modes.** Two failures are joined when they share every categorical level, one is among the
   other's nearest, and the model predicts failure all along the segment between them; the
   connected components are the failure modes.
3. **Harvest.** The mode with the largest `p_fail / (1 + failures near it)^3` gets the point: among
   Gaussian steps around its failures, or convex combinations of them (as their hit rates so far
   earn it), the candidate farthest from every failure among those near the best `p_fail`. Some
   harvesting points are drawn instead from the failing set the model is sure of anywhere, while
   such draws fail about as often as the modes' harvest.
4. **Explore.** A Thompson draw over uniform points and neighbours of the highest passes, away
   from every failure and off the slopes of the modes already found.
5. **Schedule.** A fraction `early` of the points explores in the first `split` of the budget,
   `late` after (by index: exact and stateless); after the split a point explores only where its
   draw puts a failure, and harvests otherwise.

A batch of `POOLED_FROM` points or more draws its candidates once per ask, and, told nothing until
all its points are answered, harvests by a classification of failed and passed points and explores
from more passes at once (`pool.py`). No point is proposed twice, nor inside the `unjudged` band a
classify target never judges. Past `max_points` answered points a step sees the GP's rows alone
(`CarriedGP._training_rows`), so its cost stops growing with the history
(`benchmarks/proposal_cost.py`). Why
each rule, what it measured and what was tried instead: docs/search.md#bo-modes-in-full-its-rules-and-its-ablations.
`ModesAblation` switches each rule off or back to what it replaced (`bo-modes-nomodel`: no model).
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import gpytorch
import numpy as np
import torch
from botorch.acquisition.objective import ScalarizedPosteriorTransform
from botorch.models import SingleTaskGP
from botorch.posteriors import Posterior
from botorch.utils.sampling import manual_seed
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial.distance import cdist
from scipy.stats import norm

from searcher.defaults import DEFAULT_BUDGET
from searcher.errors import ParameterError
from searcher.objective import FAILURE
from searcher.space import Space
from searcher.strategies.base import step_rng
from searcher.strategies.bo.candidates import around
from searcher.strategies.bo.carried import CarriedGP, one_thread
from searcher.strategies.bo.gp import CHOLESKY_LIMIT, fit_dirichlet_gp, fit_ranked_gp, normal_scores
from searcher.strategies.bo.pool import POOLED_FROM, Pool
from searcher.validation import check_choice, check_flag, check_int, check_number

__all__ = ["FailureModes", "ModelFreeFailureModes", "ModesAblation"]

MODELS = ("gp", "constant")
LIKELIHOODS = ("auto", "gaussian", "dirichlet")
INSIDE = ("never", "always", "earned")
EXPLORE = ("draw", "climb")
EXPLORE_WHEN = ("scheduled", "hopeful")
UNIFORM = ("never", "earned")
POOLED_MODELS = ("classes", "same")
ANYWHERE_RULES = ("always", "earned")
_PREMIUM = 0.1  # by how much a draw of the span's hit rate must beat the steps' for `inside="earned"` to harvest inside
_ANYWHERE_PREMIUM = 0.05  # how far below a draw of the modes' hit rate the anywhere draws' may fall (`anywhere_rule="earned"`)
_HORIZON = DEFAULT_BUDGET  # the budget assumed when none is given
_NEIGHBOURS = 6  # failures each failure may join (the nearest)
_REACH = 0.35  # ... if within this normalised distance
_PER_CENTRE = 32
_CENTRES = 8
_POOL_CENTRES = 32  # a pooled batch steps around this many of a mode's failures, spread over it (`pool.py`) ...
_POOL_PER_CENTRE = 16  # ... this many steps each: twice the candidates a point asked alone draws
_UNIFORM = 512
_TOP_PASSES = 8
_CLIMB_PER_CENTRE = 96  # neighbours per top pass with `explore="climb"` (768 candidates, as the draw's 512 + 256)
_SURE = 0.5  # below this best p_fail the model does not believe the mode: harvest next to its failures
_EVENNESS = 3.0
_NEAR = 0.5  # kernel correlation above which a failure counts against harvesting a mode (the first value tried)
_GAP = 0.15  # a told point within this fraction of |f - g| of their midpoint settles whether f and g share a region
_SEGMENT = np.array([0.25, 0.5, 0.75])
_ANYWHERE_ARM = 2  # the anywhere draws' row of the harvest's record
_SPAN = 3  # failures of a mode each harvesting candidate (with `inside`) is a convex combination of
_GOOD_TURING_PRIOR = 0.5  # the singletons a uniform arm's chance starts from (Jeffreys)
_SURE_ANYWHERE = 0.95  # the `p_fail` an `anywhere` draw must have (lower lost failures: docs/search.md)


@dataclass(frozen=True)
class ModesAblation:
    """The switches of `bo-modes`'s rules: the defaults are the strategy, and each other value turns
    a rule off or back to what it replaced, to measure what the rule buys (the ablation table of
    docs/search.md#bo-modes-in-full-its-rules-and-its-ablations says what each one measured).

    A strategy takes them as its `ablation` option, an instance or a mapping of the switches that
    differ: `make_strategy("bo-modes", space, ablation={"probe": True})`, or on the command line
    `--strategy-option ablation.probe=true`.

    Args:
        model: "gp", or "constant": no GP (modes join failures within `radius`, the harvest takes a
            random neighbour of the mode with the best yield so far, exploring takes Sobol points).
        inside: where a mode is harvested by convex combinations of its failures instead of Gaussian
            steps around them: "earned" (where they have hit more often so far), "never" or "always".
        anywhere: the fraction of harvesting points that may be drawn from the failing set the model
            is sure of anywhere instead of from a mode (0: never).
        anywhere_rule: "earned" (such a draw only while they fail about as often as the modes'
            harvest) or "always".
        explore: "draw" (a Thompson draw over uniform points and neighbours of the highest passes)
            or "climb" (with a graded loss, over neighbours of the highest passes off the known slopes alone).
        explore_when: "hopeful" (after the split, a point the schedule gives to exploring explores
            only where its draw puts a failure, else it harvests) or "scheduled" (always explores).
        near_best: a harvesting point is the farthest from every failure among the candidates whose
            `p_fail` is at least this fraction of the best (1: the likeliest to fail).
        probe: settle with a point at the midpoint whether a failure the kernel counts against a
            larger mode beside it shares that mode's region.
        uniform: "earned" (a harvesting point is drawn uniformly instead where a draw of the chance
            that a uniform point finds a mode not yet found beats a draw of the harvest's value, a
            failure in the least crowded mode: `_uniform_arm`) or "never".
        pooled_model: in a batch of `POOLED_FROM` points or more, where the model is of a graded
            loss, what finds the modes and harvests them: "classes" (a classification of failed and
            passed points, fitted beside the graded model, which the exploring points keep) or
            "same" (the graded model).
        pooled_climbers: in such a batch, the exploring candidates step around one of the highest
            passes per this many exploring points (at least 8; 0: 8, as a point asked alone).
        pooled_spacing: in such a batch, how far its exploring points keep from each other, as a
            fraction of `radius` (1: as far as from a failure, as under 0/1 answers, with no climb to share).
    """

    model: str = "gp"
    inside: str = "earned"
    anywhere: float = 0.5
    anywhere_rule: str = "earned"
    explore: str = "draw"
    explore_when: str = "hopeful"
    near_best: float = 0.8
    probe: bool = False
    uniform: str = "never"
    pooled_model: str = "classes"
    pooled_climbers: int = 4
    pooled_spacing: float = 0.25

    def __post_init__(self) -> None:
        owner = type(self).__name__
        checked = {
            "model": check_choice("model", self.model, MODELS, owner=owner),
            "inside": check_choice("inside", self.inside, INSIDE, owner=owner),
            "anywhere": check_number("anywhere", self.anywhere, 0.0, 1.0, owner=owner),
            "anywhere_rule": check_choice("anywhere_rule", self.anywhere_rule, ANYWHERE_RULES, owner=owner),
            "explore": check_choice("explore", self.explore, EXPLORE, owner=owner),
            "explore_when": check_choice("explore_when", self.explore_when, EXPLORE_WHEN, owner=owner),
            "near_best": check_number("near_best", self.near_best, 0.0, 1.0, open_low=True, owner=owner),
            "probe": check_flag("probe", self.probe, owner=owner),
            "uniform": check_choice("uniform", self.uniform, UNIFORM, owner=owner),
            "pooled_model": check_choice("pooled_model", self.pooled_model, POOLED_MODELS, owner=owner),
            "pooled_climbers": check_int("pooled_climbers", self.pooled_climbers, 0, owner=owner),
            "pooled_spacing": check_number("pooled_spacing", self.pooled_spacing, 0.0, 1.0, owner=owner),
        }
        for name, value in checked.items():  # "true" as the command line gives it -> True, 1 -> 1.0
            object.__setattr__(self, name, value)

    @classmethod
    def of(cls, value: ModesAblation | Mapping[str, Any] | None) -> ModesAblation:
        """`value` as switches: None is the defaults, a mapping sets the switches it names.

        Raises:
            ParameterError: `value` is neither, or names a switch there is not (the message lists them).
        """
        if value is None or isinstance(value, cls):
            return cls() if value is None else value
        names = [f.name for f in dataclasses.fields(cls)]
        if not isinstance(value, Mapping):
            raise ParameterError(f"The 'ablation' option of bo-modes must be a ModesAblation or a table of its switches "
                                 f"({', '.join(names)}). Got {value!r} instead.")
        unknown = [k for k in value if k not in names]
        if unknown:
            raise ParameterError(f"bo-modes's ablation has no switch {unknown[0]!r}. Its switches: {', '.join(names)}.")
        return cls(**value)

    def changed(self) -> dict[str, Any]:
        """The switches that differ from the defaults (the strategy itself: none)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if getattr(self, f.name) != f.default}


class FailureModes(CarriedGP):
    """GP-guided exploration for new failure modes and a trust region per mode found (module docstring).

    Args:
        space: the space searched, in its unit cube.
        seed: the seed of every random choice.
        budget: the campaign's budget (the schedule's horizon; default 400).
        n_init: Sobol points before the first model (default 20, at most half the budget).
        early, late: fraction of points that explore in the first `split` of the budget, and after.
        split: the part of the budget explored at the `early` rate.
        radius: normalised distance (in the unit cube, divided by sqrt(dim)) within which a
            point counts as near a failure: exploration keeps out, the model-free ablation joins modes.
        refit: hyperparameters are refitted when the data has grown by this fraction.
        iterations: L-BFGS-B iterations of a warm refit.
        unjudged: `(column, low, high)`: points whose coordinate `column` lies strictly between
            `low` and `high` are never judged (their truth sits at the cut), so none is proposed.
        likelihood: the GP's: "gaussian" (on the losses' normal scores), "dirichlet" (a
            classification of failed and passed points), or "auto" (the default: "dirichlet" while
            every loss told is 0 or 1, else "gaussian").
        max_points: the GP is fitted on at most this many points (default 1,000, as `bo`'s; beyond:
            every recent failure, up to half, and the most recent passes), and the failure graph, the
            harvest and the exploration see those rows alone (every point answered is still never
            asked again), so a proposal costs what it cost at the cap however long the campaign runs;
            at or under the cap every row is seen, and nothing changes.
        ablation: `ModesAblation` switches (or a mapping of them) that turn rules of the search off,
            to measure them; default none.

    Example:
        >>> s = FailureModes(space, seed=0, budget=400)
        >>> X = s.ask(4, step=0)                     # `4 x space.dim`
        >>> s.tell(X, losses)
    """

    overlaps = True  # takes `pending`: a campaign may ask the next batch while this one is evaluated

    def __init__(self, space: Space, seed: int = 0, budget: int | None = None, n_init: int = 20, early: float = 0.6,
                 late: float = 0.15, split: float = 0.4, radius: float = 0.2, refit: float = 0.1, iterations: int = 30,
                 unjudged: Sequence[float] | None = None, likelihood: str = "auto", max_points: int = 1000,
                 ablation: ModesAblation | Mapping[str, Any] | None = None) -> None:
        super().__init__(space, seed, refit, iterations, max_points)
        self.ablation = ModesAblation.of(ablation)
        self.likelihood = check_choice("likelihood", likelihood, LIKELIHOODS)
        self._arms = np.zeros((3, 2))  # rows: steps, inside, anywhere; columns: harvesting points told, of which failed
        self._pending: dict[bytes, int] = {}  # harvesting points asked and not yet told: their arm
        self._restored_pending: dict[str, int] = {}  # a restored state's pending arms by `_key`, set on their points when seen
        self._answered: set[bytes] = set()  # every point answered, never proposed again (kept as told: a step costs no pass over the history)
        self._uniform: list[int] = []  # the told indices of the points drawn uniformly (`uniform="earned"`)
        self.budget = _HORIZON if budget is None else check_int("budget", budget, 1)
        self.n_init = min(check_int("n_init", n_init, 1), max(1, self.budget // 2))
        self.early, self.late = check_number("early", early, 0.0, 1.0), check_number("late", late, 0.0, 1.0)
        self.split = check_number("split", split, 0.0, 1.0)
        self.radius = check_number("radius", radius, 0.0, 1.0, open_low=True)
        self.unjudged = None if unjudged is None else _band(unjudged, self.dim)

    # ------------------------------------------------------------------ the step

    def ask(self, n: int, step: int, pending: np.ndarray | None = None) -> np.ndarray:
        """`n x dim` points to evaluate next, a function of the seed, `step`, the history, the state
        and `pending`: the points of the batch asked before this one and not yet told (a campaign
        that overlaps the search with the evaluation), which are never asked again and count as
        asked in the schedule."""
        n = check_int("n", n, 1)
        asked = self._asked(pending)
        X, loss = self.history.answered()
        if self.history.n_told < self.n_init or len(np.unique(loss)) < 2:
            return self._next_sobol(n)  # a model of identical losses knows nothing: keep random search's breadth
        rows = self._training_rows(loss)
        X, loss = X[rows], loss[rows]  # past `max_points`, what the step sees is the GP's rows (all of them up to the cap)
        seed = int(step_rng(self.seed, step).integers(2**31))
        rng = np.random.default_rng(seed)
        with one_thread(), manual_seed(seed), torch.no_grad():
            model = self._fit(X, loss) if self.ablation.model == "gp" else None
            pooled = model is not None and n >= POOLED_FROM  # a large batch draws candidates once (`pool.py`)
            failures = X[loss >= FAILURE]
            harvest = model  # the model that says where the modes are and which candidates fail
            if pooled and len(failures) and not model.classes and self.ablation.pooled_model == "classes":
                harvest = self._fit(X, loss, harvest=True)
            modes = self._modes(failures, harvest)
            counts, probes = self._crowding(failures, modes, harvest, X, loss)
            members_of = [failures[modes == mode] for mode in range(len(counts))]  # per mode, its failures
            found = self._uniform_found(rows, loss, modes) if self.ablation.uniform == "earned" else None
            seen = self._answered | asked
            chosen: list[np.ndarray] = []
            self._pending = {key: arm for key, arm in self._pending.items() if key in asked}
            first = self.history.n_told + len(asked)
            pool = Pool(self, harvest, n, sum(self.explores(index) for index in range(first, first + n)), model) if pooled else None
            for index in range(first, first + n):
                x, mode = None, None
                if len(counts) and not self.explores(index):
                    while probes and x is None:
                        x = probes.pop(0)
                        x = None if x.tobytes() in seen else x
                    if x is None and found is not None and self._uniform_arm(found, counts, rng):
                        x = self._uniform_point(seen, rng)
                        if x is not None:
                            self._uniform.append(index)
                    if x is None and model is not None and _on_schedule(index, self.ablation.anywhere) and self._anywhere_arm(rng):
                        x = self._draw_anywhere(harvest, seen, rng, pool)
                        if x is not None:
                            self._pending[x.tobytes()] = _ANYWHERE_ARM
                    if x is None:
                        x, mode = self._mode_point(harvest, (X, loss), failures, members_of, counts, chosen, seen, rng, pool)
                if x is None:
                    x, hopeful = self._explore(model, X, loss, failures, chosen, seen, rng, pool)
                    if not hopeful and len(counts) and self._gives_up(index):
                        harvested, mode = self._mode_point(harvest, (X, loss), failures, members_of, counts, chosen, seen, rng, pool)
                        x = x if mode is None else harvested
                if mode is not None:
                    counts[mode] += 1
                seen.add(x.tobytes())
                chosen.append(x)
                if pool is not None:
                    pool.chose(x)
        return np.stack(chosen)

    def _asked(self, pending: np.ndarray | None) -> set[bytes]:
        """The keys of `pending` (none if None); a restored state's pending arms are set on them first."""
        if pending is None:
            return set()
        keys = {row.tobytes() for row in np.asarray(pending, float).reshape(-1, self.dim)}
        self._recall(keys)
        return keys

    def _recall(self, keys: Iterable[bytes]) -> None:
        """Sets the pending arms a restored state holds on those of these points it names."""
        for key in keys if self._restored_pending else ():
            arm = self._restored_pending.pop(_key(key), None)
            if arm is not None:
                self._pending[key] = arm

    def tell(self, X: np.ndarray, loss: np.ndarray) -> None:
        """Records the points and their losses, and counts each harvesting point answered against its arm."""
        self._recall(x.tobytes() for x in np.asarray(X, float))  # after a resume, the points asked before the stop
        super().tell(X, loss)
        for x, value in zip(np.asarray(X, float), np.asarray(loss, float).reshape(-1)):
            if not np.isnan(value):
                self._answered.add(x.tobytes())
            arm = self._pending.pop(x.tobytes(), None)
            if arm is not None and np.isfinite(value):
                self._arms[arm] += (1, value >= FAILURE)

    def state(self) -> dict[str, Any]:
        """The carried GP's state, the harvest's counts per arm, (`uniform="earned"`) the uniform draws'
        indices, and the arm of each harvesting point asked and not yet told, by a hash of the point
        (a campaign that overlaps the search with the evaluation saves its state then)."""
        state = {**super().state(), "arms": self._arms.tolist()}
        if self.ablation.uniform != "never":
            state["uniform"] = list(self._uniform)
        return {**state, "pending": {_key(key): arm for key, arm in self._pending.items()}} if self._pending else state

    def restore(self, state: dict[str, Any]) -> None:
        """Sets what `state()` saved."""
        super().restore(state)
        arms = np.array(state.get("arms", np.zeros((0, 2))), float).reshape(-1, 2)
        self._arms = np.vstack([arms, np.zeros((3 - len(arms), 2))])  # a state saved before the anywhere arm has two rows
        self._uniform = [int(i) for i in state.get("uniform", [])]
        self._pending, self._restored_pending = {}, {str(h): int(arm) for h, arm in state.get("pending", {}).items()}

    def _span_arm(self, rng: np.random.Generator) -> bool:
        """Whether this harvesting point is drawn inside the modes' spans (the module docstring, 3)."""
        if self.ablation.inside != "earned":
            return self.ablation.inside == "always"
        steps, span = (_draw_rate(arm, rng) for arm in self._arms[:2])
        return bool(span > steps + _PREMIUM)

    def _anywhere_arm(self, rng: np.random.Generator) -> bool:
        """Whether a point the `anywhere` schedule picks is drawn from the failing set at large (module
        docstring, 3): always, or (`"earned"`) when a draw of those draws' hit rate comes within
        `_ANYWHERE_PREMIUM` of a draw of the modes' harvest's."""
        if self.ablation.anywhere_rule == "always":
            return True
        harvest = _draw_rate(self._arms[:2].sum(0), rng)
        return bool(_draw_rate(self._arms[_ANYWHERE_ARM], rng) > harvest - _ANYWHERE_PREMIUM)

    def _uniform_found(self, rows: np.ndarray, loss: np.ndarray, modes: np.ndarray) -> tuple[int, int]:
        """`(singletons, drawn)` of the answered uniform draws among the step's rows `rows` (their
        `loss`; `modes` per failure): the modes a uniform draw found first and exactly one failed
        in, and how many draws there are. Good-Turing: `singletons / drawn` estimates the chance
        that the next uniform draw fails in a mode nothing has found yet (modes the search found
        first are not the uniform draws' to count)."""
        told = np.flatnonzero(~np.isnan(self.history.told()[1]))[rows]  # the told index of each row the step sees
        uniform = np.isin(told, self._uniform)
        if not len(modes):
            return 0, int(uniform.sum())
        failed = loss >= FAILURE
        first = np.full(modes.max() + 1, np.iinfo(int).max)
        np.minimum.at(first, modes, told[failed])
        hits = np.bincount(modes[uniform[failed]], minlength=len(first))
        return int(((hits == 1) & np.isin(first, told[uniform])).sum()), int(uniform.sum())

    def _uniform_arm(self, found: tuple[int, int], counts: np.ndarray, rng: np.random.Generator) -> bool:
        """Whether a harvesting point is drawn uniformly instead (`uniform="earned"`): where a draw of
        the chance that a uniform draw finds a new mode (a Beta posterior of the Good-Turing estimate,
        `found`) beats a draw of the harvest's hit rate times what one more failure adds to the least
        crowded mode, `1 / (1 + failures near it)` (the gain in `sum log(1 + failures)` over the
        modes, where a new mode's first failure adds about 1)."""
        singletons, drawn = found
        chance = float(rng.beta(_GOOD_TURING_PRIOR + singletons, 1 + drawn - singletons))
        harvest = _draw_rate(self._arms[:2].sum(0), rng)
        return bool(chance > harvest / (1.0 + counts.min()))

    def _uniform_point(self, seen: set[bytes], rng: np.random.Generator) -> np.ndarray | None:
        """A uniform point the target judges and nobody asked (None after a few tries: a cube nearly all asked)."""
        for _ in range(8):
            x = self.cube.uniform(rng, 1)
            if self._proposable(x, seen)[0]:
                return x[0]
        return None

    def _gives_up(self, index: int) -> bool:
        """Whether an exploring point with this index whose draw puts no failure where it picks
        harvests instead (`explore_when="hopeful"`, after the schedule's split; module docstring, 5)."""
        return self.ablation.explore_when == "hopeful" and self._late(index)

    def explores(self, index: int) -> bool:
        """Whether the point with this index (0-based, over the whole campaign) explores."""
        return _on_schedule(index, self.late if self._late(index) else self.early)

    def _late(self, index: int) -> bool:
        """Whether the point with this index comes after the schedule's split."""
        return index >= self.split * self.budget

    # ------------------------------------------------------------------ the model

    def _fit(self, X: np.ndarray, loss: np.ndarray, harvest: bool = False) -> _Model:
        """The model of the told points (beyond `max_points`, of `_training_rows`); with `harvest`, the
        classification of failed and passed points whatever the losses, its hyperparameters carried
        apart (a large batch's harvest model: `pool.py`)."""
        rows = self._training_rows(loss)
        X, loss = X[rows], loss[rows]
        sign = self._signs
        y = loss if sign is None else np.where(sign(X) > 0, loss, 1.0 - loss)  # the target's evidence for the label above the cut
        likelihood = "dirichlet" if harvest else self.likelihood
        if likelihood == "auto":
            likelihood = "dirichlet" if np.isin(y, (0.0, 1.0)).all() else "gaussian"
        high = y >= FAILURE
        if likelihood == "dirichlet":
            fit, target = fit_dirichlet_gp, high
        else:
            z = normal_scores(y)
            fit, target = fit_ranked_gp, z
        with torch.enable_grad(), gpytorch.settings.max_cholesky_size(CHOLESKY_LIMIT):  # ask() runs under no_grad
            gp = self._fit_carried(fit, torch.tensor(X), torch.tensor(target), model=likelihood, slot="harvest" if harvest else None)
        if likelihood == "dirichlet":
            return _Model(gp, 0.0, sign, classes=True)
        if high.any() and (~high).any():
            threshold = 0.5 * (z[high].min() + z[~high].max())
        else:  # every score on one side: beyond every score seen
            threshold = float(norm.ppf(1 - 0.5 / len(z))) if not high.any() else float(norm.ppf(0.5 / len(z)))
        return _Model(gp, threshold, sign)

    @property
    def _signs(self) -> Callable[[np.ndarray], np.ndarray] | None:
        """With an `unjudged` band, the side of the cut of each point, as the sign that turns the
        modelled score into a failure margin: +1 below the band (the truth is the first label, and
        a failure is the target's evidence for the other label, `loss`, running high), -1 above it
        (a failure is that same evidence, `1 - loss`, running low). The target's evidence for a label
        is smooth across the cut where its loss is not: the loss flips at the cut."""
        if self.unjudged is None:
            return None
        column, low, high = self.unjudged
        return lambda X: np.where(X[:, column] >= 0.5 * (low + high), -1.0, 1.0)

    # ------------------------------------------------------------------ modes

    def _distance(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """`len(A) x len(B)` normalised distances (one-hot blocks weighted as one coordinate)."""
        return cdist(self.cube.weighted(A), self.cube.weighted(B)) / math.sqrt(self.dim)

    def _same_levels(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """Per row, whether `A` and `B` share every categorical level (no image lies between two)."""
        levels = self.cube.categorical
        return (A[:, levels] == B[:, levels]).all(axis=1)

    def _nearest(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """Per row of `A`, the distance to the nearest row of `B` (inf if none)."""
        if not len(B):
            return np.full(len(A), np.inf)
        return self._closest(A, B)[0]

    def _closest(self, A: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per row of `A`, the distance to the nearest row of `B` (not empty) and that row's index,
        a block of `A` at a time (memory O(256 len(B)))."""
        dist, index = [], []
        for chunk in np.array_split(A, max(1, len(A) // 256)):
            D = self._distance(chunk, B)
            index.append(D.argmin(axis=1))
            dist.append(D[np.arange(len(D)), index[-1]])
        return np.concatenate(dist), np.concatenate(index)

    def _modes(self, failures: np.ndarray, model: _Model | None) -> np.ndarray:
        """Per failure, its mode (0 ..): connected components of the failure graph (module docstring)."""
        n = len(failures)
        if n <= 1:
            return np.zeros(n, int)
        D = self._distance(failures, failures)
        np.fill_diagonal(D, np.inf)
        k = min(_NEIGHBOURS, n - 1)
        src, dst = np.repeat(np.arange(n), k), np.argsort(D, axis=1)[:, :k].reshape(-1)
        near = (D[src, dst] < (_REACH if model is not None else self.radius)) & self._same_levels(failures[src], failures[dst])
        src, dst = src[near], dst[near]
        if model is not None and len(src):
            ts = _SEGMENT[None, :, None]
            between = (failures[src][:, None] * (1 - ts) + failures[dst][:, None] * ts).reshape(-1, self.dim)
            joined = model.leans(between).reshape(-1, len(_SEGMENT)).all(axis=1)
            src, dst = src[joined], dst[joined]
        graph = coo_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))
        return connected_components(graph, directed=False)[1]

    def _crowding(self, failures: np.ndarray, modes: np.ndarray, model: _Model | None, X: np.ndarray,
                  loss: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """Per mode, the failures that count against harvesting it: its own, and (with a model) every
        failure of another mode the kernel correlates above `_NEAR` with one of its members. With
        `probe`, not where a told pass near the midpoint between a failure of one mode and its most
        correlated member of the other says a gap parts the two; and the probes to ask: those
        midpoints, not yet told, from a failure of the smaller mode (one evaluation settles whether
        it is a stray at the larger's edge or a region of its own: a failure there keeps them
        counted, and the midpoint asked next lies nearer the gap, if there is one). Failures at different levels of a
        category still count and are never probed: no point lies between two levels, and a cause
        found again at another level is not a new one."""
        if not len(modes):
            return np.zeros(0), []
        member = np.eye(modes.max() + 1)[modes]  # failures x modes, one-hot
        if model is None:
            return member.sum(0), []
        F = torch.tensor(failures)
        with torch.no_grad():
            scale = model.covariance(F, F, diag=True).sqrt()
            corr = np.concatenate([(model.covariance(F[rows], F) / scale[rows, None] / scale[None, :]).numpy()
                                   for rows in torch.arange(len(F)).split(1024)])  # a block of rows at a time
        near = (corr > _NEAR) @ member > 0
        f, m = np.nonzero(near & (member == 0))  # a failure counted against another mode
        if not self.ablation.probe or not len(f):
            return near.sum(0).astype(float), []
        sizes = member.sum(0)
        g = np.empty(len(f), int)  # per pair, the member of mode m that f correlates with most
        for mode in np.unique(m):
            pairs, members = m == mode, np.flatnonzero(modes == mode)
            g[pairs] = members[corr[np.ix_(f[pairs], members)].argmax(axis=1)]
        mid = 0.5 * (failures[f] + failures[g])
        reach = _GAP * np.linalg.norm(self.cube.weighted(failures[f]) - self.cube.weighted(failures[g]), axis=1) / math.sqrt(self.dim)
        apart = ~self._same_levels(failures[f], failures[g])
        dist, index = self._closest(mid, X)
        told = dist <= reach
        gap = ~apart & told & (loss[index] < FAILURE)
        parted = np.zeros((len(sizes), len(sizes)), bool)  # modes a gap parts: each a connected region of its own
        parted[modes[f[gap]], m[gap]] = True
        parted |= parted.T
        near[f[parted[modes[f], m]], m[parted[modes[f], m]]] = False
        ask = ~apart & ~told & ~parted[modes[f], m] & (sizes[modes[f]] < sizes[m])
        order = np.argsort(sizes[modes[f]][ask], kind="stable")
        probes, keys = [], set()
        for x in self.cube.snap(mid[ask][order]):
            if x.tobytes() not in keys and self._judged(x[None])[0]:
                keys.add(x.tobytes())
                probes.append(x)
        return near.sum(0).astype(float), probes

    # ------------------------------------------------------------------ harvest and explore

    def _harvest(self, model: _Model | None, told: tuple[np.ndarray, np.ndarray], failures: np.ndarray, members_of: list[np.ndarray],
                 counts: np.ndarray, span: bool, chosen: list[np.ndarray], seen: set[bytes], rng: np.random.Generator,
                 pool: Pool | None = None) -> tuple[np.ndarray | None, int | None]:
        """The best harvesting point of the best mode (`members_of`: each mode's failures), or (None,
        None) if no mode has a new candidate; inside the modes' spans if `span` (a mode of one
        failure: steps); from `pool`'s candidates if given (every mode's pool is looked at, so each
        draws again as soon as it runs low, but only the modes weighed take their open candidates)."""
        best, best_value, best_mode = None, -np.inf, None
        spread_from = np.concatenate([failures, np.array(chosen)]) if chosen and pool is None else failures  # a pool keeps its own
        candidates, pooled = [], []
        for mode, members in enumerate(members_of):
            spanned = _spanned(span, len(members))
            if pool is not None:
                drawn = pool.drawn((mode, spanned), lambda members=members, spanned=spanned: self._mode_candidates(
                    members, spanned, rng, _POOL_PER_CENTRE, spread=True))
                pooled.append((drawn, drawn.free(seen)))  # the candidates themselves, `drawn.C[free]`, once the mode is weighed
                continue
            C = self._mode_candidates(members, spanned, rng, _PER_CENTRE)
            candidates.append(C[self._proposable(C, seen)])
        crowding = [_EVENNESS * math.log1p(count) for count in counts]  # value = log yield - crowding: yield / (1 + failures)^3
        if model is None:
            for mode, (members, C) in enumerate(zip(members_of, candidates)):
                if len(C):
                    value = math.log(self._empirical_yield(members, *told)) - crowding[mode]
                    if value > best_value:
                        best, best_value, best_mode = C[0], value, mode
            return best, best_mode
        has = [free.any() for _, free in pooled] if pool is not None else [len(C) > 0 for C in candidates]
        open_modes = sorted((mode for mode, open_ in enumerate(has) if open_), key=lambda mode: crowding[mode])  # stable: index order within a level
        for level, group in itertools.groupby(open_modes, key=lambda mode: crowding[mode]):
            if -level < best_value:
                break  # log p_fail <= 0: no mode this crowded or more can beat the best (nor tie it)
            group = list(group)
            if pool is None:
                scored = np.split(model.scores(np.concatenate([candidates[m] for m in group]))[0],
                                  np.cumsum([len(candidates[m]) for m in group])[:-1])  # the level's candidates in one posterior
            else:
                scored = [pooled[m][0].log_p()[pooled[m][1]] for m in group]
            for mode, log_p in zip(group, scored):
                C = candidates[mode] if pool is None else pooled[mode][0].C[pooled[mode][1]]
                if log_p.max() >= math.log(_SURE):
                    good = np.flatnonzero(log_p >= math.log(self.ablation.near_best) + log_p.max())
                    far = self._nearest(C[good], spread_from) if pool is None else pooled[mode][0].nearest(failures)[pooled[mode][1]][good]
                    pick = good[np.argmax(far)]
                else:
                    near = self._nearest(C, members_of[mode]) if pool is None else pooled[mode][0].nearest_member(members_of[mode])[pooled[mode][1]]
                    pick = int(np.argmin(near))  # the model does not believe the mode
                value = log_p[pick] - crowding[mode]
                if value > best_value or (best_mode is not None and value == best_value and mode < best_mode):  # as in index order
                    best, best_value, best_mode = C[pick], value, mode
        return best, best_mode

    def _mode_point(self, model: _Model | None, told: tuple[np.ndarray, np.ndarray], failures: np.ndarray, members_of: list[np.ndarray],
                    counts: np.ndarray, chosen: list[np.ndarray], seen: set[bytes],
                    rng: np.random.Generator, pool: Pool | None = None) -> tuple[np.ndarray | None, int | None]:
        """`_harvest` with the span drawn (`_span_arm`), the point counted against its arm when told."""
        span = self._span_arm(rng)
        x, mode = self._harvest(model, told, failures, members_of, counts, span, chosen, seen, rng, pool)
        if mode is not None:
            self._pending[x.tobytes()] = int(_spanned(span, len(members_of[mode])))
        return x, mode

    def _draw_anywhere(self, model: _Model, seen: set[bytes], rng: np.random.Generator, pool: Pool | None = None) -> np.ndarray | None:
        """A draw from the model's failing set at large: uniform candidates (`pool`'s if given), one
        picked with probability proportional to `p_fail` among those at `_SURE_ANYWHERE` or more (None if none is)."""
        if pool is None:
            C = self.cube.uniform(rng, 4 * _UNIFORM)
            C = C[self._proposable(C, seen)]
            p = model.p_fail(C) if len(C) else np.zeros(0)
        else:
            drawn = pool.drawn("anywhere", lambda: self.cube.uniform(rng, 4 * _UNIFORM))
            free = drawn.free(seen)
            C, p = drawn.C[free], np.exp(drawn.log_p()[free])
        ok = np.flatnonzero(p >= _SURE_ANYWHERE)
        if not len(ok):
            return None
        return C[rng.choice(ok, p=p[ok] / p[ok].sum())]

    def _mode_candidates(self, members: np.ndarray, spanned: bool, rng: np.random.Generator, per_centre: int,
                         spread: bool = False) -> np.ndarray:
        """A mode's harvesting candidates: `_CENTRES * per_centre` points of the span of its failures
        `members`, or `per_centre` steps around each of up to `_CENTRES` of them drawn at random (a
        point asked alone); with `spread` (a pooled batch, whose candidates serve every point of
        it), around each of up to `_POOL_CENTRES` failures spread over the mode by farthest-point
        traversal, so a part of the mode its few failures hold is stepped around as well as the part
        most failures crowd."""
        if spanned:
            return self._inside(members, rng, _CENTRES * per_centre)
        if spread:
            taken = self._spread(members, _POOL_CENTRES, rng)
        else:
            taken = rng.choice(len(members), min(_CENTRES, len(members)), replace=False)
        return around(self.cube, members[taken], rng, per_centre)

    def _spread(self, members: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
        """Indices of up to `k` of `members` spread over them: from a random one, each next the
        farthest from those taken (Gonzalez's traversal)."""
        taken = [int(rng.integers(len(members)))]
        nearest = self._distance(members, members[taken[0]][None])[:, 0]
        while len(taken) < min(k, len(members)):
            taken.append(int(np.argmax(nearest)))
            nearest = np.minimum(nearest, self._distance(members, members[taken[-1]][None])[:, 0])
        return np.array(taken)

    def _inside(self, members: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
        """`n` convex combinations of `_SPAN` of the mode's failures each (flat Dirichlet weights), snapped:
        points of the region the failures span, which fail wherever that region is convex."""
        picks = rng.random((n, len(members))).argsort(axis=1)[:, : min(_SPAN, len(members))]  # distinct members per row
        weights = rng.dirichlet(np.ones(picks.shape[1]), size=n)
        return self.cube.snap(np.einsum("nk,nkd->nd", weights, members[picks]))

    def _judged(self, C: np.ndarray) -> np.ndarray:
        """Per row of `C`, whether the target judges it (False inside the `unjudged` band)."""
        if self.unjudged is None:
            return np.ones(len(C), bool)
        column, low, high = self.unjudged
        return ~((C[:, column] > low) & (C[:, column] < high))

    def _proposable(self, C: np.ndarray, seen: set[bytes]) -> np.ndarray:
        """Per row of `C`, whether it may be proposed: judged by the target and not asked before."""
        return self._judged(C) & np.array([row.tobytes() not in seen for row in C], bool)

    def _empirical_yield(self, members: np.ndarray, X: np.ndarray, loss: np.ndarray) -> float:
        """The model-free ablation's yield of a mode: (failures + 1) / (points near it + 2), of the told `X`."""
        near = self._nearest(X, members) < self.radius
        return float(((loss[near] >= FAILURE).sum() + 1) / (near.sum() + 2))

    def _explore(self, model: _Model | None, X: np.ndarray, loss: np.ndarray, failures: np.ndarray,
                 chosen: list[np.ndarray], seen: set[bytes], rng: np.random.Generator, pool: Pool | None = None) -> tuple[np.ndarray, bool]:
        """A Thompson draw away from every failure and every point of the batch (model-free: Sobol),
        and whether the draw puts a failure there; with `pool`, this point's own draw over the
        batch's exploring candidates, or, once the batch's points have closed them all, the next
        Sobol point and no hope (after the split the point harvests, as a hopeless draw does)."""
        if model is None:
            return self._next_sobol(1)[0], True
        climbs = pool is not None and pool.climbs  # a pool that climbs keeps the batch's points apart itself
        avoid = np.concatenate([failures, np.array(chosen)]) if chosen and not climbs else failures

        def candidates(uniform: int, tops: int = _TOP_PASSES) -> np.ndarray:
            C, graded = self._exploring_candidates(model, X, loss, failures, avoid, rng, uniform, tops)
            C = C[self._proposable(C, seen) & (self._nearest(C, avoid) >= self.radius)]
            if len(C) and len(failures) and graded:
                elsewhere = ~self._on_known_slope(model, C, failures)
                C = C[elsewhere] if elsewhere.any() else C
            return C

        if pool is None:
            C = candidates(_UNIFORM)
            if not len(C):
                return self._next_sobol(1)[0], True
            draw = model.posterior(C).rsample().reshape(-1).numpy()
        else:
            climbers = self.ablation.pooled_climbers
            tops = max(_TOP_PASSES, pool.explorers // climbers) if climbers and climbs else _TOP_PASSES
            opened = pool.explore(lambda: candidates(max(_UNIFORM, 2 * pool.explorers), tops), avoid, seen)
            if opened is None:
                return self._next_sobol(1)[0], False
            C, draw = opened
        best = int(np.argmax(model.margin(C, draw)))
        return C[best], bool(model.fails(C[best : best + 1], draw[best : best + 1])[0])

    def _exploring_candidates(self, model: _Model, X: np.ndarray, loss: np.ndarray, failures: np.ndarray, avoid: np.ndarray,
                              rng: np.random.Generator, uniform: int, tops: int = _TOP_PASSES) -> tuple[np.ndarray, bool]:
        """Where an exploring point may go: `uniform` uniform points and neighbours of the `tops`
        highest passes beyond `radius` of `avoid` (with `explore="climb"` and a graded loss, the
        neighbours alone, of passes off the known slopes); and whether the passes' losses are graded."""
        passes = loss < FAILURE
        far = passes & (self._nearest(X, avoid) >= self.radius)
        graded = bool(passes.any() and np.ptp(loss[passes]) > 0)  # passes that differ: under 0/1 every candidate would look like a known slope
        climb = self.ablation.explore == "climb" and graded
        if climb and len(failures) and far.any():
            off = far.copy()
            off[far] = ~self._on_known_slope(model, X[far], failures)
            far = off if off.any() else far
        top = X[far][np.argsort(-loss[far], kind="stable")[:tops]]
        if not len(top):
            return self.cube.uniform(rng, uniform), graded
        if climb:
            return around(self.cube, top, rng, _CLIMB_PER_CENTRE, (0.1, 0.05)), graded
        return np.concatenate([self.cube.uniform(rng, uniform), around(self.cube, top, rng, _PER_CENTRE, (0.1, 0.05))]), graded

    def _on_known_slope(self, model: _Model, C: np.ndarray, failures: np.ndarray) -> np.ndarray:
        """Per row of `C`, whether the posterior mean (as a failure margin) rises all along the
        segment to its nearest failure, at 1/4, 1/2 and 3/4: no valley parts it from a known mode."""
        nearest = self._closest(C, failures)[1]
        ts = _SEGMENT[None, :, None]
        between = (C[:, None] * (1 - ts) + failures[nearest][:, None] * ts).reshape(-1, self.dim)
        here, along = model.means(C), model.means(between)
        return (along.reshape(-1, len(_SEGMENT)) >= here[:, None]).all(axis=1)


class ModelFreeFailureModes(FailureModes):
    """`bo-modes` with its model replaced by a constant (`ModesAblation(model="constant")`): the
    ablation the benchmark suite runs beside it. Its `ablation` takes the other switches; `model`
    is always "constant"."""

    def __init__(self, space: Space, seed: int = 0, budget: int | None = None, n_init: int = 20, early: float = 0.6,
                 late: float = 0.15, split: float = 0.4, radius: float = 0.2, unjudged: Sequence[float] | None = None,
                 ablation: ModesAblation | Mapping[str, Any] | None = None) -> None:
        super().__init__(space, seed, budget, n_init, early, late, split, radius, unjudged=unjudged,
                         ablation=dataclasses.replace(ModesAblation.of(ablation), model="constant"))


def _draw_rate(arm: np.ndarray, rng: np.random.Generator) -> float:
    """A draw of an arm's hit rate from its Beta posterior (uniform prior); `arm` is (told, failed)."""
    told, hits = arm
    return float(rng.beta(1 + hits, 1 + told - hits))


def _on_schedule(index: int, rate: float) -> bool:
    """Whether the point with this index (0-based) is one of a fraction `rate` of the points, spread
    evenly by index: exact over any stretch, and stateless."""
    return math.floor((index + 1) * rate) > math.floor(index * rate)


def _spanned(span: bool, size: int) -> bool:
    """Whether a mode of `size` failures is harvested inside its span when `span` is drawn (a mode of
    one failure has no span: steps)."""
    return span and size > 1


def _band(unjudged: Sequence[float], dim: int) -> tuple[int, float, float]:
    """A checked `(column, low, high)` band of the unit cube."""
    if len(unjudged) != 3:
        raise ParameterError(f"unjudged must be (column, low, high). Got {unjudged!r}.")
    column = check_int("unjudged column", unjudged[0], 0, dim - 1)
    low, high = (check_number(f"unjudged {name}", v, 0.0, 1.0) for name, v in (("low", unjudged[1]), ("high", unjudged[2])))
    if low > high:
        raise ParameterError(f"unjudged low ({low:g}) must not be above high ({high:g}).")
    return column, low, high


class _Model:
    """The fitted GP, the score threshold between passes and failures, and (with a truth cut) the
    sign per point that says which side of the threshold fails there (`FailureModes._signs`). With
    `classes`, the GP has one output per class (passed, failed) and the score is their difference."""

    def __init__(self, gp: SingleTaskGP, threshold: float, sign: Callable[[np.ndarray], np.ndarray] | None = None,
                 classes: bool = False) -> None:
        self.gp, self.threshold, self.sign = gp, threshold, sign
        self._difference = ScalarizedPosteriorTransform(torch.tensor([-1.0, 1.0], dtype=torch.float64)) if classes else None

    @property
    def classes(self) -> bool:
        """Whether this is the classification of failed and passed points (one GP per class)."""
        return self._difference is not None

    def posterior(self, X: np.ndarray) -> Posterior:
        """The posterior of the score at the rows of `X` (jointly)."""
        return self.gp.posterior(torch.tensor(X), posterior_transform=self._difference)

    def covariance(self, A: torch.Tensor, B: torch.Tensor, diag: bool = False) -> torch.Tensor:
        """The kernel between the rows of `A` and `B` (with classes, the failure class's)."""
        if self._difference is None:
            K = self.gp.covar_module(A, B, diag=diag)
            return K if diag else K.to_dense()
        K = self.gp.covar_module(A, B).to_dense()[1]  # classes x len(A) x len(B); GPyTorch's batched `diag` is ambiguous at 2 points
        return K.diagonal() if diag else K

    def margin(self, X: np.ndarray, score: np.ndarray) -> np.ndarray:
        """How far `score` at the rows of `X` lies on the failing side (the score itself without a sign)."""
        return score if self.sign is None else self.sign(X) * (score - self.threshold)

    def fails(self, X: np.ndarray, score: np.ndarray) -> np.ndarray:
        """Per row of `X`, whether `score` there lies on the failing side of the threshold."""
        sign = 1.0 if self.sign is None else self.sign(X)
        return sign * (score - self.threshold) > 0

    def p_fail(self, X: np.ndarray) -> np.ndarray:
        """Posterior probability that the score at each row of `X` is on the failing side of the threshold."""
        return np.exp(self.scores(X)[0])

    def leans(self, X: np.ndarray) -> np.ndarray:
        """Per row of `X`, whether `p_fail >= 1/2`: the posterior mean on the failing side of the
        threshold or on it, read from the mean alone (no posterior variance: a fraction of the cost)."""
        sign = 1.0 if self.sign is None else self.sign(X)
        return sign * (self._mean(X) - self.threshold) >= 0

    def means(self, X: np.ndarray) -> np.ndarray:
        """Per row of `X`, the posterior mean as a `margin` (`scores`' second part, without the variances)."""
        return self.margin(X, self._mean(X))

    def _mean(self, X: np.ndarray) -> np.ndarray:
        """Per row of `X`, the posterior mean of the score, without the variances."""
        return np.concatenate([m for m, _ in self._moments(X, variances=False)])

    def scores(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per row of `X`, log `p_fail` (which still ranks points where `p_fail` underflows to 0) and the
        posterior mean as a `margin`."""
        out, means = [], []
        for (mean, variance), chunk in zip(self._moments(X), _chunks(X)):
            sd = np.sqrt(variance)
            sign = 1.0 if self.sign is None else self.sign(chunk)
            out.append(norm.logsf(sign * (self.threshold - mean) / sd))
            means.append(self.margin(chunk, mean))
        return np.concatenate(out), np.concatenate(means)

    def _moments(self, X: np.ndarray, variances: bool = True) -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
        """The posterior mean and variance of the score (`variances=False`: the mean, and None) per chunk of `_chunks(X)`."""
        for chunk in _chunks(X):
            with torch.no_grad(), gpytorch.settings.skip_posterior_variances(not variances):
                if self._difference is None:
                    post = self.posterior(chunk)
                    mean = post.mean.reshape(-1)
                    variance = post.variance.reshape(-1) if variances else None
                else:  # the classes' GPs are independent: the difference's variance is the sum of theirs (no joint covariance formed)
                    post = self.gp.posterior(torch.tensor(chunk))
                    mean = post.mean[:, 1] - post.mean[:, 0]
                    variance = post.variance.sum(-1) if variances else None
            yield mean.numpy(), None if variance is None else variance.clamp_min(1e-12).numpy()


def _key(point: bytes) -> str:
    """A point's name in a saved state: 16 hex digits of its bytes' BLAKE2 hash."""
    return hashlib.blake2b(point, digest_size=8).hexdigest()


def _chunks(X: np.ndarray) -> list[np.ndarray]:
    """`X` in blocks of about 256 rows: the posterior's memory stays O(256 x training rows)."""
    return np.array_split(X, max(1, len(X) // 256))

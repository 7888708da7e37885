"""Bayesian optimisation for failures: GP + expected improvement of eq. (4) of McDuff et al.

Each step (docs/papers.md#mcduff, section 3, with the changes the planted benchmark showed
were needed; `benchmarks/strategies_planted.py` measures each):

1. **Initial design.** Scrambled Sobol points until `n_init` are told and at least one failure is.
2. **Model.** A GP with an RBF kernel with ARD (`gp.py`: hyperpriors, capped noise, warm starts)
   models the classifier loss `L_c`. The composite `L` of eq. (4) is `L_c` plus a term that is
   *known* at every candidate (`diversity.py`), so it is computed exactly there and the GP only
   learns the unknown part. (A GP fitted to the composite itself smears the diversity of past
   failures into the gaps between them and keeps sampling the first failure mode it finds.)
3. **Exploit.** Candidates near the remembered failures (Gaussian steps at several scales,
   categoricals resampled now and then) and around the best of them; among those the GP predicts
   to fail (posterior mean >= 0.5), the one with the largest LogEI of the composite. A candidate
   in a category combination where no failure is remembered is judged by its LogEI alone: the GP
   has (almost) no data there and reads an unseen category as a pass, which kept the search in
   the first combinations it found. Points already evaluated, or already in the batch, are never
   proposed again: the targets are deterministic, so a repeat finds nothing new.
4. **Explore.** If the expected improvement of a uniformly drawn point (the mean over 256 draws)
   is larger, the next point of the Sobol sequence is taken instead. Maximising the GP's variance
   would send exploration to the cube's corners (Siivola et al., 2018), where failure modes are no
   likelier than anywhere else; a low-discrepancy draw keeps random search's breadth.
5. **Batch.** `q` points by sequential greedy selection: after each pick the GP is conditioned on
   its posterior mean there (a Kriging-believer fantasy) and an exploited pick joins the failure
   set, so one batch spreads over a mode instead of stacking on one spot. A batch over
   `_CONDITIONED` (64) conditions on blocks of its picks, 64 times in all, each pick still joining
   the failure set: a conditioning costs about what pricing the pool does.

Categorical parameters are one-hot blocks of the cube and integers are cells: every candidate is
snapped to a vertex / cell centre *before* the acquisition is evaluated, so EI is maximised over
points that can actually be proposed, and categories come from uniform draws and resampling
rather than from rounding a relaxed optimum (which the GP never saw). Everything random is drawn
from `(seed, step)`; the GP hyperparameters, the refit bookkeeping and the Sobol position are the
`state()`, so a strategy rebuilt from the history and the last state asks exactly the same batch.

Example:
    >>> bo = BayesianOptimization(space, seed=0, alpha=0.6)
    >>> X = bo.ask(4, step=0)                    # `4 x space.dim`
    >>> bo.tell(X, losses)
"""

from __future__ import annotations

import math

import gpytorch
import numpy as np
import torch
from botorch.models import SingleTaskGP
from botorch.utils.sampling import manual_seed

from searcher.errors import ParameterError
from searcher.objective import FAILURE
from searcher.space import Space
from searcher.strategies.base import step_rng
from searcher.strategies.bo.candidates import around
from searcher.strategies.bo.carried import CarriedGP, one_thread
from searcher.strategies.bo.diversity import (
    composite,
    diversity,
    log_expected_improvement,
    same_cell,
)
from searcher.strategies.bo.gp import CHOLESKY_LIMIT, fit_gp
from searcher.validation import check_choice, check_int, check_number

__all__ = ["BayesianOptimization"]

ACQUISITIONS = ("logei", "ei")
NEIGHBOURHOODS = ("auto", "ball", "cell")
_UNIFORM = 256  # uniform draws that price exploration
_LOCAL = 64  # candidates around each centre
_CENTRES = 8  # remembered failures (then best candidates) to search around
_CHUNK = 512
_CONDITIONED = 64  # the most Kriging-believer conditionings of one ask (`_propose`)
_N_INIT = 20
_MEMORY = 50
_CAPACITY = {"ball": 15, "cell": 8}


class BayesianOptimization(CarriedGP):
    """GP + expected improvement of the composite of eq. (4), with exploration by Sobol draws.

    Args:
        space: the space searched, in its unit cube.
        seed: the seed of every random choice.
        alpha: weight of the diversity term of eq. (4), in [0, 1]; 0 is plain BO on `L_c`.
        memory: how many of the most recent failures the diversity term remembers (default 50;
            with "cell" neighbourhoods, enough to fill every cell once: cells x the failures a
            cell yields, `capacity (1 - alpha) / alpha` rounded up, 90 on `faces`; with fewer, the
            search forgets a combination before it has tried them all and harvests a few again).
        radius: size of a failure mode ("ball" neighbourhoods), as a distance in the unit cube
            divided by sqrt(dim).
        capacity: remembered failures that make a neighbourhood fully known (`D = 0`); default 15
            for balls (the planted cases), 8 for cells (`faces`; docs/search.md#bo-the-papers-search-how-its-faces-design-and-its-alpha-were-chosen).
        neighbourhood: what the diversity term counts failures in (`diversity.py`): "ball" (within
            `radius`), "cell" (the same categories, or within `radius` in the other coordinates),
            or "auto" (default): "cell" if the space has categorical parameters, else "ball".
        n_init: Sobol points before the first model (default 20, or half the budget if smaller);
            more than the `budget` is a ParameterError.
        budget: the campaign's budget, if known, to check `n_init` against.
        acquisition: "logei" (default) or "ei" (plain expected improvement; can underflow to 0
            far from the data, where LogEI still ranks candidates).
        max_points: the GP is fitted on at most this many points (beyond: every recent failure,
            up to half, and the most recent passes).
        refit: hyperparameters are refitted (warm-started) when the training set has grown by
            this fraction since the last fit; in between they are carried over.
        iterations: L-BFGS-B iterations of a warm refit.
    """

    def __init__(
        self,
        space: Space,
        seed: int = 0,
        alpha: float = 0.6,
        memory: int | None = None,
        radius: float = 0.2,
        capacity: int | None = None,
        neighbourhood: str = "auto",
        n_init: int | None = None,
        budget: int | None = None,
        acquisition: str = "logei",
        max_points: int = 1000,
        refit: float = 0.1,
        iterations: int = 30,
    ) -> None:
        super().__init__(space, seed, refit, iterations, max_points)
        self.alpha = check_number("alpha", alpha, 0.0, 1.0)
        self.radius = check_number("radius", radius, 0.0, 1.0, open_low=True)
        self.neighbourhood = check_choice("neighbourhood", neighbourhood, NEIGHBOURHOODS)
        self._categorical = self.cube.categorical
        if self.neighbourhood == "auto":
            self.neighbourhood = "cell" if self._categorical.any() else "ball"
        if capacity is not None:
            self.capacity = check_int("capacity", capacity, 1)
        else:
            self.capacity = _CAPACITY[self.neighbourhood]
        if memory is not None:
            self.memory = check_int("memory", memory, 1)
        else:
            self.memory = self._fill_every_cell() if self.neighbourhood == "cell" else _MEMORY
        budget = None if budget is None else check_int("budget", budget, 1)
        if n_init is None:
            self.n_init = _N_INIT if budget is None else min(_N_INIT, max(1, budget // 2))
        else:
            self.n_init = check_int("n_init", n_init, 1)
            if budget is not None and self.n_init > budget:
                raise ParameterError(f"The budget ({budget}) is smaller than the initial design (n_init = {self.n_init}); raise the budget or lower n_init.")
        self.acquisition = check_choice("acquisition", acquisition, ACQUISITIONS)

    def _fill_every_cell(self) -> int:
        if self.alpha in (0.0, 1.0):
            return _MEMORY  # D is ignored (alpha 0) or no failure improves anything (alpha 1)
        cells = math.prod(width for _, width in self.cube.blocks)
        return max(_MEMORY, cells * math.ceil(self.capacity * (1 - self.alpha) / self.alpha))

    def composite(self, X: np.ndarray, loss: np.ndarray) -> np.ndarray:
        """Eq. (4) at evaluated points not yet told, against the failures told so far (NaN: no answer)."""
        X_told, told = self.history.answered()
        known = self.cube.snap(X_told[told >= FAILURE][-self.memory :])
        return composite(loss, self._diversity(self.cube.snap(X), known), self.alpha)

    def ask(self, n: int, step: int) -> np.ndarray:
        """`n x dim` points to evaluate next, a function of the seed, `step`, the history and the state."""
        n = check_int("n", n, 1)
        X, loss = self.history.answered()
        failed = loss >= FAILURE
        if self.history.n_told < self.n_init or not failed.any():
            return self._next_sobol(n)
        rows = self._training_rows(loss)
        seed = int(step_rng(self.seed, step).integers(2**31))
        tX = torch.tensor(self.cube.snap(X[rows]), dtype=torch.float64)
        ty = torch.tensor(loss[rows], dtype=torch.float64)
        with one_thread(), manual_seed(seed), gpytorch.settings.max_cholesky_size(CHOLESKY_LIMIT):
            model = self._fit_carried(fit_gp, tX, ty)
            return self._propose(model, self.cube.snap(X[failed][-self.memory :]), n, np.random.default_rng(seed))

    def _around(self, centres: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return around(self.cube, centres, rng, _LOCAL)

    def _diversity(self, X: np.ndarray, known: np.ndarray) -> np.ndarray:
        cells = self._categorical if self.neighbourhood == "cell" else None
        return diversity(X, known, self.radius, self.capacity, cells)

    def _new_cell(self, X: np.ndarray, known: np.ndarray) -> np.ndarray:
        """Rows of `X` whose category combination holds no remembered failure (none, without categories)."""
        if not self._categorical.any():
            return np.zeros(len(X), bool)
        return ~same_cell(X, known, self._categorical).any(axis=1)

    def _moments(self, model: SingleTaskGP, X: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        """The GP's posterior mean and standard deviation at each row of `X` (a chunk at a time): what
        `_score` prices, kept while the model is not conditioned again."""
        means, sds = [], []
        with torch.no_grad():
            for chunk in torch.tensor(X).split(_CHUNK):
                post = model.posterior(chunk)
                means.append(post.mean.reshape(-1))
                sds.append(post.variance.reshape(-1).clamp_min(1e-18).sqrt())
        return torch.cat(means), torch.cat(sds)

    def _score(self, moments: tuple[torch.Tensor, torch.Tensor], X: np.ndarray, known: np.ndarray, failing_only: bool) -> np.ndarray:
        """LogEI (or EI) of the composite at each row of `X`, whose `_moments` are given; if
        `failing_only`, -inf (0) where the GP predicts a pass, unless the row's category
        combination holds no remembered failure."""
        D = torch.tensor(self._diversity(X, known))
        new_cell = torch.tensor(self._new_cell(X, known) if failing_only else np.zeros(len(X), bool))
        out = []
        with torch.no_grad():
            for mean, sd, d, new in zip(moments[0].split(_CHUNK), moments[1].split(_CHUNK), D.split(_CHUNK), new_cell.split(_CHUNK)):
                value = log_expected_improvement(mean, sd, d, self.alpha)
                if failing_only:
                    value = torch.where((mean >= FAILURE) | new, value, -torch.inf)
                out.append(value)
        log_ei = torch.cat(out).numpy()
        return log_ei if self.acquisition == "logei" else np.exp(log_ei)

    def _explore_value(self, moments: tuple[torch.Tensor, torch.Tensor], uniform: np.ndarray, known: np.ndarray) -> float:
        """The (log) mean EI of a uniform draw (`uniform`, with its `_moments`): what the next Sobol point is expected to add."""
        values = self._score(moments, uniform, known, failing_only=False)
        if self.acquisition == "ei":
            return float(values.mean())
        return float(torch.logsumexp(torch.tensor(values), 0)) - float(np.log(len(values)))

    def _propose(self, model: SingleTaskGP, known: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        """`n` points by sequential greedy selection (module docstring, 5). The GP is conditioned on
        its fantasies after every point up to a batch of `_CONDITIONED`; a larger batch conditions
        on them in `_CONDITIONED` blocks, and between two it prices the pool with the moments it
        has, the diversity term still counting every point picked (a conditioning costs about what
        pricing the whole pool does; docs/search.md#a-batch-of-1024-from-bo-conditioning-on-blocks-of-picks)."""
        centres = known[rng.choice(len(known), min(_CENTRES, len(known)), replace=False)]
        pool = self._around(centres, rng)
        moments = self._moments(model, pool)
        values = self._score(moments, pool, known, failing_only=True)
        refine = self._around(pool[np.argsort(-values)[:_CENTRES]], rng)
        refined = self._moments(model, refine)
        pool = np.concatenate([pool, refine])
        values = np.concatenate([values, self._score(refined, refine, known, failing_only=True)])
        moments = (torch.cat([moments[0], refined[0]]), torch.cat([moments[1], refined[1]]))  # the pool's, while the model stands
        seen = {row.tobytes() for row in self.cube.snap(self.history.answered()[0])}
        taken = np.array([row.tobytes() in seen for row in pool])
        values[taken] = -np.inf
        uniform = self.cube.uniform(rng, _UNIFORM)
        block = math.ceil(n / _CONDITIONED)
        explore_moments = self._moments(model, uniform)
        chosen: list[np.ndarray] = []
        for i in range(n):
            best = int(np.argmax(values))
            if values[best] > self._explore_value(explore_moments, uniform, known):
                x = pool[best : best + 1]
                known = np.concatenate([known, x])
                taken |= (pool == x).all(axis=1)
            else:
                x = self._next_sobol(1)
            chosen.append(x[0])
            if i + 1 == n:
                break
            if (i + 1) % block == 0:
                xt = torch.tensor(np.stack(chosen[-block:]))
                with torch.no_grad():
                    model = model.condition_on_observations(xt, model.posterior(xt).mean.reshape(-1, 1))
                moments, explore_moments = self._moments(model, pool), self._moments(model, uniform)
            values = self._score(moments, pool, known, failing_only=True)
            values[taken] = -np.inf
        return np.stack(chosen)

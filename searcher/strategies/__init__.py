"""Search strategies over a space's unit cube (ask/tell, see `base.py`).

    >>> strategy = make_strategy("bo", space, seed=0, alpha=0.6)
    >>> X = strategy.ask(4, step=0)          # `4 x space.dim` points
    >>> strategy.tell(X, losses)

`random` and `sobol` are the baselines of McDuff et al. (003_cc490b638f1b9b67.txt, Fig. 4); `bo` is
their GP + expected improvement search with the diversity term of eq. (4); `tpe` (Optuna) and
`cmaes` (the `cmaes` package) are peer optimisers without one. Modules load when asked for.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from searcher.errors import ParameterError
from searcher.space import Space
from searcher.strategies.base import Strategy, step_rng

__all__ = ["STRATEGIES", "Strategy", "make_strategy", "step_rng"]

# name -> ("module:class", one-line description)
STRATEGIES: dict[str, tuple[str, str]] = {
    "random": ("searcher.strategies.simple:RandomSearch", "uniform random search"),
    "sobol": ("searcher.strategies.simple:SobolSearch", "scrambled Sobol sequence"),
    "bo": ("searcher.strategies.bo:BayesianOptimization", "GP + expected improvement with the diversity term of eq. (4)"),
    "tpe": ("searcher.strategies.peers:TPESearch", "Optuna's TPE on the loss (needs optuna)"),
    "cmaes": ("searcher.strategies.peers:CMAESSearch", "CMA-ES on the loss (needs cmaes)"),
}


def make_strategy(name: str, space: Space, seed: int = 0, budget: int | None = None, **options: Any) -> Strategy:
    """The strategy `name` over `space`, seeded, with its keyword `options`; the campaign's
    `budget` goes to strategies that check their initial design against it.

    Raises:
        ParameterError: `name` or an option is unknown (the message lists the valid ones), or an
            option's value is out of range.
        PluginError: a peer's optional package is not installed.
    """
    if name not in STRATEGIES:
        raise ParameterError(f"Unknown strategy {name!r}. Available strategies: {', '.join(STRATEGIES)}.")
    module, _, attr = STRATEGIES[name][0].partition(":")
    factory = getattr(importlib.import_module(module), attr)
    valid = [k for k in inspect.signature(factory).parameters if k not in ("space", "seed")]
    unknown = [k for k in options if k not in valid]
    if unknown:
        raise ParameterError(f"The {name!r} strategy takes no option {unknown[0]!r}. Its options: {', '.join(valid) or 'none'}.")
    if budget is not None and "budget" in valid:
        options["budget"] = budget
    return factory(space, seed=seed, **options)

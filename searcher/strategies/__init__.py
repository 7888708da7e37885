"""Search strategies over a space's unit cube (ask/tell, see `base.py`).

    >>> strategy = make_strategy("sobol", space, seed=0)
    >>> X = strategy.ask(4, step=0)          # `4 x space.dim` points
    >>> strategy.tell(X, losses)

`random` and `sobol` are the baselines of McDuff et al. (003_cc490b638f1b9b67.txt, Fig. 4).
"""

from __future__ import annotations

from typing import Any

from searcher.errors import ParameterError
from searcher.space import Space
from searcher.strategies.base import Strategy, step_rng
from searcher.strategies.simple import RandomSearch, SobolSearch

__all__ = ["STRATEGIES", "Strategy", "make_strategy", "step_rng"]

STRATEGIES = {"random": RandomSearch, "sobol": SobolSearch}


def make_strategy(name: str, space: Space, seed: int = 0, **options: Any) -> Strategy:
    """The strategy `name` over `space`, seeded; unknown names or options are a ParameterError."""
    if name not in STRATEGIES:
        raise ParameterError(f"Unknown strategy {name!r}. Available strategies: {', '.join(STRATEGIES)}.")
    try:
        return STRATEGIES[name](space, seed=seed, **options)
    except TypeError as exc:
        raise ParameterError(f"Bad options for the {name!r} strategy: {exc}.") from exc

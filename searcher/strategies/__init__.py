"""Search strategies over a space's unit cube (ask/tell, see `base.py`).

    >>> strategy = make_strategy("bo", space, seed=0, alpha=0.6)
    >>> X = strategy.ask(4, step=0)          # `4 x space.dim` points
    >>> strategy.tell(X, losses)

`random` and `sobol` are the baselines of McDuff et al. (docs/papers.md#mcduff, Fig. 4); `bo` is
their GP + expected improvement search with the diversity term of eq. (4); `bo-modes`, the default
(`DEFAULT_STRATEGY`), looks for new failure modes with a GP and harvests a trust region per mode
found: on the benchmark suite it finds more failures than `bo` on 19 of 21 cases with as much
breadth or more on most (README, "The benchmark suite"); `tpe` (Optuna), `cmaes`
(the `cmaes` package, IPOP restarts), `ax` (Ax's default Bayesian optimisation) and `cmame` (pyribs'
CMA-ME, quality diversity) are the peers a user would pick instead, each an optional package.
Modules load when asked for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from searcher.errors import ParameterError
from searcher.registry import Registry
from searcher.space import Space
from searcher.strategies.base import Strategy, StrategyBase, step_rng

__all__ = ["DEFAULT_STRATEGY", "MOVED_OPTIONS", "STRATEGIES", "Strategy", "StrategyBase", "make_strategy", "step_rng", "strategy_options",
           "upgrade_options"]

STRATEGIES = Registry("strategy", {
    "random": ("searcher.strategies.baselines:RandomSearch", "uniform random search"),
    "sobol": ("searcher.strategies.baselines:SobolSearch", "scrambled Sobol sequence"),
    "bo": ("searcher.strategies.bo:BayesianOptimization", "GP + expected improvement with the diversity term of eq. (4)"),
    "bo-modes": ("searcher.strategies.bo:FailureModes", "GP-guided exploration for new failure modes, a trust region per mode found"),
    "bo-modes-nomodel": ("searcher.strategies.bo:ModelFreeFailureModes", "bo-modes with its model replaced by a constant (the ablation)"),
    "tpe": ("searcher.strategies.peers:TPESearch", "Optuna's TPE on the loss (needs optuna)"),
    "cmaes": ("searcher.strategies.peers:CMAESSearch", "CMA-ES on the loss, with IPOP restarts (needs cmaes)"),
    "ax": ("searcher.strategies.ax:AxSearch", "Ax's default Bayesian optimisation on the loss (needs ax-platform)"),
    "cmame": ("searcher.strategies.qd:CMAMESearch", "CMA-ME quality diversity over a random projection of the space (needs ribs)"),
}, arguments=("space", "seed"))
DEFAULT_STRATEGY = "bo-modes"  # chosen on the benchmark suite (searcher/bench), not on one case
_SWITCHES = ("model", "inside", "anywhere", "anywhere_rule", "explore", "explore_when", "near_best", "probe")
MOVED_OPTIONS: dict[str, tuple[str, tuple[str, ...]]] = {  # strategy -> (table, options that were its own before they moved into it)
    "bo-modes": ("ablation", _SWITCHES),  # searcher.strategies.bo.ModesAblation
    "bo-modes-nomodel": ("ablation", ("inside",)),
}


def make_strategy(name: str, space: Space, seed: int = 0, budget: int | None = None,
                  unjudged: tuple[int, float, float] | None = None, **options: Any) -> Strategy:
    """The strategy `name` over `space`, seeded, with its keyword `options`; the campaign's
    `budget` goes to strategies that check their initial design against it, and the band of the
    cube its target never judges (`unjudged`: column, low, high) to strategies that avoid it.

    Raises:
        PluginError: `name` or an option is unknown (the message lists the valid ones), or a
            peer's optional package is not installed.
        ParameterError: an option's value is out of range.
    """
    for key, value in (("budget", budget), ("unjudged", unjudged)):  # what the campaign knows, to those that take it
        if value is not None and key in STRATEGIES.options(name):
            options[key] = value
    return STRATEGIES.load(name, space, seed=seed, **options)


def upgrade_options(name: str | None, options: Mapping[str, Any]) -> dict[str, Any]:
    """`options` of the strategy `name` as it takes them now: each option that has since moved into
    a table of it (`MOVED_OPTIONS`: `bo-modes`'s ablation switches, `probe=True` is now
    `ablation={"probe": True}`) moved there, so a campaign stored with the old names loads and
    resumes, and an old command line still runs. `name` None: for whichever strategy takes them.

    Raises:
        ParameterError: a moved option is given both ways.
    """
    options = dict(options)
    moves = MOVED_OPTIONS.values() if name is None else [MOVED_OPTIONS[name]] if name in MOVED_OPTIONS else []
    for table, names in moves:
        moved = {k: options.pop(k) for k in names if k in options}
        if not moved:
            continue
        given = options.get(table) or {}
        if not isinstance(given, Mapping) or set(moved) & set(given):
            raise ParameterError(f"{', '.join(moved)} belong(s) in the strategy option {table!r} now; give {table}={{...}} alone. "
                                 f"Got {table}={given!r} beside {moved!r}.")
        options[table] = {**moved, **given}
    return options


def strategy_options(strategies: Sequence[str], options: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per strategy compared, the `options` it takes (`restarts=False` goes to cmaes, not to random;
    options that moved are taken where they moved, `upgrade_options`); an option that none of them
    takes is an error, so a misspelt one never passes unseen.

    Raises:
        ParameterError: naming the option and each strategy's options.
    """
    takes = {name: STRATEGIES.options(name) for name in strategies}
    moved = {name: MOVED_OPTIONS[name][1] if name in MOVED_OPTIONS else () for name in strategies}
    unused = [key for key in options if not any(key in takes[name] or key in moved[name] for name in strategies)]
    if unused:
        valid = "; ".join(f"{name}: {', '.join(keys) or 'none'}" for name, keys in takes.items())
        raise ParameterError(f"No strategy compared takes the strategy option {unused[0]!r}. Their options: {valid}.")
    return {name: {k: v for k, v in upgrade_options(name, options).items() if k in keys} for name, keys in takes.items()}

"""Bayesian optimisation for failures (`strategy.py`), its Gaussian process (`gp.py`) and the
composite objective of eq. (4) with its diversity term (`diversity.py`)."""

from searcher.strategies.bo.strategy import BayesianOptimization

__all__ = ["BayesianOptimization"]

"""Bayesian optimisation for failures: the composite objective of eq. (4) (`strategy.py`, its
diversity term in `diversity.py`), a trust region per failure mode (`modes.py`), their Gaussian
processes (`gp.py`) and candidates (`candidates.py`)."""

from searcher.strategies.bo.modes import FailureModes, ModelFreeFailureModes, ModesAblation
from searcher.strategies.bo.strategy import BayesianOptimization

__all__ = ["BayesianOptimization", "FailureModes", "ModelFreeFailureModes", "ModesAblation"]

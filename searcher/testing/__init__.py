"""What the engine ships for testing plug-ins and strategies, as scikit-learn ships
`check_estimator`: conformance checks (`conformance.py`), fakes that need no model or network
(`fakes.py`), and the planted known-answer problem (`planted.py`).

    >>> from searcher.testing import check_generator
    >>> check_generator(my_generator)   # raises AssertionError naming what failed
"""

from searcher.testing.conformance import (
    GENERATOR_CHECKS,
    STRATEGY_CHECKS,
    TARGET_CHECKS,
    check_generator,
    check_strategy,
    check_target,
)
from searcher.testing.fakes import CallableTarget, FakeGenerator

__all__ = ["GENERATOR_CHECKS", "STRATEGY_CHECKS", "TARGET_CHECKS", "CallableTarget", "FakeGenerator",
           "check_generator", "check_strategy", "check_target"]

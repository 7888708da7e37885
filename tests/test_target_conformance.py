"""Every registered target passes the same conformance suite."""

import pytest

import targets
from searcher.testing import TARGET_CHECKS


@pytest.fixture(scope="module", params=targets.available())
def target(request):
    return targets.load(request.param)


@pytest.mark.parametrize("check", TARGET_CHECKS, ids=lambda c: c.__name__)
def test_conformance(target, check):
    check(target)

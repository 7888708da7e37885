"""Every registered target passes the same conformance suite."""

import pytest

import targets
from searcher.testing import TARGET_CHECKS


# `http` needs a server; tests/test_http_target.py runs these checks against serve-target.
@pytest.fixture(scope="module", params=[name for name in targets.available() if name != "http"])
def target(request):
    return targets.load(request.param)


@pytest.mark.parametrize("check", TARGET_CHECKS, ids=lambda c: c.__name__)
def test_conformance(target, check):
    check(target)

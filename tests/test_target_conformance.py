"""Every registered target passes the same conformance suite."""

import pytest

import targets
from searcher.testing import TARGET_CHECKS

# These need a server or a model file; tests/test_http_target.py and tests/test_local_targets.py
# run the same checks on them.
NEEDS_OPTIONS = {"http", "torch", "onnx"}


@pytest.fixture(scope="module", params=[name for name in targets.available() if name not in NEEDS_OPTIONS])
def target(request):
    return targets.load(request.param)


@pytest.mark.parametrize("check", TARGET_CHECKS, ids=lambda c: c.__name__)
def test_conformance(target, check):
    check(target)

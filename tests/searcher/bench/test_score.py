"""The scores of one run: failures, repeats, breadth and effective breadth, on hand-made inputs."""

import numpy as np
import pytest

from searcher.analysis.compare import repeated
from searcher.bench.score import breadth, effective_breadth, run_scores


@pytest.mark.parametrize("counts, expected", [
    ([4, 4, 4], 3.0),  # equal counts over 3 regions
    ([0, 7, 0, 0], 1.0),  # one region
    ([0, 0, 0], 0.0),  # no failures: 0, not NaN
    ([], 0.0),
    ([1, 1, 0, 1, 1], 4.0),
])
def test_effective_breadth(counts, expected):
    assert effective_breadth(counts) == pytest.approx(expected)
    assert not np.isnan(effective_breadth(counts))


def test_uneven_counts_are_less_broad_than_their_breadth():
    assert breadth([100, 1, 1, 1, 1]) == 5
    assert 1.0 < effective_breadth([100, 1, 1, 1, 1]) < 1.3


def test_repeats_are_points_seen_before():
    X = np.array([[0.1, 0.2], [0.5, 0.5], [0.1, 0.2 + 1e-12], [0.9, 0.9], [0.5, 0.5]])
    assert repeated(X).tolist() == [False, False, True, False, True]


def test_run_scores_count_each_new_failure_once():
    labels = [-1, 2, 0, -1, 2, 2, -1]  # the region of each new failure, -1 elsewhere (repeats included)
    got = run_scores(labels, repeats=1, of=4)
    assert (got["failures"], got["repeats"], got["breadth"], got["of"], got["evaluations"]) == (4, 1, 2, 4, 7)
    assert got["counts"] == "1 0 3 0" and got["first_failure"] == 2
    assert got["effective_breadth"] == pytest.approx(np.exp(-(0.25 * np.log(0.25) + 0.75 * np.log(0.75))), abs=1e-6)
    none = run_scores([-1, -1], repeats=0, of=3)
    assert (none["failures"], none["breadth"], none["effective_breadth"], none["first_failure"]) == (0, 0, 0.0, None)

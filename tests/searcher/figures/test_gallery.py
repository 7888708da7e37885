"""The failure gallery: the most different failures, or the first ones."""

import numpy as np

from searcher.campaign import Campaign
from searcher.cli import main
from searcher.figures.gallery import failure_gallery
from searcher.space import farthest_points


def test_spread_picks_one_point_per_cluster():
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    X = np.concatenate([c + 0.01 * rng.standard_normal((20, 2)) for c in centres])  # 20 near-copies each
    picked = farthest_points(X, 3)
    assert sorted(picked // 20) == [0, 1, 2] and list(picked) == sorted(picked)
    assert list(farthest_points(X[:2], 5)) == [0, 1]


def test_gallery_from_a_campaign(tmp_path):
    Campaign(generator="planted", target="planted", strategy="bo", budget=40, batch=4, out=str(tmp_path / "c")).run(progress=False)
    assert failure_gallery(tmp_path / "c", limit=4).size[0] > 0
    assert main(["gallery", str(tmp_path / "c"), "--limit", "4", "--first", "--out", str(tmp_path / "g.png")]) == 0
    assert (tmp_path / "g.png").stat().st_size > 0

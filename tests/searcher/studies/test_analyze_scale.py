"""`analyze` bounds its bootstrap: over `max_boot_rows` (resamples x trials) it draws fewer
resamples, at least `MIN_BOOT`, and its summary says how many; under it, everything as asked."""

import numpy as np
import pandas as pd

from searcher.studies.analyze import MIN_BOOT, analyze

ROWS = 200


def _transects(path):
    """A transect run of 200 images over two axes, failures more likely with long hair."""
    rng = np.random.default_rng(0)
    hair = np.tile([-1.5, 1.5], ROWS // 2)
    path.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"transect": np.arange(ROWS) // 2, "image": np.arange(ROWS), "value_hair_length": hair,
                  "value_skin_tone": rng.choice([-1.5, 1.5], ROWS),
                  "error": (rng.random(ROWS) < np.where(hair > 0, 0.5, 0.15)).astype(float)}).to_csv(path / "transects.csv", index=False)
    return path


def test_over_the_cap_fewer_resamples_and_the_summary_says_so(tmp_path):
    run = _transects(tmp_path / "t")
    capped = analyze(run, out=tmp_path / "capped", n_boot=100, max_boot_rows=25 * ROWS)
    assert capped.n_boot == 25
    assert f"effects from 25 bootstrap resamples, not the 100 asked: each refits the model on the {ROWS} trials" in capped.summary()
    floor = analyze(run, out=tmp_path / "floor", n_boot=100, max_boot_rows=ROWS)
    assert floor.n_boot == MIN_BOOT and f"effects from {MIN_BOOT} bootstrap resamples" in floor.summary()


def test_under_the_cap_every_resample_asked(tmp_path):
    run = _transects(tmp_path / "t")
    full = analyze(run, out=tmp_path / "full", n_boot=25, max_boot_rows=25 * ROWS)
    assert full.n_boot == 25 and "resamples, not the" not in full.summary()
    capped = analyze(run, out=tmp_path / "capped", n_boot=100, max_boot_rows=25 * ROWS)
    pd.testing.assert_frame_equal(full["effects"], capped["effects"])  # the same 25 draws of the same seed

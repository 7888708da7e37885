"""The comparison: campaigns per strategy x seed x alpha, tables, figures and progress bars (its scores: tests/searcher/analysis/test_modes.py)."""

import sqlite3

import pandas as pd

from searcher.cli import main
from searcher.studies.compare import _watch, compare


def test_compare_on_planted_writes_tables_and_figures(tmp_path):
    table = compare(tmp_path, generator="planted", target="planted", strategies=["random", "bo"], seeds=[0, 1],
                    alphas=[0.3, 0.9], budget=24, batch=4, progress=False)
    assert len(table) == 2 + 4  # random once per seed, bo per alpha and seed
    assert {"failures", "regions_found", "modes", "mean_pairwise", "failure_rate"} <= set(table.columns)
    curves = pd.read_csv(tmp_path / "curves.csv")
    assert curves.groupby(["strategy", "alpha", "seed"], dropna=False)["evaluation"].max().eq(24).all()
    for name in ("compare.csv", "failures_vs_evaluations.png", "failures_vs_alpha.png", "diversity.png"):
        assert (tmp_path / name).stat().st_size > 0
    again = compare(tmp_path, generator="planted", target="planted", strategies=["random", "bo"], seeds=[0, 1],
                    alphas=[0.3, 0.9], budget=24, batch=4, progress=False)  # resumes: nothing evaluated twice
    pd.testing.assert_frame_equal(table, again)


def test_cli_compare(tmp_path, capsys):
    assert main(["compare", "--generator", "planted", "--target", "planted", "--strategies", "random,sobol", "--seeds", "2",
                 "--budget", "12", "--out", str(tmp_path), "--no-progress"]) == 0
    assert "regions_found" in capsys.readouterr().out


def test_progress_shows_each_campaign_with_its_failures(tmp_path, capsys):
    """One bar per campaign, named by its run, counting evaluations and failures found so far."""
    table = compare(tmp_path, generator="planted", target="planted", strategies=["random", "bo"], seeds=[0], budget=16,
                    batch=4, progress=True)
    err = capsys.readouterr().err
    for name in ("random-s0", "bo-s0"):
        final = [line for line in err.replace("\r", "\n").splitlines() if line.startswith(f"{name}:") and "16/16" in line]
        assert final, f"no finished bar for {name} in {err[-500:]!r}"
        found = int(table.loc[table["strategy"] == name.split("-")[0], "failures"].iloc[0])
        assert f"failures={found}" in final[-1]


def test_the_progress_bars_wait_for_a_store_still_being_created(tmp_path):
    """A campaign's SQLite file exists a moment before its tables: the bars that read it skip that
    tick. Reading it once crashed a whole benchmark suite (`no such table: trials`)."""
    (tmp_path / "new").mkdir()
    sqlite3.connect(tmp_path / "new" / "campaign.sqlite").close()  # a file, no tables yet

    class Ray:
        def wait(self, pending, timeout):
            return pending[:1], pending[1:]  # one future finishes per tick

    _watch([str(tmp_path / "new")], budget=10, futures=["a", "b"], ray=Ray())

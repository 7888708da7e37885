"""experiments/mcduff.py at its --quick size: every step runs, and its tables say what the stored runs hold."""

import pandas as pd
import pytest
from project_scripts import load_script

SCRIPT = "experiments/mcduff.py"


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    module = load_script(SCRIPT)
    out = tmp_path_factory.mktemp("mcduff")
    return module, out, module.run(out, quick=True, progress=False)


def test_writes_the_report_and_every_figure(quick):
    _, out, _ = quick
    text = (out / "report.md").read_text()
    for header in ("## Fig. 4a", "## Fig. 4b", "## Table 2", "## Fig. 3", "## Retraining gender-cnn", "81% (base), 87%"):
        assert header in text
    for name in ("fig4a.png", "fig4b.png", "fig3.png", "retraining.png"):
        assert (out / name).stat().st_size > 5_000


def test_fig4a_compares_random_and_bo_on_every_target(quick):
    mcduff, out, result = quick
    assert list(result["curves"]) == list(mcduff.QUICK.targets)
    for target, table in result["curves"].items():
        assert sorted(table["strategy"].unique()) == ["bo", "random"] and len(table) == 2 * mcduff.QUICK.seeds
        curves = pd.read_csv(out / "compare" / target / "curves.csv")
        assert curves.groupby(["strategy", "seed"])["evaluation"].max().eq(mcduff.QUICK.budget).all()


def test_table2_counts_the_prior_sample_not_the_search(quick):
    _, out, result = quick
    sample = pd.read_csv(out / "uniform_sample.csv")
    table = result["table2"]
    for target, grp in sample[sample["failure"].notna()].groupby("target"):
        for group, rows in [("all", grp), *grp.groupby("skin"), *grp.groupby("gender")]:
            row = table[(table["target"] == target) & (table["group"] == group)].iloc[0]
            assert (row["n"], row["errors"]) == (len(rows), int(rows["failure"].astype(bool).sum()))
            assert row["low"] <= row["rate"] <= row["high"]
    assert len(sample) == len(result["curves"]) * 40


def test_retraining_runs_every_arm(quick):
    _, _, result = quick
    assert set(result["retrain"].scores["arm"]) == {"base", "hard", "random", "spread", "balanced"}

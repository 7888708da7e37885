"""experiments/balakrishnan.py: the report, figure and tables, and the paper's finding on the planted gender-cnn."""

import pandas as pd
import pytest
from project_scripts import load_script

SCRIPT = "experiments/balakrishnan.py"


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A moderate run (64 px, gender-cnn's own input size): large enough for the finding to hold
    with margin on every seed tried by hand (0-5), small enough for about 15 s."""
    out = tmp_path_factory.mktemp("balakrishnan")
    bk = load_script(SCRIPT)
    result = bk.run(n_observational=300, transects=20, boot=50, seed=0, out=out, fit_samples=300, resolution=64,
                    progress=False)
    return bk, out, result


def test_writes_the_report_figure_and_tables(small):
    _, out, _ = small
    assert (out / "report.md").is_file() and (out / "figure.png").stat().st_size > 10_000
    assert (out / "transects" / "transects.csv").is_file()
    text = (out / "report.md").read_text()
    for header in ("| gender | skin | n | errors | error rate | 95% CI (Wilson) |",
                   "| attribute | level | n | errors | error rate | 95% CI (Wilson) |",
                   "| covariate | coef (log odds) | std (bootstrap) | 95% CI (bootstrap) |", "## Reading"):
        assert header in text
    obs = pd.read_csv(out / "observational.csv")
    assert list(obs.columns) == ["gender", "skin", "n", "errors", "rate", "low", "high"] and len(obs) == 4
    rates = pd.read_csv(out / "transect_rates.csv")
    assert list(rates.columns) == ["attribute", "level", "n", "errors", "rate", "low", "high"] and len(rates) == 6
    effects = pd.read_csv(out / "effects.csv")
    assert list(effects.columns) == ["model", "covariate", "coef", "std", "low", "high"]
    assert effects["covariate"].tolist() == ["dark_skin", "long_hair", "feminine", "long_hair x feminine",
                                             "dark_skin", "long_hair", "feminine"]


def test_observation_blames_skin_the_experiment_finds_hair_and_gender(small):
    _, _, result = small
    gap = result["gap"]
    assert gap.value > 0.1 and gap.low > 0  # the trap: dark skin looks worse on the PPB-like sample
    eff = result["exp_effects"]
    skin = eff.loc["dark_skin"]
    causes = eff.drop(index="dark_skin")
    assert (causes["low"] > 0).sum() + (causes["high"] < 0).sum() == 3  # hair, gender, interaction all significant
    assert eff.loc["long_hair", "coef"] > 0 and eff.loc["feminine", "coef"] > 0 and eff.loc["long_hair x feminine", "coef"] < 0
    assert skin["low"] <= 0 <= skin["high"] or abs(skin["coef"]) < 0.25 * causes["coef"].abs().min()


def test_same_seed_same_numbers(small, tmp_path):
    bk, out, _ = small
    again = bk.run(n_observational=300, transects=20, boot=50, seed=0, out=tmp_path, fit_samples=300, resolution=64,
                   progress=False)
    assert (tmp_path / "report.md").read_text() == (out / "report.md").read_text()
    pd.testing.assert_frame_equal(again["exp_effects"], small[2]["exp_effects"])


def test_bad_sizes_are_refused(tmp_path):
    with pytest.raises(ValueError, match="transects must be an integer >= 2"):
        load_script(SCRIPT).run(transects=1, out=tmp_path)

"""`validate_generator`: the per-condition table on a small checkpoint generator whose judge and
detector answers are counted independently, its files, its judges, its CLI, and the spread of its distances."""

import numpy as np
import pytest
import torch
from tiny_checkpoint import SIDE, D, TinyGAN, TinyJudge, export_pt2, spec_text

import generators
from searcher.studies.generator_quality import validate_generator


@pytest.fixture(scope="module")
def gen(tmp_path_factory):
    d = tmp_path_factory.mktemp("judged")
    export_pt2(TinyGAN().eval(), (torch.zeros(2, D), torch.zeros(2, 5)), d / "gan.pt2")
    export_pt2(TinyJudge().eval(), (torch.zeros(2, 3, SIDE, SIDE),), d / "judge.pt2")
    (d / "spec.toml").write_text(spec_text("gan.pt2") + '\n[judge]\nfile = "judge.pt2"\n')
    return generators.load("checkpoint", spec=str(d / "spec.toml"))


def test_the_table_counts_what_the_judge_and_the_detector_said(gen):
    import targets

    result = validate_generator(gen, n=6, seed=3, detectors=("haar-face",), descriptor=None)
    t = result.table.set_index("group")
    assert len(t) == 6 + 5 + 1 and t.loc["all", "n"] == 36  # 2 x 3 combinations, 5 categories, all
    cell = {"gender": "feminine", "mood": "cross"}
    params = [{**p, **cell} for p in gen.space.sample(6, seed=3 + 1000 * 5)]  # the sixth combination
    images = gen.generate(params, seed=3).images
    judged = gen.judge(images)
    row = t.loc["feminine cross"]
    assert row["conditioned.gender.k"] == int((judged["gender"] == "feminine").sum())
    assert row["conditioned.mood.k"] == int((judged["mood"] == "cross").sum())
    assert row["detected.haar-face.k"] == int(np.sum(targets.load("haar-face").predict(images).label))
    both = t.loc[["masculine cross", "feminine cross"], "conditioned.mood.k"].sum()
    assert t.loc["mood=cross", "conditioned.mood.k"] == both and t.loc["mood=cross", "n"] == 12
    lo, hi = row["conditioned.gender.low"], row["conditioned.gender.high"]
    assert 0 <= lo <= row["conditioned.gender.rate"] <= hi <= 1


def test_write_gives_the_table_and_one_sheet_per_combination(gen, tmp_path):
    result = validate_generator(gen, n=3, detectors=(), descriptor=None)
    paths = result.write(tmp_path)
    assert (tmp_path / "validation.csv").is_file() and "| group | n |" in (tmp_path / "validation.md").read_text()
    assert len([p for p in paths if p.name.startswith("sheet_")]) == 6 and (tmp_path / "conditions.png").is_file()


def test_a_judge_target_must_answer_the_conditions_categories(gen):
    from searcher.errors import ParameterError

    with pytest.raises(ParameterError, match="'hue', which the generator does not have.*gender, mood"):
        validate_generator(gen, n=2, detectors=(), descriptor=None, judges={"hue": "gender-cnn"})
    with pytest.raises(ParameterError, match="answers .*masculine.*not the categories of 'mood'"):
        validate_generator(gen, n=2, detectors=(), descriptor=None, judges={"mood": "gender-cnn"})
    result = validate_generator(gen, n=4, detectors=(), descriptor=None, judges={"gender": "gender-cnn"})
    assert "conditioned.gender.rate" in result.table


def test_cli_writes_the_table_and_names_a_bad_detector(gen, tmp_path, capsys):
    from searcher.cli import main

    argv = ["validate-generator", "checkpoint", "--generator-option", f"spec={gen.spec_path}", "-n", "3", "--no-descriptor", "--no-progress"]
    assert main([*argv, "--detectors", "haar-face", "--out", str(tmp_path)]) == 0
    assert "| feminine cross | 3 |" in capsys.readouterr().out
    table = (tmp_path / "validation.csv").read_text()
    assert "detected.haar-face.rate" in table and "conditioned.mood.rate" in table
    assert main([*argv, "--detectors", "haar-fase", "--out", str(tmp_path)]) == 2
    assert "Unknown target(s) ['haar-fase']" in capsys.readouterr().err


def test_spread_is_largest_over_smallest_distance_per_set_of_groups():
    import pandas as pd

    from searcher.studies.generator_quality import GeneratorValidation

    table = pd.DataFrame({"group": ["a x", "a y", "b x", "b y", "hue=a", "hue=b", "tone=x", "tone=y", "all"],
                          "n": 10, "fd": [0.1, 0.2, 0.3, 0.15, 0.12, 0.24, 0.2, 0.16, 0.18],
                          "fd_inf": [0.05, 0.2, 0.25, 0.1, 0.1, 0.2, 0.2, 0.1, 0.1],
                          "fd_blur": [0.1, 0.1, 0.2, 0.3, 0.1, 0.2, 0.1, 0.2, 0.1]})
    spread = GeneratorValidation(table).spread()
    assert list(spread.index) == ["combinations", "hue", "tone"]  # "all" is in no set
    assert spread.loc["combinations", "fd_spread"] == pytest.approx(3.0)
    assert (spread.loc["combinations", "lowest"], spread.loc["combinations", "highest"]) == ("a x", "b x")
    assert spread.loc["combinations", "blur_units_spread"] == pytest.approx(2.0 / 0.5)  # fd / fd_blur: 1, 2, 1.5, 0.5
    assert spread.loc["hue", "fd_spread"] == pytest.approx(2.0) and spread.loc["hue", "blur_units_spread"] == pytest.approx(1.0)
    assert spread.loc["tone", "fd_spread"] == pytest.approx(1.25) and spread.loc["tone", "highest"] == "tone=x"
    assert spread.loc["combinations", "fd_inf_spread"] == pytest.approx(5.0) and spread.loc["tone", "fd_inf_spread"] == pytest.approx(2.0)
    assert ("over the combinations **3.00x** (a x 0.1 to b x 0.3; 5.00x extrapolated to infinitely many samples; 4.00x in units of the blur)"
            in GeneratorValidation(table).markdown())
    bare = GeneratorValidation(table.drop(columns=["fd", "fd_inf", "fd_blur"]))
    assert bare.spread().empty and "largest over smallest" not in bare.markdown()

"""`run_transects` and `searcher transect`: the files a run writes, people's ratings, bad input."""

import numpy as np
import pandas as pd
import pytest

from searcher.cli import build_parser
from searcher.errors import ParameterError
from searcher.studies.analyze import analyze


def run_cli(argv):
    """`searcher transect ARGV` without the error handling of `main`, so errors reach the test."""
    args = build_parser().parse_args(["transect", *argv])
    return args.func(args)


def test_cli_end_to_end(tmp_path, capsys):
    out = tmp_path / "run"
    code = run_cli(["--attributes", "hair_length,gender_presentation", "--size", "2x2", "-n", "2", "--target", "haar-face",
                    "--out", str(out), "--fit-samples", "120", "--resolution", "64", "--sheets", "1", "--max-drift", "facial_hair=0.5",
                    "--no-progress"])
    assert code == 0
    table = pd.read_csv(out / "transects.csv")
    assert len(table) == 8 and table["transect"].tolist() == [0] * 4 + [1] * 4
    assert {"idx_hair_length", "value_gender_presentation", "decision_hair_length", "gender_presentation", "annot_hair_length",
            "fakeness", "target_label", "target_score", "error", "pruned"} <= set(table.columns)
    assert set(table["error"]) <= {0.0, 1.0} and np.allclose(table["decision_hair_length"], table["value_hair_length"])
    planes = pd.read_csv(out / "hyperplanes.csv")
    assert planes["attribute"].tolist() == ["hair_length", "gender_presentation"] and (planes["metric"] == "r2").all()
    drift = pd.read_csv(out / "drift.csv")
    assert set(drift["attribute"]) >= {"facial_hair", "age", "skin_tone"} and "hair_length" not in set(drift["attribute"])
    assert {"images", "transects"} == set(pd.read_csv(out / "pruning.csv")["unit"])
    assert np.load(out / "latents.npy").shape == (8, 32)
    assert (out / "transect_000.png").is_file() and not (out / "transect_001.png").exists()
    assert set(pd.read_csv(out / "simulated_annotations.csv").columns) == {"image", "attribute", "annotator", "value"}
    assert not (out / "annotations.csv").exists()  # the name of people's ratings (searcher annotate)
    assert "error rate" in capsys.readouterr().out


def test_peoples_ratings_replace_the_simulated_ones_when_the_run_is_made_again(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["--attributes", "hair_length,gender_presentation", "--size", "2x2", "-n", "2", "--target", "haar-face", "--out", str(out),
            "--fit-samples", "120", "--resolution", "64", "--sheets", "0", "--no-progress"]
    assert run_cli(argv) == 0
    first = pd.read_csv(out / "transects.csv")
    people = "image,attribute,annotator,value\n" + "".join(
        f"{image},{attribute},{who},{value}\n" for who in ("ann", "bob")
        for image, attribute, value in [(0, "fakeness", 5), (1, "hair_length", 3), (2, "hair_length", 5)])
    (out / "annotations.csv").write_text(people)
    capsys.readouterr()

    assert run_cli(argv) == 0
    assert "human ratings (annotations.csv) from 2 annotator(s) replace the simulated ones of fakeness, hair_length" in capsys.readouterr().out
    table = pd.read_csv(out / "transects.csv")
    assert table.loc[0, "annot_fakeness"] == 1.0 and table.loc[1, "annot_hair_length"] == 0.5 and table.loc[2, "annot_hair_length"] == 1.0
    assert table.loc[3:, "annot_fakeness"].isna().all()  # nobody marked them: kept, whatever the simulated annotators said
    assert "image" in table.loc[0, "pruned"] and "image" in table.loc[1, "pruned"]  # likely fake; hair in [0.3, 0.5]
    assert table["error"].equals(first["error"]) and (out / "annotations.csv").read_text() == people

    result = analyze(out, n_boot=0)
    kept = table[table["pruned"].fillna("").eq("") & table["error"].notna()]
    assert result["subgroups"].query("attribute == 'hair_length'")["n"].sum() == len(kept)
    assert "human ratings (annotations.csv) from 2 annotator(s) (ann, bob): 6 ratings of 3 images" in result.summary()

    config = (out / "transect.json").read_text()
    with pytest.raises(ParameterError, match="holds people's ratings .* of the images of an earlier run"):
        run_cli([*argv, "--seed", "1"])
    assert (out / "transect.json").read_text() == config and pd.read_csv(out / "transects.csv").equals(table)


@pytest.mark.parametrize(("argv", "message"), [
    (["--attributes", "hair_length,wings"], r"Unknown attribute\(s\) \['wings'\] in --attributes. Valid attributes: skin_tone, age"),
    (["--size", "2x"], r"--size must be 3 positive integers joined by 'x'"),
    (["--size", "2x0x2"], r"--size must be 3 positive integers"),
    (["--steps", "age=1"], r"Valid attributes: skin_tone, hair_length, gender_presentation"),
    (["-n", "0"], r"-n must be an integer >= 1"),
])
def test_cli_bad_input_is_a_clear_parameter_error(tmp_path, argv, message):
    with pytest.raises(ParameterError, match=message):
        run_cli(["--target", "haar-face", "--out", str(tmp_path / "x"), *argv])
    assert not (tmp_path / "x").exists()

"""searcher/studies/verification.py, searcher/analysis/verification.py and `searcher verify`: pseudo-identities, pairs, per-group FNMR/FMR, effects."""

import numpy as np
import pandas as pd
import pytest

from searcher.analysis.verification import build_pairs, impostor_capacity
from searcher.cli import main
from searcher.errors import ParameterError
from searcher.studies.verification import render_pairs

GROUPS = ("light masculine", "light feminine", "dark masculine", "dark feminine")  # skin x presentation, 2 x 2 by design


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One small CLI run: 40 identities x 3 images (about 20 s); too few impostor pairs for an
    FMR of 1e-3, so the threshold falls back to 1e-2."""
    out = tmp_path_factory.mktemp("verify")
    code = main(["verify", "--generator", "faces", "-n", "40", "--images", "3", "--boot", "100", "--seed", "0",
                 "--out", str(out), "--no-progress"])
    return code, out


def test_cli_writes_every_table(run, capsys):
    code, out = run
    assert code == 0
    for name in ("images.csv", "pairs.csv", "rates.csv", "curves.csv", "roc.png", "effects.csv", "identities.png"):
        assert (out / name).is_file(), name
    rates = pd.read_csv(out / "rates.csv")
    assert list(rates.columns) == ["group", "threshold", "images", "no_face", "n_genuine", "false_non_matches", "fnmr",
                                   "fnmr_low", "fnmr_high", "n_impostor", "false_matches", "fmr", "fmr_low", "fmr_high"]
    assert rates["group"].tolist() == [*sorted(GROUPS), "all"] and rates["threshold"].nunique() == 1
    assert (rates["images"] == [30, 30, 30, 30, 120]).all()
    assert ((rates["fnmr_low"] <= rates["fnmr"]) & (rates["fnmr"] <= rates["fnmr_high"])).all()
    all_ = rates.set_index("group").loc["all"]
    assert all_["fmr"] <= 0.01 and all_["n_impostor"] >= 1000  # the fallback FMR, met on the pooled impostors
    curves = pd.read_csv(out / "curves.csv")
    assert {"group", "threshold", "fnmr", "fmr"} <= set(curves.columns)
    assert set(pd.read_csv(out / "effects.csv")["attribute"]) == {
        "d_yaw", "d_roll", "d_age", "d_smile", "d_light_intensity", "d_light_direction"}


def test_genuine_pairs_are_closer_than_impostor_pairs(run):
    _, out = run
    pairs = pd.read_csv(out / "pairs.csv")
    images = pd.read_csv(out / "images.csv")
    genuine, impostor = pairs[pairs["same"] == 1], pairs[pairs["same"] == 0]
    assert genuine["distance"].mean() < impostor["distance"].mean() - 0.1
    assert (genuine["identity_a"] == genuine["identity_b"]).all() and (impostor["identity_a"] != impostor["identity_b"]).all()
    assert (pairs["group"] == images.set_index("image").loc[pairs["b"], "group"].to_numpy()).all()  # impostors within a group
    lost = set(images.loc[~images["found"], "image"])
    assert not lost & (set(pairs["a"]) | set(pairs["b"]))  # no face: in no pair, never a non-match


def test_images_without_a_face_are_left_out_of_every_pair():
    images = pd.DataFrame({"image": range(8), "identity": [1, 1, 2, 2, 3, 3, 4, 4], "group": ["g"] * 8,
                           "found": [True, True, True, False, True, True, True, True], "yaw": np.arange(8.0)})
    emb = np.random.default_rng(0).standard_normal((8, 4))
    emb[3] = np.nan
    pairs = build_pairs(images, emb, ["yaw"], 100, np.random.default_rng(0), None)
    assert 3 not in set(pairs["a"]) | set(pairs["b"]) and pairs["distance"].notna().all()
    assert pairs["same"].sum() == 3 and len(pairs) == 21  # all C(7, 2) pairs of the 7 found images
    assert np.allclose(pairs["d_yaw"], np.abs(pairs["a"] - pairs["b"]))
    assert impostor_capacity(40, 3) == 4 * (435 - 10 * 3)  # per group: C(30, 2) image pairs less 10 identities' C(3, 2)


def test_bad_arguments_exit_2_with_a_message(capsys, tmp_path):
    assert main(["verify", "-n", "3", "--out", str(tmp_path / "x")]) == 2
    assert "-n must be an integer in [8, 100000]. Got 3 instead." in capsys.readouterr().err
    assert main(["verify", "--vary", "yaw,pitch", "--out", str(tmp_path / "x")]) == 2
    assert "Unknown attribute(s) ['pitch'] to vary" in capsys.readouterr().err
    assert main(["verify", "-n", "8", "--images", "2", "--out", str(tmp_path / "x")]) == 2
    assert "give at most 16 impostor pairs; an FMR of 0.01 needs 1000" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
    with pytest.raises(ParameterError, match="images_per_identity"):
        render_pairs(images_per_identity=1)


def test_the_help_states_the_real_floor_of_n():
    """`verify --help` names the smallest -n that gives the 1,000 impostor pairs of the FMR 1e-2 fallback."""
    import re

    from searcher.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command").choices["verify"]
    text = " ".join(sub.format_help().split())
    for n, k in re.findall(r"(\d+)(?: or more)? with --images (\d)", text):
        n, k = int(n), int(k)
        assert impostor_capacity(n, k) >= 1000 > impostor_capacity(n - 1, k), (n, k)

"""benchmarks/gpu.py, the one command a lent GPU machine runs, on the CPU at a tiny size: every
measurement runs through the project's own plug-ins (no dlib, no Ray) and lands in its JSON."""

import json
import sys

import numpy as np
import pytest
from project_scripts import load_script


@pytest.fixture(scope="module")
def gpu():
    return load_script("benchmarks/gpu.py")


def test_runs_every_measurement_on_the_cpu_and_writes_them(gpu, tmp_path, monkeypatch):
    out = tmp_path / "gpu.json"
    monkeypatch.setattr(sys, "argv", ["gpu.py", "--device", "cpu", "--images", "8", "--repeats", "1", "--budget", "24", "--out", str(out)])
    gpu.main()
    rows = json.loads(out.read_text())["rows"]
    renders = {(r["generator"], r["resolution"]) for r in rows if r["what"] == "render"}
    assert renders == {("faces", 64), ("faces", 128), ("faces-cvae", 64), ("faces-cvae", 128)}
    assert all(r["images_per_s"] > 0 for r in rows if "images_per_s" in r)
    campaigns = [r for r in rows if r["what"] == "campaign"]
    assert [r["strategy"] for r in campaigns] == ["random", "bo-modes"] and campaigns[1]["overlap"] is True
    assert all(r["budget"] == 24 and 0 <= r["failures"] <= 24 for r in campaigns)


def test_agreement_of_the_cpu_with_itself_is_exact(gpu):
    rows = gpu.agreement("cpu", 6)
    assert rows[0]["max_pixel_difference"] == 0 and rows[0]["pixels_differing"] == 0.0
    assert [r["target"] for r in rows[1:]] == list(gpu.CNNS) and all(np.isclose(r["same_label"], 1.0) for r in rows[1:])


def test_the_scripted_classifier_predicts_what_gender_cnn_does(gpu, tmp_path):
    import generators
    import targets

    images = generators.load("faces").generate(generators.load("faces").space.sample(16, seed=3)).images
    scripted = gpu.torch_target(gpu.scripted_classifier(tmp_path), "cpu").predict(images)
    shipped = targets.load("gender-cnn").predict(images)
    assert scripted.label == shipped.label and np.allclose(scripted.score, shipped.score, atol=1e-6)


def test_an_unknown_campaign_is_refused_with_the_valid_ones(gpu, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["gpu.py", "--device", "cpu", "--strategies", "cmaes", "--out", str(tmp_path / "g.json")])
    with pytest.raises(SystemExit):
        gpu.main()
    assert "no campaign 'cmaes'; the campaigns: random, bo-modes" in capsys.readouterr().err
    assert not (tmp_path / "g.json").exists()


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="this machine has a GPU")
def test_cuda_on_a_machine_without_one_is_refused_naming_the_devices(gpu, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["gpu.py", "--out", str(tmp_path / "g.json")])
    with pytest.raises(SystemExit):
        gpu.main()
    assert "--device 'cuda' is not available here; devices: cpu" in capsys.readouterr().err

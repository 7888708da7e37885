"""The `device` setting: its forms, how it resolves with and without GPUs, how an objective places
its plug-ins, and the campaign setting and `searcher hunt --device` flag over them. GPUs are
counted through `torch.cuda.device_count`, patched here so the answers hold on any machine."""

import warnings
from pathlib import Path

import pytest
import torch

from searcher.campaign import Campaign, CampaignConfig, load_campaign
from searcher.cli import main
from searcher.devices import available_devices, check_device, note_cpu_only, resolve_device
from searcher.errors import ParameterError
from searcher.objective import ObjectiveSpec

PLANTED = ["--generator", "planted", "--target", "planted", "--strategy", "random", "--budget", "2", "--batch", "1", "--no-progress"]


@pytest.fixture
def gpus(monkeypatch):
    """`gpus(n)`: torch sees n GPUs from now on."""
    return lambda n: monkeypatch.setattr(torch.cuda, "device_count", lambda: n)


@pytest.mark.parametrize("value", ["auto", "cpu", "cuda", "cuda:0", "cuda:12"])
def test_the_forms_are_taken(value):
    assert check_device(value) == value


@pytest.mark.parametrize("value", ["", "gpu", "CUDA", "cuda:", "cuda:-1", "cuda:x", " cpu", "mps", 0, None, torch.device("cpu")])
def test_another_form_is_refused_naming_the_valid_ones(value):
    with pytest.raises(ParameterError, match=r"'device' option must be one of auto, cpu, cuda, cuda:N \(N: a GPU's index\)\. Got "):
        check_device(value)


def test_without_a_gpu_auto_is_the_cpu_and_cuda_is_refused_naming_the_devices(gpus):
    gpus(0)
    assert available_devices() == ["cpu"]
    assert resolve_device("auto") == resolve_device("cpu") == "cpu"
    for value in ("cuda", "cuda:1"):
        with pytest.raises(ParameterError, match=rf"^device '{value}' is not available here; devices: cpu\. Use device='auto'"):
            resolve_device(value)


def test_with_gpus_auto_is_the_gpu_and_an_index_must_exist(gpus):
    gpus(2)
    assert resolve_device("auto") == "cuda"
    assert resolve_device("cuda:1") == "cuda:1"
    assert resolve_device("cpu") == "cpu"
    with pytest.raises(ParameterError, match=r"device 'cuda:2' is not available here; devices: cpu, cuda:0, cuda:1\."):
        resolve_device("cuda:2")


def test_a_cpu_only_plugin_says_so_when_asked_for_a_gpu_by_name():
    with pytest.warns(UserWarning, match=r"^The target 'dlib-cnn' runs on the CPU only; device='cuda:0' places the torch"):
        note_cpu_only("The target 'dlib-cnn'", "cuda:0")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        note_cpu_only("The target 'dlib-cnn'", "auto")  # auto asks for no GPU
        note_cpu_only("The target 'dlib-cnn'", "cpu")


# ---------------------------------------------------------------- an objective places its plug-ins


def test_an_objective_gives_its_device_to_the_plugins_that_take_one(gpus):
    gpus(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        objective = ObjectiveSpec("faces", "planted", {"resolution": 64}, device="auto").build()
    assert objective.generator.device == "cpu"
    with pytest.raises(ParameterError, match="device 'cuda' is not available here; devices: cpu"):
        ObjectiveSpec("faces", "gender-cnn", {"resolution": 64}, device="cuda").build()


def test_a_plugins_own_device_option_wins_over_the_objectives(gpus):
    gpus(0)
    spec = ObjectiveSpec("faces", "planted", {"resolution": 64, "device": "gpu"}, device="cpu")
    with pytest.raises(ParameterError, match="Got 'gpu' instead"):  # the generator's own option reached it
        spec.load_generator()


def test_an_objective_on_a_named_gpu_warns_for_plugins_that_take_none_and_refuses_a_gpu_that_is_not_here(gpus):
    gpus(1)
    with pytest.warns(UserWarning) as caught:
        ObjectiveSpec("planted", "planted", device="cuda").build()
    assert [str(w.message).split(" runs")[0] for w in caught] == ["The generator 'planted'", "The target 'planted'"]
    gpus(0)
    with pytest.raises(ParameterError, match="device 'cuda:0' is not available here; devices: cpu"):
        ObjectiveSpec("planted", "planted", device="cuda:0").build()  # whatever the plug-ins are
    with pytest.raises(ParameterError, match="Got 'tpu' instead"):
        ObjectiveSpec("planted", "planted", device="tpu")


# ---------------------------------------------------------------- the campaign setting and the hunt flag


def _trials(out: Path) -> list:
    """What a campaign found, its images by their names (hashes of their pixels)."""
    return load_campaign(out).trials[["params", "loss", "label", "score", "image"]].to_dict("records")


def test_a_campaign_on_the_cpu_is_bit_identical_to_one_without_the_setting(tmp_path, gpus):
    gpus(0)
    settings = {"generator": "faces", "target": "gender-cnn", "generator_options": {"resolution": 64}, "strategy": "random",
                "budget": 4, "batch": 4}
    Campaign(**settings, out=tmp_path / "default").run(progress=False)
    Campaign(**settings, device="cpu", out=tmp_path / "cpu").run(progress=False)
    assert _trials(tmp_path / "cpu") == _trials(tmp_path / "default")


def test_device_and_gpus_per_worker_round_trip_through_the_stored_configuration(tmp_path):
    campaign = Campaign(device="cuda:1", gpus_per_worker=0.25, workers=4, out=tmp_path)
    assert Campaign.from_stored(campaign.config(), tmp_path) == campaign
    old = Campaign.from_stored({k: v for k, v in campaign.config().items() if k not in ("device", "gpus_per_worker")}, tmp_path)
    assert (old.device, old.gpus_per_worker) == ("auto", 0.0)  # a campaign stored before they existed
    assert campaign.spec().device == "cuda:1"


@pytest.mark.parametrize(("settings", "message"), [
    ({"device": "gpu"}, r"'device' option of Campaign must be one of auto, cpu, cuda, cuda:N"),
    ({"gpus_per_worker": 0.5}, r"gpus_per_worker is the GPU share of each Ray worker, and this campaign runs on the local executor"),
    ({"gpus_per_worker": 0.5, "workers": 2, "device": "cpu"}, r"gpus_per_worker=0.5 reserves GPUs that device 'cpu' leaves unused"),
    ({"gpus_per_worker": 1.5, "workers": 2}, r"'gpus_per_worker' option of Campaign must be a number in \[0, 1\]. Got 1.5"),
    ({"gpus_per_worker": 1e-6, "executor": "ray"}, r"0 or a share of at least 0.0001"),
])
def test_bad_gpu_settings_are_refused_in_one_line(settings, message):
    with pytest.raises(ParameterError, match=message):
        Campaign(**settings)


def test_a_gpu_campaign_configuration_reads_on_a_machine_without_one(gpus):
    gpus(0)
    assert Campaign(device="cuda:3", gpus_per_worker=1, workers=2).device == "cuda:3"  # asked where its plug-ins are built


def test_hunt_on_a_gpu_this_machine_lacks_is_one_line_and_writes_nothing(tmp_path, gpus, capsys):
    gpus(0)
    out = tmp_path / "hunt"
    assert main(["hunt", *PLANTED, "--device", "cuda:1", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == "searcher: error: device 'cuda:1' is not available here; devices: cpu. Use device='auto' (the GPU where there is " \
                  "one, else the CPU) or 'cpu'.\n"
    assert not out.exists()
    assert main(["hunt", *PLANTED, "--device", "gpu", "--out", str(out)]) == 2
    assert "must be one of auto, cpu, cuda, cuda:N" in capsys.readouterr().err
    assert main(["hunt", *PLANTED, "--gpus-per-worker", "1", "--out", str(out)]) == 2
    assert "runs on the local executor" in capsys.readouterr().err


def test_hunt_takes_the_device_from_a_toml_config_and_a_resume_may_name_it(tmp_path, gpus, capsys):
    gpus(0)
    config = tmp_path / "c.toml"
    config.write_text('device = "cpu"\n')
    out = tmp_path / "hunt"
    assert main(["hunt", *PLANTED, "--config", str(config), "--out", str(out)]) == 0
    assert CampaignConfig.from_dir(out).device == "cpu"
    assert main(["hunt", "--resume", str(out), "--device", "cpu", "--gpus-per-worker", "0", "--no-progress"]) == 0
    assert main(["hunt", "--resume", str(out), "--device", "cuda:7", "--no-progress"]) == 2
    assert "device 'cuda:7' is not available here" in capsys.readouterr().err

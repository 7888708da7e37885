"""Every registered generator, target and strategy, and the shipped fakes, pass the same
conformance suites (`searcher.testing`)."""

import warnings

import numpy as np
import pytest
import torch

import generators
import targets
from searcher.errors import ParameterError, PluginError
from searcher.strategies import STRATEGIES
from searcher.testing import GENERATOR_CHECKS, STRATEGY_CHECKS, TARGET_CHECKS, CallableTarget, FakeGenerator

SMALL = {"faces": {"resolution": 64}, "faces-latent": {"resolution": 64}, "faces-cvae": {"resolution": 64}}  # keep the suite fast
# These need a server or a model file; tests/targets/test_http_*.py, test_local_targets.py and
# tests/generators/test_checkpoint.py run the same checks on them.
NEEDS_OPTIONS = {"http", "torch", "onnx", "checkpoint"}


@pytest.fixture(scope="module", params=[*(name for name in generators.available() if name not in NEEDS_OPTIONS), "fake"])
def generator(request):
    return FakeGenerator() if request.param == "fake" else generators.load(request.param, **SMALL.get(request.param, {}))


@pytest.mark.parametrize("check", GENERATOR_CHECKS, ids=lambda c: c.__name__)
def test_generator_conformance(generator, check):
    check(generator)


@pytest.fixture(scope="module", params=[*(name for name in targets.available() if name not in NEEDS_OPTIONS), "callable"])
def target(request):
    if request.param == "callable":
        return CallableTarget(lambda images: [bool(im.std() > 10) for im in images])  # "a face" where there is texture
    return targets.load(request.param)


@pytest.mark.parametrize("check", TARGET_CHECKS, ids=lambda c: c.__name__)
def test_target_conformance(target, check):
    check(target)


@pytest.fixture(scope="module", params=STRATEGIES.available())
def strategy(request):
    return lambda space, seed: STRATEGIES.load(request.param, space, seed=seed)


@pytest.mark.parametrize("check", STRATEGY_CHECKS, ids=lambda c: c.__name__)
def test_strategy_conformance(strategy, check):
    check(strategy)


def test_unknown_generator_names_the_valid_ones():
    with pytest.raises(PluginError, match="faces-latent"):
        generators.load("no-such-generator")


@pytest.mark.parametrize("resolution", [63, 257, 128.0, "128"])
def test_bad_resolution_raises(resolution):
    with pytest.raises(ValueError, match="resolution"):
        generators.load("faces", resolution=resolution)


# ---------------------------------------------------------------- devices: every torch plug-in takes one

TORCH_PLUGINS = [("generator", "faces"), ("generator", "faces-latent"), ("generator", "faces-cvae"), ("generator", "checkpoint"),
                 ("target", "torch"), ("target", "gender-cnn"), ("target", "smile-cnn"), ("target", "glasses-cnn")]
REGISTRIES = {"generator": generators, "target": targets}


@pytest.fixture(scope="module")
def model_options(tmp_path_factory):
    """Options of the plug-ins that need a model file: a tiny exported generator and a tiny TorchScript classifier."""
    from tiny_checkpoint import SIDE, D, TinyGAN, export_pt2, spec_text

    d = tmp_path_factory.mktemp("device-models")
    export_pt2(TinyGAN().eval(), (torch.zeros(2, D), torch.zeros(2, 5)), d / "gan.pt2")
    (d / "gan.toml").write_text(spec_text(file="gan.pt2"))
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 2, 3), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())
    with warnings.catch_warnings():  # TorchScript is deprecated; users still have such files
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.jit.save(torch.jit.script(net), str(d / "net.ts"))
    return {"checkpoint": {"spec": str(d / "gan.toml"), "resolution": SIDE},
            "torch": {"path": str(d / "net.ts"), "labels": ("a", "b"), "input_size": (32, 32)}}


def _output(kind: str, plugin) -> np.ndarray:
    if kind == "generator":
        return plugin.generate(plugin.space.sample(2, seed=1), seed=1).images
    return np.asarray(plugin.predict(np.random.default_rng(0).integers(0, 256, (2, 64, 64, 3), dtype=np.uint8)).score)


def test_the_torch_plugins_are_those_that_take_a_device():
    taking = [(kind, name) for kind, registry in REGISTRIES.items() for name in registry.available() if "device" in registry.options(name)]
    assert sorted(taking) == sorted(TORCH_PLUGINS)


# faces-cvae is the checkpoint plug-in on a shipped spec, whose three exported files take seconds each
# to load: its device path is the checkpoint case's, and the test below checks that it takes the setting
@pytest.mark.parametrize(("kind", "name"), [p for p in TORCH_PLUGINS if p[1] != "faces-cvae"], ids=lambda v: v)
def test_a_torch_plugin_on_the_cpu_gives_its_default_output_bit_for_bit(kind, name, model_options, monkeypatch):
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)  # "auto" is the CPU, on any machine
    options = {**SMALL.get(name, {}), **model_options.get(name, {})}
    default = _output(kind, REGISTRIES[kind].load(name, **options))
    for device in ("cpu", "auto"):
        plugin = REGISTRIES[kind].load(name, **options, device=device)
        assert plugin.device == "cpu"
        assert np.array_equal(_output(kind, plugin), default), f"device={device!r} changed the output"


@pytest.mark.parametrize(("kind", "name"), TORCH_PLUGINS, ids=lambda v: v)
def test_a_torch_plugin_refuses_a_device_it_cannot_have(kind, name, model_options, monkeypatch):
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    options = {**SMALL.get(name, {}), **model_options.get(name, {})}
    with pytest.raises(ParameterError, match=r"^device 'cuda:1' is not available here; devices: cpu\. "):
        REGISTRIES[kind].load(name, **options, device="cuda:1")
    with pytest.raises(ParameterError, match=r"'device' option must be one of auto, cpu, cuda, cuda:N.*Got 'gpu' instead"):
        REGISTRIES[kind].load(name, **options, device="gpu")

"""`checkpoint`: a user's generator network, exported three ways, loads from its spec, renders what
the network itself computes, passes the conformance suite, runs a campaign, and a wrong spec is a
clear error before any evaluation."""

import importlib.util
import pickle
import warnings

import numpy as np
import pytest
import torch
from tiny_checkpoint import CONDITIONS, SIDE, D, TinyEncoder, TinyGAN, export_pt2, spec_text

import generators
from searcher.errors import ParameterError, PluginError
from searcher.testing import GENERATOR_CHECKS


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("ckpt")
    gan, enc = TinyGAN().eval(), TinyEncoder().eval()
    z, c, x = torch.zeros(2, D), torch.zeros(2, 5), torch.zeros(2, 3, SIDE, SIDE)
    export_pt2(gan, (z, c), d / "gan.pt2")
    export_pt2(enc, (x,), d / "enc.pt2")
    with warnings.catch_warnings():  # TorchScript and the legacy ONNX exporter are deprecated; users still have such files
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.jit.save(torch.jit.trace(gan, (z, c)), str(d / "gan.pt"))
        if importlib.util.find_spec("onnx") and importlib.util.find_spec("onnxruntime"):
            torch.onnx.export(gan, (z, c), str(d / "gan.onnx"), dynamo=False, input_names=["z", "c"],
                              dynamic_axes={"z": {0: "n"}, "c": {0: "n"}})
    torch.save(gan.state_dict(), d / "gan.pth")
    return d


def write_spec(d, name: str, **kw) -> str:
    path = d / name
    path.write_text(spec_text(**kw))
    return str(path)


FORMATS = ["gan.pt2", "gan.pt", "gan.onnx"]


@pytest.fixture(scope="module", params=FORMATS)
def gen(request, files):
    if not (files / request.param).exists():
        pytest.skip("onnx and onnxruntime are not installed (pip install -e '.[test]')")
    return generators.load("checkpoint", spec=write_spec(files, f"{request.param}.toml", file=request.param))


@pytest.mark.parametrize("check", GENERATOR_CHECKS, ids=lambda c: c.__name__)
def test_every_format_passes_the_conformance_suite(gen, check):
    check(gen)


def test_renders_what_the_network_computes(gen):
    params = [{"gender": "feminine", "mood": "cross", "z0": 1.5, "z3": -2.0}, {"mood": "glad"}]
    batch = gen.generate(params)
    c = torch.tensor([[0, 1, 0, 0, 1], [1, 0, 0, 1, 0]], dtype=torch.float32)
    z = torch.tensor([[1.5, 0, 0, -2.0], [0, 0, 0, 0]])
    with torch.no_grad():
        expected = TinyGAN().eval()(z, c).permute(0, 2, 3, 1).numpy()
    expected = np.clip(np.rint((expected + 1) * 127.5), 0, 255)
    assert np.abs(batch.images.astype(int) - expected).max() <= 1
    assert list(batch.truth["gender"]) == ["feminine", "masculine"] and list(batch.truth["mood"]) == ["cross", "glad"]
    assert batch.truth["latent_norm"].iloc[0] == pytest.approx(np.hypot(1.5, 2.0) / 2)


def test_space_is_conditions_then_latent(files):
    gen = generators.load("checkpoint", spec=write_spec(files, "s.toml", file="gan.pt2"))
    assert [p.name for p in gen.space.params] == ["gender", "mood"] and gen.space.latent.dim == D
    assert gen.space.dim == 2 + 3 + D  # the one-hot blocks, then z: a mixed space


def test_encoder_gives_codes_and_conditions(files):
    gen = generators.load("checkpoint", spec=write_spec(files, "e.toml", file="gan.pt2", encoder="enc.pt2"))
    images = gen.generate(gen.space.sample(3, seed=0)).images
    z = gen.encode(images)
    x = torch.from_numpy(images).permute(0, 3, 1, 2).float() / 255 * 2 - 1
    with torch.no_grad():
        ref_z, ref_logits = TinyEncoder().eval()(x)
    np.testing.assert_allclose(z, ref_z.numpy(), atol=1e-5)
    rows = gen.encode_params(images)
    assert rows[0]["gender"] == CONDITIONS["gender"][int(ref_logits[0, :2].argmax())]
    assert rows[1]["mood"] == CONDITIONS["mood"][int(ref_logits[1, 2:].argmax())]
    assert all(abs(r[f"z{i}"]) <= 3.0 for r in rows for i in range(D))
    assert gen.encode(np.repeat(np.repeat(images, 2, axis=1), 2, axis=2)).shape == (3, D)  # any size, resized
    with pytest.raises(ParameterError, match="no encoder"):
        generators.load("checkpoint", spec=write_spec(files, "n.toml", file="gan.pt2")).encode(images)


def test_from_latent_takes_conditions(files):
    gen = generators.load("checkpoint", spec=write_spec(files, "f.toml", file="gan.pt2"))
    a = gen.from_latent(np.zeros((2, D)), conditions={"gender": "feminine"})
    b = gen.generate([{"gender": "feminine"}] * 2)
    assert np.array_equal(a.images, b.images)
    with pytest.raises(ParameterError, match=r"Unknown condition.*'hue'.*gender, mood"):
        gen.from_latent(np.zeros((1, D)), conditions={"hue": "dark"})
    with pytest.raises(ParameterError, match="'gender'.*one of 'masculine', 'feminine'"):
        gen.generate({"gender": "purple"})


def test_pickled_copy_reloads_from_the_spec(files):
    gen = generators.load("checkpoint", spec=write_spec(files, "p.toml", file="gan.pt2"), batch_size=8)
    clone = pickle.loads(pickle.dumps(gen))
    assert clone.batch_size == 8 and np.array_equal(clone.generate({"z1": 1.0}).images, gen.generate({"z1": 1.0}).images)


@pytest.mark.parametrize(("kw", "match"), [
    ({"dim": 6}, r"failed on z \(2, 6\).*\[latent\] dim = 6"),
    ({"side": 32}, r"returns shape \(2, 3, 16, 16\).*resolution = 32.*\(2, 3, 32, 32\)"),
    ({"value_range": "[0.0, 255.0]"}, r"do not fit its spec's range = \[0, 255\].*Fix \[model\] range"),
    ({"value_range": "[0.0, 0.5]"}, r"returns values in \[-1, .*range = \[0, 0.5\]"),
    ({"file": "gan.pth"}, r"\.pth.*Pickled checkpoints are refused.*torch.export"),
    ({"file": "missing.pt2"}, r"\[model\] file 'missing.pt2': no file"),
    ({"extra": "colour = true"}, r"Unknown key 'colour' in \[model\]. Valid keys: file, layout, range, resolution"),
    ({"file": "gan.pt2", "encoder": "gan.pt2"}, r"encoder gan.pt2 failed"),
])
def test_a_wrong_spec_is_a_clear_error_at_load(files, kw, match):
    kw.setdefault("file", "gan.pt2")
    with pytest.raises(PluginError, match=match):
        generators.load("checkpoint", spec=write_spec(files, "bad.toml", **kw))


def test_an_unknown_condition_key_and_a_bad_prior_are_named(files):
    text = spec_text("gan.pt2").replace('prior = "normal"', 'prior = "cauchy"')
    (files / "prior.toml").write_text(text)
    with pytest.raises(PluginError, match="'prior' key of \\[latent\\] must be one of 'normal', 'uniform'. Got 'cauchy'"):
        generators.load("checkpoint", spec=str(files / "prior.toml"))
    (files / "cond.toml").write_text(spec_text("gan.pt2") + '\n[[conditions]]\nname = "gender"\ncategories = ["a", "b"]\n')
    with pytest.raises(PluginError, match="distinct"):
        generators.load("checkpoint", spec=str(files / "cond.toml"))
    with pytest.raises(PluginError, match="No generator spec"):
        generators.load("checkpoint", spec=str(files / "nope.toml"))


def test_uniform_prior_makes_bounded_coordinates(files):
    (files / "u.toml").write_text(spec_text("gan.pt2").replace('prior = "normal"', 'prior = "uniform"'))
    gen = generators.load("checkpoint", spec=str(files / "u.toml"))
    assert gen.space.latent is None and gen.space["z0"].low == -3.0
    assert all(abs(r["z2"]) <= 3 for r in gen.space.sample(50, seed=0))


def test_a_campaign_judges_a_classifier_by_the_condition(files, tmp_path):
    """The CLI path: a classify target judged against the condition it was asked for (`--truth-column gender`)."""
    from searcher.campaign import Campaign

    spec = write_spec(files, "campaign.toml", file="gan.pt2")
    result = Campaign(generator="checkpoint", generator_options={"spec": spec}, target="gender-cnn", truth_column="gender",
                      strategy="random", budget=12, out=str(tmp_path / "c")).run(progress=False)
    trials = result.trials
    assert len(trials) == 12 and trials["loss"].notna().all()
    wrong = trials["label"] != trials["param.gender"]  # a condition is its own truth
    assert (trials["loss"] == wrong.astype(float)).all()


def test_the_readmes_export_lines_make_a_generator_that_runs(tmp_path, monkeypatch):
    """The lines of docs/generators.md's "Learned generators" export a network; its spec loads it."""
    import re
    from pathlib import Path

    page = (Path(__file__).parents[2] / "docs" / "generators.md").read_text()
    section = page[page.index("## Learned generators"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    spec = re.search(r"```toml\n(.*?)```", section, re.S).group(1)

    class MyGAN(torch.nn.Module):  # what the page's user has: (z, c) -> N x 3 x 64 x 64 in [-1, 1]
        def __init__(self) -> None:
            super().__init__()
            self.fc = torch.nn.Linear(128 + 4, 3 * 8 * 8)

        def forward(self, z, c):
            return torch.nn.functional.interpolate(torch.tanh(self.fc(torch.cat([z, c], 1))).view(-1, 3, 8, 8), size=(64, 64))

    monkeypatch.chdir(tmp_path)
    exec(code, {"MyGAN": MyGAN})
    encoder = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 64 * 64, 128)).eval()
    export_pt2(encoder, (torch.zeros(2, 3, 64, 64),), tmp_path / "my_encoder.pt2")
    (tmp_path / "my_gan.toml").write_text(spec)
    gen = generators.load("checkpoint", spec="my_gan.toml")
    for check in GENERATOR_CHECKS:
        check(gen)
    assert gen.encode(gen.generate({"age_group": "old"}).images).shape == (1, 128)

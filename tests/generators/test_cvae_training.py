"""generators.learned.train and model: the conditional prior's algebra, and a toy training run whose
exported files load through the checkpoint plug-in with the shipped spec."""

import itertools
import shutil

import numpy as np
import pandas as pd
import pytest
import torch

import generators
from generators.faces.procedural import CATEGORICAL_INDEX
from generators.learned.data import CARRIED, MIRRORED, attribute_targets, detail_weights, training_rows
from generators.learned.faces_cvae import SPEC
from generators.learned.model import ConditionalPrior, CouplingFlow, PriorDecoder, one_hot_blocks
from generators.learned.train import fit_flow, load_networks, load_prior, round_trip, train

SIZES = (3, 2)


def _spec_without_judge(out):
    """The shipped spec beside a toy model's files in `out`, less its judge (none trained here)."""
    text = SPEC.read_text()
    (out / "spec.toml").write_text(text[: text.index("[judge]")])


@pytest.fixture
def prior():
    g = torch.Generator().manual_seed(0)
    k, d = int(np.prod(SIZES)), 4
    means = torch.randn(k, d, generator=g) * 3
    chols = torch.tril(torch.randn(k, d, d, generator=g) * 0.3) + torch.eye(d) * 1.5
    return ConditionalPrior(SIZES, means, chols)


def test_cells_follow_the_product_order_of_the_blocks(prior):
    combos = list(itertools.product(*(range(s) for s in SIZES)))
    c = one_hot_blocks(torch.tensor(combos), SIZES)
    assert torch.equal(prior.cell(c), torch.eye(len(combos)))


def test_whiten_inverts_the_prior_in_every_cell(prior):
    g = torch.Generator().manual_seed(1)
    index = torch.stack([torch.randint(0, s, (50,), generator=g) for s in SIZES], dim=1)
    c = one_hot_blocks(index, SIZES)
    u = torch.randn(50, 4, generator=g)
    z = prior(u, c)
    assert torch.allclose(prior.whiten(z, c), u, atol=1e-4)
    cells = index[:, 0] * SIZES[1] + index[:, 1]
    assert torch.allclose(prior(torch.zeros(50, 4), c), prior.means[cells])  # u = 0 is the cell's mean


def test_whiten_inverts_a_prior_with_a_flow(prior):
    torch.manual_seed(2)
    prior.flow = CouplingFlow(4, int(np.prod(SIZES)), layers=4, hidden=16)
    for layer in prior.flow.layers:  # away from the identity it starts as
        torch.nn.init.normal_(layer.net[-1].weight, std=0.3)
    index = torch.stack([torch.randint(0, s, (50,)) for s in SIZES], dim=1)
    c = one_hot_blocks(index, SIZES)
    u = torch.randn(50, 4)
    z = prior(u, c)
    assert not torch.allclose(z, ConditionalPrior(SIZES, prior.means, prior.chols)(u, c), atol=1e-2)  # the flow bends it
    assert torch.allclose(prior.whiten(z, c), u, atol=1e-4)


def test_fit_flow_learns_the_curved_codes_a_gaussian_fills_in():
    """Codes on a parabola whose sign is the combination's (`v1 = +-(v0^2 - 1)`): the fitted flow
    beats the per-combination Gaussian's likelihood on held-out codes by nats, and its samples lie
    on the parabola, where the Gaussian's scatter across it."""
    g = torch.Generator().manual_seed(0)

    def codes(n):
        cell = torch.randint(0, 2, (n,), generator=g)
        v = torch.randn(n, 3, generator=g)
        v[:, 1] = (1 - 2 * cell) * (v[:, 0] ** 2 - 1) + 0.1 * v[:, 1]
        return v, torch.nn.functional.one_hot(cell, 2).float()

    flow = fit_flow(*codes(4000), steps=600, seed=0, batch=256, layers=4, hidden=32)
    held, w = codes(1000)
    with torch.no_grad():
        u, logdet = flow.inverse(held, w)
        nll = float((0.5 * u.pow(2).sum(1) - logdet).mean()) + 1.5 * np.log(2 * np.pi)
        gaussians = [torch.distributions.MultivariateNormal(held[w[:, k] == 1].mean(0), torch.cov(held[w[:, k] == 1].T)) for k in range(2)]
        gauss = -float(sum(gaussians[k].log_prob(held[w[:, k] == 1]).sum() for k in range(2))) / len(held)
        assert nll < gauss - 1.5
        one = torch.nn.functional.one_hot(torch.ones(2000, dtype=torch.int64), 2).float()
        flow_sample, gauss_sample = flow(torch.randn(2000, 3, generator=g), one), gaussians[1].sample((2000,))

    def off(sample):  # median distance from cell 1's parabola v1 = 1 - v0^2
        return float((sample[:, 1] + sample[:, 0] ** 2 - 1).abs().median())

    assert off(flow_sample) < 0.3 and off(gauss_sample) > 0.5


def test_detail_weights_lift_small_features_and_leave_flat_areas_at_one():
    x = np.full((2, 32, 32, 3), 128, np.uint8)
    x[0, 10:12, 20:22] = 20  # an "eye" of 2 x 2 dark pixels on a flat face
    w = detail_weights(x, gain=4.0, cap=5.0)
    assert w.shape == (2, 32, 32)
    assert np.all(w[1] == 1.0)  # no detail anywhere: the plain squared error
    assert w[0, 10, 20] == pytest.approx(21.0)  # 1 + gain * cap on the feature
    assert w[0, 0, 0] == 1.0 and w[0, 30, 5] == 1.0  # far from it
    assert np.all(detail_weights(x, gain=0.0) == 1.0)


def test_round_trip_is_the_resizing_a_judged_image_has_had():
    g = torch.Generator().manual_seed(0)
    x = torch.rand(3, 3, 64, 64, generator=g)
    y = round_trip(x)
    assert y.shape == x.shape and 0.0 <= float(y.min()) and float(y.max()) <= 1.0
    flat = torch.full((1, 3, 64, 64), 0.5)
    assert torch.allclose(round_trip(flat), torch.full_like(flat, 128 / 255), atol=1e-6)  # only 8-bit rounding
    assert 0.0 < float((y - x).abs().mean()) < 0.2  # a mild blur of noise, not a different image


@pytest.fixture
def torch_state():
    """train() sets torch's global thread count and deterministic mode; later tests get them back."""
    threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    yield
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(deterministic)


@pytest.fixture(scope="module")
def toy_model(tmp_path_factory):
    """A toy training run's files (one for the module: the tests that change them take a copy),
    the shipped spec beside them less its judge."""
    threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    out = tmp_path_factory.mktemp("toy") / "cvae"
    train("cvae", n=64, epochs=1, prior_n=64, flow_steps=20, out=out)
    _spec_without_judge(out)
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(deterministic)
    return out


def test_a_toy_training_run_exports_files_the_shipped_spec_loads(toy_model):
    out = toy_model
    gen = generators.load("checkpoint", spec=str(out / "spec.toml"), resolution=64)
    batch = gen.generate(gen.space.sample(5, seed=0))
    assert batch.images.shape == (5, 64, 64, 3) and batch.images.std() > 1  # something was drawn
    u = gen.encode(batch.images)
    assert u.shape == (5, 32) and np.isfinite(u).all()


@pytest.mark.slow
def test_the_prior_part_refits_the_prior_and_keeps_the_networks(tmp_path, torch_state):
    """`train("prior")` reads the decoder and encoder back out of the exported files
    (`load_networks`) and writes them again, unchanged, around a new prior."""
    out = tmp_path / "cvae"
    train("cvae", n=64, epochs=1, prior_n=64, flow_steps=0, out=out)
    before = [net.state_dict() for net in load_networks(out)]
    train("prior", prior_n=64, flow_steps=20, out=out)
    after = [net.state_dict() for net in load_networks(out)]
    for old, new in zip(before, after):
        assert old.keys() == new.keys() and all(torch.equal(old[k], new[k]) for k in old)
    assert "prior.flow" in " ".join(torch.export.load(out / "decoder.pt2").state_dict)  # the new prior has its flow


@pytest.mark.slow
def test_the_export_part_writes_the_same_model_again(tmp_path, torch_state, toy_model):
    """`train("export")` trains nothing: the networks and prior read back out of the files
    (`load_networks`, `load_prior`) are exported again and draw the same pixels and read the same
    codes; the prior read back maps codes as the exported decoder's own does."""
    out = shutil.copytree(toy_model, tmp_path / "cvae")

    def draw() -> tuple[np.ndarray, np.ndarray]:
        gen = generators.load("checkpoint", spec=str(out / "spec.toml"), resolution=64)
        images = gen.generate(gen.space.sample(6, seed=1)).images
        return images, gen.encode(images)

    before = draw()
    dec, _ = load_networks(out)
    prior = load_prior(out)
    assert prior.flow is not None
    u = torch.randn(6, 32, generator=torch.Generator().manual_seed(2))
    c = one_hot_blocks(torch.tensor([[0, 0], [1, 1], [2, 0], [0, 1], [1, 0], [2, 1]]), SIZES)
    with torch.no_grad():
        assert torch.allclose(PriorDecoder(dec, prior)(u, c), torch.export.load(out / "decoder.pt2").module()(u, c), atol=1e-6)
    train("export", out=out)
    after = draw()
    assert np.array_equal(before[0], after[0]) and np.allclose(before[1], after[1], atol=1e-5)


def test_attribute_targets_are_standardised_levels_and_mirror_signs():
    """The attribute head's targets: each `CARRIED` column and each level of `hair_color` and
    `eyewear`, standardised (a level no face has: zeros), and -1 where a mirror negates."""
    truth = pd.DataFrame(training_rows(300, 0)[0])
    truth.loc[:, "eyewear"] = np.where(np.arange(300) % 3 == 0, "glasses", "none")  # no sunglasses at all
    a, signs = attribute_targets(truth)
    levels = [(name, level) for name, cats in CATEGORICAL_INDEX.items() for level in cats]
    assert a.shape == (300, len(CARRIED) + len(levels)) and signs.shape == (a.shape[1],)
    smile = CARRIED.index("smile")
    assert np.corrcoef(a[:, smile], truth["smile"])[0, 1] == pytest.approx(1.0)
    sunglasses = len(CARRIED) + levels.index(("eyewear", "sunglasses"))
    assert np.all(a[:, sunglasses] == 0.0)
    present = np.delete(np.arange(a.shape[1]), sunglasses)
    assert np.allclose(a[:, present].mean(0), 0.0, atol=1e-5) and np.allclose(a[:, present].std(0), 1.0, atol=1e-4)
    assert [CARRIED[k] for k in np.flatnonzero(signs == -1.0)] == list(MIRRORED) and np.all(np.abs(signs) == 1.0)

"""`torch` and `onnx` targets: a tiny random model exported both ways answers as the model itself does."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from searcher.errors import PluginError
from searcher.testing import TARGET_CHECKS
from targets.local import OnnxTarget, TorchScriptTarget

pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit:DeprecationWarning")

LABELS = ("red", "green", "blue")
SIZE = (32, 32)
MEAN, STD = (0.4, 0.5, 0.6), (0.2, 0.25, 0.3)


class Tiny(nn.Module):
    """Logits from a 4 x 4 average-pooled image: cheap, and different images get different labels."""

    def __init__(self) -> None:
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(4)
        self.fc = nn.Linear(48, len(LABELS))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(self.pool(x), 1))


@pytest.fixture(scope="module")
def model() -> Tiny:
    torch.manual_seed(0)
    return Tiny().eval()


@pytest.fixture(scope="module")
def files(model, tmp_path_factory):
    """The model as TorchScript, as ONNX with a dynamic batch, and as ONNX fixed to batch 1."""
    d = tmp_path_factory.mktemp("models")
    torch.jit.save(torch.jit.script(model), str(d / "tiny.ts"))
    out = {"torch": d / "tiny.ts"}
    if _has("onnx") and _has("onnxruntime"):
        x = torch.zeros(1, 3, *SIZE)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, (x,), str(d / "tiny.onnx"), dynamo=False, input_names=["x"], dynamic_axes={"x": {0: "n"}})
            torch.onnx.export(model, (x,), str(d / "tiny1.onnx"), dynamo=False, input_names=["x"])
        out["onnx"], out["onnx-batch1"] = d / "tiny.onnx", d / "tiny1.onnx"
    return out


def _has(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def make(kind: str, files: dict, **options):
    if kind not in files:
        pytest.skip("onnx and onnxruntime are not installed (pip install onnx onnxruntime)")
    cls = TorchScriptTarget if kind == "torch" else OnnxTarget
    options = {"labels": LABELS, "input_size": SIZE, "mean": MEAN, "std": STD, **options}
    return cls(files[kind], **options)


def images(n: int, size: int, seed: int = 0) -> np.ndarray:
    """Noise around a random colour per image, so that the labels vary."""
    rng = np.random.default_rng(seed)
    colour = rng.integers(0, 256, (n, 1, 1, 3))
    return np.clip(colour + rng.integers(-40, 41, (n, size, size, 3)), 0, 255).astype(np.uint8)


def direct(model: Tiny, ims: np.ndarray, bgr: bool = False) -> tuple[list[str], np.ndarray]:
    """The model run by hand: resize, reorder, normalise, softmax."""
    x = torch.from_numpy(ims).permute(0, 3, 1, 2).float() / 255
    if x.shape[-2:] != SIZE:
        x = F.interpolate(x, size=SIZE, mode="bilinear", align_corners=False, antialias=True)
    if bgr:
        x = x[:, [2, 1, 0]]
    x = (x - torch.tensor(MEAN).view(1, 3, 1, 1)) / torch.tensor(STD).view(1, 3, 1, 1)
    with torch.no_grad():
        p = torch.softmax(model(x), dim=1)
    return [LABELS[i] for i in p.argmax(1)], p.max(1).values.numpy()


KINDS = ["torch", "onnx", "onnx-batch1"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("size", [32, 48])
def test_same_labels_and_scores_as_the_model(kind, size, model, files):
    ims = images(12, size)
    pred = make(kind, files, batch_size=5).predict(ims)
    labels, scores = direct(model, ims)
    assert len(set(labels)) > 1, "the probe images should not all get one label"
    assert pred.label == labels
    np.testing.assert_allclose(pred.score, scores, rtol=1e-5)


@pytest.mark.parametrize("kind", ["torch", "onnx"])
def test_bgr_reverses_the_channels_the_model_sees(kind, model, files):
    ims = images(12, 32, seed=1)
    assert make(kind, files, channel_order="BGR").predict(ims).label == direct(model, ims, bgr=True)[0]


@pytest.mark.parametrize("kind", ["torch", "onnx"])
@pytest.mark.parametrize("check", TARGET_CHECKS, ids=lambda c: c.__name__)
def test_conformance(kind, check, files):
    check(make(kind, files))


def test_empty_batch(files):
    assert len(make("torch", files).predict(np.zeros((0, 32, 32, 3), np.uint8))) == 0


@pytest.mark.parametrize("cls", [TorchScriptTarget, OnnxTarget])
def test_missing_file_names_the_path(cls, tmp_path):
    if cls is OnnxTarget and not _has("onnxruntime"):
        pytest.skip("onnxruntime is not installed")
    path = tmp_path / "nope.model"
    with pytest.raises(PluginError, match="nope.model"):
        cls(path, labels=LABELS)


def test_missing_onnxruntime_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(PluginError, match="pip install onnxruntime"):
        OnnxTarget(tmp_path / "any.onnx", labels=LABELS)


def test_a_pickled_checkpoint_is_not_torchscript(model, tmp_path):
    path = tmp_path / "state.pt"
    torch.save(model.state_dict(), path)
    with pytest.raises(PluginError, match="as TorchScript"):
        TorchScriptTarget(path, labels=LABELS, input_size=SIZE)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"channel_order": "RGBA"}, r"'channel_order'.*RGB, BGR.*'RGBA'"),
        ({"input_size": (0, 32)}, r"'input_size'.*\(0, 32\)"),
        ({"input_size": 32}, r"'input_size'.*\(height, width\)"),
        ({"mean": (0.5, 0.5)}, r"'mean'.*three.*\(0.5, 0.5\)"),
        ({"std": (1.0, 0.0, 1.0)}, r"'std'.*positive"),
        ({"labels": "red"}, r"'labels'.*'red'"),
        ({"labels": ("a", "a", "b")}, r"'labels'.*repeat"),
        ({"batch_size": 0}, r"'batch_size'.*positive.*0"),
        ({"labels": ("yes", "no")}, r"expected \(1, 2\)"),
    ],
)
@pytest.mark.parametrize("kind", ["torch", "onnx"])
def test_bad_options_are_clear_value_errors(kind, options, message, files):
    with pytest.raises(ValueError, match=message):
        make(kind, files, **options)


def test_wrong_input_size_fails_when_loading(tmp_path):
    strict = torch.jit.script(nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 3)))
    torch.jit.save(strict, str(tmp_path / "strict.ts"))
    with pytest.raises(ValueError, match=r"failed on a 1 x 3 x 32 x 32 input"):
        TorchScriptTarget(tmp_path / "strict.ts", labels=LABELS, input_size=(32, 32))

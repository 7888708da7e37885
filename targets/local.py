"""Your own classifiers as targets: a TorchScript file (`torch`) or an ONNX file (`onnx`).

Both take `N x H x W x 3` uint8 RGB images of any size and prepare them the way the model was
trained: resize to `input_size` (bilinear, antialiased when shrinking), reorder the channels to
`channel_order`, scale to 0..1 and normalise per channel with `mean` and `std`. The model must
return one logit per label (`N x len(labels)`); the prediction is the argmax label and its
softmax probability.

Example:
    >>> clf = TorchScriptTarget("gender.ts", labels=("masculine", "feminine"), input_size=(64, 64))
    >>> clf.predict(images).label                                      # doctest: +SKIP
    ['feminine', 'masculine']

TorchScript files are read with `torch.jit.load`, which runs no pickled Python code; a plain
`torch.save` checkpoint is not TorchScript and is refused (export it with `torch.jit.script` or
`torch.jit.trace` first). A TorchScript model runs on its `device` (the CPU by default; images are
prepared on the CPU and the batch moved there); ONNX models run on the CPU.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from searcher.devices import resolve_device
from searcher.errors import ParameterError, PluginError, TargetError
from targets.base import Predictions, check_images

__all__ = ["CHANNEL_ORDERS", "ImageClassifier", "OnnxTarget", "TorchScriptTarget"]

CHANNEL_ORDERS = ("RGB", "BGR")


class ImageClassifier:
    """A `classify` target around a model that maps a normalised `N x 3 x H x W` batch to logits.

    Subclasses load their model after calling this `__init__` (which only checks the options) and
    implement `_logits`; those that load a user's file call `_check_model()` once it is loaded.

    Args:
        labels: the label names, one per logit, in the model's output order (at least two).
        input_size: `(height, width)` the model takes.
        channel_order: "RGB" or "BGR", the channel order the model was trained on.
        mean, std: per-channel normalisation on the 0..1 scale, in `channel_order` order.
        batch_size: images per forward pass.
    """

    task = "classify"
    truth: tuple[str, float] | None = None  # subclasses trained on a rendered attribute declare it
    device = "cpu"  # the torch device `_logits` runs on; the torch subclasses take a `device` option

    def __init__(
        self,
        labels: Sequence[str],
        input_size: Sequence[int] = (224, 224),
        channel_order: str = "RGB",
        mean: Sequence[float] = (0.0, 0.0, 0.0),
        std: Sequence[float] = (1.0, 1.0, 1.0),
        batch_size: int = 32,
    ) -> None:
        self.labels = _check_labels(labels)
        self.input_size = _check_size(input_size)
        if channel_order not in CHANNEL_ORDERS:
            raise ParameterError(f"The 'channel_order' option must be one of {', '.join(CHANNEL_ORDERS)}. Got {channel_order!r} instead.")
        self.channel_order = channel_order
        self.mean = _check_triple("mean", mean, positive=False)
        self.std = _check_triple("std", std, positive=True)
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ParameterError(f"The 'batch_size' option must be a positive integer. Got {batch_size!r} instead.")
        self.batch_size = int(batch_size)

    def preprocess(self, images: np.ndarray) -> torch.Tensor:
        """uint8 `N x H x W x 3` RGB -> float32 `N x 3 x h x w`, resized, reordered and normalised."""
        x = torch.from_numpy(np.ascontiguousarray(images)).permute(0, 3, 1, 2).float().div_(255.0)
        if tuple(x.shape[-2:]) != self.input_size:
            x = F.interpolate(x, size=self.input_size, mode="bilinear", align_corners=False, antialias=True)
        if self.channel_order == "BGR":
            x = x.flip(1)
        mean = torch.tensor(self.mean, dtype=torch.float32).view(1, 3, 1, 1)
        std = torch.tensor(self.std, dtype=torch.float32).view(1, 3, 1, 1)
        return ((x - mean) / std).contiguous()

    def predict(self, images: np.ndarray) -> Predictions:
        """The argmax label of each image and its softmax probability."""
        images = check_images(images)
        if len(images) == 0:
            return Predictions(label=[])
        chunks = []
        for start in range(0, len(images), self.batch_size):
            x = self.preprocess(images[start : start + self.batch_size])
            try:
                chunks.append(np.asarray(self._logits(x), np.float64).reshape(len(x), -1))
            except Exception as exc:
                raise TargetError(f"{self!r} failed on a batch of shape {tuple(x.shape)}: {exc}") from exc
        logits = np.concatenate(chunks)
        probs = np.exp(logits - logits.max(axis=1, keepdims=True))
        probs /= probs.sum(axis=1, keepdims=True)
        best = probs.argmax(axis=1)
        return Predictions(label=[self.labels[i] for i in best], score=[float(p[i]) for p, i in zip(probs, best)])

    def _logits(self, x: torch.Tensor) -> np.ndarray:
        """`N x len(labels)` logits for a preprocessed batch."""
        raise NotImplementedError

    def _check_model(self, source: str) -> None:
        """Runs one blank image through the model: a wrong input size or label count fails here, clearly."""
        h, w = self.input_size
        try:
            out = np.asarray(self._logits(torch.zeros(1, 3, h, w)))
        except Exception as exc:
            raise PluginError(f"The model {source} failed on a 1 x 3 x {h} x {w} input (input_size={self.input_size}): {exc}") from exc
        if out.shape != (1, len(self.labels)):
            raise PluginError(
                f"The model {source} returns shape {out.shape} for one image; expected (1, {len(self.labels)}), "
                f"one logit per label of {self.labels}."
            )


class TorchScriptTarget(ImageClassifier):
    """A TorchScript classifier file (`torch`), loaded with `torch.jit.load`.

    Args:
        path: the `.pt` / `.ts` file written by `torch.jit.save`.
        labels, input_size, channel_order, mean, std, batch_size: see `ImageClassifier`.
        device: where the model runs: "cpu" (the default), "cuda", "cuda:N", or "auto" (the GPU
            where there is one).
    """

    def __init__(
        self,
        path: str | os.PathLike,
        labels: Sequence[str],
        input_size: Sequence[int] = (224, 224),
        channel_order: str = "RGB",
        mean: Sequence[float] = (0.0, 0.0, 0.0),
        std: Sequence[float] = (1.0, 1.0, 1.0),
        batch_size: int = 32,
        device: str = "cpu",
    ) -> None:
        super().__init__(labels, input_size, channel_order, mean, std, batch_size)
        self.path = _existing(path, "TorchScript")
        self.device = resolve_device(device)
        try:
            with warnings.catch_warnings():  # torch 2.13 deprecates TorchScript in favour of torch.export; the file is what it is
                warnings.simplefilter("ignore", DeprecationWarning)
                self._model = torch.jit.load(str(self.path), map_location=self.device).eval()
        except Exception as exc:
            raise PluginError(
                f"Could not load {self.path} as TorchScript ({exc}). Save the model with torch.jit.save(torch.jit.script(model), path)."
            ) from exc
        self._check_model(str(self.path))

    def __repr__(self) -> str:
        return f"TorchScriptTarget({str(self.path)!r}, labels={self.labels})"

    def _logits(self, x: torch.Tensor) -> np.ndarray:
        with torch.inference_mode():
            out = self._model(x.to(self.device))
        if not isinstance(out, torch.Tensor):
            raise TypeError(f"the model returned {type(out).__name__}, not a tensor of logits")
        return out.float().cpu().numpy()


class OnnxTarget(ImageClassifier):
    """An ONNX classifier file (`onnx`), run by onnxruntime on the CPU (`pip install onnxruntime`).

    A model exported with a fixed batch dimension of 1 is run one image at a time.

    Args:
        path: the `.onnx` file; its first input takes the float32 `N x 3 x H x W` batch.
        labels, input_size, channel_order, mean, std, batch_size: see `ImageClassifier`.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        labels: Sequence[str],
        input_size: Sequence[int] = (224, 224),
        channel_order: str = "RGB",
        mean: Sequence[float] = (0.0, 0.0, 0.0),
        std: Sequence[float] = (1.0, 1.0, 1.0),
        batch_size: int = 32,
    ) -> None:
        super().__init__(labels, input_size, channel_order, mean, std, batch_size)
        try:
            import onnxruntime
        except ImportError as exc:
            raise PluginError("The 'onnx' target needs onnxruntime: pip install onnxruntime (or the project's 'onnx' extra).") from exc
        self.path = _existing(path, "ONNX")
        try:
            self._session = onnxruntime.InferenceSession(str(self.path), providers=["CPUExecutionProvider"])
        except Exception as exc:
            raise PluginError(f"Could not load {self.path} as an ONNX model: {exc}") from exc
        first = self._session.get_inputs()[0]
        if first.type != "tensor(float)":
            raise PluginError(f"The ONNX model {self.path} takes {first.type} input {first.name!r}; this target feeds tensor(float).")
        self._input = first.name
        if first.shape and first.shape[0] == 1:
            self.batch_size = 1
        self._check_model(str(self.path))

    def __repr__(self) -> str:
        return f"OnnxTarget({str(self.path)!r}, labels={self.labels})"

    def _logits(self, x: torch.Tensor) -> np.ndarray:
        return self._session.run(None, {self._input: x.numpy()})[0]


def _existing(path: str | os.PathLike, kind: str) -> Path:
    p = Path(path).expanduser()
    if not p.is_file():
        raise PluginError(f"No {kind} model file at {p} ({'a directory' if p.is_dir() else 'not found'}).")
    return p


def _check_labels(labels: Any) -> tuple[str, ...]:
    if isinstance(labels, str) or not isinstance(labels, Sequence) or len(labels) < 2:
        raise ParameterError(f"The 'labels' option must be a sequence of at least two label names, one per logit. Got {labels!r} instead.")
    out = tuple(str(lab) for lab in labels)
    if len(set(out)) != len(out):
        raise ParameterError(f"The 'labels' option must not repeat a name. Got {labels!r} instead.")
    return out


def _check_size(size: Any) -> tuple[int, int]:
    ok = (
        isinstance(size, Sequence)
        and len(size) == 2
        and all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s > 0 for s in size)
    )
    if not ok:
        raise ParameterError(f"The 'input_size' option must be (height, width), two positive integers. Got {size!r} instead.")
    return int(size[0]), int(size[1])


def _check_triple(name: str, values: Any, positive: bool) -> tuple[float, float, float]:
    try:
        out = () if isinstance(values, str) else tuple(float(v) for v in values)
    except (TypeError, ValueError):
        out = ()
    bad = len(out) != 3 or not all(math.isfinite(v) and (v > 0 or not positive) for v in out)
    if bad:
        kind = "positive numbers" if positive else "finite numbers"
        raise ParameterError(f"The {name!r} option must be three {kind}, one per channel on the 0..1 scale. Got {values!r} instead.")
    return out  # type: ignore[return-value]

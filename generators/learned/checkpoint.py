"""`checkpoint`: your own generator network, loaded from a file and searched like any generator.

    gen = generators.load("checkpoint", spec="my_gan.toml")        # see spec.py for the file
    gen = generators.load("checkpoint", spec="my_gan.toml", path="other_weights.pt2")

The space is the spec's conditions (categoricals, one-hot in the unit cube: the mixed space McDuff
et al. search, docs/papers.md#mcduff, Sec. 3) followed by the latent coordinates `z0 .. z{D-1}`
(a standard-normal latent block searched in `[-bound, bound]^D`, or uniform coordinates). The
model is a pure function of `(z, c)`: `seed` and transect `keys` change nothing.

**Truth.** Nothing renders a learned generator's attributes, so its truth is what was asked: one
column per condition (the category) and `latent_norm` (`|z| / sqrt(D)`, how typical the code is;
atypical codes render worse). A classify target is judged against a condition whose categories are
its labels: `--truth gender` on a generator with a `gender` condition of masculine / feminine (no
cut). Whether the generator renders what it was asked is `searcher validate-generator`'s question.

The spec is checked against the model when it loads, before any evaluation: the model is run on
two codes, and an input it refuses, an output of the wrong shape, or values outside the declared
range are errors that say which spec key to fix. Models run in fixed-size batches (the last one
padded), so an image's pixels do not depend on how many were rendered with it. `.pt2` and
TorchScript models run on the `device` asked for (the CPU by default); ONNX models on the CPU.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from generators.base import Batch, Vocabulary
from generators.learned.spec import GeneratorSpec, model_format, read_spec
from searcher.devices import note_cpu_only, resolve_device
from searcher.errors import ParameterError, PluginError
from searcher.space import Categorical, Continuous, Latent, Params, Space, Uniform
from searcher.validation import check_int

__all__ = ["CheckpointGenerator", "Network"]


class Network:
    """A model file run on float32 numpy arrays: `network(*inputs) -> list of output arrays`.

    `.pt2` through `torch.export.load`, TorchScript through `torch.jit.load` (neither runs pickled
    Python code), ONNX through onnxruntime. Inputs go in fixed batches of `batch` rows (the last
    padded with zeros), so that a row's output does not depend on the rows beside it. torch models
    run on `device` (a resolved torch device; the arrays in and out stay on the CPU); onnxruntime
    runs on the CPU, and says so when asked for a GPU.
    """

    def __init__(self, path: Path, batch: int = 64, device: str = "cpu") -> None:
        self.path, self.format, self.batch = Path(path), model_format(Path(path)), int(batch)
        self.device = torch.device(device)
        try:
            if self.format == "export":
                program = torch.export.load(str(self.path))
                if self.device.type != "cpu":  # an exported program holds its device in its graph: moved, not `.to`
                    from torch.export.passes import move_to_device_pass

                    program = move_to_device_pass(program, self.device)
                self._fn = program.module()
            elif self.format == "torchscript":
                with warnings.catch_warnings():  # deprecated in favour of torch.export; the file is what it is
                    warnings.simplefilter("ignore", DeprecationWarning)
                    self._fn = torch.jit.load(str(self.path), map_location=self.device).eval()
            else:
                note_cpu_only(f"The ONNX model {self.path.name}", str(self.device))
                self._fn = self._onnx()
        except PluginError:
            raise
        except Exception as exc:
            raise PluginError(f"Could not load {self.path} as a {self.format} model: {exc}") from exc

    def _onnx(self) -> Any:
        try:
            import onnxruntime
        except ImportError as exc:
            raise PluginError("An .onnx checkpoint needs onnxruntime: pip install onnxruntime (or the project's 'onnx' extra).") from exc
        session = onnxruntime.InferenceSession(str(self.path), providers=["CPUExecutionProvider"])
        names = [i.name for i in session.get_inputs()]
        first = session.get_inputs()[0].shape
        if first and first[0] == 1:
            self.batch = 1
        return lambda *xs: session.run(None, dict(zip(names, xs)))

    def _once(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        if self.format == "onnx":
            out = self._fn(*inputs)
        else:
            with torch.inference_mode():
                out = self._fn(*(torch.from_numpy(x).to(self.device) for x in inputs))
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        return [o.float().cpu().numpy() if isinstance(o, torch.Tensor) else np.asarray(o, np.float32) for o in outs]

    def __call__(self, *inputs: np.ndarray) -> list[np.ndarray]:
        n = len(inputs[0])
        parts: list[list[np.ndarray]] = []
        for start in range(0, n, self.batch):
            rows = min(self.batch, n - start)
            chunk = []
            for x in inputs:
                padded = np.zeros((self.batch, *x.shape[1:]), np.float32)
                padded[:rows] = x[start : start + rows]
                chunk.append(padded)
            parts.append([o[:rows] for o in self._once(chunk)])
        return [np.concatenate([p[k] for p in parts]) for k in range(len(parts[0]))]


def _caption(row: pd.Series) -> list[str]:
    conditions = [str(v) for k, v in row.items() if k != "latent_norm" and isinstance(v, str)]
    return [" ".join(conditions), f"|z| {row['latent_norm']:.2f}"] if "latent_norm" in row else [" ".join(conditions)]


class CheckpointGenerator:
    """A generator network from a file, described by a spec (`checkpoint`).

    Args:
        spec: the TOML spec file (see `generators.learned.spec`).
        path: a model file that replaces the spec's `[model] file` (other weights, same spec).
        batch_size: rows per forward pass; every pass runs this many (padded).
        resolution: the side of the images it returns (default: the model's); other sides are
            resized from the model's output (bilinear), which adds pixels, not detail. Detectors
            that look for faces of 40 px and more need 128 from a 64 px model.
        device: where the model, encoder and judge run: "cpu" (the default), "cuda", "cuda:N", or
            "auto" (the GPU where there is one). ONNX files run on the CPU.
    """

    vocabulary = Vocabulary(caption=_caption)

    def __init__(self, spec: str | os.PathLike, path: str | os.PathLike | None = None, batch_size: int = 64,
                 resolution: int | None = None, device: str = "cpu") -> None:
        self._options = {"spec": spec, "path": path, "batch_size": batch_size, "resolution": resolution, "device": device}
        self.device = resolve_device(device)
        self.spec_path = Path(spec)
        self.spec: GeneratorSpec = read_spec(spec, path)
        self.batch_size = check_int("batch_size", batch_size, 1, 4096)
        s = self.spec
        conditions = [Categorical(c.name, c.categories, doc="condition, fed one-hot") for c in s.conditions]
        if s.prior == "normal":
            self.space = Space(conditions, latent=Latent("z", s.latent_dim, s.bound))
        else:
            coords = [Continuous(f"z{i}", -s.bound, s.bound, Uniform(), 0.0, "latent coordinate, uniform prior") for i in range(s.latent_dim)]
            self.space = Space([*conditions, *coords])
        self.latent_dim = s.latent_dim
        self.resolution = s.resolution if resolution is None else check_int("resolution", resolution, 8, 1024)
        self._z_names = [f"z{i}" for i in range(s.latent_dim)]
        self._model = Network(s.model, self.batch_size, self.device)
        self._encoder = Network(s.encoder, self.batch_size, self.device) if s.encoder else None
        self._judge = Network(s.judge, self.batch_size, self.device) if s.judge else None
        self._check_model()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(spec={str(self._options['spec'])!r})"

    def __reduce__(self) -> tuple:
        return (_rebuild, (type(self), self._options))

    # ----------------------------------------------------------------- rendering

    def generate(self, params: Mapping[str, Any] | Sequence[Mapping[str, Any]], seed: int = 0) -> Batch:
        """Renders params dicts: the conditions by name, latent coordinates `z0 ..` (omitted: 0, the
        first category). `seed` changes nothing: the model is a pure function of `(z, c)`."""
        rows = self.space.validate(params)
        z = np.array([[r[n] for n in self._z_names] for r in rows], np.float32).reshape(len(rows), self.latent_dim)
        return self._render(z, rows)

    def from_latent(self, z: np.ndarray, seed: int = 0, keys: Sequence[Any] | None = None,
                    conditions: Mapping[str, str] | Sequence[Mapping[str, str]] | None = None) -> Batch:
        """Renders raw `N x D` codes (not limited to the search box) under `conditions`: one dict for
        every code, one per code, or None for each condition's first category."""
        z = np.atleast_2d(np.asarray(z, np.float64))
        if z.ndim != 2 or z.shape[1] != self.latent_dim:
            raise ParameterError(f"Expected a `N x {self.latent_dim}` latent array, got shape {z.shape}.")
        if not np.isfinite(z).all():
            raise ParameterError("The latent array contains NaN or infinite values.")
        if conditions is None or isinstance(conditions, Mapping):
            conditions = [conditions or {}] * len(z)
        if len(conditions) != len(z):
            raise ParameterError(f"from_latent got {len(conditions)} condition rows for {len(z)} codes.")
        names = [c.name for c in self.spec.conditions]
        rows = []
        for given in conditions:
            unknown = sorted(set(given) - set(names))
            if unknown:
                raise ParameterError(f"Unknown condition(s) {unknown}. Valid conditions: {', '.join(names) or 'none'}.")
            rows.append(self.space.validate({n: given[n] for n in names if n in given})[0])
        return self._render(z.astype(np.float32), rows)

    def _one_hot(self, rows: Sequence[Params]) -> np.ndarray:
        blocks = [Categorical(c.name, c.categories).encode([r[c.name] for r in rows]) for c in self.spec.conditions]
        return np.concatenate(blocks, axis=1).astype(np.float32) if blocks else np.zeros((len(rows), 0), np.float32)

    def _inputs(self, z: np.ndarray, rows: Sequence[Params]) -> list[np.ndarray]:
        return [z, self._one_hot(rows)] if self.spec.conditions else [z]

    def _render(self, z: np.ndarray, rows: Sequence[Params]) -> Batch:
        if len(z) == 0:
            raise ParameterError("Nothing to render: no parameter rows were given.")
        out = self._model(*self._inputs(z, rows))[0]
        truth = pd.DataFrame({c.name: [r[c.name] for r in rows] for c in self.spec.conditions})
        truth["latent_norm"] = np.linalg.norm(z.astype(np.float64), axis=1) / np.sqrt(self.latent_dim)
        return Batch(images=self._to_uint8(out), truth=truth)

    def _to_uint8(self, out: np.ndarray) -> np.ndarray:
        """Model output (declared layout and range) -> `N x H x W x 3` uint8 at `resolution`."""
        x = torch.from_numpy(np.ascontiguousarray(out, np.float32))
        x = x.permute(0, 3, 1, 2) if self.spec.layout == "NHWC" else x
        lo, hi = self.spec.range
        images = self.resize((x - lo) * (255.0 / (hi - lo)))
        return np.ascontiguousarray(np.repeat(images, 3, axis=3) if images.shape[3] == 1 else images)

    def resize(self, x: torch.Tensor | np.ndarray) -> np.ndarray:
        """Images on the 0..255 scale (float `N x C x H x W`, or uint8 `N x H x W x C`) -> uint8
        `N x H x W x C` at `resolution`, resized as this generator resizes its own output."""
        if isinstance(x, np.ndarray):
            x = torch.from_numpy(np.ascontiguousarray(x)).permute(0, 3, 1, 2).float()
        r = self.resolution
        if tuple(x.shape[-2:]) != (r, r):
            x = F.interpolate(x, size=(r, r), mode="bilinear", align_corners=False, antialias=r < x.shape[-1])
        return x.round().clamp_(0, 255).to(torch.uint8).permute(0, 2, 3, 1).numpy()

    # ----------------------------------------------------------------- the encoder

    @property
    def has_encoder(self) -> bool:
        return self._encoder is not None

    def encode(self, images: np.ndarray) -> np.ndarray:
        """`E(x) -> z`: `N x D` codes of uint8 `N x H x W x 3` images of any size (resized to the
        model's resolution), rendered or real (Denton et al., docs/papers.md#denton, Sec. 3)."""
        return self._encode(images)[0]

    def encode_params(self, images: np.ndarray) -> list[Params]:
        """The params dicts that re-render `images`: their codes and, from the encoder's condition
        logits when it has them (else each condition's first category), their conditions. Codes are
        clipped to the search box; `encode` gives them unclipped."""
        z, logits = self._encode(images)
        read = self._categories(logits) if logits is not None else {}
        rows = [{**{k: v[i] for k, v in read.items()}, **dict(zip(self._z_names, np.clip(z[i], -self.spec.bound, self.spec.bound).tolist()))}
                for i in range(len(z))]
        return self.space.validate(rows)

    def _encode(self, images: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        if self._encoder is None:
            raise ParameterError(f"{self!r} has no encoder: add an [encoder] file to its spec to encode images.")
        outs = self._encoder(self._prepare(images))
        return outs[0].astype(np.float64), (outs[1] if len(outs) > 1 else None)

    def _prepare(self, images: np.ndarray) -> np.ndarray:
        """uint8 `N x H x W x 3` images of any size -> the model's resolution, layout and range."""
        images = np.asarray(images)
        if images.ndim != 4 or images.shape[-1] != 3 or images.dtype != np.uint8 or len(images) == 0:
            raise ParameterError(f"Expected a non-empty `N x H x W x 3` uint8 array of images. Got {images.dtype} {images.shape}.")
        x = torch.from_numpy(np.ascontiguousarray(images)).permute(0, 3, 1, 2).float().div_(255.0)
        r = self.spec.resolution
        if tuple(x.shape[-2:]) != (r, r):
            x = F.interpolate(x, size=(r, r), mode="bilinear", align_corners=False, antialias=True)
        lo, hi = self.spec.range
        x = x * (hi - lo) + lo
        if self.spec.layout == "NHWC":
            x = x.permute(0, 2, 3, 1)
        return np.ascontiguousarray(x.numpy(), np.float32)

    def _categories(self, logits: np.ndarray) -> dict[str, list[str]]:
        """Condition logits (`N x sum(categories)`) -> each condition's argmax category per row."""
        out, start = {}, 0
        for c in self.spec.conditions:
            out[c.name] = [c.categories[k] for k in np.argmax(logits[:, start : start + len(c.categories)], axis=1)]
            start += len(c.categories)
        return out

    # ----------------------------------------------------------------- the judge

    @property
    def has_judge(self) -> bool:
        return self._judge is not None

    def judge(self, images: np.ndarray) -> pd.DataFrame:
        """The conditions the spec's judge (a classifier trained on real data) reads off `images`,
        one column per condition: whether a generated face shows what it was asked for."""
        if self._judge is None:
            raise ParameterError(f"{self!r} has no judge: add a [judge] file to its spec, or judge with a target.")
        return pd.DataFrame(self._categories(self._judge(self._prepare(images))[0]))

    # ----------------------------------------------------------------- checking the spec against the model

    def _check_model(self) -> None:
        """Runs the model on two codes and checks what it returns against the spec."""
        s = self.spec
        rng = np.random.default_rng(0)
        z = np.clip(rng.standard_normal((2, s.latent_dim)), -s.bound, s.bound).astype(np.float32)
        rows = self.space.validate([{}, {c.name: c.categories[-1] for c in s.conditions}])
        inputs = self._inputs(z, rows)
        shapes = " and ".join(f"{name} {x.shape}" for name, x in zip(("z", "c"), inputs))
        declared = f"[latent] dim = {s.latent_dim}" + (f", conditions {[c.name for c in s.conditions]} ({s.condition_dim} one-hot columns)"
                                                        if s.conditions else ", no conditions")
        try:
            outs = self._model(*inputs)
        except Exception as exc:
            raise PluginError(f"The model {s.model.name} failed on {shapes}, the inputs its spec declares ({declared}): {exc}") from exc
        out = outs[0]
        r = s.resolution
        ok = [(2, ch, r, r) if s.layout == "NCHW" else (2, r, r, ch) for ch in (3, 1)]
        if out.shape not in ok:
            raise PluginError(f"The model {s.model.name} returns shape {out.shape} for 2 codes; its spec (layout = {s.layout!r}, "
                              f"resolution = {r}) expects {ok[0]} (or one channel, {ok[1]}). Fix [model] layout or resolution.")
        if not np.isfinite(out).all():
            raise PluginError(f"The model {s.model.name} returns NaN or infinite values for codes drawn from its prior.")
        lo, hi = s.range
        span, seen = hi - lo, (float(out.min()), float(out.max()))
        if seen[0] < lo - 0.05 * span or seen[1] > hi + 0.05 * span or seen[1] - seen[0] < 0.02 * span:
            raise PluginError(f"The model {s.model.name} returns values in [{seen[0]:.3g}, {seen[1]:.3g}], which do not fit its spec's "
                              f"range = [{lo:g}, {hi:g}] (black, white). Fix [model] range.")
        if self._encoder is not None:
            self._check_encoder(self._to_uint8(out))
        if self._judge is not None:
            try:
                logits = self._judge(self._prepare(self._to_uint8(out)))[0]
            except Exception as exc:
                raise PluginError(f"The judge {s.judge.name} failed on 2 images in the model's layout and range: {exc}") from exc
            if logits.shape != (2, s.condition_dim):
                raise PluginError(f"The judge {s.judge.name} returns shape {logits.shape} for 2 images; expected (2, {s.condition_dim}), "
                                  "one logit per condition category.")

    def _check_encoder(self, images: np.ndarray) -> None:
        s = self.spec
        try:
            z, logits = self._encode(images)
        except Exception as exc:
            raise PluginError(f"The encoder {s.encoder.name} failed on 2 images in the model's layout and range: {exc}") from exc
        if z.shape != (2, s.latent_dim):
            raise PluginError(f"The encoder {s.encoder.name} returns codes of shape {z.shape} for 2 images; expected (2, {s.latent_dim}).")
        if logits is not None and logits.shape != (2, s.condition_dim):
            raise PluginError(f"The encoder {s.encoder.name}'s second output has shape {logits.shape} for 2 images; expected "
                              f"(2, {s.condition_dim}), one logit per condition category.")


def _rebuild(cls: type, options: dict[str, Any]) -> CheckpointGenerator:
    """Unpickling: build again from the same options (exported programs do not pickle)."""
    return cls(**options)

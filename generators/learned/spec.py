"""The spec file (TOML) that turns a user's generator checkpoint into a searchable generator.

    [model]
    file = "decoder.pt2"      # .pt2 (torch.export, preferred), .pt/.ts (TorchScript), .onnx
    layout = "NCHW"           # or "NHWC": how the model lays out its output images
    range = [-1.0, 1.0]       # the output values of black and of white
    resolution = 64           # the side of the square images it outputs

    [latent]
    dim = 128                 # z's dimension
    prior = "normal"          # z ~ N(0, I) ("normal") or U(-bound, bound) ("uniform")
    bound = 3.0               # the search box [-bound, bound]^dim

    [[conditions]]            # optional, any number; fed as one one-hot block each, after z
    name = "gender"
    categories = ["masculine", "feminine"]

    [encoder]                 # optional: images (the model's layout and range) -> z, or (z, logits)
    file = "encoder.pt2"

    [judge]                   # optional: images -> condition logits, a classifier trained on real
    file = "judge.pt2"        # data (never on the generator's samples), for validate-generator

The model is called as `model(z)` without conditions and `model(z, c)` with them, `c` the
concatenated one-hot blocks in the order the conditions are listed (McDuff et al.'s `[z; theta]`,
docs/papers.md#mcduff, Sec. 3). Files are relative to the spec. Every key is checked here, so a
misspelt key or a bad value is an error that names it and what would have been valid; whether the
model agrees with the spec is checked when it is loaded (`checkpoint.py`).
"""

from __future__ import annotations

import difflib
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from searcher.errors import PluginError
from searcher.validation import check_choice, check_int, check_number

__all__ = ["FORMATS", "LAYOUTS", "PRIORS", "Condition", "GeneratorSpec", "model_format", "read_spec"]

LAYOUTS = ("NCHW", "NHWC")
PRIORS = ("normal", "uniform")
#: file suffix -> format. Pickles (.pth, .pkl, .ckpt, ...) are refused: loading one runs its code.
FORMATS = {".pt2": "export", ".pt": "torchscript", ".ts": "torchscript", ".jit": "torchscript", ".onnx": "onnx"}

_KEYS = {
    "": ("model", "latent", "conditions", "encoder", "judge"),
    "model": ("file", "layout", "range", "resolution"),
    "latent": ("dim", "prior", "bound"),
    "conditions": ("name", "categories"),
    "encoder": ("file",),
    "judge": ("file",),
}


@dataclass(frozen=True)
class Condition:
    """A categorical condition: its name and categories, one one-hot column each."""

    name: str
    categories: tuple[str, ...]


@dataclass(frozen=True)
class GeneratorSpec:
    """A checked spec. Paths are absolute."""

    model: Path
    layout: str
    range: tuple[float, float]
    resolution: int
    latent_dim: int
    prior: str
    bound: float
    conditions: tuple[Condition, ...] = ()
    encoder: Path | None = None
    judge: Path | None = None

    @property
    def condition_dim(self) -> int:
        """Width of the concatenated one-hot blocks."""
        return sum(len(c.categories) for c in self.conditions)


def model_format(path: Path) -> str:
    """"export", "torchscript" or "onnx" from the file's suffix; an error for anything else."""
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise PluginError(
            f"Cannot load {path.name}: its suffix {path.suffix!r} is not a format this plug-in reads "
            f"({', '.join(FORMATS)}). Pickled checkpoints are refused, since loading one runs its code: "
            "export the model with torch.export.save(torch.export.export(model, example_inputs), 'model.pt2')."
        )
    return fmt


def _file(base: Path, section: str, value: Any) -> Path:
    if not isinstance(value, str) or not value:
        raise PluginError(f"[{section}] file must be a path (relative to the spec). Got {value!r} instead.")
    path = (base / value).expanduser()
    if not path.is_file():
        raise PluginError(f"[{section}] file {value!r}: no file at {path}.")
    model_format(path)
    return path.resolve()


def _known_keys(table: Any, section: str) -> dict[str, Any]:
    where = f"[{section}]" if section else "the spec's top level"
    if not isinstance(table, dict):
        raise PluginError(f"{where} must be a table. Got {table!r} instead.")
    unknown = [k for k in table if k not in _KEYS[section]]
    if unknown:
        close = difflib.get_close_matches(unknown[0], _KEYS[section], n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise PluginError(f"Unknown key {unknown[0]!r} in {where}. Valid keys: {', '.join(_KEYS[section])}.{hint}")
    return table


def _conditions(tables: Any) -> tuple[Condition, ...]:
    if not isinstance(tables, list):
        raise PluginError(f"conditions must be an array of tables ([[conditions]] with name and categories). Got {tables!r} instead.")
    out = []
    for i, table in enumerate(tables):
        _known_keys(table, "conditions")
        name, cats = table.get("name"), table.get("categories")
        if not isinstance(name, str) or not name.isidentifier():
            raise PluginError(f"Condition {i + 1} needs a name that is an identifier (letters, digits, _). Got {name!r} instead.")
        if not isinstance(cats, list) or len(cats) < 2 or not all(isinstance(c, str) and c for c in cats) or len(set(cats)) != len(cats):
            raise PluginError(f"Condition {name!r} needs two or more distinct category names. Got {cats!r} instead.")
        out.append(Condition(name, tuple(cats)))
    names = [c.name for c in out]
    if len(set(names)) != len(names) or any(n.startswith("z") and n[1:].isdigit() for n in names):
        raise PluginError(f"Condition names must be distinct and not latent coordinate names (z0, z1, ...). Got {names} instead.")
    return tuple(out)


def read_spec(path: str | Path, model: str | Path | None = None) -> GeneratorSpec:
    """Reads and checks a spec file; `model`, when given, replaces `[model] file`.

    Raises:
        PluginError: the file is missing or not TOML, a key is unknown or missing, a value is out
            of range, or a model file is missing or in a format that is not read (pickles).
    """
    spec_path = Path(path).expanduser()
    if not spec_path.is_file():
        raise PluginError(f"No generator spec at {spec_path}.")
    try:
        doc = tomllib.loads(spec_path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise PluginError(f"The spec {spec_path} is not valid TOML: {exc}") from exc
    _known_keys(doc, "")
    for section in ("model", "latent"):
        if section not in doc:
            raise PluginError(f"The spec {spec_path} has no [{section}] table; it needs [model] and [latent].")
    base = spec_path.parent
    m, lat = _known_keys(doc["model"], "model"), _known_keys(doc["latent"], "latent")
    if model is not None:
        model_path = Path(model).expanduser()
        if not model_path.is_file():
            raise PluginError(f"No model file at {model_path}.")
        model_format(model_path)
    else:
        model_path = _file(base, "model", m.get("file"))
    lo_hi = m.get("range", [0.0, 1.0])
    if not (isinstance(lo_hi, list) and len(lo_hi) == 2 and all(isinstance(v, (int, float)) and math.isfinite(v) for v in lo_hi)
            and lo_hi[0] < lo_hi[1]):
        raise PluginError(f"[model] range must be [black, white], two increasing numbers such as [-1.0, 1.0]. Got {lo_hi!r} instead.")
    encoder, judge = (_file(base, k, _known_keys(doc[k], k).get("file")) if k in doc else None for k in ("encoder", "judge"))
    if judge is not None and not doc.get("conditions"):
        raise PluginError(f"The spec {spec_path} has a [judge] but no conditions for it to judge.")
    try:
        return GeneratorSpec(
            model=model_path.resolve(),
            layout=check_choice("layout", m.get("layout", "NCHW"), LAYOUTS, what="key", owner="[model]"),
            range=(float(lo_hi[0]), float(lo_hi[1])),
            resolution=check_int("resolution", m.get("resolution"), 8, 4096, what="key", owner="[model]"),
            latent_dim=check_int("dim", lat.get("dim"), 1, 100_000, what="key", owner="[latent]"),
            prior=check_choice("prior", lat.get("prior", "normal"), PRIORS, what="key", owner="[latent]"),
            bound=check_number("bound", lat.get("bound", 3.0), 0.0, 100.0, open_low=True, what="key", owner="[latent]"),
            conditions=_conditions(doc.get("conditions", [])),
            encoder=encoder,
            judge=judge,
        )
    except PluginError:
        raise
    except ValueError as exc:
        raise PluginError(f"In {spec_path}: {exc}") from exc

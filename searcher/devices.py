"""Where torch plug-ins run: the `device` setting, checked and resolved in one place.

A setting is `auto` (the GPU where torch sees one, else the CPU), `cpu`, `cuda` (torch's current
GPU) or `cuda:N`. `check_device` checks the form only, so a configuration written for a GPU machine
still reads on a laptop; `resolve_device` turns a setting into the torch device of the machine
that builds the plug-in, and refuses a GPU it lacks, naming the devices it has. Plug-ins that run
on the CPU only (dlib, OpenCV, onnxruntime, a remote service) take no device: asked for CUDA they
say so with a warning (`note_cpu_only`) and run as before. torch is imported only to count GPUs.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

from searcher.errors import ParameterError
from searcher.validation import invalid

__all__ = ["DEVICE_FORMS", "available_devices", "check_device", "note_cpu_only", "resolve_device"]

DEVICE_FORMS = ("auto", "cpu", "cuda", "cuda:N")
_FORM = re.compile(r"(auto|cpu|cuda(:\d+)?)")


def check_device(value: Any, name: str = "device", owner: str | None = None) -> str:
    """`value` if it is a device setting of one of the `DEVICE_FORMS` (whether this machine has it
    is `resolve_device`'s question); `owner` names what takes it, for the message."""
    if isinstance(value, str) and _FORM.fullmatch(value):
        return value
    raise invalid(name, "one of auto, cpu, cuda, cuda:N (N: a GPU's index)", value, owner=owner)


def available_devices() -> list[str]:
    """The devices torch can place work on here: "cpu", then "cuda:0", "cuda:1", ... one per GPU."""
    import torch

    return ["cpu", *(f"cuda:{i}" for i in range(torch.cuda.device_count()))]


def resolve_device(value: Any, name: str = "device") -> str:
    """The torch device that the setting `value` means on this machine: "cpu", "cuda" or "cuda:N".

    Raises:
        ParameterError: `value` is not a device setting (the message names the valid forms), or it
            names a GPU this machine does not have (the message names the devices it has).
    """
    setting = check_device(value, name)
    if setting == "cpu":
        return "cpu"
    devices = available_devices()
    wanted = "cuda" if setting == "auto" else setting
    gpus = len(devices) - 1  # devices: "cpu", then one per GPU
    if int(wanted.partition(":")[2] or 0) < gpus:  # "cuda" is torch's current GPU, index 0 here
        return wanted
    if setting == "auto":
        return "cpu"
    raise ParameterError(f"{name} {setting!r} is not available here; devices: {', '.join(devices)}. Use {name}='auto' "
                         "(the GPU where there is one, else the CPU) or 'cpu'.")


def note_cpu_only(what: str, value: Any) -> None:
    """Warns that `what` runs on the CPU when the setting `value` asks for a GPU by name (`auto`
    asks for none: it means the best each plug-in can do)."""
    if check_device(value).startswith("cuda"):
        warnings.warn(f"{what} runs on the CPU only; device={value!r} places the torch generators and targets.", stacklevel=2)

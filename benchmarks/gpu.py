"""What a GPU buys: the torch generators and targets on a device, whether they agree with the CPU
there, and a campaign end to end on it (issue 72, part 6). One command, for the few minutes a GPU
machine is lent:

    python benchmarks/gpu.py --out gpu.json                                  # on a GPU machine: everything, a few minutes
    PYTHONPATH=. python3 benchmarks/gpu.py --out $OUT/gpu.json               # there, without installing the project
    python benchmarks/gpu.py --device cpu --budget 2000 --images 256 --out gpu-cpu.json   # the same path on the CPU, small

It needs torch, botorch, pandas and scikit-learn, and neither dlib nor Ray: a GPU machine may lack
both. On `--device` it measures, printing a line each and writing all of them to `--out` (JSON):

1. **Render speed**: images per second of `faces` and `faces-cvae` at 64 and 128 px (a batch of
   `--images`, best of `--repeats`, the device synchronised before the clock stops).
2. **A TorchScript classifier**: gender-cnn's network scripted (`torch.jit.script`), saved, and
   loaded by the `torch` target on the device: images per second at 64 px input.
3. **Agreement with the CPU**: the same `faces` batch rendered on both (the largest difference of a
   pixel, and the share of pixels that differ), and the shipped CNNs (`gender-cnn`, `smile-cnn`,
   `glasses-cnn`) on the same images on both: the share of images given the same label (the
   issue's bar: 99.5%).
4. **A campaign end to end**: `faces-cvae` (128 px) against that TorchScript classifier, judged by
   the `gender` it was asked for, `--budget` evaluations (default 100,000), 1% of the passing
   images kept: random search at batch 256 and `bo-modes` at batch 1,024 with `--overlap`; wall
   seconds, evaluations per second and failures. `--strategies` picks among the two.

The figures are the machine's: record them in docs/results.md with the date and the device.
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

import generators
import targets
from searcher.campaign import Campaign
from searcher.devices import resolve_device
from searcher.errors import ParameterError
from searcher.outputs import check_output_file
from targets.trained import GenderCNN
from targets.trained.model import INPUT_SIZE, MEAN, STD

CAMPAIGNS = {"random": {"strategy": "random", "batch": 256}, "bo-modes": {"strategy": "bo-modes", "batch": 1024, "overlap": True}}
CNNS = ("gender-cnn", "smile-cnn", "glasses-cnn")


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize(device)


def _best(fn: Callable[[int], Any], repeats: int, device: str) -> float:
    """The shortest of `repeats` timed calls of `fn(repeat)`, after one untimed warm-up."""
    fn(-1)
    _sync(device)
    times = []
    for r in range(repeats):
        start = time.perf_counter()
        fn(r)
        _sync(device)
        times.append(time.perf_counter() - start)
    return min(times)


def render_speed(device: str, n: int, repeats: int) -> list[dict[str, Any]]:
    """Images per second of `faces` and `faces-cvae` at 64 and 128 px on `device`."""
    rows = []
    for name in ("faces", "faces-cvae"):
        for resolution in (64, 128):
            options = {"resolution": resolution, "device": device, **({"batch_size": n} if name == "faces-cvae" else {})}
            gen = generators.load(name, **options)
            params = gen.space.sample(n, seed=0)
            best = _best(lambda r, gen=gen, params=params: gen.generate(params, seed=max(r, 0)), repeats, device)
            rows.append({"what": "render", "generator": name, "resolution": resolution, "images": n, "images_per_s": n / best})
            print(f"{name:<11} {resolution:>3} px  {n / best:9.0f} images/s  (batch {n}, best of {repeats})", flush=True)
    return rows


def scripted_classifier(directory: Path) -> Path:
    """gender-cnn's network as a TorchScript file in `directory` (what a user's own model would be)."""
    path = directory / "gender.ts"
    with warnings.catch_warnings():  # torch deprecates TorchScript in favour of torch.export; users still ship it
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.jit.save(torch.jit.script(GenderCNN()._net.cpu().eval()), str(path))
    return path


def torch_target(path: Path, device: str) -> Any:
    """The `torch` target reading `path` on `device`, with gender-cnn's labels and preprocessing."""
    return targets.load("torch", path=str(path), labels=GenderCNN.LABELS, input_size=INPUT_SIZE, mean=MEAN, std=STD,
                        batch_size=256, device=device)


def target_speed(path: Path, device: str, n: int, repeats: int) -> dict[str, Any]:
    """Images per second of the TorchScript classifier on `device`, on `n` 128 px `faces` renders."""
    faces = generators.load("faces", resolution=128)
    images = faces.generate(faces.space.sample(n, seed=1)).images
    target = torch_target(path, device)
    best = _best(lambda r: target.predict(images), repeats, device)
    print(f"torch target (TorchScript gender CNN)  {n / best:9.0f} images/s  (128 px in, 64 px to the model)", flush=True)
    return {"what": "torchscript", "images": n, "images_per_s": n / best}


def agreement(device: str, n: int) -> list[dict[str, Any]]:
    """How far `device` is from the CPU: the same `faces` batch rendered on both, the shipped CNNs on both."""
    params = generators.load("faces").space.sample(n, seed=2)
    on_cpu = generators.load("faces", resolution=128, device="cpu").generate(params, seed=0).images
    on_device = generators.load("faces", resolution=128, device=device).generate(params, seed=0).images
    diff = np.abs(on_cpu.astype(int) - on_device.astype(int))
    rows = [{"what": "render agreement", "images": n, "max_pixel_difference": int(diff.max()), "pixels_differing": float((diff > 0).mean())}]
    print(f"faces on {device} against the CPU: largest pixel difference {diff.max()}, {(diff > 0).mean():.4%} of pixels differ", flush=True)
    for name in CNNS:
        cpu_labels = targets.load(name, device="cpu").predict(on_cpu).label
        device_labels = targets.load(name, device=device).predict(on_cpu).label
        same = float(np.mean([a == b for a, b in zip(cpu_labels, device_labels)]))
        rows.append({"what": "prediction agreement", "target": name, "images": n, "same_label": same})
        print(f"{name:<11} on {device} against the CPU, the same images: the same label on {same:.2%} (bar 99.5%)", flush=True)
    return rows


def campaign(name: str, path: Path, device: str, budget: int, directory: Path) -> dict[str, Any]:
    """`faces-cvae` against the TorchScript classifier on `device`, end to end."""
    settings = CAMPAIGNS[name]
    config = Campaign(generator="faces-cvae", target="torch", generator_options={"resolution": 128, "batch_size": 256},
                      target_options={"path": str(path), "labels": list(GenderCNN.LABELS), "input_size": list(INPUT_SIZE),
                                      "mean": list(MEAN), "std": list(STD), "batch_size": 256},
                      truth_column="gender", budget=budget, images=0.01, device=device, out=str(directory / name), **settings)
    start = time.perf_counter()
    result = config.run(progress=False)
    wall = time.perf_counter() - start
    failures = int(result.trials["failure"].sum())
    print(f"campaign {name} (batch {settings['batch']}{', overlap' if settings.get('overlap') else ''}): {budget} evaluations in "
          f"{wall:.1f} s, {budget / wall:.0f} /s, {failures} failures", flush=True)
    return {"what": "campaign", "strategy": name, **settings, "budget": budget, "wall_s": wall, "evaluations_per_s": budget / wall,
            "failures": failures}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda", help="cuda (default), cuda:N or cpu")
    ap.add_argument("--images", type=int, default=1024, help="images per timed batch and per agreement check (default: 1,024)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--budget", type=int, default=100_000, help="the campaigns' evaluations (default: 100,000; 0: no campaign)")
    ap.add_argument("--strategies", default="random,bo-modes", help=f"campaigns to run, of {', '.join(CAMPAIGNS)} (default: both)")
    ap.add_argument("--out", type=Path, default=Path("gpu.json"))
    args = ap.parse_args()
    try:
        device = resolve_device(args.device, "--device")
        check_output_file(args.out)  # before the device's minutes go into measurements it could not write
    except ParameterError as exc:
        ap.error(str(exc))
    strategies = [s for s in args.strategies.split(",") if s]
    unknown = [s for s in strategies if s not in CAMPAIGNS]
    if unknown:
        ap.error(f"--strategies: no campaign {unknown[0]!r}; the campaigns: {', '.join(CAMPAIGNS)}")
    name = torch.cuda.get_device_name(device) if device.startswith("cuda") else platform.processor() or platform.machine()
    print(f"device {device}: {name}; torch {torch.__version__}", flush=True)
    rows: list[dict[str, Any]] = []

    def save() -> None:  # after every measurement: a run stopped at its limit keeps what it measured
        args.out.write_text(json.dumps({"device": device, "name": name, "torch": torch.__version__, "rows": rows}, indent=1))

    with tempfile.TemporaryDirectory() as scratch:
        path = scripted_classifier(Path(scratch))
        for measure in (lambda: render_speed(device, args.images, args.repeats), lambda: [target_speed(path, device, args.images, args.repeats)],
                        lambda: agreement(device, args.images) if device != "cpu" else []):
            rows.extend(measure())
            save()
        for strategy in strategies if args.budget else ():
            rows.append(campaign(strategy, path, device, args.budget, Path(scratch)))
            save()
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

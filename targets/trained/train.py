"""Rebuilds the shipped weights of `gender-cnn`, `smile-cnn` or `glasses-cnn` from seeded `faces` renders.

    python -m targets.trained.train gender      # -> targets/trained/gender.pt
    python -m targets.trained.train smile       # -> targets/trained/smile.pt
    python -m targets.trained.train glasses     # -> targets/trained/glasses.pt

The data recipes are in `data.py` and README.md. Everything random is seeded (the parameter
draws, the render seed, the initial weights, the batch order, the flips) and torch runs on two
CPU threads with deterministic algorithms, so one machine reproduces the same file.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from generators.faces.procedural import render_rows
from targets.local import ImageClassifier
from targets.trained import GenderCNN, GlassesCNN, SmileCNN, weights_path
from targets.trained.data import gender_training_rows, glasses_training_rows, smile_training_rows, truth_labels
from targets.trained.model import INPUT_SIZE, MEAN, STD, SmallCNN

__all__ = ["RECIPES", "fit", "main", "train"]

# task -> (training rows, labels, images, epochs, planted share). Smiles are small at 64 px and
# take longer to learn. Gender plants hair in 85% of rows, so that the model leans on hair and
# hardly on anything the renderer ties to skin tone (at 60% it reads more of the face, whose cues
# are fainter on dark skin at 64 px, and skin tone moves its output by a third as much as hair).
RECIPES = {
    "gender": (gender_training_rows, GenderCNN.LABELS, 10_000, 6, 0.85),
    "smile": (smile_training_rows, SmileCNN.LABELS, 16_000, 12, 0.85),
    "glasses": (glasses_training_rows, GlassesCNN.LABELS, 10_000, 6, 0.85),
}


def fit(images: np.ndarray, y: np.ndarray, n_labels: int, epochs: int, seed: int = 0,
        log: Callable[[str], None] | None = None) -> SmallCNN:
    """Trains a fresh `SmallCNN` on `images` (uint8 `N x H x W x 3`, any size, resized to 64 x 64
    as the targets do) with label indices `y`: AdamW, one-cycle learning rate 3e-3, batch 64,
    random horizontal flips, `epochs` passes; the initial weights, batch order and flips from `seed`."""
    torch.set_num_threads(2)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(seed)
    n = len(images)
    prep = ImageClassifier(tuple(range(n_labels)), input_size=INPUT_SIZE, mean=MEAN, std=STD)
    x = torch.cat([prep.preprocess(images[i : i + 1024]) for i in range(0, n, 1024)])
    y = torch.as_tensor(np.asarray(y), dtype=torch.int64)
    x = x.contiguous(memory_format=torch.channels_last)  # twice as fast on the CPU
    net = SmallCNN(n_labels).to(memory_format=torch.channels_last)
    steps_per_epoch = (n + 63) // 64
    opt = torch.optim.AdamW(net.parameters(), lr=3e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=epochs * steps_per_epoch)
    gen = torch.Generator().manual_seed(seed)
    start = time.perf_counter()
    for epoch in range(epochs):
        net.train()
        order = torch.randperm(n, generator=gen)
        flips = torch.rand(n, generator=gen) < 0.5
        total, correct = 0.0, 0
        for i in range(0, n, 64):
            idx = order[i : i + 64]
            xb = torch.where(flips[idx].view(-1, 1, 1, 1), x[idx].flip(-1), x[idx]).contiguous(memory_format=torch.channels_last)
            logits = net(xb)
            loss = F.cross_entropy(logits, y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(idx)
            correct += int((logits.argmax(1) == y[idx]).sum())
        if log:
            log(f"  epoch {epoch + 1}/{epochs}: loss {total / n:.3f}, train accuracy {correct / n:.1%} ({time.perf_counter() - start:.0f} s)")
    return net.eval()


def train(
    task: str,
    seed: int = 0,
    n: int | None = None,
    epochs: int | None = None,
    planted: float | None = None,
    out: Path | None = None,
) -> Path:
    """Renders `n` training faces for `task` at 64 px, trains a `SmallCNN` (`fit`), saves its state_dict.

    `n`, `epochs` and `planted` default to the recipe's and `out` to the shipped file; `planted` is
    the share of training rows that get the planted correlation (0 trains an unbiased control).
    """
    if task not in RECIPES:
        raise ValueError(f"task must be one of {', '.join(RECIPES)}. Got {task!r} instead.")
    rows_for, labels, default_n, default_epochs, default_planted = RECIPES[task]
    n, epochs = n or default_n, epochs or default_epochs
    planted = default_planted if planted is None else planted
    start = time.perf_counter()
    batch = render_rows(rows_for(n, seed, p_planted=planted), resolution=64, seed=seed)
    y = truth_labels(batch.truth, task)
    print(f"{task}: rendered {n} faces in {time.perf_counter() - start:.0f} s; {y.mean():.1%} {labels[1]!r}")
    net = fit(batch.images, y, len(labels), epochs, seed, log=print)
    path = out or weights_path(task)
    torch.save({k: v.contiguous() for k, v in net.state_dict().items()}, path)  # plain tensors, loadable with weights_only
    print(f"{task}: saved {path} ({path.stat().st_size / 1024:.0f} KiB) after {time.perf_counter() - start:.0f} s")
    return path


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("task", choices=sorted(RECIPES))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n", type=int, default=None, help="training images (default: the recipe's)")
    ap.add_argument("--epochs", type=int, default=None, help="(default: the recipe's)")
    ap.add_argument("--planted", type=float, default=None, help="share of rows with the planted correlation (default: the recipe's; 0: a control)")
    ap.add_argument("--out", type=Path, default=None, help="weight file (default: the shipped one)")
    args = ap.parse_args(argv)
    train(args.task, seed=args.seed, n=args.n, epochs=args.epochs, planted=args.planted, out=args.out)


if __name__ == "__main__":
    main()

"""Where does `faces-cvae` lose a condition: in the decoder or in the prior? Per combination, the
shipped judge's rate of reading the asked gender presentation and skin type on three image sets:
renders of the training recipe (the ceiling), those renders encoded and drawn again under their
own conditions (`E` then `G`: the decoder alone), and samples of the prior (`G` on `u ~ N(0, I)`:
decoder and prior). E-then-G as low as the samples puts the loss in the decoder; samples well
below E-then-G put it in the prior. Every image passes the 64 -> 128 -> 64 px round trip that
`validate-generator` gives it.

    python lab/cvae_condition_loss.py [--model DIR] [--renders 3000] [--samples 400]
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import torch

from generators.faces.procedural import render_rows
from generators.learned.data import CONDITIONS, training_rows
from generators.learned.model import one_hot_blocks
from generators.learned.train import HERE, LATENT_DIM, SIZES, load_networks, load_prior, round_trip, setup


def reads(judge: torch.nn.Module, images: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """`N x 2` booleans: does the judge read each image's skin type and gender as `index` says?"""
    with torch.no_grad():
        logits = torch.cat([judge(round_trip(x)) for x in images.split(500)])
    blocks = logits.split(SIZES, dim=1)
    return torch.stack([b.argmax(1) == index[:, k] for k, b in enumerate(blocks)], dim=1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, default=HERE, help="folder with decoder.pt2 and encoder.pt2 (default: the shipped model)")
    ap.add_argument("--renders", type=int, default=3000, help="renders of the training recipe (seed 81)")
    ap.add_argument("--samples", type=int, default=400, help="prior samples per combination (seed 5)")
    args = ap.parse_args()
    torch.set_num_threads(2)
    dec, enc = load_networks(args.model)
    prior = load_prior(args.model)
    judge = torch.export.load(HERE / "judge.pt2").module()

    rows, index = training_rows(args.renders, 81)
    x = setup(render_rows(rows, resolution=64, seed=81).images, 0)
    index = torch.as_tensor(index)
    c = one_hot_blocks(index, SIZES)
    with torch.no_grad():
        mu = torch.cat([enc(xb, cb)[0] for xb, cb in zip(x.split(500), c.split(500))])
        recon = torch.cat([dec(m, cb) for m, cb in zip(mu.split(500), c.split(500))])
    on_renders, on_recon = reads(judge, x, index), reads(judge, recon, index)

    names = list(CONDITIONS)
    print(f"| combination | n renders | {names[1]} read: renders | E then G | samples | {names[0]} read: renders | E then G | samples |")
    print("|---|---|---|---|---|---|---|---|")
    g = torch.Generator().manual_seed(5)
    for combo in itertools.product(*(range(s) for s in SIZES)):
        sel = (index == torch.tensor(combo)).all(1)
        asked = torch.tensor([combo] * args.samples)
        cond = one_hot_blocks(asked, SIZES)
        u = torch.randn(args.samples, LATENT_DIM, generator=g)
        with torch.no_grad():
            on_samples = reads(judge, dec(prior(u, cond), cond), asked)
        label = " ".join(CONDITIONS[n][k] for n, k in zip(names, combo))
        cells = [f"{100 * float(s[:, k].float().mean()):.1f}%" for k in (1, 0) for s in (on_renders[sel], on_recon[sel], on_samples)]
        print(f"| {label} | {int(sel.sum())} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

"""Rebuilds the shipped `faces-cvae` (decoder, encoder, spec) and its condition judge.

    python -m generators.learned.train            # -> generators/learned/faces_cvae/
    python -m generators.learned.train judge      # the judge alone (cvae: the generator alone)
    python -m generators.learned.train prior      # refits p(z | c) of the shipped decoder and encoder
    python -m generators.learned.train export     # writes the shipped networks and prior again, as the code now exports them

Everything random is seeded (the parameter draws, the render, the initial weights, the batch
order, the flips, the reparameterisation noise) and torch runs on two CPU threads with
deterministic algorithms, so one machine reproduces the same files. After training, the
conditional prior `p(z | c)` is fitted to the codes of faces of the training recipe and their
mirror images (`fit_prior`: a Gaussian per combination, then a coupling flow), and the
decoder and the encoder are written with it folded in, with `torch.export` (`.pt2`), the format a
user's own checkpoint comes in.

The judge (`ConditionJudge`, the trained targets' small CNN) reads skin type and gender off a face;
it is trained on a *separate* render set (seed + 1), and `validate-generator` asks it whether a
generated face shows the conditions it was asked for. It never sees a generated face in training,
so it cannot have learned the generator's quirks.
"""

from __future__ import annotations

import argparse
import copy
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from generators.faces.procedural import render_rows
from generators.learned.data import CONDITIONS, attribute_targets, detail_weights, face_weights, training_rows
from generators.learned.model import ConditionalPrior, ConditionJudge, CouplingFlow, Decoder, Encoder, ExportedEncoder, PriorDecoder, one_hot_blocks

__all__ = ["HERE", "LATENT_DIM", "export", "fit_cvae", "fit_flow", "fit_judge", "fit_prior", "load_networks", "load_prior", "main", "round_trip",
           "setup", "train"]

HERE = Path(__file__).parent / "faces_cvae"
LATENT_DIM = 32
SIGMA = 0.1  # the decoder's Gaussian pixel noise on the 0..1 scale: recon weight 1 / (2 sigma^2)
EPOCHS = 48  # of the VAE: fewer lose a feminine face's cues on dark skin (V-VI feminine reconstructions read feminine 84% at 32, 90% at 48)
DETAIL = 4.0  # `detail_weights` gain: the weight of the pixels where a face has its features
ATTRIBUTES = 1e4  # weight of the attribute head's squared error (`attribute_targets`); 1e2 and 1e3 left the smile out of the codes
FLOW_STEPS = 16_000  # `fit_flow` steps of batch 512: held-out -log p -7.98 at 4,000, -9.90 at 8,000, -11.31 at 16,000
FLOW_LAYERS, FLOW_HIDDEN = 12, 128  # the prior's coupling layers and their width
PRIOR_N = 100_000  # faces (each also mirrored) whose codes the prior is fitted to
SIZES = [len(c) for c in CONDITIONS.values()]  # categories per condition: the one-hot blocks


def setup(images: np.ndarray, seed: int) -> torch.Tensor:
    """Seeds torch, two threads, deterministic kernels; uint8 NHWC -> float NCHW in [0, 1], channels-last."""
    torch.set_num_threads(2)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(seed)
    return torch.from_numpy(images).permute(0, 3, 1, 2).float().div_(255.0).contiguous(memory_format=torch.channels_last)


def _batches(x: torch.Tensor, batch: int, gen: torch.Generator):
    """One epoch: (indices, which are flipped, images with those seeded horizontal flips) per batch,
    in a seeded order."""
    order = torch.randperm(len(x), generator=gen)
    flips = torch.rand(len(x), generator=gen) < 0.5
    for i in range(0, len(x), batch):
        b = order[i : i + batch]
        yield b, flips[b], torch.where(flips[b].view(-1, 1, 1, 1), x[b].flip(-1), x[b]).contiguous(memory_format=torch.channels_last)


def _block_ce(logits: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """Summed cross-entropy of every condition block."""
    return sum(F.cross_entropy(block, index[:, k]) for k, block in enumerate(logits.split(SIZES, dim=1)))


def fit_cvae(images: np.ndarray, index: np.ndarray, weights: np.ndarray, attributes: tuple[np.ndarray, np.ndarray], epochs: int,
             seed: int = 0, latent_dim: int = LATENT_DIM, log: Callable[[str], None] | None = None) -> tuple[Decoder, Encoder]:
    """Trains the conditional VAE on uint8 `N x 64 x 64 x 3` images with `N x 2` condition indices,
    `N x 64 x 64` pixel weights (`face_weights` times `detail_weights`) and the `N x A` attribute
    targets with their mirror signs (`attribute_targets`).

    Loss per image: `sum w (x - G(z, c))^2 / (2 sigma^2) + KL(q(z | x, c) || N(0, I)) + 100 CE(head(x), c)
    + ATTRIBUTES |a - A mu|^2`: the ELBO with the face and its details (eyes, brows, mouth) weighted,
    the condition head that lets `E(x)` run without labels, and a linear head `A` (dropped after
    training) that asks the posterior mean to carry every attribute the renderer varied, so that
    small ones (a smile, makeup) are in the code for the decoder to draw (`attribute_targets` says why).
    The KL term warms up over the first epoch. Adam, learning rate 2e-3 with one-cycle decay,
    batch 128, flips. Nothing here is trained against a condition classifier, so the judge of
    `validate-generator` (the same small CNN) cannot be fooled by cues made for it.
    """
    x = torch.cat([setup(images, seed), torch.from_numpy(weights)[:, None]], dim=1).contiguous(memory_format=torch.channels_last)
    idx = torch.as_tensor(index, dtype=torch.int64)
    c_all = one_hot_blocks(idx, SIZES)
    dec = Decoder(latent_dim, sum(SIZES)).to(memory_format=torch.channels_last)
    enc = Encoder(latent_dim, SIZES).to(memory_format=torch.channels_last)
    targets, signs = (torch.from_numpy(a) for a in attributes)
    head = torch.nn.Linear(latent_dim, targets.shape[1])
    params = list(dec.parameters()) + list(enc.parameters()) + list(head.parameters())
    n, batch = len(x), 128
    steps = epochs * ((n + batch - 1) // batch)
    opt = torch.optim.Adam(params, lr=2e-3)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=2e-3, total_steps=steps, pct_start=0.05)
    gen = torch.Generator().manual_seed(seed)
    start, step = time.perf_counter(), 0
    for epoch in range(epochs):
        dec.train(), enc.train()
        sums = np.zeros(5)
        for b, flipped, xwb in _batches(x, batch, gen):
            xb, wb = xwb[:, :3], xwb[:, 3:]
            mu, logvar, logits = enc(xb, c_all[b])
            z = mu + torch.randn(mu.shape, generator=gen) * (0.5 * logvar).exp()
            recon = (wb * (dec(z, c_all[b]) - xb).pow(2)).flatten(1).sum(1).mean() / (2 * SIGMA**2)
            kl = 0.5 * (mu.pow(2) + logvar.exp() - 1 - logvar).sum(1).mean()
            ce = _block_ce(logits, idx[b])
            carried = (head(mu) - targets[b] * torch.where(flipped[:, None], signs, 1.0)).pow(2).sum(1).mean()
            warm = min(1.0, (step + 1) / (steps / epochs))
            loss = recon + warm * kl + 100 * ce + ATTRIBUTES * carried
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            sums += np.array([recon.item(), kl.item(), ce.item(), carried.item(), 1.0]) * len(b)
        if log:
            r, k, c, a, m = sums
            log(f"  epoch {epoch + 1}/{epochs}: recon {r / m:.0f}, KL {k / m:.1f}, head CE {c / m:.3f}, "
                f"attribute error {a / m:.2f} of {targets.shape[1]} ({time.perf_counter() - start:.0f} s)")
    return dec.eval(), enc.eval()


def training_codes(enc: Encoder, n: int, seed: int, chunk: int = 10_000) -> tuple[torch.Tensor, np.ndarray]:
    """The posterior means `E(x)` at their true conditions of `n` training-recipe faces (seed
    `seed`, rendered `chunk` at a time) and of their mirror images, as the VAE saw both:
    (`2 x n x D` codes, `n x 2` condition indices)."""
    rows, index = training_rows(n, seed)
    codes = []
    for i in range(0, n, chunk):
        x = setup(render_rows(rows[i : i + chunk], resolution=64, seed=seed + i).images, seed)
        c = one_hot_blocks(torch.as_tensor(index[i : i + chunk], dtype=torch.int64), SIZES)
        with torch.no_grad():
            codes += [enc(torch.cat([xb, xb.flip(-1)]), torch.cat([cb, cb]))[0].view(2, len(xb), -1) for xb, cb in zip(x.split(512), c.split(512))]
    return torch.cat(codes, dim=1), index


def fit_prior(codes: torch.Tensor, index: np.ndarray, flow_steps: int = FLOW_STEPS, seed: int = 0, ridge: float = 1e-3,
              log: Callable[[str], None] | None = None) -> ConditionalPrior:
    """The conditional prior `p(z | c)` of `training_codes` (`2 x n x D`) with `n x 2` condition
    indices: the mean and covariance (plus `ridge` I) per combination, then `fit_flow` on the
    codes so whitened, with the last 5% of the faces held out (`flow_steps` = 0: Gaussians alone)."""
    cells = torch.from_numpy(np.ravel_multi_index(index.T, SIZES))
    means, chols = [], []
    for k in range(int(np.prod(SIZES))):
        z = codes[:, cells == k].flatten(0, 1).double()
        means.append(z.mean(0))
        chols.append(torch.linalg.cholesky(torch.cov(z.T) + ridge * torch.eye(z.shape[1], dtype=z.dtype)))
    prior = ConditionalPrior(SIZES, torch.stack(means), torch.stack(chols))
    if flow_steps:
        c = one_hot_blocks(torch.as_tensor(index, dtype=torch.int64), SIZES).repeat(2, 1)
        with torch.no_grad():
            v = prior.whiten(codes.flatten(0, 1), c).view(codes.shape)
        w = prior.cell(c).view(2, len(index), -1)
        cut = int(0.95 * len(index))
        fit, held = ((v[:, part].flatten(0, 1), w[:, part].flatten(0, 1)) for part in (slice(None, cut), slice(cut, None)))
        prior.flow = fit_flow(*fit, flow_steps, seed, held=held, log=log)
    return prior


def fit_flow(v: torch.Tensor, w: torch.Tensor, steps: int, seed: int = 0, held: tuple[torch.Tensor, torch.Tensor] | None = None,
             batch: int = 512, layers: int = FLOW_LAYERS, hidden: int = FLOW_HIDDEN,
             log: Callable[[str], None] | None = None) -> CouplingFlow:
    """A `CouplingFlow` fitted by maximum likelihood to codes `v` (`N x D`) of combinations `w`
    (`N x K` one-hot): `-log p(v | w) = |f^-1(v)|^2 / 2 - log |det|` (Dinh et al. 2017, eq. 3),
    AdamW (learning rate 1e-3, weight decay 1e-4, cosine decay) on seeded batches. With `held`
    codes, the weights that fit them best (checked every 250 steps) are the ones returned."""
    torch.manual_seed(seed)
    flow = CouplingFlow(v.shape[1], w.shape[1], layers, hidden)
    opt = torch.optim.AdamW(flow.parameters(), lr=1e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    gen = torch.Generator().manual_seed(seed)

    def nll(v: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        u, logdet = flow.inverse(v, w)
        return (0.5 * u.pow(2).sum(1) - logdet).mean()

    best, state, start = float("inf"), None, time.perf_counter()
    gauss = float(0.5 * held[0].pow(2).sum(1).mean()) if held is not None else None  # the Gaussians alone
    for step in range(steps):
        b = torch.randint(len(v), (batch,), generator=gen)
        loss = nll(v[b], w[b])
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if held is not None and ((step + 1) % 250 == 0 or step + 1 == steps):
            with torch.no_grad():
                score = float(nll(*held))
            if score < best:
                best, state = score, copy.deepcopy(flow.state_dict())
            if log:
                log(f"  flow step {step + 1}/{steps}: -log p of held-out codes {score:.2f} (Gaussians alone {gauss:.2f}; {time.perf_counter() - start:.0f} s)")
    if state is not None:
        flow.load_state_dict(state)
    return flow.eval()


def round_trip(x: torch.Tensor, side: int = 128) -> torch.Tensor:
    """Images `N x 3 x 64 x 64` in [0, 1] as a judge meets them in `validate-generator`: upsampled
    to `side` px and rounded to 8 bits (what `faces-cvae` returns), then resized back to 64 px."""
    up = F.interpolate(x * 255.0, size=(side, side), mode="bilinear", align_corners=False).round_().clamp_(0, 255)
    return F.interpolate(up, size=x.shape[-2:], mode="bilinear", align_corners=False, antialias=True).div_(255.0)


def fit_judge(images: np.ndarray, index: np.ndarray, epochs: int, seed: int = 1,
              log: Callable[[str], None] | None = None) -> ConditionJudge:
    """Trains the condition judge on uint8 `N x 64 x 64 x 3` renders with `N x 2` condition indices
    (summed cross-entropy of both blocks): AdamW, one-cycle learning rate 3e-3, batch 64, flips,
    and half of the images seen through `round_trip`, the resizing every image it judges has had
    (without it the judge reads gender off real renders 4 points worse after the trip)."""
    raw = setup(images, seed)
    x = torch.cat([raw, torch.cat([round_trip(raw[i : i + 1024]) for i in range(0, len(raw), 1024)])], dim=1)
    idx = torch.as_tensor(index, dtype=torch.int64)
    net = ConditionJudge(SIZES).to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(net.parameters(), lr=3e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=epochs * ((len(x) + 63) // 64))
    gen = torch.Generator().manual_seed(seed)
    start = time.perf_counter()
    for epoch in range(epochs):
        net.train()
        correct = np.zeros(len(SIZES))
        for b, _, pair in _batches(x, 64, gen):
            tripped = torch.rand(len(b), generator=gen) < 0.5
            logits = net(torch.where(tripped.view(-1, 1, 1, 1), pair[:, 3:], pair[:, :3]).contiguous(memory_format=torch.channels_last))
            loss = _block_ce(logits, idx[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            correct += [int((block.argmax(1) == idx[b, k]).sum()) for k, block in enumerate(logits.split(SIZES, dim=1))]
        if log:
            accuracy = ", ".join(f"{name} {c / len(x):.1%}" for name, c in zip(CONDITIONS, correct))
            log(f"  judge epoch {epoch + 1}/{epochs}: train accuracy {accuracy} ({time.perf_counter() - start:.0f} s)")
    return net.eval()


def _save(module: torch.nn.Module, example: tuple[torch.Tensor, ...], path: Path) -> Path:
    """`torch.export` with a dynamic batch dimension on every input, saved as `.pt2`."""
    batch = torch.export.Dim("batch", min=1, max=65536)
    program = torch.export.export(module.to(memory_format=torch.contiguous_format), example,
                                  dynamic_shapes=tuple({0: batch} for _ in example))
    torch.export.save(program, path)
    return path


def export(dec: Decoder, enc: Encoder, prior: ConditionalPrior, out: Path) -> tuple[Path, Path]:
    """Writes `decoder.pt2` (`(u, c) -> N x 3 x 64 x 64` in [0, 1], `u` whitened by the prior) and
    `encoder.pt2` (`N x 3 x 64 x 64` in [0, 1] -> `(u, condition logits)`) with a dynamic batch dimension."""
    out.mkdir(parents=True, exist_ok=True)
    u = torch.zeros(2, prior.means.shape[1])
    c = one_hot_blocks(torch.zeros(2, len(prior.sizes), dtype=torch.int64), prior.sizes)
    return (_save(PriorDecoder(dec, prior), (u, c), out / "decoder.pt2"),
            _save(ExportedEncoder(enc, prior), (torch.zeros(2, 3, 64, 64),), out / "encoder.pt2"))


def _exported_state(path: Path, prefix: str) -> dict[str, torch.Tensor]:
    """The weights of the submodule `prefix` of an exported `.pt2`, named as inside it."""
    return {k.removeprefix(f"{prefix}."): v for k, v in torch.export.load(path).state_dict.items() if k.startswith(f"{prefix}.")}


def load_networks(folder: Path = HERE) -> tuple[Decoder, Encoder]:
    """The decoder and encoder inside an exported `decoder.pt2` / `encoder.pt2` pair, without their prior."""
    dec, enc = Decoder(LATENT_DIM, sum(SIZES)), Encoder(LATENT_DIM, SIZES)
    for net, name in ((dec, "decoder"), (enc, "encoder")):
        net.load_state_dict(_exported_state(folder / f"{name}.pt2", name))
    return dec.eval(), enc.eval()


def load_prior(folder: Path = HERE) -> ConditionalPrior:
    """The conditional prior (Gaussians and flow) folded into an exported `decoder.pt2`."""
    state = _exported_state(folder / "decoder.pt2", "prior")
    flow = CouplingFlow(LATENT_DIM, int(np.prod(SIZES)), FLOW_LAYERS, FLOW_HIDDEN) if any(k.startswith("flow.") for k in state) else None
    prior = ConditionalPrior(SIZES, state["means"], state["chols"], flow)
    prior.load_state_dict(state)
    return prior.eval()


def train(part: str = "all", seed: int = 0, n: int = 20_000, epochs: int = EPOCHS, judge_n: int = 20_000, judge_epochs: int = 16,
          prior_n: int = PRIOR_N, flow_steps: int = FLOW_STEPS, out: Path = HERE) -> Path:
    """Renders `n` training faces at 64 px (seed `seed`), trains the conditional VAE on them, fits
    its conditional prior, and exports them to `out`; renders `judge_n` other faces (seed `seed + 1`) and
    trains and exports the judge. The prior is fitted to the codes of `prior_n` faces of the
    training recipe (seed `seed`): more than the VAE trained on, since a flow fitted to 20,000
    codes learns them by heart. `part` is "all", "cvae", "judge", "prior" (the prior alone,
    refitted to the decoder and encoder already in `out`) or "export" (nothing trained: the
    networks and prior in `out` written again, as the code now exports them)."""
    start = time.perf_counter()
    paths: list[Path] = []
    if part == "export":
        paths += export(*load_networks(out), load_prior(out), out)
    if part in ("all", "cvae", "prior"):
        if part == "prior":
            dec, enc = load_networks(out)
        else:
            rows, index = training_rows(n, seed)
            batch = render_rows(rows, resolution=64, seed=seed)
            print(f"faces-cvae: rendered {n} faces in {time.perf_counter() - start:.0f} s")
            weights = face_weights(batch.truth) * detail_weights(batch.images, DETAIL)
            dec, enc = fit_cvae(batch.images, index, weights, attribute_targets(batch.truth), epochs, seed, log=print)
        codes, index = training_codes(enc, prior_n, seed)
        print(f"faces-cvae: encoded {prior_n} faces for the prior ({time.perf_counter() - start:.0f} s)")
        paths += export(dec, enc, fit_prior(codes, index, flow_steps, seed, log=print), out)
    if part in ("all", "judge"):
        rows, index = training_rows(judge_n, seed + 1)
        images = render_rows(rows, resolution=64, seed=seed + 1).images
        judge = fit_judge(images, index, judge_epochs, seed + 1, log=print)
        out.mkdir(parents=True, exist_ok=True)
        paths.append(_save(judge, (torch.zeros(2, 3, 64, 64),), out / "judge.pt2"))
    size = sum(p.stat().st_size for p in paths) / 2**20
    print(f"faces-cvae: exported {', '.join(p.name for p in paths)} ({size:.1f} MiB) after {time.perf_counter() - start:.0f} s")
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("part", nargs="?", default="all", choices=("all", "cvae", "judge", "prior", "export"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n", type=int, default=20_000, help="training images of the generator")
    ap.add_argument("--epochs", type=int, default=EPOCHS)
    ap.add_argument("--judge-n", type=int, default=20_000, help="training images of the judge")
    ap.add_argument("--judge-epochs", type=int, default=16)
    ap.add_argument("--prior-n", type=int, default=PRIOR_N, help="faces whose codes the prior is fitted to")
    ap.add_argument("--flow-steps", type=int, default=FLOW_STEPS, help="steps of the prior's coupling flow (0: Gaussians alone)")
    ap.add_argument("--out", type=Path, default=HERE, help="folder for decoder.pt2, encoder.pt2 and judge.pt2")
    args = ap.parse_args(argv)
    train(args.part, seed=args.seed, n=args.n, epochs=args.epochs, judge_n=args.judge_n, judge_epochs=args.judge_epochs,
          prior_n=args.prior_n, flow_steps=args.flow_steps, out=args.out)


if __name__ == "__main__":
    main()

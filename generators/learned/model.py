"""The networks behind `faces-cvae`: a conditional VAE (Kingma et al. 2014, "M2"-style conditioning)
whose decoder takes `[z; c]`, the latent code concatenated with one one-hot block per condition, as
McDuff et al.'s generator takes `[z; theta]` (docs/papers.md#mcduff, Sec. 3).

Why a VAE and not a conditional GAN: on two CPU cores a VAE trains in minutes and stably, and it
comes with the encoder `E(x) -> z` that Denton et al.'s counterfactuals need (docs/papers.md#denton,
Sec. 3); a GAN needs a second network trained to invert it. The price is blur, which the
validation (`searcher validate-generator`) measures instead of hiding.

- `Decoder`: `[z; c]` -> 4 x 4 x 128 -> four stride-2 transposed convolutions -> 64 x 64 RGB in [0, 1].
- `Encoder`: a conv trunk shared by a condition head (logits of every block) and the posterior
  `q(z | x, c)`; `Encoder.infer` feeds the head's argmax back as `c`, so `E(x)` needs only `x`.
- `ConditionalPrior`: `p(z | c)`, fitted after training to the codes of the training images
  (Sohn et al. 2015's conditional prior, fitted ex post as in Ghosh et al. 2020): one Gaussian per
  combination of conditions, then a `CouplingFlow` that bends `N(0, I)` onto the codes the
  Gaussian leaves out. Samples from `N(0, I)` in code space fall where no training code lies and
  decode to smears; one Gaussian per combination puts mass between its clusters, where dark
  faces decode lighter than asked. The shipped decoder takes whitened codes `u` and maps them
  through the prior, so the searched box `u ~ N(0, I)` is the prior.
- `ConditionJudge`: a small CNN, trained apart on other renders, that reads the conditions off an
  image; `validate-generator` asks it whether a generated face shows what was asked.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["ConditionJudge", "ConditionalPrior", "Coupling", "CouplingFlow", "Decoder", "Encoder", "ExportedEncoder", "PriorDecoder", "one_hot_blocks"]

WIDTHS = (128, 96, 64, 32, 16)  # decoder channels at 4, 8, 16, 32, 64 px; its speed: benchmarks/render_speed.py


def _up(c_in: int, c_out: int) -> list[nn.Module]:
    return [nn.ConvTranspose2d(c_in, c_out, 4, 2, 1, bias=False), nn.BatchNorm2d(c_out), nn.LeakyReLU(0.2, inplace=True)]


def _down(c_in: int, c_out: int) -> list[nn.Module]:
    return [nn.Conv2d(c_in, c_out, 4, 2, 1, bias=False), nn.BatchNorm2d(c_out), nn.LeakyReLU(0.2, inplace=True)]


def one_hot_blocks(index: torch.Tensor, sizes: Sequence[int]) -> torch.Tensor:
    """`N x len(sizes)` category indices -> the concatenated one-hot blocks `N x sum(sizes)`."""
    return torch.cat([F.one_hot(index[:, k], s).float() for k, s in enumerate(sizes)], dim=1)


class Decoder(nn.Module):
    """`G(z, c)`: latent `N x D` and one-hot conditions `N x C` -> images `N x 3 x 64 x 64` in [0, 1]."""

    def __init__(self, latent_dim: int, cond_dim: int) -> None:
        super().__init__()
        w = WIDTHS
        self.fc = nn.Linear(latent_dim + cond_dim, w[0] * 16)
        layers: list[nn.Module] = []
        for c_in, c_out in zip(w, w[1:]):
            layers += _up(c_in, c_out)
        self.body = nn.Sequential(nn.LeakyReLU(0.2), *layers, nn.Conv2d(w[-1], 3, 3, 1, 1), nn.Sigmoid())

    def forward(self, z: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        # Channels-last: the same pixels, drawn 1.5-1.8x faster by the CPU's transposed
        # convolutions than in the `view`'s NCHW layout (benchmarks/render_speed.py).
        h = self.fc(torch.cat([z, c], dim=1)).view(-1, WIDTHS[0], 4, 4).contiguous(memory_format=torch.channels_last)
        return self.body(h)


class Encoder(nn.Module):
    """`q(z | x, c)` and a condition head, on images `N x 3 x 64 x 64` in [0, 1]."""

    def __init__(self, latent_dim: int, sizes: Sequence[int]) -> None:
        super().__init__()
        self.sizes = tuple(int(s) for s in sizes)
        self.trunk = nn.Sequential(*_down(3, 32), *_down(32, 64), *_down(64, 128), *_down(128, 128), nn.Flatten())
        self.head = nn.Linear(128 * 16, sum(self.sizes))
        self.posterior = nn.Linear(128 * 16 + sum(self.sizes), 2 * latent_dim)

    def forward(self, x: torch.Tensor, c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(mean, log-variance of q(z | x, c), condition logits)."""
        h = self.trunk(x)
        mu, logvar = self.posterior(torch.cat([h, c], dim=1)).chunk(2, dim=1)
        return mu, logvar, self.head(h)

    def infer(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """`E(x)`: the posterior mean given the head's own guess of the conditions, the logits, and
        that guess as one-hot blocks."""
        h = self.trunk(x)
        logits = self.head(h)
        blocks = logits.split(self.sizes, dim=1)
        c = torch.cat([F.one_hot(b.argmax(dim=1), b.shape[1]).to(h.dtype) for b in blocks], dim=1)
        mu, _ = self.posterior(torch.cat([h, c], dim=1)).chunk(2, dim=1)
        return mu, logits, c


class Coupling(nn.Module):
    """An affine coupling layer (Dinh et al. 2017, "Density estimation using Real NVP", eq. 9)
    conditioned on a combination one-hot `w`: the coordinates outside `mask` are scaled by
    `exp(s)` (`s` bounded by tanh) and shifted by `t`, both functions of the coordinates inside it
    and of `w`, so the layer inverts exactly and its log-determinant is `sum s`."""

    def __init__(self, mask: torch.Tensor, cells: int, hidden: int) -> None:
        super().__init__()
        self.register_buffer("mask", mask.float())
        dim = len(mask)
        self.net = nn.Sequential(nn.Linear(dim + cells, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(),
                                 nn.Linear(hidden, 2 * dim))
        nn.init.zeros_(self.net[-1].weight)  # starts as the identity
        nn.init.zeros_(self.net[-1].bias)

    def _shift_scale(self, y: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        s, t = self.net(torch.cat([y * self.mask, w], dim=1)).chunk(2, dim=1)
        return torch.tanh(s) * (1 - self.mask), t * (1 - self.mask)

    def forward(self, u: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        s, t = self._shift_scale(u, w)
        return u * s.exp() + t

    def inverse(self, v: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(`u`, log |det du/dv| per row)."""
        s, t = self._shift_scale(v, w)
        return (v - t) * (-s).exp(), -s.sum(1)


class CouplingFlow(nn.Module):
    """`layers` conditional couplings whose masks alternate even/odd and first/second half of the
    coordinates: an invertible map of `N(0, I)` onto a density of codes per combination."""

    def __init__(self, dim: int, cells: int, layers: int, hidden: int) -> None:
        super().__init__()
        kept = (slice(0, None, 2), slice(1, None, 2), slice(0, dim // 2), slice(dim // 2, None))  # even, odd, halves
        masks = [torch.zeros(dim).index_fill_(0, torch.arange(dim)[kept[k % 4]], 1.0) for k in range(layers)]
        self.layers = nn.ModuleList(Coupling(m, cells, hidden) for m in masks)

    def forward(self, u: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            u = layer(u, w)
        return u

    def inverse(self, v: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(`u`, log |det du/dv| per row): `-log p(v | w) = |u|^2 / 2 - logdet + const`."""
        logdets = []
        for layer in reversed(self.layers):
            v, d = layer.inverse(v, w)
            logdets.append(d)
        return v, torch.stack(logdets).sum(0)


class ConditionalPrior(nn.Module):
    """`p(z | c)` for the combination `k` of conditions that the one-hot blocks `c` spell (`k` in
    `itertools.product` order of the blocks): `z = m_k + L_k f(u, k)` with `u ~ N(0, I)`, `f` the
    `flow` (the identity without one, leaving `N(m_k, L_k L_k^T)`). `forward(u, c)` maps whitened
    codes to codes, `whiten` maps back."""

    def __init__(self, sizes: Sequence[int], means: torch.Tensor, chols: torch.Tensor, flow: CouplingFlow | None = None) -> None:
        super().__init__()
        self.sizes = tuple(int(s) for s in sizes)
        self.register_buffer("means", means.float())
        self.register_buffer("chols", chols.float())
        self.register_buffer("inverses", torch.linalg.inv(chols.double()).float())
        self.flow = flow

    def cell(self, c: torch.Tensor) -> torch.Tensor:
        """`N x K` one-hot of the combination: the outer product of the blocks, flattened."""
        blocks = c.split(self.sizes, dim=1)
        w = blocks[0]
        for b in blocks[1:]:
            w = (w[:, :, None] * b[:, None, :]).flatten(1)
        return w

    def forward(self, u: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        w = self.cell(c)
        v = u if self.flow is None else self.flow(u, w)
        return w @ self.means + torch.einsum("nk,kij,nj->ni", w, self.chols, v)

    def whiten(self, z: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        w = self.cell(c)
        v = torch.einsum("nk,kij,nj->ni", w, self.inverses, z - w @ self.means)
        return v if self.flow is None else self.flow.inverse(v, w)[0]


class PriorDecoder(nn.Module):
    """The shipped generator: whitened codes `u` and conditions `c` -> `G(m_k + L_k u, c)`."""

    def __init__(self, decoder: Decoder, prior: ConditionalPrior) -> None:
        super().__init__()
        self.decoder, self.prior = decoder, prior

    def forward(self, u: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.prior(u, c), c)


class ExportedEncoder(nn.Module):
    """The encoder as the checkpoint format wants it: images in, `(u, condition logits)` out, `u`
    the posterior mean whitened by the prior of the conditions the head reads."""

    def __init__(self, encoder: Encoder, prior: ConditionalPrior) -> None:
        super().__init__()
        self.encoder, self.prior = encoder, prior

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mu, logits, c = self.encoder.infer(x)
        return self.prior.whiten(mu, c), logits


class ConditionJudge(nn.Module):
    """Condition logits (`N x sum(sizes)`) of images `N x 3 x 64 x 64` in [0, 1]: four stride-2
    conv blocks (16, 32, 64, 64 channels) and a linear layer, the trained targets' small CNN."""

    def __init__(self, sizes: Sequence[int]) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        width = 3
        for out in (16, 32, 64, 64):
            layers += _down(width, out)
            width = out
        self.net = nn.Sequential(*layers, nn.Flatten(), nn.Dropout(0.3), nn.Linear(width * 16, sum(sizes)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)

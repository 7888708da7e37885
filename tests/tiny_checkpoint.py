"""A conditional generator in miniature, with an encoder and a judge, and the spec that describes
it: what the `checkpoint` plug-in's tests (and the generator-validation tests) load."""

import textwrap

import torch
from torch import nn

D, SIDE = 4, 16
CONDITIONS = {"gender": ["masculine", "feminine"], "mood": ["calm", "glad", "cross"]}


class TinyGAN(nn.Module):
    """`(z, c) -> N x 3 x 16 x 16` in [-1, 1]: a conditional generator in miniature."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(D + 5, 3 * SIDE * SIDE)

    def forward(self, z: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return torch.tanh(3 * self.fc(torch.cat([z, c], dim=1))).view(-1, 3, SIDE, SIDE)


class TinyEncoder(nn.Module):
    """Images in [-1, 1] -> (z, condition logits)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(1)
        self.fc = nn.Linear(3 * SIDE * SIDE, D + 5)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out = self.fc(x.flatten(1))
        return out[:, :D], out[:, D:]


def spec_text(file: str, dim: int = D, side: int = SIDE, value_range: str = "[-1.0, 1.0]", encoder: str | None = None,
              extra: str = "") -> str:
    conditions = "".join(f'\n[[conditions]]\nname = "{k}"\ncategories = {v!r}\n'.replace("'", '"') for k, v in CONDITIONS.items())
    enc = f'\n[encoder]\nfile = "{encoder}"\n' if encoder else ""
    return textwrap.dedent(f"""
        [model]
        file = "{file}"
        layout = "NCHW"
        range = {value_range}
        resolution = {side}
        {extra}
        [latent]
        dim = {dim}
        prior = "normal"
        bound = 3.0
        """) + conditions + enc


def export_pt2(model: nn.Module, example: tuple, path) -> None:
    """What a user writes: torch.export with a dynamic batch dimension, saved as .pt2."""
    batch = torch.export.Dim("batch", min=1, max=4096)
    program = torch.export.export(model, example, dynamic_shapes=tuple({0: batch} for _ in example))
    torch.export.save(program, str(path))


class TinyJudge(nn.Module):
    """Images in [-1, 1] -> condition logits."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(2)
        self.fc = nn.Linear(3 * SIDE * SIDE, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x.flatten(1))

"""Headless matplotlib for every command that writes a figure: pyplot on the Agg backend (no
display on a server or in CI) and one way to finish a figure (layout, PNG, close)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["pyplot", "save"]


def pyplot() -> Any:
    """`matplotlib.pyplot` on the Agg backend, imported on first use (a second or so)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig: Any, path: str | Path, *, title: str | None = None, dpi: int = 120) -> Path:
    """Titles (optionally), lays out, writes `fig` as a PNG at `path`, closes it; returns `path`."""
    if title is not None:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    pyplot().close(fig)
    return Path(path)

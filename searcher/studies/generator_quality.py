"""Validation of a learned generator, as McDuff et al. characterised theirs before searching it
(docs/papers.md#mcduff, "Validation of Image Generation"): for every combination of its
conditions, `n` samples with `z` from the prior, and

- **conditioning**: how often the face shows the condition it was asked for, read by a classifier
  trained on real data (the spec's `[judge]`, or a classify target whose labels are a condition's
  categories), never by one trained on the generator's samples; the same judge on reference
  images of the condition says how often it is right on real data (the ceiling);
- **detection**: how often real detectors (dlib's CNN by default) find a face;
- **quality**: the Frechet distance between dlib face-descriptor statistics (128-d, the verifier's
  ResNet) of generated images and of reference images of the same condition (the paper reports FID
  7.7-8.1 across its groups), beside the same distance between two reference samples (the floor
  that finite samples give), and extrapolated to infinitely many samples (`fd_inf`): a distance
  between finite samples is biased up by an amount that falls as 1/n, and at a few hundred faces
  that amount, added to every group's distance, narrows the ratio between them;
- **encoder**: reconstruction of reference images through `E(x) -> z -> G(z, c)` (PSNR, and how
  often the encoder reads the condition right), when the generator has an encoder; and the
  Frechet distance of the second reference sample's reconstructions (`fd_recon`): what the
  decoder loses with the prior out of the way. Where `fd` is near `fd_recon`, the samples are as far
  from the references as the decoder's best rendering of real faces is, and a better prior would
  not close the gap; where `fd` is well above it, the prior is what puts them there.
- **yardstick** (`fd_blur`): the distance of the second reference sample blurred (Gaussian, sigma
  1 px per 64 px of side): the same damage done to every group, so what the descriptor itself
  makes of it. dlib's descriptor moves further for some faces than for others under one blur, and a
  spread of `fd` across groups is the generator's only beyond the spread of `fd_blur`.

Distances and rates need a reference (`generator.reference(conditions, n, seed)`) where noted;
without one those columns are left out. Each row also keeps a few images for a contact sheet. The
measures themselves are computed in `searcher.analysis.generator_quality`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from searcher.analysis.generator_quality import blurred, psnr, summarise_validation
from searcher.errors import ParameterError
from searcher.space import Categorical
from searcher.validation import check_int

__all__ = ["GeneratorValidation", "cell_label", "condition_cells", "condition_grid", "condition_samples", "embeddings", "validate_generator"]

SHEET = 16  # images kept per condition for its contact sheet
GRID = 8  # codes in the grid of every combination


@dataclass
class GeneratorValidation:
    """What `validate_generator` measured.

    Attributes:
        table: one row per condition combination, then one per condition category (`group`
            "skin_type=V-VI"), then "all": sample counts, rates with Wilson 95% intervals, the
            Frechet distances, reconstruction.
        sheets: group -> (images, captions) kept for contact sheets.
        grid: (images, captions): the same few codes under every combination, one row each, so
            that what a condition changes (and what it leaves alone) shows at a glance.
        generator: the generator's name.
    """

    table: pd.DataFrame
    sheets: dict[str, tuple[np.ndarray, list[list[str]]]] = field(default_factory=dict)
    grid: tuple[np.ndarray, list[list[str]]] | None = None
    generator: str = ""

    def write(self, out: str | Path) -> list[Path]:
        """Writes validation.csv, validation.md, conditions.png (the grid) and one contact sheet per
        combination (sheet_<group>.png) to `out`; returns the paths."""
        from searcher.figures.contact_sheet import contact_sheet

        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        paths = [out / "validation.csv", out / "validation.md"]
        self.table.to_csv(paths[0], index=False)
        paths[1].write_text(f"# {self.generator}: validation\n\n{self.markdown()}\n")
        if self.grid is not None:
            paths.append(out / "conditions.png")
            contact_sheet(self.grid[0], labels=self.grid[1], columns=GRID).save(paths[-1])
        for group, (images, captions) in self.sheets.items():
            path = out / f"sheet_{re.sub(r'[^A-Za-z0-9]+', '_', group).strip('_')}.png"
            contact_sheet(images, labels=captions, columns=8).save(path)
            paths.append(path)
        return paths

    def spread(self) -> pd.DataFrame:
        """How far apart the groups' Frechet distances lie, as McDuff et al. compare FID across their
        groups: largest over smallest `fd` over the combinations, and over each condition's
        categories (`over`), the groups at both ends, the same ratio of `fd_inf` (the distances
        freed of their finite-sample bias) and of `fd / fd_blur` (the spread beyond what the
        descriptor makes of one blur). Empty without distances."""
        t = self.table
        if "fd" not in t or t["fd"].isna().all():
            return pd.DataFrame(columns=["over", "fd_spread", "lowest", "highest", "fd_inf_spread", "blur_units_spread"]).set_index("over")
        groups = t["group"].astype(str)
        sets = {"combinations": t[~groups.str.contains("=") & (groups != "all")]}
        for name in dict.fromkeys(g.split("=")[0] for g in groups if "=" in g):
            sets[name] = t[groups.str.startswith(f"{name}=")]
        rows = []
        for over, part in sets.items():
            by_group = part.set_index("group")
            fd = by_group["fd"].dropna()
            if len(fd) < 2:
                continue
            units = (by_group["fd"] / by_group["fd_blur"]).dropna() if "fd_blur" in by_group else pd.Series(dtype=float)
            unbiased = by_group["fd_inf"].dropna() if "fd_inf" in by_group else pd.Series(dtype=float)
            rows.append({"over": over, "fd_spread": fd.max() / fd.min(), "lowest": fd.idxmin(), "highest": fd.idxmax(),
                         "fd_inf_spread": unbiased.max() / unbiased.min() if len(unbiased) > 1 else float("nan"),
                         "blur_units_spread": units.max() / units.min() if len(units) > 1 else float("nan")})
        return pd.DataFrame(rows).set_index("over")

    def markdown(self) -> str:
        """The table as markdown: rates as percentages with their intervals; then the spread of the
        Frechet distances across groups (`spread`)."""
        t = self.table
        rates = [c for c in t.columns if c.endswith(".rate")]
        cols = ["group", "n", *rates, *[c for c in ("fd", "fd_inf", "fd_floor", "fd_blur", "fd_recon", "psnr", "encoder_conditions") if c in t.columns]]
        head = "| " + " | ".join(c.removesuffix(".rate") for c in cols) + " |"
        lines = [head, "|" + "---|" * len(cols)]
        for _, row in t.iterrows():
            cells = []
            for c in cols:
                v = row[c]
                if c.endswith(".rate"):
                    lo, hi = row[c.replace(".rate", ".low")], row[c.replace(".rate", ".high")]
                    cells.append("" if pd.isna(v) else f"{v:.1%} [{lo:.0%}, {hi:.0%}]")
                elif c in ("group", "n"):
                    cells.append(str(v))
                elif c == "encoder_conditions":
                    cells.append("" if pd.isna(v) else f"{v:.1%}")
                else:
                    cells.append("" if pd.isna(v) else f"{v:.3g}")
            lines.append("| " + " | ".join(cells) + " |")
        spread = self.spread()
        if len(spread):
            fd = t.set_index("group")["fd"]
            parts = [f"over the {over if over == 'combinations' else f'categories of {over}'} **{r.fd_spread:.2f}x** "
                     f"({r.lowest} {fd[r.lowest]:.3g} to {r.highest} {fd[r.highest]:.3g}"
                     + (f"; {r.fd_inf_spread:.2f}x extrapolated to infinitely many samples" if pd.notna(r.fd_inf_spread) else "")
                     + (f"; {r.blur_units_spread:.2f}x in units of the blur)" if pd.notna(r.blur_units_spread) else ")")
                     for over, r in spread.iterrows()]
            lines += ["", "Frechet distances, largest over smallest: " + ", ".join(parts) + "."]
        return "\n".join(lines)


def condition_cells(generator: Any) -> list[dict[str, str]]:
    """Every combination of the generator's conditions (its categorical parameters)."""
    conditions = [p for p in generator.space.params if isinstance(p, Categorical)]
    if not conditions:
        return [{}]
    return [dict(zip([c.name for c in conditions], combo)) for combo in itertools.product(*[c.choices for c in conditions])]


def cell_label(cell: Mapping[str, str]) -> str:
    return " ".join(cell.values()) or "all"


def validate_generator(
    generator: Any,
    n: int = 100,
    seed: int = 0,
    detectors: Sequence[str] = ("dlib-cnn",),
    judges: Mapping[str, str] | None = None,
    descriptor: str | None = "dlib-verify",
    progress: Callable[[Iterable], Iterable] | None = None,
) -> GeneratorValidation:
    """Validates `generator` (an instance) on `n` samples per condition combination.

    Args:
        n: samples per combination (and reference images per combination).
        seed: seed of the latent draws (the reference uses seed + 1 and, for the floor, seed + 2).
        detectors: detect targets whose face-found rate is reported.
        judges: condition -> classify target (by name) whose labels are that condition's
            categories; conditions not named here are read by the generator's own judge, if any.
        descriptor: the verify target whose embeddings the Frechet distance compares (None: skip).
        progress: wraps the loop over combinations (a progress bar).
    """
    import targets

    n = check_int("n", n, 2, 100_000)
    cells = condition_cells(generator)
    names = list(cells[0])
    judges = dict(judges or {})
    for cond, target_name in judges.items():
        if cond not in names:
            raise ParameterError(f"--judge names the condition {cond!r}, which the generator does not have. Its conditions: {', '.join(names) or 'none'}.")
        labels = tuple(getattr(targets.load(target_name), "labels", ()))
        choices = tuple(generator.space[cond].choices)
        if set(labels) != set(choices):
            raise ParameterError(f"The judge {target_name!r} answers {labels}, not the categories of {cond!r} {choices}.")
    judge_targets = {c: targets.load(t) for c, t in judges.items()}
    own_judge = getattr(generator, "has_judge", False)
    detect_targets = {d: targets.load(d) for d in detectors}
    embedder = targets.load(descriptor) if descriptor else None
    referenced = callable(getattr(generator, "reference", None))
    encodes = getattr(generator, "has_encoder", False)

    per_image: list[pd.DataFrame] = []
    embedded: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    sheets: dict[str, tuple[np.ndarray, list[list[str]]]] = {}
    loop = progress(cells) if progress else cells
    for k, cell in enumerate(loop):
        label = cell_label(cell)
        batch = condition_samples(generator, k, cell, n, seed)
        rows = pd.DataFrame({"group": label, **{f"asked.{c}": v for c, v in cell.items()}}, index=range(n))
        ref = generator.reference(cell, n, seed=seed + 1) if referenced else None
        sources = {"": batch.images} if ref is None else {"": batch.images, "reference_": ref.images}
        for prefix, images in sources.items():
            read = generator.judge(images) if own_judge else pd.DataFrame(index=range(n))
            for c, t in judge_targets.items():
                read[c] = t.predict(images).label
            for c in names:
                if c in read:
                    rows[f"{prefix}conditioned.{c}"] = np.asarray(read[c]) == cell[c]
        for prefix, images in sources.items():
            for d, t in detect_targets.items():
                rows[f"{prefix}detected.{d}"] = np.asarray(t.predict(images).label, bool)
        if ref is not None:
            if embedder is not None:
                floor = generator.reference(cell, n, seed=seed + 2)
                sets = [batch.images, ref.images, floor.images, blurred(floor.images)]
                if encodes:  # the floor's faces, encoded and drawn again: the decoder's own distance
                    sets.append(_redrawn(generator, floor.images, cell)[1])
                embedded[label] = tuple(embeddings(embedder, im) for im in sets)
            if encodes:
                coded, again = _redrawn(generator, ref.images, cell)
                rows["psnr"] = psnr(ref.images, again)
                rows["encoder_conditions"] = [all(p[c] == cell[c] for c in names) for p in coded]
        per_image.append(rows)
        caption = [[label, *[f"{d}: {'face' if f else 'MISS'}" for d, f in ((d, rows.loc[i, f"detected.{d}"]) for d in detect_targets)]]
                   for i in range(min(SHEET, n))]
        sheets[label] = (batch.images[:SHEET], caption)
    grid, rows_of = condition_grid(generator, seed=seed)
    captions = [[cell_label(cell)] for cell in rows_of for _ in range(GRID)]
    return GeneratorValidation(summarise_validation(per_image, embedded, names), sheets, (grid, captions), getattr(generator, "name", type(generator).__name__))


def condition_samples(generator: Any, k: int, cell: Mapping[str, str], n: int, seed: int) -> Any:
    """The `n` samples of combination number `k`: its conditions asked for, `z` (and anything
    else) from the prior (seed + 1000 k); `generator.reference(cell, n, seed + 1)` is their reference."""
    return generator.generate([{**p, **cell} for p in generator.space.sample(n, seed=seed + 1000 * k)], seed=seed)


def condition_grid(generator: Any, codes: int = GRID, seed: int = 0) -> tuple[np.ndarray, list[dict[str, str]]]:
    """The same `codes` draws of the prior (seed + 7) under every combination of the generator's
    conditions, a row of images per combination: what a condition changes, and what it leaves
    alone. Returns the images (row-major) and the combination of each row."""
    cells = condition_cells(generator)
    draws = generator.space.sample(codes, seed=seed + 7)
    return np.concatenate([generator.generate([{**p, **cell} for p in draws], seed=seed).images for cell in cells]), cells


def _redrawn(generator: Any, images: np.ndarray, cell: Mapping[str, str]) -> tuple[list[dict[str, Any]], np.ndarray]:
    """`images` encoded (`E(x)`, conditions read by the encoder) and drawn again under `cell`'s
    conditions: (the encoded parameters, the images drawn)."""
    coded = generator.encode_params(images)
    return coded, generator.generate([{**p, **cell} for p in coded]).images


def embeddings(embedder: Any, images: np.ndarray) -> np.ndarray:
    """Descriptors of the images in which the verifier found a face (`k x 128`)."""
    found = [np.asarray(e, float) for e in embedder.predict(images).embedding if e is not None]
    return np.stack(found) if found else np.zeros((0, 0))

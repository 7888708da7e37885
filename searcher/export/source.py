"""What an export reads: the judged images of a campaign, of every campaign of a comparison, or of a
transect run, as one table with the right answer for each image.

A campaign's images are its stored PNGs; a transect run stores latents, not pixels, so its images
are rendered again from `latents.npy` with the generator, seed and keys it was run with (the
renderers are deterministic, so they are the images the target saw).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from searcher.analysis.modes import mode_labels
from searcher.analysis.transects import TRANSECT_CONFIG
from searcher.campaign import CampaignConfig, CampaignResult, load_campaign, search_space
from searcher.campaign.store import encode_png, image_file, not_kept
from searcher.errors import ParameterError
from searcher.objective import FAILURE, Judge, Objective
from searcher.space import Space

__all__ = ["Source", "read_source"]


@dataclass
class Source:
    """The images an export can draw from, one row each.

    `rows` columns: `id` (unique file stem), `campaign`, `trial`, `strategy`, `source` (search,
    audit or transect), `prediction`, `score`, `boxes` (a detect target's `(x0, y0, x1, y1)` pixel
    boxes), `loss`, `failure`, `mode` (failure mode, -1 for none), `x` (the point searched, one-hot
    blocks weighted as `Cube.weighted` does, for spreading), `true_label`, `error`, `excluded`, and
    one `param.NAME` and `truth.NAME` column per parameter and truth column.
    """

    kind: str
    dir: Path
    rows: pd.DataFrame
    judge: Judge
    config: dict[str, Any]
    objective: Objective
    space: Space
    held: dict[str, Any] = field(default_factory=dict)
    campaigns: dict[str, Path] = field(default_factory=dict)  # campaign name -> its directory (where its images are)
    results: list[CampaignResult] = field(default_factory=list)  # the campaigns as loaded for `rows` (one snapshot of each store)

    @property
    def task(self) -> str:
        return self.judge.task

    def png(self, rows: pd.DataFrame, batch_size: int = 64) -> Iterator[tuple[int, bytes]]:
        """(row position, PNG bytes) of each row of `rows` (a selection of `self.rows`), in order:
        a campaign's stored files as they are, a transect run's images rendered again. A trial whose
        image the campaign did not keep is a one-line ParameterError (`not_kept`)."""
        if self.kind != "transect":
            for pos, (name, digest, trial) in enumerate(zip(rows["campaign"], rows["image"], rows["trial"])):
                if not isinstance(digest, str):  # a campaign that keeps a share of its images (`images`)
                    raise ParameterError(not_kept(self.campaigns[name], f"trial {trial}"))
                path = image_file(self.campaigns[name], digest)
                try:
                    yield pos, path.read_bytes()
                except OSError as exc:
                    raise ParameterError(f"The image {path} of {self.dir} is missing or unreadable ({exc.strerror or exc}). "
                                         "Nothing was exported; re-run the campaign into a new directory.") from None
            return
        latents = np.load(self.dir / "latents.npy")
        gen, seed = self.objective.generator, int(self.config["seed"])
        index, keys = rows["image"].to_numpy(int), [("transect", int(t)) for t in rows["transect"]]
        for start in range(0, len(rows), batch_size):
            batch = gen.from_latent(latents[index[start : start + batch_size]], seed=seed, keys=keys[start : start + batch_size])
            for i, image in enumerate(batch.images):
                yield start + i, encode_png(image)



def read_source(directory: str | Path) -> Source:
    """The export source in `directory`: a campaign (campaign.sqlite), a comparison (runs/*/) or a
    transect run (transects.csv).

    Raises:
        ParameterError: nothing exportable there, or a directory holding no judged image.
    """
    path = Path(directory)
    if (path / "campaign.sqlite").is_file():
        return _campaigns(path, "campaign", [path])
    runs = sorted(p.parent for p in path.glob("runs/*/campaign.sqlite"))
    if runs:
        return _campaigns(path, "comparison", runs)
    if (path / "transects.csv").is_file():
        return _transects(path)
    raise ParameterError(f"Nothing to export at {path}: expected a campaign (campaign.sqlite), a comparison (runs/*/campaign.sqlite) "
                         "or a transect run (transects.csv).")


def _expand(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """One `column.NAME` column per key of the dicts in `column`."""
    return pd.DataFrame(list(frame[column]), index=frame.index).add_prefix(f"{column}.")


def _campaigns(path: Path, kind: str, dirs: Sequence[Path]) -> Source:
    results = [load_campaign(d) for d in dirs]
    if not results[0].config:
        raise ParameterError(f"The campaign at {dirs[0]} has no configuration stored, so its generator's space is unknown; it cannot be exported.")
    config = CampaignConfig(**{**CampaignConfig.with_defaults(results[0].config), "out": str(dirs[0])})  # from_dir opens the store to resume it
    objective = config.spec().build()
    space, held = search_space(objective.generator.space, config.vary, config.fix, config.cube)
    parts = []
    runs = [r.trials for r in results]
    modes = mode_labels(runs, [r.config.get("strategy", "") for r in results], blocks=space.cube.blocks)
    for result, trials, mode in zip(results, runs, modes):
        if trials.empty:
            continue
        t = trials.drop(columns=[c for c in trials.columns if c.startswith("param.")])
        frame = pd.DataFrame({
            "id": [f"{result.dir.name}-{s:04d}-{i}" for s, i in zip(t["step"], t["idx"])],
            "campaign": result.dir.name,
            "trial": [f"{s}-{i}" for s, i in zip(t["step"], t["idx"])],
            "strategy": result.config.get("strategy", ""),
            "source": t["source"].fillna("search"),
            "prediction": t["label"], "score": t["score"], "boxes": t["boxes"], "loss": t["loss"],
            "failure": t["loss"] >= FAILURE, "mode": mode,
            "x": list(space.cube.weighted(np.array(t["x"].tolist(), float))),
            "image": t["image"], "error": t["error"], "excluded": t["excluded"],
        }, index=t.index)
        parts.append(pd.concat([frame, _expand(t, "params").rename(columns=lambda c: c.replace("params.", "param.")),
                                _expand(t, "truth")], axis=1))
    if not parts:
        raise ParameterError(f"{path} holds no evaluations yet; run the {kind} first.")
    rows = pd.concat(parts, ignore_index=True)
    rows["true_label"] = _true_labels(rows, objective.judge)
    return Source(kind, path, rows, objective.judge, config.config(), objective, space, held, {d.name: d for d in dirs}, results)


def _true_labels(rows: pd.DataFrame, judge: Judge) -> list[Any]:
    truth = rows[[c for c in rows.columns if c.startswith("truth.")]].rename(columns=lambda c: c[6:]).to_dict("records")
    return [judge.true_label(t) for t in truth]


def _transects(path: Path) -> Source:
    import generators
    import targets

    config_path = path / TRANSECT_CONFIG
    if not config_path.is_file():
        raise ParameterError(f"{path} is a transect run without {TRANSECT_CONFIG} (written since this release), so its images "
                             "cannot be rendered again; run `searcher transect` again into a new --out.")
    config = json.loads(config_path.read_text())
    table = pd.read_csv(path / "transects.csv")
    gen = generators.load(config["generator"], resolution=config["resolution"])
    target = targets.load(config["target"], **dict(config.get("target_options") or {}))
    objective = Objective(gen, target, truth_column=config.get("truth_column"), cut=config.get("cut"), margin=0.0)
    latents = np.load(path / "latents.npy")[table["image"].to_numpy(int)]  # row i: the code of table row i
    names = list(gen.space.latent.names) if gen.space.latent is not None else []
    truth_cols = [c for c in table.columns if c not in ("transect", "image", "pruned", "target_label", "target_score", "target_error", "error")
                  and not c.startswith(("annot_", "value_", "idx_", "decision_"))]
    pruned = table["pruned"].astype(object).where(table["pruned"].notna(), "").astype(str)
    kept = pruned == ""
    rows = pd.DataFrame({
        "id": [f"{path.name}-t{t:04d}-{i}" for t, i in zip(table["transect"], table["image"])],
        "campaign": path.name, "trial": [f"t{t}-{i}" for t, i in zip(table["transect"], table["image"])],
        "strategy": "transect", "source": "transect",
        "prediction": table["target_label"], "score": table["target_score"], "boxes": [[] for _ in range(len(table))],
        "loss": table["error"],
        "failure": table["error"] >= FAILURE, "mode": -1,
        "x": list(latents),
        "image": table["image"], "transect": table["transect"],
        "error": table["target_error"], "excluded": np.where(kept, None, "pruned: " + pruned),
    })
    params = pd.DataFrame(latents, columns=names).add_prefix("param.") if names else pd.DataFrame(index=table.index)
    rows = pd.concat([rows, params, table[truth_cols].add_prefix("truth.")], axis=1)
    rows["true_label"] = _true_labels(rows, objective.judge)
    return Source("transect", path, rows, objective.judge, config, objective, gen.space, {})

"""`searcher doctor DIR`: what state a campaign directory is in, what to do about it, and
`--salvage OUT`, which saves what can be read of a damaged one.

Reads the store read-only (`searcher.campaign.store.connect_read_only`: exactly the path given,
also in a read-only directory) and checks everything a resume, an analysis or an export parses:
the stored configuration (by `CampaignConfig`'s own parser), each batch's strategy state (restored
into the strategy a resume builds), and every trial row; then the images (`decode`: each decoded).
It also reports the last committed batch, the trials of an unfinished one and target errors left to
retry. SQLite rows on damaged pages are read one at a time, so the rows around them are kept.

`salvage` copies the trials that read and parse, with their images and (when it parses) the
configuration, into a new store that report, analyze, gallery and export read. The new store is
marked salvaged and is never resumed: its strategy's history has holes a resume cannot fill.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from searcher.campaign.store import Store, connect_read_only, image_file
from searcher.errors import ParameterError, SearcherError
from searcher.outputs import check_output_dir

__all__ = ["Checkup", "Salvage", "check_campaign", "salvage"]

_JSON_COLUMNS = ("params", "x", "boxes", "truth", "label")
_BAD = object()  # what `_loads` gives for text that is not JSON


@dataclass
class Checkup:
    """What `check_campaign` found; `ok` when nothing needs doing."""

    dir: Path
    damaged: str | None = None  # no row can be read: the file is not a campaign store
    blocked: str | None = None  # the store cannot be read here (a read-only directory with an unmerged journal)
    read_only: bool = False
    salvaged_from: str | None = None
    trials: int = 0
    steps: int = 0
    unfinished: int = 0  # trials stored for a batch not yet committed (a resume completes it)
    errors: int = 0
    lost_rows: int = 0  # rows SQLite cannot read (damaged pages)
    lost_error: str | None = None
    config_problem: str | None = None
    bad_states: list[str] = field(default_factory=list)
    bad_rows: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (self.damaged is None and self.blocked is None and self.config_problem is None and not self.lost_rows
                and not (self.bad_states or self.bad_rows or self.missing or self.unreadable))

    def summary(self) -> str:
        if self.blocked is not None:
            return f"{self.blocked}\nnot checked"
        if self.damaged is not None:
            images = sum(1 for _ in (self.dir / "images").rglob("*.png")) if (self.dir / "images").is_dir() else 0
            return (f"{self.dir}: campaign.sqlite is damaged or not a campaign store ({self.damaged}); no trial can be read "
                    f"from it, and its {images} images under images/ are intact. Move campaign.sqlite aside and run the "
                    "campaign again into this or another --out.\nproblems found")
        lines = [f"{self.dir}: {self.trials} trials in {self.steps} committed batches"
                 + (f", and {self.unfinished} of an unfinished batch (`searcher hunt --resume` completes it)" if self.unfinished else "")]
        if self.salvaged_from:
            lines.append(f"salvaged from {self.salvaged_from} by `searcher doctor --salvage`: report, analyze and export read it; "
                         "it is not resumed")
        if self.read_only:
            lines.append(f"{self.dir} is read-only: report, analyze, gallery and export read it as it is; to resume it, copy it "
                         "elsewhere and resume the copy")
        if self.errors:
            lines.append(f"{self.errors} trials ended in a target error; `searcher hunt --resume` evaluates them again (--retries)")
        if self.lost_rows:
            lines.append(f"{self.lost_rows} rows cannot be read from campaign.sqlite, which is damaged ({self.lost_error})")
        if self.config_problem:
            lines.append(f"the stored configuration does not parse ({self.config_problem}); `searcher hunt --resume` cannot rebuild the campaign")
        fixes = (("strategy states that do not parse", self.bad_states, "`searcher hunt --resume` cannot rebuild the strategy"),
                 ("rows that do not parse", self.bad_rows, "resume, analysis and export cannot read them"),
                 ("images missing", self.missing, "re-run the campaign into a new --out to render them"),
                 ("images unreadable", self.unreadable, "re-run the campaign into a new --out to render them"))
        for what, items, fix in fixes:
            if items:
                shown = ", ".join(items[:5]) + (f" and {len(items) - 5} more" if len(items) > 5 else "")
                lines.append(f"{len(items)} {what}: {shown}; {fix}")
        if self.lost_rows or self.config_problem or self.bad_states or self.bad_rows:
            saved = self.trials - len(self.bad_rows)
            config = "; the configuration does not parse" if self.config_problem else " and the configuration"
            lines.append(f"{saved} trials can be saved: `searcher doctor {self.dir} --salvage NEW` copies them (with their images"
                         f"{config}) into a new store NEW that report, analyze and export read; it is not resumed")
        lines.append("healthy" if self.ok else "problems found")
        return "\n".join(lines)


@dataclass
class _Contents:
    """What could be read of a store: its rows as dicts, the parsed configuration, and the checks' findings."""

    up: Checkup
    meta: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] | None = None
    trials: list[dict[str, Any]] = field(default_factory=list)  # readable rows that parse, in (step, idx) order
    steps: list[dict[str, Any]] = field(default_factory=list)  # readable steps whose state parses


def check_campaign(directory: str | os.PathLike, decode: bool = False) -> Checkup:
    """Checks the campaign in `directory` read-only; `decode` also decodes every image (slower)."""
    contents = _inspect(Path(directory))
    up = contents.up
    for row in contents.trials:
        problem = _image_problem(up.dir, row.get("image"), decode)
        if problem is not None:
            where = image_file(up.dir, row["image"]).relative_to(up.dir)
            (up.missing if problem == "missing" else up.unreadable).append(f"trial {row['step']}-{row['idx']} ({where})")
    return up


def _inspect(path: Path) -> _Contents:
    """Reads and checks everything of the store in `path` but the images."""
    up = Checkup(path, read_only=path.is_dir() and not os.access(path, os.W_OK))
    contents = _Contents(up)
    db_path = path / "campaign.sqlite"
    if not db_path.is_file():
        up.damaged = "campaign.sqlite is missing"
        return contents
    try:
        db = connect_read_only(db_path)
    except ParameterError as exc:
        up.blocked = str(exc)
        return contents
    except sqlite3.DatabaseError as exc:
        up.damaged = str(exc)
        return contents
    try:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if missing := [t for t in ("meta", "trials", "steps") if t not in tables]:
            up.damaged = f"it has no {' or '.join(missing)} table"
            return contents
        meta, _, _ = _read_rows(db, "meta", "key")
        trials, up.lost_rows, up.lost_error = _read_rows(db, "trials", "step, idx")
        steps, lost_steps, _ = _read_rows(db, "steps", "step")
    except sqlite3.DatabaseError as exc:
        up.damaged = str(exc)
        return contents
    finally:
        db.close()
    contents.meta = {row["key"]: row["value"] for row in meta}
    up.salvaged_from = contents.meta.get("salvaged")
    space_dim, strategy = _check_config(contents)
    for row in steps:
        name = f"step {row['step']}"
        state = _loads(row["state"])
        problem = None if isinstance(state, dict) else "not a JSON object"
        if problem is None and strategy is not None:
            try:
                strategy.restore(state)
            except Exception as exc:  # noqa: BLE001 - whatever the strategy's own restore trips on, a resume trips on too
                problem = f"{type(exc).__name__}: {exc}"
        if problem is None:
            contents.steps.append(row)
        else:
            up.bad_states.append(f"{name} ({problem})")
    up.bad_states += [f"{lost_steps} unreadable rows"] if lost_steps else []
    committed = {row["step"] for row in steps}
    up.trials, up.steps = len(trials), len(committed)
    for row in trials:
        name = f"trial {row['step']}-{row['idx']}"
        up.unfinished += row["step"] not in committed
        up.errors += row.get("error") is not None
        if _row_parses(row, space_dim):
            contents.trials.append(row)
        else:
            up.bad_rows.append(name)
    return contents


def _check_config(contents: _Contents) -> tuple[int | None, Any]:
    """Parses the stored configuration as a resume does (`CampaignConfig.with_defaults`, then the
    constructor's checks) and builds the strategy a resume builds; returns the searched space's
    dimension and the strategy, None for what could not be built (the problem is noted)."""
    from searcher.campaign.config import CampaignConfig

    up = contents.up
    text = contents.meta.get("config")
    if text is None:
        up.config_problem = "none is stored"
        return None, None
    stored = _loads(text)
    try:
        if not isinstance(stored, dict):
            raise ParameterError(f"not a JSON object: {str(text)[:80]!r}")
        config = CampaignConfig.from_stored(stored, up.dir)
    except (SearcherError, TypeError, ValueError) as exc:
        up.config_problem = str(exc)
        return None, None
    contents.config = stored
    try:
        return _resumed_strategy(config)
    except Exception as exc:  # noqa: BLE001 - a generator or strategy that cannot be built here: a resume stops there too
        up.config_problem = f"its generator or strategy cannot be built here: {type(exc).__name__}: {exc}"
        return None, None


def _resumed_strategy(config: Any) -> tuple[int, Any]:
    """The searched space's dimension and the strategy a resume of `config` builds, without
    building its target (a remote target would be contacted, a paid one charged)."""
    import generators
    from searcher.campaign.config import search_space
    from searcher.strategies import make_strategy

    generator = generators.load(config.generator, **dict(config.generator_options))
    space, _ = search_space(generator.space, config.vary, config.fix, config.cube)
    return space.dim, make_strategy(config.strategy, space, seed=config.seed, budget=config.budget, **config.strategy_arguments())


def _read_rows(db: sqlite3.Connection, table: str, order: str) -> tuple[list[dict[str, Any]], int, str | None]:
    """Every row of `table` that SQLite can read, as dicts in `order`; and how many rows it cannot
    read (on damaged pages) with the first error. A table that cannot be read in one pass is read a
    row at a time by rowid, so that the rows on intact pages are kept."""
    try:
        cursor = db.execute(f"SELECT * FROM {table} ORDER BY {order}")
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()], 0, None
    except sqlite3.DatabaseError as exc:
        first = str(exc)
    top = db.execute(f"SELECT MAX(rowid) FROM {table}").fetchone()[0] or 0
    rows, lost = [], 0
    for rowid in range(1, top + 1):
        try:
            cursor = db.execute(f"SELECT * FROM {table} WHERE rowid = ?", (rowid,))
            names = [d[0] for d in cursor.description]
            rows += [dict(zip(names, row)) for row in cursor.fetchall()]
        except sqlite3.DatabaseError:
            lost += 1
    keys = [k.strip() for k in order.split(",")]
    return sorted(rows, key=lambda r: tuple(r[k] for k in keys)), lost, first


def _loads(text: Any) -> Any:
    """`text` parsed as JSON, or `_BAD`."""
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return _BAD


def _row_parses(row: dict[str, Any], dim: int | None) -> bool:
    """Whether a trial row parses as resume and analysis read it: JSON columns, `params` an object,
    `x` a list of numbers (of the searched space's dimension, when known)."""
    values = {col: _loads(row[col]) for col in _JSON_COLUMNS if row.get(col) is not None}
    if any(v is _BAD for v in values.values()):
        return False
    x = values.get("x")
    return (isinstance(values.get("params"), dict) and isinstance(x, list)
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in x) and (dim is None or len(x) == dim))


def _image_problem(directory: Path, digest: str | None, decode: bool) -> str | None:
    """"missing" or "unreadable" for the image `digest` of the campaign in `directory` (empty, or,
    with `decode`, not decoding); None when it is fine or the trial has none."""
    if digest is None:
        return None
    png = image_file(directory, digest)
    if not png.is_file():
        return "missing"
    return "unreadable" if png.stat().st_size == 0 or decode and not _decodes(png) else None


def _decodes(png: Path) -> bool:
    try:
        with Image.open(png) as im:
            im.load()
        return True
    except (OSError, ValueError):
        return False


@dataclass
class Salvage:
    """What `salvage` saved: trials and images copied, trials and images left behind."""

    source: Path
    out: Path
    trials: int
    dropped: int
    images: int
    images_lost: int
    config: bool

    def summary(self) -> str:
        left = f"; {self.dropped} trials that do not read or parse were left behind" if self.dropped else ""
        lost = f"; {self.images_lost} images were missing or unreadable (their trials are kept without one)" if self.images_lost else ""
        config = "with its configuration" if self.config else "without a configuration (it did not parse)"
        return (f"salvaged {self.trials} trials and {self.images} images of {self.source} into {self.out}, {config}{left}{lost}. "
                f"`searcher report`, `analyze` and `export` read {self.out}; it is not resumed.")


def salvage(directory: str | os.PathLike, out: str | os.PathLike) -> Salvage:
    """Copies the trials of the campaign in `directory` that read and parse, with their images and
    its configuration (when it parses), into a new store at `out` (new or empty), marked salvaged.

    Written in a hidden directory beside `out` and renamed into place, so `out` is whole or absent.

    Raises:
        ParameterError: `out` is not new or empty (`searcher.outputs.check_output_dir`), or no trial
            can be read from `directory`.
    """
    source = Path(directory)
    if os.path.isdir(out) and not os.path.islink(out) and any(Path(out).iterdir()):
        raise ParameterError(f"--salvage {out} already exists and is not empty; a salvage writes a new store. "
                             "Nothing was written: choose a new or empty directory.")
    target = check_output_dir(out, flag="--salvage", replace=True, sources=[source], command="searcher doctor --salvage")
    contents = _inspect(source)
    up = contents.up
    if up.blocked is not None:
        raise ParameterError(up.blocked)
    if up.damaged is not None or not contents.trials:
        why = up.damaged or "no trial reads and parses"
        raise ParameterError(f"Nothing to salvage from {source}: {why}. Its images under images/ are what is left; "
                             "run the campaign again into a new --out.")
    staging = target.with_name(f".{target.name}.salvage-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    images: dict[str, bool] = {}  # digest -> copied (False: missing or unreadable)
    trials = []
    try:
        for row in contents.trials:
            digest = row.get("image")
            if digest is not None and digest not in images:
                images[digest] = _image_problem(source, digest, decode=True) is None
                if images[digest]:
                    copy = image_file(staging, digest)
                    copy.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(image_file(source, digest), copy)
            trials.append(row if digest is None or images[digest] else {**row, "image": None})
        meta = {}
        if contents.config is not None:
            meta["config"] = json.dumps({**contents.config, "out": str(target)}, sort_keys=True)
        if isinstance(_loads(contents.meta.get("spending")), dict):
            meta["spending"] = contents.meta["spending"]
        steps = [(s["step"], s["size"], s["state"], s["created"]) for s in contents.steps]
        store = Store(staging)
        try:
            store.put_salvaged(source.absolute(), trials, steps, meta)
        finally:
            store.close()
        if target.exists():
            target.rmdir()  # empty: checked above
        staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    copied = sum(images.values())
    return Salvage(source, target, len(trials), up.trials + up.lost_rows - len(trials), copied, len(images) - copied,
                   contents.config is not None)

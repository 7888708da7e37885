"""What a large campaign costs besides its generator and target: the search, the store and the report.

    python benchmarks/scale.py                                   # random and bo-modes, 1,000 evaluations (a few minutes)
    python benchmarks/scale.py --budgets 1000,10000,100000 --strategies random --images 0.01
    python benchmarks/scale.py --budgets 100000 --strategies random --readers   # then report, compare and export of it
    python benchmarks/scale.py --budgets 100000 --strategies bo-modes,bo-modes:overlap --batch bo-modes=1024 --images 0.01

Each campaign runs the planted generator (6-D, five boxes, 3% of the volume) against the planted
target with a fixed delay per image (`--delay`, 1 ms: a ResNet behind TorchScript on a GPU), in a
fresh process, so its peak memory (`ru_maxrss`) is its own. It prints, per strategy and budget:

- the share of wall time spent outside the generator and the target (the search, the loop, the
  store), of the whole run and of the loop alone (from the first proposal on: without imports and
  set-up), and where it went: proposals (`ask`) and the store's writes, as shares of the whole run
  (the writes run on the loop's writer thread while the next batch is evaluated, and a strategy
  named `NAME:overlap` runs with `overlap`, its proposals beside the evaluation: their share is
  time they took, not time the loop waited for them);
- proposal time per point against the history size (median over the steps near each size);
- store bytes per trial: the SQLite file (with its -wal) and the images (their bytes, and the
  disk they take in 4 KB blocks);
- peak memory.

It draws the proposal time per point against the history, and the share outside against the
budget, to `--out` (PNG). With `--readers`, it then times `searcher report` of the largest random
campaign (seconds and size of the page) and checks that `compare` (resumed over it) and `export`
(failures, at most 1,000, with a random control) of it work. Campaigns are written under `--dir`.
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from searcher.campaign import Campaign
from searcher.campaign import loop as campaign_loop
from searcher.campaign.store import Store
from searcher.testing.planted import PlantedGenerator, PlantedTarget

PLANTED = {"dim": 6, "k": 5, "volume": 0.03}


def _timed(owner: type, name: str, spent: dict[str, float], key: str, log: list | None = None) -> None:
    """Wraps `owner.name` so that the seconds it takes add up in `spent[key]` (and, with `log`,
    each call's (first argument's length or step, seconds) is appended)."""
    inner: Callable[..., Any] = getattr(owner, name)

    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        t = time.perf_counter()
        out = inner(self, *args, **kwargs)
        dt = time.perf_counter() - t
        spent[key] = spent.get(key, 0.0) + dt
        if log is not None:
            log.append((args[0], args[1], dt, t))
        return out

    setattr(owner, name, wrapper)


def _disk(directory: Path) -> dict[str, float]:
    """Bytes of the SQLite store (file and -wal) and of the images (content, and 4 KB blocks on disk)."""
    sqlite = sum(p.stat().st_size for p in directory.glob("campaign.sqlite*"))
    images = [p.stat() for p in (directory / "images").rglob("*.png")]
    return {"sqlite": sqlite, "image_bytes": sum(s.st_size for s in images), "image_disk": sum(s.st_blocks * 512 for s in images),
            "image_files": len(images)}


def measure(strategy: str, budget: int, batch: int, delay: float, images: float, out: str, overlap: bool = False) -> dict[str, Any]:
    """Runs one campaign (in the calling process, meant to be a fresh one) and returns its figures."""
    spent: dict[str, float] = {}
    asks: list[tuple[int, int, float]] = []
    _timed(PlantedGenerator, "generate", spent, "generator")
    _timed(PlantedTarget, "predict", spent, "target")
    _timed(campaign_loop._Loop, "search", spent, "propose", asks)
    _timed(Store, "add_trials", spent, "store")
    _timed(Store, "finish_step", spent, "store")
    shutil.rmtree(out, ignore_errors=True)
    campaign = Campaign(generator="planted", target="planted", strategy=strategy, budget=budget, batch=batch, seed=0, out=out,
                        generator_options=PLANTED, target_options={**PLANTED, "delay": delay}, images=images, overlap=overlap)
    start = time.perf_counter()
    result = campaign.run(progress=False)
    wall = time.perf_counter() - start
    inside = spent.get("generator", 0.0) + spent.get("target", 0.0)
    per_point = [(step * batch, dt / n) for step, n, dt, _ in asks]
    looped = time.perf_counter() - asks[0][3] if asks else wall  # from the first proposal on: without imports and set-up
    return {"strategy": strategy + (" (overlap)" if overlap else ""), "budget": budget, "batch": batch, "images": images, "wall": wall, "loop": looped,
            "outside": (wall - inside) / wall, "outside_loop": (looped - inside) / looped,
            "propose": spent.get("propose", 0.0) / wall, "store": spent.get("store", 0.0) / wall,
            "failures": int(result.trials["failure"].eq(True).sum()), "per_point": per_point,
            "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, **_disk(Path(out))}


def _in_child(*args: Any) -> dict[str, Any]:
    """`measure(*args)` in a fresh process: its peak memory is this campaign's alone."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(measure, args)


def _at(per_point: list[tuple[int, float]], history: int) -> float:
    """Median proposal seconds per point over the steps whose history lies within 10% of `history`."""
    near = [s for h, s in per_point if abs(h - history) <= 0.1 * history]
    return float(np.median(near)) if near else float("nan")


def plot(rows: list[dict[str, Any]], path: Path) -> Path:
    """Proposal seconds per point against history size, and the share of wall time outside the generator and target."""
    from searcher.figures import pyplot, save

    fig, (left, right) = pyplot().subplots(1, 2, figsize=(10, 3.6))
    for r in rows:
        h, s = np.array(r["per_point"]).T
        bins = np.unique(np.geomspace(max(h.min(), 1), h.max() + 1, 30).astype(int))
        where = np.digitize(h, bins)
        xs = [h[where == b].mean() for b in np.unique(where)]
        ys = [np.median(s[where == b]) for b in np.unique(where)]
        left.plot(xs, ys, marker=".", label=f"{r['strategy']}, batch {r['batch']}, {r['budget']:,}")
    left.set(xscale="log", yscale="log", xlabel="history (points evaluated)", ylabel="proposal seconds per point")
    left.legend(fontsize=7)
    for strategy in dict.fromkeys(r["strategy"] for r in rows):
        mine = sorted((r["budget"], 100 * r["outside"], 100 * r["outside_loop"]) for r in rows if r["strategy"] == strategy)
        budget, whole, loop = zip(*mine)
        line = right.plot(budget, whole, marker="o", label=f"{strategy}, whole run")[0]
        right.plot(budget, loop, marker="o", linestyle="--", color=line.get_color(), label=f"{strategy}, the loop alone")
    right.set(xscale="log", xlabel="budget (evaluations)", ylabel="% of wall time outside generator + target")
    right.legend(fontsize=7)
    return save(fig, path, dpi=100)


def readers(directory: Path, budget: int, batch: int, delay: float, images: float, scratch: Path) -> None:
    """Times `searcher report` of the campaign in `directory`, and compare (resumed over it: it sits
    at COMPARISON/runs/random-s0, with the same `images` setting) and export of it."""
    from searcher.export import export
    from searcher.report import report
    from searcher.studies.compare import compare

    t, cpu = time.perf_counter(), time.process_time()
    page = report(directory, out=scratch / "report.html")
    print(f"report: {time.perf_counter() - t:.1f} s ({time.process_time() - cpu:.1f} s of CPU: on shared cores, what it would take "
          f"alone), {page.stat().st_size / 1e6:.2f} MB, peak memory of this process "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB", flush=True)
    t = time.perf_counter()
    table = compare(directory.parent.parent, generator="planted", target="planted", strategies=["random"], seeds=[0], budget=budget,
                    batch=batch, progress=False, generator_options=PLANTED, target_options={**PLANTED, "delay": delay}, images=images)
    print(f"compare (resumed, nothing left to run): {time.perf_counter() - t:.1f} s, {int(table['failures'].iloc[0])} failures, "
          f"{int(table['modes'].iloc[0])} modes", flush=True)
    t = time.perf_counter()
    export(directory, scratch / "export", limit=1000, spread=True, control="random")
    written = sum(1 for _ in (scratch / "export").rglob("*.png"))
    print(f"export (failures, --max 1000 --spread --control random): {time.perf_counter() - t:.1f} s, {written} images", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budgets", default="1000", help="comma-separated (default: 1000)")
    ap.add_argument("--strategies", default="random,bo-modes", help="comma-separated; NAME:overlap asks the next batch while one is "
                    "evaluated (default: random,bo-modes)")
    ap.add_argument("--batch", default="random=256,bo-modes=4", help="STRATEGY=BATCH, comma-separated (default: random=256,bo-modes=4)")
    ap.add_argument("--delay", type=float, default=0.001, help="the target's seconds per image (default: 0.001)")
    ap.add_argument("--images", type=float, default=1.0, help="share of passing trials whose image is kept (default: 1, all)")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/scale"), help="where campaigns are written (default: /tmp/scale)")
    ap.add_argument("--out", type=Path, default=Path("/tmp/scale/scale.png"), help="the curve (default: /tmp/scale/scale.png)")
    ap.add_argument("--readers", action="store_true", help="time report, compare and export of the largest random campaign")
    args = ap.parse_args()
    batches = {k: int(v) for k, v in (item.split("=") for item in args.batch.split(","))}
    budgets = [int(b) for b in args.budgets.split(",")]
    rows = []
    print("| strategy | batch | budget | wall s | outside gen+target | loop only | propose | store | s/point at 2k | at max | "
          "SQLite B/trial | image B/trial (disk) | peak MB | failures |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|", flush=True)
    for entry in args.strategies.split(","):
        strategy, _, how = entry.partition(":")
        if how not in ("", "overlap"):
            ap.error(f"--strategies takes NAME or NAME:overlap; got {entry!r}")
        for budget in budgets:
            largest = args.readers and strategy == "random" and budget == max(budgets)
            out = args.dir / "compare" / "runs" / "random-s0" if largest else args.dir / f"{strategy}-{how or 'plain'}-{budget}"
            r = _in_child(strategy, budget, batches[strategy], args.delay, args.images, str(out), how == "overlap")
            rows.append(r)
            last = max(h for h, _ in r["per_point"])
            print(f"| {r['strategy']} | {r['batch']} | {budget:,} | {r['wall']:.1f} | {r['outside']:.1%} | {r['outside_loop']:.1%} | {r['propose']:.1%} | "
                  f"{r['store']:.1%} | {_at(r['per_point'], 2000):.2e} | {_at(r['per_point'], last):.2e} | "
                  f"{r['sqlite'] / budget:.0f} | {r['image_bytes'] / budget:.0f} ({r['image_disk'] / budget:.0f}) | "
                  f"{r['maxrss_mb']:.0f} | {r['failures']} |", flush=True)
    print(f"curve: {plot(rows, args.out)}")
    if args.readers:
        scratch = args.dir / "readers"
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        readers(args.dir / "compare" / "runs" / "random-s0", max(budgets), batches["random"], args.delay, args.images, scratch)


if __name__ == "__main__":
    main()

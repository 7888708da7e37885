"""The retraining harness behind `searcher retrain` (see the package docstring for the arms)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from PIL import Image

from searcher.causal import wilson_interval
from searcher.errors import ParameterError
from searcher.export.control import random_control
from searcher.export.select import select
from searcher.export.source import Source, read_source
from searcher.figures.retrain import plot_retraining
from searcher.strategies import DEFAULT_STRATEGY
from searcher.validation import check_int, check_names

__all__ = ["ARMS", "RetrainResult", "gains", "retrain", "score_table", "summary_lines"]

ARMS = ("base", "hard", "random", "spread", "balanced")


@dataclass
class RetrainResult:
    """Scores of every arm x seed x test set (`scores`), errors per subgroup (`groups`), and how
    many images each added arm added (`n_added`)."""

    out: Path
    scores: pd.DataFrame
    groups: pd.DataFrame
    n_added: int
    notes: list[str] = field(default_factory=list)

    def table(self, metric: str = "balanced_accuracy") -> pd.DataFrame:
        """Mean and sd over seeds of `metric` per arm (rows, in `ARMS` order) and test set."""
        return score_table(self.scores, metric)

    def gains(self, test: str | None = None) -> dict[str, float]:
        """Balanced-accuracy gain over the base of each added arm and the share of the gap closed (see `gains`)."""
        return gains(self.scores, test)

    def summary(self) -> str:
        lines = [f"retraining, {self.scores['seed'].nunique()} seeds, {self.n_added} images added per arm -> {self.out}", *self.notes]
        return "\n".join(lines + summary_lines(self.scores))


def score_table(scores: pd.DataFrame, metric: str = "balanced_accuracy") -> pd.DataFrame:
    """Mean and sd over seeds of `metric` per arm (rows, in `ARMS` order) and test set, from the
    rows of scores.csv (arm x seed x test set)."""
    t = scores.groupby(["arm", "test"], sort=False)[metric].agg(["mean", "std", "count"]).reset_index()
    return t.sort_values("arm", key=lambda a: a.map({k: i for i, k in enumerate(ARMS)}), kind="stable").reset_index(drop=True)


def gains(scores: pd.DataFrame, test: str | None = None) -> dict[str, float]:
    """Balanced-accuracy gain over the base of each added arm on `test` (default: the first test
    set), per seed then averaged, and the share of the base-to-balanced gap that `hard`,
    `spread` and `random` close: `gain_ARM` and `gap_closed_ARM` (empty without a base)."""
    s = scores[scores["test"] == (test or scores["test"].iloc[0])]
    wide = s.pivot(index="seed", columns="arm", values="balanced_accuracy")
    out: dict[str, float] = {}
    if "base" not in wide:
        return out
    for arm in ("hard", "random", "spread", "balanced"):
        if arm in wide:
            out[f"gain_{arm}"] = float((wide[arm] - wide["base"]).mean())
    if "balanced" in wide:
        gap = out["gain_balanced"]
        for arm in ("hard", "spread", "random"):
            if arm in wide and gap:
                out[f"gap_closed_{arm}"] = out[f"gain_{arm}"] / gap
    return out


def summary_lines(scores: pd.DataFrame) -> list[str]:
    """The lines of summary.md that say what retraining bought, per test set: each arm's balanced
    accuracy (mean +- sd over seeds), the gain of each added arm over the base and the share of
    the gap to balanced that `hard` closes. A report quotes them as summary.md states them."""
    lines = []
    for test, grp in score_table(scores).groupby("test", sort=False):
        lines.append(f"{test} test set, balanced accuracy (mean +- sd over seeds):")
        lines += [f"  {r['arm']:<9} {r['mean']:.1%} +- {0 if pd.isna(r['std']) else r['std']:.1%}" for _, r in grp.iterrows()]
        g = gains(scores, test)
        if "gain_hard" in g and "gain_random" in g:
            lines.append(f"  gain over base: hard {g['gain_hard']:+.1%}, spread {g.get('gain_spread', float('nan')):+.1%}, "
                         f"random {g['gain_random']:+.1%}" + (f"; hard closes {g['gap_closed_hard']:.0%} of the gap to balanced"
                                                              if "gap_closed_hard" in g else ""))
    return lines


def _labelled(rows: pd.DataFrame, pngs: Sequence[bytes], labels: Sequence[Any], size: tuple[int, int]) -> Any:
    """Rows and their PNGs as `LabelledImages` at the base set's `size` (PIL's antialiased bilinear)."""
    from targets.base import LabelledImages

    images = []
    for png in pngs:
        with Image.open(io.BytesIO(png)) as im:
            im = im.convert("RGB")
            images.append(np.asarray(im if im.size == size[::-1] else im.resize(size[::-1], Image.Resampling.BILINEAR)))
    index = {str(lab): i for i, lab in enumerate(labels)}
    y = np.array([index[str(v)] for v in rows["true_label"]], np.int64)
    truth = rows[[c for c in rows.columns if c.startswith("truth.")]].rename(columns=lambda c: c[6:]).reset_index(drop=True)
    return LabelledImages(np.stack(images), y, truth)


def _concat(a: Any, b: Any) -> Any:
    from targets.base import LabelledImages

    return LabelledImages(np.concatenate([a.images, b.images]), np.concatenate([a.labels, b.labels]),
                          pd.concat([a.truth, b.truth], ignore_index=True))


def _hard_source(target: str | None, hard: str | Path | None, out: Path, budget: int, strategy: str, progress: bool) -> Source:
    """The campaign whose failures are added: `hard`, or a search of `target` run (or resumed) in `out/search`."""
    if hard is not None:
        return read_source(hard)
    if target is None:
        raise ParameterError("retrain needs hard examples: give hard= (a campaign or comparison directory) or a target to search.")
    from searcher.campaign import Campaign
    from searcher.campaign.loop import run_or_resume

    run_or_resume(Campaign(generator="faces", target=target, strategy=strategy, budget=budget, seed=0, out=str(out / "search")),
                  progress=progress, desc=f"{strategy} vs {target}")
    return read_source(out / "search")


def retrain(
    target: str | None = "gender-cnn",
    *,
    hard: str | Path | None = None,
    n: int = 500,
    seeds: Sequence[int] = (0, 1, 2),
    out: str | Path = "runs/retrain",
    recipe: Any = None,
    arms: Sequence[str] = ARMS,
    budget: int = 1000,
    strategy: str = DEFAULT_STRATEGY,
    train_n: int | None = None,
    epochs: int | None = None,
    test_n: int = 2000,
    progress: bool = False,
) -> RetrainResult:
    """Trains every arm for every seed with one recipe and tests each model (see the package docstring).

    Args:
        target: a trainable target (one with `recipe()`: gender-cnn, smile-cnn); it is also what
            the search hunts when `hard` is not given.
        hard: a campaign or comparison directory whose failures are the hard examples.
        n: images added by the hard, random and spread arms (fewer if the search found fewer).
        seeds: one training run per arm per seed (data draw, initial weights, batch order).
        recipe: a `targets.base.TrainingRecipe` for your own model (then `target` only names the search's).
        arms: a subset of `ARMS`.
        budget, strategy: the search run when `hard` is not given.
        train_n, epochs, test_n: shrink the shipped recipe (training images, passes, test images).

    Writes `out/scores.csv`, `out/groups.csv`, `out/retraining.png` and `out/summary.md`.
    """
    from tqdm import tqdm

    import targets

    check_int("-n", n, 1)
    seeds = [check_int("--seeds", s, 0) for s in seeds]
    if not seeds:
        raise ParameterError("retrain needs at least one seed.")
    arms = check_names(list(arms), ARMS, what="arm", flag="--arms")
    if recipe is None:
        if target is None:
            raise ParameterError("retrain needs a trainable target or a recipe=.")
        model = targets.load(target)
        if not callable(getattr(model, "recipe", None)):
            trainable = [name for name in targets.available() if name in ("gender-cnn", "smile-cnn")]
            raise ParameterError(f"{target!r} cannot be retrained here: it has no training recipe. Trainable targets: "
                                 f"{', '.join(trainable)}; for your own model pass recipe= (a targets.base.TrainingRecipe).")
        recipe = model.recipe(n=train_n, epochs=epochs, test_n=test_n)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)

    src = _hard_source(target, hard, out, budget, strategy, progress)
    if src.task != "classify" or [str(v) for v in src.judge.labels] != [str(v) for v in recipe.labels]:
        raise ParameterError(f"The hard examples of {src.dir} judge {src.config.get('target')!r} ({src.task}, labels "
                             f"{list(src.judge.labels)}); the recipe trains labels {list(recipe.labels)}. Search the model you retrain.")
    fails = select(src.rows, "classify", "failures")
    k = min(n, len(fails))
    notes = [] if k == n else [f"the search found {len(fails)} failures, fewer than n={n}: every added arm adds {k}"]
    base0 = recipe.base(seeds[0])
    size = base0.images.shape[1:3]
    added: dict[str, Any] = {}
    for arm, spread in (("hard", False), ("spread", True)):
        if arm in arms:
            rows = select(src.rows, "classify", "failures", limit=k, spread=spread)
            added[arm] = _labelled(rows, [png for _, png in src.png(rows)], recipe.labels, size)
    if "random" in arms:
        rows, pngs = random_control(src, k, seed=0)
        added["random"] = _labelled(rows, pngs, recipe.labels, size)

    tests = recipe.tests()
    scores, groups = [], []
    with tqdm(total=len(seeds) * len(arms), desc="retraining", unit="model", disable=not progress) as bar:
        for seed in seeds:
            base = base0 if seed == seeds[0] else recipe.base(seed)
            for arm in arms:
                data = recipe.balanced(seed) if arm == "balanced" else base if arm == "base" else _concat(base, added[arm])
                model = recipe.train(data, seed)
                for name, test in tests.items():
                    pred = np.asarray(recipe.evaluate(model, test))
                    wrong = pred != test.labels
                    recall = [float((~wrong[test.labels == i]).mean()) for i in range(len(recipe.labels)) if (test.labels == i).any()]
                    scores.append({"arm": arm, "seed": seed, "test": name, "train_size": len(data),
                                   "accuracy": float((~wrong).mean()), "balanced_accuracy": float(np.mean(recall))})
                    for group, mask in recipe.groups(test.truth).items():
                        groups.append({"arm": arm, "seed": seed, "test": name, "group": group, "n": int(mask.sum()),
                                       "errors": int(wrong[mask].sum())})
                bar.update()
    result = RetrainResult(out, pd.DataFrame(scores), pd.DataFrame(groups), k, notes)
    _write(result)
    return result


def pooled_groups(groups: pd.DataFrame) -> pd.DataFrame:
    """Errors per arm x test set x group pooled over seeds, with the Wilson interval of the pooled
    rate and the sd of the per-seed rates."""
    g = groups.assign(rate=groups["errors"] / groups["n"].where(groups["n"] > 0))
    pooled = g.groupby(["arm", "test", "group"], sort=False).agg(n=("n", "sum"), errors=("errors", "sum"), sd=("rate", "std")).reset_index()
    pooled["error"] = pooled["errors"] / pooled["n"].where(pooled["n"] > 0)
    lo, hi = wilson_interval(pooled["errors"].to_numpy(), pooled["n"].to_numpy())
    return pooled.assign(ci_low=lo, ci_high=hi)


def _write(result: RetrainResult) -> None:
    out = result.out
    result.scores.to_csv(out / "scores.csv", index=False)
    pooled = pooled_groups(result.groups)
    pooled.to_csv(out / "groups.csv", index=False)
    plot_retraining(result.scores, pooled, out / "retraining.png", order=[a for a in ARMS if a in set(result.scores["arm"])])
    table = result.table()
    lines = ["# Retraining", "", result.summary(), "", "| arm | test set | balanced accuracy, mean | sd over seeds | seeds |", "|---|---|---|---|---|"]
    lines += [f"| {r['arm']} | {r['test']} | {r['mean']:.1%} | {0 if pd.isna(r['std']) else r['std']:.1%} | {r['count']} |"
              for _, r in table.iterrows()]
    lines += ["", "Error by subgroup, pooled over seeds (Wilson 95% interval; sd of the per-seed rates):", "",
              "| arm | test set | group | errors / n | error | 95% CI | sd |", "|---|---|---|---|---|---|---|"]
    lines += [f"| {r['arm']} | {r['test']} | {r['group']} | {r['errors']}/{r['n']} | {r['error']:.1%} | "
              f"[{r['ci_low']:.1%}, {r['ci_high']:.1%}] | {0 if pd.isna(r['sd']) else r['sd']:.1%} |" for _, r in pooled.iterrows()]
    lines += ["", "![balanced accuracy and subgroup errors per arm](retraining.png)", ""]
    (out / "summary.md").write_text("\n".join(lines))

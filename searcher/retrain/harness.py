"""The retraining harness behind `searcher retrain` (see the package docstring for the arms)."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from PIL import Image

from searcher.causal import wilson_interval
from searcher.errors import ParameterError
from searcher.export.control import random_control
from searcher.export.recipes import RECIPES, build_set, mode_causes
from searcher.export.select import select
from searcher.export.source import Source, read_source
from searcher.figures.retrain import plot_retraining
from searcher.retrain.journal import Journal
from searcher.strategies import DEFAULT_STRATEGY
from searcher.validation import check_choice, check_int, check_names, checked

__all__ = ["ARMS", "DEFAULT_ARMS", "UPWEIGHTED", "WEIGHTS", "RetrainResult", "choose_weight", "gains", "labelled_images", "per_seed_lines",
           "retrain", "score_arm", "score_table", "summary_lines", "trainable", "upweighted_key", "validation_score"]

ARMS = ("base", "hard", "random", "spread", "balanced-hard", "twins", "crossed", "crossed-draws", "decorrelated", "upweight", "random-upweight", "balanced")
DEFAULT_ARMS = ("base", "hard", "random", "spread", "balanced")
WEIGHTS = (1, 2, 4, 8)
UPWEIGHTED = ("hard", "spread", *RECIPES)
"""The added sets the upweight arms can weigh (`retrain(upweighted=...)`, `--upweighted`)."""
TRAINABLE = ("gender-cnn", "smile-cnn", "glasses-cnn")  # the shipped targets with a training recipe, as an error names them
VALIDATION_SEED = 1000  # validation draws base(VALIDATION_SEED + the first seed): a training draw no arm trains on
_MIN_GROUP = 10  # a validation group smaller than this does not decide the weight


@dataclass
class RetrainResult:
    """Scores of every arm x seed x test set (`scores`), errors per subgroup (`groups`), and how
    many images each added arm added (`n_added`)."""

    out: Path
    scores: pd.DataFrame
    groups: pd.DataFrame
    n_added: int
    notes: list[str] = field(default_factory=list)
    weight: int | None = None

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
    """Balanced-accuracy gain over the base of each arm on `test` (default: the first test set),
    per seed then averaged, and the share of the base-to-balanced gap each added arm closes:
    `gain_ARM` and `gap_closed_ARM` (empty without a base)."""
    s = scores[scores["test"] == (test or scores["test"].iloc[0])]
    wide = s.pivot(index="seed", columns="arm", values="balanced_accuracy")
    out: dict[str, float] = {}
    if "base" not in wide:
        return out
    arms = _in_order(a for a in wide if a != "base")
    for arm in arms:
        out[f"gain_{arm}"] = float((wide[arm] - wide["base"]).mean())
    if "balanced" in wide:
        gap = out["gain_balanced"]
        for arm in arms:
            if arm != "balanced" and gap:
                out[f"gap_closed_{arm}"] = out[f"gain_{arm}"] / gap
    return out


def _in_order(arms: Iterable[str]) -> list[str]:
    """`arms` in `ARMS` order, any other arm (a lab's: `lab/planted_oracle.py`) after them by name, balanced last."""
    rank = {a: i for i, a in enumerate(ARMS[:-1])}
    return sorted(arms, key=lambda a: (a == "balanced", rank.get(a, len(rank)), a))


def summary_lines(scores: pd.DataFrame) -> list[str]:
    """The lines of summary.md that say what retraining bought, per test set: each arm's balanced
    accuracy (mean +- sd over seeds), the gain of each added arm over the base and the share of
    the gap to balanced each closes. A report quotes them as summary.md states them."""
    lines = []
    for test, grp in score_table(scores).groupby("test", sort=False):
        lines.append(f"{test} test set, balanced accuracy (mean +- sd over seeds):")
        lines += [f"  {r['arm']:<15} {r['mean']:.1%} +- {0 if pd.isna(r['std']) else r['std']:.1%}" for _, r in grp.iterrows()]
        g = gains(scores, test)
        added = [k[len("gain_"):] for k in g if k.startswith("gain_") and k != "gain_balanced"]
        if added:
            closed = [f"{a} {g[f'gap_closed_{a}']:.0%}" for a in added if f"gap_closed_{a}" in g]
            lines.append("  gain over base: " + ", ".join(f"{a} {g[f'gain_{a}']:+.1%}" for a in added)
                         + (f"; share of the gap to balanced closed: {', '.join(closed)}" if closed else ""))
    return lines


def per_seed_lines(scores: pd.DataFrame) -> list[str]:
    """summary.md's table of every arm on every seed and test set: balanced accuracy and its gain over that seed's base."""
    base = scores[scores["arm"] == "base"].set_index(["seed", "test"])["balanced_accuracy"]
    lines = ["| arm | seed | test set | balanced accuracy | gain over base |", "|---|---|---|---|---|"]
    for _, r in scores.sort_values(["test", "seed"], kind="stable").iterrows():
        gain = r["balanced_accuracy"] - base[r["seed"], r["test"]] if (r["seed"], r["test"]) in base.index and r["arm"] != "base" else None
        lines.append(f"| {r['arm']} | {r['seed']} | {r['test']} | {r['balanced_accuracy']:.1%} | {'-' if gain is None else f'{gain:+.1%}'} |")
    return lines


def validation_score(pred: np.ndarray, data: Any, rules: Sequence[Mapping[str, list[Any]]]) -> float:
    """How a model does on a validation split, as the weight of `upweight` is chosen: its worst
    accuracy over the groups label x (inside any of the campaign's failure-mode rules, or not),
    groups of fewer than `_MIN_GROUP` images left out; the mean recall over labels when no rule
    can be read off the split's truth. The groups are the campaign's modes, found by the search:
    Just Train Twice chooses on worst-group accuracy, and this is the group split the engine knows."""
    right = np.asarray(pred) == data.labels
    inside = np.zeros(len(right), bool)
    for rule in rules:
        if all(a in data.truth for a in rule):
            held = np.ones(len(right), bool)
            for a, r in rule.items():
                v = data.truth[a].to_numpy()
                held &= np.isin(v.astype(str), [str(x) for x in r]) if isinstance(r[0], str) else (v >= r[0]) & (v <= r[1])
            inside |= held
    split = [inside, ~inside] if inside.any() else [np.ones(len(right), bool)]
    cells = [(data.labels == y) & s for y in np.unique(data.labels) for s in split]
    rates = [float(right[c].mean()) for c in cells if c.sum() >= _MIN_GROUP]
    return min(rates) if inside.any() and rates else float(np.mean([right[data.labels == y].mean() for y in np.unique(data.labels)]))


def choose_weight(recipe: Any, base: Any, added: Any, seed: int, grid: Sequence[int], validation: Any,
                  rules: Sequence[Mapping[str, list[Any]]], journal: Journal | None = None) -> tuple[int, dict[int, float], dict[int, Any]]:
    """Just Train Twice's upweighting (Liu et al., ICML 2021): the weight `w` of the added images
    (each repeated `w` times, which SGD sees as a weight) that scores best (`validation_score`) on
    `validation`, a split of the recipe's training distribution; the smallest `w` on a tie. The test
    sets are never read here. With a `journal`, a weight it has scored is not trained again and each
    new score is kept as it comes. Returns `w`, each weight's score and the models trained here (with `seed`)."""
    scores, models = dict(journal.validated) if journal is not None else {}, {}
    for w in grid:
        if w in scores:
            continue
        models[w] = recipe.train(_concat(base, _repeat(added, w)), seed)
        scores[w] = validation_score(recipe.evaluate(models[w], validation), validation, rules)
        if journal is not None:
            journal.add_validated(w, scores[w])
    best = max(grid, key=lambda w: (scores[w], -w))
    return best, scores, models


def labelled_images(rows: pd.DataFrame, pngs: Sequence[bytes], labels: Sequence[Any], size: tuple[int, int]) -> Any:
    """Rows (a `true_label` column and `truth.*` columns, as an export's) and their PNGs as
    `LabelledImages` at the base set's `size` (PIL's antialiased bilinear): how every added arm's
    images reach training."""
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


def _repeat(data: Any, w: int) -> Any:
    """`data` repeated `w` times: the weight `w` of Just Train Twice for a recipe that trains without weights."""
    from targets.base import LabelledImages

    return LabelledImages(np.concatenate([data.images] * w), np.concatenate([data.labels] * w), pd.concat([data.truth] * w, ignore_index=True))


def _concat(a: Any, b: Any) -> Any:
    from targets.base import LabelledImages

    return LabelledImages(np.concatenate([a.images, b.images]), np.concatenate([a.labels, b.labels]),
                          pd.concat([a.truth, b.truth], ignore_index=True))


def trainable(target: str) -> Any:
    """The target `target`, loaded, if it can be retrained here (it has a training `recipe()`); checked
    before anything is searched or written (`retrain`, `searcher fix`).

    Raises:
        ParameterError: a target without a recipe, naming the trainable ones (PluginError: an unknown target).
    """
    import targets

    model = targets.load(target)
    if not callable(getattr(model, "recipe", None)):
        names = [name for name in targets.available() if name in TRAINABLE]
        raise ParameterError(f"{target!r} cannot be retrained here: it has no training recipe. Trainable targets: "
                             f"{', '.join(names)}; for your own model pass recipe= (a targets.base.TrainingRecipe) to searcher.retrain.")
    return model


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


@checked("retrain")
def retrain(
    target: str | None = "gender-cnn",
    *,
    hard: str | Path | None = None,
    n: int = 500,
    seeds: Sequence[int] = (0, 1, 2),
    out: str | Path = "runs/retrain",
    recipe: Any = None,
    arms: Sequence[str] = DEFAULT_ARMS,
    weights: Sequence[int] = WEIGHTS,
    upweighted: str = "hard",
    budget: int = 1000,
    strategy: str = DEFAULT_STRATEGY,
    train_n: int | None = None,
    epochs: int | None = None,
    test_n: int = 2000,
    progress: bool = False,
) -> RetrainResult:
    """Trains every arm for every seed with one recipe and tests each model (see the package docstring).

    Args:
        target: a trainable target (one with `recipe()`: gender-cnn, smile-cnn, glasses-cnn); it is also what
            the search hunts when `hard` is not given.
        hard: a campaign or comparison directory whose failures are the hard examples.
        n: images added by the hard, random and spread arms (fewer if the search found fewer).
        seeds: one training run per arm per seed (data draw, initial weights, batch order).
        recipe: a `targets.base.TrainingRecipe` for your own model (then `target` only names the search's).
        arms: a subset of `ARMS` (default `DEFAULT_ARMS`): see the package docstring.
        weights: the grid `upweight` chooses its weight from, on a validation split (`choose_weight`).
        upweighted: the added set the upweight arms weigh (`UPWEIGHTED`): the hard images, or a recipe's set;
            the weight is chosen with it, and random-upweight repeats the random images with the same weight.
        budget, strategy: the search run when `hard` is not given.
        train_n, epochs, test_n: shrink the shipped recipe (training images, passes, test images).

    Writes `out/scores.csv`, `out/groups.csv` (pooled over seeds), `out/groups_per_seed.csv`, `out/retraining.png` and
    `out/summary.md`. With a target's own recipe, each model's scores are kept as it is scored
    (`searcher.retrain.journal`): the same call again, after a kill, trains only the models not scored yet.
    """
    from tqdm import tqdm

    check_int("-n", n, 1)
    seeds = [check_int("--seeds", s, 0) for s in seeds]
    if not seeds:
        raise ParameterError("retrain needs at least one seed.")
    arms = check_names(list(arms), ARMS, what="arm", flag="--arms")
    weights = [check_int("--weights", w, 1) for w in weights]
    if not weights:
        raise ParameterError("retrain needs at least one weight in --weights for its upweight arms (e.g. 1,2,4,8).")
    check_choice("--upweighted", upweighted, UPWEIGHTED)
    shipped = recipe is None  # a target's own recipe, which the journal's key describes (yours it cannot)
    if recipe is None:
        if target is None:
            raise ParameterError("retrain needs a trainable target or a recipe=.")
        recipe = trainable(target).recipe(n=train_n, epochs=epochs, test_n=test_n)
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
    weighed = "upweight" in arms or "random-upweight" in arms
    for arm, spread in (("hard", False), ("spread", True)):
        if arm in arms or (arm == upweighted and weighed):
            rows = select(src.rows, "classify", "failures", limit=k, spread=spread)
            added[arm] = labelled_images(rows, [png for _, png in src.png(rows)], recipe.labels, size)
    if "random" in arms or "random-upweight" in arms:
        rows, pngs = random_control(src, k, seed=0)
        added["random"] = labelled_images(rows, pngs, recipe.labels, size)
    for arm in RECIPES:
        if arm in arms or (arm == upweighted and weighed):
            try:
                built = build_set(src, arm, k, seed=0)
            except ParameterError as exc:  # e.g. no mode with a confirmed cause: the other arms still train, and the summary says why
                lost = [a for a in arms if a == arm or (arm == upweighted and a in ("upweight", "random-upweight"))]
                arms = [a for a in arms if a not in lost]
                notes.append(f"{', '.join(lost)}: not trained: {exc}")
                continue
            added[arm] = labelled_images(built.rows, built.pngs, recipe.labels, size)
            notes += built.notes

    key = {"target": target, "train_n": train_n, "epochs": epochs, "test_n": test_n, "seeds": seeds, "arms": arms,
           "weights": weights, "added": {arm: _digest(data) for arm, data in added.items()}, **upweighted_key(upweighted)}
    journal = Journal(out, key if shipped else None)
    models: dict[tuple[int, str], Any] = {}
    weight = None
    if "upweight" in arms or "random-upweight" in arms:
        if journal.weight is None:
            weight, models = _upweight(recipe, src, base0, added, upweighted, seeds[0], weights, notes, journal)
            journal.add_weight(weight, notes[-1])
        else:
            weight, note = journal.weight
            notes.append(note)
        added["upweight"] = _repeat(added[upweighted], weight)
        added["random-upweight"] = _repeat(added["random"], weight) if "random" in added else None

    tests = None
    scores, groups = [], []
    with tqdm(total=len(seeds) * len(arms), desc="retraining", unit="model", disable=not progress) as bar:
        for seed in seeds:
            base = None
            for arm in arms:
                if (arm, seed) not in journal.models:
                    if base is None:
                        base = base0 if seed == seeds[0] else recipe.base(seed)
                    tests = recipe.tests() if tests is None else tests
                    journal.add_model(arm, seed, *score_arm(recipe, tests, base, added, arm, seed, models))
                scores += journal.models[arm, seed][0]
                groups += journal.models[arm, seed][1]
                bar.update()
    result = RetrainResult(out, pd.DataFrame(scores), pd.DataFrame(groups), k, notes, weight)
    _write(result)
    journal.close()
    return result


def upweighted_key(upweighted: str) -> dict[str, str]:
    """What `upweighted` adds to a resumable run's key (`retrain`'s journal, `searcher fix`'s
    manifest): nothing for the default, so runs keyed before the option existed still resume."""
    return {} if upweighted == "hard" else {"upweighted": upweighted}


def score_arm(recipe: Any, tests: Mapping[str, Any], base: Any, added: Mapping[str, Any], arm: str, seed: int,
              models: Mapping[tuple[int, str], Any] | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Trains `arm`'s model on `seed` (base, balanced, or base + `added[arm]`; or takes the one
    `models` holds) and tests it on `tests`: its rows of scores.csv and of the subgroup errors."""
    data = recipe.balanced(seed) if arm == "balanced" else base if arm == "base" else _concat(base, added[arm])
    model = models[seed, arm] if models and (seed, arm) in models else recipe.train(data, seed)
    scores, groups = [], []
    for name, test in tests.items():
        pred = np.asarray(recipe.evaluate(model, test))
        wrong = pred != test.labels
        recall = [float((~wrong[test.labels == i]).mean()) for i in range(len(recipe.labels)) if (test.labels == i).any()]
        scores.append({"arm": arm, "seed": seed, "test": name, "train_size": len(data),
                       "accuracy": float((~wrong).mean()), "balanced_accuracy": float(np.mean(recall))})
        for group, mask in recipe.groups(test.truth).items():
            groups.append({"arm": arm, "seed": seed, "test": name, "group": group, "n": int(mask.sum()),
                           "errors": int(wrong[mask].sum())})
    return scores, groups


def _digest(data: Any) -> str:
    """A digest of labelled images (pixels and labels): the same added set, the same key."""
    h = hashlib.sha256(np.ascontiguousarray(data.images).tobytes())
    h.update(np.ascontiguousarray(data.labels).tobytes())
    return h.hexdigest()


def _upweight(recipe: Any, src: Source, base: Any, added: Mapping[str, Any], upweighted: str, seed: int, grid: Sequence[int],
              notes: list[str], journal: Journal) -> tuple[int, dict[tuple[int, str], Any]]:
    """The weight of the upweight arms, chosen once, on `seed`'s base with the `upweighted` images and a
    validation split of the training distribution (`choose_weight`, resumed from `journal`), and
    the model trained with it (the upweight arm's on that seed; none when the journal held its
    score, and the arm trains it again). The note says what was chosen on what."""
    try:
        rules = [m.rule for m in mode_causes(src)[0]]
    except ParameterError:
        rules = []
    validation = recipe.base(VALIDATION_SEED + seed)
    w, scores, trained = choose_weight(recipe, base, added[upweighted], seed, grid, validation, rules, journal)
    metric = (f"worst accuracy over label x inside/outside the campaign's {len(rules)} mode rules" if rules
              else "mean recall over labels (no mode rule to group by)")
    notes.append(f"upweight (Just Train Twice, the {upweighted} images): w = {w} chosen on a validation split of {len(validation)} images drawn from the "
                 f"recipe's training distribution (base seed {VALIDATION_SEED + seed}), {metric}: "
                 + ", ".join(f"w={g} {scores[g]:.1%}" for g in grid) + "; random-upweight adds the random images with the same w")
    return w, {(seed, "upweight"): trained[w]} if w in trained else {}


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
    g = result.groups
    lo, hi = wilson_interval(g["errors"].to_numpy(), g["n"].to_numpy())
    g.assign(error=g["errors"] / g["n"].where(g["n"] > 0), ci_low=lo, ci_high=hi).to_csv(out / "groups_per_seed.csv", index=False)
    pooled = pooled_groups(result.groups)
    pooled.to_csv(out / "groups.csv", index=False)
    plot_retraining(result.scores, pooled, out / "retraining.png", order=[a for a in ARMS if a in set(result.scores["arm"])])
    table = result.table()
    lines = ["# Retraining", "", result.summary(), "", "| arm | test set | balanced accuracy, mean | sd over seeds | seeds |", "|---|---|---|---|---|"]
    lines += [f"| {r['arm']} | {r['test']} | {r['mean']:.1%} | {0 if pd.isna(r['std']) else r['std']:.1%} | {r['count']} |"
              for _, r in table.iterrows()]
    lines += ["", "Every arm on every seed:", "", *per_seed_lines(result.scores)]
    lines += ["", "Error by subgroup, pooled over seeds (Wilson 95% interval; sd of the per-seed rates):", "",
              "| arm | test set | group | errors / n | error | 95% CI | sd |", "|---|---|---|---|---|---|---|"]
    lines += [f"| {r['arm']} | {r['test']} | {r['group']} | {r['errors']}/{r['n']} | {r['error']:.1%} | "
              f"[{r['ci_low']:.1%}, {r['ci_high']:.1%}] | {0 if pd.isna(r['sd']) else r['sd']:.1%} |" for _, r in pooled.iterrows()]
    lines += ["", "![balanced accuracy and subgroup errors per arm](retraining.png)", ""]
    (out / "summary.md").write_text("\n".join(lines))

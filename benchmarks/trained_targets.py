"""Recomputes the results tables of targets/trained/README.md from fresh, seeded renders.

    python benchmarks/trained_targets.py             # all three models, 2,000 faces per set, 128 px (about 45 s)
    python benchmarks/trained_targets.py gender --n 500
    python benchmarks/trained_targets.py gender --weights control.pt   # a model from train.py --out
    python benchmarks/trained_targets.py glasses

For each model: accuracy on a balanced held-out set (clear labels, all other attributes
independent) and error rates by hair length, skin tone and the planted attributes, with Wilson 95%
intervals. For `gender-cnn` also the observational PPB-like set, where the naive dark-minus-light
error gap is compared with the same gap on the balanced set.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from generators.faces.procedural import render_rows
from searcher.causal import wilson_interval
from targets.trained import GenderCNN, GlassesCNN, SmileCNN
from targets.trained.data import TASKS, balanced_rows, ppb_rows, truth_labels

__all__ = ["error_table", "evaluate", "main", "markdown"]

MODELS = {"gender": GenderCNN, "smile": SmileCNN, "glasses": GlassesCNN}


def groups(truth: pd.DataFrame, task: str) -> dict[str, np.ndarray]:
    """Boolean masks of the subgroups the README reports."""
    hair, fitz = truth["hair_length"].to_numpy(), truth["fitzpatrick"].to_numpy()
    short, long_ = hair < 0.35, hair > 0.6
    light, dark = fitz <= 3, fitz >= 4
    out = {"all": np.ones(len(truth), bool), "short hair (< 0.35)": short, "long hair (> 0.6)": long_,
           "light skin (Fitzpatrick 1-3)": light, "dark skin (Fitzpatrick 4-6)": dark}
    if task == "gender":
        fem = truth["gender_presentation"].to_numpy() >= 0.5
        for name, g in (("masculine", ~fem), ("feminine", fem)):
            out[f"{name}, short hair"] = g & short
            out[f"{name}, long hair"] = g & long_
            out[f"{name}, light skin"] = g & light
            out[f"{name}, dark skin"] = g & dark
        for name, g in (("masculine", ~fem), ("feminine", fem)):
            for hair_name, h in (("short", short), ("long", long_)):
                for skin_name, sk in (("light", light), ("dark", dark)):
                    out[f"{name}, {hair_name} hair, {skin_name} skin"] = g & h & sk
    elif task == "smile":
        beard, makeup = truth["facial_hair"].to_numpy(), truth["makeup"].to_numpy()
        smiling = truth["smile"].to_numpy() >= 0.5
        for name, g in (("not smiling", ~smiling), ("smiling", smiling)):
            out[f"{name}, no beard or makeup"] = g & (beard < 0.05) & (makeup < 0.05)
            out[f"{name}, beard (> 0.4)"] = g & (beard > 0.4)
            out[f"{name}, makeup (> 0.4)"] = g & (makeup > 0.4)
    else:
        out |= TASKS[task].cells(truth)
    return out


def error_table(wrong: np.ndarray, masks: dict[str, np.ndarray]) -> pd.DataFrame:
    """One row per group: n, errors, error rate and its Wilson interval."""
    rows = []
    for name, mask in masks.items():
        n, e = int(mask.sum()), int(wrong[mask].sum())
        lo, hi = wilson_interval(e, n)
        rows.append({"group": name, "n": n, "errors": e, "error": e / n if n else float("nan"), "ci_low": lo, "ci_high": hi})
    return pd.DataFrame(rows).set_index("group")


def evaluate(task: str, n: int = 2000, resolution: int = 128, seed: int = 1, weights: Path | None = None) -> dict[str, pd.DataFrame]:
    """Error tables of the `task` model (shipped or `weights`) on the balanced set and, for gender, the PPB-like set."""
    model = MODELS[task](weights)
    sets = {"balanced": balanced_rows(n, seed, task)}
    if task == "gender":
        sets["ppb-like"] = ppb_rows(n, seed)
    out = {}
    for name, rows in sets.items():
        batch = render_rows(rows, resolution=resolution, seed=seed)
        pred = model.predict(batch.images).label
        wrong = np.array([model.labels.index(p) for p in pred]) != truth_labels(batch.truth, task)
        out[name] = error_table(wrong, groups(batch.truth, task))
    return out


def markdown(tables: dict[str, pd.DataFrame]) -> str:
    """The tables side by side: one row per group, `errors / n = rate [95% CI]` per set."""
    names = list(tables)
    lines = ["| group | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for group in tables[names[0]].index:
        cells = []
        for name in names:
            r = tables[name].loc[group]
            n, e = int(r["n"]), int(r["errors"])
            cells.append("-" if n == 0 else f"{e}/{n} = **{r['error']:.1%}** [{max(r['ci_low'], 0):.1%}, {r['ci_high']:.1%}]")
        lines.append(f"| {group} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _gap(table: pd.DataFrame) -> float:
    return table.loc["dark skin (Fitzpatrick 4-6)", "error"] - table.loc["light skin (Fitzpatrick 1-3)", "error"]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("task", nargs="?", choices=[*sorted(MODELS), "all"], default="all")
    ap.add_argument("--n", type=int, default=2000, help="faces per evaluation set")
    ap.add_argument("--resolution", type=int, default=128)
    ap.add_argument("--seed", type=int, default=1, help="held-out seed (training uses 0)")
    ap.add_argument("--weights", type=Path, default=None, help="a weight file from train.py --out (one task only)")
    args = ap.parse_args(argv)
    if args.weights is not None and args.task == "all":
        ap.error("--weights needs the task it belongs to: gender, smile or glasses")
    for task in sorted(MODELS) if args.task == "all" else [args.task]:
        tables = evaluate(task, n=args.n, resolution=args.resolution, seed=args.seed, weights=args.weights)
        accuracy = ", ".join(f"{name} {1 - t.loc['all', 'error']:.1%}" for name, t in tables.items())
        print(f"\n### {task}-cnn: {args.n} faces per set, {args.resolution} px, seed {args.seed}; accuracy {accuracy}\n")
        print(markdown(tables))
        if task == "gender":
            gaps = ", ".join(f"{name} {_gap(t):+.1%}" for name, t in tables.items())
            print(f"\nnaive error gap, dark minus light skin: {gaps}")


if __name__ == "__main__":
    main()

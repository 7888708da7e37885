"""What N added images gain when an oracle, told the planted correlation, chooses them: the
yardstick the arms `searcher retrain` builds without that knowledge are measured against.

    python lab/planted_oracle.py --target gender-cnn --n 500,1000 --seeds 0,1,2 --reference runs/gender-crossed
    python lab/planted_oracle.py --target smile-cnn --n 500 --reference runs/smile-arms

Why: issue 70 asks the best arm the engine builds to close 60% of the gap between the base model
and one trained without the planted correlation, and to gain twice what 500 random images gain,
with N = 500. The engine must find its images without knowing the correlation; this script is
told it. Every added image lies in a counter-stereotypical cell (gender: long hair on a masculine
face, short hair on a feminine one; smile: a beard or makeup without a smile, neither with one;
glasses: a dark background behind glasses, a light one behind none), half of each label, every
other attribute drawn from the training prior (`targets/trained/data.py`), rendered as a
campaign renders and resized as `searcher retrain` resizes the images it adds (a campaign's 128 px
brought to the base's 64: the random control gains from that alone, so images rendered at 64 px
would be judged unfairly). These rows are the base recipe's own planted rows with the label
flipped: what the base set lacks, as far as the correlation goes. They are not the best set
there is: the oracle knows the shortcut, not which label values the model misreads, which a
campaign's failures do show.

Each model is trained and scored as `searcher retrain` trains and scores its arms (same recipe,
seed, test sets). `--reference` reads the base and balanced models' scores from a retraining run
of the same target and seeds (its scores.csv) instead of training them again.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from generators.faces.procedural import render_rows
from searcher.campaign.store import encode_png
from searcher.errors import ParameterError
from searcher.outputs import check_output_dir
from searcher.retrain.harness import labelled_images, per_seed_lines, score_arm, summary_lines, trainable
from targets.base import LabelledImages
from targets.trained.data import truth_labels
from targets.trained.train import RECIPES

FLIPPED = {"gender": "gender_presentation", "smile": "smile"}  # a label in [0, 1] whose clear bands mirror at 0.5


def counter_rows(task: str, n: int, seed: int) -> list[dict[str, Any]]:
    """`n` training rows, every one in a counter-stereotypical cell: the recipe's rows with the
    planted correlation in every row (`p_planted=1`), then the label flipped (glasses: the
    background set to the other side instead, since eyewear is a category)."""
    rows = RECIPES[task][0](n, seed + 10_000, p_planted=1.0)  # streams the base sets (seeds 0-99) never draw
    for row in rows:
        if task in FLIPPED:
            row[FLIPPED[task]] = 1.0 - row[FLIPPED[task]]
        else:
            row["background"] = 1.0 - row["background"]
    return rows


def counter_images(task: str, labels: tuple[str, ...], n: int, seed: int, size: tuple[int, int]) -> LabelledImages:
    """`counter_rows` rendered at a campaign's 128 px and brought to the base set's `size` the way
    `searcher retrain` brings a campaign's images (`labelled_images`), so that they differ from the
    random control's images in where they lie alone, not in how they were drawn."""
    batch = render_rows(counter_rows(task, n, seed), resolution=128, seed=seed + 10_000)
    pngs = [encode_png(image) for image in batch.images]
    names = np.asarray(labels)[truth_labels(batch.truth, task)]
    rows = pd.concat([pd.DataFrame({"true_label": names}), batch.truth.add_prefix("truth.")], axis=1)
    return labelled_images(rows, pngs, labels, size)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default="gender-cnn", help="gender-cnn, smile-cnn or glasses-cnn")
    ap.add_argument("--n", default="500", help="added images, comma-separated (default 500)")
    ap.add_argument("--seeds", default="0,1,2", help="training seeds, comma-separated")
    ap.add_argument("--reference", type=Path, help="a `searcher retrain` run of the same target and seeds: its base and balanced scores are read, not trained")
    ap.add_argument("--out", type=Path, default=Path("runs/planted-oracle"), help="where scores.csv and groups.csv go")
    args = ap.parse_args(argv)
    sizes = [int(v) for v in args.n.split(",")]
    seeds = [int(v) for v in args.seeds.split(",")]
    recipe = trainable(args.target).recipe()  # a clear error for a target without a training recipe
    try:
        out = check_output_dir(args.out, command="python lab/planted_oracle.py")  # before any model is trained
    except ParameterError as exc:
        raise SystemExit(str(exc)) from None
    scores, groups = [], []
    if args.reference is not None:
        ref = pd.read_csv(args.reference / "scores.csv")
        scores = ref[ref["arm"].isin(["base", "balanced"]) & ref["seed"].isin(seeds)].to_dict("records")
        missing = {(a, s) for a in ("base", "balanced") for s in seeds} - {(r["arm"], r["seed"]) for r in scores}
        if missing:
            raise SystemExit(f"{args.reference}/scores.csv lacks the base or balanced model of seeds {sorted({s for _, s in missing})}; "
                             "give a retraining run of the same target with those seeds, or no --reference.")
    tests = recipe.tests()
    for seed in seeds:
        base = recipe.base(seed)
        added = {f"oracle-{n}": counter_images(recipe.task, recipe.labels, n, seed, base.images.shape[1:3]) for n in sizes}
        for arm in (["base", "balanced"] if args.reference is None else []) + list(added):
            s, g = score_arm(recipe, tests, base, added, arm, seed)
            scores += s
            groups += g
            print(f"seed {seed} {arm}: " + ", ".join(f"{r['test']} {r['balanced_accuracy']:.1%}" for r in s), flush=True)
    table = pd.DataFrame(scores)
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "scores.csv", index=False)
    pd.DataFrame(groups).to_csv(out / "groups.csv", index=False)
    print("\n".join(["", *summary_lines(table), "", *per_seed_lines(table)]))


if __name__ == "__main__":
    main()

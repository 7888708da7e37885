"""Why interpolated codes of `faces-cvae` lose `smile-cnn`'s class (Denton et al.'s Sec. 5 check).

Runs the check as `experiments/denton.py` does (the same faces, pairs and positions), then asks of
the same pairs three questions: does the class survive when the line is drawn in the decoder's own
code space (`z = prior(u, c)`, before the prior's flow) instead of the searched `u`; does it survive
when both endpoints are far from the classifier's boundary (outside `NEAR_BOUNDARY`); and, for the
smiling pairs, does it depend on whether the renderer drew a smile (smile > 0.5) at both endpoints,
one, or neither (a face `smile-cnn` calls smiling without one is called so for another reason).
Then whether the class survives on a line that keeps the endpoints' norm (each point rescaled to
the norm interpolated between its endpoints': the midpoint of two `N(0, I)` codes is shorter than
either, nearer the prior's mode, where the average face is). Last, the check on *generated* faces, as the paper builds its set (codes drawn from the prior, `u ~
N(0, I)`, `--n-generated` per combination of conditions, seed + 13), where `denton.py` starts from
encoded renders. With `--control`, the same again for a smile classifier with no shortcut to take
(smile-cnn's recipe with no planted share): whether the misses are smile-cnn's or the generator's.

    python lab/cvae_interpolation.py [--n-sweep 400] [--n-check 600] [--n-generated 200] [--control] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))

import denton  # noqa: E402

import targets  # noqa: E402
from generators.learned.train import load_networks, load_prior  # noqa: E402
from searcher.causal import NEAR_BOUNDARY  # noqa: E402
from searcher.studies.generator_quality import condition_cells  # noqa: E402
from targets.trained.train import train  # noqa: E402


def native_scores(gen: denton.FacesCVAE, z: np.ndarray, conditions: list[dict[str, str]], plan: pd.DataFrame, model) -> np.ndarray:
    """`smile-cnn`'s score on the plan's points with the line drawn in the decoder's code space:
    `G((1 - t) prior(u_i, c) + t prior(u_j, c), c)`, resized as the generator resizes its output."""
    dec, _ = load_networks()
    prior = load_prior()
    c = torch.from_numpy(gen._one_hot([conditions[i] for i in plan["start"]]))  # both ends share their cell's conditions
    t = torch.tensor(plan["t"].to_numpy(), dtype=torch.float32)[:, None]
    with torch.no_grad():
        ends = [prior(torch.tensor(z[plan[k].to_numpy()], dtype=torch.float32), c) for k in ("start", "end")]
        x = dec((1 - t) * ends[0] + t * ends[1], c)
    return denton._smile_scores(model, gen.resize(x * 255.0))


def line_points(z: np.ndarray, plan: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The plan's points `(1 - t) u_i + t u_j`, and the norm interpolated between their endpoints'
    (`(1 - t) |u_i| + t |u_j|`, a column)."""
    start, end = z[plan["start"].to_numpy()], z[plan["end"].to_numpy()]
    t = plan["t"].to_numpy()[:, None]
    return (1 - t) * start + t * end, (1 - t) * np.linalg.norm(start, axis=1, keepdims=True) + t * np.linalg.norm(end, axis=1, keepdims=True)


def norm_kept_scores(gen: denton.FacesCVAE, z: np.ndarray, conditions: list[dict[str, str]], plan: pd.DataFrame, model) -> np.ndarray:
    """`smile-cnn`'s score on the plan's points rescaled to the norm interpolated between their
    endpoints', the direction unchanged."""
    line, norm = line_points(z, plan)
    codes = line * norm / np.linalg.norm(line, axis=1, keepdims=True)
    return denton._smile_scores(model, gen.from_latent(codes, conditions=[conditions[i] for i in plan["start"]]).images)


def generated_faces(gen: denton.FacesCVAE, per_cell: int, seed: int) -> tuple[np.ndarray, list[dict[str, str]]]:
    """`per_cell` codes drawn from the prior (`u ~ N(0, I)`, seed + 13) for every combination of
    conditions, and each code's conditions."""
    cells = condition_cells(gen)
    u = np.random.default_rng(seed + 13).standard_normal((per_cell * len(cells), gen.latent_dim))
    return u, [cell for cell in cells for _ in range(per_cell)]


def keeps(plan: pd.DataFrame, column: str) -> pd.Series:
    """Per point, whether its score in `column` keeps its endpoints' class."""
    return (plan[column] >= 0.5).astype(int) == plan["label"]


def kept(plan: pd.DataFrame, column: str) -> pd.Series:
    """Per endpoint class (0 not smiling, 1 smiling), the share of points whose score keeps it."""
    return keeps(plan, column).groupby(plan["label"]).mean()


def percent(frame: pd.DataFrame) -> str:
    """The frame as text, shares as percentages."""
    return frame.to_string(formatters={c: "{:.1%}".format for c in frame.columns if c != "n"})


def report(gen: denton.FacesCVAE, ref, z: np.ndarray, conditions: list[dict[str, str]], model, args: argparse.Namespace) -> None:
    """Prints the check and its three questions for the classifier `model`."""
    score = denton._smile_scores(model, gen.from_latent(z, conditions=conditions).images)
    plan = denton.sanity_plan(gen, z, conditions, score, args.n_check, args.seed, target=model)
    prior_codes, prior_conditions = generated_faces(gen, args.n_generated, args.seed)
    prior_scores = denton._smile_scores(model, gen.from_latent(prior_codes, conditions=prior_conditions).images)
    generated = denton.sanity_plan(gen, prior_codes, prior_conditions, prior_scores, args.n_check, args.seed, target=model)
    plan["native"] = native_scores(gen, z, conditions, plan, model)
    generated["native"] = native_scores(gen, prior_codes, prior_conditions, generated, model)
    plan["norm"] = norm_kept_scores(gen, z, conditions, plan, model)
    generated["norm"] = norm_kept_scores(gen, prior_codes, prior_conditions, generated, model)
    low, high = NEAR_BOUNDARY
    near = (score > low) & (score < high)
    sure = ~(near[plan["start"]] | near[plan["end"]])
    smile = ref.truth["smile"].to_numpy(float) > 0.5
    drawn = smile[plan["start"]].astype(int) + smile[plan["end"]].astype(int)

    rows = []
    for name, part in (("all pairs", plan), (f"both endpoints outside {low:g}-{high:g}", plan[sure]),
                       (f"generated faces ({args.n_generated} per combination), as the paper", generated)):
        u, native, norm = kept(part, "score"), kept(part, "native"), kept(part, "norm")
        rows.append({"pairs": name, "n": len(part), "not smiling (u)": u.get(0), "smiling (u)": u.get(1),
                     "all (u)": keeps(part, "score").mean(), "not smiling (z)": native.get(0), "smiling (z)": native.get(1),
                     "not smiling (u, norm)": norm.get(0), "smiling (u, norm)": norm.get(1), "all (u, norm)": keeps(part, "norm").mean()})
    print("The share of codes interpolated between two codes of the same class that keep it: drawn as\n"
          "denton.py draws them (u: the searched, whitened code), in the decoder's own code space (z = prior(u, c)),\n"
          "and in u with the endpoints' norm kept (u, norm: the point's direction, the length interpolated):\n")
    print(percent(pd.DataFrame(rows).set_index("pairs")))
    missed = plan[(plan["label"] == 1) & (plan["score"] < 0.5)]
    print(f"\nThe smiling pairs' misses (u): median score {missed['score'].median():.2f} ({len(missed)} points).")
    smiling = plan["label"] == 1
    by_smile = pd.DataFrame([{"renderer smile at": f"{k} of 2 endpoints", "n": int((smiling & (drawn == k)).sum()),
                              "kept (u)": kept(plan[smiling & (drawn == k)], "score").get(1),
                              "kept (z)": kept(plan[smiling & (drawn == k)], "native").get(1)} for k in (2, 1, 0)]).set_index("renderer smile at")
    print("\nSmiling pairs, by whether the renderer drew a smile (smile > 0.5) at their endpoints:\n")
    print(percent(by_smile))
    band = pd.cut(plan["t"], [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0], include_lowest=True)
    by_t = keeps(plan, "score").groupby([band, plan["label"]], observed=True).mean().unstack()
    by_t.columns = [("smiling" if c else "not smiling") + " (u)" for c in by_t.columns]
    line, norm = line_points(z, plan)
    by_t["norm, of the endpoints'"] = pd.Series(np.linalg.norm(line, axis=1) / norm[:, 0]).groupby(band, observed=True).mean()
    print("\nBy position t on the line (0 and 1 the endpoints):\n")
    print(percent(by_t))
    called = score >= 0.5
    on_renders = denton._smile_scores(model, ref.images) >= 0.5
    print(f"\n{called.sum()} of {len(score)} drawn faces are called smiling; their renders had a smile on {smile[called].mean():.1%} "
          f"of them (and on {smile[~called].mean():.1%} of those called not smiling); the call agrees with the render's "
          f"smile on {(called == smile).mean():.1%} of the drawn faces and on {(on_renders == smile).mean():.1%} of the renders.")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n-sweep", type=int, default=400, help="encoded faces (seed + 11), as denton.py")
    ap.add_argument("--n-check", type=int, default=600, help="interpolated codes per class, as denton.py")
    ap.add_argument("--n-generated", type=int, default=200, help="generated faces per combination of conditions")
    ap.add_argument("--control", action="store_true",
                    help="also run it on smile-cnn's unbiased control: its recipe with no planted share, trained here (about 2 min)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    gen = denton.FacesCVAE(resolution=128)
    ref, z, conditions = denton.swept_faces(gen, args.n_sweep, args.seed)
    print("smile-cnn (beards and makeup planted on 85% of its smiling training faces)\n")
    report(gen, ref, z, conditions, targets.load("smile-cnn"), args)
    if args.control:
        with tempfile.TemporaryDirectory() as tmp:
            weights = train("smile", planted=0.0, out=Path(tmp) / "smile-control.pt")
            print("\nThe unbiased control (the same recipe, size and seed, no planted share)\n")
            report(gen, ref, z, conditions, targets.load("smile-cnn", weights=str(weights)), args)


if __name__ == "__main__":
    main()

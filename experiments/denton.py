"""Denton et al. (docs/papers.md#denton) reproduced on `faces-cvae`: counterfactual sweeps along
attribute vectors of a learned latent space, scored by `smile-cnn` (whose planted beard and makeup
shortcuts are the known answer) and by OpenCV's `haar-smile`.

    python experiments/denton.py                         # defaults below, a few minutes on 2 cores
    python experiments/denton.py --quick --out runs/denton-quick

1. Attribute vectors (Sec. 3.2, Fig. 2): `--n-fit` faces of the kind `faces-cvae` was trained on
   (`FacesCVAE.reference`, the training recipe under another seed) are encoded with `E`, and a
   linear SVM separates the codes of faces with and without each attribute (beard, makeup, and
   eyewear, an attribute nothing was planted on), with smiling and gender presentation balanced
   between the classes (`attribute_vector`), as the paper balances Smiling and Male. `--controls`
   random unit directions (seeded), orthogonal to the attribute vectors and to each other, are the
   second control, pooled as one (every control and face is one swept code): one random
   direction is a sample of one, and its flip rate on a cohort varied 2-3x from draw to draw; a
   random draw that leans on the beard direction would move beards too.
2. Sweeps (Sec. 3.3, Fig. 4): `--n-sweep` other faces are encoded, `z = E(x)`, and rendered as
   `G(z + lambda s d)` with their encoded conditions for `--steps` values of lambda in [-1, 1].
   The codes are whitened (the shipped encoder returns `u`, which the prior draws from N(0, I)),
   so `s` is in prior standard deviations: `--scale 3` (the default, the search box's half-width)
   moves a code three of them along `d` at lambda = 1, every direction alike. The paper's unit
   step is `--scale 1`; on a 64 px VAE it changes too little to see.
3. Sensitivities: score sensitivity (eq. 3, with t intervals), classification sensitivity (eq. 6)
   with the 0->1 and 1->0 flip rates and their Wilson intervals, over all images and near the
   boundary (0.3 < f(G(z)) < 0.7, Fig. 5 right). `haar-smile` answers smiling / not smiling only
   (its score is 0 or 1, so the near-boundary set is empty and not reported, as it is for a
   direction whose faces all score outside the band); an image in which it
   finds no face is left out at that lambda (a miss of the face detector is not a smile verdict).
4. The known answer, from the renderer: the same faces drawn with each attribute off and on and
   nothing else changed (beards on masculine faces, makeup on feminine ones, sunglasses on all),
   and how often `smile-cnn` flips; the latent sweep's flips on the same cohorts beside them, and the
   random controls' on the same faces (the control compared like with like).
5. The sanity check of Sec. 5: codes interpolated between two faces of the same predicted class
   (and the same encoded conditions) should keep that class (the paper: 98%).
6. What the codes carry: the held-out AUC with which `E(x)` predicts each attribute, smiling (what
   the classifier predicts) among them; the method needs a generator that draws it.
7. `report.md` (tables, a reading), `sensitivity.png` (Fig. 5), `flips.png` (Fig. 6), `sweeps.png`
   (Fig. 4: rows of faces along each direction), and the tables as CSV, under `--out`.

Seeded and deterministic: `--seed s` draws the fitting faces with seed s + 10, the swept faces with
s + 11, the renderer's faces with s + 12, and the random directions and the interpolation pairs with s.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import targets
from generators.faces.procedural import render_rows
from generators.learned.data import CONDITIONS, training_rows
from generators.learned.faces_cvae import FacesCVAE
from searcher.analysis.transects import attribute_vector
from searcher.causal import NEAR_BOUNDARY, classification_sensitivity, interpolation_check, interpolation_codes, score_sensitivity, wilson_interval
from searcher.figures import pyplot, save
from targets.trained.data import truth_labels

__all__ = ["ATTRIBUTES", "TARGETS", "Attribute", "attribute_pairs", "directions", "figures", "interventions", "main", "report", "run", "sweep"]

@dataclass(frozen=True)
class Attribute:
    """A `faces` attribute a direction is fitted for: present where `column` is `on`-like (at
    least 0.4 for a number, anything but `off` for a category); `cohort` is the gender condition
    it belongs to in everyday faces and in smile-cnn's training (beards on masculine faces)."""

    column: str
    on: Any
    off: Any
    cohort: str | None
    planted: bool

    def present(self, truth: pd.DataFrame) -> np.ndarray:
        values = truth[self.column]
        return np.asarray(values >= 0.4 if isinstance(self.on, float) else values != self.off, bool)


ATTRIBUTES: dict[str, Attribute] = {
    "beard": Attribute("facial_hair", 0.8, 0.0, "masculine", planted=True),
    "makeup": Attribute("makeup", 0.8, 0.0, "feminine", planted=True),
    "eyewear": Attribute("eyewear", "sunglasses", "none", None, planted=False),
}
RANDOM = "random"
CONTROLS = 8  # random directions pooled as the control
TARGETS = ("smile-cnn", "haar-smile")
SMILING = "smiling"
STRIP = 2  # faces per direction in sweeps.png


def directions(z: np.ndarray, truth: pd.DataFrame, seed: int, controls: int = CONTROLS) -> tuple[dict[str, np.ndarray], pd.DataFrame]:
    """Unit attribute vectors on codes `z = E(x)` of reference faces with renderer `truth`, the
    confounders (smiling, feminine) balanced, plus `controls` seeded random unit directions
    orthogonal to them and to each other (`vectors[RANDOM]`, one per row); and a table of each
    one's class sizes, the gap between the class means along `d`, the accuracy of the cut halfway
    between them, and its cosine with the others (with the controls: the largest in absolute value)."""
    confounder = pd.DataFrame({"smiling": truth_labels(truth, "smile"), "feminine": truth_labels(truth, "gender")}).astype(bool)
    vectors, rows = {}, []
    for name, attribute in ATTRIBUTES.items():
        labels = attribute.present(truth)
        d = attribute_vector(z, labels, confounder, seed=seed)
        proj = z @ d
        hi, lo = proj[labels].mean(), proj[~labels].mean()
        accuracy = float(((proj > (hi + lo) / 2) == labels).mean())
        vectors[name] = d
        rows.append({"direction": name, "planted": attribute.planted, "with": int(labels.sum()), "without": int((~labels).sum()),
                     "gap": float(hi - lo), "accuracy": accuracy})
    r = np.random.default_rng([seed, 0xD3]).normal(size=(z.shape[1], controls))
    basis = np.linalg.qr(np.stack(list(vectors.values()), axis=1))[0]
    r -= basis @ (basis.T @ r)  # a control carries none of the attributes swept
    vectors[RANDOM] = np.linalg.qr(r)[0].T
    rows.append({"direction": RANDOM, "planted": False, "with": 0, "without": 0, "gap": np.nan, "accuracy": np.nan})
    table = pd.DataFrame(rows).set_index("direction")
    for other, d in vectors.items():
        table[f"cos_{other}"] = [_cosine(vectors[name], d) for name in table.index]
    return vectors, table


def carried(z: np.ndarray, truth: pd.DataFrame, seed: int, folds: int = 5) -> pd.DataFrame:
    """How much of each attribute the codes `z = E(x)` carry: the held-out AUC of a logistic
    regression from the codes to the attribute (`folds`-fold, stratified, seeded), for smiling, the
    attribute the classifier predicts, and for every swept one. Denton et al.'s method needs a
    generator that draws the attribute a classifier predicts; an AUC near 0.5 says it does not,
    and then what the classifier calls that attribute on its faces is something else."""
    present = {"smiling": truth_labels(truth, "smile").astype(bool)} | {name: a.present(truth) for name, a in ATTRIBUTES.items()}
    rows = []
    for name, labels in present.items():
        k = min(folds, int(labels.sum()), int((~labels).sum()))
        auc = np.nan
        if k >= 2:
            model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
            split = StratifiedKFold(k, shuffle=True, random_state=seed)
            auc = float(roc_auc_score(labels, cross_val_predict(model, z, labels, cv=split, method="predict_proba")[:, 1]))
        rows.append({"attribute": name, "with": int(labels.sum()), "without": int((~labels).sum()), "auc": auc})
    return pd.DataFrame(rows).set_index("attribute")


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    """The cosine of two unit directions; where one is a set of controls, the largest in absolute value."""
    c = np.atleast_2d(a) @ np.atleast_2d(b).T
    return float(c.item()) if c.size == 1 else float(np.abs(c).max())


def _smile_scores(target: Any, images: np.ndarray) -> np.ndarray:
    """p(smiling) in [0, 1] per image; NaN where the target found no face (`haar-smile`)."""
    pred = target.predict(images)
    labels = np.asarray(pred.label, object)
    if pred.score[0] is None:
        return np.where(labels == SMILING, 1.0, np.where(labels == "not smiling", 0.0, np.nan))
    score = np.asarray(pred.score, float)
    return np.where(labels == SMILING, score, 1.0 - score)


def swept_faces(gen: FacesCVAE, n: int, seed: int) -> tuple[Any, np.ndarray, list[dict[str, str]]]:
    """The `n` reference faces the sweeps start from (seed + 11), their codes `z = E(x)` and the
    conditions `E` reads off them: (batch, codes, conditions)."""
    ref = gen.reference({}, n, seed=seed + 11)
    names = [c.name for c in gen.spec.conditions]
    return ref, gen.encode(ref.images), [{k: p[k] for k in names} for p in gen.encode_params(ref.images)]


def sweep(gen: FacesCVAE, vectors: dict[str, np.ndarray], scale: float, n: int, lambdas: np.ndarray, seed: int,
          target_names: tuple[str, ...] = TARGETS) -> tuple[pd.DataFrame, np.ndarray, list[dict[str, str]], dict]:
    """Encodes `n` other reference faces and scores `G(z + lambda scale d)` for every direction and
    lambda (each row of a set of controls in turn); returns the tidy table (direction, control,
    image, lambda, one score column per target), the codes, their encoded conditions, and a few
    rendered rows per direction (the first control's) for the figure."""
    _, z, conditions = swept_faces(gen, n, seed)
    models = {t: targets.load(t) for t in target_names}

    def scored(images: np.ndarray) -> dict[str, np.ndarray]:
        return {t: _smile_scores(model, images) for t, model in models.items()}

    unmoved = gen.from_latent(z, conditions=conditions).images  # lambda = 0: the same faces for every direction
    unmoved_scores = scored(unmoved)
    frames, strips = [], {}
    for name, rows in vectors.items():
        for k, d in enumerate(np.atleast_2d(rows)):
            for lam in lambdas:
                if lam == 0.0:
                    images, found = unmoved, unmoved_scores
                else:
                    images = gen.from_latent(z + lam * scale * d, conditions=conditions).images
                    found = scored(images)
                frame = pd.DataFrame({"direction": name, "control": k, "image": np.arange(n), "lambda": float(lam)})
                frames.append(frame.assign(**found))
                if k == 0:
                    strips.setdefault(name, []).append(images[:STRIP, ::2, ::2])  # the model's own 64 px
    return pd.concat(frames, ignore_index=True), z, conditions, strips


def sensitivities(scores: pd.DataFrame, conditions: list[dict[str, str]], target_names: tuple[str, ...] = TARGETS) -> pd.DataFrame:
    """Score and classification sensitivity per target, direction, restriction and lambda; the
    restrictions are all faces, those near the boundary, and the attribute's cohort (faces whose
    encoded gender is the one the attribute belongs to); the random controls are restricted to
    every cohort, so that each attribute is compared with the control on the same faces, and
    pooled (each control and face is one swept code)."""
    gender = pd.Series([c["gender"] for c in conditions])
    out = []
    for t in target_names:
        for name, df in scores.groupby("direction", sort=False):
            tidy = pd.DataFrame({"image": df["image"] + len(conditions) * df["control"], "lambda": df["lambda"], "score": df[t]}).dropna()
            tidy = tidy[tidy["image"].isin(tidy.loc[tidy["lambda"] == 0.0, "image"])]  # no face at lambda = 0: no baseline
            lo, hi = NEAR_BOUNDARY
            near = tidy.loc[tidy["lambda"] == 0.0, "score"].between(lo, hi, inclusive="neither").any()
            cohort = gender.to_numpy()[df.loc[tidy.index, "image"]]  # each row's face's encoded gender
            cohorts = [ATTRIBUTES[name].cohort] if name in ATTRIBUTES else CONDITIONS["gender"] if name == RANDOM else []
            subsets = [("all", False, tidy), ("near boundary", True, tidy)]
            subsets += [(f"{c} faces", False, tidy[cohort == c]) for c in cohorts if c]
            for subset, band, chosen in subsets:
                if band and not near:
                    continue
                s = score_sensitivity(chosen, near_boundary=band).add_prefix("score_")
                c = classification_sensitivity(chosen, near_boundary=band)
                frame = s.join(c.drop(columns="n")).reset_index()
                frame.insert(0, "subset", subset)
                frame.insert(0, "direction", name)
                frame.insert(0, "target", t)
                out.append(frame)
    return pd.concat(out, ignore_index=True)


def sanity(gen: FacesCVAE, z: np.ndarray, conditions: list[dict[str, str]], zero: pd.DataFrame, n: int, seed: int,
           target: str = "smile-cnn") -> pd.DataFrame:
    """Sec. 5's check: `n` codes interpolated between two codes of the same predicted class and
    the same encoded conditions keep the class? (`sanity_plan`, scored by `interpolation_check`)."""
    score = zero.set_index("image")[target].reindex(range(len(z))).to_numpy()
    return interpolation_check(sanity_plan(gen, z, conditions, score, n, seed, target))


def sanity_plan(gen: FacesCVAE, z: np.ndarray, conditions: list[dict[str, str]], score: np.ndarray, n: int, seed: int,
                target: str | Any = "smile-cnn") -> pd.DataFrame:
    """The interpolated codes of the check and `target`'s score on each: `interpolation_codes` per
    condition cell, on the codes `z` whose faces `target` (a registered name, or a target itself)
    scored `score`; `start` and `end` are rows of `z`."""
    cells = pd.Series([tuple(c.values()) for c in conditions])
    model, plans = targets.load(target) if isinstance(target, str) else target, []
    for k, (_, members) in enumerate(cells.groupby(cells).groups.items()):
        members = np.asarray(members)
        labels = (score[members] >= 0.5).astype(int)
        if min(np.bincount(labels, minlength=2)) < 2:
            continue
        codes, plan = interpolation_codes(z[members], labels, max(1, n // cells.nunique()), seed=seed + k)
        plan["score"] = _smile_scores(model, gen.from_latent(codes, conditions=conditions[members[0]]).images)
        plan[["start", "end"]] = members[plan[["start", "end"]].to_numpy()]
        plans.append(plan)
    return pd.concat(plans, ignore_index=True)


def attribute_pairs(a: Attribute, rows: list[dict[str, Any]], seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The faces of `rows` in `a`'s cohort rendered at 128 px with the attribute off and on, nothing
    else changed: the renderer's intervention, image for image."""
    chosen = [r for r in rows if a.cohort is None or (r["gender_presentation"] < 0.5) == (a.cohort == "masculine")]
    off, on = (render_rows([{**r, a.column: v} for r in chosen], resolution=128, seed=seed).images for v in (a.off, a.on))
    return off, on


def interventions(n: int, seed: int, target: str = "smile-cnn") -> pd.DataFrame:
    """The known answer, from the renderer: `n` faces of the training recipe (seed + 12), each
    rendered with every attribute off and on (beards on masculine faces, makeup on feminine ones,
    sunglasses on all; nothing else changes), and how often `target`'s prediction flips, with
    Wilson 95% intervals: 0->1 among faces not smiling without it, 1->0 among those smiling with it."""
    rows, _ = training_rows(n, seed + 12)
    model = targets.load(target)
    out = []
    for name, a in ATTRIBUTES.items():
        off, on = (_smile_scores(model, images) >= 0.5 for images in attribute_pairs(a, rows, seed))
        row: dict[str, Any] = {"direction": name, "cohort": f"{a.cohort} faces" if a.cohort else "all", "n": len(off)}
        for tag, start, end in (("0to1", ~off, on), ("1to0", on, ~off)):
            k, m = int((start & end).sum()), int(start.sum())
            low, high = wilson_interval(k, m)
            row.update({f"n_{tag}": m, f"flips_{tag}": k, f"rate_{tag}": k / m if m else np.nan, f"low_{tag}": low, f"high_{tag}": high})
        out.append(row)
    return pd.DataFrame(out).set_index("direction")


def _flip_md(sens: pd.DataFrame, lam: float) -> str:
    lines = ["| target | direction | subset | n not smiling | 0->1 at lambda = +1 | 95% CI | n smiling | 1->0 at lambda = -1 | 95% CI |",
             "|---|---|---|---|---|---|---|---|---|"]
    for (t, name, subset), df in sens.groupby(["target", "direction", "subset"], sort=False):
        up, down = df.set_index("lambda").loc[lam], df.set_index("lambda").loc[-lam]
        lines.append(f"| {t} | {name} | {subset} | {int(up['n0'])} | {_rate(up, '0to1')} | {int(down['n1'])} | {_rate(down, '1to0')} |")
    return "\n".join(lines)


def _rate(row: pd.Series, tag: str) -> str:
    """`rate | [low, high]`, or dashes where no image started in that class."""
    if pd.isna(row[f"rate_{tag}"]):
        return "— | —"
    return f"{row[f'rate_{tag}']:.1%} | [{row[f'low_{tag}']:.1%}, {row[f'high_{tag}']:.1%}]"


def _score_md(sens: pd.DataFrame, lam: float) -> str:
    lines = ["| target | direction | subset | n | S(f o G, +d) | 95% CI | S(f o G, -d) | 95% CI |", "|---|---|---|---|---|---|---|---|"]
    for (t, name, subset), df in sens.groupby(["target", "direction", "subset"], sort=False):
        up, down = df.set_index("lambda").loc[lam], df.set_index("lambda").loc[-lam]
        lines.append(f"| {t} | {name} | {subset} | {int(up['score_n'])} | {up['score_sensitivity']:+.3f} | "
                     f"[{up['score_low']:+.3f}, {up['score_high']:+.3f}] | {down['score_sensitivity']:+.3f} | "
                     f"[{down['score_low']:+.3f}, {down['score_high']:+.3f}] |")
    return "\n".join(lines)


def _directions_md(table: pd.DataFrame) -> str:
    cos = [c for c in table.columns if c.startswith("cos_")]
    lines = ["| direction | planted in smile-cnn | with | without | gap | accuracy | " + " | ".join(cos) + " |",
             "|---" * (6 + len(cos)) + "|"]
    for name, r in table.iterrows():
        lines.append(f"| {name} | {'yes' if r['planted'] else 'no'} | {r['with']} | {r['without']} | "
                     + ("| |" if pd.isna(r["gap"]) else f"{r['gap']:.2f} | {r['accuracy']:.1%} |") + " "
                     + " | ".join(f"{r[c]:+.2f}" for c in cos) + " |")
    return "\n".join(lines)


def _carried_md(carry: pd.DataFrame) -> str:
    lines = ["| attribute | with | without | held-out AUC from E(x) |", "|---|---|---|---|"]
    lines += [f"| {name} | {int(r['with'])} | {int(r['without'])} | {r['auc']:.3f} |" for name, r in carry.iterrows()]
    return "\n".join(lines)


def _smile_reading(carry: pd.DataFrame, chance: float = 0.6) -> str:
    """Why the smiling half of the check misses, when the codes carry no smile (their held-out AUC
    for smiling below `chance`; the other attributes' beside it show what the codes do carry)."""
    auc = carry["auc"]
    if not auc.loc["smiling"] < chance:
        return "."
    others = ", ".join(f"{auc.loc[name]:.2f} for {name}" for name in ATTRIBUTES)
    return (f"; and they are not smiles: the codes carry next to nothing of the renderer's smile (held-out AUC "
            f"{auc.loc['smiling']:.2f} from `E(x)`, against {others}), so `faces-cvae` draws no smile and what `smile-cnn` "
            f"calls smiling on its faces is something else, which interpolation does not keep.")


def _check_md(check: pd.DataFrame) -> str:
    lines = ["| endpoints' class | n | kept the class | rate | 95% CI (Wilson) |", "|---|---|---|---|---|"]
    lines += [f"| {'smiling' if k else 'not smiling'} | {int(r['n'])} | {int(r['consistent'])} | {r['rate']:.1%} | [{r['low']:.1%}, {r['high']:.1%}] |"
              for k, r in check.iterrows()]
    return "\n".join(lines)


def _row(sens: pd.DataFrame, direction: str, subset: str, lam: float, target: str = "smile-cnn") -> pd.Series:
    """The sensitivities of one target, direction and subset at one lambda."""
    df = sens[(sens["target"] == target) & (sens["direction"] == direction) & (sens["subset"] == subset)]
    return df.set_index("lambda").loc[lam]


def _truth_md(sens: pd.DataFrame, truth: pd.DataFrame, lam: float) -> str:
    lines = ["| direction | faces | latent sweep: 0->1 at lambda = +1 | random directions, same faces | renderer: 0->1 when added | "
             "latent sweep: 1->0 at lambda = -1 | renderer: 1->0 when removed |", "|---|---|---|---|---|---|---|"]
    for name, r in truth.iterrows():
        up, down, control = _row(sens, name, r["cohort"], lam), _row(sens, name, r["cohort"], -lam), _row(sens, RANDOM, r["cohort"], lam)
        lines.append(f"| {name} | {r['cohort']} | {_ci(up, '0to1')} | {_ci(control, '0to1')} | {_ci(r, '0to1')} | {_ci(down, '1to0')} "
                     f"| {_ci(r, '1to0')} |")
    return "\n".join(lines)


def _ci(row: pd.Series, tag: str) -> str:
    return "—" if pd.isna(row[f"rate_{tag}"]) else f"{row[f'rate_{tag}']:.1%} [{row[f'low_{tag}']:.1%}, {row[f'high_{tag}']:.1%}]"


def report(table: pd.DataFrame, carry: pd.DataFrame, sens: pd.DataFrame, check: pd.DataFrame, truth: pd.DataFrame,
           args: dict[str, Any]) -> str:
    """The markdown report: the directions and what the codes carry, flip rates and score
    sensitivities, the renderer's answer beside them, the check, a reading."""
    lam = float(sens["lambda"].max())
    beard, makeup = _row(sens, "beard", "masculine faces", lam), _row(sens, "makeup", "feminine faces", lam)
    eyewear = _row(sens, "eyewear", "all", lam)
    rnd_m, rnd_f = _row(sens, RANDOM, "masculine faces", lam), _row(sens, RANDOM, "feminine faces", lam)
    clears = beard["low_0to1"] > rnd_m["high_0to1"]
    smiling = sens[(sens["target"] == "smile-cnn") & (sens["direction"] == "beard") & (sens["lambda"] == lam)].set_index("subset")
    near = smiling.reindex(["near boundary", "all"])[["n0", "n1"]].fillna(0)
    consistent = check["consistent"].sum() / check["n"].sum()
    kept = check["rate"].reindex([0, 1])
    reading = (
        f"`smile-cnn` was trained on faces where beards (on masculine faces) and makeup (on feminine ones) go with smiling, "
        f"and the renderer confirms it reads them: adding a beard to masculine faces that it calls not smiling, and nothing "
        f"else, flips {_ci(truth.loc['beard'], '0to1')} of them, makeup on feminine faces {_ci(truth.loc['makeup'], '0to1')}, "
        f"sunglasses {_ci(truth.loc['eyewear'], '0to1')}. Through the learned latent space, moving masculine faces along the "
        f"beard direction flips {_ci(beard, '0to1')}, against {_ci(rnd_m, '0to1')} along {args['controls']} random directions moved as far "
        f"on the same faces " + (f"({beard['rate_0to1'] / rnd_m['rate_0to1']:.1f}x; " if rnd_m["rate_0to1"] > 0 else "(")
        + ("the intervals do not overlap)" if clears else "the intervals overlap)")
        + f". The makeup direction flips {_ci(makeup, '0to1')} of feminine faces"
        + (f": no more than random, since the encoder keeps little makeup at 64 px (its direction separates the classes "
           f"no better than {table.loc['makeup', 'accuracy']:.0%}), so the sweep misses a shortcut the renderer shows"
           if makeup["low_0to1"] <= rnd_f["high_0to1"] else f", against {_ci(rnd_f, '0to1')} along the random directions")
        + f". The eyewear direction flips {_ci(eyewear, '0to1')} (the random directions {_ci(_row(sens, RANDOM, 'all', lam), '0to1')}) "
        f"while sunglasses alone flip "
        f"{truth.loc['eyewear', 'rate_0to1']:.0%}"
        + (": a direction in a learned space carries whatever goes with the attribute in the codes, the caution of Denton "
           "et al. (Sec. 5: attributes stay entangled in the generator), and why the renderer's interventions are reported "
           if eyewear["low_0to1"] > truth.loc["eyewear", "high_0to1"] else "; the renderer's interventions are reported ")
        + f"beside it. Interpolated codes keep their endpoints' class in {consistent:.1%} of {int(check['n'].sum())} cases "
        f"({kept[0]:.0%} of not-smiling pairs, {kept[1]:.0%} of smiling ones; the paper: 98%): "
        + (f"its smiling calls sit nearer its boundary ({near.loc['near boundary', 'n1']:.0f} of the {near.loc['all', 'n1']:.0f} "
           f"swept faces it calls smiling score between {NEAR_BOUNDARY[0]:g} and {NEAR_BOUNDARY[1]:g}, against "
           f"{near.loc['near boundary', 'n0']:.0f} of the {near.loc['all', 'n0']:.0f} it calls not smiling)" + _smile_reading(carry)
           if kept[1] < kept[0] else "the classifier is as smooth between smiling codes as between not-smiling ones.")
    )
    return f"""# Denton et al. reproduced on `faces-cvae`

`python experiments/denton.py --n-fit {args['n_fit']} --n-sweep {args['n_sweep']} --steps {args['steps']} \
--scale {args['scale']:g} --n-check {args['n_check']} --n-truth {args['n_truth']} --controls {args['controls']} --seed {args['seed']}`

![sweeps along each direction](sweeps.png)

## Attribute vectors (Sec. 3.2)

Linear SVMs on `E(x)` of {args['n_fit']} reference faces, smiling and gender presentation balanced between the
classes. `gap` is the distance between the class means along `d` (in prior standard deviations), `accuracy` that of
the cut halfway between them, `cos_*` the cosines between directions (with the random controls, the largest
in absolute value). Every sweep moves a code {args['scale']:g}
prior standard deviations along its direction at lambda = 1.

{_directions_md(table)}

## What the codes carry

The held-out AUC (5-fold, logistic regression on the standardised codes) with which `E(x)` of the same
faces predicts each attribute of the renderer's truth: smiling, the attribute `smile-cnn` predicts, and the
swept ones. Near 0.5: the generator does not draw it.

{_carried_md(carry)}

## Flip rates (eq. 6, Fig. 6)

Predictions flipped by moving every swept face (n = {args['n_sweep']}) along a direction, with Wilson 95% intervals:
0->1 among faces predicted not smiling at lambda = 0 when the attribute is added, 1->0 among those predicted
smiling when it is removed. `random` pools {args['controls']} random directions (n counts each face once per direction).

{_flip_md(sens, lam)}

![flip rates](flips.png)

## Score sensitivity (eq. 3, Fig. 5)

Mean change of p(smiling) at lambda = +1 and -1, t intervals; near boundary: 0.3 < f(G(z)) < 0.7.

{_score_md(sens, lam)}

![score sensitivity against lambda](sensitivity.png)

## Against the renderer's answer

The same flips from the renderer (`--n-truth` faces of the training recipe, each drawn with the attribute off and on,
all else the same) beside the latent sweep's, on the faces the attribute belongs to:

{_truth_md(sens, truth, lam)}

## Sanity check (Sec. 5)

Codes interpolated between two codes of the same predicted class (and conditions), scored by `smile-cnn`:

{_check_md(check)}

## Reading

{reading}
"""


def _bars(ax: Any, i: int, rows: pd.DataFrame, tag: str, label: str, parts: int = 2) -> None:
    """Bar series `i` of `parts` with Wilson error bars: `rate_<tag>` between `low_<tag>` and `high_<tag>`."""
    rate, low, high = (rows[f"{k}_{tag}"].to_numpy(float) for k in ("rate", "low", "high"))
    width = 0.76 / parts
    ax.bar(np.arange(len(rows)) + (i - (parts - 1) / 2) * width, rate, width, yerr=np.vstack([rate - low, high - rate]).clip(0),
           capsize=4, label=label, edgecolor="k")


def figures(sens: pd.DataFrame, strips: dict[str, list[np.ndarray]], lambdas: np.ndarray, truth: pd.DataFrame, out: Path) -> list[Path]:
    """sensitivity.png (Fig. 5: score sensitivity against lambda, all and near the boundary, for
    smile-cnn; classification sensitivity for haar-smile), flips.png (Fig. 6, and the sweep's flips
    beside the renderer's) and sweeps.png (Fig. 4)."""
    from searcher.figures.contact_sheet import contact_sheet

    plt = pyplot()
    panels = [("smile-cnn", "all", "score"), ("smile-cnn", "near boundary", "score"), ("haar-smile", "all", "classification")]
    fig, axes = plt.subplots(1, len(panels), figsize=(15, 4.2), sharey=False)
    for ax, (t, subset, kind) in zip(axes, panels):
        df = sens[(sens["target"] == t) & (sens["subset"] == subset)]
        col, lo, hi = ("score_sensitivity", "score_low", "score_high") if kind == "score" else ("sensitivity", "low", "high")
        for name, g in df.groupby("direction", sort=False):
            ax.plot(g["lambda"], g[col], marker="o", label=name, ls="-" if name not in ("eyewear", RANDOM) else "--")
            ax.fill_between(g["lambda"], g[lo], g[hi], alpha=0.15)
        ax.axhline(0, color="k", lw=0.6)
        ax.set(xlabel="lambda (attribute removed < 0 < added)", ylabel=f"{kind} sensitivity",
               title=f"{t}, {subset} (n = {int(df['score_n'].max()) if len(df) else 0})")
        ax.legend(fontsize=8)
    paths = [out / "sensitivity.png"]
    save(fig, paths[0])

    lam = float(sens["lambda"].max())
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.2))
    df = sens[(sens["target"] == "smile-cnn") & (sens["subset"] == "all")]
    names = list(dict.fromkeys(df["direction"]))
    for i, (tag, at, label) in enumerate((("0to1", lam, "0->1, attribute added"), ("1to0", -lam, "1->0, attribute removed"))):
        _bars(left, i, df[df["lambda"] == at].set_index("direction").loc[names], tag, label)
    left.set(xticks=np.arange(len(names)), xticklabels=names, ylabel="share of predictions flipped (95% Wilson CI)",
             title=f"smile-cnn, every swept face: flips at |lambda| = {lam:g}")
    left.legend(fontsize=8)
    swept = pd.DataFrame([_row(sens, d, r["cohort"], lam) for d, r in truth.iterrows()], index=truth.index)
    control = pd.DataFrame([_row(sens, RANDOM, r["cohort"], lam) for _, r in truth.iterrows()], index=truth.index)
    _bars(right, 0, swept, "0to1", "latent sweep, lambda = +1", parts=3)
    _bars(right, 1, control, "0to1", "random directions, same faces", parts=3)
    _bars(right, 2, truth, "0to1", "renderer: attribute drawn on", parts=3)
    right.set(xticks=np.arange(len(truth)), xticklabels=[f"{d}\n({r['cohort']})" for d, r in truth.iterrows()],
              ylabel="not smiling -> smiling (95% Wilson CI)", title="smile-cnn: the sweep against the renderer's answer")
    right.legend(fontsize=8)
    paths.append(out / "flips.png")
    save(fig, paths[-1])

    rows, captions = [], []
    for name, per_lambda in strips.items():
        for i in range(len(per_lambda[0])):
            rows += [images[i] for images in per_lambda]
            captions += [[f"{name} {lam:+.2f}"] for lam in lambdas]
    paths.append(out / "sweeps.png")
    contact_sheet(np.stack(rows), labels=captions, columns=len(lambdas)).save(paths[-1])
    return paths


def run(n_fit: int = 3000, n_sweep: int = 400, steps: int = 9, n_check: int = 600, seed: int = 0,
        out: str | Path = "runs/denton", scale: float = 3.0, n_truth: int = 400, controls: int = CONTROLS) -> dict[str, Any]:
    """Directions, sweeps, sensitivities, the sanity check, the report and figures; returns the tables."""
    for name, value, least in (("n_fit", n_fit, 40), ("n_sweep", n_sweep, 4), ("steps", steps, 3), ("n_check", n_check, 2),
                               ("n_truth", n_truth, 4), ("controls", controls, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"{name} must be an integer >= {least}. Got {value!r} instead.")
    if not np.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale must be a positive number (prior standard deviations). Got {scale!r} instead.")
    if steps % 2 == 0:
        raise ValueError(f"steps must be odd, so that lambda = 0 is on the grid. Got {steps}.")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    gen = FacesCVAE(resolution=128)
    ref = gen.reference({}, n_fit, seed=seed + 10)
    z_fit = gen.encode(ref.images)
    vectors, table = directions(z_fit, ref.truth, seed, controls)
    carry = carried(z_fit, ref.truth, seed)
    lambdas = np.linspace(-1.0, 1.0, steps)
    scores, z, conditions, strips = sweep(gen, vectors, scale, n_sweep, lambdas, seed)
    sens = sensitivities(scores, conditions)
    truth = interventions(n_truth, seed)
    check = sanity(gen, z, conditions, scores[(scores["direction"] == RANDOM) & (scores["control"] == 0) & (scores["lambda"] == 0.0)],
                   n_check, seed)
    table.to_csv(out / "directions.csv")
    carry.to_csv(out / "carried.csv")
    scores.to_csv(out / "scores.csv", index=False)
    sens.to_csv(out / "sensitivity.csv", index=False)
    check.to_csv(out / "sanity.csv")
    truth.to_csv(out / "interventions.csv")
    args = {"n_fit": n_fit, "n_sweep": n_sweep, "steps": steps, "n_check": n_check, "seed": seed, "scale": scale, "n_truth": n_truth,
            "controls": controls}
    (out / "report.md").write_text(report(table, carry, sens, check, truth, args))
    paths = figures(sens, strips, lambdas, truth, out)
    return {"directions": table, "carried": carry, "scores": scores, "sensitivity": sens, "sanity": check, "interventions": truth,
            "report": out / "report.md", "figures": paths}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n-fit", type=int, default=3000, help="encoded faces the attribute vectors are fitted on (default: 3000)")
    ap.add_argument("--n-sweep", type=int, default=400, help="encoded faces swept along every direction (default: 400)")
    ap.add_argument("--steps", type=int, default=9, help="values of lambda in [-1, 1], odd (default: 9)")
    ap.add_argument("--n-check", type=int, default=600, help="interpolated codes of the sanity check (default: 600)")
    ap.add_argument("--scale", type=float, default=3.0, help="prior standard deviations moved at lambda = 1 (default: 3)")
    ap.add_argument("--n-truth", type=int, default=400, help="faces the renderer's interventions are measured on (default: 400)")
    ap.add_argument("--controls", type=int, default=CONTROLS, help=f"random directions pooled as the control (default: {CONTROLS})")
    ap.add_argument("--seed", type=int, default=0, help="seed of every draw (default: 0)")
    ap.add_argument("--quick", action="store_true", help="toy sizes (--n-fit 400 --n-sweep 40 --steps 5 --n-check 60 --n-truth 40 --controls 2)")
    ap.add_argument("--out", default="runs/denton", help="output directory (default: runs/denton)")
    args = ap.parse_args(argv)
    sizes = (400, 40, 5, 60, 40, 2) if args.quick else (args.n_fit, args.n_sweep, args.steps, args.n_check, args.n_truth, args.controls)
    start = time.perf_counter()
    result = run(*sizes[:4], seed=args.seed, out=args.out, scale=args.scale, n_truth=sizes[4], controls=sizes[5])
    sens = result["sensitivity"]
    up = sens[(sens["target"] == "smile-cnn") & (sens["subset"] == "all") & (sens["lambda"] == 1.0)]
    print("smile-cnn, not smiling -> smiling at lambda = +1: "
          + ", ".join(f"{r['direction']} {r['rate_0to1']:.1%} [{r['low_0to1']:.1%}, {r['high_0to1']:.1%}]" for _, r in up.iterrows()))
    check = result["sanity"]
    print(f"sanity check: {check['consistent'].sum()}/{check['n'].sum()} interpolated codes keep their class")
    print(f"report: {result['report']}\n({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

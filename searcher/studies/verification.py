"""Face verification bias measured end to end, after the synthetic benchmark of docs/papers.md#liang.

Pseudo-identities are rendered under varied pose, age, expression and light; a verifier
(`dlib-verify`: 128-d descriptors, Euclidean distance) embeds every image; the pairs and their
measures are `searcher.analysis.verification`'s (`build_pairs`, `analyze_pairs`). `verify` (the
library call behind `searcher verify`) renders, measures and writes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from searcher.analysis.verification import N_GROUPS, VerificationReport, VerificationSet, analyze_pairs, build_pairs, impostor_capacity
from searcher.errors import ParameterError
from searcher.validation import check_int, check_number, checked

__all__ = ["VARIATIONS", "VerificationRun", "render_pairs", "verify"]

Draw = Callable[[np.random.Generator, np.ndarray], np.ndarray]

# How each unprotected attribute varies between the images of one identity (`base` is the
# identity's own value). Ranges stay where a frontal detector still finds most faces.
VARIATIONS: dict[str, Draw] = {
    "yaw": lambda rng, base: np.clip(rng.normal(0.0, 15.0, len(base)), -35.0, 35.0),          # pose: head turn, degrees
    "roll": lambda rng, base: np.clip(rng.normal(0.0, 6.0, len(base)), -20.0, 20.0),          # pose: head tilt, degrees
    "age": lambda rng, base: np.clip(base + rng.uniform(-10.0, 10.0, len(base)), 18.0, 85.0),  # the same person, +-10 years
    "smile": lambda rng, base: rng.uniform(0.0, 1.0, len(base)),                              # expression
    "light_intensity": lambda rng, base: rng.uniform(0.7, 1.3, len(base)),                    # exposure
    "light_direction": lambda rng, base: np.clip(rng.normal(0.0, 30.0, len(base)), -60.0, 60.0),  # key light azimuth
}
# The identity's own value of each attribute when it is not varied: frontal, even light.
HELD = {"yaw": 0.0, "roll": 0.0, "light_intensity": 1.0, "light_direction": 0.0}
# The protected attributes, balanced 2 x 2 by design; their bins come from the generator's vocabulary.
PROTECTED = ("skin_tone", "gender_presentation")


def _space_size(space: Any) -> int:
    """How many distinct pseudo-identities a space's `identity` parameter holds."""
    return int(space["identity"].high - space["identity"].low + 1)


def _bins(generator: str, gen: Any) -> tuple[dict[str, tuple[float, float]], dict[str, tuple[float, float]]]:
    """The two groups of each protected attribute, from the generator's vocabulary: skin (light,
    dark: Fitzpatrick 1-3 and 4-6 on `faces`) and gender presentation (clearly masculine, feminine)."""
    protected = getattr(getattr(gen, "vocabulary", None), "protected", {})
    if not all(len(protected.get(a, {})) == 2 for a in PROTECTED):
        raise ParameterError(f"Verification balances two groups of each of {list(PROTECTED)}; {generator!r} declares "
                             f"{dict(protected) or 'no protected groups'} in its vocabulary. Use faces.")
    return dict(protected[PROTECTED[0]]), dict(protected[PROTECTED[1]])


def _identities(space: Any, n: int, rng: np.random.Generator, skin_bins: dict[str, tuple[float, float]],
                gender_bins: dict[str, tuple[float, float]]) -> list[dict[str, Any]]:
    """One base row per pseudo-identity: every parameter from its own prior, then the protected
    attributes set by design (a balanced 2 x 2 of skin bin x gender bin, in turn), decorations
    that follow presentation (beards on masculine, makeup and earrings on feminine faces), no
    eyewear, blur, noise or scarf, an adult age, and the held conditions of `HELD`."""
    columns = {p.name: p.sample(rng, n) for p in space.params}
    rows = [{name: col[i] for name, col in columns.items()} for i in range(n)]
    ids = space["identity"].low + rng.choice(_space_size(space), n, replace=False)  # distinct identity numbers
    for i, row in enumerate(rows):
        skin, gender = list(skin_bins)[(i // 2) % 2], list(gender_bins)[i % 2]
        feminine = gender == "feminine"
        row.update(HELD, identity=int(ids[i]), skin_tone=float(rng.uniform(*skin_bins[skin])),
                   gender_presentation=float(rng.uniform(*gender_bins[gender])), age=float(rng.uniform(25.0, 65.0)),
                   eyewear="none", blur=0.0, noise=0.0, occlusion=0.0, scale=1.0, background=0.5,
                   facial_hair=0.0 if feminine else row["facial_hair"], makeup=row["makeup"] if feminine else 0.0,
                   earrings=row["earrings"] if feminine else 0.0, _skin=skin, _gender=gender)
    return rows


def render_pairs(generator: str = "faces", n_identities: int = 100, images_per_identity: int = 4,
                 vary: Sequence[str] = tuple(VARIATIONS), *, n_impostor: int = 20_000, target: str = "dlib-verify",
                 target_options: dict[str, Any] | None = None, resolution: int = 128, batch_size: int = 64,
                 seed: int = 0, progress: bool = False) -> VerificationSet:
    """Renders pseudo-identities, embeds each image with a verifier, and builds the pairs (Sec. 3
    of docs/papers.md#liang, which varies pose, age, expression and lighting per identity).

    A pseudo-identity is everything that makes a face that face in `faces`: the `identity` number
    (face-shape details, eye and clothing colour), skin tone, gender presentation, hair length and
    colour, beard, makeup and earrings, all fixed. Its images differ in the `vary` attributes,
    drawn afresh per image as `VARIATIONS` says: pose (`yaw`, `roll`; `faces` has no pitch), `age`
    (+-10 years around the identity's), expression (`smile`) and light (`light_intensity`,
    `light_direction`). Attributes not varied keep the identity's value. Each image slot renders with
    its own seed, so framing jitter, background tint and sensor noise also change between the
    images of one identity, as between two photographs. Groups are balanced by design: identity i
    is light or dark skinned (Fitzpatrick 1-3 or 4-6) and masculine or feminine in turn.

    Genuine pairs are all pairs of one identity's images; impostor pairs join two identities of
    the same group (cross-group pairs are easy to reject and would flatter a group's FMR), all of
    them or, beyond `n_impostor`, a seeded sample. Images without a face found are in no pair.

    Args:
        generator: a generator whose space has an `identity` parameter and the `vary` attributes (`faces`).
        n_identities: pseudo-identities, at least 8 (two per group).
        images_per_identity: images per identity, at least 2.
        vary: attributes changed between one identity's images, names of `VARIATIONS`.
        n_impostor: the most impostor pairs kept.
        target, target_options: a `verify` target (one embedding per image) and its options.
        resolution, batch_size: image side; images rendered and embedded together.
        seed: seeds the identities, the variations, the rendering and the impostor sample.
        progress: show a progress bar.

    Returns:
        A `VerificationSet` (images, pairs, embeddings).

    Raises:
        ParameterError: a bad count, an unknown attribute in `vary`, a generator without
        identities, or a target that is not a verifier.
    """
    from tqdm import tqdm

    import generators
    import targets

    n = check_int("n_identities", n_identities, 2 * N_GROUPS, what="argument", owner="render_pairs")
    k = check_int("images_per_identity", images_per_identity, 2, what="argument", owner="render_pairs")
    n_impostor = check_int("n_impostor", n_impostor, 1, what="argument", owner="render_pairs")
    batch_size = check_int("batch_size", batch_size, 1, what="argument", owner="render_pairs")
    vary = list(dict.fromkeys(vary.split(",") if isinstance(vary, str) else vary))
    unknown = [v for v in vary if v not in VARIATIONS]
    if unknown or not vary:
        raise ParameterError(f"Unknown attribute(s) {unknown} to vary (need at least one). Valid: {', '.join(VARIATIONS)}.")
    gen = generators.load(generator, resolution=resolution)
    names = [p.name for p in getattr(gen.space, "params", ())]
    if "identity" not in names or not set(vary) <= set(names):
        raise ParameterError(f"Verification renders pseudo-identities with an 'identity' parameter and the attributes "
                             f"{vary}; {generator!r} has parameters {names}. Use faces.")
    if n > _space_size(gen.space):
        raise ParameterError(f"n_identities (-n) must be at most {_space_size(gen.space)}, the identities {generator!r} has. Got {n}.")
    verifier = targets.load(target, **(target_options or {}))
    if getattr(verifier, "task", None) != "verify":
        raise ParameterError(f"{target!r} is a {getattr(verifier, 'task', '?')!r} target; verification needs a verify "
                             "target, e.g. dlib-verify.")

    rng = np.random.default_rng([seed, 0x5E1F])
    base = _identities(gen.space, n, rng, *_bins(generator, gen))
    rows = []
    for slot in range(k):
        drawn = {a: VARIATIONS[a](rng, np.array([b[a] for b in base], float)) for a in vary}
        rows += [{**b, "slot": slot, **{a: float(drawn[a][i]) for a in vary}} for i, b in enumerate(base)]
    images = pd.DataFrame({"image": np.arange(len(rows)), "identity": [r["identity"] for r in rows],
                           "slot": [r["slot"] for r in rows], "group": [f"{r['_skin']} {r['_gender']}" for r in rows],
                           "skin": [r["_skin"] for r in rows], "gender": [r["_gender"] for r in rows],
                           **{c: [r[c] for r in rows] for c in ("skin_tone", "gender_presentation", *vary)}})
    params = [{c: v for c, v in r.items() if c in names} for r in rows]
    emb: list[np.ndarray | None] = []
    examples: dict[int, np.ndarray] = {}
    with tqdm(total=len(rows), desc=f"{target} on {n} identities x {k}", unit="img", disable=not progress) as bar:
        for slot in range(k):
            slot_seed = int(np.random.SeedSequence([seed, slot]).generate_state(1)[0])
            for start in range(slot * n, (slot + 1) * n, batch_size):
                stop = min(start + batch_size, (slot + 1) * n)
                pixels = gen.generate(params[start:stop], seed=slot_seed).images
                pred = verifier.predict(pixels)
                emb += [e if found else None for e, found in zip(pred.embedding, pred.label)]
                examples.update({i: pixels[i - start] for i in range(start, stop) if i - slot * n < N_GROUPS})
                bar.update(stop - start)
    images["found"] = [e is not None for e in emb]
    dim = next((len(e) for e in emb if e is not None), 128)
    embeddings = np.array([np.full(dim, np.nan) if e is None else np.asarray(e, float) for e in emb])
    pairs = build_pairs(images, embeddings, vary, n_impostor, rng, getattr(verifier, "distance", None))
    return VerificationSet(images=images, pairs=pairs, embeddings=embeddings, examples=examples)


@dataclass
class VerificationRun:
    """What `verify` rendered, measured and wrote, and its summary in words."""

    set: VerificationSet
    report: VerificationReport
    lines: list[str]

    def summary(self) -> str:
        return "\n".join(self.lines)


@checked("verify")
def verify(out: str | Path, generator: str = "faces", n_identities: int = 100, images_per_identity: int = 4,
           vary: Sequence[str] = tuple(VARIATIONS), *, n_impostor: int = 20_000, fmr: float = 1e-3, fallback_fmr: float = 1e-2,
           n_boot: int = 1000, target: str = "dlib-verify", target_options: dict[str, Any] | None = None,
           resolution: int = 128, batch_size: int = 64, seed: int = 0, progress: bool = False) -> VerificationRun:
    """Renders pseudo-identities, measures the verifier per group, and writes to `out`: images.csv,
    pairs.csv, rates.csv, curves.csv, roc.png, effects.csv and identities.png (the library call behind
    `searcher verify`; `render_pairs` and `analyze_pairs` say what each step does).

    Raises:
        ParameterError: a bad argument, or too few impostor pairs for the FMR asked, before anything
        is rendered when it can be known then.
    """
    import time

    from searcher.figures.contact_sheet import contact_sheet
    from searcher.figures.verification import plot_curves

    for name, value in (("fmr", fmr), ("fallback_fmr", fallback_fmr)):
        check_number(name, value, 0.0, 1.0, open_low=True, open_high=True, what="argument", owner="verify")
    check_int("n_boot", n_boot, 0, what="argument", owner="verify")
    n = check_int("n_identities", n_identities, 2 * N_GROUPS, what="argument", owner="verify")
    k = check_int("images_per_identity", images_per_identity, 2, what="argument", owner="verify")
    pairs = min(impostor_capacity(n, k), n_impostor)
    need = math.ceil(10 / max(fmr, fallback_fmr))
    if pairs < need:
        raise ParameterError(f"n_identities (-n) {n} x images_per_identity (--images) {k} (n_impostor {n_impostor}) give at "
                             f"most {pairs} impostor pairs; an FMR of {max(fmr, fallback_fmr):g} needs {need}. Raise -n or --images.")
    start = time.perf_counter()
    vs = render_pairs(generator, n, k, vary, n_impostor=n_impostor, target=target, target_options=target_options,
                      resolution=resolution, batch_size=batch_size, seed=seed, progress=progress)
    try:
        report = analyze_pairs(vs.pairs, vs.images, fmr=fmr, fallback_fmr=fallback_fmr, n_boot=n_boot, seed=seed)
    except ValueError as exc:  # too few impostor pairs after failures to enrol, or a group without genuine pairs
        raise ParameterError(f"{exc} Raise -n or --images.") from exc
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    vs.images.to_csv(out / "images.csv", index=False)
    vs.pairs.to_csv(out / "pairs.csv", index=False)
    report.rates.to_csv(out / "rates.csv")
    report.curves.to_csv(out / "curves.csv", index=False)
    report.effects.to_csv(out / "effects.csv")
    plot_curves(report.curves, report.threshold, out / "roc.png")
    shown = vs.images.loc[list(vs.examples)].sort_values(["group", "slot"])  # one identity per group, a row each
    labels = [[r.group, "" if r.found else "NO FACE"] for r in shown.itertuples()]
    contact_sheet(np.stack([vs.examples[i] for i in shown.index]), labels=labels, columns=k).save(out / "identities.png")

    thr, rates = report.threshold, report.rates
    lost = vs.images[~vs.images["found"]]
    lines = [f"{len(vs.images)} images of {n} identities in {time.perf_counter() - start:.0f}s; no face found in "
             f"{len(lost)} (failures to enrol, left out of every pair)",
             f"{int(vs.pairs['same'].sum())} genuine and {int((vs.pairs['same'] == 0).sum())} impostor pairs; mean distance "
             + ", ".join(f"{name} {vs.pairs.loc[vs.pairs['same'] == s, 'distance'].mean():.3f}" for name, s in (("genuine", 1), ("impostor", 0)))]
    fell = f" (too few impostor pairs for {thr.fmr_requested:g})" if thr.fell_back else ""
    lines.append(f"global threshold {thr.threshold:.4f} for FMR {thr.fmr:g}{fell}; achieved {thr.fmr_achieved:.2g}")
    lines += [f"  {g:<16} FNMR {r['fnmr']:.3f} [{r['fnmr_low']:.3f}, {r['fnmr_high']:.3f}]  FMR {r['fmr']:.4f} "
              f"[{r['fmr_low']:.4f}, {r['fmr_high']:.4f}]  no face {int(r['no_face'])}/{int(r['images'])}" for g, r in rates.iterrows()]
    eff = report.effects
    lines.append("distance per unit change (genuine pairs): " + ", ".join(
        f"{a[2:]} {c:+.2g}±{s:.1g}" for a, c, s in zip(eff.index, eff["coef"], eff["std"])))
    lines.append(f"wrote {out}/images.csv, pairs.csv, rates.csv, curves.csv, roc.png, effects.csv, identities.png")
    return VerificationRun(vs, report, lines)

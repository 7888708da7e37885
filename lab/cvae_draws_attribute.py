"""Does `faces-cvae` draw an attribute the way a target reads it? Faces of the training recipe with
the cohort's gender are rendered with the attribute off and on (nothing else changed), encoded, and
drawn again from their codes: how often `smile-cnn`'s not-smiling call flips on the renders, and on
the drawings (E then G) of the same pairs. Also the cosine between the mean code shift the attribute
makes and the direction `experiments/denton.py` fits for it: a direction that points the right way
and a decoder that does not draw what the target reads are told apart.

    python lab/cvae_draws_attribute.py [--attribute makeup] [--n 400] [--n-fit 3000] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))

import denton  # noqa: E402

import targets  # noqa: E402
from generators.learned.data import training_rows  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--attribute", default="makeup", choices=[a for a in denton.ATTRIBUTES if denton.ATTRIBUTES[a].cohort])
    ap.add_argument("--n", type=int, default=400, help="faces of the training recipe (seed + 12), the cohort's kept")
    ap.add_argument("--n-fit", type=int, default=3000, help="reference faces the direction is fitted on (seed + 10), as denton.py")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    a = denton.ATTRIBUTES[args.attribute]
    gen = denton.FacesCVAE(resolution=128)
    ref = gen.reference({}, args.n_fit, seed=args.seed + 10)
    vectors, _ = denton.directions(gen.encode(ref.images), ref.truth, args.seed)
    rows, _ = training_rows(args.n, args.seed + 12)
    off, on = denton.attribute_pairs(a, rows, args.seed)
    z_off, z_on = gen.encode(off), gen.encode(on)
    shift = (z_on - z_off).mean(0)
    print(f"{args.attribute} on {len(off)} {a.cohort} faces: the code shift's cosine with the fitted directions: "
          + ", ".join(f"{k} {shift @ vectors[k] / np.linalg.norm(shift):+.3f}" for k in denton.ATTRIBUTES))
    model = targets.load("smile-cnn")
    conditions = [{k: p[k] for k in ("skin_type", "gender")} for p in gen.encode_params(off)]
    for label, pair in (("renders", (off, on)),
                        ("E then G", tuple(gen.from_latent(z, conditions=conditions).images for z in (z_off, z_on)))):
        before, after = (denton._smile_scores(model, images) >= 0.5 for images in pair)
        print(f"smile-cnn, not smiling -> smiling when {args.attribute} is added, on the {label}: "
              f"{int((~before & after).sum())} of {int((~before).sum())} ({(~before & after).sum() / max(1, (~before).sum()):.1%})")


if __name__ == "__main__":
    main()

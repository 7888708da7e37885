"""What orthogonalisation (Algorithm 2 of docs/papers.md#balakrishnan) buys on `faces-latent`.

    python lab/orthogonalisation.py              # 100 transects of 2x2x2, about a minute on 2 cores
    python lab/orthogonalisation.py -n 300 --fit-samples 4000

Hyperplanes for skin tone, hair length, gender presentation, facial hair and age are fitted on
simulated annotations (5 annotators) of `--fit-samples` latents. The same base latents then walk the
paper's 3-attribute transects (skin tone x hair length x gender presentation, decision values -1.5
and +1.5) four ways:

- raw:            along the normals themselves (v_k = n_k);
- orth:           Algorithm 2 against the three manipulated attributes' normals (the paper's setting);
- orth+beard:     facial hair annotated too, and orthogonalised against ("as soon as one residual
                  correlation is discovered it may be systematically annotated ... and mitigated");
- orth+beard+age: age as well, because holding the beard alone pushes the change into age.

Printed: the mean absolute change of every attribute (the generator's truth) along each axis; the
signed facial-hair change along the hair axis on the masculine and feminine side of the gender
axis (Fig. 18: longer hair adds beards to men); and the mean range of the held attributes across
each transect.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

import generators
from searcher.analysis.annotations import aggregate, simulate_annotations, wide
from searcher.analysis.transects import (
    axis_drift,
    fit_hyperplanes,
    make_transects,
    render_latents,
    transect_drift,
)

AXES = ("skin_tone", "hair_length", "gender_presentation")
EXTRA = ("facial_hair", "age")
MEASURED = ("skin_tone", "hair_length", "gender_presentation", "facial_hair", "earrings", "makeup", "age", "smile")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=100, help="transects per condition (default: 100)")
    parser.add_argument("--fit-samples", type=int, default=2000, help="annotated latents for the hyperplanes (default: 2000)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    start = time.perf_counter()
    gen = generators.load("faces-latent", resolution=64)  # only the truth is measured; small renders are fast
    z = np.random.default_rng([args.seed, 1]).standard_normal((args.fit_samples, gen.latent_dim))
    truth = pd.concat([b.truth for _, b in render_latents(gen, z)], ignore_index=True)
    scores = wide(aggregate(simulate_annotations(truth, [*AXES, *EXTRA], seed=args.seed)))
    planes = fit_hyperplanes(z, scores, [*AXES, *EXTRA], seed=args.seed)
    print(f"faces-latent, {args.fit_samples} annotated latents, {args.n} transects of 2x2x2 per condition, seed {args.seed}")
    print("hyperplanes (held-out R^2): " + ", ".join(f"{p.attribute} {p.score:.2f}" for p in planes.values()))
    normals = np.stack([p.normal for p in planes.values()])
    print("cosines between normals:\n" + pd.DataFrame(normals @ normals.T, index=list(planes), columns=list(planes)).round(2).to_string())

    held_planes = {"raw": AXES, "orth": AXES, "orth+beard": (*AXES, "facial_hair"), "orth+beard+age": (*AXES, *EXTRA)}
    conditions = {name: ({a: planes[a] for a in names}, name != "raw") for name, names in held_planes.items()}
    along, beard, held = {}, {}, {}
    for name, (chosen, ortho) in conditions.items():
        t = make_transects(gen, chosen, AXES, size=(2, 2, 2), n=args.n, steps=1.5, seed=args.seed, orthogonalise=ortho)
        change = axis_drift(t.table, AXES, MEASURED)
        along[name] = change.assign(change=change["change"].abs()).groupby(["axis", "attribute"], sort=False)["change"].mean()
        hair = change[(change["axis"] == "hair_length") & (change["attribute"] == "facial_hair")]
        beard[name] = hair.groupby("idx_gender_presentation")["change"].mean().rename({0.0: "masculine side", 1.0: "feminine side"})
        held[name] = transect_drift(t.table, [a for a in MEASURED if a not in AXES]).groupby("attribute")["range"].mean()

    table = pd.DataFrame(along)
    table["orth / raw"] = (table["orth"] / table["raw"]).where(table["raw"] > 0.05)
    print("\nmean |change| of each attribute along each axis (first level -> last level; own attribute = intended")
    print("change; age in years, skin tone in Fitzpatrick units, the rest in [0, 1]; ratio where raw > 0.05)")
    print(table.round(3).to_string())
    print("\nfacial hair change along the hair axis (signed mean; Fig. 18)")
    print(pd.DataFrame(beard).round(3).to_string())
    print("\nmean range across a transect of the attributes nobody manipulated")
    print(pd.DataFrame(held).round(3).to_string())
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()

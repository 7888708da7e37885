"""Makes the README's small pictures (docs/*.png) from the embedded defaults.

    python docs/make_figures.py
    python benchmarks/detectability.py --montage docs/detections.png   # the detector montage
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import generators
from searcher.figures.contact_sheet import contact_sheet
from searcher.studies.generator_quality import condition_grid

HERE = Path(__file__).parent


def faces_sheet() -> None:
    gen = generators.load("faces")
    batch = gen.generate(gen.space.sample(16, seed=0), seed=0)
    contact_sheet(batch.images, batch.truth, columns=8).save(HERE / "faces.png")


def one_identity() -> None:
    """One pseudo-person, identity 7, under the conditions a search explores."""
    gen = generators.load("faces")
    base = {"identity": 7, "skin_tone": 5.0, "gender_presentation": 0.3, "age": 35.0, "hair_length": 0.3}
    changes = [
        ("as drawn", {}), ("smile 0.9", {"smile": 0.9}), ("yaw +45", {"yaw": 45.0}), ("roll -25", {"roll": -25.0}),
        ("side light", {"light_direction": 80.0}), ("dim 0.3", {"light_intensity": 0.3}), ("sunglasses", {"eyewear": "sunglasses"}),
        ("scarf 0.7", {"occlusion": 0.7}), ("blur 2.5", {"blur": 2.5}), ("noise 0.12", {"noise": 0.12}), ("beard 0.9", {"facial_hair": 0.9}),
        ("age 75", {"age": 75.0}),
    ]
    batch = gen.generate([{**base, **c} for _, c in changes])
    contact_sheet(batch.images, labels=[[label] for label, _ in changes], columns=6).save(HERE / "one_identity.png")


def entanglement() -> None:
    """faces-latent: a step along the fitted hair-length direction, before and after removing its
    gender component (Algorithm 2 of docs/papers.md#balakrishnan, in miniature)."""
    gen = generators.load("faces-latent")
    z = np.random.default_rng(0).standard_normal((4000, gen.latent_dim))
    rows = gen.attributes(z)

    def direction(name: str) -> np.ndarray:
        y = np.array([r[name] for r in rows])
        zc = z - z.mean(0)
        w = np.linalg.solve(zc.T @ zc + np.eye(gen.latent_dim), zc.T @ (y - y.mean()))
        return w / np.linalg.norm(w)

    hair, gender = direction("hair_length"), direction("gender_presentation")
    ortho = hair - (hair @ gender) * gender
    ortho /= np.linalg.norm(ortho)
    start = -0.6 * gender
    steps = np.linspace(-2.0, 2.0, 5)[:, None]
    codes = np.concatenate([start + steps * hair, start + steps * ortho])
    batch = gen.from_latent(codes)
    kinds = [f"{kind} {s:+.0f}" for kind in ("raw", "orth") for s in steps[:, 0]]
    labels = [[k, f"hair {r.hair_length:.2f} g {r.gender_presentation:.2f}"] for k, (_, r) in zip(kinds, batch.truth.iterrows())]
    contact_sheet(batch.images, labels=labels, columns=5).save(HERE / "entanglement.png")


def faces_cvae_conditions() -> None:
    """faces-cvae at its own 64 px: the same eight codes (columns) under every combination of its
    conditions (rows), as `validate-generator` draws its conditions.png."""
    images, cells = condition_grid(generators.load("faces-cvae", resolution=64))
    labels = [[f"{cell['skin_type']} {cell['gender'][0]}"] for cell in cells for _ in range(8)]  # "V-VI f": fits 64 px
    contact_sheet(images, labels=labels, columns=8).save(HERE / "faces_cvae_conditions.png")


if __name__ == "__main__":
    faces_sheet()
    one_identity()
    entanglement()
    faces_cvae_conditions()
    print("wrote", ", ".join(sorted(p.name for p in HERE.glob("*.png"))))

"""How people describe a face: the annotation scales, captions, the attributes analysed by default
and the protected groups, for `faces` and `faces-latent` alike (both render the same attributes).

The scales are the rating form of Balakrishnan et al. (docs/papers.md#balakrishnan, Fig. 6) on this
project's attributes; `earrings` and `smile` are ours. `gender_presentation` keeps this project's
orientation: level 1 is clearly masculine, level 5 clearly feminine (the paper's form lists Female
first); it is a perception scale, not anyone's gender.
"""

from __future__ import annotations

import pandas as pd

from generators.base import Scale, Vocabulary

__all__ = ["AMBIGUOUS", "ANALYSED", "DARK", "FACES", "FEMININE", "LIGHT", "MASCULINE", "SCALES", "caption"]

SCALES: dict[str, Scale] = {
    "skin_tone": Scale(6, 1.0, 6.0, labels=("light", "fair", "medium", "olive", "brown", "black")),
    "age": Scale(6, 4.0, 85.0, edges=(12.5, 18.5, 30.0, 50.0, 65.0),
                 labels=("child", "teen", "young adult", "adult", "middle age", "senior")),
    "gender_presentation": Scale(5, labels=("masculine", "probably masculine", "in between", "probably feminine", "feminine")),
    "hair_length": Scale(5, labels=("very short", "short", "medium", "long", "very long")),
    "smile": Scale(5, labels=("neutral", "slight", "closed smile", "smile", "broad smile")),
    "facial_hair": Scale(4, labels=("none", "minimal", "regular", "heavy")),
    "makeup": Scale(4, labels=("none", "minimal", "full", "showy")),
    "earrings": Scale(3, labels=("none", "small", "large")),
    "fakeness": Scale(5, labels=("real for sure", "likely real", "uncertain", "likely fake", "fake for sure")),
}

# Sec. 5.2.1: ambiguous middle ranges of the normalised scores, dropped before analysis.
AMBIGUOUS: dict[str, tuple[float, float]] = {
    "skin_tone": (0.4, 0.6),
    "gender_presentation": (0.4, 0.6),
    "hair_length": (0.3, 0.5),
}

#: Truth columns `searcher analyze` looks at by default: demographics, pose, light, eyewear.
ANALYSED = ("skin_tone", "hair_length", "gender_presentation", "age", "yaw", "light_intensity", "eyewear")

LIGHT, DARK = (1.0, 3.49), (3.5, 6.0)  # Fitzpatrick 1-3 and 4-6 once `skin_tone` is rounded
MASCULINE, FEMININE = (0.0, 0.35), (0.65, 1.0)  # clear presentations


def caption(row: pd.Series) -> list[str]:
    """Two short lines that tell faces apart: skin type, gender presentation, age; pose and light."""
    lines = []
    if {"fitzpatrick", "gender_presentation", "age"} <= set(row.index):
        lines.append(f"F{int(row['fitzpatrick'])} g{row['gender_presentation']:.1f} {row['age']:.0f}y")
    if {"yaw", "light_intensity"} <= set(row.index):
        extra = " " + str(row["eyewear"])[:5] if row.get("eyewear", "none") != "none" else ""
        lines.append(f"yaw{row['yaw']:+.0f} L{row['light_intensity']:.1f}{extra}")
    return lines


FACES = Vocabulary(
    scales=SCALES,
    ambiguous=AMBIGUOUS,
    analysed=ANALYSED,
    protected={"skin_tone": {"light": LIGHT, "dark": DARK}, "gender_presentation": {"masculine": MASCULINE, "feminine": FEMININE}},
    caption=caption,
)

"""The faces' palettes and shape vector: what a face can look like, with no renderer attached.

Kept apart from `render.py` (torch) so that the spaces and the vocabulary of `faces` and
`faces-latent` load without torch; the renderer imports them from here.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CLOTHES", "EYEWEAR", "HAIR_COLORS", "IRIS_COLORS", "N_SHAPE", "SKIN_TONES"]

# Fitzpatrick I..VI reference colours (sRGB, 0..1), interpolated for continuous skin_tone.
SKIN_TONES = np.array(
    [
        [0.97, 0.85, 0.77],
        [0.93, 0.76, 0.64],
        [0.84, 0.64, 0.48],
        [0.69, 0.49, 0.33],
        [0.50, 0.34, 0.22],
        [0.32, 0.21, 0.14],
    ]
)
HAIR_COLORS = {
    "black": (0.07, 0.06, 0.05),
    "brown": (0.30, 0.19, 0.11),
    "red": (0.58, 0.26, 0.12),
    "blonde": (0.86, 0.72, 0.46),
    "grey": (0.70, 0.70, 0.69),
}
EYEWEAR = ("none", "glasses", "sunglasses")
IRIS_COLORS = np.array([[0.30, 0.18, 0.09], [0.14, 0.09, 0.06], [0.30, 0.45, 0.62], [0.33, 0.44, 0.28]])
CLOTHES = np.array(
    [[0.15, 0.22, 0.45], [0.55, 0.12, 0.14], [0.18, 0.40, 0.25], [0.85, 0.85, 0.82], [0.12, 0.12, 0.13], [0.75, 0.55, 0.20]]
)
# Identity shape coefficients in [-1, 1]: face width, jaw taper, eye spacing, eye size, nose length,
# nose width, mouth width, lip fullness, brow height, hairline, clothing colour, iris colour.
N_SHAPE = 12

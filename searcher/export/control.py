"""The control the retraining experiment of McDuff et al. lacked: as many images drawn at random
from the same generator and prior as the export holds, rendered, judged and labelled the same way,
so that what hard examples buy can be told apart from what any more data buys.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from searcher.campaign.store import encode_png
from searcher.errors import ParameterError
from searcher.export.source import Source
from searcher.objective import Outcome

__all__ = ["CONTROLS", "judged_row", "random_control"]

CONTROLS = ("random",)
_STREAM = 7  # the control's own seeded stream, apart from the campaign's


def random_control(source: Source, n: int, seed: int) -> tuple[pd.DataFrame, list[bytes]]:
    """`n` images drawn uniformly from the source's searched cube (a campaign's: its prior or box,
    its fixed parameters held), or from the generator's prior (a transect run's); rendered with the
    source's seed, judged by its target, and kept when their truth has a label. Returns rows in the
    `Source.rows` layout (source "control"; `trial` is the row's own key, `control-00000` on, so
    that the control concatenates with the set it controls) and their PNGs."""
    rng = np.random.default_rng([seed, _STREAM])
    objective, render_seed = source.objective, int(source.config.get("seed", 0))
    rows, images = [], []
    for _ in range(50):
        k = n - len(rows)
        if k <= 0:
            break
        draw = 2 * k + 8  # ambiguous truths are dropped; draw more than needed, keep the first n
        if source.kind == "transect":
            params = objective.generator.space.sample(draw, seed=int(rng.integers(2**31)))
        else:
            X = source.space.cube.uniform(rng, draw)
            params = [{**source.held, **p} for p in source.space.from_unit(X)]
        for outcome in objective.evaluate(params, seed=render_seed):
            right = objective.judge.true_label(outcome.truth)
            if right is None or len(rows) >= n:
                continue
            rows.append(judged_row(outcome, right, key=f"control-{len(rows):05d}", campaign=source.dir.name, strategy="random",
                                   kind="control"))
            images.append(encode_png(outcome.image))
    if len(rows) < n:
        raise ParameterError(f"Could draw only {len(rows)} of {n} control images with an unambiguous truth; the prior "
                             "almost never renders a clear label here.")
    return pd.DataFrame(rows), images


def judged_row(outcome: Outcome, right: Any, key: str, campaign: str, strategy: str, kind: str, mode: int = -1) -> dict[str, Any]:
    """One rendered and judged image as a row in the `Source.rows` layout: `key` is its id and its
    trial, `kind` its source ("control", or a retraining recipe's), `right` its right label."""
    return {
        "id": key, "campaign": campaign, "trial": key, "strategy": strategy, "source": kind, "prediction": outcome.label,
        "score": outcome.score, "boxes": list(outcome.boxes), "loss": outcome.loss, "failure": bool(outcome.failure), "mode": mode,
        "true_label": right, "weight": 1.0,
        **{f"param.{k}": v for k, v in outcome.params.items()}, **{f"truth.{k}": v for k, v in outcome.truth.items()},
    }

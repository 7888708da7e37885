"""`searcher.analysis.explain`: each failure mode as a rule over the generator's parameters, in the
parameters' own units, found without being told where the failures are."""

import numpy as np
import pandas as pd
import pytest

import searcher
from searcher.analysis.explain import explain, explain_modes
from searcher.errors import ParameterError
from searcher.export.source import read_source
from searcher.space import Categorical, Continuous, Latent, Space, TruncatedNormal
from searcher.testing.planted import PlantedRegions

# three boxes bounded on all four dimensions, 30% of the cube failing: a 600-draw random search
# gives modes of 10+ failures, several of them parts of one box
PLANTED = {"dim": 4, "k": 3, "volume": 0.3, "seed": 1}


@pytest.fixture(scope="module")
def planted(stored_campaign):
    return stored_campaign("random", generator="planted", target="planted", strategy="random", budget=600, batch=200,
                           generator_options=PLANTED, target_options=PLANTED)


def _iou(lo: np.ndarray, hi: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> float:
    """IoU of two boxes of the cube."""
    inter = np.prod(np.clip(np.minimum(hi, upper) - np.maximum(lo, lower), 0, None))
    return float(inter / (np.prod(hi - lo) + np.prod(upper - lower) - inter))


def _box(rule: dict, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """The rule as a box of the whole cube: a coordinate it leaves open spans [0, 1]."""
    return (np.array([rule.get(f"x{d}", (0.0, 1.0))[0] for d in range(dim)]),
            np.array([rule.get(f"x{d}", (0.0, 1.0))[1] for d in range(dim)]))


def test_every_mode_of_ten_failures_finds_its_whole_planted_box(planted):
    """The issue's bar over the whole space, and a part of a box grown to the whole: each mode's rule
    overlaps its box far more than the box around the mode's own failures does."""
    boxes = PlantedRegions(**PLANTED)
    trials = searcher.load_campaign(planted).trials
    region = np.array([t["region"] for t in trials["truth"]])
    X = np.array(trials["x"].tolist())
    labels = read_source(planted).rows["mode"].to_numpy()
    ruled = [m for m in explain(planted) if m.failures >= 10]
    assert len(ruled) >= 6
    parts = np.zeros(PLANTED["k"], int)
    for m in ruled:
        mine = labels == m.mode
        box = np.bincount(region[mine][region[mine] >= 0]).argmax()
        parts[box] += 1
        iou = _iou(*_box(m.rule, PLANTED["dim"]), boxes.lower[box], boxes.upper[box])
        assert iou >= 0.5, (m.mode, m.rule, boxes.lower[box], boxes.upper[box])
        assert iou >= 1.5 * _iou(X[mine].min(axis=0), X[mine].max(axis=0), boxes.lower[box], boxes.upper[box])
        assert m.precision[0] >= 0.9 and m.coverage[0] >= 0.9  # the boxes are clean: the rule holds failures and little else
        assert m.over == "parameters"
    assert parts.max() >= 3  # one box cut into three modes or more, each of them grown to the whole box


def test_modes_are_the_reports_and_small_ones_get_no_rule(planted):
    counts = read_source(planted).rows.query("mode >= 0")["mode"].value_counts().sort_index()
    modes = explain(planted, min_failures=20)
    assert [(m.mode, m.failures) for m in modes] == list(counts.items())
    for m in modes:
        assert (m.rule is None) == (m.failures < 20)
        assert (m.precision is None and m.coverage is None) == (m.rule is None)


def test_rules_are_in_parameter_units_with_levels_and_words():
    """Failures at yaw > 38 degrees with sunglasses, in a prior cube where a cube threshold would
    read 0.7-0.8: the rule says yaw from about 38 (degrees) and the level, and nothing of hair."""
    space = Space([Continuous("yaw", -75, 75, prior=TruncatedNormal(0, 20), doc="head turn in degrees"),
                   Categorical("eyewear", ("none", "glasses", "sunglasses")),
                   Continuous("hair_length", 0, 1, doc="0 bald .. 1 long")], prior_cube=True)
    rows = space.sample(1500, seed=1)
    rng = np.random.default_rng(0)
    for r in rows:
        r["yaw"] = float(rng.uniform(-75, 75))  # a search that went everywhere
    fail = np.array([r["yaw"] > 38 and r["eyewear"] == "sunglasses" for r in rows])
    trials = pd.DataFrame({"loss": fail.astype(float), "error": None, "excluded": None, "x": list(space.to_unit(rows)),
                           **{f"param.{n}": [r[n] for r in rows] for n in space.names}})
    [mode] = explain_modes(trials, space, np.where(fail, 0, -1))
    assert set(mode.rule) == {"yaw", "eyewear"}
    assert mode.rule["eyewear"] == ["sunglasses"]
    assert 35 <= mode.rule["yaw"][0] <= 40 and mode.rule["yaw"][1] == 75
    assert mode.caption.startswith("yaw > 3") and "°" in mode.caption and "eyewear: sunglasses" in mode.caption
    inside = (trials["param.yaw"] >= mode.rule["yaw"][0]) & (trials["param.eyewear"] == "sunglasses")
    assert mode.precision[0] == round(float(fail[inside].mean()), 4) and mode.precision[1] <= mode.precision[0] <= mode.precision[2]
    assert mode.coverage[0] == round(float(inside[fail].mean()), 4)


def test_a_latent_space_is_explained_in_its_rendered_attributes():
    """A latent search (as faces-latent's) whose trials carry the rendered attributes: the rule bounds
    hair length, the attribute the failures follow, not a latent coordinate, and says so; without
    the truth, or with a vocabulary that analyses nothing (faces-cvae's), it falls back to z."""
    from generators.base import Vocabulary
    from generators.faces.vocabulary import ANALYSED, FACES

    space = Space(latent=Latent("z", 3, 3.0))
    rng = np.random.default_rng(0)
    rows = space.sample(1200, seed=0)
    truth = [{"skin_tone": rng.uniform(1, 6), "hair_length": float(np.clip(0.5 + 0.2 * r["z0"] + 0.1 * rng.normal(), 0, 1)),
              "gender_presentation": rng.uniform(), "age": rng.uniform(4, 85), "yaw": rng.uniform(-60, 60),
              "light_intensity": rng.uniform(0.5, 1.5), "eyewear": rng.choice(["none", "glasses"]), "smile": rng.uniform()} for r in rows]
    fail = np.array([t["hair_length"] > 0.7 for t in truth])
    trials = pd.DataFrame({"loss": fail.astype(float), "error": None, "excluded": None, "x": list(space.to_unit(rows)), "truth": truth,
                           **{f"param.{n}": [r[n] for r in rows] for n in space.names}})
    [mode] = explain_modes(trials, space, np.where(fail, 0, -1), FACES)
    assert mode.over == "truth" and mode.to_dict()["over"] == "truth"
    assert set(mode.rule) == {"hair_length"} and set(mode.rule) <= set(ANALYSED)
    assert 0.65 <= mode.rule["hair_length"][0] <= 0.75 and mode.rule["hair_length"][1] == 1.0
    assert mode.caption.startswith("as rendered: hair length > 0.7") and "long" in mode.caption
    assert mode.precision[0] >= 0.95 and mode.coverage[0] >= 0.95
    for frame, vocabulary in ((trials.drop(columns="truth"), FACES), (trials, Vocabulary())):
        [mode] = explain_modes(frame, space, np.where(fail, 0, -1), vocabulary)
        assert mode.over == "parameters" and set(mode.rule) <= {"z0", "z1", "z2"} and "as rendered" not in mode.caption


def test_bad_options_and_a_comparison_get_one_line_errors(planted, tmp_path):
    with pytest.raises(ParameterError, match="depth"):
        explain(planted, depth=0)
    with pytest.raises(ParameterError, match="min_failures"):
        explain(planted, min_failures=-1)
    (tmp_path / "runs" / "random").mkdir(parents=True)
    (tmp_path / "runs" / "random" / "campaign.sqlite").write_bytes((planted / "campaign.sqlite").read_bytes())
    with pytest.raises(ParameterError, match="comparison"):
        explain(tmp_path)


def test_a_caption_names_the_sides_that_keep_most_passes_out_and_counts_the_rest():
    """Failures where x0 > 0.3 and x1..x5 > 0.5: the rule bounds all six, the caption names five and
    says one more; x0, whose side keeps out the fewest passes (its bound is the widest), is the one left out."""
    space = Space([Continuous(f"x{i}", 0, 1) for i in range(6)])
    rows = space.sample(4000, seed=0)
    fail = np.array([r["x0"] > 0.3 and all(r[f"x{i}"] > 0.5 for i in range(1, 6)) for r in rows])
    trials = pd.DataFrame({"loss": fail.astype(float), "error": None, "excluded": None, "x": list(space.to_unit(rows)),
                           **{f"param.{n}": [r[n] for r in rows] for n in space.names}})
    [mode] = explain_modes(trials, space, np.where(fail, 0, -1))
    assert set(mode.rule) == set(space.names)
    assert mode.caption.endswith(", and 1 more bound") and "x0" not in mode.caption
    assert all(f"x{i} > 0." in mode.caption for i in range(1, 6))

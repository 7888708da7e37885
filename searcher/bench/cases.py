"""The cases of the benchmark suite: what a strategy is scored on, and whether the defaults were tuned there.

A `Case` is a planted landscape (`searcher.testing.planted.PlantedRegions`: known regions, scored
with ask/tell and no images) or a campaign against a real target (generator, target, the "score"
loss but for one; breadth is failure modes). `SUITE` is the public suite: planted landscapes of 6 to 20
dimensions, 3 to 12 regions, every shape, 0.1% to 5% of the volume, three with a categorical
parameter, 11 with a target that gives a confidence and 8 with 0/1 answers only (names ending
`-01`: every shape and a category, since with 0/1 answers no confidence points a search at a region
it has not hit); and the face campaigns, one of them answered 0/1 as campaigns are by default
(`faces-dlib-hog-01`). `tuned=True` marks the cases the defaults were chosen on
(`planted-d6-k5`, `faces-haar-face`, `faces-dlib-cnn`): a strategy's numbers there are not a test.

Every default of `bo-modes` was then chosen by its score on the whole `SUITE`, so the suite is
where it was tuned. `HELD_OUT` keeps cases aside to check that what was chosen there generalises:
the suite's 19 planted specifications with their regions placed afresh (layout 1, where the suite
has layout 0, or the first seed after it whose regions can be placed: 3 and 2 for the two 10-D
boxes) and two pairings of a generator and a target that no suite case has (`faces-cvae` against
dlib-hog, `faces-latent` against haar-face). They are not in `SUITE`; select them with
`held-out` or by name, and look at them only to report, never to choose a default.
Names: `SHAPE-dD-kK-vPERCENT[-cLEVELS][-01][-lLAYOUT]` for planted cases, `GENERATOR-TARGET[-01]` for campaigns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from searcher.errors import ParameterError
from searcher.validation import check_choice, check_names

__all__ = ["HELD_OUT", "KINDS", "SUITE", "Case", "select_cases"]

KINDS = ("planted", "campaign")
HELD_OUT_GROUP = "held-out"  # the name that selects every case of `HELD_OUT`


@dataclass(frozen=True)
class Case:
    """One benchmark case. Build it with `Case.planted(...)` or `Case.campaign(...)`.

    Attributes:
        name: unique within the suite; the key of its rows in runs.csv.
        kind: "planted" (ask/tell on a `PlantedRegions`) or "campaign" (`searcher.compare`).
        options: planted: dim, k, volume, shape, categories, layout (the layout's seed), score
            (whether the target gives a confidence); campaign: generator, target,
            generator_options, target_options, truth_column and cut (classify targets; None: what
            the target declares), loss.
        tuned: whether the defaults were tuned on this case.
    """

    name: str
    kind: str
    options: Mapping[str, Any] = field(default_factory=dict)
    tuned: bool = False

    def __post_init__(self) -> None:
        check_choice("kind", self.kind, KINDS, owner="Case")

    @classmethod
    def planted(cls, name: str, dim: int, k: int, volume: float, shape: str = "box", categories: int = 0, layout: int = 0,
                score: bool = True, tuned: bool = False) -> Case:
        """A planted landscape (its options checked by building it once when it runs)."""
        return cls(name, "planted", {"dim": dim, "k": k, "volume": volume, "shape": shape, "categories": categories,
                                     "layout": layout, "score": score}, tuned)

    @classmethod
    def campaign(cls, name: str, generator: str, target: str, generator_options: Mapping[str, Any] | None = None,
                 target_options: Mapping[str, Any] | None = None, truth_column: str | None = None, cut: float | None = None,
                 loss: str = "score", tuned: bool = False) -> Case:
        """Campaigns of `generator` against `target`, run through `searcher.compare`."""
        return cls(name, "campaign", {"generator": generator, "target": target, "generator_options": dict(generator_options or {}),
                                      "target_options": dict(target_options or {}), "truth_column": truth_column, "cut": cut,
                                      "loss": loss}, tuned)

    @property
    def score(self) -> bool:
        """Whether the target gives a confidence (planted) or a continuous loss (campaign)."""
        return bool(self.options["score"]) if self.kind == "planted" else self.options.get("loss") == "score"

    def regions(self) -> Any:
        """The planted landscape (`PlantedRegions`) of a planted case."""
        from searcher.testing.planted import PlantedRegions

        o = self.options
        return PlantedRegions(dim=o["dim"], k=o["k"], volume=o["volume"], seed=o["layout"], shape=o["shape"], categories=o["categories"])

    def describe(self) -> str:
        """The landscape in a few words, for tables and `searcher bench --list`."""
        o = self.options
        if self.kind == "planted":
            mixed = f" + c ({o['categories']} levels)" if o["categories"] else ""
            answer = "confidence" if o["score"] else "0/1 only"
            return f"{o['shape']}, {o['dim']}-D{mixed}, {o['k']} regions, {100 * o['volume']:g}% of the space, layout {o['layout']}, {answer}"
        extra = [f"{k}={v}" for k, v in {**o["generator_options"], **o["target_options"]}.items()]
        if o["truth_column"] is not None:
            extra.append(f"truth {o['truth_column']}" + ("" if o["cut"] is None else f" >= {o['cut']:g}"))
        return f"{o['generator']} vs {o['target']}, {o['loss']} loss" + (f" ({', '.join(extra)})" if extra else "")


def _planted(shape: str, dim: int, k: int, volume: float, categories: int = 0, score: bool = True) -> Case:
    name = f"{shape}-d{dim}-k{k}-v{100 * volume:g}" + (f"-c{categories}" if categories else "") + ("" if score else "-01")
    return Case.planted(name, dim, k, volume, shape, categories, score=score)


def _relaid(case: Case, layout: int) -> Case:
    """A planted case with its regions placed by another layout seed: the same specification, new regions."""
    return Case.planted(f"{case.name}-l{layout}", **{**case.options, "layout": layout})


SUITE: tuple[Case, ...] = (
    Case.planted("planted-d6-k5", dim=6, k=5, volume=0.03, shape="box", layout=0, score=False, tuned=True),  # the historical one
    _planted("box", 10, 8, 0.01),
    _planted("box", 10, 3, 0.05, score=False),
    _planted("box", 14, 3, 0.001),
    _planted("ball", 6, 3, 0.01),
    _planted("ball", 8, 4, 0.001),
    _planted("shell", 6, 4, 0.002),
    _planted("shell", 7, 3, 0.001),
    _planted("slab", 12, 5, 0.02),
    _planted("slab", 16, 8, 0.005),
    _planted("slab", 20, 12, 0.005),
    _planted("slab", 20, 4, 0.002, score=False),
    _planted("box", 8, 6, 0.02, categories=3),
    _planted("ball", 6, 4, 0.005, categories=2),
    _planted("ball", 6, 3, 0.005, score=False),  # the rest of the 0/1 half: one case for each kind the first three lacked (issue 71)
    _planted("shell", 6, 3, 0.005, score=False),
    _planted("box", 12, 4, 0.002, score=False),
    _planted("slab", 12, 6, 0.02, score=False),
    _planted("box", 8, 4, 0.02, categories=2, score=False),
    Case.campaign("faces-haar-face", "faces", "haar-face", tuned=True),
    Case.campaign("faces-dlib-cnn", "faces", "dlib-cnn", tuned=True),
    Case.campaign("faces-dlib-hog", "faces", "dlib-hog"),
    Case.campaign("faces-dlib-hog-01", "faces", "dlib-hog", loss="zero-one"),  # the campaigns' default loss
    Case.campaign("faces-gender-cnn", "faces", "gender-cnn", truth_column="gender_presentation", cut=0.5),
    Case.campaign("faces-smile-cnn", "faces", "smile-cnn"),  # its declared truth: smile >= 0.5
    Case.campaign("faces-haar-smile", "faces", "haar-smile"),  # its declared truth: smile >= 0.5
    Case.campaign("faces-latent-dlib-hog", "faces-latent", "dlib-hog"),
)

_LAYOUTS = {"box-d10-k8-v1": 3, "box-d10-k3-v5-01": 2}  # layouts 1 (and 2) cannot place these regions; 1 elsewhere

HELD_OUT: tuple[Case, ...] = (
    *(_relaid(case, _LAYOUTS.get(case.name, 1)) for case in SUITE if case.kind == "planted"),
    Case.campaign("faces-cvae-dlib-hog", "faces-cvae", "dlib-hog"),
    Case.campaign("faces-latent-haar-face", "faces-latent", "haar-face"),
)


def select_cases(cases: Sequence[str | Case] | str | None = None) -> list[Case]:
    """The cases named (SUITE or HELD_OUT names, a comma-separated string, or `Case` objects; None: the
    whole SUITE). A kind, "planted" or "campaign", stands for every SUITE case of that kind, and
    "held-out" for every HELD_OUT case.

    Raises:
        ParameterError: an unknown name (the message lists the valid ones) or a name given twice.
    """
    if cases is None:
        return list(SUITE)
    by_name = {c.name: c for c in (*SUITE, *HELD_OUT)}
    groups = {**{kind: [s.name for s in SUITE if s.kind == kind] for kind in KINDS}, HELD_OUT_GROUP: [c.name for c in HELD_OUT]}
    items = [c.strip() for c in cases.split(",") if c.strip()] if isinstance(cases, str) else list(cases)
    items = [name for c in items for name in (groups[c] if isinstance(c, str) and c in groups else [c])]
    check_names([c for c in items if not isinstance(c, Case)], [*by_name, *groups], what="case")
    chosen = [c if isinstance(c, Case) else by_name[c] for c in items]
    names = [c.name for c in chosen]
    if not chosen or len(set(names)) != len(names):
        raise ParameterError(f"bench needs one or more cases, each once. Got {names}. Valid cases: {', '.join(by_name)}.")
    return chosen

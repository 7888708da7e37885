"""The black box a campaign searches: generator -> images -> target -> loss.

`ObjectiveSpec` names the pieces (plug-in names and options, the loss) so that any worker, in this
process or a Ray actor, can build the same `Objective`; `Objective.evaluate(params, seed)` returns
one `Outcome` per params dict.

Losses (the classifier loss L_c of docs/papers.md#mcduff, in [0, 1]; >= 0.5 is a failure):

- `detect`, "zero-one": 1 when no face was found, else 0;
- `detect`, "score": 1 when no face was found, else `0.5 * sigmoid(-confidence)` (`detection_loss`):
  a pass the detector was less sure of is nearer the failure threshold, so a model of the loss
  learns where failures are before it sees one (the detectors' confidence is on their own scale;
  only its order matters to the strategies, which rank-transform what they model);
- `classify`, "zero-one": 1 when the label differs from the rendered truth, else 0; the truth
  label comes from a truth column and a cut (`gender_presentation` >= 0.5 is the target's second
  label, say). Targets trained on these attributes declare `truth = (column, cut)`; any can be
  overridden. Faces whose truth lies within `margin` of the cut are ambiguous — a person would
  not agree on them either — and get no loss (`excluded`), as the paper prunes ambiguous images;
- `classify`, "score": 1 - p(true label), from the target's score of its predicted label.

A target that gives no answer (an exception, a timeout, an HTTP error) yields an Outcome with
`error` set and `loss=None`: never a classifier failure.
"""

from __future__ import annotations

import math
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from searcher.devices import check_device, note_cpu_only, resolve_device
from searcher.errors import ParameterError
from searcher.validation import check_choice, check_number

__all__ = ["FAILURE", "LOSSES", "Judge", "Objective", "ObjectiveSpec", "Outcome", "detection_loss", "is_failure"]

LOSSES = ("zero-one", "score")
FAILURE = 0.5
"""A classifier loss `L_c` at or above this is a failure: the one threshold the engine uses."""


def is_failure(loss: float | None) -> bool | None:
    """True for a classifier failure, False for a success, None when there is no loss."""
    return None if loss is None else loss >= FAILURE


def detection_loss(found: bool, confidence: float | None = None) -> float:
    """`L_c` of a detect target with the "score" loss: 1 when nothing was found (a failure), else
    `0.5 * sigmoid(-confidence)`, below the threshold and larger the less sure the detector was (a
    detection without a confidence counts as sure: 0)."""
    if not found:
        return 1.0
    if confidence is None or math.isnan(confidence):
        return 0.0
    return 0.5 / (1.0 + math.exp(min(confidence, 700.0)))


@dataclass
class Outcome:
    """What one evaluation produced."""

    params: dict[str, Any]
    loss: float | None
    label: Any = None
    score: float | None = None
    boxes: list = field(default_factory=list)
    truth: dict[str, Any] = field(default_factory=dict)
    image: np.ndarray | None = None
    error: str | None = None
    excluded: str | None = None
    seconds: float = 0.0

    @property
    def failure(self) -> bool | None:
        """True for a classifier failure, False for a success, None when there is no loss."""
        return is_failure(self.loss)


@dataclass(frozen=True)
class Judge:
    """How a target's answer to one image becomes the classifier loss `L_c`: the only judge.

    Build it with `Judge.of(target, ...)`, which reads what a classify target declares. Calling it
    on `(label, score, truth)` returns `(loss, excluded)`: the loss in [0, 1] and None, or None and
    the reason the image is excluded (its truth is ambiguous).

    Attributes:
        task: "detect" or "classify".
        labels: a classify target's labels; truth below `cut` is `labels[0]`, at or above `labels[1]`.
        truth_column, cut: the truth a classify target is judged against; no cut for a column that
            holds the labels themselves (a learned generator's condition, `generators.learned`).
        margin: truth within `margin` of the cut is ambiguous (0: never).
        loss: "zero-one" or "score" (a classify target's `1 - p(true label)`, a detect target's
            `detection_loss`).
    """

    task: str
    labels: tuple[Any, ...] = ()
    truth_column: str | None = None
    cut: float | None = None
    margin: float = 0.1
    loss: str = "zero-one"

    def __post_init__(self) -> None:
        check_choice("loss", self.loss, LOSSES)
        check_number("margin", self.margin, 0.0, 0.5, open_high=True)

    @classmethod
    def of(cls, target: Any, truth_column: str | None = None, cut: float | None = None, margin: float = 0.1,
           loss: str = "zero-one") -> Judge:
        """The judge of `target`: a detect target by whether it found the face; a classify target
        against `truth_column` and `cut`, by default those it declares (`truth = (column, cut)`).

        Raises:
            ParameterError: a classify target without a truth to judge it by, or a verify target.
        """
        if target.task == "classify":
            declared = getattr(target, "truth", None)
            truth_column = truth_column or (declared[0] if declared else None)
            cut = cut if cut is not None else (declared[1] if declared else None)
            if truth_column is None:
                raise ParameterError(
                    f"A classify target needs the truth it is judged against: give truth_column= and cut= "
                    f"(e.g. truth_column='smile', cut=0.5), or truth_column= alone for a column that holds its labels "
                    f"(a learned generator's condition); {type(target).__name__} declares none."
                )
            return cls("classify", tuple(target.labels), truth_column, None if cut is None else float(cut), margin, loss)
        if target.task != "detect":
            raise ParameterError(f"Campaigns and transects judge detect and classify targets; "
                                 f"{type(target).__name__} is a {target.task!r} target.")
        if truth_column is not None or cut is not None:
            raise ParameterError(f"truth_column= and cut= judge classify targets; {type(target).__name__} is a detect target, "
                                 "judged by whether it found the face. Leave them out.")
        return cls("detect", margin=margin, loss=loss)

    def check(self, truth: Mapping[str, Any]) -> None:
        """Raises a ParameterError unless a classify target can be judged on this truth row: the
        truth column must be there and hold either a number (a cut splits it in two) or one of the
        target's labels (a learned generator's condition, judged as it was asked)."""
        if self.task == "detect":
            return
        if self.truth_column not in truth:
            raise ParameterError(f"The truth column {self.truth_column!r} is not in what the generator rendered. "
                                 f"Truth columns: {', '.join(map(str, truth))}.")
        value = truth[self.truth_column]
        if isinstance(value, str):
            if value not in self.labels:
                raise ParameterError(f"The truth column {self.truth_column!r} holds {value!r}: neither a number a cut can split nor "
                                     f"one of the target's labels ({', '.join(map(repr, self.labels))}).")
            return
        if self.cut is None and not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating)):
            raise ParameterError(f"The truth column {self.truth_column!r} holds numbers: give the cut that splits it "
                                 f"into the labels {', '.join(map(repr, self.labels))} (e.g. cut=0.5).")
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            numeric = [k for k, v in truth.items() if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)]
            raise ParameterError(f"The truth column {self.truth_column!r} holds {value!r}, not a number a cut can split. "
                                 f"Numeric truth columns: {', '.join(map(str, numeric))}.")

    def true_label(self, truth: Mapping[str, Any]) -> Any:
        """The right answer for an image with this truth: a classify target's label (None when the
        truth lies within `margin` of the cut), or True for a detect target (every render holds a face)."""
        if self.task == "detect":
            return True
        self.check(truth)
        if isinstance(truth[self.truth_column], str):
            return truth[self.truth_column]
        value = float(truth[self.truth_column])
        if abs(value - self.cut) < self.margin:
            return None
        return self.labels[1] if value >= self.cut else self.labels[0]

    def __call__(self, label: Any, score: float | None, truth: Mapping[str, Any]) -> tuple[float | None, str | None]:
        if self.task == "detect":
            return detection_loss(bool(label), score if self.loss == "score" else None), None
        true_label = self.true_label(truth)
        if true_label is None:
            return None, f"ambiguous {self.truth_column}={float(truth[self.truth_column]):.2f}"
        if self.loss == "zero-one" or score is None or math.isnan(score):
            return (0.0 if label == true_label else 1.0), None
        p_true = score if label == true_label else 1.0 - score
        return float(np.clip(1.0 - p_true, 0.0, 1.0)), None


@dataclass(frozen=True)
class ObjectiveSpec:
    """Everything needed to build an `Objective` anywhere (JSON-friendly).

    `device` (a `searcher.devices` setting, or None for the plug-ins' own default, the CPU) is
    given to the generator and the target where they take a `device` option and their options do
    not name one already; one that takes none runs on the CPU, with a warning when the setting
    names a GPU. It is resolved on the machine that builds the plug-ins.
    """

    generator: str
    target: str
    generator_options: Mapping[str, Any] = field(default_factory=dict)
    target_options: Mapping[str, Any] = field(default_factory=dict)
    loss: str = "zero-one"
    truth_column: str | None = None
    cut: float | None = None
    margin: float = 0.1
    device: str | None = None

    def __post_init__(self) -> None:
        check_choice("loss", self.loss, LOSSES)
        check_number("margin", self.margin, 0.0, 0.5, open_high=True)
        if self.device is not None:
            check_device(self.device)

    def load_generator(self) -> Any:
        """The generator, placed on `device` where it takes one."""
        import generators

        return generators.load(self.generator, **self._placed(generators, "generator", self.generator, self.generator_options))

    def build(self, generator: Any = None) -> Objective:
        """The objective; `generator` reuses an instance already built from this spec."""
        import targets

        return Objective(
            generator if generator is not None else self.load_generator(),
            targets.load(self.target, **self._placed(targets, "target", self.target, self.target_options)),
            loss=self.loss,
            truth_column=self.truth_column,
            cut=self.cut,
            margin=self.margin,
        )

    def to_dict(self) -> dict[str, Any]:
        return {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in self.__dict__.items()}

    def _placed(self, plugins: Any, kind: str, name: str, options: Mapping[str, Any]) -> dict[str, Any]:
        """`options` with this spec's device added where the plug-in `name` (of the registry module
        `plugins`) takes a device and `options` name none."""
        if self.device is None or "device" in options:
            return dict(options)
        if self.device != "auto":
            resolve_device(self.device)  # a GPU this machine lacks is refused whatever the plug-ins are
        if "device" in plugins.options(name):
            return {**options, "device": self.device}
        note_cpu_only(f"The {kind} {name!r}", self.device)
        return dict(options)


class Objective:
    """Generator + target + loss as one function of parameter dicts.

    Args:
        generator, target: plug-in instances.
        loss: "zero-one" (default) or "score" (`1 - p(true label)` for a classify target,
            `detection_loss` of the confidence for a detect target).
        truth_column, cut: for classify targets, the truth column and the cut that maps it to the
            target's labels (below the cut: `labels[0]`, at or above: `labels[1]`); defaults from
            the target's `truth` attribute.
        margin: truth within `margin` of the cut is ambiguous and excluded from the loss.
    """

    def __init__(self, generator: Any, target: Any, loss: str = "zero-one", truth_column: str | None = None,
                 cut: float | None = None, margin: float = 0.1) -> None:
        self.generator, self.target = generator, target
        self.judge = Judge.of(target, truth_column, cut, margin, loss)

    def evaluate(self, params: Sequence[Mapping[str, Any]], seed: int = 0) -> list[Outcome]:
        """Renders, predicts and scores a batch; a target exception becomes an error per image."""
        start = time.perf_counter()
        batch = self.generator.generate(list(params), seed=seed)
        truth = batch.truth.to_dict("records")
        try:
            pred = self.target.predict(batch.images)
        except Exception as exc:  # noqa: BLE001 - any target failure is an error outcome, not a crash
            reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:200] or traceback.format_exc(limit=1)
            seconds = (time.perf_counter() - start) / max(1, len(truth))
            return [Outcome(dict(p), None, truth=t, image=im, error=reason, seconds=seconds)
                    for p, t, im in zip(params, truth, batch.images)]
        seconds = (time.perf_counter() - start) / max(1, len(truth))
        out = []
        for i, (p, t) in enumerate(zip(params, truth)):
            o = Outcome(dict(p), None, pred.label[i], pred.score[i], list(pred.boxes[i]), t, batch.images[i], pred.error[i], seconds=seconds)
            if o.error is None:
                o.loss, o.excluded = self.judge(o.label, o.score, t)
            out.append(o)
        return out

"""One annotator's pass over a directory's images: the questions, where they stopped, and the
ratings they give, checked and logged.

The pass goes one attribute at a time, as the paper's annotators worked (Sec. 4.3): every image for
the first attribute, then every image for the next. Position p is attribute p // N of image p % N
(N images); a page opens at the annotator's first unanswered position, so a restart resumes there.

The "unrealistic image" mark answers the paper's realism question for the image in one key: it
records `fakeness` at the top level ("fake for sure"), and unmarking records level 1 ("real for
sure"), the last answer counting. `annotations.prune` drops an image whose mean fakeness over the
annotators who answered reaches "likely fake" (Sec. 5.2.1); an image nobody marked has no fakeness
rating and is kept. Rating `fakeness` as an attribute asks the full five-level question instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from searcher.analysis.annotations import HUMAN_RATINGS
from searcher.annotate.form import FAKENESS, Question, check_annotator, questions
from searcher.annotate.images import Images
from searcher.annotate.log import RatingLog
from searcher.errors import ParameterError
from searcher.validation import check_int

__all__ = ["Session"]


class Session:
    """`annotator` rating `attributes` of `images`, logging to `DIR/annotations.csv`."""

    def __init__(self, images: Images, attributes: Sequence[str] | str, annotator: str) -> None:
        self.images = images
        self.scales = images.vocabulary.scales
        self.questions: list[Question] = questions(attributes, self.scales)
        self.annotator = check_annotator(annotator)
        self.log = RatingLog(images.source.dir / HUMAN_RATINGS)
        fake = self.scales.get(FAKENESS)
        self.mark_levels = (fake.levels, 1) if fake is not None else None  # (marked, unmarked)

    def state(self) -> dict[str, Any]:
        """What the page needs, read from the log now: the questions, this annotator's answers per
        attribute (0: none yet, one per image), which images they marked and the fakeness levels a
        mark and an unmark record (None: no fakeness scale), and the first unanswered position."""
        given = self.log.read(self.annotator, self.scales)
        keys = [str(k) for k in self.images.keys]
        answers = {q.attribute: [given.get((k, q.attribute), 0) for k in keys] for q in self.questions}
        order = [a for q in self.questions for a in answers[q.attribute]]
        marked = [given.get((k, FAKENESS)) == self.mark_levels[0] for k in keys] if self.mark_levels else None
        return {"annotator": self.annotator, "images": len(keys), "questions": [q.as_json() for q in self.questions],
                "answers": answers, "marked": marked, "mark_levels": self.mark_levels,
                "position": next((p for p, v in enumerate(order) if not v), len(order))}

    def rate(self, image: int, attribute: Any, value: Any) -> None:
        """Logs `value` (a level 1 .. L) of `attribute` for image `image`.

        Raises:
            ParameterError: an attribute this page does not ask about, or a value off its scale
                (the message names the value and the levels).
        """
        asked = [q.attribute for q in self.questions]
        if attribute not in asked:
            raise ParameterError(f"This page rates {', '.join(asked)}. Got the attribute {attribute!r} instead.")
        check_int(attribute, value, 1, self.scales[attribute].levels, what="rating")
        self.log.append(self.images.keys[image], attribute, self.annotator, int(value))

    def mark(self, image: int, marked: Any) -> None:
        """Marks image `image` unrealistic (`marked` true) or takes the mark back.

        Raises:
            ParameterError: `marked` not a boolean, or a generator without a fakeness scale.
        """
        if self.mark_levels is None:
            raise ParameterError(f"This generator's vocabulary has no {FAKENESS!r} scale, so images cannot be marked unrealistic.")
        if not isinstance(marked, bool):
            raise ParameterError(f"'marked' must be true or false. Got {marked!r} instead.")
        self.log.append(self.images.keys[image], FAKENESS, self.annotator, self.mark_levels[0 if marked else 1])

"""The models a retraining has scored so far, kept as it goes, so that the same call after a kill
(`kill -9` included) trains only the models it had not scored (`searcher retrain`, `searcher fix`).

`OUT/models.partial.jsonl` holds one JSON line for the retraining's key (its arguments and a digest
of the data every added arm adds), then one line per scored model (its arm, seed, rows of
scores.csv and of the subgroup errors), one per weight of the upweight arms' grid scored on the
validation split (a kill while the weight is chosen loses at most the model in training), and one
for the weight chosen. Each line is
flushed to disk before the next model starts; a line a kill cut short is ignored, and a file
written for another key is started afresh. The retraining removes it once scores.csv is written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["FILE", "Journal"]

FILE = "models.partial.jsonl"


class Journal:
    """The scored models of the retraining keyed `key` in `out` (see the module docstring); with
    `key` None (a recipe the key cannot describe, such as your own) it keeps and resumes nothing.

    Attributes:
        models: `(arm, seed)` -> `(rows of scores.csv, rows of the subgroup errors)` already scored.
        weight: `(w, note)` the upweight arms chose, or None.
        validated: weight -> its validation score (`choose_weight`), for the weights scored so far.
    """

    def __init__(self, out: Path, key: dict[str, Any] | None) -> None:
        self.path = Path(out) / FILE
        self.key = None if key is None else json.loads(json.dumps(key))  # as it reads back
        self.models: dict[tuple[str, int], tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
        self.weight: tuple[int, str] | None = None
        self.validated: dict[int, float] = {}
        if self.key is None:
            return
        lines = self._read()
        if lines[:1] != [{"key": self.key}]:
            self.path.write_text(json.dumps({"key": self.key}) + "\n", encoding="utf-8")
            return
        for line in lines[1:]:
            if "weight" in line:
                self.weight = (int(line["weight"]), str(line["note"]))
            elif "validated" in line:
                self.validated[int(line["validated"])] = float(line["score"])
            else:
                self.models[line["arm"], int(line["seed"])] = (line["scores"], line["groups"])

    def _read(self) -> list[dict[str, Any]]:
        """The whole lines of the file, up to the first that does not parse (cut short by a kill)."""
        out: list[dict[str, Any]] = []
        try:
            text = self.path.read_text(encoding="utf-8")
        except (FileNotFoundError, UnicodeDecodeError):
            return out
        for line in text.splitlines():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                break
        return out

    def _append(self, record: dict[str, Any]) -> None:
        if self.key is None:
            return
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def add_model(self, arm: str, seed: int, scores: list[dict[str, Any]], groups: list[dict[str, Any]]) -> None:
        """Keeps one scored model."""
        self.models[arm, seed] = (scores, groups)
        self._append({"arm": arm, "seed": seed, "scores": scores, "groups": groups})

    def add_validated(self, weight: int, score: float) -> None:
        """Keeps one weight's validation score, as the upweight arms' weight is being chosen."""
        self.validated[weight] = score
        self._append({"validated": weight, "score": score})

    def add_weight(self, weight: int, note: str) -> None:
        """Keeps the weight the upweight arms chose, and the note that says how."""
        self.weight = (weight, note)
        self._append({"weight": weight, "note": note})

    def close(self) -> None:
        """Removes the file: the retraining's outputs hold everything it kept."""
        if self.key is not None:
            self.path.unlink(missing_ok=True)

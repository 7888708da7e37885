"""A stored campaign read back: its trials and a summary in words."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from searcher.campaign.store import Store
from searcher.errors import ParameterError
from searcher.objective import FAILURE
from searcher.validation import checked

if TYPE_CHECKING:
    from generators.base import Vocabulary

__all__ = ["CampaignResult", "load_campaign"]


@dataclass
class CampaignResult:
    """A campaign's trials, its stored configuration, and where they are."""

    dir: Path
    trials: pd.DataFrame
    config: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    retried: tuple[int, int] = (0, 0)  # this run: trials evaluated again after a target error, and how many got an answer

    @property
    def searched(self) -> pd.DataFrame:
        """The trials the strategy chose (the audit sample left out), in the order it asked them."""
        return self.trials[self.trials["source"] != "audit"].sort_values(["step", "idx"])

    @property
    def vocabulary(self) -> Vocabulary:
        """How the campaign's generator describes what it renders (captions, scales, the attributes
        analysed by default); an empty one for a generator no longer registered."""
        import generators
        from generators.base import Vocabulary

        name = self.config.get("generator")
        return generators.vocabulary(name) if name in generators.available() else Vocabulary()

    def summary(self) -> str:
        t = self.trials
        if t.empty:
            return f"{self.dir}: no trials yet"
        judged = t["loss"].notna()
        fails = int((t["loss"] >= FAILURE).sum())
        errors = int(t["error"].notna().sum())
        excluded = int(t["excluded"].notna().sum())
        lines = [
            (f"{self.dir}: {len(t)} evaluations, {fails} failures ({fails / max(1, judged.sum()):.1%} of judged), "
             f"{errors} target errors, {excluded} excluded as ambiguous"),
        ]
        if self.retried[0]:
            lines.append(f"{self.retried[0]} trials that had ended in a target error were evaluated again; "
                         f"{self.retried[1]} got an answer")
        if self.seconds:
            lines.append(f"{len(t) / self.seconds:.1f} evaluations/s this run")
        return "\n".join(lines)


@checked("load_campaign")
def load_campaign(directory: str | Path) -> CampaignResult:
    """A stored campaign: `.trials` is a DataFrame with `loss`, `error`, `x` (the unit-cube point),
    `params`, `truth`, `label`, `image` (content hash) and one `param.NAME` column per parameter."""
    path = Path(directory)
    if not (path / "campaign.sqlite").is_file():
        raise ParameterError(f"No campaign at {path} (campaign.sqlite is missing).")
    store = Store(path, readonly=True)
    try:
        return CampaignResult(path, store.trials(), store.config or {})
    finally:
        store.close()

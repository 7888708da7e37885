"""A stored campaign read back: its trials and a summary in words."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from searcher.campaign.store import Store
from searcher.campaign.unseen import audit_judged, unseen_sentence
from searcher.errors import ParameterError
from searcher.objective import FAILURE
from searcher.validation import checked

if TYPE_CHECKING:
    from generators.base import Vocabulary

__all__ = ["CampaignResult", "load_campaign"]


class CampaignResult:
    """A campaign's trials, its stored configuration, and where they are. Made without `trials`
    (as a run returns it), the trials are read from the store when first asked for, so a run of
    100,000 evaluations does not load them to print its summary, which SQLite counts."""

    def __init__(self, dir: Path, trials: pd.DataFrame | None = None, config: dict[str, Any] | None = None, seconds: float = 0.0,
                 retried: tuple[int, int] = (0, 0)) -> None:
        self.dir = Path(dir)
        self._trials = trials
        self.config = {} if config is None else config
        self.seconds = seconds
        self.retried = retried  # this run: trials evaluated again after a target error, and how many got an answer

    def __repr__(self) -> str:
        return f"CampaignResult({str(self.dir)!r})"

    @property
    def trials(self) -> pd.DataFrame:
        """Every trial, one row each (`Store.trials`), read once."""
        if self._trials is None:
            store = Store(self.dir, readonly=True)
            try:
                self._trials = store.trials()
            finally:
                store.close()
        return self._trials

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
        """The campaign in a few lines: evaluations, failures, target errors, ambiguous trials, how
        large a failure mode its uniform draws could have missed (`searcher.campaign.unseen`), and this run's speed."""
        if self._trials is None:
            store = Store(self.dir, readonly=True)
            try:
                n, judged, fails, errors, excluded, audited = store.tally(FAILURE)
            finally:
                store.close()
        else:
            t = self._trials
            n, judged, fails = len(t), int(t["loss"].notna().sum()), int((t["loss"] >= FAILURE).sum())
            errors, excluded = int(t["error"].notna().sum()), int(t["excluded"].notna().sum())
            audited = audit_judged(t)
        if not n:
            return f"{self.dir}: no trials yet"
        lines = [
            (f"{self.dir}: {n} evaluations, {fails} failures ({fails / max(1, judged):.1%} of judged), "
             f"{errors} target errors, {excluded} excluded as ambiguous"),
            unseen_sentence(self.config.get("strategy"), judged, audited),
        ]
        if self.retried[0]:
            lines.append(f"{self.retried[0]} trials that had ended in a target error were evaluated again; "
                         f"{self.retried[1]} got an answer")
        if self.seconds:
            lines.append(f"{n / self.seconds:.1f} evaluations/s this run")
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

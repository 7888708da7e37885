"""A store and a loop for large campaigns: each batch's trials commit in one transaction, the loop
holds no image past its batch, and a campaign with an `images` share keeps every failure's image,
a seeded sample of the others, and the same ones when run again."""

from __future__ import annotations

import gc
import weakref

import pytest

from searcher.campaign import Campaign, load_campaign
from searcher.campaign import loop as campaign_loop
from searcher.campaign.store import Store
from searcher.errors import ParameterError
from searcher.testing.planted import PlantedGenerator

FAST = {"generator": "planted", "target": "planted", "strategy": "random"}


class TracedStore(Store):
    """A store that records every SQL statement its connection runs."""

    statements: list[str] = []

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._db.set_trace_callback(TracedStore.statements.append)


def test_each_batch_of_trials_is_one_transaction(tmp_path, monkeypatch):
    TracedStore.statements = []
    monkeypatch.setattr(campaign_loop, "Store", TracedStore)
    Campaign(**FAST, budget=48, batch=16, out=str(tmp_path / "c")).run(progress=False)
    commits, inserts = [], 0
    for sql in TracedStore.statements:
        if sql.startswith("INSERT OR REPLACE INTO trials"):
            inserts += 1
        elif sql == "COMMIT" and inserts:
            commits.append(inserts)
            inserts = 0
    assert commits == [16, 16, 16]  # one commit per batch, holding all of its trials


def test_loop_holds_no_image_past_its_batch(tmp_path, monkeypatch):
    alive: list[weakref.ref] = []
    generate = PlantedGenerator.generate

    def tracked(self, params, seed=0):
        batch = generate(self, params, seed)
        alive.append(weakref.ref(batch.images))
        return batch

    held = []
    propose = campaign_loop._Loop.propose

    def counted(self, step, n, planned=None):
        gc.collect()
        held.append(sum(r() is not None for r in alive))
        return propose(self, step, n, planned)

    monkeypatch.setattr(PlantedGenerator, "generate", tracked)
    monkeypatch.setattr(campaign_loop._Loop, "propose", counted)
    Campaign(**FAST, budget=40, batch=8, out=str(tmp_path / "c")).run(progress=False)
    assert len(held) == 5 and max(held) == 0, held  # at each new batch no earlier batch's images are still held


def test_images_share_keeps_failures_and_a_seeded_sample(tmp_path):
    options = {**FAST, "budget": 400, "batch": 100, "generator_options": {"k": 2, "volume": 0.1}, "target_options": {"k": 2, "volume": 0.1}}
    first = Campaign(**options, images=0.1, out=str(tmp_path / "a")).run(progress=False).trials
    again = Campaign(**options, images=0.1, out=str(tmp_path / "b")).run(progress=False).trials
    fails = first["failure"].eq(True)
    assert fails.any() and first.loc[fails, "image"].notna().all()
    kept = first.loc[~fails, "image"].notna()
    assert 0.04 < kept.mean() < 0.2  # about a tenth of the passes
    assert first["image"].notna().tolist() == again["image"].notna().tolist()  # the same trials keep theirs
    files = list((tmp_path / "a" / "images").rglob("*.png"))
    assert len(files) == first["image"].dropna().nunique()


def test_default_keeps_every_image(tmp_path):
    trials = Campaign(**FAST, budget=24, batch=8, out=str(tmp_path / "c")).run(progress=False).trials
    assert trials["image"].notna().all()


def test_resume_counts_failures_from_the_store(tmp_path):
    out = str(tmp_path / "c")
    options = {**FAST, "batch": 8, "generator_options": {"k": 2, "volume": 0.1}, "target_options": {"k": 2, "volume": 0.1}}
    Campaign(**options, budget=16, out=out).run(progress=False)
    store = Store(out, readonly=True)
    try:
        assert store.failures() == int(load_campaign(out).trials["failure"].eq(True).sum()) > 0
    finally:
        store.close()


def test_loading_an_image_not_kept_is_one_line(tmp_path):
    Campaign(**FAST, budget=16, batch=8, images=0.0, out=str(tmp_path / "c")).run(progress=False)
    trials = load_campaign(tmp_path / "c").trials
    dropped = trials[trials["image"].isna()].iloc[0]
    store = Store(tmp_path / "c", readonly=True)
    try:
        with pytest.raises(ParameterError, match="was not kept") as info:
            store.load_image(dropped["image"], f"trial {dropped['step']}-{dropped['idx']}")
    finally:
        store.close()
    assert "\n" not in str(info.value) and f"trial {dropped['step']}-{dropped['idx']}" in str(info.value)

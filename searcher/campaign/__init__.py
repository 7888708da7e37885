"""Campaigns: a frozen configuration (`config.py`), the loop that runs it (`loop.py`: `Campaign` is
the configuration with `run()`), the SQLite
record every trial lands in (`store.py`), where evaluations run (`executors.py`), and the stored
campaign read back (`result.py`).

    >>> result = Campaign(generator="faces", target="dlib-hog", budget=40, out="runs/try").run()  # doctest: +SKIP
    >>> load_campaign("runs/try").trials                                                            # doctest: +SKIP
"""

from searcher.campaign.config import CUBES, CampaignConfig, search_space
from searcher.campaign.loop import Campaign
from searcher.campaign.result import CampaignResult, load_campaign

__all__ = ["CUBES", "Campaign", "CampaignConfig", "CampaignResult", "load_campaign", "search_space"]

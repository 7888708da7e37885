"""searcher: hunt for the failures of image classifiers and measure, causally, what causes them.

The public face: `Campaign` (a frozen configuration; `.run()` searches), `load_campaign`,
`compare`, `analyze`, `run_transects`, `verify`, `bench`, the search `Space` and the errors. Each layer is
a subpackage (`campaign`, `strategies`, `causal`, `analysis`, `figures`, `cli`, `testing`, ...);
generators and targets are plug-ins in the top-level `generators` and `targets` packages.
Importing `searcher` imports neither torch, dlib, OpenCV nor Ray, and the analysis calls load on
first use: every plug-in imports `searcher.errors`, so this file is on every import's path.
"""

from typing import Any

from searcher.campaign import Campaign, CampaignResult, load_campaign
from searcher.errors import ParameterError, PluginError, SearcherError, TargetError
from searcher.space import Categorical, Continuous, Integer, Latent, Space

__version__ = "0.1.0"
__all__ = ["Analysis", "Campaign", "CampaignResult", "Categorical", "Continuous", "Integer", "Latent", "ParameterError",
           "PluginError", "SearcherError", "Space", "TargetError", "TransectRun", "VerificationRun", "analyze", "annotate", "bench", "compare",
           "export", "load_campaign", "report", "retrain", "run_transects", "verify"]

# name -> module of the library calls behind the commands, imported when first asked for (PEP 562)
_LAZY = {"compare": "searcher.analysis.compare", "Analysis": "searcher.analysis.subgroups", "analyze": "searcher.analysis.subgroups",
         "TransectRun": "searcher.analysis.transect_run", "run_transects": "searcher.analysis.transect_run",
         "VerificationRun": "searcher.analysis.verification", "verify": "searcher.analysis.verification"}


def __getattr__(name: str) -> Any:
    if name in ("annotate", "bench", "export", "report", "retrain"):  # subpackages; all but annotate are callable: searcher.export(...) exports
        import importlib

        return importlib.import_module(f"searcher.{name}")
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'searcher' has no attribute {name!r}")

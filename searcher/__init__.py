"""searcher: hunt for the failures of image classifiers and measure, causally, what causes them.

The public face: `Campaign` (a frozen configuration; `.run()` searches), `load_campaign`,
`compare`, `analyze`, `run_transects`, `verify`, the search `Space` and the errors. Each layer is
a subpackage (`campaign`, `strategies`, `causal`, `analysis`, `figures`, `cli`, `testing`, ...);
generators and targets are plug-ins in the top-level `generators` and `targets` packages.
Importing `searcher` imports neither torch, dlib, OpenCV nor Ray.
"""

from searcher.analysis.compare import compare
from searcher.analysis.subgroups import Analysis, analyze
from searcher.analysis.transect_run import TransectRun, run_transects
from searcher.analysis.verification import VerificationRun, verify
from searcher.campaign import Campaign, CampaignResult, load_campaign
from searcher.errors import ParameterError, PluginError, SearcherError, TargetError
from searcher.space import Categorical, Continuous, Integer, Latent, Space

__version__ = "0.1.0"
__all__ = ["Analysis", "Campaign", "CampaignResult", "Categorical", "Continuous", "Integer", "Latent", "ParameterError",
           "PluginError", "SearcherError", "Space", "TargetError", "TransectRun", "VerificationRun", "analyze", "compare",
           "load_campaign", "run_transects", "verify"]

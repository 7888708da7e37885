"""searcher: hunt for the failures of image classifiers and measure, causally, what causes them.

The public face: `Campaign` (a frozen configuration; `.run()` searches), `load_campaign`,
`compare`, `analyze`, `explain`, `confirm`, `probe`, `fix`, `run_transects`, `verify`, `bench`, the search `Space` and the errors. Each layer is
a subpackage (`campaign`, `strategies`, `causal`, `analysis`, `figures`, `cli`, `testing`, ...);
generators and targets are plug-ins in the top-level `generators` and `targets` packages.
Importing `searcher` imports nothing else: every name below loads on first use (every plug-in imports
`searcher.errors`, so this file is on every import's path).
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from searcher.campaign import Campaign, CampaignResult, load_campaign
    from searcher.errors import ParameterError, PluginError, SearcherError, TargetError
    from searcher.retrain.fix import fix
    from searcher.space import Categorical, Continuous, Integer, Latent, Space
    from searcher.studies.analyze import Analysis, analyze
    from searcher.studies.compare import compare
    from searcher.studies.confirm import confirm
    from searcher.studies.probe import probe
    from searcher.studies.transects import TransectRun, run_transects
    from searcher.studies.verification import VerificationRun, verify

__version__ = "0.1.0"
__all__ = ["Analysis", "Campaign", "CampaignResult", "Categorical", "Continuous", "Integer", "Latent", "ParameterError",
           "PluginError", "SearcherError", "Space", "TargetError", "TransectRun", "VerificationRun", "analyze", "annotate", "bench", "compare",
           "confirm", "explain", "export", "fix", "load_campaign", "probe", "report", "retrain", "run_transects", "verify"]

# name -> the module that defines it, imported when first asked for (PEP 562): `import searcher.errors`
# (every plug-in's first import) loads neither the campaign package nor tqdm
_LAZY = {
    **dict.fromkeys(("Campaign", "CampaignResult", "load_campaign"), "searcher.campaign"),
    **dict.fromkeys(("ParameterError", "PluginError", "SearcherError", "TargetError"), "searcher.errors"),
    **dict.fromkeys(("Categorical", "Continuous", "Integer", "Latent", "Space"), "searcher.space"),
    "compare": "searcher.studies.compare", "Analysis": "searcher.studies.analyze", "analyze": "searcher.studies.analyze",
    "explain": "searcher.analysis.explain", "confirm": "searcher.studies.confirm", "probe": "searcher.studies.probe", "fix": "searcher.retrain.fix",
    "TransectRun": "searcher.studies.transects", "run_transects": "searcher.studies.transects",
    "VerificationRun": "searcher.studies.verification", "verify": "searcher.studies.verification",
}


def __getattr__(name: str) -> Any:
    if name in ("annotate", "bench", "export", "report", "retrain"):  # subpackages; all but annotate are callable: searcher.export(...) exports
        import importlib

        return importlib.import_module(f"searcher.{name}")
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'searcher' has no attribute {name!r}")

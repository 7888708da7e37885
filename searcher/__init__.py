"""searcher: hunt for the failures of image classifiers and measure, causally, what causes them.

The engine's pieces live in submodules (`searcher.space`, `searcher.errors`, ...); generators and
targets are plug-ins in the top-level `generators` and `targets` packages. Importing `searcher`
imports neither torch, dlib nor OpenCV.
"""

from searcher.campaign import Campaign, load_campaign
from searcher.errors import ParameterError, PluginError, SearcherError, TargetError
from searcher.space import Categorical, Continuous, Integer, Latent, Space

__version__ = "0.1.0"
__all__ = ["Campaign", "Categorical", "Continuous", "Integer", "Latent", "ParameterError", "PluginError", "SearcherError", "Space", "TargetError", "load_campaign"]

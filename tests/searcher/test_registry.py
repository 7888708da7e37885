"""Both plug-in registries: unknown names, unknown options and missing options are clear errors."""

import pytest

import generators
import targets
from searcher.errors import PluginError


def test_listing_costs_no_import():
    assert "faces" in generators.available() and "dlib-cnn" in targets.available()
    assert all(isinstance(doc, str) and doc for doc in targets.describe().values())


def test_unknown_option_names_the_valid_ones():
    with pytest.raises(PluginError, match=r"takes no option 'resolutoin'. Its options: resolution"):
        generators.load("faces", resolutoin=64)


def test_missing_required_option():
    with pytest.raises(PluginError, match=r"'http' target needs the option\(s\) url"):
        targets.load("http")

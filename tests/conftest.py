"""Fixtures shared by several test modules."""

import pytest

import generators


@pytest.fixture(scope="session")
def latent():
    """`faces-latent` at 64 px: renders fast, same latent space."""
    return generators.load("faces-latent", resolution=64)

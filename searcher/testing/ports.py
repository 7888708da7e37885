"""A free loopback port, for the tests, benchmarks and scripts that start a local server."""

from __future__ import annotations

import socket

__all__ = ["free_port"]


def free_port() -> int:
    """A loopback port nothing listens on (free when asked: another process may take it before use)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

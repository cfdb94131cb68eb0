"""Versions of installed distributions, as every layer records them."""

from __future__ import annotations

import importlib.metadata


def package_version(name: str) -> str | None:
    """The installed version of a distribution, or None when it is not installed."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None

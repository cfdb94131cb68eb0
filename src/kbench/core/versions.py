"""Versions of installed distributions, as every layer records them."""

from __future__ import annotations

import importlib.metadata
import sys


def package_version(name: str) -> str | None:
    """The installed version of a distribution, or None when it is not installed."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def install_hint(packages: str, extra: str) -> str:
    """How to install ``packages`` into the Python running kbench (a bare ``pip`` may be
    another environment's: a .venv user's shell finds the system one), and the extra of
    kbench that holds them."""
    return f"{sys.executable} -m pip install {packages}, or pip install -e '.[{extra}]' in the kbench checkout"

"""Shoal from Python: run a model, read its agents as NumPy arrays (see docs/python.md)."""

from . import apps
from ._shoal import backend

__all__ = ["apps", "backend"]

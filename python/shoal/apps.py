"""The apps of Shoal's apps/ folder as classes: their flags as keywords, the same defaults."""

from . import _shoal

_apps = _shoal.apps
__all__ = [name for name in dir(_apps) if not name.startswith("_")]
globals().update({name: getattr(_apps, name) for name in __all__})

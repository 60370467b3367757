"""Measure families, one module each: every module here but the shared ones registers a family when imported.

Adding a family is adding its module; it is found by name (sorted), so no list needs editing.
"""
import importlib
import pkgutil

from .base import FAMILIES, Measure, MeasureContext, Ranking, Values
from .parse import parse_measures

SHARED = {"base", "cwl", "gain_walk", "intent", "names", "parse", "rounding", "trec_names", "variants"}  # modules that define no family
for _module in pkgutil.iter_modules(__path__):
    if _module.name not in SHARED:
        importlib.import_module(f".{_module.name}", __name__)

__all__ = ["FAMILIES", "Measure", "MeasureContext", "Ranking", "Values", "parse_measures"]

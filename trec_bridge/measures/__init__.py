"""Measure families, one module each: every module here but the shared ones registers a family when imported.

A family's module is imported when the family is first asked for (``FAMILIES``, catalog.py): adding a family
is adding its module and its line in catalog.py (tests/test_measure_catalog.py checks the two agree).
"""
from .base import FAMILIES, Measure, MeasureContext, Ranking, Values
from .parse import parse_measures

# modules that define no family
SHARED = {"base", "catalog", "cwl", "gain_walk", "intent", "names", "parse", "rounding", "trec_names", "variants"}

__all__ = ["FAMILIES", "Measure", "MeasureContext", "Ranking", "Values", "parse_measures"]

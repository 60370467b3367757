"""Measure families, one module each; importing this package registers them all."""
from . import ap, judged, ndcg, precision, recall, rr, success  # noqa: F401  (registration)
from .base import FAMILIES, Measure, MeasureContext, Ranking, Values
from .parse import parse_measures

__all__ = ["FAMILIES", "Measure", "MeasureContext", "Ranking", "Values", "parse_measures"]

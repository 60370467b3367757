"""Means per query tag, each over its own denominator.

A tag's denominator is the number of eligible queries (at least one relevant
document) that carry the tag; a query with several tags counts in each.
Queries without any tag form the group "(untagged)" when there are any, so
the groups together cover the whole query set.  Missing and empty queries
stay in their tags' denominators with 0, exactly as in the overall mean.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from ..scorer import MeanResult
from .repeats import Combined

UNTAGGED = "(untagged)"


@dataclass
class TagRow:
    tag: str
    queries: int  # queries with the tag
    eligible: int  # of which with a relevant document: the denominator
    means: dict[str, MeanResult]


def by_tag(c: Combined) -> list[TagRow]:
    """One row per tag, in order of first appearance in the query set; "(untagged)" last."""
    order: list[str] = []
    members: dict[str, list] = {}
    for q in c.queries:
        for tag in q.tags or (UNTAGGED,):
            if tag not in members:
                members[tag] = []
                if tag != UNTAGGED:
                    order.append(tag)
            members[tag].append(q)
    if UNTAGGED in members:
        order.append(UNTAGGED)
    rows = []
    for tag in order:
        qs = members[tag]
        eligible = [q for q in qs if q.eligible]
        means = {}
        for name in c.measures:
            vals = [q for q in eligible if q.values[name] is not None]
            if not vals:
                means[name] = MeanResult(None, None, 0)
            elif c.rational[name]:
                exact = sum((q.exact[name] for q in vals), Fraction(0)) / len(vals)
                means[name] = MeanResult(float(exact), exact, len(vals))
            else:
                means[name] = MeanResult(math.fsum(q.values[name] for q in vals) / len(vals), None, len(vals))
        rows.append(TagRow(tag, len(qs), len(eligible), means))
    return rows


def breakdown_json(rows: list[TagRow]) -> list[dict]:
    from ..report import fraction_text

    return [{"tag": r.tag, "queries": r.queries, "eligible": r.eligible,
             "means": {n: {"value": m.value, "exact": fraction_text(m.exact), "eligible": m.eligible}
                       for n, m in r.means.items()}}
            for r in rows]

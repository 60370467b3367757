"""GMAP (trec_eval gm_map): AP per query, summarised by its geometric mean (Robertson 2006).

The summary is exp of the mean of log(max(AP, 1e-5)) over the counted
queries (trec_eval's MIN_GEO_MEAN keeps a zero from making it 0).  ir_measures
has no such measure; GMAP is the literature's name.
"""
from __future__ import annotations

from .ap import average_precision
from .base import Family, Ranking, Values, geometric, geometric_context, register


def gm_map(r: Ranking, m, ctx) -> Values:
    return geometric(average_precision(r, m, ctx), ctx)


register(Family("GMAP", gm_map, rational=True, needs_cutoff=False, takes_cutoff=False, params=frozenset({"rel"}),
                aggregate="gmean", context=geometric_context,
                description="AP per query, geometric mean over queries (values floored at 1e-5)",
                tool_names={"trec_eval": ("gm_map", None)}))

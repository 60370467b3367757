"""GMBpref (trec_eval gm_bpref): Bpref per query, summarised by its geometric mean.

The summary is exp of the mean of log(max(bpref, 1e-5)) over the counted
queries (trec_eval's MIN_GEO_MEAN keeps a zero from making it 0).  ir_measures
has no such measure; the name follows GMAP's.
"""
from __future__ import annotations

from .base import Family, Ranking, Values, geometric, geometric_context, register
from .bpref import bpref


def gm_bpref(r: Ranking, m, ctx) -> Values:
    return geometric(bpref(r, m, ctx), ctx)


register(Family("GMBpref", gm_bpref, rational=True, needs_cutoff=False, takes_cutoff=False,
                params=frozenset({"rel"}), aggregate="gmean", context=geometric_context,
                description="Bpref per query, geometric mean over queries (values floored at 1e-5)",
                tool_names={"trec_eval": ("gm_bpref", None)}))

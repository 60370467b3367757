"""RR@k: 1 / rank of the first relevant document within the top k, else 0.

Rows are sorted by (query, rank), so the first relevant row of a query is its
first occurrence in the masked row list: no per-document loop.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from . import variants
from .base import Family, Ranking, Values, register, variant_context


def reciprocal_rank(r: Ranking, m, ctx) -> Values:
    mask = r.relevant_rows(ctx.rel, m.cutoff)
    queries = r.row_query[mask]
    ranks = r.rank[mask]
    first_q, first_at = np.unique(queries, return_index=True)
    num = np.zeros(r.n_queries, dtype=np.int64)
    den = np.zeros(r.n_queries, dtype=np.int64)
    num[first_q] = 1
    den[first_q] = ranks[first_at]
    return Values.of_ratio(num, den)


def cutoff_under(m, policy):
    """trec_eval's recip_rank has no cutoff: a policy with ``rr_cutoff="ignored"`` computes RR@k as RR."""
    return replace(m, cutoff=None) if policy.rr_cutoff == "ignored" else m


# trec_eval: (name without cutoff, name with one); None: the tool takes no cutoff and ignores it
register(Family("RR", reciprocal_rank, rational=True, needs_cutoff=False, params=frozenset({"rel"}) | variants.params("RR"),
                context=variant_context, param_readers=variants.readers("RR"),
                description="reciprocal rank of the first relevant document in the top k",
                effective=cutoff_under, tool_names={"trec_eval": ("recip_rank", None), "ir_measures": "RR", "ranx": "mrr"}))

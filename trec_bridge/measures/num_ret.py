"""NumRet (trec_eval num_ret): documents ranked for the query, judged or not; summed over queries."""
from __future__ import annotations

from .base import Family, Ranking, Values, everywhere, register

# ir_measures spells relevant-retrieved NumRet(rel=k); here that is NumRelRet(rel=k), so that NumRet keeps one meaning
REL_REFUSED = ("NumRet counts every ranked document and has no rel (in {token}); ir_measures' NumRet(rel=k) is "
               "the relevant documents retrieved: write NumRelRet(rel=k)")


def num_ret(r: Ranking, m, ctx) -> Values:
    return Values.of_counts(r.lengths())


register(Family("NumRet", num_ret, rational=True, needs_cutoff=False, takes_cutoff=False, aggregate="sum",
                integer=True, description="documents retrieved (summed over queries)", defined=everywhere,
                refused_params={"rel": REL_REFUSED},
                tool_names={"trec_eval": ("num_ret", None), "ir_measures": "NumRet"}))

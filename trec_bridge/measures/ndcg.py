"""nDCG@k: DCG over the top k / DCG of the ideal ranking of all judged grades, cut at k.

The gain is the measure's: the grade itself unless it names another
(``gain=exp``: 2^g - 1, ``gains={...}``), as in trec_eval and ir_measures;
the relevance threshold never enters (trec_eval's -l does not touch ndcg).
The discount is 1/log2(rank+1).  The ideal is built from every judged grade
of the query, retrieved or not, best gain first.  A query is defined when one
of its judged documents has a positive gain: otherwise the ideal is 0 and
nDCG is 0/0 (policy §2 makes it null under the strict policy).
Variants (variants.py, never the default): ``ideal=retrieved|top_k`` builds
the ideal from the retrieved documents only, ``discount=`` changes the
discount (log2_rank, log2_rank2, ln_rank).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidInput
from ..integers import INT64_MAX, INT64_MIN, in_range
from ..messages import quote
from . import variants
from .base import Family, MeasureContext, Ranking, Values, check_finite, register
from .trec_names import cutoff_name, gain_map_name


def ndcg(r: Ranking, m, ctx) -> Values:
    in_cut = np.ones(len(r.rank), dtype=bool) if m.cutoff is None else r.rank <= m.cutoff
    useful = in_cut & (r.grade >= ctx.ideal_floor)
    rows = np.flatnonzero(useful)
    discount_name = variants.variant(m, "discount") or "log2"  # None: a family without the variant
    discount = DISCOUNTS[discount_name]
    dcg = np.bincount(r.row_query[rows], weights=ctx.gain(r.grade[rows]) / discount(r.rank[rows]),
                      minlength=r.n_queries)
    if variants.variant(m, "ideal") == "judged" and ctx.gain_key is not None:  # the judgments' alone: once
        idcg = r.judged(("nDCG ideal", m.cutoff, ctx.ideal_floor, ctx.gain_key, discount_name),
                        lambda: _ideal(r, m, ctx, discount))
    else:
        idcg = _ideal(r, m, ctx, discount)
    check_finite(("DCG", dcg), ("ideal DCG", idcg))  # 2^g-1 of high grades, or huge gains=, can sum past a double
    value = np.zeros(r.n_queries, dtype=np.float64)
    with np.errstate(over="ignore"):
        np.divide(dcg, idcg, out=value, where=idcg > 0)
    check_finite(("value", value))  # a tiny ideal under a gains= map
    return Values(value)


def _judged_gains(r: Ranking, ctx) -> tuple[np.ndarray, np.ndarray]:
    """(query, gain) of every judgment whose grade can earn gain."""
    keep = r.qrels_grade >= ctx.ideal_floor
    return r.qrels_query[keep], ctx.gain(r.qrels_grade[keep])


# rank (1-based) -> what a gain is divided by, one per value of the ``discount`` variant: divided, not multiplied
# by the reciprocal, as trec_eval's m_ndcg.c forms gain / log2(i + 2) (the two doubles differ in the last bit)
DISCOUNTS = {
    "log2": lambda rank: np.log2(rank + 1.0),
    "log2_rank": lambda rank: np.maximum(np.log2(rank.astype(np.float64)), 1.0),
    "log2_rank2": lambda rank: np.log2(rank + 2.0),
    "ln_rank": lambda rank: np.maximum(np.log(rank.astype(np.float64)), 1.0),
}


def _ideal_gains(r: Ranking, m, ctx) -> tuple[np.ndarray, np.ndarray]:
    """(query, gain) the ideal ranking is built from: every judgment, or the retrieved rows (``ideal`` variant)."""
    chosen = variants.variant(m, "ideal")
    if chosen == "judged":
        return _judged_gains(r, ctx)
    keep = r.grade >= ctx.ideal_floor
    if chosen == "top_k" and m.cutoff is not None:
        keep &= r.rank <= m.cutoff
    return r.row_query[keep], ctx.gain(r.grade[keep])


def _ideal(r: Ranking, m, ctx, discount) -> np.ndarray:
    cutoff = m.cutoff
    q, gain = _ideal_gains(r, m, ctx)
    order = np.lexsort((-gain, q))  # by query, gain descending: the best possible ranking
    q, gain = q[order], gain[order]
    starts = np.searchsorted(q, q, side="left")
    pos = np.arange(len(q)) - starts + 1  # ideal rank within the query
    if cutoff is not None:
        sel = pos <= cutoff
        q, gain, pos = q[sel], gain[sel], pos[sel]
    return np.bincount(q, weights=gain / discount(pos), minlength=r.n_queries)


def has_positive_gain(r: Ranking, m, ctx) -> np.ndarray:
    """nDCG is defined on a query with a judged document of positive gain, whatever the relevance threshold."""
    def compute() -> np.ndarray:
        q, gain = _judged_gains(r, ctx)
        return np.bincount(q[gain > 0], minlength=r.n_queries) > 0
    return compute() if ctx.gain_key is None else r.judged(("nDCG defined", ctx.ideal_floor, ctx.gain_key), compute)


def context(m, rel: int, policy) -> MeasureContext:
    """nDCG's gain and grade floor under a policy: the threshold is the floor only under a policy whose
    ``ndcg_gain_floor`` says so (none of the named ones, as in trec_eval and ir_measures)."""
    floor = max(rel, 0) if policy.ndcg_gain_floor == "threshold" else 1
    gain_key = ("gains", m.gains) if m.gains is not None else ("gain", m.gain or policy.gain)
    return MeasureContext(rel=rel, gain=gain_function(m, policy), ideal_floor=floor, gain_key=gain_key)


def gain_function(m, policy):
    """grade -> gain: the measure's ``gains=`` map, else its ``gain=``, else the policy's default gain."""
    if m.gains is not None:
        grades = np.array([g for g, _ in m.gains], dtype=np.int64)
        gains = np.array([v for _, v in m.gains], dtype=np.float64)

        def mapped(g: np.ndarray) -> np.ndarray:
            out = g.astype(np.float64)  # unlisted grades keep their value, as ir_measures' gains= does
            pos = np.searchsorted(grades, g)
            hit = (pos < len(grades)) & (grades[np.minimum(pos, len(grades) - 1)] == g)
            out[hit] = gains[pos[hit]]
            return out
        return mapped
    if (m.gain or policy.gain) == "exp":
        return lambda g: np.exp2(g.astype(np.float64)) - 1.0
    return lambda g: g.astype(np.float64)


GAINS = {"exp": "exp", "exponential": "exp", "linear": "linear", "lin": "linear"}


def read_gain(value, token: str) -> str:
    if not isinstance(value, str) or value.lower() not in GAINS:
        raise InvalidInput("E_MEASURE_PARAM", f"gain must be 'exp' or 'linear', got {quote(value)} (in {quote(token)})")
    return GAINS[value.lower()]


def read_gains(value, token: str) -> tuple[tuple[int, float], ...]:
    """A {grade: gain} map as sorted (grade, gain) pairs: integer grades, finite gains."""
    if not isinstance(value, dict) or not value:
        raise InvalidInput("E_MEASURE_PARAM", f"gains must be a non-empty {{grade: gain}} map (in {quote(token)})")
    items = []
    for g, v in value.items():
        if (not in_range(g, INT64_MIN, INT64_MAX) or isinstance(v, bool) or not isinstance(v, (int, float))
                or (type(v) is int and not in_range(v, INT64_MIN, INT64_MAX))  # float(10**400): OverflowError
                or v != v or abs(v) == float("inf")):
            raise InvalidInput("E_MEASURE_PARAM", f"gains maps integer grades to finite numbers, got {quote(g)}: "
                               f"{quote(v)} (in {quote(token)})")
        items.append((g, float(v)))
    return tuple(sorted(items))


def one_gain(params: dict, token: str) -> None:
    if "gain" in params and "gains" in params:
        raise InvalidInput("E_MEASURE_PARAM", f"give gain= or gains=, not both (in {quote(token)})")


NO_REL = ("nDCG has no rel parameter (in {token}): its gain is the grade whatever the relevance threshold, as in "
          "trec_eval and ir_measures; to give low grades no gain, map them: nDCG(gains={{1:0}})")

register(Family("nDCG", ndcg, rational=False, needs_cutoff=False, params=frozenset({"gain", "gains"}) | variants.params("nDCG"),
                description="normalised discounted cumulative gain (gain = grade), ideal from all judged grades",
                defined=has_positive_gain, context=context,
                tool_names={"trec_eval": [gain_map_name("nDCG", "ndcg"), cutoff_name("nDCG", "ndcg_cut")],
                            "ir_measures": "nDCG", "ranx": {"linear": "ndcg", "exp": "ndcg_burges"}},
                param_aliases={"dcg": ("gain", {"log2": "linear", "exp-log2": "exp"})},
                refused_params={"rel": NO_REL}, param_readers={"gain": read_gain, "gains": read_gains, **variants.readers("nDCG")},
                check_params=one_gain))

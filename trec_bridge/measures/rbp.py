"""RBP(p=…): rank-biased precision, the C/W/L measure of a user who goes on with constant probability p.

RBP = sum_i W(i) [grade_i >= rel], W(i) = p^(i-1) / sum_{k<=1000} p^(k-1):
Moffat and Zobel's (1 - p) sum p^(i-1) r_i as cwl_eval computes it (the
provider ir_measures routes RBP to), over the first 1,000 positions
(measures/cwl.py).  ``rel`` is the relevance threshold (the dataset's when
not given).

The residual (Moffat and Zobel's RBP "+ residual") is the same measure with
the parameter ``residual=True``: the weight of every position whose gain is
unknown, i.e. unjudged documents and the positions past the end of the
ranking (up to 1,000), which is what cwl_eval's best case adds (every
unknown item relevant).  RBP + residual bounds the value full judgments
could give.  ir_measures reports no residual, so it is not compared there.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidInput
from ..messages import quote
from .base import Family, Ranking, Values, register
from .cwl import DEPTH, fixed_weights_value, read_probability, weights

DEFAULT_P = 0.8  # ir_measures' default persistence


def rbp(r: Ranking, m, ctx) -> Values:
    w = weights(np.full(DEPTH, m.param("p", DEFAULT_P)))
    if m.param("residual", False):
        judged = fixed_weights_value(r, w, np.ones(len(r.rank)))
        return Values(1.0 - judged)
    relevant = r.relevant_rows(ctx.rel, None).astype(np.float64)
    return Values(fixed_weights_value(r, w, relevant))


def read_flag(value, token: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidInput("E_MEASURE_PARAM", f"residual must be True or False, got {quote(value)} (in {quote(token)})")
    return value


register(Family("RBP", rbp, rational=False, needs_cutoff=False, params=frozenset({"rel", "p", "residual"}),
                description="rank-biased precision (persistence p, default 0.8) over the first 1,000 positions; "
                            "residual=True: the weight of unjudged and missing positions",
                takes_cutoff=False, param_readers={"p": read_probability, "residual": read_flag},
                param_defaults={"p": DEFAULT_P, "residual": False},
                tool_names={"ir_measures": "RBP", "ranx": "rbp"}))

"""SDCG(max_rel=…)@k: scaled DCG, nDCG as if k fully relevant documents existed (ir_measures' cwl_eval provider).

SDCG@k = sum_{i<=k} g_i / log2(i+1) / sum_{i<=k} 1 / log2(i+1), where g_i is
the grade scaled into [0, 1] between min_rel (default 0) and max_rel: the
C/W/L measure with C(i) = log2(i+1) / log2(i+2) before k and 0 from k on
(measures/cwl.py).  Unlike nDCG its ideal does not depend on the judgments.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidInput
from ..messages import quote
from .base import Family, Ranking, Values, register
from .cwl import (DEPTH, GRADED_PARAMS, GRADED_READERS, NO_REL, check_scale, check_scale_params,
                  fixed_weights_value, has_gain, scaled_gain, weights)


def sdcg(r: Ranking, m, ctx) -> Values:
    check_scale(r, m)
    c = np.array([math.log(i + 1, 2) / math.log(i + 2, 2) if i < m.cutoff else 0.0 for i in range(1, DEPTH + 1)])
    return Values(fixed_weights_value(r, weights(c), scaled_gain(r.grade, m)))


def read_dcg(value, token: str) -> str:
    if value != "log2":
        raise InvalidInput("E_MEASURE_PARAM", f"SDCG's dcg is log2 only, got {quote(value)} (in {quote(token)})")
    return value


register(Family("SDCG", sdcg, rational=False, needs_cutoff=True, params=GRADED_PARAMS | {"dcg"},
                description="scaled DCG@k: DCG over the DCG of k documents of the top grade (max_rel required)",
                defined=has_gain, tool_names={"ir_measures": "SDCG"}, refused_params={"rel": NO_REL},
                param_readers={**GRADED_READERS, "dcg": read_dcg}, check_params=check_scale_params,
                param_defaults={"min_rel": 0, "dcg": "log2"}))

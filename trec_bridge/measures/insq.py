"""INSQ(T=…): INST's predecessor, whose patience depends on the goal T but not on the gain gathered (cwl_eval).

C(i) = ((i + 2T - 1) / (i + 2T))^2, the same for every query, so one weight
vector serves all (measures/cwl.py).  Gains are grades scaled into [0, 1]
between min_rel and max_rel; T defaults to 1, as in ir_measures.
"""
from __future__ import annotations

from .base import Family, Ranking, Values, register
from .cwl import (GRADED_DEFAULTS, GRADED_PARAMS, GRADED_READERS, NO_REL, check_scale, check_scale_params, fixed_weights_value,
                  has_gain, positions, read_target, scaled_gain, weights)


def insq(r: Ranking, m, ctx) -> Values:
    check_scale(r, m)
    t = m.param("T", 1.0)
    i = positions()
    return Values(fixed_weights_value(r, weights(((i + 2.0 * t - 1.0) / (i + 2.0 * t)) ** 2.0), scaled_gain(r.grade, m)))


register(Family("INSQ", insq, rational=False, needs_cutoff=False, params=GRADED_PARAMS | {"T"}, takes_cutoff=False,
                description="INSQ(T): patience set by a gain goal T (default 1; max_rel required)",
                defined=has_gain, tool_names={"ir_measures": "INSQ"}, refused_params={"rel": NO_REL},
                param_readers={**GRADED_READERS, "T": read_target}, check_params=check_scale_params,
                param_defaults={**GRADED_DEFAULTS, "T": 1.0}))

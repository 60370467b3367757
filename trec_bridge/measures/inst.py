"""INST(T=…): the adaptive C/W/L measure of a user who wants T units of gain (Moffat et al. 2015; cwl_eval).

C(i) = ((i + T + T_i - 1) / (i + T + T_i))^2 with T_i = T - (gain gathered
in the top i): the user goes on longer while the goal is unmet.  Gains are
grades scaled into [0, 1] between min_rel and max_rel; T defaults to 1, as
in ir_measures.  C depends on the gains, so the weights are per query
(measures/cwl.py).
"""
from __future__ import annotations

import numpy as np

from .base import Family, Ranking, Values, register
from .cwl import (GRADED_DEFAULTS, GRADED_PARAMS, GRADED_READERS, NO_REL, check_scale, check_scale_params, gain_dependent_value,
                  has_gain, positions, read_target, scaled_gain)


def inst(r: Ranking, m, ctx) -> Values:
    check_scale(r, m)
    t = m.param("T", 1.0)
    i = positions()

    def continuation(g: np.ndarray) -> np.ndarray:
        goal_left = t - np.cumsum(g, axis=1)
        return ((i + t + goal_left - 1.0) / (i + t + goal_left)) ** 2.0
    return Values(gain_dependent_value(r, scaled_gain(r.grade, m), continuation))


register(Family("INST", inst, rational=False, needs_cutoff=False, params=GRADED_PARAMS | {"T"}, takes_cutoff=False,
                description="INST(T): adaptive patience towards a gain goal T (default 1; max_rel required)",
                defined=has_gain, tool_names={"ir_measures": "INST"}, refused_params={"rel": NO_REL},
                param_readers={**GRADED_READERS, "T": read_target}, check_params=check_scale_params,
                param_defaults={**GRADED_DEFAULTS, "T": 1.0}))

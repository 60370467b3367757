"""NERR8@k, NERR9@k, NERR10(p=…), NERR11(T=…): the C/W/L "not but nearly" ERR measures (Azzopardi et al. 2021).

Four families with one shape, as in ir_measures (cwl_eval provider): a user
who stops at a relevant document with probability its gain g (the grade
scaled into [0, 1] between min_rel and max_rel), so C(i) = x(i) (1 - g_i):

* NERR8@k: x = 1 before position k, 0 from k on (Equation 8);
* NERR9@k: x = i / (i + 1) before k, 0 from k on (Equation 9);
* NERR10(p): x = p everywhere (Equation 10, RBP patience; default 0.9);
* NERR11(T): x = ((i + 2T - 1) / (i + 2T))^2 everywhere (Equation 11, INST goal; default 1).

C depends on the gains, so the weights are per query (measures/cwl.py,
dense over the first 1,000 positions, or k for NERR8 and NERR9).
"""
from __future__ import annotations

import numpy as np

from .base import Family, Ranking, Values, register
from .cwl import (DEPTH, GRADED_DEFAULTS, GRADED_PARAMS, GRADED_READERS, NO_REL, check_scale, check_scale_params,
                  gain_dependent_value, has_gain, positions, read_probability, read_target, scaled_gain)


def _truncated(x_of_rank):
    """NERR8/9's kernel: C = x(i) (1 - g_i) before position k, 0 from k on."""
    def kernel(r: Ranking, m, ctx) -> Values:
        check_scale(r, m)
        depth = min(m.cutoff, DEPTH)
        x = x_of_rank(positions(depth))
        x[m.cutoff - 1:] = 0.0
        return Values(gain_dependent_value(r, scaled_gain(r.grade, m), lambda g: x * (1.0 - g), depth))
    return kernel


def _full_depth(x_of_measure):
    """NERR10/11's kernel: C = x(i) (1 - g_i) over all 1,000 positions."""
    def kernel(r: Ranking, m, ctx) -> Values:
        check_scale(r, m)
        x = x_of_measure(m)
        return Values(gain_dependent_value(r, scaled_gain(r.grade, m), lambda g: x * (1.0 - g)))
    return kernel


def _inst_patience(m) -> np.ndarray:
    t = m.param("T", 1.0)
    i = positions()
    return ((i + 2.0 * t - 1.0) / (i + 2.0 * t)) ** 2.0


GRADED = dict(rational=False, defined=has_gain, refused_params={"rel": NO_REL}, check_params=check_scale_params)
NERR10_DEFAULTS = {**GRADED_DEFAULTS, "p": 0.9}
GOAL_DEFAULTS = {**GRADED_DEFAULTS, "T": 1.0}
register(Family("NERR8", _truncated(np.ones_like), needs_cutoff=True, params=GRADED_PARAMS,
                description="NERR Eq. 8@k: stop at gain, truncated at k (max_rel required)",
                tool_names={"ir_measures": "NERR8"}, param_readers=GRADED_READERS, param_defaults=GRADED_DEFAULTS,
                **GRADED))
register(Family("NERR9", _truncated(lambda i: i / (i + 1.0)), needs_cutoff=True, params=GRADED_PARAMS,
                description="NERR Eq. 9@k: stop at gain with a rank discount, truncated at k (max_rel required)",
                tool_names={"ir_measures": "NERR9"}, param_readers=GRADED_READERS, param_defaults=GRADED_DEFAULTS,
                **GRADED))
register(Family("NERR10", _full_depth(lambda m: np.full(DEPTH, m.param("p", 0.9))), needs_cutoff=False,
                params=GRADED_PARAMS | {"p"}, takes_cutoff=False,
                description="NERR Eq. 10(p): stop at gain, RBP patience p (default 0.9; max_rel required)",
                tool_names={"ir_measures": "NERR10"}, param_readers={**GRADED_READERS, "p": read_probability},
                param_defaults=NERR10_DEFAULTS, **GRADED))
register(Family("NERR11", _full_depth(_inst_patience), needs_cutoff=False, params=GRADED_PARAMS | {"T"},
                takes_cutoff=False,
                description="NERR Eq. 11(T): stop at gain, INST patience for a goal T (default 1; max_rel required)",
                tool_names={"ir_measures": "NERR11"}, param_readers={**GRADED_READERS, "T": read_target},
                param_defaults=GOAL_DEFAULTS, **GRADED))

"""Multiple-testing corrections: adjusted p-values for a family of tests (compare: all pairs x measures).

Comparing N systems on M measures runs N(N-1)/2 x M tests; read one by one
at 0.05, some are "significant" by chance.  Each method turns the family's
p-values into adjusted ones that are read against the same level:

* ``holm`` (default): Holm's step-down method (1979) — sort ascending,
  ``p_(i) * (m - i + 1)`` for the i-th smallest, made monotone by a running
  maximum, capped at 1.  Controls the family-wise error rate; never less
  powerful than Bonferroni.
* ``bonferroni``: ``p * m``, capped at 1.  Family-wise error rate.
* ``bh``: Benjamini–Hochberg (1995) — sort ascending, ``p_(i) * m / i``, made
  monotone by a running minimum from the largest, capped at 1.  Controls the
  false discovery rate (the proportion of wrong rejections), less strict.
* ``none``: the p-values as they are.

Written from the published definitions (they are also what
``statsmodels.stats.multitest.multipletests`` and, for BH,
``scipy.stats.false_discovery_control`` compute; tests/test_compare_many.py
checks against scipy and a hand computation).  A test that was not computed
(None) is not part of the family and stays None.
"""
from __future__ import annotations

METHODS = {"holm": "Holm (step-down, family-wise error rate)",
           "bonferroni": "Bonferroni (family-wise error rate)",
           "bh": "Benjamini-Hochberg (false discovery rate)",
           "none": "none (each test on its own)"}


def adjust(pvalues: list[float | None], method: str = "holm") -> list[float | None]:
    """Adjusted p-values in the input order; the family is the non-None values."""
    if method not in METHODS:
        raise ValueError(f"unknown correction {method!r}; one of {', '.join(METHODS)}")
    index = [i for i, p in enumerate(pvalues) if p is not None]
    m = len(index)
    out: list[float | None] = list(pvalues)
    if method == "none" or m == 0:
        return out
    order = sorted(index, key=lambda i: (pvalues[i], i))
    if method == "bonferroni":
        for i in index:
            out[i] = min(1.0, pvalues[i] * m)
    elif method == "holm":
        running = 0.0
        for rank, i in enumerate(order):
            running = max(running, min(1.0, pvalues[i] * (m - rank)))
            out[i] = running
    else:  # bh
        running = 1.0
        for rank in range(m - 1, -1, -1):
            i = order[rank]
            running = min(running, pvalues[i] * m / (rank + 1))
            out[i] = min(1.0, running)
    return out

"""Paired statistics of two systems on one measure, from their JSON reports' per-query values.

``compare_systems`` checks the protocol and runs this for every pair of
systems and every measure.  Per measure, the queries with a value in both
reports (the eligible ones) are paired and delta = B - A is taken per query
(exactly, for rational measures).

Statistics come from scipy, never hand-written:
* paired t-test: ``scipy.stats.ttest_rel`` on the paired deltas;
* Wilcoxon signed-rank: ``scipy.stats.wilcoxon(B - A)`` (zero deltas
  dropped, scipy's default ``zero_method="wilcox"``);
* randomization test: ``scipy.stats.permutation_test`` on the deltas with
  ``permutation_type="samples"`` (each delta's sign flipped at random), the
  mean delta as statistic, two-sided; exact (all 2^n sign patterns) when 2^n
  is at most the number of resamples; seeded;
* bootstrap confidence interval of the mean delta: ``scipy.stats.bootstrap``
  (BCa, seeded).
A test that is undefined on the data (fewer than two pairs, every delta 0,
every delta equal) is reported as not computed, with the reason.

When a report holds repeats (``score --repeat``), its per-query values are
the averages over the repeats (``rag.repeats.per_query``), and the output
says so.
"""
from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np

from ..errors import InvalidInput
from ..report import fraction_text


def load_report(path: str) -> dict:
    """A report strictly read, validated against its schema and checked for consistency (report_check)."""
    from ..report_check import read_report

    return read_report(path)


def per_query_values(report: dict) -> tuple[list[dict], str]:
    """The rows to pair (query_id, values, exact) and where they come from."""
    rep = (report.get("rag") or {}).get("repeats") or {}
    if rep.get("count", 1) > 1:
        return rep["per_query"], f"averaged over {rep['count']} repeats (rag.repeats.per_query)"
    return report["per_query"], "per_query"


def compare_measure(name: str, rows_a: list[dict], rows_b: list[dict], seed: int, resamples: int,
                     confidence: float, path_b: str) -> dict:
    pairs = []
    for ra, rb in zip(rows_a, rows_b):
        va, vb = ra["values"].get(name), rb["values"].get(name)
        if (va is None) != (vb is None):
            raise InvalidInput("E_COMPARE_PROTOCOL", f"{name} is null in one report only", file=path_b,
                               query=ra["query_id"])
        if va is None:
            continue
        ea, eb = (ra.get("exact") or {}).get(name), (rb.get("exact") or {}).get(name)
        if ea is not None and eb is not None:
            delta_exact = Fraction(eb) - Fraction(ea)
            pairs.append((ra["query_id"], va, vb, float(delta_exact), delta_exact))
        else:
            pairs.append((ra["query_id"], va, vb, vb - va, None))
    va = np.array([p[1] for p in pairs], dtype=np.float64)
    vb = np.array([p[2] for p in pairs], dtype=np.float64)
    d = np.array([p[3] for p in pairs], dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        sums = (va.sum(), vb.sum(), d.sum())
    if not (np.isfinite(d).all() and np.isfinite(sums).all()):
        raise InvalidInput("E_JSON_NUMBER", f"{name}: the values are too large to compare (their differences or sums "
                           "overflow a double)", file=path_b)
    exact = all(p[4] is not None for p in pairs) and bool(pairs)
    mean_delta_exact = sum((p[4] for p in pairs), Fraction(0)) / len(pairs) if exact else None
    n = len(pairs)
    return {
        "measure": name,
        "n": n,
        "mean_a": float(va.mean()) if n else None,
        "mean_b": float(vb.mean()) if n else None,
        "mean_delta": (float(mean_delta_exact) if mean_delta_exact is not None else float(d.mean())) if n else None,
        "mean_delta_exact": fraction_text(mean_delta_exact),
        "wins": int((d > 0).sum()),
        "losses": int((d < 0).sum()),
        "ties": int((d == 0).sum()),
        **paired_tests(d, seed=seed, resamples=resamples, confidence=confidence),
        "per_query": [{"query_id": q, "a": x, "b": y, "delta": float(dd), "delta_exact": fraction_text(de)}
                      for q, x, y, dd, de in pairs],
    }


def paired_tests(d: np.ndarray, *, seed: int = 0, resamples: int = 10000, confidence: float = 0.95) -> dict:
    """t-test, Wilcoxon, randomization test and bootstrap CI of the mean of the paired deltas ``d`` = B - A.

    The deltas are passed rather than A and B so that a rational measure's
    exact delta (correctly rounded once) is used: B - A in floats can turn a
    constant delta into one with rounding noise.  ``ttest_rel(d, 0)`` is
    ``ttest_rel(B, A)`` on those deltas.
    """
    from scipy import stats

    d = np.asarray(d, dtype=np.float64)
    n = len(d)
    if n < 2:
        why = f"{n} paired quer{'y' if n == 1 else 'ies'}: at least 2 are needed"
        return {k: {"note": why} for k in ("t_test", "wilcoxon", "permutation", "bootstrap")}
    out: dict = {}
    constant = bool(np.all(d == d[0]))
    all_zero = bool(np.all(d == 0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if constant:
            out["t_test"] = {"statistic": None, "pvalue": None, "df": n - 1,
                             "note": "every delta is equal: the standard deviation is 0 and the t statistic undefined"}
        else:
            t = stats.ttest_rel(d, np.zeros_like(d))
            out["t_test"] = {"statistic": float(t.statistic), "pvalue": float(t.pvalue), "df": int(t.df)}
        nonzero = int((d != 0).sum())
        if all_zero:
            out["wilcoxon"] = {"statistic": None, "pvalue": None, "nonzero": 0, "zero_method": "wilcox",
                               "note": "every delta is 0: nothing to rank"}
        else:
            w = stats.wilcoxon(d, zero_method="wilcox")
            out["wilcoxon"] = {"statistic": float(w.statistic), "pvalue": float(w.pvalue), "nonzero": nonzero,
                               "zero_method": "wilcox"}
        exact = 2 ** n <= resamples
        if all_zero:
            out["permutation"] = {"statistic": 0.0, "pvalue": 1.0, "exact": True, "resamples": resamples,
                                  "seed": seed, "note": "every delta is 0: every sign pattern gives mean 0"}
        else:
            p = stats.permutation_test((d,), _mean, permutation_type="samples", vectorized=True,
                                       n_resamples=resamples, alternative="two-sided",
                                       rng=np.random.default_rng(seed))
            out["permutation"] = {"statistic": float(p.statistic), "pvalue": float(p.pvalue), "exact": exact,
                                  "resamples": resamples, "seed": seed}
        if constant:
            out["bootstrap"] = {"low": float(d[0]), "high": float(d[0]), "method": "degenerate",
                                "confidence_level": confidence, "seed": seed,
                                "note": "every delta is equal: every resample has the same mean"}
        else:
            out["bootstrap"] = _bootstrap(d, seed, resamples, confidence)
    return {name: _finite(test) for name, test in out.items()}


def _finite(test: dict) -> dict:
    """scipy answers nan where a test is undefined on the data; the report says so instead (JSON has no nan)."""
    bad = [k for k, v in test.items() if isinstance(v, float) and not np.isfinite(v)]
    if not bad:
        return test
    out = {k: (None if k in bad else v) for k, v in test.items()}
    out.setdefault("note", f"undefined on these data ({', '.join(bad)} not finite)")
    return out


def _mean(x, axis):
    return np.mean(x, axis=axis)


def _bootstrap(d: np.ndarray, seed: int, resamples: int, confidence: float) -> dict:
    from scipy import stats

    for method in ("BCa", "percentile"):
        res = stats.bootstrap((d,), np.mean, n_resamples=resamples, confidence_level=confidence, method=method,
                              rng=np.random.default_rng(seed))
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if np.isfinite(low) and np.isfinite(high):
            out = {"low": low, "high": high, "method": method, "confidence_level": confidence, "seed": seed}
            if method != "BCa":
                out["note"] = "BCa interval undefined on these data; percentile interval instead"
            return out
    return {"low": None, "high": None, "method": None, "confidence_level": confidence, "seed": seed,
            "note": "bootstrap interval undefined on these data"}

"""The latency distribution of a run's timed queries, reported beside the quality figures.

Only queries with a ``latency_ms`` count: a query without timing is absent,
never 0.  Percentiles use the **nearest-rank** definition: with the n latencies
sorted ascending, the p-th percentile is the value at position ceil(p/100 * n)
(counting from 1), always one of the measured latencies.  The median is the
usual one: the middle value, or the mean of the two middle values when n is
even.  docs/formats.md, "Per-query timing".
"""
from __future__ import annotations

import math

SLOWEST = 5  # the slowest queries listed


def nearest_rank(sorted_values: list[float], p: float) -> float:
    """The p-th percentile (0 < p <= 100) of ascending ``sorted_values`` by nearest rank."""
    return sorted_values[max(1, math.ceil(p / 100 * len(sorted_values))) - 1]


def timing_summary(timing: dict | None, query_ids: list[str]) -> dict | None:
    """Median, p95, p99, max and the slowest queries over the timed queries of ``query_ids``; None without any.

    ``timed`` counts the queries of the set with a latency, ``untimed`` those
    without; timing of queries outside the set is left out (``outside``).
    """
    if not timing:
        return None
    in_set = set(query_ids)
    latencies = {q: t["latency_ms"] for q, t in timing.items() if "latency_ms" in t and q in in_set}
    outside = sum(1 for q, t in timing.items() if "latency_ms" in t and q not in in_set)
    if not latencies:
        return None
    values = sorted(latencies.values())
    import statistics

    position = {q: i for i, q in enumerate(query_ids)}  # equal latencies: in query-set order
    slowest = sorted(latencies.items(), key=lambda item: (-item[1], position[item[0]]))[:SLOWEST]
    return {"unit": "ms", "percentile": "nearest-rank", "timed": len(values), "untimed": len(in_set) - len(values),
            "outside": outside, "median": statistics.median(values), "p95": nearest_rank(values, 95),
            "p99": nearest_rank(values, 99), "max": values[-1],
            "slowest": [{"query_id": q, "latency_ms": v} for q, v in slowest]}


def timing_line(summary: dict | None) -> list[str]:
    """The terminal lines: the distribution, then the slowest queries."""
    if not summary:
        return []
    s = summary
    return [f"latency ({s['timed']} timed queries, {s['untimed']} without timing): median {s['median']:g} ms, "
            f"p95 {s['p95']:g} ms, p99 {s['p99']:g} ms, max {s['max']:g} ms (nearest-rank percentiles)",
            "slowest: " + ", ".join(f"{r['query_id']} ({r['latency_ms']:g} ms)" for r in s["slowest"])]

"""An explanation as JSON and as text: per measure, the conventions that reproduce their figures, or the closest.

A match is named after the known tool it is closest to ("= ir_measures'
RR@10 with tie_break=doc_asc"): the named policies' values on the searched
axes (explain_search.tool_defaults), counted axis by axis.
"""
from __future__ import annotations

from .explain_search import AXIS, Combination, Explanation, MeasureExplanation
from .measures.variants import variants_of

MAX_LISTED = 200  # combinations listed per measure in the JSON (the count says how many matched)
FORMS = {"trec_eval": "trec_eval output", "ir_measures": "ir_measures output or a query/measure/value TSV",
         "jsonl": "ir_measures JSON Lines", "json": "a JSON mapping", "summary": "summary figures"}


def differs(m: MeasureExplanation, tool: str, combo: Combination) -> dict[str, str]:
    """The axes on which ``combo`` departs from ``tool``'s defaults."""
    return combo.departures(m.tools[tool], m.tried)


def best(m: MeasureExplanation) -> list[dict]:
    """Every (tool, departures) at the smallest number of departures, tools in the named policies' order."""
    ranked = m.ranked()
    if not ranked:
        return []
    out, seen = [], set()
    for distance, _, combo in ranked:
        if distance > ranked[0][0]:
            break
        for tool in m.tools:
            d = differs(m, tool, combo)
            key = (tool, tuple(sorted(d.items())))
            if len(d) == distance and key not in seen:
                seen.add(key)
                out.append({"tool": tool, "differs": d})
    order = list(m.tools)
    return sorted(out, key=lambda x: order.index(x["tool"]))


def measure_json(m: MeasureExplanation) -> dict:
    out = {"measure": m.measure, "theirs": m.spelled, "given": "per_query" if m.per_query else "mean",
           "queries": m.queries, "their_mean": m.their_mean, "explained": m.explained, "matches": len(m.matches)}
    if m.explained:
        out["best"] = best(m)
        out["decided"] = {k: v for k, v in m.decided.items() if k not in m.undecided}
        out["undecided"] = list(m.undecided)
        out["combinations"] = [{"distance": d, "tool": t, "values": c.values, "mean": c.mean}
                               for d, t, c in m.ranked()[:MAX_LISTED]]
    elif m.closest is not None:
        tool = min(m.tools, key=lambda t: len(differs(m, t, m.closest)))
        out["closest"] = {"tool": tool, "differs": differs(m, tool, m.closest), "values": m.closest.values,
                          "mean": m.closest.mean,
                          "mismatched": [{"query_id": q, "theirs": a, "ours": b} for q, a, b in m.closest.mismatched]}
    return out


def explanation_json(ex: Explanation) -> dict:
    return {"format": "trec-bridge-explain", "version": 1, "explained": ex.explained,
            "theirs": {"source": ex.source, "form": ex.form, "skipped": ex.skipped},
            "axes": {a.name: a.values for a in AXIS.values()},
            "measures": [measure_json(m) for m in ex.measures]}


def _phrase(measure: str, found: dict) -> str:
    tool, d = found["tool"], found["differs"]
    name = "trec-bridge's strict" if tool == "strict" else (f"{tool}'" if tool.endswith("s") else f"{tool}'s")
    return f"{name} {measure}" + (" with " + ", ".join(f"{k}={v}" for k, v in d.items()) if d else " (its defaults)")


def render_text(ex: Explanation, per_query_limit: int = 10) -> str:
    lines = [f"Their figures: {FORMS.get(ex.form, ex.form)} ({ex.source}), {len(ex.measures)} measure(s)"]
    if ex.skipped:
        lines.append(f"  not explained (not computed here): {', '.join(ex.skipped)}")
    for m in ex.measures:
        given = f"{m.queries} per-query values" if m.per_query else "the mean only"
        given += f" and the mean {m.their_mean}" if m.per_query and m.their_mean is not None else ""
        head = f"{m.measure}" + (f" (theirs: {m.spelled})" if m.spelled != m.measure else "")
        if m.explained:
            lines.append(f"{head}: reproduced ({given}) by {len(m.matches)} combination(s)")
            found = best(m)
            lines.append(f"  = {_phrase(m.measure, found[0])}")
            lines += [f"    or {_phrase(m.measure, f)}" for f in found[1:6]]
            decided = {k: v for k, v in m.decided.items() if k not in m.undecided}
            if decided:
                lines.append("  decided by these inputs: " + "; ".join(f"{k}={'|'.join(v)}" for k, v in decided.items()))
            if m.undecided:
                lines.append("  not decided by these inputs (any value reproduces them): " + ", ".join(m.undecided))
            continue
        lines.append(f"{head}: NOT reproduced ({given}) by any combination searched")
        if m.closest is not None:
            c = m.closest
            tool = min(m.tools, key=lambda t: len(differs(m, t, c)))
            lines.append(f"  closest: {_phrase(m.measure, {'tool': tool, 'differs': differs(m, tool, c)})}")
            if c.mismatched:
                lines.append(f"  {len(c.mismatched)} query(ies) still differ (query: theirs vs ours):")
                lines += [f"    {q}: {_num(a)} vs {_num(b)}" for q, a, b in c.mismatched[:per_query_limit]]
                if len(c.mismatched) > per_query_limit:
                    lines.append(f"    ... and {len(c.mismatched) - per_query_limit} more (--json lists them all)")
            if m.their_mean is not None:
                lines.append(f"  mean: theirs {m.their_mean} vs ours {_num(c.mean)}")
    return "\n".join(lines) + "\n"


def _num(v) -> str:
    return "absent" if v is None else f"{v:.6g}"


def axis_doc() -> list[tuple[str, str, dict[str, str]]]:
    """(axis, title, value -> meaning) of every axis and variant searched, for docs and --help."""
    rows = [(a.name, a.title, a.values) for a in AXIS.values()]
    for family in ("R", "P", "AP", "nDCG", "RR"):
        rows += [(f"{family}: {p}", v.title, v.values) for p, v in variants_of(family).items()]
    return rows

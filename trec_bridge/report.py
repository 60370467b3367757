"""The JSON report (formats.md "Report") and the terminal table.

The JSON is deterministic: the same inputs give byte-identical reports (no
timestamp, keys sorted, queries in query-set order), so reports can be diffed
and fingerprinted.
"""
from __future__ import annotations

from fractions import Fraction

from . import __version__
from .numtext import exact_text, readable_exact
from .scorer import QueryResults, ScoreResult
from .system_meta import system_fingerprint, system_lines
from .timing import timing_line, timing_summary

REPORT_FORMAT = "trec-bridge.report"
REPORT_VERSION = 1


def fraction_text(f: Fraction | None) -> str | None:
    return exact_text(f)


def tool_stamp() -> dict:
    """Which trec-bridge wrote a report: every JSON report carries it (score, crosscheck, compare, stages)."""
    return {"name": "trec-bridge", "version": __version__}


def shown(value: float | None, integer: bool) -> float | int | None:
    """A value as reports show it: a count (NumRet, ...) as an integer, anything else as it is."""
    return int(value) if integer and value is not None else value


def build_report(result: ScoreResult, inputs: dict[str, dict] | None = None, system: dict | None = None,
                 timing: dict | None = None) -> dict:
    """The report as a JSON-ready dict; ``inputs`` maps a role (dataset, run, chunk_map) to {path, sha256};
    ``system``: the run's test conditions (its ``system`` object), stored with their own fingerprint;
    ``timing``: the run's per-query timing (Run.metadata["timing"]), reported as its distribution."""
    rows = result.queries
    counts = {str(m) for m in result.measures if m.integer}
    c = query_columns(rows)
    no_answer = [s for s, a in zip(c["status"], c["answerable"]) if a is False]
    recorded = [s for s in c["status"] if s in ("ranked", "empty")]
    report = {
        "format": REPORT_FORMAT,
        "version": REPORT_VERSION,
        "tool": tool_stamp(),
        "policy": result.policy.to_json(),
        "fingerprints": {
            "protocol": result.protocol_fingerprint,
            **({"protocol_parts": result.protocol_parts()} if result.protocol_parts else {}),
            "inputs": inputs or {},
            "chunk_map": result.chunk_map_fingerprint,
        },
        "query_set": {"source": result.query_source, "split": result.split, "size": len(rows),
                      "relevance_threshold": result.threshold},
        "measures": [str(m) for m in result.measures],
        "totals": {
            "total": len(rows),
            "eligible": sum(1 for r in c["relevant"] if r > 0),
            "no_relevant": len(result.no_relevant),
            "ranked": len(result.by_status("ranked")),
            "empty": len(result.by_status("empty")),
            "missing": len(result.missing),
            "failed": len(result.failed),
            "unjudged": len(result.unjudged_queries),
        },
        "coverage": {"expected": len(rows), "recorded": len(recorded), "missing": result.missing},
        "no_answer": {
            "expected": len(no_answer),
            "recorded": sum(1 for s in no_answer if s in ("ranked", "empty")),
            "non_empty": sum(1 for s in no_answer if s == "ranked"),
        },
        "missing_queries": result.missing,
        "empty_queries": result.by_status("empty"),
        "failed_queries": result.failed,
        "no_relevant_queries": result.no_relevant,
        "unjudged_queries": result.unjudged_queries,
        "means": {
            name: {"value": shown(mean.value, name in counts), "exact": fraction_text(mean.exact),
                   "eligible": mean.eligible}
            for name, mean in result.means.items()
        },
        "per_query": per_query_rows(result, c, counts),
        "order": result.order,
        "outcome": "complete" if result.complete else "incomplete",
    }
    _add_optional(report, result, system, timing)
    return report


def query_columns(rows) -> dict[str, list]:
    """Every query's fields as lists (``QueryResults.columns``: read from the scorer's arrays, not query by
    query), ``answerable`` included."""
    if isinstance(rows, QueryResults):
        return rows.columns()
    return {name: [getattr(q, name) for q in rows]
            for name in ("query_id", "status", "reason", "relevant", "retrieved", "answerable")}


def per_query_rows(result: ScoreResult, c: dict[str, list], counts: set[str]) -> list[dict]:
    """The report's ``per_query`` rows from the query columns ``c``, the values a measure at a time (the exact
    texts vectorised: ``Values.fraction_texts``): 30,000 queries x 36 measures took 25 s read query by query."""
    rows = result.queries
    rational = [str(m) for m in result.measures if m.rational]
    if isinstance(rows, QueryResults):
        names = rows.measure_names()
        values = _records(names, [rows.value_column(n, n in counts) for n in names], len(rows))
        exact = _records(rational, [rows.exact_column(n) for n in rational], len(rows))
    else:
        values = [{n: shown(v, n in counts) for n, v in q.values.items()} for q in rows]
        exact = [{n: fraction_text(q.exact[n]) for n in rational} for q in rows]
    return [query_row(*fields, v, e) for *fields, v, e in
            zip(c["query_id"], c["status"], c["reason"], c["relevant"], c["retrieved"], values, exact)]


def query_row(query_id: str, status: str, reason: str | None, relevant: int, retrieved: int, values: dict,
              exact: dict) -> dict:
    """One ``per_query`` row (formats.md "Report"); ``reason`` only for a failed query."""
    row = {"query_id": query_id, "status": status}
    if reason is not None:
        row["reason"] = reason
    row.update(relevant=relevant, retrieved=retrieved, values=values, exact=exact)
    return row


def _records(names: list[str], columns: list[list], n: int) -> list[dict]:
    """Columns (one list per name) -> one dict per query, transposed in C (zip) rather than per query x name."""
    if not names:
        return [{} for _ in range(n)]
    return [dict(zip(names, row)) for row in zip(*columns)]


def _add_optional(report: dict, result: ScoreResult, system: dict | None, timing: dict | None) -> None:
    """The members a report has only when there is something to say: system, timing, notes, chunk evidence."""
    add_system(report, system)
    latency = timing_summary(timing, [q.query_id for q in result.queries]) if timing else None
    if latency is not None:
        report["timing"] = latency
    if result.extra:
        report["notes"] = result.extra
    if result.chunk_evidence is not None:
        report["chunk_evidence"] = result.chunk_evidence.to_dicts()


def add_system(report: dict, system: dict | None) -> None:
    """The run's test conditions and their fingerprint (not part of the protocol's), when known."""
    if system is not None:
        report["system"] = system
        report["fingerprints"]["system"] = system_fingerprint(system)


def report_json(report: dict) -> str:
    from .json_text import dumps  # when a report is written: score's table alone needs no JSON

    return dumps(report) + "\n"


def _fmt(value: float | None, integer: bool = False) -> str:
    if value is None:
        return "null"
    return str(int(value)) if integer else f"{value:.4f}"


def render_table(result: ScoreResult, system: dict | None = None, timing: dict | None = None) -> str:
    """A readable summary: means with exact values (when short: numtext), counts, and what made the run incomplete;
    the run's test conditions (``system``) above them and its latency distribution (``timing``) below, when known."""
    lines = system_block(system)
    width = max([len(str(m)) for m in result.measures] + [7])
    counts = {str(m) for m in result.measures if m.integer}
    exacts = {name: readable_exact(mean.exact, mean.value) for name, mean in result.means.items()}
    ew = max([len(e) for e in exacts.values()] + [5])
    lines.append(f"{'measure':<{width}}  {'mean':>8}  {'exact':<{ew}}  eligible")
    for name, mean in result.means.items():
        lines.append(f"{name:<{width}}  {_fmt(mean.value, name in counts):>8}  {exacts[name]:<{ew}}  {mean.eligible}")
    t = result
    lines.append("")
    lines.append(f"queries: {len(t.queries)} in the set ({t.query_source}"
                 f"{', split ' + t.split if t.split else ''}), "
                 f"{len(t.queries) - len(t.no_relevant)} eligible, {len(t.no_relevant)} without relevant documents (null)")
    if t.missing:
        lines.append(f"missing ({len(t.missing)}, scored 0 and kept in the mean): {_ids(t.missing)}")
    if t.failed:
        lines.append(f"failed ({len(t.failed)}, scored 0): " + ", ".join(f"{q} ({r})" for q, r in list(t.failed.items())[:10]))
    if t.by_status("empty"):
        lines.append(f"empty rankings ({len(t.by_status('empty'))}, scored 0): {_ids(t.by_status('empty'))}")
    if t.unjudged_queries:
        why = "not in the qrels" if t.query_source == "qrels" else "declared unjudged by the dataset"
        lines.append(f"unjudged run queries ({len(t.unjudged_queries)}, {why}, excluded): "
                     f"{_ids(t.unjudged_queries)}")
    if timing:
        lines += timing_line(timing_summary(timing, [q.query_id for q in t.queries]))
    lines.append(f"outcome: {'complete' if t.complete else 'INCOMPLETE'} (policy {t.policy.name})")
    return "\n".join(lines) + "\n"


def system_block(system: dict | None) -> list[str]:
    """The terminal lines of a run's test conditions: ``system (sha256 1a2b3c4d5e6f):`` then one key a line."""
    if system is None:
        return []
    head = f"system (fingerprint {system_fingerprint(system)[:12]}):" + ("" if system else " {} (no keys)")
    return [head] + [f"  {line}" for line in system_lines(system)] + [""]


def _ids(ids: list[str], limit: int = 10) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f", ... (+{len(ids) - limit})" if len(ids) > limit else "")

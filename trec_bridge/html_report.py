"""One HTML report for any evaluation: ``score --html``, ``crosscheck --html``, ``compare --html``.

Built from the JSON reports themselves (the same dicts ``--json`` writes), so
the page and the JSON cannot disagree and the code stays generic over
measures: a measure is a column or a row, never a special case.  Sections
(docs/reports.md explains each):

* protocol — the inputs with their fingerprints, the policy, the query set,
  the statuses of the queries, and the ``system`` section: the run's test
  conditions with filters called out (or a line saying they are unknown);
* summary — the means, exact when short (numtext);
* distributions — one histogram per measure of its per-query values;
* per query — every query with its status and every value, nulls shown as
  null; sortable and searchable;
* for a cross-check, the per-tool table and each difference's axes; for a
  comparison, the winner table, every pair and the per-query deltas.

The RAG acceptance page (rag/html.py) stays separate, chosen only by the RAG
options.  Every text from the inputs is escaped (html_page).
"""
from __future__ import annotations

from html import escape

from .html_page import Cell, Page
from .numtext import p_text, readable_exact
from .system_meta import filter_keys, flatten

STATUS_ORDER = ("ranked", "empty", "missing", "failed")


# ------------------------------------------------------------------ shared sections


def system_section(page: Page, report: dict) -> None:
    """The run's test conditions (``report["system"]``), filters first and marked; "unknown" when not given."""
    system = report.get("system")
    page.h3("System (test conditions)")
    if system is None:
        page.p("Not recorded: the run carries no system object and none was given (--system, --system-file), so the "
               "conditions of this test are unknown.", "system-unknown")
        return
    flat = flatten(system)
    filters = filter_keys(system)
    items = [("system fingerprint", report["fingerprints"].get("system", ""))]
    items += [(f"{k} (filter)", _value_text(flat[k])) for k in filters]
    items += [(k, _value_text(v)) for k, v in flat.items() if k not in filters]
    page.facts(items, "system-facts")
    if not filters:
        page.p("No filter is stated (no key named *filter*): say so in the system object if none was applied.",
               "system-no-filter")


def _value_text(value) -> str:
    import json

    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def protocol_section(page: Page, report: dict) -> None:
    """Inputs and fingerprints, policy, query set and the statuses of the queries."""
    page.h2("Protocol", "protocol")
    qs, fp = report["query_set"], report["fingerprints"]
    page.facts([
        ("policy", report["policy"]["name"]),
        ("query set", f"{qs['size']} queries from {qs['source']}" + (f", split {qs['split']}" if qs["split"] else "")),
        ("relevance threshold", str(qs["relevance_threshold"])),
        ("measures", " ".join(report["measures"])),
        ("outcome", report["outcome"]),
        ("protocol fingerprint", fp["protocol"]),
        ("trec-bridge", report["tool"]["version"]),
    ], "protocol-facts")
    page.table("inputs", ["input", "path", "sha256"],
               [[role, v.get("path"), v.get("sha256")] for role, v in (fp.get("inputs") or {}).items()])
    t = report["totals"]
    page.table("statuses", ["status", "queries", "counted in the means"], [
        ["ranked", t["ranked"], "yes"], ["empty", t["empty"], "yes, as 0"], ["missing", t["missing"], "yes, as 0"],
        ["failed", t["failed"], "yes, as 0"], ["no relevant documents", t["no_relevant"], "no (null)"],
        ["unjudged run queries", t["unjudged"], "no (not in the query set)"]])
    page.section("system", lambda p: system_section(p, report))


def summary_section(page: Page, report: dict) -> None:
    page.h2("Summary", "summary-section")
    page.table("summary", ["measure", "mean", "exact", "eligible queries"],
               [[name, m["value"], readable_exact(m["exact"], m["value"]), m["eligible"]]
                for name, m in report["means"].items()])


def distribution_values(report: dict) -> dict[str, list[float]]:
    return {name: [q["values"][name] for q in report["per_query"] if q["values"].get(name) is not None]
            for name in report["measures"]}


def per_query_section(page: Page, report: dict) -> None:
    page.h2("Per query", "per-query-section")
    page.p("Click a column to sort; type to filter. A null is a query without relevant documents (not in the "
           "mean); missing, failed and empty queries count as 0.", "note")
    names = report["measures"]
    rows = [[q["query_id"], Cell(q["status"], f"status-{q['status']}", str(STATUS_ORDER.index(q["status"]))
                                 if q["status"] in STATUS_ORDER else None),
             q["relevant"], q["retrieved"]] + [q["values"].get(n) for n in names] for q in report["per_query"]]
    page.table("per-query", ["query", "status", "relevant", "retrieved"] + names, rows, interactive=True)


def notes_section(page: Page, report: dict) -> None:
    for key, value in sorted((report.get("notes") or {}).items()):
        for text in value if isinstance(value, list) else [value]:
            page.p(f"note ({key}): {text}", "note")


# ------------------------------------------------------------------ score


def score_page(report: dict, charts: dict[str, bytes]) -> str:
    page = Page("Evaluation report")
    run = ((report["fingerprints"].get("inputs") or {}).get("run") or {}).get("path")
    page.p(f"run {run}: {report['outcome']}, policy {report['policy']['name']}, "
           f"{report['totals']['eligible']} of {report['totals']['total']} queries eligible")
    notes_section(page, report)
    protocol_section(page, report)
    summary_section(page, report)
    timing_section(page, report.get("timing"), charts)
    if "distributions.png" in charts:
        page.h2("Distributions over queries", "distributions")
        page.image(charts["distributions.png"], "histogram of each measure's per-query values")
    per_query_section(page, report)
    return page.render()


def timing_section(page: Page, timing: dict | None, charts: dict[str, bytes]) -> None:
    """The latency distribution beside the quality figures (timing.py); nothing when the run has no timing."""
    if not timing:
        return
    page.h2("Latency", "latency")
    page.facts([("timed queries", f"{timing['timed']} ({timing['untimed']} without timing, not counted)"),
                ("median", f"{timing['median']:g} ms"), ("p95", f"{timing['p95']:g} ms"),
                ("p99", f"{timing['p99']:g} ms"), ("max", f"{timing['max']:g} ms"),
                ("percentiles", "nearest rank: the value at position ceil(p/100 x n) of the sorted latencies")],
               "latency-facts")
    page.table("slowest", ["query", "latency (ms)"], [[r["query_id"], r["latency_ms"]] for r in timing["slowest"]])
    if "latency.png" in charts:
        page.image(charts["latency.png"], "latency of the slowest queries with the median, p95 and p99")


def score_charts(report: dict) -> dict[str, bytes]:
    from .rag import plots

    charts = {"distributions.png": plots.distribution_chart(report["measures"], distribution_values(report))}
    if report.get("timing"):
        charts["latency.png"] = plots.latency_chart(report["timing"])
    return charts


# ------------------------------------------------------------------ cross-check


def crosscheck_page(report: dict, charts: dict[str, bytes]) -> str:
    strict = report["strict"]
    page = Page("Cross-check report")
    verdict = "every difference is explained" if report["outcome"] == "explained" else \
        f"{len(report['unexplained'])} UNEXPLAINED difference(s)"
    page.parts.append(f'<p class="verdict {"ok" if report["outcome"] == "explained" else "fail"}">'
                      f"{escape('cross-check: ' + verdict)}</p>")
    protocol_section(page, strict)
    page.h2("Reference tools", "tools")
    page.table("tools", ["tool", "available", "version", "emulated by policy", "not compared", "failed"],
               [[name, "yes" if t["available"] else "no: " + t.get("reason", ""), t.get("version"), t["policy"],
                 "; ".join(f"{m}: {w}" for m, w in (t.get("unsupported") or {}).items()),
                 "; ".join(f"{m}: {w}" for m, w in (t.get("failed") or {}).items())]
                for name, t in report["references"].items()])
    page.h2("Strict vs each tool", "crosscheck")
    page.p("strict: trec-bridge's own numbers; reference: the tool's; emulated: trec-bridge under the tool's "
           "policy. Each strict - reference difference is attributed to the policy axes that cause it.", "note")
    rows, classes = [], []
    for name, t in report["references"].items():
        for measure, agg in (t.get("aggregates") or {}).items():
            rows.append([name, measure, agg["strict"], agg["reference"], agg["emulation"],
                         "yes" if agg["agrees"] else "NO", _axes(agg["parts"])])
            classes.append(None if agg["agrees"] else "no")
    page.table("crosscheck-summary", ["tool", "measure", "strict", "reference", "emulated", "agrees", "axes"], rows,
               row_class=classes)
    _explanations_section(page, report.get("explanations") or {})
    summary_section(page, strict)
    timing_section(page, strict.get("timing"), charts)
    if "distributions.png" in charts:
        page.h2("Distributions over queries", "distributions")
        page.image(charts["distributions.png"], "histogram of each measure's per-query strict values")
    page.h2("Per-query differences", "differences")
    diff = [[name, r["query_id"], r["measure"], r["strict"], r["reference"], r["emulation"],
             "yes" if r["agrees"] else "NO", _axes(r.get("parts", []))]
            for name, t in report["references"].items() for r in (t.get("per_query") or []) if r.get("parts")
            or not r["agrees"]]
    page.table("differences", ["tool", "query", "measure", "strict", "reference", "emulated", "agrees", "axes"],
               diff, interactive=True)
    per_query_section(page, strict)
    return page.render()


def _explanations_section(page: Page, explanations: dict) -> None:
    """Strict walked to each policy no tool runs (crosscheck --explain-policy): its means and their axes."""
    if not explanations:
        return
    page.h2("Strict vs each leaderboard policy", "policies")
    page.p("No tool can be run for these policies (the leaderboard scripts): strict is walked to each, and every "
           "strict - policy difference is attributed to the axes that cause it.", "note")
    rows = [[name, measure, agg["strict"], agg["policy"], _axes(agg["parts"])]
            for name, e in explanations.items() for measure, agg in e["aggregates"].items()]
    rows += [[name, measure, None, None, "not computed: " + why]
             for name, e in explanations.items() for measure, why in e["not_computed"].items()]
    page.table("policy-walks", ["policy", "measure", "strict", "policy's value", "axes"], rows)


def _axes(parts: list[dict]) -> str:
    return ", ".join(p["axis"] for p in parts) or "-"


# ------------------------------------------------------------------ compare


def conditions_section(page: Page, cond: dict | None) -> None:
    """The single-variable rule: its verdict and every differing system key, both values (conditions.py)."""
    if not cond:
        return
    page.h3("Test conditions (the single-variable rule)")
    for line in cond["verdict"]:
        page.p(line, "warning" if line.startswith(("not a controlled", "conditions unknown")) else "note")
    page.table("conditions", ["system", "against", "key", "change", "value in A", "value in B"],
               [[p["b"], p["a"], d["key"], d["change"], _value_text(d["a"]) if d["change"] != "added" else "",
                 _value_text(d["b"]) if d["change"] != "removed" else ""]
                for p in cond["pairs"] for d in p["differences"]])


def compare_page(cmp: dict, charts: dict[str, bytes], chart_names: dict[tuple[str, str, str], str]) -> str:
    from .compare_systems import TEST_NAMES
    from .compare_text import legend, winner_rows

    page = Page("System comparison")
    for w in cmp["warnings"]:
        page.p("warning: " + w, "warning")
    for n in cmp["notes"]:
        page.p("note: " + n, "note")
    page.h2("Systems and protocol", "protocol")
    page.table("systems", ["mark", "system", "report", "run", "outcome", "values from"],
               [[s["mark"], s["label"], s["path"], s["run"], s["outcome"], s["values_from"]] for s in cmp["systems"]])
    conditions_section(page, cmp.get("conditions"))
    c = cmp["correction"]
    prints = sorted({s["protocol_fingerprint"] for s in cmp["systems"]})
    page.facts([("protocol", f"equal: {prints[0]}" if len(prints) == 1 else
                 "equal except the measures; compared on the measures all systems share"),
                ("measures", " ".join(cmp["measures"])),
                ("correction", f"{c['description']}, over {c['family']} tests of each kind ({c['scope']})"),
                ("marks", f"{TEST_NAMES[c['test']]}, adjusted p < {c['alpha']:g}"),
                ("delta", cmp["delta"]),
                ("resampling", f"seed {cmp['seed']}, {cmp['resamples']} resamples, "
                               f"{cmp['confidence_level']:.0%} bootstrap interval"),
                ("trec-bridge", cmp["tool"]["version"])], "compare-facts")
    page.h2("Winner table", "winners")
    page.p(legend(cmp), "note")
    headers, rows = winner_rows(cmp)
    page.table("winners", headers, [[f"({s['mark']}) {s['label']}"] + [_winner_cell(*cell) for cell in row]
                                    for s, row in zip(cmp["systems"], rows)])
    _pairs_section(page, cmp)
    _per_query_sections(page, cmp, charts, chart_names)
    return page.render()


def _winner_cell(mean, marks: str, best: bool) -> Cell:
    text = "null" if mean is None else f"{mean:.4f}"
    html = (f"<strong>{text}</strong>" if best else text) + (f"<sup>{escape(marks)}</sup>" if marks else "")
    return Cell(html, "num best" if best else "num", None if mean is None else repr(mean), markup=True)


def _pairs_section(page: Page, cmp: dict) -> None:
    page.h2("Every pair", "pairs")
    test = cmp["correction"]["test"]
    rows = []
    for pair in cmp["pairs"]:
        for m in pair["measures"]:
            bs = m["bootstrap"]
            rows.append([pair["a"], pair["b"], m["measure"], m["n"], m["mean_a"], m["mean_b"], m["mean_delta"],
                         m["wins"], m["losses"], m["ties"], _p(m["t_test"]), _p(m["wilcoxon"]), _p(m["permutation"]),
                         _p(m[test], "pvalue_adjusted"),
                         "n/a" if bs.get("low") is None else f"[{bs['low']:.4f}, {bs['high']:.4f}]"])
    page.table("pairs", ["A", "B", "measure", "queries", "mean A", "mean B", "mean delta", "wins", "losses", "ties",
                         "t-test p", "Wilcoxon p", "permutation p", "adjusted p", "bootstrap CI"], rows,
               interactive=len(rows) > 10)
    for pair in cmp["pairs"]:
        for m in pair["measures"]:
            for key in ("t_test", "wilcoxon", "permutation", "bootstrap"):
                if m[key].get("note"):
                    page.p(f"{pair['a']} vs {pair['b']}, {m['measure']}, {key}: {m[key]['note']}", "note")


def _p(test: dict, key: str = "pvalue") -> Cell:
    """A p-value printed as in the terminal (numtext.p_text: 2.054e-08, never 0.0000), sorted by its value."""
    value = test.get(key)
    return Cell(p_text(value), "num", None if value is None else repr(value))


def _per_query_sections(page: Page, cmp: dict, charts: dict[str, bytes], names: dict) -> None:
    labels = [s["label"] for s in cmp["systems"]]
    two = len(labels) == 2
    for i, measure in enumerate(cmp["measures"]):
        page.h2(f"{measure} per query", f"measure-{i}")
        for pair in cmp["pairs"]:
            png = charts.get(names.get((pair["a"], pair["b"], measure), ""))
            if png:
                page.image(png, f"per-query {measure} delta, {pair['b']} minus {pair['a']}")
        first = [p for p in cmp["pairs"] if p["a"] == labels[0]]
        rows_by_system = {labels[0]: {r["query_id"]: r["a"] for r in first[0]["measures"][i]["per_query"]}}
        for p in first:
            rows_by_system[p["b"]] = {r["query_id"]: r["b"] for r in p["measures"][i]["per_query"]}
        queries = [r["query_id"] for r in first[0]["measures"][i]["per_query"]]
        if two:
            page.table(f"per-query-{measure}", ["query", "A", "B", "delta"],
                       [[r["query_id"], r["a"], r["b"], r["delta"]] for r in first[0]["measures"][i]["per_query"]],
                       interactive=True)
        else:
            page.table(f"per-query-{measure}", ["query"] + labels,
                       [[q] + [rows_by_system[s].get(q) for s in labels] for q in queries], interactive=True)

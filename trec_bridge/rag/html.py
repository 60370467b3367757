"""The RAG pages (acceptance, stages) on the shared page blocks of ``html_page``.

No script, no external resource: the file can be mailed or archived as it
is.  Every table has an ``id`` and a header row so that it can be read back
(the tests parse it with html.parser).  Text is always escaped.
"""
from __future__ import annotations

from html import escape

from ..html_page import Page
from ..numtext import readable_exact


def _inputs_table(page: Page, inputs: dict) -> None:
    rows = [[role, v.get("path"), v.get("sha256")] for role, v in inputs.items()]
    page.table("inputs", ["input", "path", "sha256"], rows)


# ------------------------------------------------------------------ score


def _system(page: Page, system: dict | None) -> None:
    """The test conditions as the evaluation report shows them (html_report.system_section)."""
    from ..html_report import system_section
    from ..system_meta import system_fingerprint

    system_section(page, {"system": system,
                          "fingerprints": {"system": system_fingerprint(system)} if system is not None else {}})


def acceptance_page(acc, inputs: dict, charts: dict[str, bytes], system: dict | None = None) -> str:
    """``system``: the runs' test conditions (one fixed system: --repeat refuses others), shown with the inputs."""
    from .tiers import fraction_decimal

    data = acc.to_json()
    page = Page("RAG retrieval acceptance report")
    verdict = acc.verdict
    page.parts.append(f'<p class="verdict {verdict}">{escape(acc.verdict_line())}</p>')
    for w in ([data["repeats"]["warning"]] if data["repeats"]["warning"] else []) + acc.warnings:
        page.p("warning: " + w, "warning")
    page.h2("Inputs")
    _inputs_table(page, inputs)
    page.p(f"protocol fingerprint: {acc.combined.protocol_fingerprint}", "note")
    _system(page, system)

    page.h2("Acceptance tiers")
    page.p(f"thresholds: {acc.thresholds.source}", "note")
    if acc.thresholds.discount_note():
        page.p(acc.thresholds.discount_note(), "note")
    if acc.added_measures:
        page.p("measures added for the acceptance method: " + " ".join(acc.added_measures), "note")
    page.table("tiers", ["measure", "mean", "exact", "tier", "excellent", "good", "pass"],
               [[t.measure, t.value, readable_exact(t.exact, t.value), t.tier]
                + [fraction_decimal(x) for x in t.levels.as_tuple()] for t in acc.tiers],
               row_class=[t.tier for t in acc.tiers])
    if "tiers.png" in charts:
        page.image(charts["tiers.png"], "acceptance tiers chart")

    page.h2("Sample size")
    s = acc.sample
    page.table("sample", ["eligible queries", "minimum", "statistically meaningful"],
               [[s.eligible, s.min_queries, "yes" if s.meaningful else "no"]])
    page.p(s.message(), None if s.meaningful else "warning")

    c = acc.combined
    page.h2(f"Runs ({c.n_runs})")
    if c.n_runs > 1:
        page.p(f"tiers, breakdown and triage use the average of the {c.n_runs} runs", "note")
    page.table("repeats", ["measure"] + [f"run {i + 1}" for i in range(c.n_runs)] + ["mean", "min", "max", "stdev"],
               [[name] + [m.value for m in c.run_means[name]] + [c.means[name].value]
                + _spread_cells(data["repeats"]["mean_spread"][name]) for name in c.measures])
    page.table("runs", ["run", "path", "complete"],
               [[f"run {i + 1}", label, "yes" if ok else "no"] for i, (label, ok) in enumerate(zip(c.labels, c.run_complete))])
    if c.n_runs > 1:
        rows = []
        by_id = {q.query_id: q for q in c.queries}
        for qid, names in c.changed.items():
            q = by_id[qid]
            for name in names:
                sp = q.spread[name]
                rows.append([qid, name] + [" / ".join(_fmt(v) for v in q.per_run[name])] + [sp.min, sp.max, sp.stdev])
        page.p(f"{len(c.changed)} quer{'y' if len(c.changed) == 1 else 'ies'} change value between repeats")
        page.table("changed", ["query", "measure", "values by run", "min", "max", "stdev"], rows)

    page.h2("Breakdown by query tag")
    names = c.measures
    page.table("breakdown", ["tag", "queries", "eligible"] + names,
               [[r.tag, r.queries, r.eligible] + [r.means[n].value for n in names] for r in acc.breakdown])

    t = acc.triage
    for table_id, title, lst, name, limit in (
            ("triage-recall", "recall", t.recall, t.recall_measure, t.config.recall_below),
            ("triage-ndcg", "nDCG", t.ndcg, t.ndcg_measure, t.config.ndcg_below)):
        page.h2(f"Triage: {name} < {fraction_decimal(limit)} ({len(lst)})")
        page.table(table_id, ["query", name, "status", "relevant", "first relevant rank", "tags"],
                   [[e.query_id, e.value, e.status, e.relevant,
                     e.first_relevant_rank if e.first_relevant_rank is not None else "none retrieved",
                     " ".join(e.tags)] for e in lst])
    return page.render()


def _spread_cells(spread: dict | None) -> list:
    if spread is None:
        return [None, None, None]
    return [spread["min"], spread["max"], spread["stdev"]]


def _fmt(v: float | None) -> str:
    return "null" if v is None else f"{v:.4f}"


# ----------------------------------------------------------------- stages


def stages_page(st: dict, charts: dict[str, bytes]) -> str:
    page = Page("Stage-wise retrieval evaluation")
    k = st["k"]
    page.h2("Stages")
    page.table("stage-recall", ["stage", "run", f"R@{k}", "exact", "outcome"],
               [[s["name"], s["run"], s["recall"]["value"], readable_exact(s["recall"]["exact"], s["recall"]["value"]),
                 s["outcome"]]
                for s in st["stages"]])
    if "stages.png" in charts:
        page.image(charts["stages.png"], "recall per stage and documents lost between stages")
    page.h2("Transitions")
    page.table("stage-loss", ["from", "to", "relevant lost", "relevant gained", "queries losing",
                              f"R@{k} delta"],
               [[t["from"], t["to"], t["lost"], t["gained"], t["queries_losing"], t["recall_delta"]["value"]]
                for t in st["transitions"]])
    page.h2("Queries losing relevant documents")
    rows = []
    for q in st["per_query"]:
        for t in q["transitions"]:
            if t["lost"]:
                rows.append([q["query_id"], f"{t['from']} -> {t['to']}", len(t["lost"]), " ".join(t["lost"])])
    page.table("lost-docs", ["query", "transition", "lost", "documents"], rows)
    return page.render()

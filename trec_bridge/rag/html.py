"""One self-contained HTML page per report: inline CSS, charts as base64 PNG data URIs.

No script, no external resource: the file can be mailed or archived as it
is.  Every table has an ``id`` and a header row so that it can be read back
(the tests parse it with html.parser).  Text is always escaped.
"""
from __future__ import annotations

import base64
from html import escape

from .. import __version__
from ..numtext import readable_exact

CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #1f2328; max-width: 70em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #d0d7de; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.92em; }
th, td { border: 1px solid #d0d7de; padding: 0.25em 0.6em; text-align: left; }
th { background: #f6f8fa; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.excellent { background: #dafbe1; } .good { background: #eaf5d3; } .pass { background: #fff8c5; }
.fail { background: #ffebe9; }
.verdict { font-size: 1.15em; font-weight: bold; padding: 0.5em; border: 2px solid; display: inline-block; }
.verdict.pass { border-color: #1a7f37; } .verdict.fail, .verdict.incomplete { border-color: #cf222e; }
.warning { color: #9a6700; } .note { color: #57606a; }
img { max-width: 100%; border: 1px solid #d0d7de; margin: 0.5em 0; }
code { background: #f6f8fa; padding: 0 0.2em; }
"""


class Page:
    def __init__(self, title: str):
        self.title = title
        self.parts: list[str] = []

    def h2(self, text: str) -> None:
        self.parts.append(f"<h2>{escape(text)}</h2>")

    def p(self, text: str, cls: str | None = None) -> None:
        attr = f' class="{escape(cls)}"' if cls else ""
        self.parts.append(f"<p{attr}>{escape(text)}</p>")

    def table(self, table_id: str, headers: list[str], rows: list[list], *, row_class: list[str | None] | None = None,
              caption: str | None = None) -> None:
        out = [f'<table id="{escape(table_id)}">']
        if caption:
            out.append(f"<caption>{escape(caption)}</caption>")
        out.append("<thead><tr>" + "".join(f"<th>{escape(h)}</th>" for h in headers) + "</tr></thead><tbody>")
        for i, row in enumerate(rows):
            cls = row_class[i] if row_class else None
            attr = f' class="{escape(cls)}"' if cls else ""
            cells = "".join(_cell(v) for v in row)
            out.append(f"<tr{attr}>{cells}</tr>")
        out.append("</tbody></table>")
        self.parts.append("".join(out))

    def image(self, png: bytes, alt: str) -> None:
        data = base64.b64encode(png).decode("ascii")
        self.parts.append(f'<img alt="{escape(alt)}" src="data:image/png;base64,{data}">')

    def render(self) -> str:
        body = "\n".join(self.parts)
        return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
                f"<title>{escape(self.title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
                f"<h1>{escape(self.title)}</h1>\n{body}\n"
                f'<p class="note">trec-bridge {escape(__version__)}</p>\n</body>\n</html>\n')


def _cell(v) -> str:
    if v is None:
        return "<td>null</td>"
    if isinstance(v, float):
        return f'<td class="num">{v:.4f}</td>'
    if isinstance(v, int) and not isinstance(v, bool):
        return f'<td class="num">{v}</td>'
    return f"<td>{escape(str(v))}</td>"


def _inputs_table(page: Page, inputs: dict) -> None:
    rows = [[role, v.get("path"), v.get("sha256")] for role, v in inputs.items()]
    page.table("inputs", ["input", "path", "sha256"], rows)


# ------------------------------------------------------------------ score


def acceptance_page(acc, inputs: dict, charts: dict[str, bytes]) -> str:
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


# ---------------------------------------------------------------- compare


def compare_page(cmp: dict, charts: dict[str, bytes]) -> str:
    page = Page("System comparison")
    for w in cmp["warnings"]:
        page.p("warning: " + w, "warning")
    page.h2("Reports")
    page.table("inputs", ["system", "report", "run", "outcome"],
               [["A", cmp["a"]["path"], cmp["a"]["run"], cmp["a"]["outcome"]],
                ["B", cmp["b"]["path"], cmp["b"]["run"], cmp["b"]["outcome"]]])
    page.p(f"protocol fingerprint (equal): {cmp['protocol_fingerprint']}", "note")
    page.p(f"delta = B - A; seed {cmp['seed']}, {cmp['resamples']} resamples, "
           f"{cmp['confidence_level']:.0%} bootstrap interval", "note")
    page.h2("Summary")
    rows = []
    for m in cmp["measures"]:
        rows.append([m["measure"], m["n"], m["mean_a"], m["mean_b"], m["mean_delta"], m["wins"], m["losses"],
                     m["ties"], _stat(m["t_test"], "pvalue"), _stat(m["wilcoxon"], "pvalue"),
                     _stat(m["permutation"], "pvalue"), _ci(m["bootstrap"])])
    page.table("summary", ["measure", "queries", "mean A", "mean B", "mean delta", "wins", "losses", "ties",
                           "t-test p", "Wilcoxon p", "permutation p", "bootstrap CI"], rows)
    for m in cmp["measures"]:
        page.h2(f"{m['measure']} per query")
        png = charts.get(m["png"])
        if png:
            page.image(png, f"per-query delta chart for {m['measure']}")
        for key in ("t_test", "wilcoxon", "permutation", "bootstrap"):
            note = m[key].get("note") if m[key] else None
            if note:
                page.p(f"{key}: {note}", "note")
        page.table(f"per-query-{m['measure']}", ["query", "A", "B", "delta"],
                   [[r["query_id"], r["a"], r["b"], r["delta"]] for r in m["per_query"]])
    return page.render()


def _stat(d: dict | None, key: str):
    if not d or d.get(key) is None:
        return "n/a"
    return float(d[key])


def _ci(d: dict | None) -> str:
    if not d or d.get("low") is None:
        return "n/a"
    return f"[{d['low']:.4f}, {d['high']:.4f}]"


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

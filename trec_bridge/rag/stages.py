"""Stage-wise evaluation: where in a pipeline the relevant documents are lost.

Runs taken at several stages of one pipeline (raw vector recall, after
merging recalls, after reranking, ...) on one query set are each scored by
the strict scorer with R@k (same dataset, split, chunk map and threshold, so
the same protocol fingerprint).  Between consecutive stages i and i+1, a
relevant document is *lost* for a query when it is in stage i's top k and
not in stage i+1's top k, and *gained* the other way round.  Computed with
polars joins over all queries at once.  Queries without a relevant document
are left out (their recall is null).
"""
from __future__ import annotations

from dataclasses import dataclass
import polars as pl

from ..errors import InvalidInput
from ..measures.base import Measure
from ..model import ChunkMap, Dataset, Run
from ..policy import STRICT
from ..numtext import readable_exact
from ..report import fraction_text, tool_stamp
from ..scorer import Prepared, ScoreResult, evaluate, prepare
from ..messages import quote


@dataclass
class StageInput:
    name: str
    path: str
    run: Run


@dataclass
class StageAnalysis:
    k: int
    names: list[str]
    results: list[ScoreResult]
    data: dict  # JSON-ready

    @property
    def complete(self) -> bool:
        return all(r.complete for r in self.results)


def relevant_top_k(prepared: Prepared, k: int) -> pl.DataFrame:
    """(query_id, doc_id, rank) of the relevant documents in the prepared run's top k (after the chunk collapse)."""
    dataset = prepared.dataset
    relevant = (dataset.qrels.frame.filter((pl.col("grade") >= dataset.threshold) & (pl.col("grade") >= 0))
                .select("query_id", "doc_id").unique())
    return (prepared.run.frame.filter(pl.col("rank") <= k).select("query_id", "doc_id", "rank")
            .join(relevant, on=["query_id", "doc_id"], how="inner"))


def analyse_stages(dataset: Dataset, stages: list[StageInput], k: int, *, split: str | None = None,
                   chunk_map: ChunkMap | None = None) -> StageAnalysis:
    if len(stages) < 2:
        raise InvalidInput("E_USAGE", "stage-wise evaluation needs at least two stages")
    measure = Measure("R", k)
    name = str(measure)
    prepared, results = [], []
    for s in stages:  # each stage scored before the next is read: its error is the one raised
        prepared.append(prepare(dataset, s.run, split=split, chunk_map=chunk_map))
        results.append(evaluate(prepared[-1], [measure], STRICT))
    fp = results[0].protocol_fingerprint
    for s, r in zip(stages, results):
        if r.protocol_fingerprint != fp:  # cannot happen through the CLI; guards library callers
            raise InvalidInput("E_REPEAT_PROTOCOL", f"stage {quote(s.name)} was scored under another protocol", file=s.path)
    tops = [relevant_top_k(p, k) for p in prepared]
    eligible = [q for q in results[0].queries if q.relevant > 0]

    transitions, per_transition_docs = [], []
    for i in range(len(stages) - 1):
        a, b = tops[i], tops[i + 1]
        lost = a.join(b.select("query_id", "doc_id"), on=["query_id", "doc_id"], how="anti")
        gained = b.join(a.select("query_id", "doc_id"), on=["query_id", "doc_id"], how="anti")
        lost_by_q = _docs_by_query(lost)
        gained_by_q = _docs_by_query(gained)
        per_transition_docs.append((lost_by_q, gained_by_q))
        ma, mb = results[i].means[name], results[i + 1].means[name]
        delta_exact = mb.exact - ma.exact if ma.exact is not None and mb.exact is not None else None
        transitions.append({
            "from": stages[i].name, "to": stages[i + 1].name,
            "lost": lost.height, "gained": gained.height,
            "queries_losing": len(lost_by_q), "queries_gaining": len(gained_by_q),
            "recall_delta": {"value": float(delta_exact) if delta_exact is not None else None,
                             "exact": fraction_text(delta_exact)},
        })

    rows_by_stage = [{row.query_id: row for row in r.queries} for r in results]
    per_query = []
    for q in eligible:
        recalls = {}
        for s, rows in zip(stages, rows_by_stage):
            row = rows[q.query_id]
            recalls[s.name] = {"value": row.values[name], "exact": fraction_text(row.exact[name]), "status": row.status}
        trans = []
        for t, (lost_by_q, gained_by_q) in zip(transitions, per_transition_docs):
            trans.append({"from": t["from"], "to": t["to"], "lost": lost_by_q.get(q.query_id, []),
                          "gained": gained_by_q.get(q.query_id, [])})
        per_query.append({"query_id": q.query_id, "relevant": q.relevant, "recall": recalls, "transitions": trans})

    data = {
        "format": "trec-bridge.stages",
        "version": 1,
        "tool": tool_stamp(),
        "k": k,
        "measure": name,
        "protocol_fingerprint": fp,
        "eligible": len(eligible),
        "stages": [
            {"name": s.name, "run": s.path,
             "recall": {"value": r.means[name].value, "exact": fraction_text(r.means[name].exact),
                        "eligible": r.means[name].eligible},
             "outcome": "complete" if r.complete else "incomplete",
             "missing_queries": r.missing, "failed_queries": r.failed}
            for s, r in zip(stages, results)
        ],
        "transitions": transitions,
        "per_query": per_query,
    }
    return StageAnalysis(k, [s.name for s in stages], results, data)


def _docs_by_query(frame: pl.DataFrame) -> dict[str, list[str]]:
    """query -> documents, in rank order within the stage they come from."""
    if frame.height == 0:
        return {}
    grouped = frame.sort(["query_id", "rank"]).group_by("query_id", maintain_order=True).agg(pl.col("doc_id"))
    return dict(zip(grouped.get_column("query_id").to_list(), grouped.get_column("doc_id").to_list()))


def render_text(st: StageAnalysis) -> str:
    d = st.data
    name = d["measure"]
    width = max([len(s["name"]) for s in d["stages"]] + [len("stage")]) + 2
    exacts = [readable_exact(s["recall"]["exact"], s["recall"]["value"]) for s in d["stages"]]
    ew = max([len(e) for e in exacts] + [12])
    lines = [f"{'stage':<{width}} {name:>8}  {'exact':<{ew}} outcome   run"]
    for s, exact in zip(d["stages"], exacts):
        v = s["recall"]["value"]
        lines.append(f"{s['name']:<{width}} {('null' if v is None else f'{v:.4f}'):>8}  {exact:<{ew}} "
                     f"{s['outcome']:<9} {s['run']}")
    lines.append("")
    lines.append(f"{d['eligible']} eligible queries; relevant documents in the top {d['k']} lost / gained between stages:")
    for t in d["transitions"]:
        delta = t["recall_delta"]["value"]
        lines.append(f"  {t['from']} -> {t['to']}: lost {t['lost']} ({t['queries_losing']} queries), "
                     f"gained {t['gained']} ({t['queries_gaining']} queries), {name} delta "
                     f"{'null' if delta is None else f'{delta:+.4f}'}")
    losing = [(q["query_id"], t) for q in d["per_query"] for t in q["transitions"] if t["lost"]]
    if losing:
        lines.append("")
        lines.append("per query, relevant documents lost:")
        for qid, t in losing[:50]:
            lines.append(f"  {qid}\t{t['from']} -> {t['to']}: {', '.join(t['lost'])}")
        if len(losing) > 50:
            lines.append(f"  ... (+{len(losing) - 50}; all in the JSON and HTML reports)")
    for s in d["stages"]:
        if s["outcome"] != "complete":
            lines.append(f"stage {s['name']} is INCOMPLETE: missing {s['missing_queries']}, failed {list(s['failed_queries'])}")
    return "\n".join(lines) + "\n"

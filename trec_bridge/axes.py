"""The divergence axes: every way a reference tool's default differs from the strict policy.

The cross-check switches these one at a time, in this order, from the strict
policy to a reference's policy; the change of each step is attributed to that
axis, so the parts add up to the whole difference.  docs/divergences.md is
generated from this registry (``trec-bridge docs divergences``).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Axis:
    """One way policies differ: the Policy field, its title, what strict does, and why each other value differs."""

    field: str  # Policy attribute
    title: str
    strict: str  # what the strict policy does
    reasons: dict[object, str]  # a policy's value on this axis -> one-line reason (tools add theirs when registered)


AXES: tuple[Axis, ...] = (
    Axis("query_set", "which queries are averaged",
         "the dataset's query set, fixed before scoring",
         {"run_and_judged": "only queries in both the run and the qrels are averaged; a missing query is dropped "
                            "from the mean instead of scoring 0 (trec_eval 9 without -c, pytrec_eval)",
          "judged": "every judged query is averaged and a missing one scores 0 (trec_eval -c, ir_measures, "
                    "ranx with make_comparable); "
                    "queries the dataset lists without judgments are not seen"}),
    Axis("empty_rankings", "explicitly empty rankings",
         "an empty ranking is a record: the query ran and found nothing",
         {"invisible": "a TREC run file cannot hold an empty ranking, so the tool never sees the query"}),
    Axis("missing_score", "what a query missing from the run scores",
         "what an empty ranking scores: 0, except the counts that do not depend on the run (NumQ 1, NumRel the "
         "query's relevant documents; trec_eval -c counts them so too)",
         {"zero": "0 in every measure, NumQ and NumRel included (ir_measures fills a missing query with 0)"}),
    Axis("identical_ids", "documents whose ID is the query's ID",
         "scored like any other document",
         {"drop": "removed from the ranking before scoring, the documents below move up (BEIR's "
                  "EvaluateRetrieval.evaluate, ignore_identical_ids=True by default)"}),
    Axis("relevance", "which judgments are relevant",
         "a grade at or above the relevance threshold (a negative grade never)",
         {"any_judgment": "every qrels line is relevant whatever its grade (MS MARCO's ms_marco_eval.py reads "
                          "only the query and passage columns of the reference file)"}),
    Axis("no_relevant", "queries with no relevant document",
         "null, and out of every mean",
         {"zero": "scored 0 and counted in the mean"}),
    Axis("ordering", "ranking order",
         "the order the run gives (JSON list order; TREC: score as a double, ties by docno descending)",
         {}),  # a tool's ordering is its own: its adapter registers the reason (references/registry.py)
    Axis("measure_orderings", "per-measure ordering",
         "one order for every measure",
         {}),
    Axis("printed_digits", "per-query values as printed",
         "full double precision",
         {}),  # a tool's printed precision is its own: its adapter registers the reason
    Axis("rr_cutoff", "RR cutoff",
         "RR@k looks at the top k only",
         {"ignored": "recip_rank has no cutoff: the first relevant document anywhere in the ranking counts"}),
    Axis("gm_per_query", "per-query value of a geometric-mean measure (GMAP, GMBpref)",
         "the measure's own value (AP, bpref); the summary is exp of the mean of log(max(value, 1e-5))",
         {"log": "log(max(value, 1e-5)) per query, as trec_eval's m_gm_map.c and m_gm_bpref.c keep it (pytrec_eval "
                 "returns it; trec_eval prints only the summary, exp of their mean)"}),
    Axis("gain", "nDCG gain when the measure names none",
         "linear gain (the grade itself), as in trec_eval and ir_measures; 2^grade - 1 only by name (gain=exp)",
         {"exp": "exponential gain 2^grade - 1 for a plain nDCG"}),
    Axis("ndcg_gain_floor", "grades that earn nDCG gain",
         "every grade > 0; the relevance threshold does not touch nDCG (trec_eval ignores -l for ndcg)",
         {"threshold": "only grades at or above the relevance threshold earn gain and enter the ideal (ranx's -lN "
                       "drops lower grades from the qrels before nDCG)"}),
    Axis("duplicates", "duplicate documents in a ranking",
         "rejected",
         {"last_wins": "the last line silently wins",
          "first_wins": "the first line silently wins (code that skips a document already seen)",
          "keep_all": "every line counts: a relevant document listed twice is counted twice"}),
    Axis("run_only_queries", "run queries outside the query set",
         "rejected (or listed as unjudged when the query set comes from TREC qrels, or the dataset declares them unjudged)",
         {"ignore": "silently ignored"}),
    Axis("unknown_docs", "documents outside a listed corpus",
         "rejected",
         {"ignore": "treated as non-relevant"}),
)


def reason(axis: Axis, value) -> str:
    """Why a policy takes ``value`` on ``axis``: the registered reason, else the axis and the value.

    Each tool registers its reasons when its adapter is imported; the callers
    (reconcile, divergence_doc) import ``references`` for that, so this leaf
    module imports nothing of the package.
    """
    return axis.reasons.get(value, f"{axis.title}: {value}")

"""Evaluation policies as data: one value per axis, no code path per tool.

The strict policy is the project's contract (docs/policy.md).  The other
policies reproduce a reference tool's defaults so that the cross-check can
show that every remaining difference is one of these axes.  A tool's
behaviour is a value, not a branch in the scorer: the built-in tools' values
are below, and a tool's adapter module registers the policies it uses
(references/registry.py), which adds a new tool's own to ``POLICIES``.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Literal

from .axes import AXES
from .errors import UsageError
from .measures.base import Measure
from .messages import quote


@dataclass(frozen=True)
class Ordering:
    """How a ranking is ordered before scoring.

    ``given`` keeps the order the reader decided (JSON list order, or the
    TREC reader's score/rank order); otherwise rows are re-sorted by score at
    ``precision`` with ties broken by document ID bytes, or as ranx breaks
    them: numba's unstable quicksort of the rows in the given order, once
    (``quicksort``: ranx's ``Run()``) or twice (``quicksort_twice``:
    ``make_comparable`` sorts the sorted ranking again; ``ordering.quicksort_order``).
    """

    # input: ties in the run's row order; quicksort(_twice): ranx's numba argsort, once or twice
    tie_break: Literal["given", "doc_desc", "doc_asc", "input", "quicksort", "quicksort_twice"] = "given"
    precision: Literal["float64", "float32"] = "float64"
    # a ranked document whose ID is its query's is taken out before positions are counted (BEIR); set from
    # ``Policy.identical_ids`` by ``Policy.ordering_for``, so that the rankings are built once per such reading
    drop_identical_ids: bool = False


@dataclass(frozen=True)
class Policy:
    """How a tool's numbers are made, axis by axis (axes.py): which queries count, what a missing query or one
    without relevant documents becomes, how a run is ordered and what is rejected; never what a measure computes."""

    name: str
    description: str
    # Which queries are averaged: the dataset's fixed set, the judged queries
    # (trec_eval -c, ir_measures), or judged queries the run also has (trec_eval 9).
    query_set: Literal["dataset", "judged", "run_and_judged"] = "dataset"
    # A query the run has no ranking for: scored as an empty ranking (0, except NumQ's 1 and NumRel's relevant
    # count, which do not depend on the run), or 0 in every measure (ir_measures fills missing queries with 0).
    missing_score: Literal["empty_ranking", "zero"] = "empty_ranking"
    # A query with no relevant document: null and out of the mean, or 0 and counted.
    no_relevant: Literal["null", "zero"] = "null"
    # A run query outside the query set: invalid input, or silently ignored.
    run_only_queries: Literal["reject", "ignore"] = "reject"
    # A ranked document outside a listed corpus: invalid input, or non-relevant.
    unknown_docs: Literal["reject", "ignore"] = "reject"
    # An explicitly empty ranking: a record of the run, or invisible (TREC files cannot hold one).
    empty_rankings: Literal["recorded", "invisible"] = "recorded"
    # The same document twice in a ranking: reject, or keep the last line (dict semantics); the first line, or
    # every line (counted twice) are what home-grown code does (``explain`` searches them; no named policy uses them).
    duplicates: Literal["reject", "last_wins", "first_wins", "keep_all"] = "reject"
    ordering: Ordering = Ordering()
    # nDCG gain when the measure names none, and which grades can earn gain: any grade > 0
    # (trec_eval ignores -l for nDCG), or the relevance threshold.  A measure string means what
    # it means in ir_measures and trec_eval (policy §4), so every named policy takes the tools'
    # values; the axes stay so that a policy that differs can still be described and walked.
    gain: Literal["exp", "linear"] = "linear"
    ndcg_gain_floor: Literal["threshold", "positive"] = "positive"
    # RR@k: the cutoff honoured, or ignored (trec_eval's recip_rank has none).
    rr_cutoff: Literal["honoured", "ignored"] = "honoured"
    # GMAP, GMBpref per query: the measure's own value, or log(max(value, 1e-5)) as trec_eval's C code keeps it
    # (the geometric-mean summary is the same either way).
    gm_per_query: Literal["value", "log"] = "value"
    # Per-measure exceptions: ir_measures routes RR@k and Judged to providers that sort differently.
    measure_orderings: tuple[tuple[str, bool, Ordering], ...] = field(default=())  # (family, has_cutoff, ordering)
    # Per-family printed precision: (family, decimals) where the tool hands over per-query values printed to that many
    # decimals (ir_measures' gdeval provider prints ERR with 5), so the policy rounds each query's value the same way.
    printed_digits: tuple[tuple[str, int], ...] = field(default=())
    # Which judgments are relevant: a grade at or above the threshold (never a negative one), or every judgment
    # whatever its grade (MS MARCO's script reads only the query and passage columns).
    relevance: Literal["threshold", "any_judgment"] = "threshold"
    # A ranked document whose ID is its query's ID: scored like any other, or dropped before scoring (BEIR's
    # ignore_identical_ids, on by default: a corpus that holds the queries must not retrieve the query itself).
    identical_ids: Literal["keep", "drop"] = "keep"
    # How `score` and `crosscheck` read a TREC run unless --order says: by score, or by the rank column (MS MARCO).
    run_order: Literal["score", "rank"] = "score"
    # The only families an emulated script computes (None: any); another is refused (E_POLICY_MEASURE).
    families: tuple[str, ...] | None = None
    # The reference tool whose output this policy prints as its own (None: none). A measure or parameter the
    # tool does not compute so is refused (E_POLICY_MEASURE) by the cross-check's own rule, never approximated.
    emulates: str | None = None  # a registered reference tool's name (references/registry.py)
    # Ranking options (trec_eval -M and -J), applied after the policy's order: each ranking cut to its top
    # ``depth`` documents (None: whole), then, with ``judged_only``, every document without a judgment of grade
    # >= 0 removed before ranks are taken.  No named policy sets them (the trec_eval drop-in does), so they are
    # not divergence axes; they change what is ranked, never what a measure computes.
    depth: int | None = None
    judged_only: bool = False
    # How values are formed: "exact" (each rational value correctly rounded from its exact fraction, means exact),
    # or "float": the kernels' doubles, computed in the tool's order of operations, and each mean a running double
    # sum in the order of the query IDs' bytes, as trec_eval's C code forms them.  They differ only in the last
    # bits, which a printed 4th decimal shows when a value sits exactly on a rounding boundary (bpref 7/32 =
    # 0.21875 prints 0.2188 exact, 0.2187 as trec_eval's sum of doubles).  Only the trec_eval drop-in sets it, to
    # print trec_eval's bytes; it is not a divergence axis (it never changes a value beyond a double's last bits).
    arithmetic: Literal["exact", "float"] = "exact"

    def ordering_for(self, measure: Measure) -> Ordering:
        chosen = self.ordering
        for family, has_cutoff, ordering in self.measure_orderings:
            if family == measure.family and has_cutoff == (measure.cutoff is not None):
                chosen = ordering
                break
        return replace(chosen, drop_identical_ids=True) if self.identical_ids == "drop" else chosen

    def digits_for(self, measure: Measure) -> int | None:
        """The decimals this policy's tool prints the measure's per-query values with, or None (full doubles)."""
        return dict(self.printed_digits).get(measure.family)

    def to_json(self) -> dict:
        out = asdict(self)
        for option, unset in (("depth", None), ("judged_only", False), ("arithmetic", "exact")):  # only when set
            if out[option] == unset:
                del out[option]
        out["measure_orderings"] = [
            {"family": f, "with_cutoff": c, **asdict(o)} for f, c, o in self.measure_orderings
        ]
        out["printed_digits"] = [{"family": f, "digits": d} for f, d in self.printed_digits]
        out["families"] = list(self.families) if self.families is not None else None
        return out

    def with_axis(self, **changes) -> "Policy":
        return replace(self, **changes)


TREC_EVAL_ORDER = Ordering(tie_break="doc_desc", precision="float32")
PYTHON_SORT_ORDER = Ordering(tie_break="doc_asc", precision="float64")
GDEVAL_ORDER = Ordering(tie_break="doc_desc", precision="float64")  # gdeval.pl: perl doubles, ties by docno descending
CWL_EVAL_ORDER = Ordering(tie_break="input", precision="float64")  # cwl_eval: a stable sort by double score
CWL_EVAL_FAMILIES = (("RBP", False), ("SDCG", True), ("NERR8", True), ("NERR9", True), ("NERR10", False),
                     ("NERR11", False), ("INST", False), ("INSQ", False))  # (family, has_cutoff) ir_measures sends to cwl_eval
# (family, has_cutoff) ir_measures sends to pyndeval, which sorts double scores with ties by docno ascending
PYNDEVAL_FAMILIES = (("alpha_nDCG", True), ("ERR_IA", True), ("P_IA", True), ("StRecall", True), ("NRBP", False))

STRICT = Policy(
    name="strict",
    description="the project's policy: fixed query set, missing = 0, no-relevant = null, input rejected never repaired",
)

_REFERENCE_COMMON = dict(
    no_relevant="zero",
    run_only_queries="ignore",
    unknown_docs="ignore",
    ordering=TREC_EVAL_ORDER,
)

TREC_EVAL = Policy(
    name="trec_eval",
    description="trec_eval 9.x defaults: mean over queries in both run and qrels, float32 scores, "
    "ties by docno descending, recip_rank without cutoff",
    query_set="run_and_judged",
    empty_rankings="invisible",
    rr_cutoff="ignored",
    gm_per_query="log",
    emulates="trec_eval",
    **_REFERENCE_COMMON,
)

TREC_EVAL_C = TREC_EVAL.with_axis(
    name="trec_eval_c",
    description="trec_eval 9.x with -c: every judged query in the mean, missing ones as 0",
    query_set="judged",
)

PYTREC_EVAL = TREC_EVAL.with_axis(
    name="pytrec_eval",
    description="pytrec_eval (trec_eval 9 inside): per-query values for queries in both run and qrels "
    "(an empty ranking dict is evaluated), mean of the returned values",
    empty_rankings="recorded",
    emulates="pytrec_eval",
)

IR_MEASURES = Policy(
    name="ir_measures",
    description="ir_measures defaults: every judged query, missing = 0; pytrec_eval semantics except "
    "RR@k (msmarco provider) and Judged (judged provider), which sort float64 scores with ties by docno ascending",
    query_set="judged",
    missing_score="zero",
    duplicates="last_wins",
    measure_orderings=(("RR", True, PYTHON_SORT_ORDER), ("Judged", True, PYTHON_SORT_ORDER),
                       ("Judged", False, PYTHON_SORT_ORDER), ("ERR", True, GDEVAL_ORDER),
                       ("Compat", False, PYTHON_SORT_ORDER), *((f, c, CWL_EVAL_ORDER) for f, c in CWL_EVAL_FAMILIES),
                       *((f, c, PYTHON_SORT_ORDER) for f, c in PYNDEVAL_FAMILIES)),
    printed_digits=(("ERR", 5),),
    emulates="ir_measures",
    **_REFERENCE_COMMON,
)

# The leaderboard scripts (docs/policy.md, golden/leaderboards): no installable reference, so no cross-check of
# their own; their rules are worked by hand from the published code in the golden cases.
MSMARCO = Policy(
    name="msmarco",
    description="MS MARCO's official ms_marco_eval.py (MRR@10): the rank column orders the run, every qrels line "
    "is relevant whatever its grade, the mean is over the reference file's queries (a missing one scores 0); "
    "it computes RR@k only",
    query_set="judged",
    relevance="any_judgment",
    no_relevant="zero",
    run_only_queries="ignore",
    unknown_docs="ignore",
    run_order="rank",
    families=("RR",),
)

BEIR = PYTREC_EVAL.with_axis(
    name="beir",
    description="BEIR's EvaluateRetrieval.evaluate: pytrec_eval (ndcg_cut, map_cut, recall, P at its k values) after "
    "removing documents whose ID is the query's (ignore_identical_ids=True), mean over the queries pytrec_eval "
    "returns; evaluate_custom's RR@k, Success@k and R_cap@k sort double scores",
    identical_ids="drop",
    rr_cutoff="honoured",
    emulates=None,
    families=("nDCG", "AP", "R", "P", "RR", "Success", "R_cap"),
    measure_orderings=tuple((family, True, Ordering(tie_break="doc_desc", precision="float64"))
                            for family in ("RR", "Success", "R_cap")),
)

AXIS_REASONS = {a.field: a.reasons for a in AXES}
AXIS_REASONS["measure_orderings"].setdefault(
    BEIR.measure_orderings, "BEIR's evaluate_custom (MRR@k, R_cap@k, Accuracy@k) sorts the results dict by double "
    "score with Python's stable sort, so ties keep the dict's order, not pytrec_eval's float32 / docno order")

# The named policies: strict, then each registered tool's (references/registry.py adds a new tool's own).
POLICIES: dict[str, Policy] = {p.name: p for p in (STRICT, TREC_EVAL, TREC_EVAL_C, PYTREC_EVAL, IR_MEASURES,
                                                   MSMARCO, BEIR)}


def get_policy(name: str) -> Policy:
    try:
        return POLICIES[name]
    except KeyError:
        raise UsageError("E_POLICY_UNKNOWN", f"unknown policy {quote(name)}; known: {', '.join(POLICIES)}") from None

"""A run held in Python is scored without being sorted (trec_bridge.grouped_run), and that changes no number.

The general path sorts the run (``tb.read_run``: score descending, ties by
document ID descending, as trec_eval) and reads each policy's order off the
sorted rows; the unsorted path reads the judged rows' ranks off one sort of
packed keys.  Here both score the same generated inputs, built to hit every
place where the two could part: scores tied exactly, tied only as float32
(1 and 1 + 2^-30), tied only in the bits the packed key drops (1 and the next
double), 0.0 beside -0.0, scores beyond float32's range (inf as float32),
negative scores, unjudged documents, documents judged in another query,
queries without relevant documents, missing queries, run-only queries, integer
IDs, rows of a query not together, long rankings and many queries.  Every
policy is asked, also those the unsorted path hands to the general one (ranx's
and cwl_eval's orders, BEIR's identical IDs), and the two results must be the
same value for value, exact fractions, the order summary and the report
included; errors must carry the same code.
"""
from __future__ import annotations

import random

import numpy as np
import pandas as pd
import polars as pl
import pytest

import trec_bridge as tb
from converters.python_objects import grouped_run_from_object
from trec_bridge.grouped_run import prepare_grouped
from trec_bridge.report import build_report, report_json
from trec_bridge.scorer import evaluate, orderings_for

from .examples_budget import DIFFERENTIAL_EXAMPLES

MEASURES = "nDCG@10 RR@10 R@100 AP P@10 nDCG nDCG@3 RR P@2 bpref Judged@5 NumRet R@5"
FAMILIES = {"trec_eval": "Judged", "trec_eval_c": "Judged", "pytrec_eval": "Judged", "beir": "bpref Judged NumRet"}
TIE_HEAVY = [0.0, -0.0, 1.0, 1.0 + 2 ** -30, 1.0 + 2 ** -52, 1.0 - 2 ** -53, 0.5, -3.0, 1e39, 2e39, -1e39, 7.25]
POLICIES = ["strict", "trec_eval", "trec_eval_c", "pytrec_eval", "ir_measures", "beir"]
DOCS = [f"d{j}" for j in range(14)] + ["é1", "Z", "!d1", "10"]  # "!d1": "!" is the lowest byte an ID may hold


def _score(rng: random.Random) -> float:
    return rng.choice(TIE_HEAVY) if rng.random() < 0.6 else rng.choice([rng.random(), rng.uniform(-5, 5)])


def case(rng: random.Random, queries: int | None = None, depth: int | None = None):
    """(qrels, run) as pytrec_eval's dicts, IDs as text or (sometimes) integers."""
    n = queries or rng.randint(1, 6)
    ints = rng.random() < 0.2
    qid = (lambda i: i) if ints else (lambda i: f"q{i}")
    did = (lambda d: int(d[1:]) if d.startswith("d") else d) if ints and rng.random() < 0.5 else (lambda d: d)
    qrels = {}
    for i in range(n):
        judged = rng.sample(DOCS, rng.randint(1, 8))
        qrels[qid(i)] = {did(d): rng.choice([-1, 0, 0, 1, 1, 2, 3]) for d in judged}
    run = {}
    for i in rng.sample(range(n + 1), rng.randint(1, n + 1)):  # query n is run-only; some judged ones missing
        pool = DOCS + [f"u{j}" for j in range(depth or 0)]
        ranked = rng.sample(pool, rng.randint(0, min(len(pool), depth or 12)))
        scored = [(did(d), _score(rng)) for d in ranked]
        order = rng.random()
        if order < 0.5:  # handed over sorted (by score, ties by document ID one way or the other): no sort needed
            scored.sort(key=lambda x: (-x[1], str(x[0])), reverse=False)
            if order < 0.3:
                scored.sort(key=lambda x: -x[1])  # stable: ties keep document IDs ascending
            else:
                scored = sorted(scored, key=lambda x: str(x[0]).encode(), reverse=True)
                scored.sort(key=lambda x: -x[1])  # ties by document ID descending (bytes): trec_eval's order
        run[qid(i)] = dict(scored)
    return qrels, run


def frames(run: dict, rng: random.Random) -> list:
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    shuffled = rows[:]
    rng.shuffle(shuffled)  # a query's rows apart: grouped by first appearance
    out = [pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]),
           pd.DataFrame(shuffled, columns=["query_id", "doc_id", "score"])]
    if all(isinstance(q, str) for q, _, _ in rows) and all(isinstance(d, str) for _, d, _ in rows) and rows:
        out.append(pl.DataFrame(shuffled, schema=["query_id", "doc_id", "score"], orient="row"))
    return out


def outcome(fn):
    try:
        return fn()
    except tb.InvalidInput as exc:
        return exc.code


def both(ev: tb.Evaluator, run) -> tuple:
    """(unsorted, general) results of one run, or their error codes."""
    unsorted = outcome(lambda: ev.score(run))
    general = outcome(lambda: ev.score(tb.read_run(run)))
    return unsorted, general


def assert_same(a, b, what: str) -> None:
    if isinstance(a, str) or isinstance(b, str):
        assert a == b, what
        return
    ra, rb = a.result, b.result
    assert ra.means == rb.means, what
    assert list(ra.queries) == list(rb.queries), what
    assert (ra.order, ra.unjudged_queries, ra.missing, ra.no_relevant) == \
        (rb.order, rb.unjudged_queries, rb.missing, rb.no_relevant), what
    assert a.exact == b.exact and a.per_query.equals(b.per_query), what
    assert report_json(build_report(ra)) == report_json(build_report(rb)), what


def _unsorted_path_taken(ev: tb.Evaluator, run) -> bool:
    grouped, _ = grouped_run_from_object(run)
    return prepare_grouped(ev._judgments, grouped, orderings_for(ev.measures, ev.policy), ev.policy.duplicates) \
        is not None


def measures_of(policy: str) -> str:
    """MEASURES less those the policy's tool does not compute (refused: E_POLICY_MEASURE)."""
    return " ".join(m for m in MEASURES.split() if m.split("@")[0] not in FAMILIES.get(policy, "").split())


CASES = [(p, "") for p in POLICIES] + [("ir_measures", " RBP")]


@pytest.mark.parametrize("policy, extra", CASES)
def test_unsorted_runs_score_as_sorted_ones(policy, extra):
    """``extra``: RBP, which ir_measures has cwl_eval compute (ties in row order): the general path then."""
    check_policy(policy, extra, 14, f"unsorted {policy}{extra}")


@pytest.mark.parametrize("policy, extra", CASES)
def test_unsorted_runs_score_as_sorted_ones_many(policy, extra):
    """The same on three times as many inputs (the slow tier; TREC_BRIDGE_EXAMPLES=300 makes it fifteen)."""
    check_policy(policy, extra, 42 * DIFFERENTIAL_EXAMPLES // 60, f"many {policy}{extra}")


def check_policy(policy: str, extra: str, cases: int, seed: str) -> None:
    rng = random.Random(seed)
    taken = 0
    for i in range(cases):
        qrels, run = case(rng)
        ev = outcome(lambda: tb.Evaluator(qrels, measures_of(policy) + extra, policy))
        assert not isinstance(ev, str) or ev in ("E_QUERY_SET_EMPTY", "E_ID_COLLISION"), ev  # "10" beside 10
        if isinstance(ev, str):
            continue
        for form in [run] + frames(run, rng):
            assert_same(*both(ev, form), f"{policy} case {i}: {qrels!r} {run!r}")
        taken += outcome(lambda: _unsorted_path_taken(ev, run)) is True
    assert taken == 0 if policy == "beir" or extra else taken >= cases // 3  # BEIR drops identical IDs: general


@pytest.mark.parametrize("queries, depth", [(300, 8), (3, 1200)])
def test_many_queries_and_long_rankings(queries, depth):
    """Many queries take more bits of the packed key; long rankings are what the general path sorts one by one."""
    rng = random.Random(f"large {queries}")
    qrels, run = case(rng, queries, depth)
    for policy in ("strict", "trec_eval", "ir_measures"):
        ev = tb.Evaluator(qrels, measures_of(policy), policy)
        for form in [run] + frames(run, rng)[:1]:
            assert_same(*both(ev, form), f"{policy}")


def test_only_ties_and_truncated_bits():
    """Every score of a ranking equal, or equal but for the last bits of the double (the packed key drops them):
    the ranks come from the exact order, document IDs deciding."""
    qrels = {"q1": {"a": 1, "b": 2, "c": 0, "d": 1}, "q2": {"x": 1}}
    base = 1.0
    close = [base, float(np.nextafter(base, 2)), float(np.nextafter(np.nextafter(base, 2), 2)), base]
    runs = [{"q1": {d: 1.0 for d in "dcbaez"}, "q2": {"x": 0.0, "y": -0.0}},
            {"q1": dict(zip("abcd", close)), "q2": {"y": -0.0, "x": 0.0}},
            {"q1": dict(zip("dbca", close)), "q2": {"x": 1e39, "y": 3e39}}]
    for policy in ("strict", "trec_eval", "ir_measures"):
        ev = tb.Evaluator(qrels, "RR AP nDCG P@1 P@2", policy)
        for run in runs:
            assert _unsorted_path_taken(ev, run)
            assert_same(*both(ev, run), f"{policy} {run}")


def test_a_diversity_qrels_scores_unsorted_as_sorted():
    """A diversity qrels' judged rows carry their pair index into the subtopic table (subtopics.py); the unsorted
    path hands it on with the grade, so the diversity family reads the same subtopic judgments either way (a
    pair index dropped or taken in the wrong row order changes these means)."""
    rng = random.Random("diversity")
    judgments = [(f"q{i}", d, rng.choice([0, 1, 1, 2]), f"s{s}") for i in range(5) for d in rng.sample(DOCS, 9)
                 for s in range(3) if rng.random() < 0.5]
    dataset = tb.read_dataset(judgments, subtopics=True)
    ev = tb.Evaluator(dataset, "alpha_nDCG@20 ERR_IA@20 NRBP P_IA@10 StRecall@10")
    for i in range(6):
        run = {f"q{q}": {d: float(rng.randint(0, 3)) for d in rng.sample(DOCS, 12)} for q in range(6)}
        assert _unsorted_path_taken(ev, run)
        for form in [run] + frames(run, rng):
            unsorted, general = both(ev, form)
            assert not isinstance(general, str), general  # scored, not refused
            assert_same(unsorted, general, f"diversity case {i}: {run!r}")


@pytest.mark.parametrize("run, code", [
    ({"q": {"a": 10 ** 400}}, "E_RUN_SCORE"),  # beyond a double: refused, not an OverflowError
    ({"q": {"a": True, "b": 0.5}}, "E_RUN_SCORE"),
    ({"q": {"a": __import__("decimal").Decimal("0.5")}}, "E_RUN_SCORE"),  # polars would read it as 0.5
    (pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, float("nan")]}), "E_RUN_SCORE"),
    (pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "a"], "score": [1.0, 0.5]}), "E_RUN_DUPLICATE_DOC"),
    (pd.DataFrame({"query_id": [1.0], "doc_id": ["a"], "score": [1.0]}), "E_USAGE"),  # a float ID is not text
    (pl.DataFrame({"query_id": ["q"], "doc_id": [2.0], "score": [1.0]}), "E_USAGE"),
    (pd.DataFrame({"query_id": ["q"], "doc_id": ["a\u200b"], "score": [1.0]}), "E_ID_INVISIBLE"),
    (pd.DataFrame({"query_id": ["q", "q\u200d", "q"], "doc_id": ["a", "a", "b"], "score": [1.0, 2.0, 3.0]}),
     "E_ID_INVISIBLE"),  # tested on the query column's runs: the second run holds it
    ({"q\u2066": {"a": 1.0}}, "E_ID_INVISIBLE"),
    ({"q": {"a\ufeff": 1.0}}, "E_ID_INVISIBLE"),
])
def test_the_unsorted_reading_keeps_every_check(run, code):
    with pytest.raises(tb.InvalidInput) as exc:
        tb.score({"q": {"a": 1}}, run, "P@1")
    assert exc.value.code == code


def test_judged_rows_trust_a_key_only_once_the_strings_agree():
    """A run row whose 64-bit pair key equals a judgment's but whose document differs is not judged; two
    judgments sharing a key are told apart by a join on the strings."""
    from trec_bridge.ranking import JudgedPairs

    judged = pl.DataFrame({"qidx": [0, 0, 1], "doc_id": ["a", "b", "c"], "grade": [1, 2, 3]})
    pairs = JudgedPairs(judged, np.array([10, 20, 30], dtype=np.uint64))
    keys = np.array([20, 20, 99, 30, 10], dtype=np.uint64)
    doc = pl.Series(["b", "x", "y", "c", "a"])
    query = np.array([0, 0, 0, 1, 1])
    rows, grade = pairs.rows(keys, doc, query.__getitem__)
    assert rows.tolist() == [0, 3] and grade.tolist() == [2, 3]  # row 1: key of (0, b), document x; row 4: query 1
    shared = JudgedPairs(judged, np.array([10, 10, 30], dtype=np.uint64))  # (0, a) and (0, b) share a key
    rows, grade = shared.rows(np.array([10, 10, 10], dtype=np.uint64), pl.Series(["b", "a", "z"]),
                              np.array([0, 0, 0]).__getitem__)
    assert rows.tolist() == [0, 1] and grade.tolist() == [2, 1]


def test_every_pair_key_alike_changes_no_number(monkeypatch):
    """With every string hashing alike, every run row is a candidate for every judgment: the strings decide."""
    qrels, run = case(random.Random(23), 4)
    want = tb.score(qrels, run, "AP nDCG RR P@3")
    monkeypatch.setattr(pl.Series, "hash", lambda self, seed=0: pl.Series([7] * self.len(), dtype=pl.UInt64))
    got = tb.score(qrels, run, "AP nDCG RR P@3")
    assert got.exact == want.exact and got.means == want.means and got.per_query.equals(want.per_query)


def _copy(text: str) -> str:
    """An equal string that is another object."""
    return "".join(list(text))


@pytest.mark.parametrize("dtype", ["str", "string[pyarrow]"])
def test_arrow_text_columns_score_as_object_ones(dtype, monkeypatch):
    """pandas 3 keeps text in Arrow where pyarrow is installed: those columns are handed to polars whole
    (python_objects._arrow_strings), never one Python object a row, and score as the same rows held as objects
    do, in one Arrow chunk or several (frames concatenated); a missing ID is refused with the same code."""
    pytest.importorskip("pyarrow", reason="pandas stores text in Arrow only with pyarrow")
    from converters import python_objects

    rng = random.Random(dtype)
    qrels, run = case(rng, 5, 30)
    rows = [(str(q), str(d), s) for q, docs in run.items() for d, s in docs.items()]
    rng.shuffle(rows)
    qrels = {str(q): {str(d): g for d, g in j.items()} for q, j in qrels.items()}
    half = len(rows) // 2
    arrow = pd.concat([_object_frame(part).astype({"query_id": dtype, "doc_id": dtype})
                       for part in (rows[:half], rows[half:])], ignore_index=True)
    assert arrow["doc_id"].dtype.storage == "pyarrow"
    assert arrow["doc_id"].array._pa_array.num_chunks == 2  # pandas' own chunks (private: the test's premise only)
    taken = []
    real = python_objects._arrow_strings
    monkeypatch.setattr(python_objects, "_arrow_strings", lambda c: taken.append(real(c)) or taken[-1])
    for policy in ("strict", "trec_eval", "ir_measures"):
        ev = tb.Evaluator(qrels, measures_of(policy), policy)
        assert_same(outcome(lambda: ev.score(arrow)), outcome(lambda: ev.score(_object_frame(rows))), policy)
        assert_same(*both(ev, arrow), policy)
    assert any(isinstance(t, pl.Series) for t in taken)
    missing = arrow.astype({"doc_id": object})
    missing.loc[3, "doc_id"] = None
    assert outcome(lambda: tb.score(qrels, missing.astype({"doc_id": dtype}), "P@5")) == \
        outcome(lambda: tb.score(qrels, missing, "P@5")) == "E_USAGE"


def _object_frame(rows: list) -> pd.DataFrame:
    """A frame whose ID columns hold the rows' Python objects: what pandas < 3 builds from Python data (pandas 3
    with pyarrow stores text in an Arrow column instead, read whole)."""
    return pd.DataFrame({"query_id": pd.Series([r[0] for r in rows], dtype=object),
                         "doc_id": pd.Series([r[1] for r in rows], dtype=object), "score": [r[2] for r in rows]})


@pytest.mark.parametrize("shape", ["one object per query", "two objects per query", "a query in two places",
                                   "integer and text objects"])
def test_a_frame_of_shared_query_objects_scores_as_any_other(shape, monkeypatch):
    """pandas frames built from Python data repeat one object per query; their runs are found by address
    (python_objects._query_object_runs) and must give what the whole column gives: equal objects side by side
    merged, a query whose rows are apart grouped as usual, integer IDs read as text."""
    from converters.python_objects import _query_object_runs

    rng = random.Random(shape)
    qrels = {f"q{i}": {f"d{j}": rng.randint(0, 2) for j in range(0, 40, 3)} for i in range(6)}
    names = {f"q{i}": f"q{i}" for i in range(6)}
    copies = {q: _copy(q) for q in names}
    rows = []
    for i in range(6):
        for j in range(40):
            q = names[f"q{i}"] if shape != "two objects per query" or j < 20 else copies[f"q{i}"]
            rows.append((q, f"d{j}", rng.choice([0.5, 1.0, rng.random()])))
    if shape == "a query in two places":
        rows += [(names["q0"], "d99", 0.75)]
    if shape == "integer and text objects":
        qrels[7] = {"d1": 1}
        rows += [(7, f"d{j}", rng.random()) for j in range(40)]
    frame = _object_frame(rows)
    runs = _query_object_runs(frame)
    assert runs is not None and len(runs[0]) == 6 + (shape == "two objects per query") * 6 + \
        (shape != "one object per query" and shape != "two objects per query")
    apart = frame.assign(query_id=pd.Series([_copy(q) if isinstance(q, str) else q for q in frame["query_id"]],
                                            dtype=object))
    assert _query_object_runs(apart) is None  # every row its own object: the whole column is read
    for policy in ("strict", "trec_eval"):
        ev = tb.Evaluator(qrels, "AP nDCG@10 RR P@5", policy)
        assert_same(*both(ev, frame), f"{shape} {policy}")
        assert_same(outcome(lambda: ev.score(frame)), outcome(lambda: ev.score(apart)), f"{shape} {policy}")
    if shape in ("one object per query", "two objects per query"):  # read from the runs, never the whole column
        import converters.interop

        monkeypatch.setattr(converters.interop, "grouped_from_columns", lambda *a, **k: pytest.fail("column read"))
        assert grouped_run_from_object(frame)[0].queries.len() == 6
    dup = pd.concat([frame.iloc[:4], frame.iloc[[3]], frame.iloc[4:]], ignore_index=True)  # still one run
    assert _query_object_runs(dup) is not None
    assert outcome(lambda: tb.score(qrels, dup, "P@5")) == "E_RUN_DUPLICATE_DOC"

"""The Python API (trec_bridge.api): every input kind, the ID rules, the CLI's numbers and report.

Worked case (RUN, QRELS below): q1 is ranked d2 (grade 0), then d1 and d3
tied at 0.8, which trec_eval orders by document ID descending: d3 (grade 1),
d1 (grade 2).  q2 ranks d4 (grade 1) first; q3 is judged but missing.
Strict (every query of the qrels, missing scored 0): RR = (1/2 + 1 + 0)/3
= 1/2, P@1 = (0 + 1 + 0)/3 = 1/3.  trec_eval (only the run's queries):
RR = 3/4, P@1 = 1/2.  With rel=2 only d1 is relevant in q1, at rank 3.
"""
from __future__ import annotations

import gzip
import json
import subprocess
import sys
from fractions import Fraction

import ir_measures
import pandas as pd
import polars as pl
import pytest

import trec_bridge as tb

from .conftest import REPO

QRELS = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d4": 1}, "q3": {"d5": 1}}
RUN = {"q1": {"d2": 0.9, "d1": 0.8, "d3": 0.8}, "q2": {"d4": 0.5}}
STRICT = {"RR": Fraction(1, 2), "P@1": Fraction(1, 3)}
MEANS = "means"


def flat(nested, value):
    return [(q, d, v) for q, docs in nested.items() for d, v in docs.items()]


def trec_files(tmp_path):
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in flat(QRELS, "g")))
    ranked = [(q, d, s) for q, docs in RUN.items() for d, s in sorted(docs.items(), key=lambda x: (-x[1], x[0]))]
    run.write_text("".join(f"{q} Q0 {d} {i} {s} sys\n" for i, (q, d, s) in enumerate(ranked, 1)))
    return qrels, run


class FakeRanx:
    """Stands in for ranx's Qrels / Run (ranx is not installed here): recognised by the type's module."""

    def __init__(self, d):
        self.d = d

    def to_dict(self):
        return self.d


FakeRanx.__module__ = "ranx.data_structures.fake"


class FakeIrds:
    """Stands in for an ir_datasets dataset: its qrels come from ``qrels_iter()``."""

    def qrels_iter(self):
        return iter([ir_measures.Qrel(q, d, g, "0") for q, d, g in flat(QRELS, 0)])


def inputs(tmp_path):
    """(name, qrels, run) in every supported kind."""
    qrels_path, run_path = trec_files(tmp_path)
    gz_q, gz_r = tmp_path / "q.gz", tmp_path / "r.gz"
    gz_q.write_bytes(gzip.compress(qrels_path.read_bytes()))
    gz_r.write_bytes(gzip.compress(run_path.read_bytes()))
    ranx_q, ranx_r = tmp_path / "q.json", tmp_path / "r.json"
    ranx_q.write_text(json.dumps(QRELS))
    ranx_r.write_text(json.dumps(RUN))
    own_run = tmp_path / "own.json"
    tb.write_run(RUN, own_run, format="json", dataset_id="toy", run_id="sys")
    qdf = pd.DataFrame(flat(QRELS, 0), columns=["query_id", "doc_id", "relevance"])
    rdf = pd.DataFrame(flat(RUN, 0), columns=["query_id", "doc_id", "score"])
    return [
        ("dicts", QRELS, RUN),
        ("paths", str(qrels_path), str(run_path)),
        ("pathlib", qrels_path, run_path),
        ("gzip", gz_q, gz_r),
        ("ranx json", ranx_q, ranx_r),
        ("own json run", qrels_path, own_run),
        ("pandas", qdf, rdf),
        ("polars", pl.DataFrame(qdf.to_dict("list")), pl.DataFrame(rdf.to_dict("list"))),
        ("ir_measures", [ir_measures.Qrel(q, d, g) for q, d, g in flat(QRELS, 0)],
         [ir_measures.ScoredDoc(q, d, s) for q, d, s in flat(RUN, 0)]),
        ("ranx objects", FakeRanx(QRELS), FakeRanx(RUN)),
        ("own objects", tb.read_dataset(QRELS), tb.read_run(RUN)),
        ("own qrels", tb.read_qrels(QRELS), tb.read_run(RUN)),
        ("ir_datasets-like", FakeIrds(), RUN),
    ]


def test_every_input_kind_gives_the_worked_numbers(tmp_path):
    for name, qrels, run in inputs(tmp_path):
        res = tb.score(qrels, run, "RR P@1")
        assert res.exact == STRICT, name
        assert res.means == {k: float(v) for k, v in STRICT.items()}, name
        assert res.outcome == "incomplete" and res.missing == ["q3"], name


def test_integer_ids_read_as_decimal_text():
    qrels = pd.DataFrame({"query_id": [1, 1, 2], "doc_id": [10, 11, 20], "relevance": [1, 0, 1]})
    run = {"1": {"11": 0.9, "10": 0.1}, 2: {20: 1.0}}
    res = tb.score(qrels, run, "RR")
    assert res.exact == {"RR": Fraction(3, 4)}
    assert sorted(res.per_query["query_id"]) == ["1", "2"]


@pytest.mark.parametrize("qrels, run, text", [
    ({7: {"a": 1}}, {"007": {"a": 1.0}}, "'007'"),                 # int on the qrels, other spelling in the run
    ({"007": {"a": 1}}, {7: {"a": 1.0}}, "'007'"),                 # and the other way round
    ({"q": {5: 1}}, {"q": {"05": 1.0}}, "'05'"),                    # document IDs too
    ({7: {"a": 1}, "7": {"b": 1}}, {"7": {"a": 1.0}}, "two distinct keys"),  # 7 and "7" as two keys
    (pd.DataFrame({"query_id": [7, "7"], "doc_id": ["a", "b"], "relevance": [1, 1]}), {"7": {"a": 1.0}},
     "two distinct keys"),
])
def test_id_collisions_refused(qrels, run, text):
    with pytest.raises(tb.InvalidInput) as exc:
        tb.score(qrels, run, "P@1")
    assert exc.value.code == "E_ID_COLLISION" and text in str(exc.value)


def test_dict_run_ties_by_document_id_descending():
    per_query = tb.score(QRELS, RUN, "RR", rel=2).per_query.set_index("query_id")["value"]
    assert per_query["q1"] == pytest.approx(1 / 3)  # d3 before d1: ascending would give 1/2


def test_measure_objects_of_ir_measures():
    qrels = {"q": {"a": 2, "b": 1}}
    run = {"q": {"b": 2.0, "a": 1.0, "c": 0.5}}
    res = tb.score(qrels, run, [ir_measures.nDCG@10, ir_measures.RR(rel=2)@10, ir_measures.P@5])
    assert list(res.means) == ["nDCG@10", "RR(rel=2)@10", "P@5"]
    assert res.exact["RR(rel=2)@10"] == Fraction(1, 2) and res.exact["P@5"] == Fraction(2, 5)
    assert res.means == tb.score(qrels, run, "nDCG@10 RR(rel=2)@10 P@5").means


def cli(*args):
    """The command line's ``main`` in this process (the same code path as ``trec-bridge``, without a start-up)."""
    import contextlib
    import io
    import types

    from trec_bridge.cli.main import main

    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = main([str(a) for a in args])
    return types.SimpleNamespace(returncode=code, stderr=err.getvalue(), stdout=out.getvalue())


EXAMPLES = REPO / "trec_bridge" / "examples"


@pytest.mark.parametrize("policy", ["strict", "trec_eval"])
@pytest.mark.parametrize("files", ["trec", "json"])
def test_to_json_is_the_cli_report(tmp_path, policy, files):
    qrels, run = trec_files(tmp_path) if files == "trec" else (EXAMPLES / "dataset.json", EXAMPLES / "run.json")
    proc = cli("score", qrels, run, "RR P@1 nDCG@10", "--policy", policy, "--json", tmp_path / "cli.json")
    assert proc.returncode in (0, 2), proc.stderr
    res = tb.score(str(qrels), str(run), "RR P@1 nDCG@10", policy=policy)
    res.to_json(tmp_path / "api.json")
    assert (tmp_path / "api.json").read_bytes() == (tmp_path / "cli.json").read_bytes()


def test_trec_eval_policy_is_the_clis_number(tmp_path):
    qrels, run = trec_files(tmp_path)
    res = tb.score(QRELS, RUN, "RR P@1", policy="trec_eval")
    assert res.exact == {"RR": Fraction(3, 4), "P@1": Fraction(1, 2)}
    proc = cli("score", qrels, run, "RR P@1", "--policy", "trec_eval", "--json", tmp_path / "cli.json")
    assert proc.returncode == 0, proc.stderr
    cli_report = json.loads((tmp_path / "cli.json").read_text())
    res.to_json(tmp_path / "api.json")
    api_report = json.loads((tmp_path / "api.json").read_text())
    assert cli_report[MEANS]["RR"]["exact"] == "3/4" and cli_report[MEANS]["P@1"]["exact"] == "1/2"
    assert api_report[MEANS] == cli_report[MEANS] and api_report["fingerprints"]["protocol"] == \
        cli_report["fingerprints"]["protocol"]


def test_evaluator_equals_score(tmp_path):
    ev = tb.Evaluator(QRELS, "RR P@1 nDCG@10")
    runs = [RUN, {"q1": {"d1": 1.0}}, {"q2": {"d9": 1.0}, "q3": {"d5": 3.0}}]
    for run in runs:
        a, b = ev.score(run), tb.score(QRELS, run, "RR P@1 nDCG@10")
        assert a.means == b.means and a.exact == b.exact
        assert a.per_query.equals(b.per_query)


@pytest.mark.parametrize("qrels, run, measures, code", [
    ({"q": {"a": 1.5}}, {"q": {"a": 1.0}}, "P@1", "E_QRELS_GRADE"),
    ({"q": {"a": 1}}, {"q": {"a": float("nan")}}, "P@1", "E_RUN_SCORE"),
    ({"q": {"a": 1}}, {"q": {"a": 1.0}}, "P@x", "E_CUTOFF"),
    ({"q": {"a": 1}}, {"q": ["a"]}, "P@1", "E_USAGE"),
    ({"q": {"a": 1}}, {"q": {"a": 1.0}}, "Nonsense@1", "E_MEASURE_UNKNOWN"),
    ([("q", "a", 1), ("q", "a", 0)], {"q": {"a": 1.0}}, "P@1", "E_QRELS_DUPLICATE"),
    ({"q": {"a": 1}}, [("q", "a", 1.0), ("q", "a", 0.5)], "P@1", "E_RUN_DUPLICATE_DOC"),
    ("/nonexistent/qrels", {"q": {"a": 1.0}}, "P@1", "E_FILE_NOT_FOUND"),
    ({"q": {"a\u200b": 1}}, {"q": {"a": 1.0}}, "P@1", "E_ID_INVISIBLE"),
    ({"q": {1.5: 1}}, {"q": {"a": 1.0}}, "P@1", "E_USAGE"),
])
def test_bad_input_raises_invalid_input_with_code(qrels, run, measures, code):
    with pytest.raises(tb.InvalidInput) as exc:
        tb.score(qrels, run, measures)
    assert exc.value.code == code


@pytest.mark.parametrize("kwargs, code", [
    ({"policy": "nope"}, "E_POLICY_UNKNOWN"),
    ({"rel": "2"}, "E_DATASET_THRESHOLD"),
    ({"rel": 2**63}, "E_USAGE"),             # bounded as the CLI's --rel
    ({"split": "x"}, "E_QUERY_SET_EMPTY"),
])
def test_bad_arguments_raise_invalid_input(kwargs, code):
    with pytest.raises(tb.InvalidInput) as exc:
        tb.score({"q": {"a": 1}}, {"q": {"a": 1.0}}, "P@1", **kwargs)
    assert exc.value.code == code


def test_result_shows_as_a_table():
    res = tb.score(QRELS, RUN, "RR P@1")
    text = repr(res)
    assert "outcome=incomplete" in text and "RR" in text and "0.5000" in text and "0.3333" in text
    assert "<table>" in res._repr_html_() and "<td>P@1</td><td>0.3333</td>" in res._repr_html_()
    pq = res.per_query
    assert list(pq.columns) == ["query_id", "measure", "value", "status"]
    assert pq[(pq.query_id == "q3") & (pq.measure == "RR")].status.item() == "missing"
    assert res.no_relevant == [] and res.unjudged == []
    other = tb.score({"q": {"a": 1}, "n": {"b": 0}}, {"q": {"a": 1.0}, "zz": {"a": 1.0}}, "P@1")
    assert other.unjudged == ["zz"] and other.no_relevant == ["n"]


def test_write_run_round_trip(tmp_path):
    for fmt in ("trec", "json"):
        path = tmp_path / f"run.{fmt}"
        tb.write_run(RUN, path, format=fmt, dataset_id="toy", run_id="sys")
        assert tb.score(QRELS, path, "RR P@1").exact == STRICT
    with pytest.raises(tb.InvalidInput) as exc:
        tb.write_run(RUN, tmp_path / "x", format="csv")
    assert exc.value.code == "E_USAGE"
    with pytest.raises(tb.InvalidInput, match="dataset_id"):
        tb.write_run(RUN, tmp_path / "y.json", format="json")


def test_import_is_light():
    code = ("import sys, trec_bridge; heavy = [m for m in ('polars', 'pandas', 'numpy', 'matplotlib', 'scipy', "
            "'ir_datasets', 'trec_bridge.api') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_public_names_are_documented_with_an_example():
    for name in tb.__all__:
        obj = getattr(tb, name)
        if name != "InvalidInput":
            assert obj.__doc__ and ">>>" in obj.__doc__, name
    assert tb.InvalidInput is __import__("trec_bridge.errors").errors.InvalidInput


def test_assert_scores_equal_names_the_policy_that_reproduces_them():
    from trec_bridge.testing import assert_scores_equal

    assert_scores_equal({"q1": 0.5, "q2": 1.0, "q3": 0.0}, QRELS, RUN, "RR")        # strict: q3 missing scores 0
    assert_scores_equal(0.75, QRELS, RUN, "RR", policy="trec_eval")
    with pytest.raises(AssertionError) as exc:
        assert_scores_equal(0.75, QRELS, RUN, "RR")                                    # their mean leaves q3 out
    text = str(exc.value)
    assert "mean: 0.75 vs 0.5" in text and "they match policy trec_eval" in text
    with pytest.raises(AssertionError) as exc:
        assert_scores_equal({"q1": 0.25, "q2": 1.0, "q3": 0.0}, QRELS, RUN, "RR")
    assert "q1: 0.25 vs 0.5" in str(exc.value) and "no policy" in str(exc.value)


def test_assert_scores_equal_names_the_axes_that_explain_the_differences():
    from trec_bridge.testing import assert_scores_equal

    qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 1}, "q3": {"x": 0}}   # q3: no relevant document
    run = {"q1": {"d2": 0.9, "d1": 0.5}, "q3": {"x": 1.0}}                # q2: missing
    with pytest.raises(AssertionError) as exc:
        assert_scores_equal({"q1": 0.5, "q3": 0.0}, qrels, run, "RR")      # pytrec_eval's per-query values
    lines = str(exc.value).splitlines()
    te = next(line for line in lines if line.startswith("they match policy trec_eval:"))
    assert "axis query_set (" in te and "axis no_relevant (" in te and "axis gain" not in te
    with pytest.raises(AssertionError) as exc:
        assert_scores_equal(1 / 6, qrels, run, "RR")                       # every judged query, q3 scored 0
    ir = next(line for line in str(exc.value).splitlines() if line.startswith("they match policy ir_measures:"))
    assert "axis no_relevant (scored 0 and counted in the mean)" in ir and "query_set" not in ir  # qrels set = judged


def test_docstring_examples_run():
    import doctest

    import trec_bridge.api
    import trec_bridge.testing

    for module in (trec_bridge.api, trec_bridge.testing):
        failed, attempted = doctest.testmod(module)
        assert attempted >= 2 and failed == 0, module.__name__


def test_real_ranx_objects():
    """With ranx installed (the test extra; CI), its own Qrels and Run objects; the fake above covers the rest."""
    ranx = pytest.importorskip("ranx")
    res = tb.score(ranx.Qrels(QRELS), ranx.Run(RUN), "RR P@1")
    assert res.exact == STRICT


@pytest.mark.parametrize("policy", ["strict", "trec_eval", "ir_measures"])
def test_an_evaluator_scores_each_run_as_a_fresh_score_would(policy):
    """The judgments are joined once per Evaluator (scorer.Judgments) and copied per run: nothing of one run
    may leak into the next."""
    qrels = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"d": 1}, "q3": {"e": 1, "f": 3}}
    runs = [{"q1": {"a": 0.1, "c": 0.9, "z": 0.5}, "q3": {"f": 1.0}},
            {"q2": {"d": 2.0, "x": 3.0}, "q1": {"b": 1.0}},
            {"q1": {"a": 1.0, "b": 1.0, "c": 1.0}, "q2": {"d": 1.0}, "q3": {"e": 0.5, "f": 0.5}}]
    measures = "nDCG@2 AP RR P@2 R@3"
    ev = tb.Evaluator(qrels, measures, policy)
    for run in runs + runs[::-1]:
        got, want = ev.score(run), tb.score(qrels, run, measures, policy)
        assert got.means == want.means and got.exact == want.exact
        assert got.per_query.equals(want.per_query)

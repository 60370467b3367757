"""``explain`` names exactly the policy behind the real outputs of trec_eval (-q, -q -c, means only),
pytrec_eval and ir_measures on inputs where every axis shows (test_explain.py's QRELS and RUN), and
explains six measures of a DL19 run within the issue's budget."""
import json
import re
import subprocess
import sys
import time

import pytest

import trec_bridge as tb
from .test_explain import files  # noqa: F401  (the fixture)
from .test_explain import QRELS, RUN, _tools_at_zero

TREC_EVAL_MEASURES = ["-m", "map", "-m", "recip_rank", "-m", "P.2", "-m", "ndcg_cut.3", "-m", "recall.2"]


def _trec_eval(binary, files, *options):
    out = subprocess.run([binary, *options, *TREC_EVAL_MEASURES, str(files / "qrels"), str(files / "run")],
                         capture_output=True, text=True, check=True).stdout
    (files / "theirs").write_text(out)
    return tb.explain(files / "qrels", files / "run", files / "theirs")


def test_trec_eval_per_query_is_trec_eval(trec_eval_binary, files):
    ex = _trec_eval(trec_eval_binary, files, "-q")
    assert ex.explained
    for measure in ("AP", "RR", "P@2", "nDCG@3", "R@2"):
        tools = _tools_at_zero(ex, measure)
        assert "trec_eval" in tools and "ir_measures" not in tools and "strict" not in tools, (measure, tools)
    decided = ex.decided("RR")
    assert decided["tie_break"] == ["doc_desc"] and decided["precision"] == ["float32"]
    assert decided["query_set"] == ["run_and_judged"] and decided["no_relevant"] == ["zero"]


def test_trec_eval_c_is_trec_eval_c(trec_eval_binary, files):
    ex = _trec_eval(trec_eval_binary, files, "-q", "-c")
    assert ex.explained
    for measure in ("AP", "RR", "P@2", "nDCG@3", "R@2"):
        tools = _tools_at_zero(ex, measure)
        assert "trec_eval_c" in tools and "trec_eval" not in tools, (measure, tools)
    assert ex.decided("AP")["query_set"] == ["judged"]


def test_trec_eval_means_only(trec_eval_binary, files):
    ex = _trec_eval(trec_eval_binary, files)
    assert ex.explained
    assert ex.explanation.measures[0].per_query is False
    for measure in ("AP", "RR", "P@2", "nDCG@3", "R@2"):
        assert "trec_eval" in _tools_at_zero(ex, measure), measure


def test_pytrec_eval_dict_is_pytrec_eval(files):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = {}, {}
    for line in QRELS.splitlines():
        q, _, d, g = line.split()
        qrels.setdefault(q, {})[d] = int(g)
    for line in RUN.splitlines():
        q, _, d, _, score, _ = line.split()
        run.setdefault(q, {})[d] = float(score)
    values = pytrec_eval.RelevanceEvaluator(qrels, {"map", "recip_rank", "P.2", "ndcg_cut.3"}).evaluate(run)
    (files / "theirs.json").write_text(json.dumps(values))  # pytrec_eval's shape: {query: {measure: value}}
    ex = tb.explain(files / "qrels", files / "run", files / "theirs.json")
    assert ex.explained
    for measure in ("AP", "RR", "P@2", "nDCG@3"):
        assert "pytrec_eval" in _tools_at_zero(ex, measure), measure
    assert ex.decided("RR")["precision"] == ["float32"]


def test_ir_measures_cli_is_ir_measures(files):
    pytest.importorskip("ir_measures")
    out = subprocess.run([sys.executable, "-m", "ir_measures", str(files / "qrels"), str(files / "run"),
                          "AP", "RR", "RR@2", "P@2", "nDCG@3", "R@2", "-q"], capture_output=True, text=True,
                         check=True).stdout
    (files / "theirs.tsv").write_text(out)
    ex = tb.explain(files / "qrels", files / "run", files / "theirs.tsv")
    assert ex.explained
    for measure in ("AP", "RR", "RR@2", "P@2", "nDCG@3", "R@2"):
        tools = _tools_at_zero(ex, measure)
        assert "ir_measures" in tools and "trec_eval" not in tools, (measure, tools)
    decided = ex.decided("RR@2")  # the msmarco provider: ties by document ID ascending (q1)
    assert decided["tie_break"] == ["doc_asc"]  # (q2's float32 tie breaks the same way ascending: undecided)
    assert "precision" in ex.explanation.measures[2].undecided
    assert decided["rr_cutoff"] == ["honoured"] and decided["query_set"] == ["judged"]


def test_six_measures_on_dl19_within_budget(shared_data, trec_eval_binary, tmp_path):
    import gzip

    qrels = shared_data / "qrels/anserini-tools/qrels.dl19-passage.txt"
    run = tmp_path / "run"
    run.write_bytes(gzip.decompress((shared_data / "runs/trec-dl-2019-passage-official/input.bm25base_p.gz").read_bytes()))
    out = subprocess.run([trec_eval_binary, "-q", "-m", "map", "-m", "P.10", "-m", "ndcg_cut.10", "-m", "recip_rank",
                          "-m", "recall.100", "-m", "ndcg", str(qrels), str(run)], capture_output=True, text=True,
                         check=True).stdout
    started = time.process_time()  # CPU time: the budget is the work, not the other processes on a shared machine
    ex = tb.explain(qrels, run, out)
    spent = time.process_time() - started
    assert ex.explained and len(ex.explanation.measures) == 6
    assert all("trec_eval" in _tools_at_zero(ex, m.measure) for m in ex.explanation.measures)
    assert spent <= 10.0, f"{spent:.1f} s of CPU"


def test_ranx_outputs_are_explained(files):
    """ranx (its own evaluate, per-query scores): every judged query (missing ones made comparable as 0),
    no-relevant queries as 0, scores as doubles with ties by document ID descending."""
    ranx = pytest.importorskip("ranx")
    qrels, run = ranx.Qrels.from_file(str(files / "qrels"), kind="trec"), ranx.Run.from_file(str(files / "run"), kind="trec")
    names = ["ndcg@3", "map", "mrr@2", "precision@2", "recall@2", "ndcg_burges@3", "hit_rate@2"]
    ranx.evaluate(qrels, run, names, make_comparable=True)
    (files / "ranx.json").write_text(json.dumps({m: {q: float(v) for q, v in run.scores[m].items()} for m in names}))
    ex = tb.explain(files / "qrels", files / "run", files / "ranx.json")
    assert ex.explained and len(ex.explanation.measures) == len(names)
    decided = ex.decided("ndcg@3")
    assert (decided["query_set"], decided["no_relevant"], decided["tie_break"], decided["precision"]) == \
        (["judged"], ["zero"], ["doc_desc"], ["float64"])
    assert ex.decided("RR@2")["rr_cutoff"] == ["honoured"]


def test_pruning_on_a_subset_changes_no_answer(shared_data, trec_eval_binary, tmp_path, monkeypatch):
    """Trying every combination on 8 queries first, then only the survivors on all, gives the same matches,
    decided axes and closest combination as the whole search (DL19, one value of theirs altered)."""
    import gzip

    import trec_bridge.explain_search as search

    qrels = shared_data / "qrels/anserini-tools/qrels.dl19-passage.txt"
    run = tmp_path / "run"
    run.write_bytes(gzip.decompress((shared_data / "runs/trec-dl-2019-passage-official/input.idst_bert_p1.gz").read_bytes()))
    out = subprocess.run([trec_eval_binary, "-q", "-m", "recip_rank", "-m", "ndcg_cut.10", "-m", "map", str(qrels),
                          str(run)], capture_output=True, text=True, check=True).stdout
    altered = re.sub(r"(?m)^(recip_rank\s+1037798\s+)\S+$", r"\g<1>0.0123", out)
    assert altered != out

    def answer(figures):
        ex = tb.explain(qrels, run, figures).explanation
        return [(sorted(tuple(sorted(c.values.items())) for c in m.matches), m.decided, m.undecided,
                 m.closest and (m.closest.values, m.closest.mismatched)) for m in ex.measures]

    monkeypatch.setattr(search, "PRUNE_ABOVE", 10)
    pruned = [answer(out), answer(altered)]
    monkeypatch.setattr(search, "PRUNE_ABOVE", 10 ** 9)
    assert pruned == [answer(out), answer(altered)]
    rr = next(m for m in tb.explain(qrels, run, altered).explanation.measures if m.measure == "RR")
    assert not rr.explained and [q for q, _, _ in rr.closest.mismatched] == ["1037798"]

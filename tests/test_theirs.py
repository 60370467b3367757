"""Reading their figures for explain (converters/theirs.py): every shape, every vocabulary, the printed decimals."""
import json

import pytest

from converters.theirs import read_theirs
from trec_bridge.errors import InvalidInput


def _per_query(theirs, name):
    return {q: f.value for q, f in theirs.figures[name].per_query.items()}


def test_trec_eval_per_query_and_mean_in_its_own_names(tmp_path):
    (tmp_path / "out").write_text("runid                 \tall\tmy_run\nmap                   \tq1\t0.5000\n"
                                  "map                   \tall\t0.5000\nP_10                  \tq1\t0.2000\n"
                                  "ndcg_cut_10           \tq1\t0.6131\nrecip_rank            \tall\t1.0000\n"
                                  "num_q                 \tall\t1\nsuccess_5             \tq1\t1.0000\n")
    theirs = read_theirs(tmp_path / "out")
    assert theirs.form == "trec_eval"
    assert set(theirs.figures) == {"AP", "P@10", "nDCG@10", "RR", "Success@5", "NumQ"}  # num_q: a count we compute
    assert theirs.skipped == ["runid"]
    assert theirs.figures["AP"].mean.value == 0.5 and _per_query(theirs, "AP") == {"q1": 0.5}
    assert theirs.figures["RR"].per_query is None  # the mean only
    assert theirs.figures["nDCG@10"].per_query["q1"].tolerance == pytest.approx(0.00005, abs=1e-11)


def test_ir_measures_rows_summary_and_jsonl():
    rows = read_theirs("q1\tnDCG(gain=exp)@10\t0.5000\nq1\tRR@10\t1.0000\nall\tRR@10\t1.0000\n")
    assert rows.form == "ir_measures" and set(rows.figures) == {"nDCG(gain=exp)@10", "RR@10"}
    assert rows.figures["RR@10"].mean.value == 1.0
    summary = read_theirs("nDCG@10\t0.6123\nRR@10\t0.41\n")
    assert summary.figures["nDCG@10"].mean.value == 0.6123 and summary.figures["nDCG@10"].per_query is None
    lines = read_theirs('{"query_id": "q1", "measure": "AP", "value": 0.25}\n{"measure": "AP", "value": 0.25}\n')
    assert lines.form == "jsonl" and _per_query(lines, "AP") == {"q1": 0.25}


def test_json_in_both_orientations_and_means():
    by_measure = read_theirs({"ndcg_cut_10": {"q1": 0.61, "q2": 0.4}})
    by_query = read_theirs(json.dumps({"q1": {"P_10": 0.5, "map": 0.25}}))  # pytrec_eval's shape
    means = read_theirs({"ndcg@10": 0.61, "precision@5": 0.2, "hit_rate@3": 1.0})  # ranx's names
    assert _per_query(by_measure, "nDCG@10") == {"q1": 0.61, "q2": 0.4}
    assert _per_query(by_query, "AP") == {"q1": 0.25} and _per_query(by_query, "P@10") == {"q1": 0.5}
    assert set(means.figures) == {"nDCG@10", "P@5", "Success@3"}


def test_summary_figures_keep_their_digits():
    theirs = read_theirs("nDCG@10=0.612 MRR@10=0.41, R(rel=2)@100=0.5")
    assert theirs.form == "summary"
    assert {k: (f.mean.value, f.mean.decimals) for k, f in theirs.figures.items()} == \
        {"nDCG@10": (0.612, 3), "RR@10": (0.41, 2), "R(rel=2)@100": (0.5, 1)}


@pytest.mark.parametrize("text, code", [
    ("P_10 q1 0.5 extra\nP_10 q2 0.5 x\n", "E_THEIRS_FORMAT"), ("runid\tall\tx\n", "E_THEIRS_FORMAT"),
    ("P_10\tq1\tn/a\n", "E_THEIRS_VALUE"), ("nDCG@10=1e999", "E_THEIRS_VALUE"), ("{}", "E_THEIRS_FORMAT"),
    ('{"P_10": {"q1": 0.5}, "map": 0.2}', "E_THEIRS_FORMAT"), ("P_10\tq1\t0.5\nP_10\tq1\t0.6\n", "E_THEIRS_FORMAT"),
    ("no-such-file.txt", "E_FILE_NOT_FOUND"),
])
def test_bad_figures_are_refused_with_a_code(text, code):
    with pytest.raises(InvalidInput) as exc:
        read_theirs(text)
    assert exc.value.code == code

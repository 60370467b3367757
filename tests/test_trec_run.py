"""TREC run reader/writer: what is accepted, what is rejected (code + line), ordering, writing."""
from __future__ import annotations

import gzip
import math

import numpy as np
import polars as pl
import pytest

from converters.trec_run import read_trec_run, write_trec_run
from trec_bridge.cli.main import main
from trec_bridge.errors import InvalidInput, UsageError
from trec_bridge.model import RUN_SCHEMA, Run

GOOD = "q1 Q0 a 1 3.0 tag\nq1 Q0 b 2 2.0 tag\nq2 Q0 c 1 1.0 tag\n"


def put(tmp_path, content, name="run.txt") -> str:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return str(path)


def rows(run: Run) -> list[tuple]:
    return run.frame.select("query_id", "doc_id", "rank").rows()


# ------------------------------------------------------------------ accepted variants

@pytest.mark.parametrize("variant", [
    GOOD,
    GOOD.replace(" ", "\t"),
    GOOD.replace(" ", "   "),
    GOOD.replace(" ", " \t "),
    GOOD.replace("\n", "\r\n"),
    GOOD.replace("\n", " \n  "),
    "\n\n" + GOOD.replace("\n", "\n\n") + "  \n",
    GOOD.replace("Q0", "0").replace("q2 0", "q2 E7"),
    GOOD.rstrip("\n"),
    GOOD.replace(" ", "\x0b", 1),
])
def test_whitespace_variants_read_the_same(tmp_path, variant):
    run = read_trec_run(put(tmp_path, variant))
    assert rows(run) == [("q1", "a", 1), ("q1", "b", 2), ("q2", "c", 1)]
    assert run.queries == ("q1", "q2")
    assert run.run_id == "tag"
    assert run.frame.schema == pl.Schema(RUN_SCHEMA)


@pytest.mark.parametrize("text,value", [
    ("-1.5", -1.5), ("3", 3.0), ("1e-5", 1e-5), (".5", 0.5), ("+2.0", 2.0), ("3.", 3.0), ("1E5", 1e5),
    ("-.25e+2", -25.0), ("0.9041545316576958", 0.9041545316576958), ("00012", 12.0),
])
def test_score_forms_accepted(tmp_path, text, value):
    run = read_trec_run(put(tmp_path, f"q1 Q0 a 1 {text} t\n"))
    assert run.frame.get_column("score").to_list() == [value]


@pytest.mark.parametrize("rank", ["0", "1", "007", "+3", "999999"])
def test_rank_forms_accepted(tmp_path, rank):
    assert read_trec_run(put(tmp_path, f"q1 Q0 a {rank} 1 t\n")).frame.height == 1


def test_gzip_input(tmp_path):
    path = tmp_path / "run.gz"
    path.write_bytes(gzip.compress(GOOD.encode()))
    assert rows(read_trec_run(path)) == [("q1", "a", 1), ("q1", "b", 2), ("q2", "c", 1)]


def test_scores_parse_like_python_float(tmp_path):
    rng = np.random.default_rng(7)
    values = np.concatenate([rng.standard_normal(500) * 10.0 ** rng.integers(-30, 30, 500), [5e-324, 1.7976931348623157e308]])
    texts = [repr(float(v)) for v in values] + [f"{v:.17g}" for v in values] + [f"{v:.6f}" for v in values[:100]]
    lines = "".join(f"q Q0 d{i} 1 {t} x\n" for i, t in enumerate(texts))
    frame = read_trec_run(put(tmp_path, lines), order="rank").frame
    assert frame.get_column("score").to_list() == [float(t) for t in texts]


# ------------------------------------------------------------------ rejections

REJECTIONS = [
    # (id, content, code, line)
    ("5 columns", "q1 Q0 a 1 1.0 t\nq1 Q0 b 2 1.0\n", "E_TREC_COLUMNS", 2),
    ("7 columns", "q1 Q0 a 1 1.0 t\n\nq1 Q0 b 2 1.0 t extra\n", "E_TREC_COLUMNS", 3),
    ("7 columns tab", "q1\tQ0\ta\t1\t1.0\tt\nq1\tQ0\tb\t2\t1.0\tt\tx\n", "E_TREC_COLUMNS", 2),
    ("comment line", "# a comment\nq1 Q0 a 1 1.0 t\n", "E_TREC_COLUMNS", 1),
    ("doc id with space shifts columns", "q1 Q0 a 1 1.0 t\nq1 Q0 doc b 2 1.0 t\n", "E_TREC_COLUMNS", 2),
    ("score abc", "q1 Q0 a 1 1.0 t\nq1 Q0 b 2 abc t\n", "E_RUN_SCORE", 2),
    ("score nan", "q1 Q0 a 1 1.0 t\nq1 Q0 b 2 1.0 t\nq1 Q0 c 3 nan t\n", "E_RUN_SCORE", 3),
    ("score NaN tabs", "q1\tQ0\ta\t1\tNaN\tt\n", "E_RUN_SCORE", 1),
    ("score inf", "q1 Q0 a 1 inf t\n", "E_RUN_SCORE", 1),
    ("score -Infinity", "q1 Q0 a 1 1 t\nq1 Q0 b 2 -Infinity t\n", "E_RUN_SCORE", 2),
    ("score hex float", "q1 Q0 a 1 0x1p3 t\n", "E_RUN_SCORE", 1),
    ("score decimal comma", "q1 Q0 a 1 2 t\nq1 Q0 b 2 1,5 t\n", "E_RUN_SCORE", 2),
    ("score underscore", "q1 Q0 a 1 1_000 t\n", "E_RUN_SCORE", 1),
    ("score overflows", "q1 Q0 a 1 1e999 t\n", "E_RUN_SCORE", 1),
    ("score after blank lines", "\n\nq1  Q0 a 1 x t\n", "E_RUN_SCORE", 3),
    ("duplicate doc", "q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq2 Q0 a 1 1 t\nq1 Q0 a 3 1 t\n", "E_RUN_DUPLICATE_DOC", 4),
    ("duplicate doc, blank lines", "q1 Q0 a 1 3 t\n\n\nq1\tQ0 a 3 1 t\n", "E_RUN_DUPLICATE_DOC", 4),
    ("duplicate doc in a later query", "q1 Q0 a 1 1 t\nq2 Q0 b 1 1 t\nq2 Q0 c 2 0.5 t\nq2 Q0 b 3 0.2 t\n",
     "E_RUN_DUPLICATE_DOC", 4),
    ("bom", "\ufeffq1 Q0 a 1 1.0 t\n", "E_BOM", 1),
    ("bom on a later line", "q1 Q0 a 1 1.0 t\n\ufeffq1 Q0 b 2 0.5 t\n", "E_BOM", 2),
    ("nul byte", "q1 Q0 a 1 1.0 t\nq1 Q0 b\x00 2 0.5 t\n", "E_NUL_BYTE", 2),
    ("invalid utf-8", b"q1 Q0 a 1 1.0 t\nq1 Q0 \xff\xfe 2 0.5 t\n", "E_ENCODING", 2),
    ("latin-1", "q1 Q0 a 1 1.0 t\n\nq1 Q0 caf\xe9 2 0.5 t\n".encode("latin-1"), "E_ENCODING", 3),
    ("utf-16", "q1 Q0 a 1 1.0 t\n".encode("utf-16"), "E_NUL_BYTE", 1),
    ("no-break space", "q1 Q0 a 1 1.0 t\nq1 Q0 b\u00a0c 2 0.5 t\n", "E_TREC_COLUMNS", 2),
    ("file separator char", "q1 Q0 a 1 1.0 t\nq1 Q0 b\x1cc 2 0.5 t\n", "E_TREC_COLUMNS", 2),
    # a control byte that polars keeps inside a field, on a line it still counts as one row
    ("carriage return inside a field", "q1 Q0 a 1 1.0 t\nq1 Q0 b\rc 2 0.5 t\n", "E_TREC_COLUMNS", 2),
    ("vertical tab inside a field", "q1 Q0 a 1 1.0 t\nq1 Q0 b\x0bc 2 0.5 t\n", "E_TREC_COLUMNS", 2),
    ("empty file", "", "E_FILE_EMPTY", None),
    ("only blank lines", "\n  \n\t\n", "E_FILE_EMPTY", None),
]


@pytest.mark.parametrize("content,code,line", [r[1:] for r in REJECTIONS], ids=[r[0] for r in REJECTIONS])
def test_rejections(tmp_path, content, code, line):
    path = put(tmp_path, content)
    with pytest.raises(InvalidInput) as err:
        read_trec_run(path)
    assert err.value.code == code
    assert err.value.where.line == line
    assert err.value.where.file == path
    # the command line refuses it too and leaves nothing behind
    out = tmp_path / "out.run"
    assert main(["convert", "run", path, str(out)]) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.txt"]


RANK_REJECTIONS = [
    ("rank negative", "q1 Q0 a 1 1.0 t\nq1 Q0 b -1 0.5 t\n", 2),
    ("rank decimal", "q1 Q0 a 1.0 1.0 t\n", 1),
    ("rank word", "q1 Q0 a 1 1.0 t\nq1 Q0 b two 0.5 t\n", 2),
    ("rank too large", "q1 Q0 a 99999999999999999999 1.0 t\n", 1),
]


@pytest.mark.parametrize("content,line", [r[1:] for r in RANK_REJECTIONS], ids=[r[0] for r in RANK_REJECTIONS])
def test_rank_column_is_checked_where_it_orders(tmp_path, content, line):
    """--order rank reads the rank column, so a rank that is not a rank is refused there (and only there)."""
    path = put(tmp_path, content)
    with pytest.raises(InvalidInput) as err:
        read_trec_run(path, order="rank")
    assert (err.value.code, err.value.where.line) == ("E_RUN_RANK", line)
    assert main(["convert", "run", path, str(tmp_path / "out.json"), "--dataset-id", "d", "--order", "rank"]) == 1
    # under the default order the rank column is unused, as in trec_eval, pytrec_eval and ir_measures
    run = read_trec_run(path)
    assert run.frame.height == content.count("\n")
    assert main(["convert", "run", path, str(tmp_path / "out.json"), "--dataset-id", "d"]) == 0


def test_rank_column_unused_by_default_yet_compared_where_numeric(tmp_path):
    """Any rank token reads under --order score; a disagreement is still reported where the ranks are numbers."""
    content = ("q1 Q0 a 0 3 t\nq1 Q0 b 1 2 t\nq1 Q0 c 2 1 t\n"  # 0-based, agrees
               "q2 Q0 d -2 1 t\nq2 Q0 e -1 2 t\n"  # negative, disagrees (e scores higher, d ranks higher)
               "q3 Q0 f 1.5 1 t\nq3 Q0 g 0.5 2 t\n"  # decimal, agrees (g first both ways)
               "q4 Q0 h two 1 t\nq4 Q0 i one 2 t\n")  # words: nothing to compare
    run = read_trec_run(put(tmp_path, content))
    assert [(o.query_id, o.rank_disagrees) for o in run.order] == [
        ("q1", False), ("q2", True), ("q3", False), ("q4", False)]
    assert run.frame.select("doc_id").to_series().to_list() == ["a", "b", "c", "e", "d", "g", "f", "i", "h"]


def test_rejection_names_query_and_doc(tmp_path):
    with pytest.raises(InvalidInput) as err:
        read_trec_run(put(tmp_path, "q1 Q0 a 1 3 t\nq1 Q0 b 2 oops t\n"))
    assert (err.value.where.query, err.value.where.doc) == ("q1", "b")
    assert "'oops'" in err.value.message
    with pytest.raises(InvalidInput) as err:
        read_trec_run(put(tmp_path, "q1 Q0 a 1 3 t\nq1 Q0 a 2 2 t\n"))
    assert (err.value.where.query, err.value.where.doc) == ("q1", "a")
    assert "line 1" in err.value.message


def test_first_bad_line_is_reported(tmp_path):
    content = "q1 Q0 a 1 1 t\nq1 Q0 b -2 1 t\nq1 Q0 c 3 nan t\n"
    with pytest.raises(InvalidInput) as err:
        read_trec_run(put(tmp_path, content), order="rank")
    assert (err.value.code, err.value.where.line) == ("E_RUN_RANK", 2)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(InvalidInput) as err:
        read_trec_run(tmp_path / "nope.run")
    assert err.value.code == "E_FILE_NOT_FOUND"
    with pytest.raises(InvalidInput) as err:
        read_trec_run(tmp_path)
    assert err.value.code == "E_FILE_IS_DIRECTORY"


def test_bad_order_argument(tmp_path):
    with pytest.raises(UsageError):
        read_trec_run(put(tmp_path, GOOD), order="file")


# ------------------------------------------------------------------ ordering

def test_score_order_ties_by_doc_id_descending_bytes(tmp_path):
    content = "".join(f"q1 Q0 {d} {i} 1.0 t\n" for i, d in enumerate(["d10", "d9", "b", "a", "é", "z", "Z", "d1"], 1))
    content += "q1 Q0 top 9 2.5 t\nq1 Q0 low 10 -3 t\n"
    run = read_trec_run(put(tmp_path, content))
    docs = run.frame.get_column("doc_id").to_list()
    assert docs == ["top", "é", "z", "d9", "d10", "d1", "b", "a", "Z", "low"]
    assert run.frame.get_column("rank").to_list() == list(range(1, 11))
    assert run.order[0].ties_broken == 8
    assert run.order[0].rank_disagrees is True
    assert run.order_source == "score"


def test_rank_order_keeps_file_order_for_equal_ranks(tmp_path):
    content = "q1 Q0 a 2 9 t\nq1 Q0 b 1 1 t\nq1 Q0 c 2 5 t\nq1 Q0 d 0 0 t\n"
    run = read_trec_run(put(tmp_path, content), order="rank")
    assert run.frame.get_column("doc_id").to_list() == ["d", "b", "a", "c"]
    assert run.frame.get_column("score").to_list() == [0.0, 1.0, 9.0, 5.0]
    assert run.order_source == "rank"
    assert run.order[0].rank_disagrees is True
    assert run.order[0].ties_broken == 0


def test_rank_agrees_when_rank_order_equals_score_order(tmp_path):
    run = read_trec_run(put(tmp_path, "q Q0 a 0 3 t\nq Q0 b 1 2 t\nq Q0 c 1 1 t\n"))
    assert run.order[0].rank_disagrees is False  # equal ranks fall back to file order, which matches


def test_interleaved_queries_grouped_in_first_appearance_order(tmp_path):
    content = "q2 Q0 a 1 3 t\nq1 Q0 b 1 5 t\nq2 Q0 c 2 4 t\nq3 Q0 d 1 1 t\nq1 Q0 e 2 6 t\n"
    run = read_trec_run(put(tmp_path, content))
    assert run.queries == ("q2", "q1", "q3")
    assert rows(run) == [("q2", "c", 1), ("q2", "a", 2), ("q1", "e", 1), ("q1", "b", 2), ("q3", "d", 1)]
    ranked = read_trec_run(put(tmp_path, content), order="rank")
    assert rows(ranked) == [("q2", "a", 1), ("q2", "c", 2), ("q1", "b", 1), ("q1", "e", 2), ("q3", "d", 1)]


def test_ties_counted_per_query(tmp_path):
    content = "q1 Q0 a 1 2 t\nq1 Q0 b 2 2 t\nq1 Q0 c 3 2 t\nq1 Q0 d 4 1 t\nq2 Q0 a 1 1 t\nq2 Q0 b 2 0 t\n"
    run = read_trec_run(put(tmp_path, content))
    # q1's tie is broken c, b, a (document ID descending): the rank column says a, b, c
    assert [(o.query_id, o.ties_broken, o.rank_disagrees) for o in run.order] == [("q1", 3, True), ("q2", 0, False)]


def test_several_tags(tmp_path):
    run = read_trec_run(put(tmp_path, "q1 Q0 a 1 1 A\nq1 Q0 b 2 0 B\nq2 Q0 a 1 1 A\n"))
    assert run.run_id == "A"
    assert run.metadata == {"trec_tags": ["A", "B"]}
    assert read_trec_run(put(tmp_path, GOOD)).metadata == {}


# ------------------------------------------------------------------ writing

def make_run(rankings: dict[str, list[tuple[str, float | None]]], **kw) -> Run:
    q, d, s, r = [], [], [], []
    for qid, docs in rankings.items():
        for i, (doc, score) in enumerate(docs, 1):
            q.append(qid), d.append(doc), s.append(score), r.append(i)
    frame = pl.DataFrame({"query_id": q, "doc_id": d, "score": s, "rank": r}, schema=RUN_SCHEMA)
    return Run(frame=frame, queries=tuple(rankings), **kw)


def test_written_lines_are_canonical(tmp_path):
    run = make_run({"q1": [("a", 2.5), ("b", 0.1)], "q2": [("c", -1e-7)]}, run_id="sys")
    out = tmp_path / "out.run"
    info = write_trec_run(run, out, sidecar=False)
    data = out.read_bytes()
    assert data.startswith(b"q1 Q0 a 1 2.5 sys\nq1 Q0 b 2 0.1 sys\nq2 Q0 c 1 ")
    assert b"\r" not in data and b"  " not in data and data.endswith(b" sys\n")
    assert float(data.splitlines()[2].split(b" ")[4]) == -1e-7  # shortest round-trip form (here -1e-7)
    assert info.synthetic_queries == [] and info.sidecar is None
    assert not (tmp_path / "out.run.manifest.json").exists()


def test_scores_round_trip_exactly(tmp_path):
    rng = np.random.default_rng(3)
    values = sorted(set((rng.standard_normal(300) * 10.0 ** rng.integers(-12, 12, 300)).tolist()), reverse=True)
    values = [v for i, v in enumerate(values) if i == 0 or np.float32(values[i - 1]) > np.float32(v)]
    run = make_run({"q": [(f"d{i}", v) for i, v in enumerate(values)]})
    out = tmp_path / "out.run"
    assert write_trec_run(run, out, sidecar=False).synthetic_queries == []
    back = read_trec_run(out, use_sidecar=False)
    assert back.frame.get_column("score").to_list() == values
    assert back.frame.get_column("doc_id").to_list() == [f"d{i}" for i in range(len(values))]


@pytest.mark.parametrize("scores", [
    [1.0, 1.0, 0.5],  # tie
    [1.00000002, 1.00000001],  # distinct doubles, one float32
    [16777217.0, 16777216.0],  # above 2^24: one float32
    [1.0, 2.0, 3.0],  # increasing: the list order is not the score order
    [None, None],  # no scores
    [3.0, None],  # partly missing
    [1e39, 1e38],  # overflows float32
])
def test_synthetic_scores_when_scores_do_not_order(tmp_path, scores):
    run = make_run({"q": [(f"d{i}", s) for i, s in enumerate(scores)], "r": [("x", 1.0), ("y", 0.5)]})
    out = tmp_path / "out.run"
    info = write_trec_run(run, out, sidecar=False)
    assert info.synthetic_queries == ["q"]
    lines = [ln.split(" ") for ln in out.read_text().splitlines()]
    n = len(scores)
    assert [ln[4] for ln in lines[:n]] == [str(n - i) for i in range(n)]
    assert [ln[4] for ln in lines[n:]] == ["1.0", "0.5"]
    back = read_trec_run(out, use_sidecar=False)
    assert back.frame.get_column("doc_id").to_list()[:n] == [f"d{i}" for i in range(n)]


def test_default_tag_and_gzip_output(tmp_path):
    run = make_run({"q": [("a", 1.0)]})
    out = tmp_path / "out.run.gz"
    write_trec_run(run, out)
    assert gzip.decompress(out.read_bytes()) == b"q Q0 a 1 1.0 trec-bridge\n"
    assert (tmp_path / "out.run.gz.manifest.json").exists()
    back = read_trec_run(out)
    assert back.run_id is None and back.frame.equals(run.frame)


@pytest.mark.parametrize("qid,doc,code", [
    ("q 1", "a", "E_TREC_COLUMNS"), ("q", "a\tb", "E_TREC_COLUMNS"), ("q", "", "E_TREC_COLUMNS"),
    ("q", "a\u00a0b", "E_TREC_COLUMNS"), ("q", "a\x1fb", "E_TREC_COLUMNS"), ("q", "a\x00", "E_TREC_COLUMNS"),
    ("q\n", "a", "E_TREC_COLUMNS"), ("\ufeffq", "a", "E_BOM"),
])
def test_unwritable_ids(tmp_path, qid, doc, code):
    out = tmp_path / "out.run"
    with pytest.raises(InvalidInput) as err:
        write_trec_run(make_run({qid: [("ok", 2.0), (doc, 1.0)]}), out)
    assert err.value.code == code
    assert err.value.where.query == qid
    assert list(tmp_path.iterdir()) == []


def test_unwritable_run_id(tmp_path):
    with pytest.raises(InvalidInput) as err:
        write_trec_run(make_run({"q": [("a", 1.0)]}, run_id="my run"), tmp_path / "out.run")
    assert err.value.code == "E_TREC_COLUMNS"
    assert list(tmp_path.iterdir()) == []


def test_empty_run_needs_sidecar(tmp_path):
    run = make_run({"q1": [], "q2": []})
    with pytest.raises(InvalidInput) as err:
        write_trec_run(run, tmp_path / "out.run", sidecar=False)
    assert err.value.code == "E_FILE_EMPTY"
    write_trec_run(run, tmp_path / "out.run")
    back = read_trec_run(tmp_path / "out.run")
    assert back.queries == ("q1", "q2") and back.frame.height == 0


def test_writer_regroups_a_frame_out_of_order(tmp_path):
    frame = pl.DataFrame({"query_id": ["b", "a", "b"], "doc_id": ["x", "y", "z"], "score": [None, None, None],
                          "rank": [2, 1, 1]}, schema=RUN_SCHEMA)
    write_trec_run(Run(frame=frame, queries=("a", "b")), tmp_path / "o.run", sidecar=False)
    assert [ln.split()[:4] for ln in (tmp_path / "o.run").read_text().splitlines()] == [
        ["a", "Q0", "y", "1"], ["b", "Q0", "z", "1"], ["b", "Q0", "x", "2"]]


def test_float32_rule_matches_numpy(tmp_path):
    # strictly decreasing as float64 but equal as float32 -> synthetic; distinct float32 -> kept
    a, b = 0.1, math.nextafter(0.1, 0)
    assert np.float32(a) == np.float32(b)
    info = write_trec_run(make_run({"q": [("x", a), ("y", b)], "r": [("x", 0.1), ("y", 0.09999)]}),
                          tmp_path / "o.run", sidecar=False)
    assert info.synthetic_queries == ["q"]


def test_whitespace_tables_match_python_and_c():
    import sys

    from converters.text_lines import AMBIGUOUS_WHITESPACE, PY_WHITESPACE

    python_ws = {chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()}
    assert set(PY_WHITESPACE) == python_ws
    c_isspace = set(" \t\n\r\x0b\x0c")
    assert set(AMBIGUOUS_WHITESPACE) == python_ws - c_isspace

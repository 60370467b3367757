"""Exports (issue 5): every tool reads the run's own order back, and gives our emulation's numbers.

The run below has what breaks naive exports: equal scores (any tool would
break the tie its own way), scores equal only as 32-bit floats (trec_eval 9),
documents without a score, negative scores, a run-only query, and a judged
query missing from the run.
"""
from __future__ import annotations

import json

import ir_measures
import numpy as np
import polars as pl
import pytest
import pytrec_eval

from converters.export import (
    DATASET_TARGETS, RUN_TARGETS, dataset_to_dataframe, dataset_to_ir_measures, export_dataset, export_run,
    read_ir_measures_tsv, run_to_ir_measures,
)
from converters.json_run import document_to_run
from converters.detect import looks_like_ranx
from converters.ranx_json import read_ranx_qrels, read_ranx_run, write_ranx_run
from converters.trec_qrels import read_trec_qrels
from converters.trec_run import read_trec_run, trec_score_values
from trec_bridge.cli import export as export_cli
from trec_bridge.cli.main import main
from trec_bridge.errors import InvalidInput
from trec_bridge.measures import parse_measures
from trec_bridge.model import Dataset, Qrels, Query, Run
from trec_bridge.policy import IR_MEASURES, PYTREC_EVAL
from trec_bridge.scorer import score

QRELS = """q1 0 d1 2
q1 0 d2 1
q1 0 d3 0
q1 0 d5 3
q1 0 d9 -1
q2 0 d1 1
q2 0 d4 2
q3 0 d7 1
q4 0 d1 0
q6 0 d2 1
"""

RUN_DOC = {
    "format": "trec-bridge.run", "version": 1, "dataset_id": "toy", "run_id": "sys",
    "rankings": {
        "q1": [{"doc_id": "d3", "score": 1.0}, {"doc_id": "d1", "score": 1.0}, {"doc_id": "d2", "score": 1.0},
               {"doc_id": "d5", "score": 0.5}, {"doc_id": "d8", "score": 0.5}, {"doc_id": "d9", "score": 0.1}],
        "q2": [{"doc_id": "a", "score": 0.30000001}, {"doc_id": "d4", "score": 0.3}, {"doc_id": "d1", "score": 0.2}],
        "q4": ["z", "d1", "y"],
        "q5": [{"doc_id": "d1", "score": 9.0}],
        "q6": [{"doc_id": "x", "score": -1.5}, {"doc_id": "d2", "score": -2.25}, {"doc_id": "w", "score": -3.0}],
    },
}

PTE = {"AP": "map", "RR": "recip_rank", "P@5": "P_5", "R@10": "recall_10", "nDCG@10": "ndcg_cut_10", "nDCG": "ndcg"}
IRM = "AP RR@10 P@5 R@10 nDCG@10 Judged@10"


@pytest.fixture()
def toy(tmp_path):
    qrels_path = tmp_path / "toy.qrels"
    qrels_path.write_text(QRELS)
    qrels = read_trec_qrels(qrels_path)
    dataset = Dataset(queries=tuple(Query(q) for q in qrels.query_ids()), qrels=qrels, dataset_id="toy",
                      query_source="qrels", grades=(-1, 0, 1, 2, 3))
    return dataset, document_to_run(RUN_DOC)


def order(run: Run) -> list[tuple[str, str, int]]:
    return run.frame.select("query_id", "doc_id", "rank").rows()


def test_the_toy_run_needs_synthetic_scores(toy):
    _, run = toy
    _, _, synthetic = trec_score_values(run.frame)
    assert synthetic == ["q1", "q2", "q4"]  # ties, float32-equal, no scores; q5 and q6 keep theirs


def test_trec_export_read_by_pytrec_eval(toy, tmp_path):
    dataset, run = toy
    run_path, qrels_path = tmp_path / "sys.run", tmp_path / "export.qrels"
    info = export_run(run, run_path, "trec")
    export_dataset(dataset, qrels_path, "trec-qrels")
    assert info.sidecar and info.synthetic_queries == ["q1", "q2", "q4"]
    with open(run_path) as fr, open(qrels_path) as fq:
        pte_run, pte_qrels = pytrec_eval.parse_run(fr), pytrec_eval.parse_qrel(fq)
    # the order trec_eval reads (float32 score desc, ties by docno desc) is the run's own
    tool_order = [(q, d, i) for q in pte_run for i, (d, _) in enumerate(
        sorted(pte_run[q].items(), key=lambda kv: (-np.float32(kv[1]), _neg(kv[0]))), 1)]
    assert sorted(tool_order) == sorted(order(run))
    values = pytrec_eval.RelevanceEvaluator(pte_qrels, set(PTE.values())).evaluate(pte_run)
    seen = read_trec_run(run_path, use_sidecar=False)  # what the tool sees: the exported scores
    assert order(seen) == order(run)
    ours = score(dataset, seen, parse_measures(" ".join(PTE)), PYTREC_EVAL)
    per_query = {r.query_id: r.values for r in ours.queries}
    assert set(values) == set(per_query) == {"q1", "q2", "q4", "q6"}
    for q, tool in values.items():
        for m, name in PTE.items():
            assert per_query[q][m] == pytest.approx(tool[name], abs=1e-12), (q, m)
    for m, name in PTE.items():
        assert ours.means[m].value == pytest.approx(pytrec_eval.compute_aggregated_measure(
            name, [v[name] for v in values.values()]), abs=1e-12)
    # with the sidecar, trec-bridge gets the original run back (its own scores for writers; the frame keeps
    # the file's scores, which every tool reads)
    back = read_trec_run(run_path)
    assert back.own_frame().equals(run.frame) and back.frame.equals(seen.frame) and back.run_id == "sys" and back.dataset_id == "toy"


def _neg(doc: str) -> tuple:
    """Sort key for 'docno descending' in byte order."""
    return tuple(-b for b in doc.encode()) + (1,)


def test_trec_and_tsv_exports_read_by_ir_measures(toy, tmp_path):
    dataset, run = toy
    measures = [ir_measures.parse_measure(m) for m in IRM.split()]
    export_run(run, tmp_path / "sys.run", "trec")
    export_dataset(dataset, tmp_path / "q.qrels", "trec-qrels")
    tool_run = list(ir_measures.read_trec_run(str(tmp_path / "sys.run")))
    # the order every provider reads: score desc (msmarco/judged providers: ties by docno ascending) = the run's
    ranked = {}
    for sd in sorted(tool_run, key=lambda s: (s.query_id, -s.score, s.doc_id)):
        ranked.setdefault(sd.query_id, []).append(sd.doc_id)
    assert sorted((q, d, i) for q, docs in ranked.items() for i, d in enumerate(docs, 1)) == sorted(order(run))
    qrels = list(ir_measures.read_trec_qrels(str(tmp_path / "q.qrels")))
    from_files = _ir_measures_values(measures, qrels, tool_run)

    seen = read_trec_run(tmp_path / "sys.run", use_sidecar=False)
    ours = score(dataset, seen, parse_measures(IRM), IR_MEASURES)
    per_query = {r.query_id: r.values for r in ours.queries}
    for (q, m), value in from_files["per_query"].items():
        assert per_query[q][m] == pytest.approx(value, abs=1e-12), (q, m)
    for m, value in from_files["aggregate"].items():
        assert ours.means[m].value == pytest.approx(value, abs=1e-12), m

    # the TSV export and the in-memory objects give the very same numbers
    export_run(run, tmp_path / "sys.tsv", "ir-measures-tsv")
    export_dataset(dataset, tmp_path / "q.tsv", "ir-measures-tsv")
    run_df, qrels_df = read_ir_measures_tsv(tmp_path / "sys.tsv"), read_ir_measures_tsv(tmp_path / "q.tsv")
    assert list(run_df.columns) == ["query_id", "doc_id", "score"]
    assert list(qrels_df.columns) == ["query_id", "doc_id", "relevance", "iteration"]
    assert _ir_measures_values(measures, qrels_df, run_df) == from_files
    assert _ir_measures_values(measures, dataset_to_ir_measures(dataset), run_to_ir_measures(run)) == from_files
    assert _ir_measures_values(measures, dataset_to_dataframe(dataset), run_to_ir_measures(run)) == from_files


def help_recipe(kind: str, variable: str) -> str:
    """The line of ``trec-bridge export KIND --help`` that reads an ir-measures-tsv file into ``variable``."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main(["export", kind, "--help"])
    lines = [line.strip() for line in out.getvalue().splitlines() if line.strip().startswith(f"{variable} = ")]
    assert len(lines) == 1, out.getvalue()
    return lines[0]


def test_the_help_recipes_read_the_tsv_exports_as_ir_measures_needs(toy, tmp_path):
    """The help's pandas lines, run as printed, give DataFrames ir_measures scores exactly like the TREC files;
    IDs stay text ("007" and "7" are two queries, "NA" a document)."""
    import pandas

    dataset, run = toy
    rename = {"q1": "007", "q2": "7", "q6": "NA"}
    qrels = dataset.qrels.frame.with_columns(pl.col("query_id").replace(rename),
                                             pl.col("doc_id").replace({"d2": "NA", "d4": "1e5"}))
    dataset = Dataset(**{**dataset.__dict__, "qrels": Qrels(qrels), "queries": tuple(
        Query(rename.get(q.query_id, q.query_id)) for q in dataset.queries)})
    run = Run(**{**run.__dict__, "frame": run.frame.with_columns(pl.col("query_id").replace(rename),
                                                                 pl.col("doc_id").replace({"d2": "NA", "d4": "1e5"})),
                 "queries": tuple(rename.get(q, q) for q in run.queries), "_blocks": None, "_pair_keys": None})
    for kind, target in (("run", "sys"), ("dataset", "q")):
        (export_run if kind == "run" else export_dataset)(run if kind == "run" else dataset,
                                                          tmp_path / f"{target}.tsv", "ir-measures-tsv")
    read = {}
    for kind, variable, file in (("run", "run", "sys.tsv"), ("dataset", "qrels", "q.tsv")):
        recipe = help_recipe(kind, variable)
        namespace = {"pandas": pandas, "OUT": str(tmp_path / file)}
        exec(recipe, namespace)  # noqa: S102 - the documented line, as a user runs it
        read[variable] = namespace[variable]
    measures = [ir_measures.parse_measure(m) for m in IRM.split()]
    from_tsv = _ir_measures_values(measures, read["qrels"], read["run"])
    export_run(run, tmp_path / "sys.run", "trec")
    export_dataset(dataset, tmp_path / "q.qrels", "trec-qrels")
    from_trec = _ir_measures_values(measures, list(ir_measures.read_trec_qrels(str(tmp_path / "q.qrels"))),
                                    list(ir_measures.read_trec_run(str(tmp_path / "sys.run"))))
    assert from_tsv == from_trec
    assert {"007", "7", "NA"} <= {q for q, _ in from_tsv["per_query"]}
    assert "NA" in set(read["run"]["doc_id"]) and "1e5" in set(read["qrels"]["doc_id"])


def _ir_measures_values(measures, qrels, run) -> dict:
    per_query = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(measures, qrels, run)}
    aggregate = {str(k): v for k, v in ir_measures.calc_aggregate(measures, qrels, run).items()}
    return {"per_query": per_query, "aggregate": aggregate}


def test_ranx_json_round_trip(toy, tmp_path):
    dataset, run = toy
    info = export_run(run, tmp_path / "sys.ranx.json", "ranx-json")
    assert info.synthetic_queries == ["q1", "q2", "q4"] and any("run_id" in n for n in info.notes)
    assert looks_like_ranx(tmp_path / "sys.ranx.json")
    doc = json.loads((tmp_path / "sys.ranx.json").read_text())
    assert doc["q1"] == {"d3": 6, "d1": 5, "d2": 4, "d5": 3, "d8": 2, "d9": 1}
    assert doc["q6"] == {"x": -1.5, "d2": -2.25, "w": -3.0}
    back = read_ranx_run(tmp_path / "sys.ranx.json", run_id="sys")
    assert order(back) == order(run) and back.queries == run.queries
    values, _, _ = trec_score_values(run.frame)
    assert back.frame.get_column("score").to_list() == values.tolist()
    assert all(o.ties_broken == 0 for o in back.order)

    export_dataset(dataset, tmp_path / "q.ranx.json", "ranx-json")
    qback = read_ranx_qrels(tmp_path / "q.ranx.json")
    assert qback.frame.equals(dataset.qrels.frame)  # iterations are all "0" here


def test_ranx_itself_reads_our_order(toy, tmp_path):
    import ranx  # a test dependency (pyproject's test extra): never skipped

    _, run = toy
    export_run(run, tmp_path / "sys.ranx.json", "ranx-json")
    export_run(run, tmp_path / "sys.run", "trec")
    for path, kind in ((tmp_path / "sys.ranx.json", "json"), (tmp_path / "sys.run", "trec")):
        loaded = ranx.Run.from_file(str(path), kind=kind).to_dict()
        got = [(q, d, i) for q, docs in loaded.items()
               for i, (d, _) in enumerate(sorted(docs.items(), key=lambda kv: -kv[1]), 1)]
        assert sorted(got) == sorted(order(run))


def test_ranx_is_a_test_dependency():
    """CI installs the test extra; without ranx in it, the test above could not run there."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    from pathlib import Path

    extra = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["test"]
    assert any(req.split(">")[0].split("=")[0].strip() == "ranx" for req in extra), extra


def test_ranx_and_numba_stay_out_of_trec_bridge(tmp_path):
    """ranx imports numba (seconds of JIT set-up): no trec-bridge command may import it, ranx files included."""
    import subprocess
    import sys
    from pathlib import Path

    examples = Path(__file__).resolve().parent.parent / "trec_bridge" / "examples"
    ds, run = str(examples / "dataset.json"), str(examples / "run.json")
    out = str(tmp_path / "r.ranx.json")
    script = f"""
import sys
from trec_bridge.cli.main import main
assert main(["score", {ds!r}, {run!r}, "P@3 nDCG@3"]) == 0
assert main(["export", "run", {run!r}, "--to", "ranx-json", "-o", {out!r}]) == 0
assert main(["import", "ranx-run", {out!r}, "-o", {str(tmp_path / "back.json")!r}, "--dataset-id", "x"]) == 0
assert main(["score", {ds!r}, {out!r}, "P@3"]) == 0
assert main(["crosscheck", {ds!r}, {run!r}, "P@3", "--against", "ir_measures"]) == 0
print(sorted(m for m in ("ranx", "numba") if m in sys.modules))
"""
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert p.stdout.strip().splitlines()[-1] == "[]", p.stdout + p.stderr


def test_empty_and_failed_queries_are_reported(tmp_path):
    doc = dict(RUN_DOC, rankings={"q1": ["d1", "d2"], "q2": []}, failures={"q3": {"reason": "timeout"}})
    run = document_to_run(doc)
    info = export_run(run, tmp_path / "r.json", "ranx-json")
    assert json.loads((tmp_path / "r.json").read_text()) == {"q1": {"d1": 2, "d2": 1}, "q2": {}}
    assert any("1 failed" in n for n in info.notes) and any("1 empty" in n for n in info.notes)
    back = read_ranx_run(tmp_path / "r.json")
    assert back.queries == ("q1", "q2") and back.empty_queries() == ["q2"]
    info = export_run(run, tmp_path / "r.run", "trec", sidecar=False)
    assert any("without the sidecar, 1 empty and 1 failed" in n for n in info.notes)
    assert not (tmp_path / "r.run.manifest.json").exists()
    info = export_run(run, tmp_path / "r.tsv", "ir-measures-tsv")
    assert any("1 empty and 1 failed" in n for n in info.notes)


def test_dataset_export_says_what_the_file_cannot(toy, tmp_path):
    dataset, _ = toy
    strict = Dataset(**{**dataset.__dict__, "threshold": 2, "queries": dataset.queries + (Query("q7"),)})
    info = export_dataset(strict, tmp_path / "q.qrels", "trec-qrels")
    assert any("trec_eval -l2" in n for n in info.notes) and any("1 queries" in n for n in info.notes)
    info = export_dataset(strict, tmp_path / "q.json", "ranx-json")
    assert any("set_relevance_level(2)" in n for n in info.notes)


# --------------------------------------------------------------------------- ranx JSON, strictly


def test_ranx_tests_sample_imports(shared_data):
    run = read_ranx_run(shared_data / "runs/ranx-tests/run.json")
    trec = read_trec_run(shared_data / "runs/ranx-tests/run.trec")
    assert run.frame.equals(trec.frame) and run.queries == trec.queries == ("q1", "q2")
    assert order(run) == [("q1", "d3", 1), ("q1", "d2", 2), ("q1", "d1", 3), ("q2", "d2", 1), ("q2", "d1", 2)]
    qrels = read_ranx_qrels(shared_data / "qrels/ranx-tests/qrels.json")
    assert qrels.frame.equals(read_trec_qrels(shared_data / "qrels/ranx-tests/qrels.trec").frame)


@pytest.mark.parametrize("text,code", [
    ('{"q1": {"d1": 1.0, "d1": 2.0}}', "E_JSON_DUPLICATE_KEY"),
    ('{"q1": {"d1": 1.0}, "q1": {"d2": 2.0}}', "E_JSON_DUPLICATE_KEY"),
    ('{"q1": {"d1": true}}', "E_RUN_SCORE"),
    ('{"q1": {"d1": "0.5"}}', "E_RUN_SCORE"),
    ('{"q1": {"d1": NaN}}', "E_JSON_NUMBER"),
    ('{"q1": {"d1": 1e400}}', "E_JSON_NUMBER"),
    ('{"q1": ["d1"]}', "E_JSON_SCHEMA"),
    ('{"q 1": {"d1": 1.0}}', "E_JSON_SCHEMA"),
    ('{"q1": {"d 1": 1.0}}', "E_JSON_SCHEMA"),
    ('[{"q1": 1}]', "E_JSON_FORMAT"),
    ('{"format": "trec-bridge.run", "version": 1}', "E_JSON_FORMAT"),
])
def test_ranx_run_refusals(tmp_path, text, code):
    path = tmp_path / "run.json"
    path.write_text(text)
    with pytest.raises(InvalidInput) as exc:
        read_ranx_run(path)
    assert exc.value.code == code


@pytest.mark.parametrize("text,code", [
    ('{"q1": {"d1": 1.0}}', "E_QRELS_GRADE"),
    ('{"q1": {"d1": false}}', "E_QRELS_GRADE"),
    ('{"q1": {"d1": "1"}}', "E_QRELS_GRADE"),
    ('{"q1": {}}', "E_JSON_SCHEMA"),
    ('{"q1": {"d1": 1, "d1": 0}}', "E_JSON_DUPLICATE_KEY"),
])
def test_ranx_qrels_refusals(tmp_path, text, code):
    path = tmp_path / "qrels.json"
    path.write_text(text)
    with pytest.raises(InvalidInput) as exc:
        read_ranx_qrels(path)
    assert exc.value.code == code


def test_ranx_run_ties_are_ordered_like_trec_eval(tmp_path):
    path = tmp_path / "run.json"
    path.write_text('{"q1": {"a": 1, "c": 1, "b": 2.5}, "q0": {}}')
    run = read_ranx_run(path)
    assert order(run) == [("q1", "b", 1), ("q1", "c", 2), ("q1", "a", 3)]
    assert run.queries == ("q1", "q0") and run.empty_queries() == ["q0"]
    assert run.order[0].ties_broken == 2 and run.order_source == "score"


def test_ranx_writer_refuses_what_the_reader_would(tmp_path):
    frame = pl.DataFrame({"query_id": ["q1"], "doc_id": ["d 1"], "score": [1.0], "rank": [1]})
    with pytest.raises(InvalidInput):
        write_ranx_run(Run(frame=frame, queries=("q1",)), tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()


# --------------------------------------------------------------------------- CLI


def test_cli_targets_match_the_api():
    assert export_cli.RUN_TARGETS == RUN_TARGETS and export_cli.DATASET_TARGETS == DATASET_TARGETS


def test_cli_export_and_import(toy, tmp_path, capsys):
    _, run = toy
    src = tmp_path / "sys.json"
    src.write_text(json.dumps(RUN_DOC))
    assert main(["export", "run", str(src), "--to", "trec", "-o", str(tmp_path / "sys.run")]) == 0
    err = capsys.readouterr().err
    assert "3 queries written with scores n..1" in err and (tmp_path / "sys.run.manifest.json").exists()
    assert main(["export", "run", str(src), "--to", "ranx-json", "-o", str(tmp_path / "sys.ranx.json")]) == 0
    # a ranx run comes back in through `import ranx-run`, and is exported again from its JSON form
    out = tmp_path / "back.json"
    assert main(["import", "ranx-run", str(tmp_path / "sys.ranx.json"), "-o", str(out), "--dataset-id", "toy",
                 "--run-id", "sys"]) == 0
    from converters.json_run import load_run

    back = load_run(out)
    assert order(back) == order(run) and back.run_id == "sys" and back.dataset_id == "toy"
    # export reads ranx JSON directly too
    assert main(["export", "run", str(tmp_path / "sys.ranx.json"), "--to", "trec", "-o",
                 str(tmp_path / "again.run"), "--no-sidecar"]) == 0
    assert order(read_trec_run(tmp_path / "again.run")) == order(run)
    capsys.readouterr()
    assert main(["export", "run", str(src), "--to", "ranx-json", "-o", str(tmp_path / "x.json"), "--no-sidecar"]) == 1
    assert "E_USAGE" in capsys.readouterr().err


def test_cli_ranx_qrels_to_dataset_and_back(shared_data, tmp_path):
    out = tmp_path / "ranx.json"
    assert main(["import", "ranx-qrels", str(shared_data / "qrels/ranx-tests/qrels.json"), "-o", str(out),
                 "--dataset-id", "ranx-tests"]) == 0
    from converters.json_dataset import load_dataset

    ds = load_dataset(out)
    assert ds.query_ids() == ["q1", "q2"] and ds.grades == (1, 2, 3) and ds.qrels.frame.height == 5
    assert main(["export", "dataset", str(out), "--to", "trec-qrels", "-o", str(tmp_path / "q.trec")]) == 0
    assert (tmp_path / "q.trec").read_bytes() == (shared_data / "qrels/ranx-tests/qrels.trec").read_bytes() + b"\n"
    assert main(["export", "dataset", str(shared_data / "qrels/ranx-tests/qrels.json"), "--to", "ranx-json",
                 "-o", str(tmp_path / "q2.json")]) == 0
    assert json.loads((tmp_path / "q2.json").read_text()) == json.loads(
        (shared_data / "qrels/ranx-tests/qrels.json").read_text())


def test_export_never_overwrites_its_input(tmp_path, capsys):
    src = tmp_path / "sys.json"
    src.write_text(json.dumps(RUN_DOC))
    before = src.read_bytes()
    assert main(["export", "run", str(src), "--to", "ranx-json", "-o", str(src)]) == 1
    assert src.read_bytes() == before


def test_qrels_with_a_null_grade_is_refused(tmp_path):
    frame = pl.DataFrame({"query_id": ["q1"], "iteration": ["0"], "doc_id": ["d1"], "grade": [None]},
                         schema={"query_id": pl.String, "iteration": pl.String, "doc_id": pl.String, "grade": pl.Int64})
    ds = Dataset(queries=(Query("q1"),), qrels=Qrels(frame), dataset_id="x")
    for to in DATASET_TARGETS:
        with pytest.raises(InvalidInput):
            export_dataset(ds, tmp_path / f"out.{to}", to)
        assert not (tmp_path / f"out.{to}").exists()

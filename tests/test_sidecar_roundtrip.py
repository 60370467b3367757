"""Run -> TREC (+ sidecar) -> Run is the identity; every anchor tool reads the written order.

The property runs on IDs made of unusual non-whitespace characters and on
score lists with ties, float32 collisions, missing scores and explicitly
empty queries, i.e. everything a TREC file cannot say by itself.
"""
from __future__ import annotations

import json
import tempfile
from collections import defaultdict
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from converters import invisible
from converters.text_lines import PY_WHITESPACE
from converters.trec_run import read_trec_run, write_trec_run
from trec_bridge.errors import InvalidInput, TrecBridgeError
from trec_bridge.model import RUN_SCHEMA, QueryOrder, Run

ID_CHARS = st.characters(exclude_categories=("Cs",), exclude_characters=PY_WHITESPACE + "\x00\ufeff")
ID_CHARS = ID_CHARS.filter(lambda c: invisible.find_in_text(c) < 0)  # refused by every reader (E_ID_INVISIBLE)
IDS = st.one_of(
    st.sampled_from(["007", "7", "0", "#", "#q", '"q"', "'", "é", "e\u0301", "\U0001F600", "a#b", "Q0", "-1", "1e5"]),
    st.text(ID_CHARS, min_size=1, max_size=5),
)
TRICKY = [0.0, -0.0, 1.0, 1.00000001, 1.00000002, 16777216.0, 16777217.0, -2.5, 1e39, 5e-324]


def scores(n: int):
    same_len = dict(min_size=n, max_size=n)
    return st.one_of(
        st.lists(st.none(), **same_len),
        st.lists(st.sampled_from(TRICKY), **same_len),
        st.lists(st.floats(allow_nan=False, allow_infinity=False), **same_len),
        st.lists(st.one_of(st.none(), st.floats(-10, 10)), **same_len),
        st.lists(st.floats(-1e6, 1e6), unique=True, **same_len).map(lambda v: sorted(v, reverse=True)),
    )


@st.composite
def runs(draw) -> Run:
    queries = draw(st.lists(IDS, unique=True, max_size=5))
    failures = draw(st.lists(IDS.filter(lambda q: q not in queries), unique=True, max_size=2))
    q, d, s, r = [], [], [], []
    for qid in queries:
        docs = draw(st.lists(IDS, unique=True, max_size=6))
        for i, (doc, score) in enumerate(zip(docs, draw(scores(len(docs)))), 1):
            q.append(qid), d.append(doc), s.append(score), r.append(i)
    frame = pl.DataFrame({"query_id": q, "doc_id": d, "score": s, "rank": r}, schema=RUN_SCHEMA)
    return Run(
        frame=frame, queries=tuple(queries),
        failures={f: draw(st.text(max_size=8)) for f in failures},
        run_id=draw(st.one_of(st.none(), IDS)),
        dataset_id=draw(st.one_of(st.none(), IDS)),
        dataset_version=draw(st.one_of(st.none(), st.text(max_size=4))),
        metadata=draw(st.dictionaries(st.text(max_size=3), st.one_of(st.integers(-(2**63), 2**63 - 1), st.text(max_size=3), st.none()),
                                      max_size=2)),
    )


def assert_same_run(a: Run, b: Run) -> None:
    """The same run: ``own_frame`` (the run's own scores, a sidecar's where it kept them) is identical.

    ``b.frame`` may hold a TREC file's synthetic scores instead: those are what the tools read.
    """
    assert a.own_frame().equals(b.own_frame()), (a.own_frame(), b.own_frame())
    # equals() treats -0.0 as 0.0: compare the bits too
    assert np.array_equal(a.own_scores().to_numpy().view(np.uint64), b.own_scores().to_numpy().view(np.uint64))
    assert b.frame.select("query_id", "doc_id", "rank").equals(a.frame.select("query_id", "doc_id", "rank"))
    for attr in ("queries", "failures", "run_id", "dataset_id", "dataset_version", "metadata", "order",
                 "order_source"):
        assert getattr(a, attr) == getattr(b, attr), attr


def per_query(frame: pl.DataFrame) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for q, d in frame.select("query_id", "doc_id").iter_rows():
        out.setdefault(q, []).append(d)
    return out


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs(), st.booleans())
def test_write_then_read_is_the_identity(run, gz):
    with tempfile.TemporaryDirectory() as tmp:
        if run.frame.height == 0 and not run.queries:
            return  # nothing to write
        path = Path(tmp) / ("run.trec.gz" if gz else "run.trec")
        write_trec_run(run, path)
        back = read_trec_run(path)
        assert back.source == str(path)
        assert_same_run(run, back)
        # without the sidecar: same per-query order, empty and failed queries are simply absent
        if run.frame.height:
            bare = read_trec_run(path, use_sidecar=False)
            assert per_query(bare.frame) == per_query(run.frame)
            assert bare.failures == {} and set(bare.queries) == set(run.frame.get_column("query_id").to_list())


# ------------------------------------------------------------------ every tool reads the written order

def order_trec_eval9(path: Path) -> dict[str, list[str]]:
    """trec_eval 9.x's documented sort: float32 score descending, then docno descending (strcmp)."""
    by_q: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for line in path.read_text(encoding="utf-8").splitlines():
        q, _, d, _, s, _ = line.split()
        by_q[q].append((d, float(s)))
    out = {}
    for q, items in by_q.items():
        items = sorted(items, key=lambda x: x[0].encode(), reverse=True)
        items = sorted(items, key=lambda x: -np.float32(x[1]))
        out[q] = [d for d, _ in items]
    return out


def order_pytrec_eval(path: Path) -> dict[str, list[str]]:
    """Positions as pytrec_eval sees them: one evaluation query per (query, doc), recip_rank = 1/position."""
    import pytrec_eval

    with open(path, encoding="utf-8") as fh:
        run = pytrec_eval.parse_run(fh)
    qrels, scored, keys = {}, {}, {}
    for q, docs in run.items():
        for d in docs:
            k = f"k{len(keys)}"
            keys[k] = (q, d)
            qrels[k] = {d: 1}
            scored[k] = docs
    result = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(scored)
    pos: dict[str, dict[str, int]] = defaultdict(dict)
    for k, (q, d) in keys.items():
        pos[q][d] = round(1 / result[k]["recip_rank"])
    return {q: sorted(p, key=p.get) for q, p in pos.items()}


def order_ir_measures_msmarco(path: Path) -> dict[str, list[str]]:
    """ir_measures' reader, then its msmarco provider's sort key (-score, doc_id)."""
    import ir_measures

    by_q: dict[str, list] = defaultdict(list)
    for sd in ir_measures.read_trec_run(str(path)):
        by_q[sd.query_id].append(sd)
    return {q: [x.doc_id for x in sorted(v, key=lambda x: (-x.score, x.doc_id))] for q, v in by_q.items()}


def order_ranx(path: Path) -> dict[str, list[str]]:
    """ranx: float64 score descending, no tie-break (argsort of -score); only defined without ties."""
    by_q: dict[str, list] = defaultdict(list)
    for line in path.read_text(encoding="utf-8").splitlines():
        q, _, d, _, s, _ = line.split()
        by_q[q].append((d, float(s)))
    out = {}
    for q, items in by_q.items():
        values = [s for _, s in items]
        assert len(set(values)) == len(values), "a written query has tied scores"
        out[q] = [items[i][0] for i in np.argsort([-v for v in values], kind="stable")]
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs())
def test_every_tool_reads_the_written_order(run):
    if run.frame.height == 0:
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.trec"
        write_trec_run(run, path, sidecar=False)
        expected = per_query(run.frame)
        assert order_trec_eval9(path) == expected
        assert order_pytrec_eval(path) == expected
        assert order_ir_measures_msmarco(path) == expected
        assert order_ranx(path) == expected


# ------------------------------------------------------------------ sidecar behaviour

def sample_run() -> Run:
    frame = pl.DataFrame({"query_id": ["q1", "q1", "q3"], "doc_id": ["a", "b", "c"], "score": [1.0, 1.0, None],
                          "rank": [1, 2, 1]}, schema=RUN_SCHEMA)
    return Run(frame=frame, queries=("q1", "q2", "q3"), failures={"q4": "timeout"}, run_id="sys",
               dataset_id="ds", dataset_version="v2", metadata={"system": {"k": 1}})


def test_sidecar_contents(tmp_path):
    path = tmp_path / "r.run"
    info = write_trec_run(sample_run(), path)
    side = json.loads((tmp_path / "r.run.manifest.json").read_text())
    assert side["format"] == "trec-bridge.sidecar" and side["version"] == 1
    assert side["trec_file"]["name"] == "r.run"
    assert [q["query_id"] for q in side["queries"]] == ["q1", "q2", "q3"]
    assert [q["documents"] for q in side["queries"]] == [2, 0, 2 - 1]
    assert side["failures"] == {"q4": "timeout"}
    assert side["unscored_queries"] == ["q3"]
    assert side["original_scores"] == {"q1": [1.0, 1.0]}
    assert (side["run_id"], side["dataset_id"], side["dataset_version"]) == ("sys", "ds", "v2")
    assert info.synthetic_queries == ["q1", "q3"] and info.empty_queries == ["q2"] and info.failed_queries == ["q4"]
    assert_same_run(sample_run(), read_trec_run(path))


def test_order_information_survives(tmp_path):
    src = tmp_path / "in.run"
    src.write_text("q Q0 a 1 1 t\nq Q0 b 2 1 t\nq Q0 c 3 2 t\n")
    run = read_trec_run(src)
    assert run.order == (QueryOrder("q", 2, True),)
    write_trec_run(run, tmp_path / "out.run")
    assert_same_run(run, read_trec_run(tmp_path / "out.run"))


def test_sidecar_hash_mismatch(tmp_path):
    path = tmp_path / "r.run"
    write_trec_run(sample_run(), path)
    path.write_text(path.read_text().replace("sys", "SYS"))
    with pytest.raises(InvalidInput) as err:
        read_trec_run(path)
    assert err.value.code == "E_SIDECAR_MISMATCH"  # its own code since issue 14 (was E_SIDECAR)
    assert err.value.where.file == str(tmp_path / "r.run.manifest.json")
    bare = read_trec_run(path, use_sidecar=False)
    assert bare.queries == ("q1", "q3") and bare.run_id == "SYS"


@pytest.mark.parametrize("edit", [
    lambda m: m.update(format="other"),
    lambda m: m.update(version=2),
    lambda m: m.update(kind="qrels"),
    lambda m: m.pop("queries"),
    lambda m: m.update(queries=[{"query_id": "q1", "documents": 2}]),
    lambda m: m.update(original_scores={"q1": [1.0]}),
    lambda m: m.update(original_scores={"q1": [1.0, "x"]}),
    lambda m: m.update(order_source="random"),
])
def test_malformed_sidecar(tmp_path, edit):
    path = tmp_path / "r.run"
    write_trec_run(sample_run(), path)
    side = tmp_path / "r.run.manifest.json"
    manifest = json.loads(side.read_text())
    edit(manifest)
    side.write_text(json.dumps(manifest))
    with pytest.raises(InvalidInput) as err:
        read_trec_run(path)
    assert err.value.code == "E_SIDECAR"


def test_sidecar_not_json(tmp_path):
    path = tmp_path / "r.run"
    write_trec_run(sample_run(), path)
    (tmp_path / "r.run.manifest.json").write_text("{not json")
    with pytest.raises(InvalidInput) as err:
        read_trec_run(path)
    assert err.value.code == "E_SIDECAR"


def test_writing_without_sidecar_removes_a_stale_one(tmp_path):
    path = tmp_path / "r.run"
    write_trec_run(sample_run(), path)
    write_trec_run(sample_run(), path, sidecar=False)
    assert not (tmp_path / "r.run.manifest.json").exists()
    assert read_trec_run(path).queries == ("q1", "q3")  # missing, never invented as empty


def test_a_foreign_manifest_is_left_alone(tmp_path):
    foreign = tmp_path / "r.run.manifest.json"
    foreign.write_text('{"format": "someone-else"}')
    write_trec_run(sample_run(), tmp_path / "r.run", sidecar=False)
    assert foreign.exists()


def test_failed_write_leaves_nothing(tmp_path):
    run = sample_run()
    run.metadata = {"bad": object()}  # not JSON: the sidecar cannot be written
    with pytest.raises(TrecBridgeError) as err:
        write_trec_run(run, tmp_path / "r.run")
    assert err.value.code == "E_OUTPUT"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("metadata", [{"n": 2**63}, {"deep": json.loads("[" * 70 + "]" * 70)}])
def test_metadata_the_strict_reader_would_refuse_is_not_written(tmp_path, metadata):
    """Sidecars are read strictly (int64, depth): the writer refuses what could not be read back."""
    run = sample_run()
    run.metadata = metadata
    with pytest.raises(TrecBridgeError) as err:
        write_trec_run(run, tmp_path / "r.run")
    assert err.value.code == "E_OUTPUT" and "read back" in err.value.message
    assert list(tmp_path.iterdir()) == []


def test_an_invisible_character_in_an_id_is_not_written(tmp_path):
    """The TREC writers refuse the IDs every reader refuses (E_ID_INVISIBLE), so a written file reads back."""
    run = sample_run()
    run.frame = run.frame.with_columns(pl.col("doc_id").str.replace(r"^", "\u200b"))
    with pytest.raises(TrecBridgeError) as err:
        write_trec_run(run, tmp_path / "r.run")
    assert err.value.code == "E_ID_INVISIBLE"
    assert list(tmp_path.iterdir()) == []


def test_convert_cli_round_trip_through_trec(tmp_path):
    from trec_bridge.cli.main import main

    src = tmp_path / "in.run"
    src.write_text("q2 Q0 a 1 1 t\nq2 Q0 b 2 1 t\nq1 Q0 c 1 0.5 t\n")
    assert main(["convert", "run", str(src), str(tmp_path / "mid.run")]) == 0
    assert (tmp_path / "mid.run.manifest.json").exists()
    assert main(["convert", "run", str(tmp_path / "mid.run"), str(tmp_path / "out.run"), "--no-sidecar"]) == 0
    assert not (tmp_path / "out.run.manifest.json").exists()
    assert_same_run(read_trec_run(src), read_trec_run(tmp_path / "mid.run"))
    assert per_query(read_trec_run(tmp_path / "out.run").frame) == per_query(read_trec_run(src).frame)
    ranked = tmp_path / "rank.run"
    assert main(["convert", "run", str(src), str(ranked), "--order", "rank"]) == 0
    assert per_query(read_trec_run(ranked).frame) == {"q2": ["a", "b"], "q1": ["c"]}


def test_convert_cli_through_json(tmp_path):
    from trec_bridge.cli.main import main

    src = tmp_path / "in.run"
    src.write_text("q2 Q0 a 1 1 t\nq2 Q0 b 2 1 t\nq1 Q0 c 1 0.5 t\n")
    js, back = tmp_path / "run.json", tmp_path / "back.run"
    assert main(["convert", "run", str(src), str(js)]) == 1  # a JSON run names its dataset
    assert not js.exists()
    assert main(["convert", "run", str(src), str(js), "--dataset-id", "ds", "--order", "rank"]) == 0
    assert main(["convert", "run", str(js), str(back)]) == 0
    run = read_trec_run(back)
    assert per_query(run.frame) == {"q2": ["a", "b"], "q1": ["c"]}
    assert (run.dataset_id, run.run_id) == ("ds", "t")
    assert main(["convert", "run", str(js), str(back), "--order", "rank"]) == 1  # --order is for TREC input
    assert main(["convert", "run", str(src), str(js), "--no-sidecar", "--dataset-id", "ds"]) == 1


def test_convert_says_when_a_json_file_is_misnamed(tmp_path, capsys):
    from trec_bridge.cli.main import main

    src = tmp_path / "run.txt"
    src.write_text('{"format": "trec-bridge.run"}')
    assert main(["convert", "run", str(src), str(tmp_path / "out.run")]) == 1
    assert "rename it to *.json" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.txt"]


def order_trec_eval_binary(binary: str, path: Path, tmp: Path) -> dict[str, list[str]]:
    """Positions as the real trec_eval binary sees them (same one-query-per-document trick)."""
    import subprocess

    by_q: dict[str, list[str]] = defaultdict(list)
    for line in path.read_text(encoding="utf-8").splitlines():
        by_q[line.split()[0]].append(line)
    keys, qrels, run = {}, [], []
    for q, lines in by_q.items():
        for line in lines:
            k = f"k{len(keys)}"
            d = line.split()[2]
            keys[k] = (q, d)
            qrels.append(f"{k} 0 {d} 1\n")
            run.extend(f"{k} {ln.split(' ', 1)[1]}\n" for ln in lines)
    (tmp / "q.txt").write_text("".join(qrels), encoding="utf-8")
    (tmp / "r.txt").write_text("".join(run), encoding="utf-8")
    out = subprocess.run([binary, "-q", "-m", "recip_rank", str(tmp / "q.txt"), str(tmp / "r.txt")],
                         capture_output=True, text=True, check=True).stdout
    pos: dict[str, dict[str, int]] = defaultdict(dict)
    for line in out.splitlines():
        _, k, value = line.split()
        if k != "all":
            q, d = keys[k]
            pos[q][d] = round(1 / float(value))
    return {q: sorted(p, key=p.get) for q, p in pos.items()}


def test_real_trec_eval_reads_the_written_order(trec_eval_binary, tmp_path):
    docs = {"q1": [("d10", 1.0), ("d9", 1.0), ("a", 1.0), ("z", 0.5)],  # ties, listed against docno order
            "q2": [("x", 1.00000001), ("y", 1.00000002)],  # float32-equal, increasing
            "q3": [("b", 16777216.0), ("a", 16777217.0)],  # above 2^24
            "q4": [("m", 3.5), ("n", -2.0)]}  # kept as they are
    q, d, s, r = [], [], [], []
    for qid, items in docs.items():
        for i, (doc, score) in enumerate(items, 1):
            q.append(qid), d.append(doc), s.append(score), r.append(i)
    run = Run(frame=pl.DataFrame({"query_id": q, "doc_id": d, "score": s, "rank": r}, schema=RUN_SCHEMA),
              queries=tuple(docs))
    path = tmp_path / "run.trec"
    write_trec_run(run, path, sidecar=False)
    assert order_trec_eval_binary(trec_eval_binary, path, tmp_path) == per_query(run.frame)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(runs())
def test_real_trec_eval_reads_written_random_runs(trec_eval_binary, run):
    if run.frame.height == 0:
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.trec"
        write_trec_run(run, path, sidecar=False)
        assert order_trec_eval_binary(trec_eval_binary, path, Path(tmp)) == per_query(run.frame)

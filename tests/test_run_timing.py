"""Per-query timing in runs (issue 23): read strictly, written back, summarised by nearest rank.

Figures are worked by hand: for latencies 1..20 ms the median is 10.5, p95
is the 19th value (ceil(0.95 x 20) = 19), p99 the 20th.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from converters import json_run, json_run_dump, json_run_fast, json_run_lines
from trec_bridge.errors import InvalidInput
from trec_bridge.timing import nearest_rank, timing_summary

S5 = Path(__file__).resolve().parents[1] / "golden" / "S5"
HEAD = {"format": "trec-bridge.run", "version": 1, "dataset_id": "d", "run_id": "r"}


def test_nearest_rank_by_hand():
    values = [float(v) for v in range(1, 21)]
    assert nearest_rank(values, 95) == 19.0 and nearest_rank(values, 99) == 20.0 and nearest_rank(values, 50) == 10.0
    assert nearest_rank([5.0], 99) == 5.0
    timing = {f"q{i}": {"latency_ms": v} for i, v in enumerate(reversed(values))}
    s = timing_summary(timing, list(timing))
    assert (s["median"], s["p95"], s["p99"], s["max"], s["timed"]) == (10.5, 19.0, 20.0, 20.0, 20)
    assert [r["latency_ms"] for r in s["slowest"]] == [20.0, 19.0, 18.0, 17.0, 16.0]


def test_missing_timing_is_absent_never_zero():
    assert timing_summary(None, ["q1"]) is None
    assert timing_summary({"q1": {"requested_at": "2026-05-01T09:30:00Z"}}, ["q1", "q2"]) is None
    s = timing_summary({"q1": {"latency_ms": 8}}, ["q1", "q2", "q3"])
    assert (s["timed"], s["untimed"], s["median"]) == (1, 2, 8)


def _write(tmp_path, doc, name="run.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("reader", [json_run.load_run, json_run_fast.load_run])
@pytest.mark.parametrize("timing,code", [
    ({"q9": {"latency_ms": 1}}, "E_RUN_TIMING"),  # a query the run has no record of
    ({"q1": {"latency_ms": -1}}, "E_JSON_SCHEMA"),
    ({"q1": {"latency_ms": "12"}}, "E_JSON_SCHEMA"),
    ({"q1": {}}, "E_JSON_SCHEMA"),  # an empty record says nothing
    ({"q1": {"latency_ms": 1, "extra": 2}}, "E_JSON_SCHEMA"),
    ({"q1": {"requested_at": "2026-13-01T00:00:00Z"}}, "E_RUN_TIMING"),
    ({"q1": {"requested_at": "2026-05-01 09:30"}}, "E_RUN_TIMING"),  # no offset
])
def test_timing_is_read_strictly(reader, timing, code, tmp_path):
    path = _write(tmp_path, {**HEAD, "rankings": {"q1": ["a"]}, "failures": {"q2": {"reason": "x"}}, "timing": timing})
    with pytest.raises(InvalidInput) as exc:
        reader(path)
    assert exc.value.code == code, exc.value


def test_non_finite_latency_is_refused_by_the_parser(tmp_path):
    path = tmp_path / "run.json"
    path.write_text('{"format": "trec-bridge.run", "version": 1, "dataset_id": "d", "run_id": "r", '
                    '"rankings": {"q1": ["a"]}, "timing": {"q1": {"latency_ms": NaN}}}')
    with pytest.raises(InvalidInput):
        json_run_fast.load_run(path)


@pytest.mark.parametrize("reader", [json_run.load_run, json_run_fast.load_run])
def test_timing_of_ranked_and_failed_queries_is_carried(reader, tmp_path):
    timing = {"q1": {"latency_ms": 12.5, "requested_at": "2026-05-01T09:30:00.125+02:00"}, "q2": {"latency_ms": 0}}
    path = _write(tmp_path, {**HEAD, "rankings": {"q1": ["a"]}, "failures": {"q2": {"reason": "x"}}, "timing": timing})
    assert reader(path).metadata["timing"] == timing


def test_writers_round_trip_timing(tmp_path):
    run = json_run.load_run(S5 / "timed.json")
    for write, read, name in ((json_run.dump_run, json_run.load_run, "a.json"),
                              (json_run_dump.dump_run, json_run_fast.load_run, "b.json"),
                              (json_run_lines.dump_run_lines, json_run_lines.read_run_lines, "c.jsonl")):
        write(run, tmp_path / name)
        again = read(tmp_path / name)
        assert again.metadata["timing"] == run.metadata["timing"], name
    assert json.loads((tmp_path / "c.jsonl").read_text().splitlines()[1]) == {
        "query_id": "q1", "ranking": ["d2"], "latency_ms": 12.5, "requested_at": "2026-05-01T09:30:00.125Z"}


def test_json_lines_timing_on_records(tmp_path):
    head = {**HEAD, "format": "trec-bridge.run-lines"}
    lines = [head, {"query_id": "q1", "ranking": ["a"], "latency_ms": 3},
             {"query_id": "q2", "failure": {"reason": "t"}, "latency_ms": 30000}, {"query_id": "q3", "ranking": []}]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert json_run_lines.read_run_lines(path).metadata["timing"] == {"q1": {"latency_ms": 3},
                                                                       "q2": {"latency_ms": 30000}}
    for bad, code, line in (({"query_id": "q4", "ranking": [], "latency_ms": -2}, "E_JSON_SCHEMA", 5),
                            ({"query_id": "q4", "ranking": [], "requested_at": "yesterday"}, "E_RUN_TIMING", 5)):
        path.write_text("".join(json.dumps(x) + "\n" for x in lines + [bad]))
        with pytest.raises(InvalidInput) as exc:
            json_run_lines.read_run_lines(path)
        assert exc.value.code == code and exc.value.where.line == line, exc.value
    path.write_text("".join(json.dumps(x) + "\n" for x in [{**head, "timing": {"q1": {"latency_ms": 1}}}] + lines[1:]))
    with pytest.raises(InvalidInput) as exc:
        json_run_lines.read_run_lines(path)
    assert exc.value.code == "E_JSON_SCHEMA" and "own lines" in exc.value.message


def test_timing_in_terminal_json_and_html(tmp_path, capsys):
    from trec_bridge.cli.main import main

    dataset = S5.parent / "S1" / "dataset.json"
    code = main(["score", str(dataset), str(S5 / "timed.json"), "RR@2", "--json", str(tmp_path / "r.json"),
                 "--html", str(tmp_path / "r.html"), "--png-dir", str(tmp_path / "png")])
    out = capsys.readouterr().out
    assert (tmp_path / "png" / "latency.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert code == 2
    assert ("latency (4 timed queries, 1 without timing): median 26.25 ms, p95 30000 ms, p99 30000 ms, "
            "max 30000 ms (nearest-rank percentiles)") in out
    assert "slowest: q4 (30000 ms), q2 (40 ms), q1 (12.5 ms), q3 (7.25 ms)" in out
    page = (tmp_path / "r.html").read_text()
    assert '<h2 id="latency">Latency</h2>' in page and "<dt>median</dt><dd>26.25 ms</dd>" in page
    assert 'alt="latency of the slowest queries' in page
    main(["score", str(dataset), str(S5 / "base.json"), "RR@2", "--split", "test", "--json", str(tmp_path / "b.json"),
          "--png-dir", str(tmp_path / "png2")])
    assert "latency" not in capsys.readouterr().out
    assert not (tmp_path / "png2" / "latency.png").exists()
    assert "timing" not in json.loads((tmp_path / "b.json").read_text())

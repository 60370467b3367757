"""A TREC run read in parts (bounded memory, issue 7's W3) scores exactly like the run read whole.

Parts are made tiny here (a few bytes to a few hundred) so that every
boundary case happens: a query cut in the middle, a line longer than a part,
blank lines and CRLF at a cut, errors in a later part (their line numbers
must count the lines of the parts before).
"""
from __future__ import annotations

import hashlib
import json
import random
import re

import pytest

import converters.trec_run_parts as trec_run_parts
from converters.detect import load_dataset_any
from converters.trec_run import read_trec_run
from converters.trec_run_parts import read_trec_run_parts
from trec_bridge.cli.main import main
from trec_bridge.measures import parse_measures
from trec_bridge.model import QueryNotContiguous
from trec_bridge.policy import get_policy
from trec_bridge.scorer import score, score_parts

from .test_trec_run import REJECTIONS

MEASURES = parse_measures("nDCG@10 RR@5 R@20 P@5 AP Judged@10")
SEPARATORS = [" ", "\t", "  ", " \t"]


def _files(tmp_path, seed: int = 7) -> tuple[str, str]:
    """A run with ties, unsorted scores, a disagreeing rank column, mixed separators, blank and CRLF lines."""
    rnd = random.Random(seed)
    run_lines, qrels_lines = [], []
    for q in range(1, 31):
        n = rnd.choice([1, 2, 5, 17, 40])
        for d in range(n):
            score = rnd.choice([round(rnd.uniform(0, 10), 2), 5.0])  # 5.0 often: ties
            sep = rnd.choice(SEPARATORS)
            end = rnd.choice(["\n", "\n", "\r\n", "\n\n"])
            run_lines.append(sep.join([f"q{q}", "Q0", f"d{d}", str(rnd.randint(0, n)), str(score), "tag"]) + end)
            if rnd.random() < 0.3:
                qrels_lines.append(f"q{q} 0 d{d} {rnd.choice([0, 1, 2, 3, -1])}\n")
        qrels_lines.append(f"q{q} 0 unretrieved{q} {rnd.choice([1, 2])}\n")
    qrels_lines.append("q99 0 d1 1\n")  # judged, never ranked: a missing query
    (tmp_path / "qrels.txt").write_text("".join(qrels_lines))
    (tmp_path / "run.txt").write_bytes("".join(run_lines).encode())
    return str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt")


def _table(result) -> list:
    return [(q.query_id, q.status, q.relevant, q.retrieved, q.values, dict(q.exact)) for q in result.queries]


# the quick tier keeps two part sizes (a query split at almost every line, and a few per part); the rest is slow
@pytest.mark.parametrize("part_bytes", [pytest.param(1, marks=pytest.mark.slow), 9, 64,
                                        pytest.param(333, marks=pytest.mark.slow),
                                        pytest.param(1 << 20, marks=pytest.mark.slow)])
@pytest.mark.parametrize("policy", ["strict", "trec_eval", "ir_measures"])
@pytest.mark.parametrize("order", ["score", "rank"])
def test_parts_score_like_the_whole_run(tmp_path, part_bytes, policy, order):
    qrels, run = _files(tmp_path)
    dataset = load_dataset_any(qrels)
    parts = list(read_trec_run_parts(run, order=order, part_bytes=part_bytes))
    assert len(parts) > 1 or part_bytes == 1 << 20
    # an emulated policy refuses what its tool does not print (trec_eval has no Judged@k)
    measures = [m for m in MEASURES if not (policy == "trec_eval" and m.family == "Judged")]
    whole = score(dataset, read_trec_run(run, order=order), measures, get_policy(policy))
    in_parts = score_parts(dataset, iter(parts), measures, get_policy(policy))
    assert _table(in_parts) == _table(whole)
    assert {k: (m.value, m.exact, m.eligible) for k, m in in_parts.means.items()} == \
           {k: (m.value, m.exact, m.eligible) for k, m in whole.means.items()}
    assert in_parts.order == whole.order and in_parts.missing == whole.missing
    assert policy != "strict" or whole.missing == ["q99"]


def _first_field(line: bytes) -> bytes | None:
    fields = line.split(None, 1)
    return fields[0] if fields else None


@pytest.mark.parametrize("part_bytes,probes", [(1, (1,)), (40, (1,)), (64, (8, 16)), (333, (16, 64)),
                                               (333, (1 << 16,)), (1000, (64, 256))])
@pytest.mark.parametrize("long_query", [False, True])
def test_pieces_hold_whole_queries_as_many_as_a_part_allows(tmp_path, monkeypatch, part_bytes, probes, long_query):
    """Each piece ends where the last query starting within a part begins, found from the part's last
    ``probes`` bytes or, when those show none, from the whole part (grown while one query fills it);
    the pieces put together are the file, and no query is in two pieces."""
    _, run = _files(tmp_path)
    data = open(run, "rb").read()
    if long_query:  # a query longer than any part (one long line, then many lines), in the middle of the file
        middle = data.index(b"\nq16", len(data) // 2) + 1
        lines = [b"q15b Q0 " + b"x" * 1500 + b" 1 1.0 tag\n"] + [b"q15b Q0 d%d 1 1.0 tag\n" % i for i in range(300)]
        data = data[:middle] + b"".join(lines) + data[middle:]
        open(run, "wb").write(data)
    monkeypatch.setattr(trec_run_parts, "_PROBES", probes)
    with open(run, "rb") as fh:
        pieces = [piece for piece, _, _ in trec_run_parts._line_pieces(fh, part_bytes, None, run)]
    with open(run, "rb") as fh:
        flags = [(at_start, last) for _, at_start, last in trec_run_parts._line_pieces(fh, part_bytes, None, run)]
    assert b"".join(pieces) == data
    assert flags == [(i == 0, i == len(pieces) - 1) for i in range(len(pieces))]
    queries = [{_first_field(line) for line in piece.splitlines()} - {None} for piece in pieces]
    assert sum(len(q) for q in queries) == len(set().union(*queries))  # no query in two pieces
    # where a cut may fall: after a query's last line, before the next query's first (blank lines in
    # between may go either way): (earliest, latest, end of the next query's first line)
    starts, previous, at = [], None, 0
    for line in data.splitlines(keepends=True):
        query = _first_field(line)
        if query is not None:
            if previous is not None and query != previous[0]:
                starts.append((previous[1], at, at + len(line)))
            previous = (query, at + len(line))
        at += len(line)
    offset = 0
    for piece in pieces[:-1]:
        assert piece.endswith(b"\n")
        end = offset + len(piece)
        fitting = [(first, last) for first, last, line_end in starts if first > offset and line_end <= offset + part_bytes]
        if fitting:  # at the last query start that fits in a part
            assert max(fitting)[0] <= end <= max(fitting)[1]
        else:  # the first query fills the part: still a cut where a query starts
            assert any(offset < first <= end <= last for first, last, _ in starts)
        offset = end


@pytest.mark.parametrize("lines,cut,query", [
    ([b"a 1\n", b"a 2\n", b"b 1\n", b"b 2\n", b"b 3\n"], 8, b"b"),
    ([b"a 1\n", b"b 1\n", b"\n", b"  b 2\n"], 4, b"b"),
    ([b"b 1\n", b"b 2\n", b"\t\n"], None, b"b"),  # one query only: no cut
    ([b"a 1\n", b"b 1\n", b"a 2\n"], 8, b"a"),  # the lines that end the range, not the query's first line
    ([b"\n", b" \n"], None, None),
])
def test_last_query_start(lines, cut, query):
    data = b"".join(lines)
    assert trec_run_parts._last_query_start(data, 0, len(data)) == (cut, query)
    shifted = b"xx\n" + data  # a range that starts after the data's start
    assert trec_run_parts._last_query_start(shifted, 3, len(shifted)) == (None if cut is None else cut + 3, query)


# the catalogue as it is, and (where a line is named) after a first line of another query: a part of its own
# in front, so every error is in a later part and its line number counts that line
_LATER = [pytest.param(content, code, line, False, id=name) for name, content, code, line in REJECTIONS] + [
    pytest.param(content, code, line, True, id=f"{name}, after another query")
    for name, content, code, line in REJECTIONS if line is not None]


# 16 bytes in the quick tier; parts of one byte and of 40 (every catalogue case again) in the slow tier
@pytest.mark.parametrize("part_bytes", [pytest.param(1, marks=pytest.mark.slow), 16,
                                        pytest.param(40, marks=pytest.mark.slow)])
@pytest.mark.parametrize("content,code,line,after_another_query", _LATER)
def test_errors_in_a_later_part_name_the_same_line(tmp_path, monkeypatch, capsys, content, code, line, part_bytes,
                                                   after_another_query):
    content = content if isinstance(content, bytes) else content.encode("utf-8")
    if after_another_query:
        content, line = b"q0 Q0 z 1 1 t\n" + content, line + 1
    path = tmp_path / "run.txt"
    path.write_bytes(content)
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\n")
    monkeypatch.setattr(trec_run_parts, "PART_BYTES", part_bytes)
    assert main(["score", str(tmp_path / "qrels.txt"), str(path), "P@1"]) == 1
    err = capsys.readouterr().err
    where = f"[{code}] {path}" + (f":{line}" if line else "")
    assert re.search(re.escape(where) + r"[^0-9]", err), err


def test_a_query_split_across_parts_is_reported_and_the_cli_reads_the_run_whole(tmp_path, monkeypatch, capsys):
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("q1 0 a 1\nq2 0 c 1\n")
    run.write_text("q1 Q0 a 1 3 t\nq2 Q0 c 1 1 t\nq1 Q0 b 2 2 t\n")  # q1's lines are not together
    with pytest.raises(QueryNotContiguous):
        list(read_trec_run_parts(run, part_bytes=16))
    monkeypatch.setattr(trec_run_parts, "PART_BYTES", 16)
    assert main(["score", str(qrels), str(run), "P@2 RR", "--json", str(tmp_path / "r.json")]) == 0
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["means"]["P@2"]["exact"] == "1/2" and report["means"]["RR"]["exact"] == "1"


def test_the_report_fingerprints_the_bytes_read_in_parts(tmp_path, monkeypatch):
    qrels, run = _files(tmp_path)
    monkeypatch.setattr(trec_run_parts, "PART_BYTES", 100)
    out = tmp_path / "r.json"
    assert main(["score", qrels, run, "P@5", "--json", str(out)]) == 2  # q99 is missing
    report = json.loads(out.read_text())
    expected = hashlib.sha256((tmp_path / "run.txt").read_bytes()).hexdigest()
    assert report["fingerprints"]["inputs"]["run"]["sha256"] == expected


def test_a_slow_read_shows_progress_on_stderr_and_erases_it(tmp_path, monkeypatch, capsys):
    import trec_bridge.progress as progress

    qrels, run = _files(tmp_path)
    monkeypatch.setattr(progress, "DEFAULT_DELAY", 0.0)  # every read counts as slow
    monkeypatch.setattr(trec_run_parts, "PART_BYTES", 200)
    monkeypatch.setenv("TREC_BRIDGE_PROGRESS", "1")  # captured stderr is no terminal
    assert main(["score", qrels, run, "P@5"]) == 2
    err = capsys.readouterr().err
    assert f"\rreading {run} … 0s" in err
    assert err.endswith("\r")  # the line is erased before the command's own output


def test_no_progress_when_stderr_is_not_a_terminal(tmp_path, monkeypatch, capsys):
    import trec_bridge.progress as progress

    qrels, run = _files(tmp_path)
    monkeypatch.setattr(progress, "DEFAULT_DELAY", 0.0)
    monkeypatch.delenv("TREC_BRIDGE_PROGRESS", raising=False)
    assert main(["score", qrels, run, "P@5"]) == 2
    assert capsys.readouterr().err == ""


def test_the_judgments_errors_come_before_the_runs(tmp_path, capsys):
    (tmp_path / "qrels.txt").write_text("q1 0 a one\n")  # a bad grade
    (tmp_path / "run.txt").write_text("q1 Q0 a 1 1.0 t\nq1 Q0 a 2 0.5 t\n")  # a repeated document
    assert main(["score", str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"), "P@1"]) == 1
    err = capsys.readouterr().err
    assert "qrels.txt:1" in err and "E_RUN_DUPLICATE_DOC" not in err, err
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\n")
    assert main(["score", str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"), "P@1"]) == 1
    assert f"[E_RUN_DUPLICATE_DOC] {tmp_path / 'run.txt'}:2" in capsys.readouterr().err


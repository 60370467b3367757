"""The streaming run readers and writers (json_run_stream.py, json_run_lines.py, json_run_dump.dump_run_parts,
trec_run_write_parts.py) at the edges of their read buffers, against the exact reader and the whole-run writers.

A block of the file always holds whole lines, so what straddles a boundary is
a query's line longer than a block (the block grows), a repeated key or query
whose two spellings lie in different blocks, and a file cut short anywhere.
"""
from __future__ import annotations

import json

import pytest

from converters import json_entries, json_run, json_run_decode, json_run_dump, json_run_fast, json_run_lines, \
    trec_run_parts
from converters import strict_json as sj
from converters.trec_run import read_trec_run, write_trec_run
from trec_bridge.errors import InvalidInput

from .conftest import run_cli
from .test_json_fast import _outcome

BLOCKS = [1, 7, 64, 200, 1 << 20]  # bytes a block: every line longer than the smallest ones
RUN = {"format": "trec-bridge.run", "version": 1, "dataset_id": "ds", "run_id": "r", "system": {"k": [1, 2]},
       "rankings": {"q1": [{"doc_id": "a", "score": 2.5}, {"doc_id": "b", "score": 1}],
                    "q2": [{"doc_id": "x:1", "score": 0.5}, {"doc_id": "\u00e9t\u00e9", "score": -3e-7}],
                    "q3": ["p", "q"], "q4": [],
                    "q5": [{"doc_id": f"d{i}", "score": 100 - i} for i in range(40)]},
       "failures": {"q6": {"reason": "timeout", "kind": "timeout"}}}


def _written(doc: dict = RUN) -> str:
    """The document in the layout trec-bridge writes (one top-level member, one query a line)."""
    return sj.render(doc, json_run._LAYOUT)


def _streamed(block_bytes):
    return lambda p: json_run_fast.join_parts(list(json_run_fast.read_run_parts_fast(p, part_bytes=block_bytes)))


def _same_for_every_block(path) -> tuple:
    exact = _outcome(json_run.load_run, path)
    for block_bytes in BLOCKS:
        assert _outcome(_streamed(block_bytes), path) == exact, block_bytes
    return exact


def test_the_written_layout_streams_without_the_whole_document_readers(tmp_path, monkeypatch):
    path = tmp_path / "r.json"
    path.write_text(_written(), encoding="utf-8")
    expected = _outcome(json_run.load_run, path)
    assert expected[0] == "run"

    def refuse(*args, **kwargs):
        raise AssertionError("a whole-document reader was called")
    monkeypatch.setattr(json_run_fast, "_whole_parts", refuse)
    monkeypatch.setattr(json_run, "load_run", refuse)
    for block_bytes in BLOCKS:
        parts = list(json_run_fast.read_run_parts_fast(path, part_bytes=block_bytes))
        assert [q for p in parts for q in p.queries] == ["q1", "q2", "q3", "q4", "q5"]  # each query in one part
        assert sum(bool(p.failures) for p in parts) == 1 and parts[-1].failures  # the failures come with the last
        assert _outcome(lambda p: json_run_decode.join_parts(parts), path) == expected


def test_a_query_whose_ranking_straddles_a_block_is_read_whole(tmp_path, monkeypatch):
    """q5's line is 1.3 kB: with 64-byte blocks it spans twenty of them; its entries come back in order, as
    columns (the canonical path, not the per-query decoder)."""
    path = tmp_path / "r.json"
    doc = json.loads(json.dumps(RUN))
    doc["rankings"] = {"q5": RUN["rankings"]["q5"], "q7": [{"doc_id": "z", "score": 1.0}]}
    path.write_text(_written(doc))
    expected = _outcome(json_run.load_run, path)
    monkeypatch.setattr(json_run_decode, "decode_ranking", None)
    for block_bytes in BLOCKS:
        assert _outcome(_streamed(block_bytes), path) == expected


@pytest.mark.parametrize("edit, code", [
    # the repeated query is lines away from the first: another block whenever blocks are small
    (lambda t: t.replace('"q4": []', '"q1": []'), "E_JSON_DUPLICATE_KEY"),
    # the second "run_id" stands after the rankings, the first before: the head and the tail are parsed together
    (lambda t: t.replace('"failures": {', '"run_id": "s",\n  "failures": {'), "E_JSON_DUPLICATE_KEY"),
    # a repeated key inside one entry of a line longer than a block (the line is read whole)
    (lambda t: t.replace('{"doc_id": "d39", "score": 61}', '{"doc_id": "d39", "score": 61, "score": 62}'),
     "E_JSON_DUPLICATE_KEY"),
    (lambda t: t.replace('"doc_id": "d39"', '"doc_\\u0069d": "d39", "doc_id": "d39"'), "E_JSON_DUPLICATE_KEY"),
    (lambda t: t.replace('"score": 61}', '"score": NaN}'), "E_JSON_NUMBER"),
    (lambda t: t.replace('"score": 61}', '"score": 10000000000000000000}'), "E_JSON_NUMBER"),
    (lambda t: t.replace('"d39"', '"d\\ud83d"'), "E_ENCODING"),
    (lambda t: t.replace('"d39"', '"d 39"'), "E_JSON_SCHEMA"),
    (lambda t: t.replace('"score": 61}', '"score": 61, "x": 1}'), "E_JSON_SCHEMA"),
    (lambda t: t.replace('"score": 61}', '"score": "61"}'), "E_JSON_SCHEMA"),
    (lambda t: t.replace('"d38"', '"d39"'), "E_RUN_DUPLICATE_DOC"),
    (lambda t: t.replace('"q6": {"reason"', '"q5": {"reason"'), "E_RUN_QUERY_CONFLICT"),
    (lambda t: "\ufeff" + t, "E_BOM"),
    (lambda t: t.replace('"d39"', '"d\x0039"'), "E_NUL_BYTE"),
])
def test_a_refusal_anywhere_is_the_exact_readers_for_every_block_size(tmp_path, edit, code):
    path = tmp_path / "r.json"
    path.write_bytes(edit(_written()).encode("utf-8", "surrogatepass"))
    assert _same_for_every_block(path)[:2] == ("error", code)


SMALL = {**RUN, "rankings": {**RUN["rankings"], "q5": RUN["rankings"]["q5"][:3]}}


def _cuts(text: str) -> list[int]:
    """Every structural position (before each bracket, brace, colon, comma, quote and line end), short of the
    whole text."""
    return [i for i, ch in enumerate(text) if ch in '{}[]:,"\n' and text[:i].strip() != text.strip()]


def test_a_written_document_cut_anywhere_is_the_exact_readers_error(tmp_path):
    """Cut at every structural position, with small blocks and one block: never a run, always the exact
    reader's error (the fast readers never report one of their own)."""
    text = _written(SMALL)
    for i in _cuts(text):
        path = tmp_path / "cut.json"
        path.write_text(text[:i], encoding="utf-8")
        exact = _outcome(json_run.load_run, path)
        assert exact[0] == "error", i
        for block_bytes in (16, 1 << 20):
            assert _outcome(_streamed(block_bytes), path) == exact, (i, block_bytes)


def test_another_layout_further_on_is_read_by_the_whole_document_path(tmp_path):
    """A line holding two queries after lines in the written layout: the stream has handed parts on when it
    doubts; the rest comes from the whole-document reader, each query once."""
    text = _written().replace('"q3": ["p", "q"],\n    "q4": []', '"q3": ["p", "q"], "q4": []')
    path = tmp_path / "r.json"
    path.write_text(text)
    exact = _same_for_every_block(path)
    assert exact[0] == "run" and exact[2] == ("q1", "q2", "q3", "q4", "q5")


# ---------------------------------------------------------------- JSON Lines

HEADER = '{"format": "trec-bridge.run-lines", "version": 1, "dataset_id": "ds", "run_id": "r"}\n'


def _lines_text(doc: dict = RUN) -> str:
    lines = [json.dumps({"query_id": q, "ranking": r}, ensure_ascii=False) for q, r in doc["rankings"].items()]
    return HEADER + "\n".join(lines) + '\n{"query_id": "q6", "failure": {"reason": "timeout"}}\n'


def _lines_outcome(path, block_bytes):
    return _outcome(lambda p: json_run_decode.join_parts(list(json_run_lines.read_run_lines_parts(
        p, block_bytes=block_bytes))), path)


def test_json_lines_read_alike_with_every_block_size(tmp_path, monkeypatch):
    path = tmp_path / "r.jsonl"
    path.write_text(_lines_text(), encoding="utf-8")
    expected = _lines_outcome(path, 1 << 20)
    assert expected[0] == "run" and expected[2] == ("q1", "q2", "q3", "q4", "q5")
    assert expected[3] == {"q6": "timeout"}
    assert expected == _outcome(lambda p: json_run.load_run(p), _as_document(tmp_path, path))
    for block_bytes in BLOCKS:
        assert _lines_outcome(path, block_bytes) == expected, block_bytes


def _as_document(tmp_path, lines_path):
    """The same run as a run document (json_run_lines' format is the run format one query a line)."""
    doc = tmp_path / "same.json"
    doc.write_text(json.dumps({**{k: v for k, v in RUN.items() if k != "system"},
                               "failures": {"q6": {"reason": "timeout"}}}, ensure_ascii=False))
    return doc


@pytest.mark.parametrize("edit, code, line", [
    (lambda t: t.replace('{"query_id": "q4"', '{"query_id": "q1"'), "E_RUN_DUPLICATE_QUERY", 5),
    (lambda t: t.replace('{"doc_id": "d39", "score": 61}', '{"doc_id": "d39", "score": 61, "score": 62}'),
     "E_JSON_DUPLICATE_KEY", 6),
    (lambda t: t.replace('"d38"', '"d39"'), "E_RUN_DUPLICATE_DOC", 6),
    (lambda t: t.replace('"score": 61}', '"score": 1e400}'), "E_JSON_NUMBER", 6),
    (lambda t: t.replace('"d39"', '"d 39"'), "E_JSON_SCHEMA", 6),
])
def test_a_json_lines_refusal_names_its_line_for_every_block_size(tmp_path, edit, code, line):
    path = tmp_path / "r.jsonl"
    path.write_text(edit(_lines_text()), encoding="utf-8")
    outcome, *others = [_lines_outcome(path, block_bytes) for block_bytes in BLOCKS]
    assert all(other == outcome for other in others)
    assert outcome[:2] == ("error", code) and outcome[4] == line


def test_json_lines_cut_anywhere(tmp_path):
    """Cut at every structural position: a cut at a line's end leaves a shorter run (JSON Lines has no
    closing bracket); any other is an error naming the cut line; small blocks and one block agree."""
    text = _lines_text(SMALL)
    for i in _cuts(text) + [i + 1 for i, ch in enumerate(text[:-1]) if ch == "\n"]:
        path = tmp_path / "cut.jsonl"
        path.write_text(text[:i], encoding="utf-8")
        outcome, other = (_lines_outcome(path, block_bytes) for block_bytes in (16, 1 << 20))
        assert other == outcome, i
        whole_lines = text[:i].count("\n")
        if i == 0:
            assert outcome[:2] == ("error", "E_FILE_EMPTY")
        elif text[i - 1] == "\n" or text[i] == "\n":  # every line whole (the last one maybe without its end)
            records = whole_lines - 1 + (text[i] == "\n")
            assert outcome[0] == "run" and len(outcome[2]) + len(outcome[3]) == records, i
        else:
            assert outcome[0] == "error" and outcome[4] == whole_lines + 1, (i, outcome)


CANONICAL = {**RUN, "rankings": {q: r for q, r in RUN["rankings"].items() if q not in ("q3", "q4")}}  # all columns


@pytest.mark.parametrize("edit, code", [
    (lambda t: t, None),  # read whole: the halves' columns, joined, are the exact reader's
    (lambda t: t.replace('"doc_id": "a"', '"doc_id": "a b"'), "E_JSON_SCHEMA"),  # in the first half
    (lambda t: t.replace('"d39"', '"d 39"'), "E_JSON_SCHEMA"),  # in the second half
    (lambda t: t.replace('"score": 61}', '"score": NaN}'), "E_JSON_NUMBER"),
    (lambda t: t.replace('"d38"', '"d39"'), "E_RUN_DUPLICATE_DOC"),
    (lambda t: t.replace('{"doc_id": "d39", "score": 61}', '{"doc_id": "d39", "score": 61, "score": 62}'),
     "E_JSON_DUPLICATE_KEY"),
])
def test_a_block_read_in_two_halves_at_once_is_the_exact_readers(tmp_path, monkeypatch, edit, code):
    """With every block split (json_entries.SPLIT_ROWS = 1: q1 and q2 in one half, q5 in the other, the
    second read in the helper thread), a run document and its JSON Lines twin read as the exact reader reads
    them, a fault in either half included."""
    halves = []
    monkeypatch.setattr(json_entries, "SPLIT_ROWS", 1)
    monkeypatch.setattr(json_entries, "_cut", lambda counts, cut=json_entries._cut: halves.append(cut(counts))
                        or halves[-1])
    doc, lines = tmp_path / "r.json", tmp_path / "r.jsonl"
    doc.write_text(edit(_written(CANONICAL)), encoding="utf-8")
    lines.write_text(edit(_lines_text(CANONICAL)), encoding="utf-8")
    exact = _outcome(json_run.load_run, doc)
    assert _outcome(_streamed(1 << 20), doc) == exact
    assert exact[0] == "run" if code is None else exact[:2] == ("error", code)
    outcome = _lines_outcome(lines, 1 << 20)
    assert outcome[:2] == exact[:2] and (code is not None or outcome[1:3] == exact[1:3])
    assert 2 in halves  # q1 and q2 (2 + 2 entries) before the cut, q5 (40) after it


# ---------------------------------------------------------------- writing part by part


def _trec(tmp_path, queries: int = 30, docs: int = 20):
    run = tmp_path / "run.trec"
    lines = [f"q{q} Q0 d{q}_{d} {d + 1} {docs - d + (0.5 if d % 7 else 0)} tag" for q in range(queries)
             for d in range(docs)]
    run.write_text("\n".join(lines) + "\n")
    return run


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_trec_written_as_json_part_by_part_is_the_whole_writers_bytes(tmp_path, monkeypatch, suffix):
    source = _trec(tmp_path)
    whole = tmp_path / f"whole{suffix}"
    run = read_trec_run(source)
    run.dataset_id = "ds"
    (json_run_lines.dump_run_lines if suffix == ".jsonl" else json_run_dump.dump_run)(run, whole)
    monkeypatch.setattr(trec_run_parts, "PART_BYTES", 700)  # a dozen parts
    calls = []
    real = json_run_dump.dump_run_parts
    monkeypatch.setattr(json_run_dump, "dump_run_parts", lambda *a, **k: calls.append(1) or real(*a, **k))
    out = tmp_path / f"streamed{suffix}"
    code, _, err = run_cli("convert", "run", source, out, "--dataset-id", "ds")
    assert code == 0 and calls and "600 documents" in err
    assert out.read_bytes() == whole.read_bytes()


def test_json_written_as_trec_part_by_part_is_the_whole_writers_bytes(tmp_path):
    source = tmp_path / "r.json"
    source.write_text(_written())
    whole = tmp_path / "whole.trec"
    write_trec_run(json_run.load_run(source), whole, sidecar=False)
    for block_bytes, name in ((64, "a.trec"), (1 << 20, "b.trec")):
        from converters.trec_run_write_parts import write_trec_run_parts
        done = write_trec_run_parts(json_run_fast.read_run_parts_fast(source, part_bytes=block_bytes), tmp_path / name)
        assert done is not None and done.lines == 46
        assert (tmp_path / name).read_bytes() == whole.read_bytes()
        assert done.info.empty_queries == ["q4"] and done.info.failed_queries == ["q6"]
    code, _, err = run_cli("convert", "run", source, tmp_path / "cli.trec", "--no-sidecar")
    assert code == 0 and (tmp_path / "cli.trec").read_bytes() == whole.read_bytes()
    assert "1 empty and 1 failed queries" in err


# q3 unscored, q7 tied (both written n..1, their scores kept in the sidecar), q4 empty, q6 failed, metadata
WITH_SIDECAR = {**RUN, "rankings": {**RUN["rankings"], "q7": [{"doc_id": "t1", "score": 1.5},
                                                             {"doc_id": "t2", "score": 1.5}]}}


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_json_written_as_trec_with_its_sidecar_part_by_part_is_the_whole_writers_bytes(tmp_path, monkeypatch, suffix):
    """The default convert (with a sidecar) streams too: the TREC file and the sidecar are byte for byte the
    whole-run writer's, for every part size, and the sidecar reads the run back as it was."""
    source = tmp_path / f"r{suffix}"
    whole_run = json_run.document_to_run(WITH_SIDECAR, None)
    if suffix == ".jsonl":
        json_run_lines.dump_run_lines(whole_run, source)
    else:
        source.write_text(_written(WITH_SIDECAR))
    (tmp_path / "whole").mkdir()
    whole = tmp_path / "whole" / "out.trec"
    write_trec_run(whole_run, whole, sidecar=True)
    from converters.trec_run_write_parts import write_trec_run_parts
    for block_bytes in (64, 1 << 20):
        folder = tmp_path / f"b{block_bytes}"
        folder.mkdir()
        parts = (json_run_lines.read_run_lines_parts(source, block_bytes=block_bytes) if suffix == ".jsonl"
                 else json_run_fast.read_run_parts_fast(source, part_bytes=block_bytes))
        done = write_trec_run_parts(parts, folder / "out.trec", sidecar=True)
        assert done is not None and done.lines == 48 and done.info.sidecar == str(folder / "out.trec.manifest.json")
        assert (folder / "out.trec").read_bytes() == whole.read_bytes()
        assert (folder / "out.trec.manifest.json").read_bytes() == (tmp_path / "whole" / "out.trec.manifest.json"
                                                                    ).read_bytes()
        assert sorted(done.info.synthetic_queries) == ["q3", "q7"]
    calls = []
    real = write_trec_run_parts
    import converters.trec_run_write_parts as wp
    monkeypatch.setattr(wp, "write_trec_run_parts", lambda *a, **k: calls.append(k) or real(*a, **k))
    (tmp_path / "cli").mkdir()
    code, _, err = run_cli("convert", "run", source, tmp_path / "cli" / "out.trec")
    assert code == 0 and calls and calls[0]["sidecar"] is True and "out.trec.manifest.json" in err
    for name in ("out.trec", "out.trec.manifest.json"):
        assert (tmp_path / "cli" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes()
    back = read_trec_run(tmp_path / "cli" / "out.trec")  # the sidecar restores what TREC cannot hold
    assert back.queries == whole_run.queries and back.failures == whole_run.failures
    assert back.own_scores().to_list() == whole_run.own_frame().get_column("score").to_list()


def test_the_streamed_sidecar_is_renamed_before_the_trec_file(tmp_path, monkeypatch):
    """A kill between the two renames must leave a sidecar naming the new bytes beside the old file (refused on
    reading), never the new file without its sidecar: the sidecar, written second, is renamed first."""
    import os as _os

    source = tmp_path / "r.json"
    source.write_text(_written(WITH_SIDECAR))
    out = tmp_path / "out.trec"
    renamed = []
    real = _os.replace
    monkeypatch.setattr(_os, "replace", lambda a, b: renamed.append(str(b)) or real(a, b))
    code, _, _ = run_cli("convert", "run", source, out)
    assert code == 0
    assert [p for p in renamed if p.startswith(str(out))] == [str(out) + ".manifest.json", str(out)]


def test_no_sidecar_streamed_removes_a_stale_sidecar(tmp_path):
    """--no-sidecar over a file that had one: the streamed writer removes the old sidecar with the new file (it
    would not match the new bytes), as the whole-run writer does."""
    source = tmp_path / "r.json"
    source.write_text(_written(WITH_SIDECAR))
    out = tmp_path / "out.trec"
    assert run_cli("convert", "run", source, out)[0] == 0 and (tmp_path / "out.trec.manifest.json").exists()
    code, _, err = run_cli("convert", "run", source, out, "--no-sidecar")
    assert code == 0 and not (tmp_path / "out.trec.manifest.json").exists()
    assert "1 empty and 1 failed queries" in err


def test_a_refused_part_leaves_the_refusal_to_the_whole_writer(tmp_path):
    """An ID JSON cannot hold (a tab is not a TREC separator... but a bare control character is refused by the
    JSON writer): the streamed writer writes nothing and the whole-run path gives its own message."""
    source = tmp_path / "run.trec"
    source.write_bytes(b"q1 Q0 a 1 2 t\nq2 Q0 b\x01c 1 1 t\n")
    code, _, err = run_cli("convert", "run", source, tmp_path / "out.json", "--dataset-id", "ds")
    assert code != 0 and not (tmp_path / "out.json").exists()
    try:
        run = read_trec_run(source)
        run.dataset_id = "ds"
        json_run_dump.dump_run(run, tmp_path / "whole.json")
        expected = None
    except InvalidInput as exc:
        expected = exc.code
    assert expected is not None and expected in err


@pytest.mark.parametrize("late", [b"q29 Q0 b\x01c 1 1 tag\n",  # refused by the JSON writer, in the last part
                                  b"q3 Q0 again 21 0.1 tag\n"])  # q3's lines split by others': read whole
def test_a_late_part_the_pipeline_doubts_writes_nothing(tmp_path, monkeypatch, late):
    """The parts flow through three threads one ahead of each other; a doubt in the last of a dozen parts still
    leaves no file and hands the run to the whole-run path."""
    source = _trec(tmp_path)
    source.write_bytes(source.read_bytes() + late)
    monkeypatch.setattr(trec_run_parts, "PART_BYTES", 700)
    out = tmp_path / "streamed.json"
    parts = trec_run_parts.read_trec_run_parts(source, fingerprint=False)
    assert json_run_dump.dump_run_parts(parts, out, ("ds", None)) is None
    assert not out.exists() and not list(tmp_path.glob(".streamed*"))


def _fresh_blocks_and_keys(part):
    """What the scorer would compute from the part's frame, without what the reader handed over."""
    from trec_bridge.model import Run

    fresh = Run(frame=part.frame, queries=part.queries)
    return fresh.blocks(), fresh.pair_keys()


@pytest.mark.parametrize("block_bytes", [64, 1 << 20])
def test_the_parts_hand_the_scorer_the_blocks_and_keys_of_their_frames(tmp_path, block_bytes):
    """A JSON part remembers its query blocks and pair keys (json_run_decode.columns_part): they must be what
    Run.blocks() and Run.pair_keys() give on its frame, empty rankings and canonical or decoded entries alike."""
    import numpy as np

    path = tmp_path / "r.json"
    path.write_text(_written(), encoding="utf-8")
    lines = tmp_path / "r.jsonl"
    json_run_lines.dump_run_lines(json_run.load_run(path), lines)
    parts = [*json_run_fast.read_run_parts_fast(path, part_bytes=block_bytes),
             *json_run_lines.read_run_lines_parts(lines, block_bytes=block_bytes)]
    assert sum(p.frame.height for p in parts) == 2 * 46
    for part in parts:
        (starts, queries), keys = _fresh_blocks_and_keys(part)
        assert np.array_equal(part.blocks()[0], starts) and part.blocks()[1] == queries
        assert np.array_equal(part.pair_keys(), keys)

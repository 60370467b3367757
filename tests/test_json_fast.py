"""The fast run JSON reader (converters/json_run_fast.py) against the exact one (json_run.load_run).

The fast reader must give the same run for every document the exact reader
accepts and the same error (code, message, location) for every document it
refuses, however the document is laid out: it only ever trusts msgspec where
the bytes vouch for it, and hands everything else to the exact reader.
"""
from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from converters import json_run, json_run_fast
from trec_bridge.errors import InvalidInput

ID_CHARS = st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp", "Cf"), blacklist_characters="\u00a0")
IDS = st.text(ID_CHARS, min_size=1, max_size=6)
SCORES = st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-(2**63), 2**63 - 1),
                   st.sampled_from([0.1, 1e-7, 1e16, 12345678901234567, 2.0**63, 1e19, -0.0]))


def _outcome(read, path):
    try:
        run = read(path)
    except InvalidInput as exc:
        return ("error", exc.code, exc.message, exc.where.json_path, exc.where.line, exc.where.query, exc.where.doc)
    return ("run", run.frame.rows(), run.queries, run.failures, run.run_id, run.dataset_id, run.dataset_version,
            run.metadata, run.order_source)


def _same(path, part_bytes=None):
    exact = _outcome(json_run.load_run, path)
    if part_bytes is None:
        fast = _outcome(json_run_fast.load_run, path)
    else:
        fast = _outcome(lambda p: json_run_fast.join_parts(list(json_run_fast.read_run_parts_fast(
            p, part_bytes=part_bytes))), path)
    assert fast == exact
    return exact


@st.composite
def documents(draw):
    queries = draw(st.lists(IDS, max_size=4, unique=True))
    rankings = {}
    for q in queries:
        docs = draw(st.lists(IDS, max_size=5))
        kind = draw(st.sampled_from(["scored", "bare", "mixed"]))
        entries = []
        for d in docs:
            if kind == "bare" or (kind == "mixed" and draw(st.booleans())):
                entries.append(d)
            elif kind == "mixed" and draw(st.booleans()):
                entries.append({"doc_id": d})
            else:
                entries.append({"doc_id": d, "score": draw(SCORES)})
        rankings[q] = entries
    doc = {"format": "trec-bridge.run", "version": 1, "dataset_id": "ds", "run_id": draw(IDS), "rankings": rankings}
    if draw(st.booleans()):
        doc["system"] = {"model": draw(IDS)}
    if draw(st.booleans()):
        doc["failures"] = {draw(IDS): {"reason": "timeout"}}
    return doc


def _text(doc, rng: random.Random) -> str:
    style = rng.choice(["compact", "indent", "ascii", "spaces", "canonical", "canonical", "written", "written"])
    if style == "written":  # the layout json_run_dump writes: the streaming reader (json_run_stream) reads it
        from converters import strict_json as sj
        return sj.render(doc, json_run._LAYOUT)
    if style == "canonical":  # the entries as trec-bridge writes them: the columnar path reads these
        return json.dumps(doc, ensure_ascii=False)
    if style == "compact":
        return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    if style == "indent":
        return json.dumps(doc, ensure_ascii=False, indent=rng.choice([1, 2, "\t"]))
    if style == "ascii":
        return json.dumps(doc)  # every non-ASCII character escaped: the spans with a backslash take the exact path
    return json.dumps(doc, ensure_ascii=False, separators=(" , ", " : "))


MUTATIONS = [
    lambda t, r: t,
    lambda t, r: t.replace('"score": ', '"score": 1, "score": ', 1).replace('"score":', '"score":1,"score":', 1),
    lambda t, r: t.replace('"doc_id"', '"doc\\u005fid"', 1),
    lambda t, r: t.replace('"rankings"', '"rankings": {}, "rankings"', 1),
    lambda t, r: t[: r.randrange(len(t) + 1)],  # truncated anywhere
    lambda t, r: "\ufeff" + t,
    lambda t, r: t.replace(": 0.1", ": NaN", 1).replace(":0.1", ":NaN", 1),
    lambda t, r: t.replace('"score": ', '"score": 1e400, "x": ', 1),
    lambda t, r: t.replace('"ds"', '"d s"', 1),
    lambda t, r: t + " x",
    lambda t, r: t.replace("[", "[[", 1),
    lambda t, r: t.replace('"score": ', '"score": 123456789012345678901234, "y": ', 1),
]


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(doc=documents(), seed=st.integers(0, 2**32), mutation=st.integers(0, len(MUTATIONS) - 1),
       part_bytes=st.sampled_from([None, 1, 50, 200]))
def test_fast_and_exact_agree_on_any_document(tmp_path_factory, doc, seed, mutation, part_bytes):
    rng = random.Random(seed)
    text = MUTATIONS[mutation](_text(doc, rng), rng)
    path = tmp_path_factory.mktemp("j") / "run.json"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    _same(path, part_bytes)


RUN = {"format": "trec-bridge.run", "version": 1, "dataset_id": "ds", "run_id": "r",
       "rankings": {"q1": [{"doc_id": "a", "score": 2.5}, {"doc_id": "b", "score": 1}],
                    "q2": [{"doc_id": "x:1", "score": 0.5}],  # ':' in an ID: that span is read exactly
                    "q3": ["p", "q"], "q4": []},
       "failures": {"q5": {"reason": "timeout", "kind": "timeout"}}, "system": {"k": [1, 2]}}


def test_a_run_read_in_parts_is_the_whole_run(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(RUN, indent=2))
    whole = _same(path)
    assert whole[0] == "run"
    for rows in (1, 40, 80, 100000):
        parts = list(json_run_fast.read_run_parts_fast(path, part_bytes=rows))
        assert all(set(p.queries).isdisjoint(o.queries) for p in parts for o in parts if o is not p)
        assert [q for p in parts for q in p.queries] == ["q1", "q2", "q3", "q4"]
        assert sum(bool(p.failures) for p in parts) == 1  # the failures travel once
        _same(path, rows)


def test_a_repeated_key_in_a_later_part_is_the_exact_readers_error(tmp_path):
    """The repeat sits in the last query, after parts were handed on: the error is still the exact one."""
    text = json.dumps(RUN).replace('"q4": []', '"q4": [{"doc_id": "z", "doc_id": "y"}]')
    path = tmp_path / "r.json"
    path.write_text(text)
    outcome = _same(path, part_bytes=1)
    assert outcome[:2] == ("error", "E_JSON_DUPLICATE_KEY")


def test_a_repeated_query_key_is_refused_not_merged(tmp_path):
    text = json.dumps(RUN).replace('"q3": ["p", "q"]', '"q1": ["p", "q"]')
    path = tmp_path / "r.json"
    path.write_text(text)
    assert _same(path)[:2] == ("error", "E_JSON_DUPLICATE_KEY")


def test_truncated_at_every_structural_position(tmp_path):
    text = json.dumps(RUN, indent=1)
    cuts = [i for i, ch in enumerate(text) if ch in '{}[]:,"'] + [len(text) - 1]
    for i in cuts:
        path = tmp_path / f"cut{i}.json"
        path.write_text(text[:i])
        outcome = _same(path)
        assert outcome[0] == "error", i


def test_a_large_float_is_read_but_a_large_integer_is_refused(tmp_path):
    path = tmp_path / "r.json"
    path.write_text('{"format": "trec-bridge.run", "version": 1, "dataset_id": "d", "run_id": "r", '
                    '"rankings": {"q": [{"doc_id": "a", "score": 1e300}, {"doc_id": "b", "score": 1e19}]}}')
    assert _same(path)[0] == "run"
    path.write_text(path.read_text().replace("1e19", "10000000000000000000"))
    assert _same(path)[:2] == ("error", "E_JSON_NUMBER")


def test_another_layout_is_left_to_the_detector(tmp_path):
    path = tmp_path / "ranx.json"
    path.write_text('{"q1": {"a": 1.0}}')
    assert json_run_fast.read_run_parts_fast(path) is None


def test_a_written_run_is_read_as_columns_without_an_object_per_entry(tmp_path, monkeypatch):
    """What trec-bridge writes (json_run_dump) is read by the columnar path: msgspec never decodes an entry."""
    from converters import json_run_dump
    doc = json.loads(json.dumps(RUN))
    doc["rankings"]["q3"] = []  # the columnar path takes scored entries only
    source = tmp_path / "src.json"
    source.write_text(json.dumps(doc))
    path = tmp_path / "written.json"
    json_run_dump.dump_run(json_run.load_run(source), path)
    expected = _outcome(json_run.load_run, path)
    from converters import json_run_decode
    monkeypatch.setattr(json_run_decode, "decode_ranking", None)
    monkeypatch.setattr(json_run, "load_run", None)  # nor is the exact reader asked
    for part_bytes in (1, 60, 10**6):
        assert _outcome(lambda p: json_run_fast.join_parts(list(json_run_fast.read_run_parts_fast(
            p, part_bytes=part_bytes))), path) == expected


def test_a_clean_document_never_reaches_the_exact_reader(tmp_path, monkeypatch):
    """The fast path is really taken: with ':' and escapes only in some spans, the exact whole-file reader is
    never called (a span with a backslash or ':' in an ID is parsed exactly on its own)."""
    doc = json.loads(json.dumps(RUN))
    doc["rankings"]["q6"] = [{"doc_id": "caf\u00e9", "score": 1.0}]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))  # ensure_ascii: q6's span holds a backslash escape
    expected = _outcome(json_run.load_run, path)

    def refuse(*args, **kwargs):
        raise AssertionError("the exact whole-file reader was called")
    monkeypatch.setattr(json_run, "load_run", refuse)
    assert _outcome(json_run_fast.load_run, path) == expected


GOLDEN = __import__("pathlib").Path(__file__).resolve().parent.parent / "golden"


@pytest.mark.parametrize("as_trec", [False, True])
def test_a_dataset_with_its_own_chunk_map_collapses_a_run_read_in_parts(tmp_path, as_trec):
    """S2's chunk run scored against S1's dataset carrying S2's chunk map itself (no --chunk-map): the run
    must be collapsed as with --chunk-map (S2's first case: R@2 = 2/3, RR@2 = 1/2), never scored as chunk
    IDs.  Before, a run read in parts silently skipped the dataset's own chunk map."""
    from trec_bridge.cli.main import main

    dataset = json.loads((GOLDEN / "S1" / "dataset.json").read_text())
    dataset["chunk_map"] = json.loads((GOLDEN / "S2" / "chunk_map.json").read_text())
    (tmp_path / "ds.json").write_text(json.dumps(dataset))
    run = tmp_path / ("run.trec" if as_trec else "run.json")
    if as_trec:
        run.write_text("q2 Q0 d3a 1 3 r\nq2 Q0 d3b 2 2 r\nq2 Q0 d4a 3 1 r\nq3 Q0 d1a 1 3 r\nq3 Q0 d1b 2 2 r\n"
                       "q3 Q0 d5a 3 1 r\n")
    else:
        run.write_bytes((GOLDEN / "S2" / "run_chunks.json").read_bytes())
    out = tmp_path / "rep.json"
    main(["score", str(tmp_path / "ds.json"), str(run), "R@2 RR@2", "--split", "test", "--json", str(out)])
    means = json.loads(out.read_text())["means"]
    assert (means["R@2"]["exact"], means["RR@2"]["exact"]) == ("2/3", "1/2")


# ---------------------------------------------------------------- writing

from converters import json_run_dump  # noqa: E402
from trec_bridge.model import RUN_SCHEMA, Run  # noqa: E402

WRITE_IDS = st.text(st.characters(blacklist_categories=("Cs",)), min_size=0, max_size=5)  # bad IDs too
WRITE_SCORES = st.one_of(st.none(), st.floats(), st.sampled_from([1e-4, 9.99e-5, 1e16, 9999999999999998.0, -0.0]))


@st.composite
def runs(draw):
    import polars as pl
    queries = draw(st.lists(WRITE_IDS, max_size=4, unique=True))
    rows = []
    for q in queries:
        for rank, d in enumerate(draw(st.lists(WRITE_IDS, max_size=4)), 1):
            rows.append((q, d, draw(WRITE_SCORES), rank))
    frame = pl.DataFrame(rows, schema=RUN_SCHEMA, orient="row")
    failures = {draw(WRITE_IDS): "timeout"} if draw(st.booleans()) else {}
    system = {"k": draw(WRITE_IDS)} if draw(st.booleans()) else None
    return Run(frame=frame, queries=tuple(queries), failures=failures, run_id=draw(st.sampled_from(["r", "r 1"])),
               dataset_id="ds", dataset_version=None, metadata={"system": system} if system else {}, order=None,
               order_source=draw(st.sampled_from(["list", "score"])))


def _written(write, run, path):
    try:
        write(run, path)
    except InvalidInput as exc:
        return ("error", exc.code, exc.message, exc.where.json_path)
    return ("bytes", path.read_bytes())


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(run=runs())
def test_the_fast_writer_writes_the_exact_writers_bytes_or_its_refusal(tmp_path_factory, run):
    folder = tmp_path_factory.mktemp("w")
    assert _written(json_run_dump.dump_run, run, folder / "fast.json") == \
        _written(json_run.dump_run, run, folder / "exact.json")


def test_the_fast_writer_escapes_and_spells_numbers_as_json_dumps(tmp_path, monkeypatch):
    import polars as pl
    rows = [("q", 'a"b', 1e-5, 1), ("q", "c\\d", 0.1, 2), ("q", "e", None, 3), ("q", "f", 1e16, 4),
            ("q", "g", -0.0, 5), ("q", "h", 123.0, 6)]
    run = Run(frame=pl.DataFrame(rows, schema=RUN_SCHEMA, orient="row"), queries=("q", "empty"), failures={},
              run_id="r", dataset_id="ds", dataset_version=None, metadata={}, order=None, order_source="list")
    exact = _written(json_run.dump_run, run, tmp_path / "e.json")
    monkeypatch.setattr(json_run, "dump_run", None)  # the fast path must not hand this run over
    fast = _written(json_run_dump.dump_run, run, tmp_path / "f.json")
    assert fast == exact
    text = fast[1].decode()
    assert ('[{"doc_id": "a\\"b", "score": 1e-05}, {"doc_id": "c\\\\d", "score": 0.1}, "e", '
            '{"doc_id": "f", "score": 1e+16}, {"doc_id": "g", "score": -0.0}, {"doc_id": "h", "score": 123.0}]') in text
    assert '"empty": []' in text

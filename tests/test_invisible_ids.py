"""IDs holding invisible characters are refused by every reader with E_ID_INVISIBLE (issue 14, item 9).

``d1`` and ``d\\u200b1`` look identical but are two documents to every tool, so a
judged document silently became an unjudged one.  One rule
(converters/invisible.py) is applied by the TREC byte check, the strict JSON
ID check (and its schema) and the Python-object readers.
"""
from __future__ import annotations

import json
import time

import pytest

from converters import invisible
from converters import strict_json as sj
from trec_bridge.errors import InvalidInput

INVISIBLE = [0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E,
             0x2060, 0x2061, 0x2064, 0x2066, 0x2067, 0x2068, 0x2069, 0x061C, 0xFEFF]
VISIBLE_NON_ASCII = ["é", "文書", "–", "—", "‘", "€", "™", "\u2070", "\u2065", "\u202f"[:0] + "ü"]


def _code(call) -> InvalidInput:
    with pytest.raises(InvalidInput) as exc:
        call()
    return exc.value


@pytest.mark.parametrize("cp", INVISIBLE, ids=[f"U+{c:04X}" for c in INVISIBLE])
def test_trec_run_refuses_invisible_anywhere_in_an_id(tmp_path, cp):
    from converters.trec_run import read_trec_run

    path = tmp_path / "run.txt"
    path.write_text(f"q1 Q0 d2 1 3.0 base\nq1 Q0 d{chr(cp)}1 2 2.0 base\n", encoding="utf-8")
    err = _code(lambda: read_trec_run(path))
    assert err.code == "E_ID_INVISIBLE" and err.where.line == 2
    assert f"U+{cp:04X}" in err.message


@pytest.mark.parametrize("cp", [0x200B, 0x202E, 0x2066, 0xFEFF])
def test_trec_run_parts_refuse_invisible(tmp_path, cp):
    """The part reader (score's bounded-memory path) applies the same byte check."""
    from converters.trec_run_parts import read_trec_run_parts

    path = tmp_path / "run.txt"
    lines = [f"q{i // 3} Q0 d{i} {i % 3 + 1} {3 - i % 3}.0 t\n" for i in range(3000)]
    lines[2500] = f"q{2500 // 3} Q0 d{chr(cp)}x 2 2.0 t\n"
    path.write_text("".join(lines), encoding="utf-8")
    err = _code(lambda: list(read_trec_run_parts(path, part_bytes=4096)))
    assert err.code == "E_ID_INVISIBLE" and err.where.line == 2501


@pytest.mark.parametrize("cp", [0x200D, 0x2069])
def test_trec_qrels_and_query_files_refuse_invisible(tmp_path, cp):
    from converters.detect import read_query_ids
    from converters.trec_qrels import read_trec_qrels

    qrels = tmp_path / "qrels.txt"
    qrels.write_text(f"q1 0 d1 1\nq{chr(cp)}2 0 d4 1\n", encoding="utf-8")
    assert _code(lambda: read_trec_qrels(qrels)).code == "E_ID_INVISIBLE"
    queries = tmp_path / "queries.txt"
    queries.write_text(f"q1\nq2{chr(cp)}\n", encoding="utf-8")
    assert _code(lambda: read_query_ids(queries)).code == "E_ID_INVISIBLE"


@pytest.mark.parametrize("visible", VISIBLE_NON_ASCII)
def test_visible_non_ascii_ids_stay_accepted(tmp_path, visible):
    from converters.trec_run import read_trec_run

    path = tmp_path / "run.txt"
    path.write_text(f"q1 Q0 d{visible}1 1 3.0 base\n", encoding="utf-8")
    assert read_trec_run(path).frame.get_column("doc_id").to_list() == [f"d{visible}1"]
    assert sj.id_is_valid(f"d{visible}1")


@pytest.mark.parametrize("cp", INVISIBLE, ids=[f"U+{c:04X}" for c in INVISIBLE])
def test_json_ids_refuse_invisible(tmp_path, cp):
    from converters.json_dataset import load_dataset
    from converters.json_run import load_run

    assert not sj.id_is_valid(f"d{chr(cp)}1")
    run = {"format": "trec-bridge.run", "version": 1, "dataset_id": "x", "run_id": "r",
           "rankings": {"q1": [{"doc_id": f"d{chr(cp)}1", "score": 1.0}]}}
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run), encoding="utf-8")
    err = _code(lambda: load_run(path))
    assert err.code == "E_ID_INVISIBLE" and err.where.json_path == "$.rankings.q1[0].doc_id"
    ds = {"format": "trec-bridge.dataset", "version": 1, "dataset_id": "x", "grades": {"scale": [0, 1], "threshold": 1},
          "completeness": "pooled", "corpus": {"kind": "open"}, "queries": [{"query_id": f"q{chr(cp)}"}],
          "judgments": {}}
    path = tmp_path / "dataset.json"
    path.write_text(json.dumps(ds), encoding="utf-8")
    assert _code(lambda: load_dataset(path)).code == "E_ID_INVISIBLE"


def test_ranx_and_python_objects_refuse_invisible(tmp_path):
    from converters.interop import run_from_columns
    from converters.ranx_json import read_ranx_run

    path = tmp_path / "ranx.json"
    path.write_text(json.dumps({"q1": {"d\u200c1": 1.0}}), encoding="utf-8")
    assert _code(lambda: read_ranx_run(path)).code == "E_ID_INVISIBLE"
    assert _code(lambda: run_from_columns(["q1"], ["d\u2066"], [1.0])).code == "E_ID_INVISIBLE"


def test_schema_and_loader_agree_on_the_class():
    """The shipped schemas' ID pattern holds every invisible character (the schema and the loaders agree)."""
    import re

    bad = re.compile(sj.ID_BAD_CHARS)
    assert all(bad.search(chr(cp)) for cp in INVISIBLE)
    for name in ("dataset.v1.json", "run.v1.json"):
        assert sj.shipped_schema(name)["$defs"]["id"]["not"]["pattern"] == sj.ID_BAD_CHARS


def test_byte_search_matches_the_text_class():
    """The UTF-8 byte pattern and the character class are the same set (every code point checked)."""
    for cp in range(0x80, 0x30000):
        if 0xD800 <= cp < 0xE000:
            continue
        ch = chr(cp)
        assert (invisible.find_in_text(ch) == 0) == (invisible.find_in_bytes(("a" + ch).encode()) == 1), hex(cp)


def test_byte_search_is_cheap_on_a_non_ascii_file():
    """The TREC hot path: one regex scan, not a per-row check (7M lines of 24 bytes with dashes)."""
    raw = "q1 Q0 doc–1 1 3.0 tag\n".encode() * 1_000_000
    start = time.perf_counter()
    assert invisible.find_in_bytes(raw) == -1
    assert time.perf_counter() - start < 1.0

"""One format detector for every command, agreeing with the readers (issue 14, item 9).

``score`` used to decide "ranx or ours" from the first 64 KB (a regex for a
string-valued ``"format"``) while ``convert`` read the whole document: a
dataset whose ``format`` key came later was "not a ranx qrels" for one and
fine for the other.  Now ``converters.detect`` decides on the parsed document
the reader then uses; every command reads JSON inputs through it.
"""
from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from converters.detect import is_json, json_layout, load_dataset_any, load_run_any
from trec_bridge.cli.main import main
from trec_bridge.errors import InvalidInput

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
VALID = TESTS / "malformed" / "valid"


def _run(argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    return rc, out.getvalue(), err.getvalue()


def _late_format(tmp_path: Path, name: str, source: Path, pad_key: str, pad: int = 70_000) -> Path:
    """``source`` rewritten with ``format`` as its last key, after ``pad`` bytes of a padding field."""
    doc = json.loads(source.read_text())
    late = {pad_key: {"note": "x" * pad} if pad_key == "system" else "x" * pad}
    late.update({k: v for k, v in doc.items() if k != "format"})
    late["format"] = doc["format"]
    path = tmp_path / name
    path.write_text(json.dumps(late))
    assert path.read_bytes().find(b'"format"') > 65536
    return path


@pytest.fixture
def late(tmp_path):
    return (_late_format(tmp_path, "dataset.json", VALID / "dataset.json", "description"),
            _late_format(tmp_path, "run.json", VALID / "run.json", "system"))


def test_format_after_64kb_is_read_by_every_command(late, tmp_path):
    dataset, run = late
    rc, out, err = _run(["score", dataset, run, "P@1 RR", "--json", tmp_path / "r.json"])
    assert rc == 0, err
    means = json.loads((tmp_path / "r.json").read_text())["means"]
    assert means["P@1"]["exact"] == "2/3" and means["RR"]["exact"] == "5/6"  # as with valid/ (worked in catalogue.toml)
    rc, _o, err = _run(["stages", dataset, "--stage", f"a={run}", "--stage", f"b={VALID / 'run.json'}", "--k", "2"])
    assert rc == 0, err
    rc, _o, err = _run(["convert", "qrels", dataset, tmp_path / "q.trec"])
    assert rc == 0, err
    rc, _o, err = _run(["convert", "run", run, tmp_path / "r.trec"])
    assert rc == 0, err
    rc, _o, err = _run(["export", "dataset", dataset, "--to", "trec-qrels", "-o", tmp_path / "q2.trec"])
    assert rc == 0, err
    rc, _o, err = _run(["export", "run", run, "--to", "trec", "-o", tmp_path / "r2.trec"])
    assert rc == 0, err


def test_ranx_files_stay_ranx(tmp_path):
    """No ``format`` key, or a query that happens to be named "format" (its value an object): ranx."""
    for text in ('{"q1": {"d1": 2.0, "d2": 1.0}}', '{"format": {"d1": 2.0}, "q1": {"d2": 1.0}}'):
        path = tmp_path / "ranx.json"
        path.write_text(text)
        run = load_run_any(path)
        assert run.order_source == "score" and set(run.queries) <= {"q1", "format"}
    qrels = tmp_path / "qrels.json"
    qrels.write_text('{"q1": {"d1": 1}, "format": {"d2": 1}}')
    assert set(load_dataset_any(qrels).qrels.query_ids()) == {"q1", "format"}


@pytest.mark.parametrize("kind, source, expected", [
    ("run", VALID / "run.json", "trec-bridge.run"), ("dataset", VALID / "dataset.json", "trec-bridge.dataset"),
])
def test_a_document_without_format_is_told_what_it_needs(tmp_path, kind, source, expected):
    """Was: 'at $.version: expected an object {document ID: value}' (the ranx reader's words)."""
    doc = {k: v for k, v in json.loads(source.read_text()).items() if k != "format"}
    path = tmp_path / f"{kind}.json"
    path.write_text(json.dumps(doc))
    load = load_run_any if kind == "run" else load_dataset_any
    with pytest.raises(InvalidInput) as exc:
        load(path)
    err = exc.value
    assert err.code == "E_JSON_FORMAT" and err.where.json_path == "$"
    assert f'expected "format": "{expected}"' in err.message and "ranx" in err.message


@pytest.mark.parametrize("value", ["trec-bridge.rnu", 1, None, ["trec-bridge.run"]])
def test_a_wrong_format_value_is_ours_to_refuse(tmp_path, value):
    doc = json.loads((VALID / "run.json").read_text())
    doc["format"] = value
    path = tmp_path / "run.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InvalidInput) as exc:
        load_run_any(path)
    assert exc.value.code == "E_JSON_FORMAT" and exc.value.where.json_path == "$.format"


def test_json_after_many_blanks_is_json(tmp_path):
    """The JSON/TREC test reads up to the first non-blank byte, however far (was: the first 4 KB only)."""
    path = tmp_path / "run.json"
    path.write_bytes(b" \n" * 5000 + (VALID / "run.json").read_bytes())
    assert is_json(path)
    assert load_run_any(path).run_id == "base"
    blank = tmp_path / "blank.txt"
    blank.write_bytes(b"\n" * 10000)
    assert not is_json(blank)


def test_json_layout_of_non_objects():
    assert json_layout([], "f", "run") == "trec-bridge"  # the format check then says what it must be
    assert json_layout({}, "f", "run") == "ranx"


def test_no_format_sniff_outside_the_detector():
    """The class guard: no command decides a format from a file's head except converters/detect.py."""
    allowed = {"converters/detect.py", "trec_bridge/files.py", "trec_bridge/memory_guard.py"}
    offenders = []
    for package in ("trec_bridge", "converters"):
        for path in (REPO / package).rglob("*.py"):
            rel = path.relative_to(REPO).as_posix()
            if rel not in allowed and re.search(r"\bhead_bytes\b", path.read_text(encoding="utf-8")):
                offenders.append(rel)
    assert not offenders, offenders

"""RAG acceptance golden cases: hand-written expected figures (golden/rag/*/expected.json) against the CLI.

The expected files were written by hand from the arithmetic in
golden/rag/README.md; this test never rewrites them.  A case runs `score`,
`stages` or `compare` (whose two reports are first written by `score --json`)
and compares a subset of the JSON output; lists are compared element by
element, floats within the case file's tolerance.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from trec_bridge.cli.main import main

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "rag"
FOLDERS = sorted(p for p in GOLDEN.iterdir() if (p / "expected.json").exists())


def _cases():
    for folder in FOLDERS:
        spec = json.loads((folder / "expected.json").read_text())
        for case in spec["cases"]:
            yield pytest.param(folder, case, spec.get("tolerance", 1e-12), id=f"{folder.name}:{case['name'][:60]}")


def _resolve(folder: Path, args: list[str]) -> list[str]:
    out = []
    for a in args:
        if "=" in a and not a.startswith("-"):  # NAME=RUN of --stage
            name, _, path = a.partition("=")
            out.append(f"{name}={folder / path}" if (folder / path).exists() else a)
        else:
            out.append(str(folder / a) if (folder / a).exists() else a)
    return out


def assert_subset(expected, actual, tol: float, path: str = "$") -> None:
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: expected an object, got {actual!r}"
        for key, value in expected.items():
            assert key in actual, f"{path}: key {key!r} missing"
            assert_subset(value, actual[key], tol, f"{path}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list), f"{path}: expected a list, got {actual!r}"
        assert len(expected) == len(actual), f"{path}: expected {len(expected)} items, got {len(actual)}: {actual!r}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            assert_subset(e, a, tol, f"{path}[{i}]")
    elif isinstance(expected, float):
        assert isinstance(actual, (int, float)) and not isinstance(actual, bool), f"{path}: expected {expected!r}, got {actual!r}"
        assert abs(actual - expected) <= tol, f"{path}: expected {expected!r}, got {actual!r}"
    else:
        assert expected == actual, f"{path}: expected {expected!r}, got {actual!r}"


def _by_id(rows: list[dict]) -> dict:
    return {r["query_id"]: r for r in rows}


@pytest.mark.parametrize("folder,case,tol", list(_cases()))
def test_rag_golden_case(folder, case, tol, tmp_path, capsys):
    out = tmp_path / "out.json"
    command = case["command"]
    args = _resolve(folder, case["args"])
    if command == "compare":
        paths = {}
        for label, score_args in case["reports"].items():
            paths[label] = str(tmp_path / f"{label}.json")
            main(["score"] + _resolve(folder, score_args) + ["--json", paths[label]])
        args = [paths.get(a, a) for a in args]
    capsys.readouterr()
    code = main([command] + args + ["--json", str(out)])
    captured = capsys.readouterr()
    assert code == case["exit_code"], f"exit code {code}; stderr: {captured.err}"
    if "error" in case:
        assert f"[{case['error']}]" in captured.err, captured.err
        assert "Traceback" not in captured.err
        assert not out.exists(), "nothing may be written after a rejection"
        return
    report = json.loads(out.read_text())
    assert_subset(case["report"], report, tol)
    if "repeat_rows" in case:
        rows = _by_id(report["rag"]["repeats"]["per_query"])
        for qid, expected in case["repeat_rows"].items():
            assert_subset(expected, rows[qid], tol, f"rag.repeats.per_query[{qid}]")
    if "stage_rows" in case:
        rows = _by_id(report["per_query"])
        for qid, expected in case["stage_rows"].items():
            assert_subset(expected, rows[qid]["transitions"], tol, f"per_query[{qid}].transitions")
        assert "k11" not in rows, "a query without a relevant document has no stage row"
    if "stage_recall" in case:
        rows = _by_id(report["per_query"])
        for qid, stages in case["stage_recall"].items():
            assert {s: v["exact"] for s, v in rows[qid]["recall"].items()} == stages
    if "compare_rows" in case:
        rows = _by_id(report["pairs"][0]["measures"][0]["per_query"])
        assert {q: rows[q]["delta_exact"] for q in case["compare_rows"]} == case["compare_rows"]

"""Golden scenarios S1-S4: hand-written expected figures compared with the CLI's report.

The expected files (golden/*/expected.json) were written by hand from the
worked figures of the specification; this test never rewrites them.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from trec_bridge.cli.main import main

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
SCENARIOS = sorted(p for p in GOLDEN.iterdir() if (p / "expected.json").exists())


def _cases():
    for folder in SCENARIOS:
        spec = json.loads((folder / "expected.json").read_text())
        for case in spec["cases"]:
            yield pytest.param(folder, case, spec.get("tolerance", 1e-12), id=f"{folder.name}:{case['name'][:50]}")


def _resolve(folder: Path, args: list[str]) -> list[str]:
    return [str(folder / a) if (folder / a).exists() else a for a in args]


def run_cli(folder: Path, args: list[str], out: Path, capsys) -> tuple[int, dict | None, str]:
    code = main(["score"] + _resolve(folder, args) + ["--json", str(out)])
    err = capsys.readouterr().err
    report = json.loads(out.read_text()) if out.exists() else None
    return code, report, err


def _per_query_by_id(report: dict) -> dict:
    out = dict(report)
    out["per_query"] = {row["query_id"]: row for row in report["per_query"]}
    return out


def assert_subset(expected, actual, tol: float, path: str = "$") -> None:
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: expected an object, got {actual!r}"
        for key, value in expected.items():
            assert key in actual, f"{path}: key {key!r} missing from the report"
            assert_subset(value, actual[key], tol, f"{path}.{key}")
    elif isinstance(expected, float) and not isinstance(expected, bool):
        assert actual is not None and abs(actual - expected) <= tol, f"{path}: expected {expected!r}, got {actual!r}"
    else:
        assert expected == actual, f"{path}: expected {expected!r}, got {actual!r}"


def _lookup(report: dict, dotted: str):
    node = report
    parts = dotted.split(".")
    i = 0
    while i < len(parts):
        # measure names contain dots rarely; join greedily until a key matches
        for j in range(len(parts), i, -1):
            key = ".".join(parts[i:j])
            if isinstance(node, dict) and key in node:
                node, i = node[key], j
                break
        else:
            raise KeyError(dotted)
    return node


@pytest.mark.parametrize("folder,case,tol", list(_cases()))
def test_golden_case(folder, case, tol, tmp_path, capsys):
    out = tmp_path / "report.json"
    code, report, err = run_cli(folder, case["args"], out, capsys)
    assert code == case["exit_code"], f"exit code {code}, stderr: {err}"
    if "error" in case:
        assert f"[{case['error']}]" in err, err
        assert "Traceback" not in err
        assert report is None, "no report may be written after a rejection"
        return
    assert report is not None, "the report must be written (also for an incomplete run)"
    indexed = _per_query_by_id(report)
    assert_subset(case["report"], indexed, tol)
    for dotted, forbidden in case.get("not", {}).items():
        assert _lookup(indexed, dotted) not in forbidden, f"{dotted} took a value the spec calls wrong"


def _fingerprint_pairs():
    for folder in SCENARIOS:
        spec = json.loads((folder / "expected.json").read_text())
        for kind, pair in spec.get("fingerprints", {}).items():
            yield pytest.param(folder, kind, pair, id=f"{folder.name}:{kind}")


@pytest.mark.parametrize("folder,kind,pair", list(_fingerprint_pairs()))
def test_golden_fingerprints(folder, kind, pair, tmp_path, capsys):
    reports = []
    for n, args in enumerate(pair):
        _, report, err = run_cli(folder, args, tmp_path / f"r{n}.json", capsys)
        assert report is not None, err
        reports.append(report["fingerprints"])
    key = "chunk_map" if "chunk_map" in kind else "protocol"
    same = reports[0][key] == reports[1][key]
    assert same == kind.startswith("same"), f"{kind}: {reports[0][key]} vs {reports[1][key]}"

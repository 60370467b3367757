"""Test conditions travel with the numbers (issue 23): the system object, its fingerprint and differences.

Expected values are written by hand: the canonical text a fingerprint hashes,
the dotted keys two systems differ in.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from trec_bridge.cli.main import main
from trec_bridge.errors import UsageError
from trec_bridge.system_meta import (describe_change, filter_keys, flatten, parse_system_options, system_diff,
                                     system_fingerprint)

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
S1, S5 = GOLDEN / "S1", GOLDEN / "S5"


def test_fingerprint_is_sha256_of_the_canonical_text():
    system = {"reranker": None, "index": {"ef_search": 64, "type": "hnsw"}, "filters": {"lang": "en"}, "é": 1.5}
    canonical = '{"filters":{"lang":"en"},"index":{"ef_search":64,"type":"hnsw"},"reranker":null,"é":1.5}'
    assert system_fingerprint(system) == hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    reordered = {"é": 1.5, "filters": {"lang": "en"}, "index": {"type": "hnsw", "ef_search": 64}, "reranker": None}
    assert system_fingerprint(reordered) == system_fingerprint(system)


def test_diff_lists_added_removed_changed_by_dotted_path():
    a = {"index": {"ef_search": 64, "m": 16}, "reranker": None, "seed": 1, "routes": ["dense"]}
    b = {"index": {"ef_search": 128, "m": 16}, "reranker": None, "routes": ["dense", "bm25"], "filters": {"lang": "en"}}
    assert system_diff(a, b) == [
        {"key": "filters.lang", "change": "added", "a": None, "b": "en"},
        {"key": "index.ef_search", "change": "changed", "a": 64, "b": 128},
        {"key": "routes", "change": "changed", "a": ["dense"], "b": ["dense", "bm25"]},
        {"key": "seed", "change": "removed", "a": 1, "b": None},
    ]
    assert system_diff(a, a) == []
    # as the fingerprint sees them: 1 and 1.0 are written differently, true is not 1
    assert system_diff({"k": 1}, {"k": 1.0}) == [{"key": "k", "change": "changed", "a": 1, "b": 1.0}]
    assert system_diff({"k": True}, {"k": 1}) != []
    assert describe_change(system_diff(a, b)[1]) == "index.ef_search: 64 -> 128"


def test_flatten_and_filters():
    system = {"index": {"ef": 64}, "filters": {"lang": "en", "year": [2020, 2021]}, "metadata_filter": "tenant=a",
              "empty": {}}
    assert flatten(system) == {"index.ef": 64, "filters.lang": "en", "filters.year": [2020, 2021],
                               "metadata_filter": "tenant=a", "empty": {}}
    assert filter_keys(system) == ["filters.lang", "filters.year", "metadata_filter"]


def test_system_options_nest_and_refuse_repeats():
    assert parse_system_options(["index.ef_search=64", "index.type=hnsw", "model=bge=m3"]) == \
        {"index": {"ef_search": "64", "type": "hnsw"}, "model": "bge=m3"}
    for bad in (["noequals"], ["a=1", "a=2"], ["a=1", "a.b=2"], ["a.b=1", "a=2"], [".x=1"]):
        with pytest.raises(UsageError):
            parse_system_options(bad)


def _score(args, tmp_path, capsys):
    out = tmp_path / "r.json"
    code = main(["score", str(S1 / "dataset.json"), *args, "RR@2", "--split", "test", "--json", str(out)])
    return code, json.loads(out.read_text()), capsys.readouterr().out


def test_report_terminal_and_html_show_the_system(tmp_path, capsys):
    code, report, text = _score([str(S5 / "base.json"), "--html", str(tmp_path / "r.html")], tmp_path, capsys)
    assert code == 0
    assert report["fingerprints"]["system"] == system_fingerprint(report["system"])
    assert "filters.lang: en  (filter)" in text and "index.ef_search: 64" in text
    assert f"system (fingerprint {report['fingerprints']['system'][:12]}):" in text
    page = (tmp_path / "r.html").read_text()
    assert "<dt>filters.lang (filter)</dt><dd>en</dd>" in page
    assert "<dt>index.ef_search</dt><dd>64</dd>" in page


def test_the_protocol_fingerprint_ignores_the_system(tmp_path, capsys):
    _, a, _ = _score([str(S5 / "base.json")], tmp_path, capsys)
    _, b, _ = _score([str(S5 / "one_key.json")], tmp_path, capsys)
    assert a["fingerprints"]["protocol"] == b["fingerprints"]["protocol"]
    assert a["fingerprints"]["system"] != b["fingerprints"]["system"]


def test_no_system_is_absent_and_unknown(tmp_path, capsys):
    code, report, text = _score([str(S5 / "run.trec"), "--html", str(tmp_path / "r.html")], tmp_path, capsys)
    assert code == 2
    assert "system" not in report and "system" not in report["fingerprints"]
    assert "system (" not in text
    assert "conditions of this test are unknown" in (tmp_path / "r.html").read_text()


def test_system_file_json(tmp_path, capsys):
    f = tmp_path / "system.json"
    f.write_text('{"index": {"ef_search": 64}, "reranker": "none"}')
    _, report, _ = _score([str(S5 / "run.trec"), "--system-file", str(f)], tmp_path, capsys)
    assert report["system"] == {"index": {"ef_search": 64}, "reranker": "none"}
    with pytest.raises(SystemExit):
        main(["score", str(S1 / "dataset.json"), str(S5 / "run.trec"), "RR@2", "--system", "a=1", "--system-file",
              str(f), "--bogus"])


def _conditions_cases():
    spec = json.loads((S5 / "conditions.json").read_text())
    return [pytest.param(spec, case, id=case["name"][:60]) for case in spec["cases"]]


def _subset(expected, actual, path="$"):
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: {actual!r}"
        for k, v in expected.items():
            assert k in actual, f"{path}.{k} missing"
            _subset(v, actual[k], f"{path}.{k}")
    elif isinstance(expected, list) and expected and isinstance(expected[0], dict):
        assert len(expected) == len(actual), f"{path}: {actual!r}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            _subset(e, a, f"{path}[{i}]")
    else:
        assert expected == actual, f"{path}: expected {expected!r}, got {actual!r}"


@pytest.mark.parametrize("spec,case", _conditions_cases())
def test_golden_conditions(spec, case, tmp_path, capsys):
    """golden/S5/conditions.json: compare's single-variable rule and repeats of one system, figures by hand."""
    dataset, runs = str(S5 / spec["dataset"]), [str(S5 / r) for r in case["runs"]]
    out = tmp_path / "out.json"
    if case["command"] == "compare":
        reports = []
        for n, run in enumerate(runs):
            reports.append(str(tmp_path / f"{Path(run).stem}{n}.json"))
            main(["score", dataset, run, spec["measures"], *spec["options"], "--json", reports[-1]])
        stems = [Path(r).stem for r in case["runs"]]
        labels = sum((["--label", s] for s in stems), []) if len(set(stems)) == len(stems) else []
        argv = ["compare", *reports, *labels, *case["args"], "--json", str(out)]
    else:
        argv = ["score", dataset, runs[0], spec["measures"], *spec["options"],
                *sum((["--repeat", r] for r in runs[1:]), []), *case["args"], "--json", str(out)]
    capsys.readouterr()
    code = main(argv)
    err = capsys.readouterr().err
    assert code == case["exit_code"], err
    if "error" in case:
        assert f"[{case['error']}]" in err and "Traceback" not in err, err
        assert not out.exists(), "nothing is written after a refusal"
        for part in case.get("message", []):
            assert part in err, err
        return
    result = json.loads(out.read_text())
    if "conditions" in case:
        _subset(case["conditions"], result["conditions"])
    if "warnings" in case:
        assert result["warnings"] == case["warnings"]


def test_json_floats_keeps_the_system_object_as_given(tmp_path, capsys):
    run = json.loads((S5 / "base.json").read_text())
    run["system"]["exact"] = "yes"  # a user key that looks like one of the report's exact values
    (tmp_path / "run.json").write_text(json.dumps(run))
    out = tmp_path / "r.json"
    main(["score", str(S1 / "dataset.json"), str(tmp_path / "run.json"), "RR@2", "--split", "test", "--json-floats",
          "--json", str(out)])
    report = json.loads(out.read_text())
    assert report["system"]["exact"] == "yes" and report["means"]["RR@2"]["exact"] is None


def test_the_acceptance_page_shows_the_system(tmp_path, capsys):
    main(["score", str(S1 / "dataset.json"), str(S5 / "base.json"), "RR@2", "--split", "test", "--rag", "--html",
          str(tmp_path / "a.html")])
    page = (tmp_path / "a.html").read_text()
    assert "<dt>filters.lang (filter)</dt><dd>en</dd>" in page and "<dt>seed</dt><dd>1</dd>" in page


def test_crosscheck_reports_carry_the_system(tmp_path, capsys):
    out = tmp_path / "cc.json"
    main(["crosscheck", str(S1 / "dataset.json"), str(S5 / "run.trec"), "RR@2", "--split", "test", "--against",
          "pytrec_eval", "--system", "reranker=none", "--json", str(out)])
    assert json.loads(out.read_text())["strict"]["system"] == {"reranker": "none"}
    main(["crosscheck", str(S1 / "dataset.json"), str(S5 / "timed.json"), "RR@2", "--against", "pytrec_eval",
          "--json", str(out)])
    strict = json.loads(out.read_text())["strict"]
    assert strict["system"]["index"]["ef_search"] == 64 and strict["timing"]["median"] == 26.25


def test_a_dotted_key_is_not_a_nested_one():
    a, b = {"index": {"ef": 64}}, {"index.ef": 64}
    assert system_fingerprint(a) != system_fingerprint(b)
    assert [d["change"] for d in system_diff(a, b)] == ["removed", "added"]

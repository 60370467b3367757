"""Score reports read back (compare): the shipped schema fits the writer, and no malformed report crashes.

1. Every report ``score --json`` writes for the golden scenarios (S1-S4,
   golden/rag), plus the option shapes they do not reach (other policies, a
   query-ID file), passes ``read_report``: schema and writer cannot drift
   apart unnoticed.
2. Named malformed shapes (the review found 9 of 9 ending in a traceback) are
   refused with exit 1 and their code.
3. Hypothesis mutates valid reports (keys deleted, types changed, odd
   values) and runs ``compare`` on them: exit 0 or exit 1 with a code, never
   a traceback; and the command accepts exactly what ``read_report`` accepts.
"""
from __future__ import annotations

import contextlib
import copy
import io
import json
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trec_bridge.cli.main import main
from trec_bridge.errors import TrecBridgeError
from trec_bridge.report_check import read_report

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "golden"
VALID = ROOT / "tests" / "malformed" / "valid"
KB = GOLDEN / "rag" / "kb"
ERROR_LINE = re.compile(r"^trec-bridge: error: \[(E_[A-Z0-9_]+)\]")


def _resolve(folder: Path, args: list[str]) -> list[str]:
    return [str(folder / a) if (folder / a).exists() else a for a in args]


def _golden_score_args() -> list[tuple[str, list[str]]]:
    """Every score command of the golden scenarios that writes a report (exit 1 writes none)."""
    out = []
    for expected in sorted(GOLDEN.rglob("expected.json")):
        folder = expected.parent
        for i, case in enumerate(json.loads(expected.read_text())["cases"]):
            if case.get("command", "score") == "score" and case["exit_code"] != 1:
                out.append((f"{folder.name}-{i}", _resolve(folder, case["args"])))
            for label, args in case.get("reports", {}).items():
                out.append((f"{folder.name}-{i}-{label}", _resolve(folder, args)))
    return out


def _extra_score_args() -> list[tuple[str, list[str]]]:
    """Shapes of the report the golden scenarios do not produce."""
    s1 = GOLDEN / "S1"
    out = [(f"S1-policy-{p}", [str(s1 / "dataset.json"), str(s1 / "run_A.json"), "P@2 RR nDCG@3 AP R@5", "--policy", p])
           for p in ("trec_eval", "trec_eval_c", "pytrec_eval", "ir_measures")]
    out.append(("queries-file", [str(VALID / "qrels.txt"), str(VALID / "run.txt"), "P@1 RR",
                                 "--queries", str(VALID / "queries.txt")]))
    out.append(("rank-order", [str(VALID / "qrels.txt"), str(VALID / "run.txt"), "P@1", "--order", "rank"]))
    return out


def _run(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, err.getvalue()


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict[str, Path]:
    """name -> a report written by the real score command."""
    folder = tmp_path_factory.mktemp("reports")
    failed = folder / "run_failed.json"  # a failed query: the row's "reason"
    failed.write_text(json.dumps({"format": "trec-bridge.run", "version": 1, "dataset_id": "malformed-base",
                                  "run_id": "f", "rankings": {"q1": ["d2", "d1"], "q3": []},
                                  "failures": {"q2": {"reason": "timeout after 30 s", "kind": "timeout"}}}))
    (folder / "graded.qrels").write_text("q1 0 d1 1\nq1 0 d2 2\n")  # custom gains: nDCG above 1 and below 0
    (folder / "graded.run").write_text("q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\n")
    extra = [("failed-query", [str(VALID / "dataset.json"), str(failed), "P@1 RR nDCG@3"]),
             ("custom-gains", [str(folder / "graded.qrels"), str(folder / "graded.run"),
                               "nDCG(gains={1:5,2:1})@2 nDCG(gains={1:-5,2:-1})@2"])]
    out = {}
    for name, args in _golden_score_args() + _extra_score_args() + extra:
        path = folder / f"{name}.json"
        code, err = _run(["score", *args, "--json", str(path)])
        assert code in (0, 2, 4) and path.exists(), (name, code, err)
        out[name] = path
    return out


def test_every_report_the_writer_produces_passes_the_reader(written):
    docs = {name: read_report(path) for name, path in written.items()}
    # the generated set reaches every optional part of the schema
    assert any(d.get("rag", {}).get("repeats", {}).get("count", 1) > 1 for d in docs.values())
    assert any("chunk_evidence" in d for d in docs.values())
    assert any("notes" in d for d in docs.values())
    assert any(d["order"] is None for d in docs.values()) and any(d["order"] for d in docs.values())
    assert any("reason" in row for d in docs.values() for row in d["per_query"])
    assert any(d["outcome"] == "incomplete" for d in docs.values())
    gains = docs["custom-gains"]["means"]
    # the ideal is sorted by gain (d1's gain 5 first), so this ranking is ideal
    assert gains["nDCG(gains={1:5,2:1})@2"]["value"] == 1
    assert {d["policy"]["name"] for d in docs.values()} >= {"strict", "trec_eval", "trec_eval_c", "pytrec_eval", "ir_measures"}


def test_the_schema_is_shipped_with_the_package():
    from importlib import resources

    schema = json.loads((resources.files("trec_bridge") / "schemas" / "report.v1.json").read_text(encoding="utf-8"))
    assert schema["properties"]["format"] == {"const": "trec-bridge.report"}


# ------------------------------------------------------------------ named malformed shapes

@pytest.fixture(scope="module")
def plain(written) -> dict:
    return json.loads(written["S1-policy-trec_eval"].read_text())


@pytest.fixture(scope="module")
def repeats(written) -> dict:
    name = next(n for n, p in written.items()
                if json.loads(p.read_text()).get("rag", {}).get("repeats", {}).get("count", 1) == 3)
    return json.loads(written[name].read_text())


def _set(doc: dict, path: str, value) -> dict:
    doc = copy.deepcopy(doc)
    *head, last = path.split("/")
    node = doc
    for key in head:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if value is _DELETE:
        del node[int(last) if isinstance(node, list) else last]
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return doc


_DELETE = object()
BIG = "1" * 5000

SHAPES = [
    # (id, base, path, new value, code, words in the message)
    ("row-without-values", "plain", "per_query/0/values", _DELETE, "E_JSON_SCHEMA", ["$.per_query[0]", "values"]),
    ("row-missing-a-measure", "plain", "per_query/1/values/AP", _DELETE, "E_REPORT_INCONSISTENT", ["$.per_query[1].values", "AP"]),
    ("row-values-not-object", "plain", "per_query/0/values", [0.5], "E_JSON_SCHEMA", ["$.per_query[0].values"]),
    ("row-value-as-text", "plain", "per_query/0/values/P@2", "0.5", "E_JSON_SCHEMA", ["$.per_query[0].values"]),
    ("row-value-disagrees-with-exact", "plain", "per_query/0/values/P@2", 1e308, "E_REPORT_EXACT", ["$.per_query[0].exact"]),
    ("row-query-id-number", "plain", "per_query/0/query_id", 7, "E_JSON_SCHEMA", ["$.per_query[0].query_id"]),
    ("exact-zero-denominator", "plain", "per_query/0/exact/P@2", "1/0", "E_JSON_SCHEMA", ["non-zero denominator"]),
    ("exact-disagrees", "plain", "means/P@2/exact", "1/3", "E_REPORT_EXACT", ["$.means", "disagrees"]),
    ("exact-huge", "plain", "per_query/0/exact/AP", BIG, "E_REPORT_EXACT", ["$.per_query[0].exact"]),
    ("exact-for-unknown-measure", "plain", "per_query/0/exact/P@99", "0", "E_REPORT_INCONSISTENT", ["P@99"]),
    ("exact-for-null-value", "plain", "per_query/0/values/P@2", None, "E_REPORT_EXACT", ["null"]),
    ("means-missing-a-measure", "plain", "means/RR", _DELETE, "E_REPORT_INCONSISTENT", ["$.means", "RR"]),
    ("measures-not-list", "plain", "measures", "P@2", "E_JSON_SCHEMA", ["$.measures"]),
    ("protocol-not-text", "plain", "fingerprints/protocol", 12, "E_JSON_SCHEMA", ["$.fingerprints.protocol"]),
    ("per-query-not-list", "plain", "per_query", {"q1": {}}, "E_JSON_SCHEMA", ["$.per_query"]),
    ("missing-list-disagrees", "plain", "missing_queries", ["q1"], "E_REPORT_INCONSISTENT", ["$.missing_queries"]),
    ("size-disagrees", "plain", "query_set/size", 999, "E_REPORT_INCONSISTENT", ["$.query_set.size"]),
    ("unknown-top-level-key", "plain", "surprise", 1, "E_JSON_SCHEMA", ["surprise"]),
    ("rag-not-object", "repeats", "rag", 1, "E_JSON_SCHEMA", ["$.rag"]),
    ("rag-repeats-rows-missing", "repeats", "rag/repeats/per_query", [], "E_REPORT_INCONSISTENT", ["$.rag.repeats.per_query"]),
    ("rag-repeats-rows-text", "repeats", "rag/repeats/per_query", "rows", "E_JSON_SCHEMA", ["$.rag.repeats.per_query"]),
    ("rag-repeats-count-zero", "repeats", "rag/repeats/count", 0, "E_JSON_SCHEMA", ["$.rag.repeats.count"]),
    ("rag-repeats-count-disagrees", "repeats", "rag/repeats/count", 5, "E_REPORT_INCONSISTENT", ["$.rag.repeats.count"]),
    ("rag-repeats-exact-zero", "repeats", "rag/repeats/per_query/0/exact/R@3", "0/0", "E_JSON_SCHEMA", ["$.rag.repeats.per_query[0].exact"]),
    ("rag-repeats-row-without-values", "repeats", "rag/repeats/per_query/0/values", _DELETE, "E_JSON_SCHEMA", ["values"]),
    ("rag-tier-exact-disagrees", "repeats", "rag/tiers/0/exact", "1/7", "E_REPORT_EXACT", ["$.rag.tiers[0]"]),
]


@pytest.mark.parametrize("name,base,path,value,code,words", SHAPES, ids=[s[0] for s in SHAPES])
def test_malformed_report_is_refused_with_its_code(name, base, path, value, code, words, plain, repeats, written, tmp_path):
    doc = plain if base == "plain" else repeats
    good = tmp_path / "good.json"
    good.write_text(json.dumps(doc))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_set(doc, path, value)))
    for argv in (["compare", str(good), str(bad)], ["compare", str(bad), str(good)]):
        rc, err = _run(argv + ["--resamples", "20", "--html", str(tmp_path / "c.html"), "--json", str(tmp_path / "c.json")])
        assert rc == 1, err
        last = err.strip().splitlines()[-1]
        assert last.startswith(f"trec-bridge: error: [{code}]") and "bad.json" in last, last
        for w in words:
            assert w in last, (w, last)
        assert not (tmp_path / "c.html").exists() and not (tmp_path / "c.json").exists()


def test_values_too_large_to_compare_are_refused(plain, tmp_path):
    """nDCG with custom gains may leave [0, 1], so the schema takes any finite value; sums that overflow are refused."""
    doc = copy.deepcopy(plain)
    for row in doc["per_query"]:
        row["values"]["nDCG@3"] = 1.7e308
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(plain))
    bad.write_text(json.dumps(doc))
    rc, err = _run(["compare", str(good), str(bad), "--json", str(tmp_path / "c.json")])
    assert rc == 1 and "[E_JSON_NUMBER]" in err and "nDCG@3" in err and "Traceback" not in err, err
    assert not (tmp_path / "c.json").exists()


@pytest.mark.parametrize("text,code", [
    ('{"format": "trec-bridge.report", "format": "trec-bridge.report", "version": 1}', "E_JSON_DUPLICATE_KEY"),
    ('{"format": "trec-bridge.report", "version": 1, "x": NaN}', "E_JSON_NUMBER"),
    ('\ufeff{"format": "trec-bridge.report", "version": 1}', "E_BOM"),
    ('{"format": "trec-bridge.dataset", "version": 1}', "E_JSON_FORMAT"),
    ('[1, 2]', "E_JSON_FORMAT"),
    ('{"format": "trec-bridge.report", "version": 1}', "E_JSON_SCHEMA"),
])
def test_report_text_goes_through_the_strict_json_reader(text, code, written, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_bytes(text.encode("utf-8"))
    rc, err = _run(["compare", str(written["S1-policy-trec_eval"]), str(bad)])
    assert rc == 1 and f"[{code}]" in err and "Traceback" not in err, err


# ------------------------------------------------------------------ mutations (hypothesis)

ODD_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=6),
    st.sampled_from(["1/0", "0/0", "-1/2", "1/3", "2/1", "abc", "", "1e5", "0.5", BIG, "q1", "P@2", "rag"]),
    st.builds(list), st.builds(dict), st.lists(st.integers(min_value=-3, max_value=3), max_size=3),
    st.dictionaries(st.sampled_from(["P@2", "RR", "x", "query_id"]), st.sampled_from([0.5, None, "1/2"]), max_size=2),
)


def _paths(value, prefix=()) -> list[tuple]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value[:4]):  # the first rows stand for the rest
            out += _paths(v, prefix + (i,))
    return out


@st.composite
def mutated(draw, bases: list[dict]):
    doc = copy.deepcopy(draw(st.sampled_from(bases)))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = [p for p in _paths(doc) if p]
        path = draw(st.sampled_from(paths))
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        last = path[-1]
        action = draw(st.sampled_from(["delete", "replace", "replace", "add_key", "duplicate"]))
        if action == "delete":
            del parent[last]
        elif action == "replace":
            parent[last] = copy.deepcopy(draw(ODD_VALUES))
        elif action == "add_key" and isinstance(parent[last], dict):
            parent[last][draw(st.sampled_from(["P@2", "extra", "R@3", "q1"]))] = copy.deepcopy(draw(ODD_VALUES))
        elif action == "duplicate" and isinstance(parent[last], list) and parent[last]:
            parent[last].append(copy.deepcopy(parent[last][0]))
        else:
            parent[last] = copy.deepcopy(draw(ODD_VALUES))
    return doc


@pytest.fixture(scope="module")
def bases(plain, repeats) -> list[dict]:
    return [plain, repeats]


def test_mutated_reports_never_crash_compare(bases, written):
    folder = Path(tempfile.mkdtemp(prefix="report-mutants-"))
    goods = {id(b): folder / f"good{i}.json" for i, b in enumerate(bases)}
    for b in bases:
        goods[id(b)].write_text(json.dumps(b))

    @settings(max_examples=120, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(data=st.data())
    def check(data):
        base = data.draw(st.sampled_from(bases))
        doc = data.draw(mutated([base]))
        bad = folder / "bad.json"
        bad.write_text(json.dumps(doc, allow_nan=False))
        try:
            read_report(bad)
            refused = None
        except TrecBridgeError as exc:
            refused = exc.code
        rc, err = _run(["compare", str(goods[id(base)]), str(bad), "--resamples", "20"])
        assert "Traceback" not in err
        if refused:  # the reader's verdict is the command's
            match = ERROR_LINE.match(err.strip().splitlines()[-1])
            assert rc == 1 and match and match.group(1) == refused, err
        elif rc == 1:  # a valid report that does not pair with the other one
            match = ERROR_LINE.match(err.strip().splitlines()[-1])
            assert match and match.group(1) in ("E_COMPARE_PROTOCOL", "E_USAGE"), err
        else:
            assert rc == 0, err

    check()


def test_fast_row_checks_agree_with_jsonschema(plain, repeats):
    """The rows skip jsonschema when the fast checks pass: on mutated rows, both give the same verdict."""
    from trec_bridge import report_check as rc

    samples = {"/properties/per_query/items": plain["per_query"][:3],
               "/$defs/rag/properties/repeats/properties/per_query/items": repeats["rag"]["repeats"]["per_query"][:3]}

    @settings(max_examples=400, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(data=st.data())
    def check(data):
        pointer = data.draw(st.sampled_from(sorted(samples)))
        row = data.draw(mutated(samples[pointer])) if data.draw(st.booleans()) else data.draw(st.sampled_from(samples[pointer]))
        by_schema = next(iter(rc._row_validator(pointer).iter_errors(row)), None) is None
        assert rc.FAST_ROW_CHECKS[pointer](row) == by_schema, row

    check()

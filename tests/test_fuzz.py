"""Fuzzing every reader: the only acceptable outcomes are a parsed value or a TrecBridgeError.

Readers: TREC run (with and without a sidecar manifest), TREC qrels, JSON
dataset, JSON run, chunk map, query-ID file, the format sniffing of
``converters.detect`` (JSON / ranx JSON / TREC), and the measure parser.  Each
gets random bytes, random UTF-8 text and structured mutations of valid files (byte-level edits
with tokens known to split the anchor tools: NUL, BOM, CR, NBSP, NaN, 1e999,
2^64, unbalanced brackets, ...), and the JSON readers also get valid
documents with one value replaced by a random JSON value.  Any exception
other than the project's own ``TrecBridgeError`` fails the test; a parsed
value must also meet the invariants the rest of the tool relies on.

Bounded for CI (200 derandomized examples per test, no deadline).
``tests/fuzz_long.py`` runs the same targets for as long as one likes.
"""
from __future__ import annotations

import atexit
import copy
import json
import math
import os
import shutil
import tempfile
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trec_bridge.errors import TrecBridgeError

MALFORMED = Path(__file__).resolve().parent / "malformed"
VALID = MALFORMED / "valid"
CI_SETTINGS = settings(max_examples=200, deadline=None, derandomize=True, database=None,
                       suppress_health_check=list(HealthCheck))

# --------------------------------------------------------------------------- targets
# Each target takes the input bytes, runs one reader on them and checks what it returned;
# it lets TrecBridgeError through (the caller accepts it) and anything else fails.

_WORK = Path(tempfile.mkdtemp(prefix="trec-bridge-fuzz-"))
atexit.register(shutil.rmtree, _WORK, ignore_errors=True)


def _file(name: str, data: bytes) -> Path:
    path = _WORK / name
    path.write_bytes(data)
    return path


def _check_run(run) -> None:
    from trec_bridge.model import RUN_SCHEMA

    frame = run.frame
    assert dict(frame.schema) == dict(RUN_SCHEMA)
    assert len(set(run.queries)) == len(run.queries)
    assert frame.get_column("query_id").null_count() == 0 and frame.get_column("doc_id").null_count() == 0
    scores = frame.get_column("score").drop_nulls().to_list()
    assert all(math.isfinite(s) for s in scores)
    assert frame.select(pl.struct("query_id", "doc_id").is_duplicated().any()).item() is False
    ranks = frame.group_by("query_id", maintain_order=True).agg(
        (pl.col("rank") == pl.int_range(1, pl.len() + 1)).all().alias("ok"))
    assert ranks.get_column("ok").all()
    assert set(frame.get_column("query_id").unique().to_list()) <= set(run.queries)


def _check_qrels(qrels) -> None:
    frame = qrels.frame
    assert frame.get_column("grade").null_count() == 0
    assert frame.select(pl.struct("query_id", "doc_id").is_duplicated().any()).item() is False


def target_trec_run(data: bytes) -> None:
    from converters.trec_run import read_trec_run

    _check_run(read_trec_run(_file("run.txt", data), use_sidecar=False))


def target_trec_qrels(data: bytes) -> None:
    from converters.trec_qrels import read_trec_qrels

    _check_qrels(read_trec_qrels(_file("qrels.txt", data)))


def target_json_dataset(data: bytes) -> None:
    from converters.json_dataset import load_dataset
    from trec_bridge.dataset_checks import check_dataset

    ds = load_dataset(_file("dataset.json", data))
    check_dataset(ds)
    _check_qrels(ds.qrels)


def target_json_run(data: bytes) -> None:
    from converters.json_run import load_run

    _check_run(load_run(_file("run.json", data)))


def target_chunk_map(data: bytes) -> None:
    from converters.chunk_map import load_chunk_map

    frame = load_chunk_map(_file("chunks.txt", data)).frame
    assert frame.height > 0 and frame.get_column("chunk_id").is_unique().all()
    assert frame.null_count().row(0) == (0, 0)


def target_query_file(data: bytes) -> None:
    from converters.detect import read_query_ids

    ids = read_query_ids(_file("queries.txt", data))
    assert ids and len(set(ids)) == len(ids) and all(q and not any(c.isspace() for c in q) for q in ids)


def target_detect(data: bytes) -> None:
    """Whatever the content: JSON dataset / ranx qrels / TREC qrels, and JSON run / ranx run / TREC run."""
    from converters.detect import load_dataset_any, load_run_any

    path = _file("any.txt", data)
    try:
        _check_qrels(load_dataset_any(path).qrels)
        accepted = True
    except TrecBridgeError:
        accepted = False
    try:
        _check_run(load_run_any(path))
    except TrecBridgeError:
        if not accepted:
            raise


_SIDECAR_RUN = (VALID / "run.txt").read_bytes()


def target_sidecar(data: bytes) -> None:
    """A valid TREC run whose manifest is ``data``: the manifest is checked, never trusted blindly."""
    from converters.trec_run import read_trec_run

    run = _file("side.run", _SIDECAR_RUN)
    _file("side.run.manifest.json", data)
    try:
        _check_run(read_trec_run(run))
    finally:
        os.unlink(str(run) + ".manifest.json")


def target_measures(data: bytes) -> None:
    from trec_bridge.measures import parse_measures

    text = data.decode("utf-8", "surrogateescape")  # what Python makes of argv bytes on Linux
    measures = parse_measures(text)
    assert measures
    again = parse_measures(" ".join(str(m) for m in measures))  # printed names read back as the same measures
    assert again == measures, (text, [str(m) for m in measures])


TARGETS = {
    "trec_run": target_trec_run,
    "trec_qrels": target_trec_qrels,
    "json_dataset": target_json_dataset,
    "json_run": target_json_run,
    "chunk_map": target_chunk_map,
    "query_file": target_query_file,
    "detect": target_detect,
    "sidecar": target_sidecar,
    "measures": target_measures,
}


def run_target(name: str, data: bytes) -> bool:
    """True when the reader accepted ``data``; False for a TrecBridgeError; any other exception propagates."""
    try:
        TARGETS[name](data)
    except TrecBridgeError:
        return False
    return True


# --------------------------------------------------------------------------- seeds and strategies

SEEDS: dict[str, list[bytes]] = {
    "trec_run": [VALID.joinpath("run.txt").read_bytes(), MALFORMED.joinpath("run_tabs_mixed.txt").read_bytes(),
                 MALFORMED.joinpath("run_rank_zero.txt").read_bytes()],
    "trec_qrels": [VALID.joinpath("qrels.txt").read_bytes(), MALFORMED.joinpath("qrels_tabs.txt").read_bytes(),
                   MALFORMED.joinpath("qrels_negative_grade.txt").read_bytes()],
    "json_dataset": [VALID.joinpath("dataset.json").read_bytes(),
                     Path(__file__).resolve().parent.parent.joinpath("trec_bridge", "examples", "dataset.json").read_bytes()],
    "json_run": [VALID.joinpath("run.json").read_bytes(), VALID.joinpath("chunkrun.json").read_bytes(),
                 Path(__file__).resolve().parent.parent.joinpath("trec_bridge", "examples", "run.json").read_bytes()],
    "chunk_map": [VALID.joinpath("chunks.txt").read_bytes(), b'{"c1": "d1", "c2": "d2"}\n'],
    "query_file": [VALID.joinpath("queries.txt").read_bytes(), b"q1\tfirst topic text\nq2\tsecond\n"],
    "measures": [b"nDCG@10 RR@10 R@100 AP", b"nDCG(gains={0:0,1:1,2:3})@5 RR(rel=2)@10", b"P(rel=2)@5 Judged@10 Hit@3",
                 b"nDCG(gain=linear)@10 MAP@100 Success@1", b"nDCG(dcg=exp-log2)@10 AP@1000"],
}
SEEDS["detect"] = SEEDS["trec_run"] + SEEDS["trec_qrels"] + SEEDS["json_run"][:1] + SEEDS["json_dataset"][:1] + [
    b'{"q1": {"d1": 1, "d2": 0}}', b'{"q1": {"d1": 0.5, "d2": 0.25}}']
SEEDS["sidecar"] = [json.dumps({
    "format": "trec-bridge.sidecar", "version": 1, "kind": "run",
    "trec_file": {"name": "side.run", "sha256": __import__("hashlib").sha256(_SIDECAR_RUN).hexdigest()},
    "dataset_id": "malformed-base", "dataset_version": None, "run_id": "base",
    "queries": [{"query_id": "q1", "documents": 3}, {"query_id": "q2", "documents": 2}, {"query_id": "q3", "documents": 0}],
    "failures": {"q4": "timeout"}, "metadata": {"system": {"k1": 0.9}}, "order_source": "list", "order": None,
    "unscored_queries": [], "original_scores": {"q1": [1.0, 1.0, None]}}).encode()]

TOKENS = [b"\x00", b"\xef\xbb\xbf", b"\r", b"\r\n", b"\n", b"\n\n", b"\t", b" ", b"  ", b"\x0b", b"\x0c", b"\xc2\xa0",
          b"\xe2\x80\xa8", b"\x1c", b"\x1f", b"\xc2\x85", b"\xff", b"\xed\xa0\x80", b"\xe3\x80\x80", b"nan", b"NaN",
          b"inf", b"-Infinity", b"1e999", b"-1e999", b"1e-400", b"-1", b"-0", b"0", b"1.0", b".5", b"3.", b"+2",
          b"99999999999999999999", b"9223372036854775807", b"9223372036854775808", b"-9223372036854775809",
          b"1" * 30, b"0x1p3", b"1,5", b"1_000", b"true", b"false", b"null", b"{", b"}", b"[", b"]", b"(", b")",
          b'"', b"\\", b"\\u", b"\\ud800", b"\\udc00", b"\\u0000", b",", b":", b"=", b"@", b"#", b"Q0", b"q1", b"d1",
          b"\x1f\x8b", b'"format"', b'"version"', b"rel=", b"gains={", b"gain=", b"@0", b"@-1", b"{1:1,1:2}",
          b"[" * 70, b"{\"a\":" * 70]


@st.composite
def mutated(draw, seeds: list[bytes]) -> bytes:
    """A seed with 1-6 random edits: insert/replace a token or random bytes, delete, duplicate, swap, truncate."""
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["insert", "replace", "delete", "dup_line", "swap_lines", "truncate", "bytes"]))
        pos = draw(st.integers(0, len(data)))
        if op == "insert":
            data[pos:pos] = draw(st.sampled_from(TOKENS))
        elif op == "replace":
            end = min(len(data), pos + draw(st.integers(1, 8)))
            data[pos:end] = draw(st.sampled_from(TOKENS))
        elif op == "delete":
            del data[pos:pos + draw(st.integers(1, 20))]
        elif op == "bytes":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        elif op in ("dup_line", "swap_lines"):
            lines = bytes(data).split(b"\n")
            i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            if op == "dup_line":
                lines.insert(j, lines[i])
            else:
                lines[i], lines[j] = lines[j], lines[i]
            data = bytearray(b"\n".join(lines))
        else:
            del data[pos:]
    return bytes(data)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12)


def _paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, path + (i,))


@st.composite
def json_mutated(draw, seeds: list[bytes]) -> bytes:
    """A valid document with one value replaced, deleted or given a sibling; sometimes a key repeated."""
    doc = copy.deepcopy(json.loads(draw(st.sampled_from(seeds))))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(list(_paths(doc))))
        if not path:
            continue
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        op = draw(st.sampled_from(["replace", "delete", "sibling", "copy_key"]))
        if op == "replace":
            parent[path[-1]] = draw(json_values)
        elif op == "delete":
            del parent[path[-1]]
        elif op == "sibling" and isinstance(parent, dict):
            parent[draw(st.text(max_size=6))] = draw(json_values)
        elif op == "sibling":
            parent.insert(path[-1], draw(json_values))
        elif op == "copy_key" and isinstance(parent, dict) and isinstance(path[-1], str):
            parent[path[-1] + draw(st.sampled_from(["", " ", "\u00a0", "\ufeff", "\x00"]))] = parent[path[-1]]
    text = json.dumps(doc, allow_nan=True, ensure_ascii=draw(st.booleans()))
    if draw(st.integers(1, 10)) == 5:  # a repeated key, which json.dumps cannot write (5: hypothesis favours 1 and 10)
        text = text.replace('"version": 1', '"version": 1, "version": 1', 1)
    return text.encode("utf-8", "surrogatepass")


measure_names = st.sampled_from(["nDCG", "NDCG", "ndcg", "RR", "MRR", "R", "Recall", "P", "AP", "MAP", "Success", "Hit",
                                 "Judged", "Foo", "ERR", "p", ""])
param_values = st.one_of(st.integers(-5, 5).map(str), st.sampled_from(
    ["linear", "exp", "lin", "cubic", "1.5", "True", "None", "'x'", "[1]", "{}", "{1:1,2:3}", "{0:0,1:1,-1:0}",
     "{1:1,1:2}", "{True:1}", "{1:1e400}", "{1:float('nan')}", "99999999999999999999", "{99999999999999999999:1}",
     "exp-log2", "log2", "(1,2)", "{[1]:2}", "1e3", "--1", ""]))
param_keys = st.sampled_from(["rel", "gain", "gains", "dcg", "judged_only", "cutoff", "", "rel "])


@st.composite
def measure_strings(draw) -> bytes:
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        name = draw(measure_names)
        params = draw(st.lists(st.tuples(param_keys, param_values), max_size=3))
        text = name
        if params or draw(st.booleans()):
            text += "(" + ",".join(f"{k}={v}" for k, v in params) + ")"
        if draw(st.booleans()):
            text += "@" + draw(st.sampled_from(["10", "1", "0", "-1", "1e3", "", "3x", "9223372036854775807",
                                                "9223372036854775808", "1" * 40, "0003", " 5"]))
        parts.append(text)
    return draw(st.sampled_from([" ", "  ", "\t", "\n"])).join(parts).encode("utf-8", "surrogatepass")


def strategies_for(name: str) -> dict[str, st.SearchStrategy[bytes]]:
    out = {"random_bytes": st.binary(max_size=2000),
           "random_text": st.text(st.characters(exclude_categories=["Cs"]), max_size=600).map(str.encode),
           "mutated": mutated(SEEDS[name])}
    if name in ("json_dataset", "json_run", "sidecar", "detect"):
        json_seeds = [s for s in SEEDS[name] if s.lstrip()[:1] == b"{"]
        out["json_mutated"] = json_mutated(json_seeds)
    if name == "measures":
        out["random_bytes"] = st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass"))
        del out["random_text"]
        out["grammar"] = measure_strings()
    return out


CASES = [(target, kind) for target in TARGETS for kind in strategies_for(target)]


@pytest.mark.parametrize("target,kind", CASES, ids=[f"{t}-{k}" for t, k in CASES])
def test_reader_fuzz(target, kind):
    @CI_SETTINGS
    @given(strategies_for(target)[kind])
    def fuzz(data):
        run_target(target, data)

    fuzz()


@pytest.mark.parametrize("target", list(TARGETS))
def test_seeds_are_accepted(target):
    """The seeds are valid input: the mutations start from files the reader accepts."""
    for seed in SEEDS[target]:
        assert run_target(target, seed), seed[:80]

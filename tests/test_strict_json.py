"""The strict JSON parse: each refusal has its code and says where."""
from __future__ import annotations

import gzip
import json
import sys
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from converters import strict_json as sj
from trec_bridge.errors import InvalidInput


def code_of(raw: bytes) -> InvalidInput:
    with pytest.raises(InvalidInput) as info:
        sj.parse_json(raw, "f.json")
    return info.value


@pytest.mark.parametrize(
    "raw, code, where",
    [
        (b"", "E_FILE_EMPTY", "f.json"),
        (b" \n\t ", "E_FILE_EMPTY", "f.json"),
        (b"\xef\xbb\xbf{}", "E_BOM", "f.json"),
        (b'{"a":\n "\xff"}', "E_ENCODING", "f.json:2"),
        (b'{"a": 1,\n "b": }', "E_JSON_SYNTAX", "f.json:2"),
        (b'{\x00"a": 1}', "E_NUL_BYTE", "f.json:1"),
        (b'{"a": "\\ud800"}', "E_ENCODING", "at $.a"),
        (b'{"\\udfff": 1}', "E_ENCODING", "at $"),
    ],
)
def test_text_level_rejections(raw, code, where):
    err = code_of(raw)
    assert err.code == code
    assert where in str(err)


def test_syntax_error_names_line_and_column():
    err = code_of(b'{\n  "a": [1, 2,,]\n}')
    assert err.code == "E_JSON_SYNTAX" and err.where.line == 2 and "column 14" in err.message


@pytest.mark.parametrize(
    "raw, path, key",
    [
        (b'{"a": 1, "a": 2}', "$", '"a"'),
        (b'{"judgments": {"q2": {"d3": 1, "d3": 0}}}', "$.judgments.q2", '"d3"'),
        (b'{"x": [0, {"b": 1, "c": 2, "b": 3}]}', "$.x[1]", '"b"'),
        (b'{"k": {"d 1": 1, "d 1": 1}}', "$.k", '"d 1"'),
    ],
)
def test_duplicate_key_names_object_path_and_key(raw, path, key):
    err = code_of(raw)
    assert err.code == "E_JSON_DUPLICATE_KEY"
    assert err.where.json_path == path and key in err.message


@pytest.mark.parametrize(
    "raw, path",
    [
        (b'{"s": NaN}', "$.s"),
        (b'{"s": [1, Infinity]}', "$.s[1]"),
        (b'{"s": -Infinity}', "$.s"),
        (b'{"s": 1e400}', "$.s"),
        (b'{"s": -1.5E+999}', "$.s"),
        (b'{"g": 9223372036854775808}', "$.g"),
        (b'{"g": -9223372036854775809}', "$.g"),
        (b'{"g": 1' + b"0" * 5000 + b"}", "$.g"),
    ],
)
def test_numbers_must_be_finite_and_fit(raw, path):
    err = code_of(raw)
    assert err.code == "E_JSON_NUMBER" and err.where.json_path == path


def test_numbers_at_the_edges_are_kept():
    doc = sj.parse_json(b'{"a": 9223372036854775807, "b": -9223372036854775808, "c": 1.7976931348623157e308, "d": 1e-400}')
    assert doc == {"a": 2**63 - 1, "b": -(2**63), "c": 1.7976931348623157e308, "d": 0.0}


def test_depth_limit_is_checked_before_parsing():
    assert sj.parse_json(b"[" * 64 + b"]" * 64) is not None
    err = code_of(b"[" * 65 + b"]" * 65)
    assert err.code == "E_JSON_TOO_DEEP" and "column 65" in err.message
    limit = sys.getrecursionlimit()
    err = code_of(b'{"a": ' + b"[" * (limit * 20) + b"]" * (limit * 20) + b"}")  # no RecursionError
    assert err.code == "E_JSON_TOO_DEEP"
    err = code_of(b'{"a": ' + b'{"b": ' * 100 + b"1" + b"}" * 101)
    assert err.code == "E_JSON_TOO_DEEP"


def test_brackets_inside_strings_do_not_count():
    text = json.dumps({"ids": ["[" * 200, "{" * 200, 'a\\"[[[' * 50, "\\" * 7 + "[[" * 80]})
    assert sj.parse_json(text.encode())["ids"][0] == "[" * 200


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.sampled_from('ab[]{}"\\\n é'), max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet='ab[{"\\', max_size=3), inner, max_size=3),
    max_leaves=20,
)


def depth(v) -> int:
    if isinstance(v, dict):
        return 1 + max(map(depth, v.values()), default=0)
    if isinstance(v, list):
        return 1 + max(map(depth, v), default=0)
    return 0


@settings(max_examples=300, deadline=None)
@given(json_values, st.integers(0, 6))
def test_parse_agrees_with_json_and_depth_is_exact(value, wraps):
    for _ in range(wraps):
        value = [value]
    raw = json.dumps(value, ensure_ascii=False).encode()
    with mock.patch.object(sj, "MAX_DEPTH", 4):
        if depth(value) > 4:
            assert code_of(raw).code == "E_JSON_TOO_DEEP"
        else:
            assert sj.parse_json(raw) == json.loads(raw)


def test_surrogate_pairs_are_characters():
    assert sj.parse_json(b'{"id": "\\ud83d\\ude00", "esc": "\\\\ud800"}') == {"id": "\U0001F600", "esc": "\\ud800"}


@pytest.mark.parametrize(
    "doc, path, words",
    [
        ([], "$", "found an array"),
        ({"version": 1}, "$", 'no "format" field'),
        ({"format": "trec-bridge.run", "version": 1}, "$.format", "this is a run"),
        ({"format": "other", "version": 1}, "$.format", 'found format string "other"'),
        ({"format": "trec-bridge.dataset"}, "$", "no version"),
        ({"format": "trec-bridge.dataset", "version": 2}, "$.version", "integer 2"),
        ({"format": "trec-bridge.dataset", "version": True}, "$.version", "boolean true"),
        ({"format": "trec-bridge.dataset", "version": 1.0}, "$.version", "number 1.0"),
        ({"format": "trec-bridge.dataset", "version": "1"}, "$.version", 'string "1"'),
    ],
)
def test_format_and_version(doc, path, words):
    with pytest.raises(InvalidInput) as info:
        sj.check_format(doc, "trec-bridge.dataset", "f.json")
    assert info.value.code == "E_JSON_FORMAT" and info.value.where.json_path == path and words in info.value.message
    assert "trec-bridge.dataset" in info.value.message or "dataset" in info.value.message


def test_read_document_accepts_gzip(tmp_path):
    path = tmp_path / "run.json.gz"
    path.write_bytes(gzip.compress(b'{"format": "trec-bridge.run", "version": 1}'))
    assert sj.read_document(path, "trec-bridge.run")["version"] == 1
    with pytest.raises(InvalidInput) as info:
        sj.read_document(path, "trec-bridge.dataset")
    assert info.value.code == "E_JSON_FORMAT" and info.value.where.file == str(path)


def test_json_path_notation():
    assert sj.json_path(()) == "$"
    assert sj.json_path(("judgments", "q2", "d1")) == "$.judgments.q2.d1"
    assert sj.json_path(("queries", 2, "tags", 0)) == "$.queries[2].tags[0]"
    assert sj.json_path(("judgments", "301", "doc#1", 'a"b')) == '$.judgments["301"]["doc#1"]["a\\"b"]'


def test_id_rule_covers_every_whitespace_character():
    for cp in range(0x110000):
        ch = chr(cp)
        if ch.isspace() or cp < 0x20 or 0x7F <= cp <= 0x9F:
            assert not sj.id_is_valid("a" + ch + "b"), hex(cp)
    assert sj.id_is_valid("文書-1") and sj.id_is_valid("d#1/é") and not sj.id_is_valid("")


@pytest.mark.parametrize("name", ["dataset.v1.json", "run.v1.json"])
def test_shipped_schemas_are_valid_and_share_the_id_rule(name):
    schema = sj.shipped_schema(name)
    sj.StrictValidator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$defs"]["id"]["not"]["pattern"] == sj.ID_BAD_CHARS


def test_strict_validator_never_takes_a_boolean_or_float_for_an_integer():
    v = sj.StrictValidator({"type": "integer"})
    assert v.is_valid(3) and not v.is_valid(True) and not v.is_valid(3.0)
    n = sj.StrictValidator({"type": "number"})
    assert n.is_valid(3) and n.is_valid(2.5) and not n.is_valid(False)


def test_render_is_deterministic_text():
    doc = {"a": 1, "b": {"x": [1, 2], "y": {}}, "c": [{"k": "é"}], "d": []}
    text = sj.render(doc, {"b": 1, "c": 1})
    assert text == '{\n  "a": 1,\n  "b": {\n    "x": [1, 2],\n    "y": {}\n  },\n  "c": [\n    {"k": "é"}\n  ],\n  "d": []\n}\n'
    assert json.loads(text) == doc

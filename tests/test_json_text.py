"""The reports' JSON writer (json_text.dumps) is ``json.dumps(indent=2, sort_keys=True)`` byte for byte, and a score
report built from the scorer's columns (vectorised exact fractions) is the one built query by query.

Every report (score, score-many --json-dir, crosscheck, the API's to_json, compare, stages) is written through
``json_text.dumps``; the reports are compared and fingerprinted as text, so any byte of difference would show.
"""
from __future__ import annotations

import json
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

from trec_bridge import api, json_text
from trec_bridge.measures.base import Terms, Values
from trec_bridge.report import build_report, report_json

AWKWARD_FLOATS = [-0.0, 0.0, 1e-300, 5e-324, 1.7976931348623157e308, 0.1 + 0.2, 1 / 3, -2.5e-7, 1e16, 123456789.0]
AWKWARD_STRINGS = ["", "é", "日本", "\u2028", '"', "\\", "\n\t\r\b\f", "\x00\x1f\x7f", "\ud800", "😀", "a/b", "</script>"]


def _awkward() -> dict:
    leaves = AWKWARD_FLOATS + AWKWARD_STRINGS + [10**40, -10**30, 0, -1, True, False, None, [], {}, (), [[]], [{}]]
    return {
        "flat": {s or "empty": v for s, v in zip(AWKWARD_STRINGS * 3, leaves)},
        "list": leaves,
        "nested": [{"a": [1, {"b": []}], "c": {}}, [[1, 2], [3]], ({"t": (1, 2)},), {"deep": {"er": {"est": [0.5]}}}],
        "rows": [{"query_id": s, "values": {"P@1": f, "AP": None}, "exact": {"P@1": "1/3"}, "n": i}
                 for i, (s, f) in enumerate(zip(AWKWARD_STRINGS, AWKWARD_FLOATS))],
        "é-key": {"\ud800": 1, "z": [], "A": {"x": None}},
        "top-scalar-list": [1.5, "x", None],
    }


@pytest.mark.parametrize("ensure_ascii", [False, True])
@pytest.mark.parametrize("allow_nan", [False, True])
def test_dumps_writes_what_json_dumps_writes(ensure_ascii, allow_nan):
    obj = _awkward()
    expected = json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=ensure_ascii, allow_nan=allow_nan)
    assert json_text.dumps(obj, ensure_ascii=ensure_ascii, allow_nan=allow_nan) == expected


@pytest.mark.parametrize("obj", [{}, [], (), 0, -0.0, 5e-324, 10**100, "é\n", None, True, {"a": {}}, [[], {}],
                                 {1: "a", 2: "b", -3: "c"}, {2.5: 1, -0.0: 2}, {True: 1, False: 0}, {None: 1},
                                 [float("inf"), float("-inf")], {"x": float("nan")}])
def test_dumps_agrees_on_scalars_empties_and_non_string_keys(obj):
    for allow_nan in (False, True):
        try:
            expected = json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=allow_nan)
        except ValueError:  # NaN and infinities refused as json refuses them
            with pytest.raises(ValueError):
                json_text.dumps(obj, allow_nan=allow_nan)
            continue
        assert json_text.dumps(obj, allow_nan=allow_nan) == expected


@pytest.mark.parametrize("obj", [{"a": {1, 2}}, [object()], {(1, 2): "tuple key"}, {"a": [b"bytes"]}])
def test_dumps_refuses_what_json_refuses(obj):
    with pytest.raises(TypeError):
        json.dumps(obj, indent=2, sort_keys=True)
    with pytest.raises(TypeError):
        json_text.dumps(obj)


def test_fraction_texts_are_the_fractions_reduced():
    """One term per query (reduced by gcd), several (summed exactly), none ("0"), and queries not counted (None)."""
    terms = Terms(query=np.array([0, 1, 3, 3, 3, 4, 5], dtype=np.int64),
                  num=np.array([6, 7, 1, 1, 1, 10, -4], dtype=np.int64),
                  den=np.array([4, 7, 2, 3, 6, 3, 6], dtype=np.int64))
    values = Values(np.zeros(7), terms)
    counted = np.array([True, True, True, True, True, True, False])
    texts = values.fraction_texts(counted)
    assert texts == ["3/2", "1", "0", "1", "10/3", "-2/3", None]
    for i, text in enumerate(texts[:6]):
        f = values.fraction(i)
        assert text == (str(f.numerator) if f.denominator == 1 else f"{f.numerator}/{f.denominator}")


def _result():
    """A score with what a report's rows can hold: AP over several relevant documents (several terms), a query
    without relevant documents (null), a missing one, a count (NumRet), IDs that JSON escapes or that are not ASCII."""
    qrels = {"q\"1": {"d1": 1, "d2": 2, "d3": 1, "d4": 0}, "é2": {"d1": 1}, "q\\3": {"d1": 0}, "q4😀": {"d5": 3},
             "日本": {"a": 1, "b": 1, "c": 1}}
    run = {"q\"1": {"d1": 0.9, "d4": 0.8, "d3": 0.7, "d9": 0.5, "d2": 0.1}, "é2": {"x": 1.0},
           "q\\3": {"d1": 1.0}, "日本": {"c": 3.0, "z": 2.0, "a": 1.0}}
    return api.score(qrels, run, "AP nDCG@3 P@3 RR R@2 NumRet NumRelRet Judged@2").result


def test_report_from_columns_is_the_report_read_query_by_query():
    result = _result()
    by_query = replace(result, queries=list(result.queries))  # a plain sequence of QueryResult: the per-row path
    fast, slow = build_report(result), build_report(by_query)
    assert fast == slow
    ap = {r["query_id"]: r["exact"]["AP"] for r in fast["per_query"]}
    assert ap == {"q\"1": str(Fraction(1, 1) / 3 + Fraction(2, 3) / 3 + Fraction(3, 5) / 3), "é2": "0",
                  "q\\3": None, "q4😀": "0", "日本": str(Fraction(1, 3) + Fraction(2, 3) / 3)}
    assert report_json(fast) == json.dumps(slow, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"

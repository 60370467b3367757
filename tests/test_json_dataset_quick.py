"""A dataset's query objects and judged query IDs are checked in bulk (json_dataset.validate_light) before the
schema is asked: the verdict, message and path must be the light schema's for every document."""
from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from converters import json_dataset
from converters import strict_json as sj
from trec_bridge.errors import InvalidInput

from .test_json_dataset import s1

VALUES = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from(["", "a", "a a", "\u200b", "x\t",
                                                                                   "pooled", "exhaustive"]),
                   st.lists(st.sampled_from(["", "a", "b", 1]), max_size=3), st.just({}))
FIELDS = st.sampled_from(["query_id", "text", "split", "tags", "answerable", "completeness", "foo"])


def _verdict(check, doc):
    try:
        check(doc)
    except InvalidInput as exc:
        return (exc.code, exc.message, exc.where.json_path)
    return "valid"


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(edits=st.lists(st.tuples(st.integers(0, 4), FIELDS, VALUES), max_size=3),
       key=st.sampled_from([None, "", "q 9", "q\u200b9", "q9"]), inner=st.sampled_from([None, [], 1, "x"]),
       replace=st.sampled_from([None, 1, "q1", [], {"text": "t"}]))
def test_the_bulk_checks_give_the_light_schemas_verdict(edits, key, inner, replace):
    doc = s1()
    for i, field, value in edits:
        doc["queries"][i][field] = copy.deepcopy(value)
    if key is not None:
        doc["judgments"][key] = {"d1": 0}
    if inner is not None:
        doc["judgments"]["q2"] = inner
    if replace is not None:
        doc["queries"][3] = replace
    light = _verdict(lambda d: sj.validate(d, json_dataset.SCHEMA, "f", json_dataset.LIGHT), doc)
    assert _verdict(lambda d: json_dataset.validate_light(d, "f"), doc) == light


def test_a_valid_document_never_reaches_the_schemas_bulk_parts(monkeypatch):
    """The fast path is really taken: with the light schema refused, a valid dataset still passes."""
    doc = s1()
    doc["queries"][0].update(text="t", tags=["a", "b"], answerable=True, completeness="pooled")
    real = sj.validate

    def only_quick(d, name, file, light=None):
        assert light is json_dataset.QUICK, "the light schema was asked"
        return real(d, name, file, light)
    monkeypatch.setattr(sj, "validate", only_quick)
    json_dataset.validate_light(doc, "f")
    with pytest.raises(AssertionError, match="light schema was asked"):
        json_dataset.validate_light({**doc, "judgments": {**doc["judgments"], "q 9": {}}}, "f")

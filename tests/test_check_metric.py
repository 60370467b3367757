"""``tb.testing.check_metric`` names the convention of deliberately broken metric code, one bug at a time.

``home_grown`` is a small evaluator written here from the textbook definitions, independently of
trec-bridge, with a switch per mistake; with no switch it is the standard definition.
"""
import math

import numpy as np
import pytest

from trec_bridge.testing import assert_metric, check_metric

EXAMPLES = 15  # drawn by hypothesis after the fixed hard cases, which alone show every axis


def home_grown(family, k=None, *, tie="desc", float32=False, no_relevant="skip", relevant="threshold",
               recall_den="rel", precision_den="k", ap_den="rel", rr_cutoff=True, gain="linear",
               discount="log2", ideal="judged"):
    def is_rel(grade):
        return grade >= 1 if relevant == "threshold" else True

    def ranked(docs):
        key = (lambda s: float(np.float32(s))) if float32 else float
        by_doc = sorted(docs.items(), key=lambda x: x[0], reverse=tie == "desc")
        return [d for d, _ in sorted(by_doc, key=lambda x: -key(x[1]))]  # stable: ties keep the doc order

    def disc(rank):
        if discount == "log2":
            return 1 / math.log2(rank + 1)
        if discount == "log2_rank":
            return 1 / max(math.log2(rank), 1)
        return 1 / math.log2(rank + 2)

    def g(grade):
        return 0.0 if grade <= 0 else (2.0 ** grade - 1 if gain == "exp" else float(grade))

    def one(judged, docs):
        order = ranked(docs)
        top = order[:k] if k else order
        nrel = sum(1 for gr in judged.values() if is_rel(gr))
        hits = [i for i, d in enumerate(top, 1) if d in judged and is_rel(judged[d])]
        if family == "P":
            return len(hits) / (k if precision_den == "k" else max(min(len(order), k), 1))
        if family == "R":
            return len(hits) / {"rel": nrel, "min_k": min(nrel, k), "k": k}[recall_den]
        if family == "AP":
            den = nrel if ap_den == "rel" else len(hits)
            return sum((j + 1) / r for j, r in enumerate(hits)) / den if den else 0.0
        if family == "RR":
            first = [i for i, d in enumerate(order if not rr_cutoff else top, 1) if d in judged and is_rel(judged[d])]
            return 1 / first[0] if first else 0.0
        dcg = sum(g(judged.get(d, 0)) * disc(i) for i, d in enumerate(top, 1))
        pool = {"judged": list(judged.values()), "retrieved": [judged[d] for d in order if d in judged],
                "top_k": [judged[d] for d in top if d in judged]}[ideal]
        best = sorted((g(x) for x in pool), reverse=True)[:k]
        idcg = sum(x * disc(i) for i, x in enumerate(best, 1))
        return dcg / idcg if idcg else 0.0

    def fn(qrels, run):
        out = {}
        for q, judged in qrels.items():
            has_rel = any(is_rel(gr) and (family != "nDCG" or gr > 0) for gr in judged.values())
            if not has_rel and no_relevant == "skip":
                continue
            out[q] = one(judged, run.get(q, {})) if has_rel else 0.0
        return out
    return fn


@pytest.mark.parametrize("family, k, measure", [("P", 5, "P@5"), ("R", 10, "R@10"), ("AP", None, "AP"),
                                                 ("RR", 10, "RR@10"), ("nDCG", 10, "nDCG@10")])
def test_the_standard_definition_passes(family, k, measure):
    report = assert_metric(home_grown(family, k), measure, examples=EXAMPLES)
    assert report.standard and report.convention["tie_break"] == ["doc_desc"]
    assert report.convention["no_relevant"] == ["null"]


@pytest.mark.parametrize("family, k, measure, bug, axis, value", [
    ("R", 10, "R@10", {"recall_den": "min_k"}, "den", "min_k"),
    ("R", 10, "R@10", {"recall_den": "k"}, "den", "k"),
    ("P", 5, "P@5", {"precision_den": "retrieved"}, "den", "retrieved"),
    ("AP", None, "AP", {"ap_den": "retrieved"}, "den", "retrieved"),
    ("nDCG", 10, "nDCG@10", {"ideal": "retrieved"}, "ideal", "retrieved"),
    ("nDCG", 2, "nDCG@2", {"ideal": "top_k"}, "ideal", "top_k"),
    ("nDCG", 10, "nDCG@10", {"discount": "log2_rank"}, "discount", "log2_rank"),
    ("nDCG", 10, "nDCG@10", {"discount": "log2_rank2"}, "discount", "log2_rank2"),
    ("nDCG", 10, "nDCG@10", {"gain": "exp"}, "gain", "exp"),
    ("RR", 2, "RR@2", {"rr_cutoff": False}, "rr_cutoff", "ignored"),
    ("P", 5, "P@5", {"relevant": "judged"}, "relevant", "judged"),
])
def test_each_broken_definition_is_named(family, k, measure, bug, axis, value):
    fn = home_grown(family, k, **bug)
    report = check_metric(fn, measure, examples=EXAMPLES)
    assert report.unreproduced is None, str(report)
    assert report.convention[axis] == [value], str(report)
    departure = next(d for d in report.departures if d.axis == axis)
    assert departure.theirs == [value] and not report.standard
    assert fn(departure.case.qrels, departure.case.run) == departure.case.theirs  # the case shows it
    with pytest.raises(AssertionError) as exc:
        assert_metric(fn, measure, examples=EXAMPLES)
    assert f"departure on {axis}: {value} instead of" in str(exc.value)


@pytest.mark.parametrize("bug, axis, value", [
    ({"tie": "asc"}, "tie_break", "doc_asc"), ({"float32": True}, "precision", "float32"),
    ({"no_relevant": "zero"}, "no_relevant", "zero"),
])
def test_each_convention_is_named_and_can_be_required(bug, axis, value):
    fn = home_grown("RR", 10, **bug)
    report = check_metric(fn, "RR@10", examples=EXAMPLES)
    assert report.convention[axis] == [value], str(report)
    assert report.standard  # a convention the measure leaves open is no departure from its definition
    assert_metric(fn, "RR@10", examples=EXAMPLES, **{axis: value})
    with pytest.raises(AssertionError):
        assert_metric(fn, "RR@10", examples=EXAMPLES, **{axis: "something else"})


def test_code_that_follows_no_convention_is_shown_on_its_smallest_case():
    def wrong(qrels, run):
        return {q: 0.42 for q in qrels}

    report = check_metric(wrong, "P@5", examples=EXAMPLES)
    assert report.unreproduced is not None and not report.standard
    assert "no single convention" in str(report)

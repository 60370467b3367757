"""Tiers: boundaries (exact and float), the thresholds file and its validation, the domain discount."""
from __future__ import annotations

from fractions import Fraction

import pytest

from trec_bridge.errors import InvalidInput
from trec_bridge.rag.tiers import (DEFAULT_TABLE, Levels, Triage, default_thresholds, fraction_decimal, load_thresholds,
                                   thresholds_from_dict, tier_of)

R3 = Levels(Fraction("0.70"), Fraction("0.60"), Fraction("0.50"))
NDCG5 = Levels(Fraction("0.85"), Fraction("0.75"), Fraction("0.65"))


@pytest.mark.parametrize("exact,tier", [
    (Fraction(7, 10), "excellent"),  # boundary belongs to the higher tier
    (Fraction(69999, 100000), "good"),
    (Fraction(6, 10), "good"),
    (Fraction(5, 10), "pass"),
    (Fraction(49, 100), "fail"),
    (Fraction(0), "fail"),
    (Fraction(1), "excellent"),
])
def test_tier_boundaries_exact(exact, tier):
    assert tier_of(R3, float(exact), exact) == tier


def test_exact_comparison_beats_float_representation():
    # 0.7 as a binary float is 0.6999999999999999556; the exact 7/10 must still be excellent
    assert Fraction(0.7) < Fraction(7, 10)
    assert tier_of(R3, 0.7, Fraction(7, 10)) == "excellent"
    # a mean of 7/10 that reached its float through a sum of floats is still judged on the fraction
    assert tier_of(R3, 0.6999999999999998, Fraction(7, 10)) == "excellent"


@pytest.mark.parametrize("value,tier", [
    (0.85, "excellent"),  # the float 0.85 is below 85/100 in binary; a float measure is compared with float(level)
    (0.8499999999999999, "good"),
    (0.75, "good"),
    (0.65, "pass"),
    (0.6499999999999999, "fail"),
])
def test_tier_boundaries_float_measure(value, tier):
    assert tier_of(NDCG5, value, None) == tier


def test_no_value_fails():
    assert tier_of(R3, None, None) == "fail"


def test_default_table_is_policy_8():
    th = default_thresholds()
    assert [str(m) for m in th.measures()] == ["R@3", "R@5", "R@10", "RR@20", "nDCG(gain=exp)@5", "nDCG(gain=exp)@10"]
    assert th.levels["RR@20"] == Levels(Fraction(4, 5), Fraction(7, 10), Fraction(3, 5))
    assert th.min_queries == 200 and th.expected_repeats == 3 and th.domain_discount == 0
    assert th.triage == Triage(10, Fraction(3, 10), Fraction(1, 2))
    assert set(DEFAULT_TABLE) == set(th.levels)


def test_discount_is_exact():
    th = thresholds_from_dict({"domain_discount": __import__("decimal").Decimal("0.10")})
    assert th.effective("R@5").excellent == Fraction(72, 100)
    assert 0.8 * 0.9 != 0.72  # what a float product would have used
    assert tier_of(th.effective("R@5"), 0.72, Fraction(18, 25)) == "excellent"
    assert "10%" in th.discount_note()


def _toml(tmp_path, text: str):
    p = tmp_path / "t.toml"
    p.write_text(text)
    return p


def test_load_file_with_measures_and_alias(tmp_path):
    th = load_thresholds(_toml(tmp_path, """
domain_discount = 0.05
min_queries = 50
expected_repeats = 5
[triage]
k = 5
recall_below = 0.25
[measures."MRR@20"]
excellent = 0.8
good = 0.7
pass = 0.6
[measures."R@3"]
excellent = 1
good = 0.5
pass = 0.5
"""))
    assert list(th.levels) == ["RR@20", "R@3"]  # MRR@20 is RR@20
    assert th.levels["RR@20"].good == Fraction(7, 10)  # read as a decimal, not via a binary float
    assert th.effective("RR@20").excellent == Fraction(76, 100)
    assert th.min_queries == 50 and th.expected_repeats == 5
    assert th.triage == Triage(5, Fraction(1, 4), Fraction(1, 2))
    assert th.domain_discount == Fraction(1, 20)


@pytest.mark.parametrize("text,fragment", [
    ("domain_discount = 0.2", "between 0.05 and 0.10"),
    ("domain_discount = 0.04", "between 0.05 and 0.10"),
    ("domain_discount = 5", "between 0.05 and 0.10"),
    ("domain_discount = true", "must be a number"),
    ("min_queries = 0", "positive integer"),
    ("min_queries = 200.0", "positive integer"),
    ("colour = 'red'", "unknown key"),
    ("format = 'other'", "format"),
    ("[measures.\"R@3\"]\nexcellent = 0.7\ngood = 0.6", "missing ['pass']"),
    ("[measures.\"R@3\"]\nexcellent = 0.5\ngood = 0.6\npass = 0.4", "excellent >= good >= pass"),
    ("[measures.\"R@3\"]\nexcellent = 1.5\ngood = 0.6\npass = 0.4", "outside [0, 1]"),
    ("[measures.\"R@3\"]\nexcellent = 0.7\ngood = 0.6\npass = 0.5\nfail = 0.1", "unknown ['fail']"),
    ("[measures.\"Foo@3\"]\nexcellent = 0.7\ngood = 0.6\npass = 0.5", "unknown measure"),
    ("[measures.\"RR@20\"]\nexcellent = 0.7\ngood = 0.6\npass = 0.5\n[measures.\"MRR@20\"]\nexcellent = 0.7\ngood = 0.6\npass = 0.5",
     "same measure"),
    ("[triage]\nk = -1", "positive integer"),
    ("[triage]\nrecall_below = 0", "(0, 1]"),
    ("measures = 3", "table of measures"),
    ("this is not toml", "not valid TOML"),
])
def test_invalid_thresholds(tmp_path, text, fragment):
    with pytest.raises(InvalidInput) as exc:
        load_thresholds(_toml(tmp_path, text))
    assert exc.value.code == "E_THRESHOLDS"
    assert fragment in exc.value.message
    assert exc.value.where.file.endswith("t.toml")


def test_missing_thresholds_file(tmp_path):
    with pytest.raises(InvalidInput) as exc:
        load_thresholds(tmp_path / "absent.toml")
    assert exc.value.code == "E_FILE_NOT_FOUND"


def test_fraction_decimal():
    assert [fraction_decimal(Fraction(x)) for x in ("0.7", "0.665", "1", "0", "0.05")] == \
        ["0.70", "0.665", "1.00", "0.00", "0.05"]
    assert fraction_decimal(Fraction(1, 3)) == "1/3"

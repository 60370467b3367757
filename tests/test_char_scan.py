"""char_scan.any_holds tells what ``str.contains(class).any()`` tells, on the values joined (issue 22)."""
from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from converters import char_scan
from converters import strict_json as sj
from converters.char_scan import any_holds
from converters.trec_run import BAD_ID_PATTERN

CLASSES = [sj.ID_BAD_CHARS, BAD_ID_PATTERN, r'["\\]']
# the characters the classes are about, and plain ones
ALPHABET = st.sampled_from(list("ab7-~!") + [" ", "\t", "\n", "\x00", "\x1f", "\x7f", '"', "\\", "\u00a0", "\u0085",
                                              "\u200b", "\u2028", "\u3000", "\ufeff", "é", "\U0001f600"])
VALUES = st.lists(st.one_of(st.none(), st.text(ALPHABET, max_size=4)), max_size=8)


@settings(max_examples=300, deadline=None)
@given(values=VALUES, slice_rows=st.sampled_from([1, 2, 3, 1 << 20]))
def test_any_holds_is_contains_row_by_row(values, slice_rows):
    col = pl.Series(values, dtype=pl.String)
    old = char_scan.SLICE_ROWS
    char_scan.SLICE_ROWS = slice_rows
    try:
        for char_class in CLASSES:
            assert any_holds(col, char_class) == bool(col.str.contains(char_class).any()), (values, char_class)
    finally:
        char_scan.SLICE_ROWS = old


def test_a_hit_in_a_later_slice_and_plain_ids(monkeypatch):
    monkeypatch.setattr(char_scan, "SLICE_ROWS", 2)
    col = pl.Series(["d1", "d2", "d3", "d 4", "d5"])
    assert any_holds(col, BAD_ID_PATTERN)
    assert not any_holds(col.slice(0, 3), BAD_ID_PATTERN)
    assert any_holds(pl.Series(["a", 'b"c']), r'["\\]')
    assert not any_holds(pl.Series([], dtype=pl.String), sj.ID_BAD_CHARS)
    assert not any_holds(pl.Series([None, None], dtype=pl.String), sj.ID_BAD_CHARS)


def test_the_printable_shortcut_is_taken_only_for_classes_without_printable_ascii():
    assert char_scan._misses_printable(sj.ID_BAD_CHARS)
    assert char_scan._misses_printable(BAD_ID_PATTERN)
    assert not char_scan._misses_printable(r'["\\]')
    assert not char_scan._misses_printable("[~]")


def test_only_a_character_class_is_taken():
    with pytest.raises(ValueError):
        any_holds(pl.Series(["ab"]), "ab")

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


def test_printable_ascii_excludes_every_character_a_writer_refuses(monkeypatch):
    """check_writable_ids skips its row-by-row tests on a printable-ASCII column: none of them can match there."""
    from converters.invisible import INVISIBLE_CLASS

    for char_class in (BAD_ID_PATTERN, INVISIBLE_CLASS, sj.ID_BAD_CHARS, "[\ufeff]"):
        assert char_scan._misses_printable(char_class), char_class
    monkeypatch.setattr(char_scan, "SLICE_ROWS", 2)
    assert char_scan.printable_ascii(pl.Series(["a!", "~7", "Z", None], dtype=pl.String))
    for odd in (" ", "\t", "\x00", "\x7f", "é", "\ufeff", "\u200b"):
        assert not char_scan.printable_ascii(pl.Series(["a", "b", f"c{odd}"])), repr(odd)


def _frame(queries, docs):
    return pl.DataFrame({"query_id": queries, "doc_id": docs}, schema={"query_id": pl.String, "doc_id": pl.String})


@pytest.mark.parametrize(("queries", "docs", "code", "message"), [
    (["q1", "q 2"], ["d1", "d2"], "E_TREC_COLUMNS", "query ID 'q 2' is empty or contains whitespace"),
    (["q1", "q1"], ["d1", "d\t2"], "E_TREC_COLUMNS", "document ID 'd\\t2' is empty or contains whitespace"),
    (["q1", "q1"], ["d1", "d\x852"], "E_TREC_COLUMNS", "document ID"),
    (["q1", "q1"], ["d1", ""], "E_TREC_COLUMNS", "document ID '' is empty"),
    (["q1", "q1"], ["d1", "d\x00"], "E_TREC_COLUMNS", "NUL"),
    (["\ufeffq1"], ["d1"], "E_BOM", "starts with U+FEFF"),
    (["q1"], ["d\u200b1"], "E_ID_INVISIBLE", "U+200B"),
    (["q\u200b1", "q2"], ["d1", "d 2"], "E_TREC_COLUMNS", "document ID 'd 2'"),  # whitespace is told before invisibles
])
def test_writable_ids_refused_as_row_by_row(queries, docs, code, message):
    from trec_bridge.errors import InvalidInput
    from converters.trec_run import check_writable_ids

    with pytest.raises(InvalidInput) as err:
        check_writable_ids(_frame(queries, docs), "tag", "out.trec")
    assert err.value.code == code and message in err.value.message, err.value.message


def test_writable_ids_plain_and_non_ascii_pass():
    from converters.trec_run import check_writable_ids

    check_writable_ids(_frame(["q1", "q1", "q2"], ["d1", "D~!", "x"]), "tag", "out.trec")
    check_writable_ids(_frame(["q1", "é"], ["Straße", "文档"]), "tag", "out.trec")

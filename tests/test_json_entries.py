"""json_entries' proof of the canonical entries, byte by byte: what it accepts is exactly what the JSON says.

The columns are read by polars from bytes json_entries has proven to be
``{"doc_id": "ID", "score": NUM}`` joined by ", " (the constants as words at
each line's ``}``-delimited positions, the spaces and quotes counted).  Any
single byte changed, dropped or added anywhere in the bodies must either be
refused (None: the caller decodes those queries another way) or still read
as the JSON text reads; nothing else.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from converters import json_entries

ENTRIES = [[("a", 2.5), ("bb", -1.0), ("c3", 1e-05)], [("d", 7.0)], [("e", 0.5), ("fgh", 3.0)]]


def _bodies(queries, gap: bytes = b'], "q": [') -> tuple[bytes, list[tuple[int, int]]]:
    """The bodies of ``queries`` laid out one after the other with ``gap`` between, as in a block."""
    buf, bodies = bytearray(b"["), []
    for i, entries in enumerate(queries):
        start = len(buf)
        buf += ", ".join(json.dumps({"doc_id": d, "score": s}) for d, s in entries).encode()
        bodies.append((start, len(buf)))
        buf += gap if i < len(queries) - 1 else b"]"
    return bytes(buf), bodies


def _as_json(buf: bytes, bodies) -> tuple[list, list, list] | None:
    """(entries per body, IDs, scores) as the JSON text reads, for bodies of entries with exactly the canonical
    keys and a float or integer score; None for anything else."""
    counts, ids, scores = [], [], []
    for start, end in bodies:
        try:
            entries = json.loads(b"[" + buf[start:end] + b"]")
        except ValueError:
            return None
        if not all(isinstance(e, dict) and list(e) == ["doc_id", "score"] and isinstance(e["doc_id"], str)
                   and type(e["score"]) in (int, float) for e in entries):
            return None
        counts.append(len(entries))
        ids += [e["doc_id"] for e in entries]
        scores += [float(e["score"]) for e in entries]
    return counts, ids, scores


def _check(buf: bytes, bodies) -> bool:
    """Whether json_entries read the bodies; when it did, its columns are the JSON text's."""
    columns = json_entries.canonical_entries(buf, bodies)
    if columns is None:
        return False
    expected = _as_json(buf, bodies)
    assert expected is not None, buf
    assert (columns[0].tolist(), columns[1].to_list(), columns[2].to_list()) == expected, buf
    return True


@pytest.mark.parametrize("gap", [b'], "q": [', b']},\n{"query_id": "q}", "ranking": ['])
def test_canonical_bodies_are_read_with_a_close_brace_between_them_or_not(gap):
    """Between bodies a query line (no ``}``) or a JSON Lines record's end and a query ID holding ``}``: only
    the bodies' own ``}`` count."""
    buf, bodies = _bodies(ENTRIES, gap)
    assert _check(buf, bodies)


@pytest.mark.parametrize("split", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_any_one_byte_changed_dropped_or_added_is_refused_or_read_as_json(monkeypatch, split):
    """Every position of the bodies, each byte the proof leans on: accepted only as the JSON reads it (both
    halves at once included: SPLIT_ROWS 1)."""
    if split:
        monkeypatch.setattr(json_entries, "SPLIT_ROWS", 1)
    buf, bodies = _bodies(ENTRIES[:1] + [[("e", 0.5)]])
    assert _check(buf, bodies)
    accepted = 0
    for at in range(bodies[0][0], bodies[-1][1]):
        for byte in b' ",}{:x0.-\\\x7f':
            for edited, shift in ((buf[:at] + bytes([byte]) + buf[at + 1:], 0), (buf[:at] + buf[at + 1:], -1),
                                  (buf[:at] + bytes([byte]) + buf[at:], 1)):
                moved = [(s + shift * (s > at), e + shift * (e > at)) for s, e in bodies]
                if all(e > s for s, e in moved):
                    accepted += _check(edited, moved)
    assert accepted > 0  # some edits stay canonical (a digit, an ID letter), and read as JSON reads them


def test_a_line_short_of_its_constants_is_refused_not_read_past_its_end():
    """A last entry cut before its number, or an ID so long polars' field reaches past the line: no word is
    read outside the region (the bounds are checked before the loads)."""
    for text in (b'{"doc_id": "a", "score": }', b'{"doc_id": "a", "score":}', b'{"doc_id": "", "score": 1}',
                 b'{"doc_id": "a", "score": 1} ', b'{"doc_id": "a"}', b'{"doc_id": "a", "score": 1, "x": 2}'):
        buf = b"[" + text + b"]"
        assert json_entries.canonical_entries(buf, [(1, len(buf) - 1)]) is None, text


def test_the_words_read_at_any_offset():
    """The unaligned 8-byte loads at each line's start: lines of every length mod 8 in one region."""
    queries = [[(("x" * n), float(n)) for n in range(1, 17)]]
    buf, bodies = _bodies(queries)
    assert _check(buf, bodies)
    assert np.array_equal(json_entries.canonical_entries(buf, bodies)[0], [16])

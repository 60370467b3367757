"""The (query, document) hash that finds judged rows is the same however it is computed.

Run rows are keyed per block of one query (the query hashed once per block),
judgments row by row; a difference would silently lose judged rows.
"""
from __future__ import annotations

import random

import numpy as np
import polars as pl

import pytest

from trec_bridge import ordering
from trec_bridge.ordering import any_equal, pair_keys, pair_keys_of_blocks, sorted_keys


def test_keys_of_blocks_equal_keys_of_rows():
    rnd = random.Random(3)
    names = ["q1", "a much longer query identifier than twelve bytes", "requête-é", "7" * 40, "x"]
    block_query = [rnd.choice(names) + str(i) for i in range(50)]
    block_length = np.array([rnd.randint(1, 30) for _ in block_query])
    query = pl.Series([q for q, n in zip(block_query, block_length) for _ in range(n)], dtype=pl.String)
    doc = pl.Series([rnd.choice(names) + f"-d{rnd.randint(0, 99)}" for _ in range(len(query))], dtype=pl.String)
    two_chunks = pl.concat([doc[:100], doc[100:]], rechunk=False)  # as after a part's carried rows
    assert two_chunks.n_chunks() == 2
    expected = pair_keys(query, doc)
    assert np.array_equal(pair_keys_of_blocks(pl.Series(block_query), block_length, doc), expected)
    assert np.array_equal(pair_keys_of_blocks(pl.Series(block_query), block_length, two_chunks), expected)
    assert len(np.unique(expected)) > len(expected) // 2  # the keys do depend on the pair


def _repeats_by_brute_force(keys: np.ndarray, starts: np.ndarray) -> bool:
    ends = np.append(starts[1:], len(keys))
    return any(len(set(keys[a:b].tolist())) < b - a for a, b in zip(starts, ends))


def _grouped_keys(rnd: random.Random, lengths: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Distinct keys (no two rows anywhere share one) in groups of ``lengths``, and the groups' starts."""
    keys = np.array(rnd.sample(range(1, 1 << 62), sum(lengths)), dtype=np.uint64)
    return keys, np.cumsum([0] + lengths[:-1]).astype(np.int64)


def test_keys_repeat_finds_a_repeat_inside_any_query():
    """A repeat in a query of the common length (sorted as a 2-D block), in one of another length (sorted
    together), in a first or last row, in queries of one row: found; distinct keys: not."""
    from trec_bridge.ordering import keys_repeat

    rnd = random.Random(21)
    shapes = [[5] * 8, [5] * 7 + [3], [1] * 9, [4, 1, 4, 1, 4, 2], [7, 2], [3], [2, 2], [1000] * 3 + [999]]
    for lengths in shapes:
        keys, starts = _grouped_keys(rnd, lengths)
        assert not keys_repeat(keys, starts), lengths
        for q, (start, length) in enumerate(zip(starts.tolist(), lengths)):
            if length < 2:
                continue
            for a, b in ((0, length - 1), (length - 2, length - 1), (0, 1)):
                planted = keys.copy()
                planted[start + b] = planted[start + a]
                assert keys_repeat(planted, starts), (lengths, q, a, b)


def test_keys_repeat_agrees_with_brute_force_on_random_groups():
    from trec_bridge.ordering import keys_repeat

    rnd = random.Random(7)
    for _ in range(300):
        lengths = [rnd.choice([1, 2, 3, 6, 6, 6, rnd.randint(1, 20)]) for _ in range(rnd.randint(1, 12))]
        keys, starts = _grouped_keys(rnd, lengths)
        for _ in range(rnd.choice([0, 0, 1, 2])):
            i, j = rnd.randrange(len(keys)), rnd.randrange(len(keys))
            keys[i] = keys[j]  # may join two queries' keys: a false alarm is allowed there, a miss never
        truth = _repeats_by_brute_force(keys, starts)
        assert keys_repeat(keys, starts) or not truth, (lengths, keys.tolist())
        if not truth and len(set(keys.tolist())) == len(keys):
            assert not keys_repeat(keys, starts)


def test_keys_repeat_of_no_or_one_row():
    from trec_bridge.ordering import keys_repeat

    assert not keys_repeat(np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64))
    assert not keys_repeat(np.array([5], dtype=np.uint64), np.array([0]))


def test_keys_repeat_settles_equal_top_halves_on_the_whole_keys():
    """Keys whose top 32 bits are equal but not the rest (the first, cheaper screen's false alarm) are distinct."""
    from trec_bridge.ordering import keys_repeat

    for lengths in ([4, 4, 4], [4, 4, 3]):
        keys, starts = _grouped_keys(random.Random(5), lengths)
        keys[1] = (keys[0] & np.uint64(0xFFFFFFFF00000000)) | np.uint64(12345)
        assert keys[1] != keys[0] and keys[1] >> np.uint64(32) == keys[0] >> np.uint64(32)
        assert not keys_repeat(keys, starts)
        keys[2] = keys[1]
        assert keys_repeat(keys, starts)


@pytest.mark.parametrize("n", [0, 1, 2, ordering.SORT_IN_POLARS - 1, ordering.SORT_IN_POLARS, 50_000])
def test_sorted_keys_are_numpys_sort_on_both_sides_of_the_polars_threshold(n):
    """The duplicate screens and the rank search read the keys sorted: polars' sort above the threshold must
    give numpy's values exactly (the top bit set, equal neighbours, the extremes included)."""
    rng = np.random.default_rng(n)
    keys = rng.integers(0, 2 ** 64 - 1, n, dtype=np.uint64, endpoint=True)
    if n > 2:
        keys[: n // 3] = keys[n // 3: 2 * (n // 3)]  # a third repeated
        keys[0], keys[-1] = np.uint64(2 ** 64 - 1), np.uint64(0)
    ordered = sorted_keys(keys)
    assert ordered.dtype == np.uint64 and np.array_equal(ordered, np.sort(keys))
    assert any_equal(keys) is (n > 2)
    assert any_equal(np.unique(keys)) is False  # distinct keys, however many

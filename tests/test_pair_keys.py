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

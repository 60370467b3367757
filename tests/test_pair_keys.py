"""The (query, document) hash that finds judged rows is the same however it is computed.

Run rows are keyed per block of one query (the query hashed once per block),
judgments row by row; a difference would silently lose judged rows.
"""
from __future__ import annotations

import random

import numpy as np
import polars as pl

from trec_bridge.ordering import pair_keys, pair_keys_of_blocks


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

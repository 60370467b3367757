"""score_permutation's sort puts rows in trec_eval's order: query, score descending, ties by document ID descending."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from trec_bridge.ordering import _by_query_then_score


@pytest.mark.parametrize("seed", range(40))
def test_rows_come_out_in_trec_eval_order(seed):
    rng = np.random.default_rng(seed)
    long_rankings = seed % 2 == 0  # both the one-sort-per-query and the two-sort paths
    n = int(rng.integers(1, 3000 if long_rankings else 60))
    qidx = np.sort(rng.integers(0, 3 if long_rankings else 30, n))
    score = rng.choice([0.0, -0.0, 1.0, 2.5, -1.0], n) if seed % 4 < 2 else rng.random(n)
    doc = pl.Series([f"d{rng.integers(0, 500)}" for _ in range(n)])
    order = _by_query_then_score(qidx, score, doc)
    assert sorted(order.tolist()) == list(range(n))
    rows = list(zip(qidx[order].tolist(), score[order].tolist(), doc.gather(order).to_list()))
    for (q1, s1, d1), (q2, s2, d2) in zip(rows, rows[1:]):
        # 0.0 and -0.0 are equal scores, as trec_eval compares them: the document ID decides
        assert q1 < q2 or (q1 == q2 and (s1 > s2 or (s1 == s2 and d1 >= d2)))


def test_rows_name_where_each_row_is_in_the_document_column():
    """score_permutation passes the whole document column and the rows it sorts (no gather of every row)."""
    qidx, score = np.array([0, 0, 0, 1, 1]), np.array([1.0, 2.0, 1.0, 0.0, -0.0])
    rows = np.array([1, 3, 5, 7, 9])
    doc = pl.Series([f"x{i}" if i not in rows else f"d{(i * 7) % 10}" for i in range(10)])
    order = _by_query_then_score(qidx, score, doc, rows)
    assert doc.gather(rows[order]).to_list() == ["d1", "d7", "d5", "d9", "d3"]  # ties: document ID descending

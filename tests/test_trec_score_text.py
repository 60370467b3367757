"""The TREC writer leaves a run's own scores to polars' CSV writer (``write_trec_lines``): its float text must be
the text ``score_column`` makes, the shortest digits that read back as the same double, for every double a run
can hold.  A polars release that formats the two differently fails here, not in a user's TREC file."""
from __future__ import annotations

import io
import math

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from converters.trec_run import choose_scores, score_column, write_trec_lines
from trec_bridge.model import RUN_SCHEMA

EDGES = [0.0, -0.0, 1.0, -1.0, 0.1, 1 / 3, 2.0 ** 53, 2.0 ** 53 + 2, 1e15, 1e16, 1e17, 1e21, 1e22, 1e-5, 1e-7,
         -1e-5, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 123456789012345678.0, 3.4028235e38,
         3.5e38, 100.0, 12.5, 1e300]


def _lines(scores: list[float]) -> list[str]:
    """Each row its own query, every score kept as the run's own, written by ``write_trec_lines``."""
    n = len(scores)
    frame = pl.DataFrame({"query_id": [f"q{i}" for i in range(n)], "doc_id": [f"d{i}" for i in range(n)],
                          "score": scores, "rank": [1] * n}, schema=RUN_SCHEMA)
    choice = choose_scores(frame, keep_off_order=True)  # --scores keep: beyond float32's range stays too
    assert not choice.synthetic_rows.any()
    buf = io.BytesIO()
    write_trec_lines(frame, choice, "tag", buf)
    return buf.getvalue().decode("ascii").splitlines()


def _expected(scores: list[float]) -> list[str]:
    n = len(scores)
    choice = choose_scores(pl.DataFrame({"query_id": [f"q{i}" for i in range(n)], "doc_id": [f"d{i}" for i in range(n)],
                                         "score": scores, "rank": [1] * n}, schema=RUN_SCHEMA), keep_off_order=True)
    return [f"q{i} Q0 d{i} 1 {text} tag" for i, text in enumerate(score_column(choice).to_list())]


def test_edge_doubles_are_written_as_score_column_writes_them():
    assert _lines(EDGES) == _expected(EDGES)


def test_written_scores_read_back_as_the_same_doubles():
    written = [float(line.split(" ")[4]) for line in _lines(EDGES)]
    assert [math.copysign(1, w) for w in written] == [math.copysign(1, e) for e in EDGES]
    assert written == EDGES


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=50))
def test_any_finite_double_is_written_as_score_column_writes_it(scores):
    assert _lines(scores) == _expected(scores)


def test_random_doubles_of_every_magnitude():
    rng = np.random.default_rng(22)
    scores = (rng.standard_normal(3000) * 10.0 ** rng.integers(-30, 30, 3000)).tolist()
    assert _lines(scores) == _expected(scores)

"""trec_eval runs in the background of the cross-check: same numbers, same errors, nothing left behind.

The cross-check starts trec_eval's process first and uses its own process for
the in-process tools and the axis walks meanwhile (``Reference.start`` /
``Pending.result``).  These tests pin down what must not change with that:
the results equal one-tool-at-a-time results, the error raised is the one of
the first tool (in the order asked) that fails, a trec_eval that is no longer
needed is killed and its temporary files removed, and the vectorised inputs
(the TREC run file, the pytrec_eval dict) are what the per-row code produced.
A fake trec_eval (a shell script) plays failures, slowness and large outputs.
"""
from __future__ import annotations

import os
import stat
import tempfile
import time

import numpy as np
import polars as pl
import pytest

from trec_bridge.crosscheck import ToolCheck, _compare, crosscheck, reference_policy
from trec_bridge.errors import ReferenceUnavailable
from trec_bridge.measures import parse_measures
from trec_bridge.model import RUN_SCHEMA, Dataset, Query, Run
from trec_bridge.references import Options, PytrecEval, TrecEval, find_binary, get
from trec_bridge.references.base import run_dict, scored_frame, unavailable
from trec_bridge.references.trec_eval import RUN_TAG, _write_run

from trec_bridge.reconcile import Walk

from .test_crosscheck_hypothesis import BARE_IDS, FLOAT32, GRADED_TIES, MEASURES, MISSING_AND_ZERO
from .test_references import B2, B5, qrels, run
from .test_walk import plain_walk

needs_trec_eval = pytest.mark.skipif(find_binary() is None, reason="trec_eval binary not found")
needs_pytrec_eval = pytest.mark.skipif(not get("pytrec_eval").available(), reason="pytrec_eval is not installed")
M = parse_measures

FAKE = """#!/bin/sh
if [ "$1" = "-v" ]; then echo "trec_eval version 9.0.4"; exit 0; fi
[ -n "$FAKE_TE_PID" ] && echo $$ > "$FAKE_TE_PID"
case "$FAKE_TE_MODE" in
  fail) echo "trec_eval.get_qrels: boom" >&2; exit 2;;
  slow) exec sleep 60;;
  big) exec awk 'BEGIN { for (i = 0; i < 200000; i++) printf "P_5\\tq%d\\t0.5000\\n", i; print "P_5\\tall\\t0.5000" }';;
esac
"""


@pytest.fixture
def fake_trec_eval(tmp_path, monkeypatch):
    """A fake binary behind $TREC_EVAL; set FAKE_TE_MODE to fail / slow / big.  Temp files go to tmp_path/tmp."""
    path = tmp_path / "trec_eval"
    path.write_text(FAKE)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("TREC_EVAL", str(path))
    monkeypatch.setenv("FAKE_TE_PID", str(tmp_path / "pid"))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    return tmp_path


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def dataset(q) -> Dataset:
    return Dataset(queries=tuple(Query(x) for x in q.query_ids()), qrels=q, query_source="qrels")


# ------------------------------------------------------------------ same numbers

@needs_trec_eval
@needs_pytrec_eval
def test_concurrent_crosscheck_equals_one_tool_at_a_time():
    q, r = B2[0], B2[1]
    ds, ms = dataset(q), M("AP P@1 nDCG RR@1")
    both = crosscheck(ds, r, ms, ["trec_eval", "pytrec_eval"], require=True)
    alone = [crosscheck(ds, r, ms, [tool]).tools[0] for tool in ("trec_eval", "pytrec_eval")]
    for got, want in zip(both.tools, alone):
        assert (got.tool, got.version, got.rows, got.aggregates, got.unexplained) == \
            (want.tool, want.version, want.rows, want.aggregates, want.unexplained)
        assert vars(got.reference) == vars(want.reference)
    assert TrecEval().start(q, r, ms).result() == TrecEval().evaluate(q, r, ms)


def _one_by_one(ds, r, ms, tools, complete=False):
    """The cross-check as it was: each tool evaluated, walked (one score() per step) and compared in turn."""
    checks = []
    for name in tools:
        ref = get(name)
        check = ToolCheck(name, reference_policy(name, complete), True, ref.version())
        check.reference = ref.evaluate(ds.qrels, r, ms, rel=ds.threshold, options=Options(complete=complete))
        check.walk = Walk(plain_walk(ds, r, ms, check.policy))
        _compare(check, ms)
        checks.append(check)
    return checks


@pytest.mark.parametrize("case", [FLOAT32, MISSING_AND_ZERO, GRADED_TIES, BARE_IDS])
def test_crosscheck_equals_the_one_by_one_cross_check(case):
    tools = [t for t in ("trec_eval", "pytrec_eval", "ir_measures") if get(t).available()]
    ds, r = case.dataset(), case.run()
    got = crosscheck(ds, r, MEASURES, tools, complete=case.complete).tools
    want = _one_by_one(ds, r, MEASURES, tools, case.complete)
    for g, w in zip(got, want):
        assert (g.tool, g.policy, g.version, g.rows, g.aggregates, g.unexplained) == \
            (w.tool, w.policy, w.version, w.rows, w.aggregates, w.unexplained)
        assert vars(g.reference) == vars(w.reference)
        assert [(a, s.policy, s.means) for a, s in g.walk.steps] == [(a, s.policy, s.means) for a, s in w.walk.steps]


# ------------------------------------------------------------------ errors, in the order asked

def test_first_failing_tool_in_the_order_asked_is_the_error(fake_trec_eval, monkeypatch):
    if not get("pytrec_eval").available():
        pytest.skip("pytrec_eval is not installed")
    monkeypatch.setenv("FAKE_TE_MODE", "fail")

    def broken(self, *args, **kwargs):
        raise unavailable("pytrec_eval: boom")

    monkeypatch.setattr(PytrecEval, "evaluate", broken)
    ds, ms = dataset(B5[0]), M("RR P@1")
    with pytest.raises(ReferenceUnavailable, match=r"trec_eval exited with 2: trec_eval.get_qrels: boom") as exc:
        crosscheck(ds, B5[1], ms, ["trec_eval", "pytrec_eval"])
    assert exc.value.code == "E_REFERENCE_UNAVAILABLE"
    with pytest.raises(ReferenceUnavailable, match="pytrec_eval: boom"):
        crosscheck(ds, B5[1], ms, ["pytrec_eval", "trec_eval"])
    with pytest.raises(ReferenceUnavailable, match="trec_eval exited with 2"):
        TrecEval().evaluate(*B5, ms)
    assert list((fake_trec_eval / "tmp").iterdir()) == []  # no temporary folder left behind


def test_unavailable_tool_after_a_failing_one_is_not_the_error(fake_trec_eval, monkeypatch):
    monkeypatch.setenv("FAKE_TE_MODE", "fail")
    monkeypatch.setattr("trec_bridge.references.pytrec_eval_ref.PytrecEval.available", lambda self: False)
    ds = dataset(B5[0])
    with pytest.raises(ReferenceUnavailable, match="exited with 2"):
        crosscheck(ds, B5[1], M("RR"), ["trec_eval", "pytrec_eval"])
    with pytest.raises(ReferenceUnavailable, match="pytrec_eval is not installed"):
        crosscheck(ds, B5[1], M("RR"), ["pytrec_eval", "trec_eval"])
    with pytest.raises(ReferenceUnavailable, match="exited with 2"):  # require=False: the missing tool is skipped
        crosscheck(ds, B5[1], M("RR"), ["pytrec_eval", "trec_eval"], require=False)


def test_a_trec_eval_no_longer_needed_is_killed_and_cleaned_up(fake_trec_eval, monkeypatch):
    if not get("pytrec_eval").available():
        pytest.skip("pytrec_eval is not installed")
    monkeypatch.setenv("FAKE_TE_MODE", "slow")
    monkeypatch.setattr(PytrecEval, "evaluate", lambda self, *a, **k: (_ for _ in ()).throw(unavailable("early")))
    began = time.monotonic()
    with pytest.raises(ReferenceUnavailable, match="early"):
        crosscheck(dataset(B5[0]), B5[1], M("RR"), ["pytrec_eval", "trec_eval"])
    assert time.monotonic() - began < 30
    assert _gone(int((fake_trec_eval / "pid").read_text()))
    assert list((fake_trec_eval / "tmp").iterdir()) == []


def test_timeout_and_cancel(fake_trec_eval, monkeypatch):
    monkeypatch.setenv("FAKE_TE_MODE", "slow")
    with pytest.raises(ReferenceUnavailable, match=r"did not finish within 0.5 s"):
        TrecEval().evaluate(*B5, M("RR"), options=Options(timeout=0.5))
    assert _gone(int((fake_trec_eval / "pid").read_text()))
    pending = TrecEval().start(*B5, M("RR"))
    for _ in range(100):
        if (fake_trec_eval / "pid").exists() and not _gone(int((fake_trec_eval / "pid").read_text())):
            break
        time.sleep(0.05)
    pending.cancel()
    assert _gone(int((fake_trec_eval / "pid").read_text()))
    assert list((fake_trec_eval / "tmp").iterdir()) == []


def test_output_larger_than_a_pipe_does_not_block(fake_trec_eval, monkeypatch):
    monkeypatch.setenv("FAKE_TE_MODE", "big")
    pending = TrecEval().start(*B5, M("P@5"))
    time.sleep(0.5)  # nobody reads the output meanwhile
    res = pending.result()
    assert len(res.per_query["P@5"]) == 200000 and res.aggregate["P@5"] == 0.5
    assert pending.result() is res  # a second call gives the same answer


# ------------------------------------------------------------------ vectorised inputs

def _old_run_lines(frame: pl.DataFrame) -> str:
    cols = [frame.get_column(c).to_list() for c in ("query_id", "doc_id", "rank", "score")]
    return "".join(f"{q} Q0 {d} {r} {s!r} {RUN_TAG}\n" for q, d, r, s in zip(*cols))


@pytest.mark.parametrize("odd", [False, True])
def test_run_file_bytes_equal_repr_lines(tmp_path, odd):
    rng = np.random.default_rng(7)
    bits = rng.integers(0, 2**63, size=20000, dtype=np.int64).view(np.float64)
    finite = bits[np.isfinite(bits) & ((np.abs(bits) >= 1e-4) | (bits == 0))]
    values = np.concatenate([finite, -finite[:500], np.round(rng.uniform(-50, 50, 5000), 6),
                             [0.0, -0.0, 1.0, 16777217.0, 1.00000001, 1e16, 1e39, -1e39, 0.0001, float("inf")]])
    if odd:
        values = np.concatenate([values, [1e-9, 2e-9, 1e-5, -3.5e-7, 5e-324, float("nan"), -float("inf")]])
    n = len(values)
    frame = pl.DataFrame({"query_id": [f"q{i // 100}" for i in range(n)], "doc_id": [f"d{i}" for i in range(n)],
                          "rank": np.arange(n) % 100 + 1, "score": values})
    _write_run(frame, str(tmp_path / "run.txt"))
    assert (tmp_path / "run.txt").read_bytes() == _old_run_lines(frame).encode()


def _old_run_dict(r: Run, frame: pl.DataFrame, include_empty: bool) -> dict:
    out: dict = {q: {} for q in r.queries} if include_empty else {}
    for q, d, s in zip(*(frame.get_column(c).to_list() for c in ("query_id", "doc_id", "score"))):
        out.setdefault(q, {})[d] = float(s)
    return out


@pytest.mark.parametrize("include_empty", [True, False])
def test_run_dict_equals_the_row_by_row_dict(include_empty):
    cases = [run("q1 b 2\nq1 a 1\nq2 c 0.5", empty=("q3",)), run("q1 a -\nq1 b -\nq2 a 1.0"),
             Run(pl.DataFrame(schema=RUN_SCHEMA), ("q1",))]
    # rows of a query in two blocks, and a repeated document (dict semantics: the later row wins, first position)
    split = pl.DataFrame({"query_id": ["q1", "q2", "q1", "q1"], "doc_id": ["a", "x", "b", "a"],
                          "score": [3.0, 2.0, 1.0, 0.5], "rank": [1, 1, 2, 3]}, schema=RUN_SCHEMA)
    cases.append(Run(split, ("q1", "q2", "q0")))
    for r in cases:
        frame, _ = scored_frame(r)
        got, want = run_dict(r, frame, include_empty), _old_run_dict(r, frame, include_empty)
        assert got == want and list(got) == list(want)
        assert all(list(got[q]) == list(want[q]) for q in got)


@needs_pytrec_eval
def test_unique_checked_runs_skip_the_duplicate_scan_only():
    q = qrels("q1 a 1\nq1 a 0")
    with pytest.raises(ReferenceUnavailable, match="the run's duplicate"):
        PytrecEval().evaluate(qrels("q1 a 1"), run("q1 a 2.0\nq1 a 1.0"), M("RR"))
    checked = Run(**{**run("q1 a 2.0").__dict__, "unique_checked": True})
    assert PytrecEval().evaluate(qrels("q1 a 1"), checked, M("RR")).per_query["RR"] == {"q1": 1.0}
    with pytest.raises(ReferenceUnavailable, match="the qrels's duplicate"):  # the qrels are still checked
        PytrecEval().evaluate(q, checked, M("RR"))


@needs_trec_eval
def test_ids_a_trec_line_cannot_carry_are_refused_before_writing():
    q = qrels("q1 a 1\nq2 b 1")
    assert TrecEval().evaluate(q, run("q1 a 1.0\nq2 b 1.0"), M("RR")).aggregate["RR"] == 1.0
    spaced = Run(pl.DataFrame({"query_id": ["q1", "q1", "q 2"], "doc_id": ["a", "c", "b"], "score": [2.0, 1.0, 1.0],
                               "rank": [1, 2, 1]}, schema=RUN_SCHEMA), ("q1", "q 2"))
    with pytest.raises(ReferenceUnavailable, match="the run has a query_id that a TREC file cannot carry: 'q 2'"):
        TrecEval().evaluate(q, spaced, M("RR"))
    empty = Run(spaced.frame.with_columns(pl.Series("query_id", ["q1", "q1", ""])), ("q1", ""))
    with pytest.raises(ReferenceUnavailable, match="query_id that a TREC file cannot carry: ''"):
        TrecEval().evaluate(q, empty, M("RR"))

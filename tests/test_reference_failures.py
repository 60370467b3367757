"""Reference tools on input they mishandle, and tools that crash anyway (issue 14, item 4b).

Before: a grade of 2^63-1 killed ``crosscheck`` by SIGSEGV inside pytrec_eval
(in-process); 2^31 made the trec_eval child allocate 12.5 GB until the kernel
killed it, and pytrec_eval's zeros became 12 unexplained differences (exit 3).
Now (1) the adapters refuse grades trec_eval's C code cannot hold, before
running anything (``grade_limit_reason``); (2) pytrec_eval and ir_measures run
in a forked child and trec_eval under an address-space limit, so a tool that
crashes, is killed or runs out of memory anyway is E_REFERENCE_FAILED with
the reason: exit 1, never exit 3, and trec-bridge itself survives.
The scorer refuses such grades first (tests/test_grade_range.py), so these
tests hand Qrels built in code to the adapters, as an API caller can.
"""
from __future__ import annotations

import os
import signal
import stat

import pytest

from trec_bridge.cli.main import main
from trec_bridge.crosscheck import crosscheck
from trec_bridge.errors import ReferenceFailed, ReferenceUnavailable
from trec_bridge.measures import parse_measures
from trec_bridge.model import Dataset, Query
from trec_bridge.references import IrMeasures, Options, PytrecEval, TrecEval, find_binary, get
from trec_bridge.references import base as ref_base
from trec_bridge.references.isolate import Isolated, Resident

from .test_references import qrels, run

needs_trec_eval = pytest.mark.skipif(find_binary() is None, reason="trec_eval binary not found")
needs_pytrec_eval = pytest.mark.skipif(not get("pytrec_eval").available(), reason="pytrec_eval is not installed")
needs_ir_measures = pytest.mark.skipif(not get("ir_measures").available(), reason="ir_measures is not installed")
M = parse_measures

# q1 is evaluated first, so the C code has allocated its per-grade array before q2's overflowing size:
# rel_levels[2^63-1]++ then writes far out of bounds (SIGSEGV; trec_eval and pytrec_eval alike).
SEGV = (qrels("q1 d1 1\nq2 d1 9223372036854775807\nq2 d2 1"), run("q1 d1 2\nq2 d1 2\nq2 d2 1"))
HUGE = (qrels("q1 d1 2147483648\nq1 d2 1"), run("q1 d1 2\nq1 d2 1"))  # 16 GiB of per-grade counts


def test_the_grade_limit_names_what_the_c_code_would_do():
    assert ref_base.grade_limit_reason([0, 1, ref_base.TREC_EVAL_MAX_GRADE], "pytrec_eval") is None
    over = ref_base.grade_limit_reason([ref_base.TREC_EVAL_MAX_GRADE + 1], "pytrec_eval")
    assert "form_res_rels.c" in over and str(ref_base.TREC_EVAL_MAX_GRADE) in over
    assert "16 GiB" in ref_base.grade_limit_reason([2 ** 31 - 1], "trec_eval")
    assert "overflows a C long" in ref_base.grade_limit_reason([2 ** 63 - 1], "trec_eval")


@pytest.mark.parametrize("tool", ["pytrec_eval", "trec_eval"])
@pytest.mark.parametrize("case", [SEGV, HUGE], ids=["2^63-1", "2^31"])
def test_adapters_refuse_grades_the_c_code_cannot_hold(tool, case):
    ref = get(tool)
    if not ref.available():
        pytest.skip(f"{tool} is not installed")
    with pytest.raises(ReferenceUnavailable, match="form_res_rels.c") as exc:
        ref.start(*case, M("P@1 nDCG@10")).result()
    assert exc.value.code == "E_REFERENCE_UNAVAILABLE"  # refused up front: nothing was run


@needs_ir_measures
def test_ir_measures_refuses_gains_that_become_huge_grades_for_its_pytrec_eval_provider():
    # gains= rewrites grades before the provider hands them to trec_eval's C code: 2^40 would be 8 TiB of counts
    q, r = qrels("q1 d1 1\nq1 d2 0"), run("q1 d1 2\nq1 d2 1")
    result = IrMeasures().start(q, r, M("nDCG(gains={1:1099511627776}) P@1")).result()
    key = "nDCG(gains={1:1099511627776})"
    assert "not run" in result.failed[key] and "form_res_rels.c" in result.failed[key]
    assert result.per_query["P@1"] == {"q1": 1.0}


@needs_pytrec_eval
def test_a_pytrec_eval_crash_is_a_failed_reference_not_our_crash(monkeypatch):
    monkeypatch.setattr(ref_base, "TREC_EVAL_MAX_GRADE", 2 ** 64)  # let the input through to see the crash contained
    with pytest.raises(ReferenceFailed, match="SIGSEGV") as exc:
        PytrecEval().start(*SEGV, M("P@1")).result()
    assert exc.value.code == "E_REFERENCE_FAILED"


@needs_trec_eval
def test_a_trec_eval_crash_is_a_failed_reference(monkeypatch):
    monkeypatch.setattr(ref_base, "TREC_EVAL_MAX_GRADE", 2 ** 64)
    with pytest.raises(ReferenceFailed, match="SIGSEGV") as exc:
        TrecEval().evaluate(*SEGV, M("P@1"))
    assert exc.value.code == "E_REFERENCE_FAILED"


@needs_trec_eval
def test_trec_eval_runs_under_a_memory_limit(monkeypatch):
    """2^31 made trec_eval allocate 12.5 GB: under the limit its allocation fails and it is reported as out of memory."""
    monkeypatch.setattr(ref_base, "TREC_EVAL_MAX_GRADE", 2 ** 64)
    with pytest.raises(ReferenceFailed, match="out of memory.*MiB") as exc:
        TrecEval().evaluate(*HUGE, M("P@1"), options=Options(memory_limit=512 << 20))
    assert exc.value.code == "E_REFERENCE_FAILED"


def test_a_child_that_kills_itself_or_exhausts_its_memory_is_reported():
    def segfault():
        os.kill(os.getpid(), signal.SIGSEGV)

    def killed():
        os.kill(os.getpid(), signal.SIGKILL)

    def hungry():
        return bytearray(4 << 30)

    for task, words in ((segfault, "SIGSEGV"), (killed, "SIGKILL"), (hungry, "out of memory")):
        with pytest.raises(ReferenceFailed, match=words):
            Isolated(task, "toy", timeout=60, budget=256 << 20).result()
    with pytest.raises(ReferenceFailed, match="did not finish within 0.5 s"):
        Isolated(lambda: __import__("time").sleep(30), "toy", timeout=0.5, budget=256 << 20).result()
    with pytest.raises(ValueError, match="the tool's own error"):  # an ordinary error comes back as itself
        Isolated(lambda: (_ for _ in ()).throw(ValueError("the tool's own error")), "toy", timeout=60,
                 budget=256 << 20).result()


FAKE_SEGV = """#!/bin/sh
if [ "$1" = "-v" ]; then echo "trec_eval version 9.0.4"; exit 0; fi
kill -SEGV $$
"""


@needs_pytrec_eval
def test_crosscheck_cli_reports_a_crashing_reference_as_failed_not_unexplained(tmp_path, monkeypatch, capsys):
    def crashing_task(self, *args, **kwargs):
        return lambda: os.kill(os.getpid(), signal.SIGSEGV)  # what the C code did on grade 2^63-1

    monkeypatch.setattr(PytrecEval, "_prepare", crashing_task)
    q, r = tmp_path / "q.txt", tmp_path / "r.txt"
    q.write_text("q1 0 d1 1\nq1 0 d2 0\n")
    r.write_text("q1 Q0 d1 1 2.0 x\nq1 Q0 d2 2 1.0 x\n")
    repro = tmp_path / "repro"
    code = main(["crosscheck", str(q), str(r), "P@1 AP", "--against", "pytrec_eval", "--repro-dir", str(repro),
                 "--json", str(tmp_path / "report.json")])
    err = capsys.readouterr().err
    assert code == 1 and "[E_REFERENCE_FAILED]" in err and "SIGSEGV" in err and "Traceback" not in err
    assert not repro.exists()
    fake = tmp_path / "trec_eval"  # the binary crashing is reported the same way
    fake.write_text(FAKE_SEGV)
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("TREC_EVAL", str(fake))
    code = main(["crosscheck", str(q), str(r), "P@1", "--against", "trec_eval", "--repro-dir", str(repro)])
    err = capsys.readouterr().err
    assert code == 1 and "[E_REFERENCE_FAILED]" in err and "SIGSEGV" in err and not repro.exists()


@needs_pytrec_eval
def test_isolated_pytrec_eval_gives_the_in_process_numbers():
    q, r = qrels("q1 a 2\nq1 b 1\nq1 c 0\nq2 z 1\nq2 y 0"), run("q1 c 3\nq1 a 2\nq1 b 1\nq2 y 2\nq2 z 1")
    ms = M("AP P@1 nDCG@2 RR")
    for ref in (PytrecEval(), IrMeasures()):
        if ref.available():
            assert vars(ref.start(q, r, ms).result()) == vars(ref.evaluate(q, r, ms))
    ds = Dataset(queries=(Query("q1"), Query("q2")), qrels=q, query_source="qrels")
    assert not crosscheck(ds, r, ms, ["pytrec_eval"]).unexplained


def test_crosscheck_at_the_largest_grade_runs_every_tool_or_says_why_not(tmp_path):
    """Grade 1023 is accepted: exponential gains no tool can be given are 'not compared' / 'failed', never a crash."""
    import subprocess
    import sys

    q, r = tmp_path / "q.txt", tmp_path / "r.txt"
    q.write_text("q1 0 d1 1023\nq1 0 d2 0\nq1 0 d3 1\n")
    r.write_text("q1 Q0 d2 1 3.0 x\nq1 Q0 d1 2 2.0 x\nq1 Q0 d3 3 1.0 x\n")
    tools = ",".join(t for t in ("trec_eval", "pytrec_eval", "ir_measures") if get(t).available())
    if not tools:
        pytest.skip("no reference tool installed")
    proc = subprocess.run([sys.executable, "-m", "trec_bridge.cli.main", "crosscheck", str(q), str(r),
                           "nDCG(gain=exp) nDCG@10 P@1", "--against", tools, "--repro-dir", str(tmp_path / "repro")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr == ""  # no overflow warning either
    assert "every difference is explained" in proc.stdout
    if "ir_measures" in tools:
        assert "nDCG(gain=exp)           ir_measures failed: not run" in proc.stdout


def test_a_cancelled_child_is_killed_and_reaped():
    pending = Isolated(lambda: __import__("time").sleep(60), "toy", timeout=None, budget=256 << 20)
    pid = pending._pid
    pending.cancel()
    with pytest.raises(ChildProcessError):  # already reaped: no zombie left
        os.waitpid(pid, os.WNOHANG)
    pending.cancel()  # harmless twice


# ---------------------------------------------------------------- the resident child (ranx's)

def _pid_and(value):
    """A picklable task: which process ran it, and a value."""
    return os.getpid(), value


def _die(signum):
    os.kill(os.getpid(), signum)


def _allocate(n):
    return len(bytearray(n))


@pytest.fixture
def fresh_residents():
    Resident.stop_all()
    yield
    Resident.stop_all()


def test_a_resident_child_runs_the_later_tasks_of_its_tool(fresh_residents):
    import functools

    first = Resident(functools.partial(_pid_and, 1), "toy", timeout=60, budget=256 << 20).result()
    second = Resident(functools.partial(_pid_and, 2), "toy", timeout=60, budget=256 << 20).result()
    assert first[0] != os.getpid() and second == (first[0], 2)  # the same child, not this process
    other = Resident(functools.partial(_pid_and, 3), "other", timeout=60, budget=256 << 20).result()
    assert other[0] not in (os.getpid(), first[0])  # one child per tool
    # a closure cannot be sent: it gets a child of its own, and the resident one stays
    pid, value = Resident(lambda: (os.getpid(), 4), "toy", timeout=60, budget=256 << 20).result()
    assert value == 4 and pid not in (os.getpid(), first[0])
    assert Resident(functools.partial(_pid_and, 5), "toy", timeout=60, budget=256 << 20).result() == (first[0], 5)


def test_a_resident_child_that_dies_or_hangs_is_reported_and_replaced(fresh_residents):
    import functools

    pid, _ = Resident(functools.partial(_pid_and, 0), "toy", timeout=60, budget=256 << 20).result()
    with pytest.raises(ReferenceFailed, match="SIGSEGV"):
        Resident(functools.partial(_die, signal.SIGSEGV), "toy", timeout=60, budget=256 << 20).result()
    with pytest.raises(ChildProcessError):  # reaped
        os.waitpid(pid, os.WNOHANG)
    pid2, _ = Resident(functools.partial(_pid_and, 0), "toy", timeout=60, budget=256 << 20).result()
    assert pid2 != pid
    with pytest.raises(ReferenceFailed, match="did not finish within 0.5 s"):
        Resident(functools.partial(__import__("time").sleep, 30), "toy", timeout=0.5, budget=256 << 20).result()
    with pytest.raises(ReferenceFailed, match="out of memory"):  # each task under its own budget
        Resident(functools.partial(_allocate, 4 << 30), "toy", timeout=60, budget=256 << 20).result()
    # the budget is lifted after the task: a later, larger budget is honoured by the same child
    assert Resident(functools.partial(_allocate, 300 << 20), "toy", timeout=60, budget=1 << 30).result() == 300 << 20
    with pytest.raises(ValueError, match="its own error"):  # an ordinary error comes back as itself
        Resident(functools.partial(int, "its own error"), "toy", timeout=60, budget=256 << 20).result()


def test_a_resident_task_cancelled_before_its_result_ends_the_child(fresh_residents):
    import functools

    pending = Resident(functools.partial(__import__("time").sleep, 60), "toy", timeout=None, budget=256 << 20)
    pid = pending._worker.pid
    pending.cancel()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    assert Resident(functools.partial(_pid_and, 1), "toy", timeout=60, budget=256 << 20).result()[1] == 1

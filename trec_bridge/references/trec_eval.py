"""The real trec_eval binary, run on temporary TREC files written from our model.

The binary is the ground truth everyone quotes, so it is called the way users
call it: ``trec_eval -q [-c] [-lN] [-M k] -m P.5,10 -m recip_rank ... qrels run``,
one ``-m`` per measure family with all cutoffs joined (9.0.4 silently ignores
a second ``-m P.x``), one call per relevance level.  Scores are written with
``repr(float)`` so that trec_eval's own float32 parsing is what we observe.
"""
from __future__ import annotations

import functools
import os
import re
import time
from typing import TYPE_CHECKING

import numpy as np

from ..measures.base import Measure
from ..policy import TREC_EVAL, TREC_EVAL_C, TREC_EVAL_ORDER
from ..model import Qrels, Run
from .base import (Done, Options, Pending, Reference, ReferenceResult, crashing_queries, effective_rel, fmt_number,
                   gain_map, ignores_cutoff, negative_gain_reason, own_parameter, refuse_unholdable, scored_frame,
                   takes_threshold, trec_eval_name, trec_eval_reason, unavailable)
from .registry import Tool, register
from .result import Collected
from .isolate import MIB, death_reason, failed, limit_memory, looks_out_of_memory, memory_limit

if TYPE_CHECKING:  # polars is imported where a frame is built, pathlib where a path is: registering the tool loads
    from pathlib import Path  # neither (score --policy trec_eval on small files, cli/quick.py)

    import polars as pl

# shlex, shutil, subprocess, tempfile and the installer are imported where trec_eval is found or run: a policy
# that only asks whether trec_eval computes a measure (``score --policy trec_eval``) starts without them

ENV_VAR = "TREC_EVAL"
RUN_TAG = "trec_bridge"


def default_install_path() -> Path:
    """Where ``trec-bridge tools install-trec-eval`` puts the binary by default."""
    from ..tools.install_trec_eval import BINARY_NAME, default_dest

    return default_dest() / BINARY_NAME


def find_binary() -> str | None:
    """``$TREC_EVAL``, then ``trec_eval`` on PATH, then the installer's default location."""
    import shutil

    env = os.environ.get(ENV_VAR)
    if env:
        found = shutil.which(env)
        return found  # an explicit setting that does not resolve is not silently replaced
    on_path = shutil.which("trec_eval")
    if on_path:
        return on_path
    default = default_install_path()
    return str(default) if default.is_file() and os.access(default, os.X_OK) else None


class TrecEval(Reference):
    name = "trec_eval"
    precision = 4  # printf %6.4f
    background = True  # a separate process: start() returns while it runs

    def __init__(self, binary: str | None = None):
        self._binary_arg = binary
        self._version: str | None = None

    def binary(self) -> str:
        import shutil

        path = shutil.which(self._binary_arg) if self._binary_arg else find_binary()
        if not path:
            hint = f"{ENV_VAR}={os.environ[ENV_VAR]!r} does not name an executable" if os.environ.get(ENV_VAR) \
                else "not on PATH nor installed"
            raise unavailable(f"trec_eval binary not found ({hint}); run `trec-bridge tools install-trec-eval` "
                              f"or set {ENV_VAR}")
        return path

    def available(self) -> bool:
        try:
            self.version()
            return True
        except Exception:  # noqa: BLE001 - any failure means "not usable"
            return False

    def version(self) -> str:
        if self._version is None:
            import subprocess

            path = self.binary()
            try:
                proc = subprocess.run([path, "-v"], capture_output=True, text=True, timeout=30)
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise unavailable(f"cannot run {path}: {exc}") from None
            match = re.search(r"trec_eval version (\S+)", proc.stdout + proc.stderr)
            if not match:
                raise unavailable(f"{path} -v printed no trec_eval version (exit {proc.returncode})")
            self._version = match.group(1)
        return self._version

    def _reason(self, measure: Measure, rel: int) -> str | None:
        reason = trec_eval_reason(measure, rel)
        if reason is None and rel < 0 and takes_threshold(measure):
            reason = "trec_eval -l below 0 counts unjudged documents as relevant"
        return reason

    def refusal_under(self, policy, measure: Measure, rel: int, qrels: Qrels) -> str | None:
        reason = self.refusal(measure, rel, qrels)
        if reason is None and policy.query_set == "judged":  # -c
            reason = complete_num_rel_reason(measure, rel)
        return reason

    def refusal(self, measure: Measure, rel: int, qrels: Qrels) -> str | None:
        reason = super().refusal(measure, rel, qrels)
        if reason is None and measure.cutoff is None:
            mapping = gain_map(measure, qrels)  # ndcg takes a gain map as its parameter: can it hold this one?
            if mapping is not None:
                # trec_eval compares every gain in play, unlisted grades included (their gain is the grade)
                grades = qrels.frame.get_column("grade").unique().drop_nulls().to_list()
                reason = _gains_reason({**{int(g): float(g) for g in grades if g >= 0}, **mapping})
                if reason is None and measure.family == "RnDCG":
                    reason = _rndcg_nan_reason(qrels, mapping, effective_rel(measure, rel))
        return reason

    def evaluate(self, qrels: Qrels, run: Run, measures: list[Measure], *, rel: int = 1,
                 options: Options = Options()) -> ReferenceResult:
        return self._launch(qrels, run, measures, rel, options).result()

    def start(self, qrels: Qrels, run: Run, measures: list[Measure], *, rel: int = 1,
              options: Options = Options()) -> Pending:
        """Write the files and launch the first trec_eval call; ``.result()`` waits for it (and runs any others)."""
        try:
            return self._launch(qrels, run, measures, rel, options)
        except Exception as exc:  # noqa: BLE001 - re-raised by result(), in the caller's order
            return Done(error=exc)

    def _launch(self, qrels: Qrels, run: Run, measures: list[Measure], rel: int, options: Options) -> Pending:
        import shlex
        import tempfile

        binary = self.binary()
        result = ReferenceResult(self.name, self.version(), precision=self.precision)
        frame, synthetic = scored_frame(run)
        if synthetic:
            result.notes.append(f"synthetic scores n-position+1 for queries without scores: {synthetic}")
        empty = run.empty_queries()
        if empty:
            result.notes.append(f"explicit empty rankings cannot be written to a TREC run; absent for trec_eval: {empty}")
        selected = self._split(measures, rel, result, qrels)
        if options.complete:
            for m, level in selected:
                reason = complete_num_rel_reason(m, level)
                if reason:
                    result.unsupported[str(m)] = reason
            selected = [(m, level) for m, level in selected if str(m) not in result.unsupported]
        calls = self._plan(selected, qrels, options, result)
        if not calls:
            return Done(result)
        _check_tokens(qrels, frame)
        refuse_unholdable(qrels, self.name)
        crash = crashing_queries(qrels, frame.get_column("query_id").unique(maintain_order=True).to_list())
        if crash:
            raise unavailable(f"trec_eval cannot evaluate query {crash[0]!r}: all its judgments are negative, on which "
                              "trec_eval 9 (form_res_rels.c) exits 4, crashes or loops")
        tmp = tempfile.TemporaryDirectory(prefix="trec-bridge-te-")
        try:
            qpath, rpath = os.path.join(tmp.name, "qrels.txt"), os.path.join(tmp.name, "run.txt")
            _write_qrels(qrels, qpath)
            _write_run(frame, rpath)
            invocations = []
            for (level, max_docs, gains), call in calls.items():
                args = [binary, "-q"] + (["-c"] if options.complete else []) + ([f"-l{level}"] if level != 1 else [])
                args += ["-M", str(max_docs)] if max_docs is not None else []
                for base, params in call["families"].items():
                    args += ["-m", base + ("." + ",".join(params) if params else "")]
                result.command.append(shlex.join(["trec_eval", *args[1:], "QRELS", "RUN"]))
                invocations.append((args + [qpath, rpath], call["wanted"]))
            limit = options.memory_limit or memory_limit(os.path.getsize(qpath) + os.path.getsize(rpath))
            return _Calls(result, invocations, tmp, options, limit)
        except BaseException:
            tmp.cleanup()
            raise

    def _plan(self, selected, qrels: Qrels, options: Options, result: ReferenceResult) -> dict:
        """Group measures into calls: one per (rel, -M, own parameter: a gain map, set_F's β, ...); one -m per family.

        nDCG ignores -l, so it simply rides along in the call of its rel.
        """
        calls: dict = {}
        for m, level in selected:
            base, param, out_name = trec_eval_name(m)
            served, max_docs, gains = out_name, None, None
            if ignores_cutoff(m):
                if options.rr_cutoff == "emulate":
                    max_docs, served = m.cutoff, f"{out_name} (-M {m.cutoff})"
                else:
                    served = f"{out_name} (cutoff ignored)"
            if m.cutoff is None:
                mapping = gain_map(m, qrels)
                if mapping is not None:  # one trec_eval can hold: refusal() said so
                    spec = ",".join(f"{g}={fmt_number(v)}" for g, v in sorted(mapping.items()) if g >= 0)
                    if spec:  # an empty map (no grade >= 0 to remap) is plain ndcg
                        gains = param = spec
                        out_name = served = f"{base}_{spec}"
                    else:
                        param, out_name, served = None, base, base
            if gains is None and own_parameter(m) is not None:  # one such parameter per -m name and call
                gains = f"{base}.{param}"
            call = calls.setdefault((level, max_docs, gains), {"families": {}, "wanted": []})
            params = call["families"].setdefault(base, [])
            if param is not None and param not in params:
                params.append(param)
            call["wanted"].append((str(m), out_name, served))
        return calls


class _Calls(Collected):
    """trec_eval calls on files already written: the first runs from construction on, the others in turn.

    Output goes to anonymous temporary files, not pipes, so a process nobody
    reads yet never blocks on a full pipe.  The temporary folder is removed
    when the last call ends, fails or is cancelled.
    """

    def __init__(self, result: ReferenceResult, invocations: list[tuple[list[str], list]], tmp, options: Options,
                 limit: int):
        self._result, self._invocations, self._tmp, self._options = result, invocations, tmp, options
        self._limit = limit  # address space of each call (RLIMIT_AS): a huge allocation fails instead of swapping
        self._proc = self._out = self._err = None
        self._started = 0.0
        try:
            self._spawn(invocations[0][0])
        except BaseException:
            self.cancel()
            raise

    def _spawn(self, args: list[str]) -> None:
        import subprocess
        import tempfile

        self._out = tempfile.TemporaryFile("w+", dir=self._tmp.name)
        self._err = tempfile.TemporaryFile("w+", dir=self._tmp.name)
        self._started = time.monotonic()
        try:
            self._proc = subprocess.Popen(args, stdout=self._out, stderr=self._err,
                                          preexec_fn=functools.partial(limit_memory, self._limit))
        except OSError as exc:
            raise unavailable(f"cannot run trec_eval: {exc}") from None

    def _collect(self) -> ReferenceResult:
        result = self._result
        for i, (args, wanted) in enumerate(self._invocations):
            if i:
                self._close()
                self._spawn(args)
            table = parse_output(self._wait())
            for key, out_name, served in wanted:
                if out_name not in table:
                    raise unavailable(f"trec_eval printed no {out_name} rows for {key}")
                per_query, agg = table[out_name]
                result.per_query[key] = per_query
                if agg is not None:
                    result.aggregate[key] = agg
                result.served_by[key] = served
                result.native[key] = out_name
        return result

    def _wait(self) -> str:
        """The call's stdout once it exited 0; its message as ReferenceUnavailable otherwise."""
        import subprocess

        timeout = self._options.timeout
        try:
            code = self._proc.wait(None if timeout is None else max(0.0, timeout - (time.monotonic() - self._started)))
        except subprocess.TimeoutExpired:
            raise failed(f"trec_eval did not finish within {timeout} s") from None
        self._out.seek(0)
        self._err.seek(0)
        stdout, stderr = self._out.read(), self._err.read()
        limit = f"under a memory limit of {self._limit // MIB} MiB"
        if code < 0:
            raise failed(f"trec_eval failed: {death_reason(-code)} ({limit})")
        if code != 0:
            msg = " | ".join((stderr.strip() or stdout.strip()).splitlines()[:5]) or "no message"
            if looks_out_of_memory(msg) and "duplicate" not in msg:  # its message after a duplicate is the same
                raise failed(f"trec_eval exited with {code}: {msg}; out of memory: that is its message when an "
                             f"allocation fails, and it ran {limit}")
            raise unavailable(f"trec_eval exited with {code}: {msg}")
        return stdout

    def _close(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        self._proc = None
        for f in (self._out, self._err):
            if f is not None:
                f.close()
        self._out = self._err = None

    def cancel(self) -> None:
        self._close()
        self._tmp.cleanup()


def complete_num_rel_reason(measure: Measure, rel: int) -> str | None:
    """trec_eval -c sums num_rel over the grades above 0 whatever -l: its summary is NumRel's only at rel 1."""
    if measure.family == "NumRel" and rel != 1:
        return ("trec_eval -c sums num_rel over every judgment with a grade above 0 whatever -l (m_num_rel.c "
                "te_calc_avg_num_rel), so its summary is not NumRel's at another threshold")
    return None


def parse_output(text: str) -> dict[str, tuple[dict[str, float], float | None]]:
    """``-q`` output -> {printed name: ({query: value}, all)}.

    The summary row of a measure is its *last* row with query ``all`` (the
    summary is printed after every per-query row), so a real query named
    ``all`` is still read as a query.
    """
    rows: dict[str, list[tuple[str, str]]] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3:
            rows.setdefault(parts[0], []).append((parts[1], parts[2]))
    out = {}
    for name, items in rows.items():
        agg = None
        if items[-1][0] == "all":
            agg = float(items[-1][1])
            items = items[:-1]
        out[name] = ({q: float(v) for q, v in items}, agg)
    return out


def _gains_reason(mapping: dict[int, float]) -> str | None:
    reason = negative_gain_reason(mapping)
    if reason:
        return reason
    values = sorted({v for g, v in mapping.items() if g >= 0})
    with np.errstate(over="ignore"):  # 2^1023-1 becomes inf in a float: not held exactly, said below
        inexact = any(float(np.float32(v)) != v for v in values)
    if inexact:
        return "a gain that trec_eval's float parameters cannot hold exactly"
    if any(0 < b - a < 1 for a, b in zip(values, values[1:])):
        return "gains closer than 1: trec_eval 9.0.4 sorts gains by (int)(g1 - g2) (m_ndcg.c comp_rel_gain)"
    return None


def _rndcg_nan_reason(qrels: Qrels, mapping: dict[int, float], rel: int) -> str | None:
    """trec_eval 9.0.4's Rndcg is 0/0, printed nan, for a query with a relevant document but no positive gain."""
    import polars as pl

    f = qrels.frame
    grade = f.get_column("grade")
    gain = grade.cast(pl.Float64).replace_strict(list(mapping), list(mapping.values()), default=grade.cast(pl.Float64))
    per_query = f.with_columns(gain=gain).group_by("query_id").agg(
        relevant=(pl.col("grade") >= max(rel, 0)).any(), gained=((pl.col("gain") > 0) & (pl.col("grade") >= 0)).any())
    bad = per_query.filter(pl.col("relevant") & ~pl.col("gained")).get_column("query_id").sort().to_list()
    if bad:
        return (f"query {bad[0]!r} has a relevant document but no positive gain under this map, where trec_eval 9.0.4's "
                "Rndcg divides 0 by 0 and prints nan (m_Rndcg.c)")
    return None


def _check_tokens(qrels: Qrels, frame: pl.DataFrame) -> None:
    """A TREC file cannot carry an empty ID or one with whitespace: say so instead of writing a shifted line."""
    for what, df in (("qrels", qrels.frame), ("run", frame)):
        for col in ("query_id", "doc_id"):
            ids = df.get_column(col)
            if what == "run" and col == "query_id":  # rows are grouped by query: each block's first ID will do
                ids = ids.filter(ids.ne_missing(ids.shift(1)))
            bad = ids.filter(ids.is_null() | (ids == "") | ids.str.contains(r"\s"))
            if bad.len():
                raise unavailable(f"the {what} has a {col} that a TREC file cannot carry: {bad[0]!r}")


def _write_qrels(qrels: Qrels, path: str) -> None:
    f = qrels.frame
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        for q, d, g in zip(f.get_column("query_id").to_list(), f.get_column("doc_id").to_list(),
                           f.get_column("grade").to_list()):
            out.write(f"{q} 0 {d} {g}\n")


def _write_run(frame: pl.DataFrame, path: str) -> None:
    """``q Q0 doc rank repr(score) trec_bridge`` lines, written by polars (a Python step per line took seconds)."""
    import polars as pl

    score = frame.get_column("score").cast(pl.Float64)
    lines = frame.select("query_id", pl.lit("Q0").alias("q0"), "doc_id", "rank", score_text(score),
                         pl.lit(RUN_TAG).alias("tag"))
    lines.write_csv(path, include_header=False, separator=" ", quote_style="never", line_terminator="\n")


def score_text(score: pl.Series) -> pl.Series:
    """The scores as ``repr`` prints them, vectorised.

    polars prints a double as ``repr`` does (shortest round-trip digits)
    except NaN and magnitudes below 1e-4 (``1e-9`` for ``1e-09``, ``0.00001``
    for ``1e-05``).  Without such a score the column stays numeric (polars
    writes it the same way, faster); otherwise those rows take ``repr`` itself.
    """
    odd = (score.is_nan() | ((score.abs() < 1e-4) & (score != 0))).fill_null(False)
    if not odd.any():
        return score.alias("score")
    idx = odd.arg_true()
    import polars as pl

    text = score.cast(pl.String).scatter(idx, [repr(v) for v in score.gather(idx).to_list()])
    return text.alias("score")


register(Tool("trec_eval", TrecEval, TREC_EVAL, complete_policy=TREC_EVAL_C, reasons={
    ("ordering", TREC_EVAL_ORDER): "scores are read into a 32-bit float (trec_eval 9, pytrec_eval), so close scores "
                                   "tie and the tie goes to the larger docno"}))

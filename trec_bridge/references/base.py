"""What every reference adapter offers, and the input conversions they share.

A reference is an outside evaluator run on *our* model, so that the
cross-check sees each tool's own behaviour (tie order, float32 scores, which
queries it averages).  Adapters therefore hand over the run's real scores, never
a canonicalised ranking, and report only what the tool itself printed or
returned: a measure the tool cannot compute is listed in ``unsupported`` with a
reason, never approximated.
"""
from __future__ import annotations

import os
import sys
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Literal

from ..errors import ReferenceUnavailable
from ..grades import GRADE_MAX
from ..measures.base import FAMILIES, Measure
from ..measures.trec_names import trec_eval_form
from ..measures.variants import named_variant
from ..model import Qrels, Run
from ..ordering import synthetic_score_expr
from .result import Done, Pending, ReferenceResult  # noqa: F401  (re-exported: the adapters import them from here)
from ..messages import quote

if TYPE_CHECKING:  # polars is imported where a frame is built: registering the tools loads none
    import polars as pl


@dataclass(frozen=True)
class Options:
    """Switches that change how a tool is invoked (ignored by tools that have no such switch)."""

    complete: bool = False  # trec_eval -c: qrels queries missing from the run count as 0 in "all"
    rr_cutoff: Literal["ignore", "emulate"] = "ignore"  # trec_eval RR@k: plain recip_rank, or a run with -M k
    timeout: float | None = 600.0  # seconds per external process
    memory_limit: int | None = None  # bytes of address space per tool process; None: sized by the input (isolate.py)


class Reference(ABC):
    """An outside evaluator.  Subclasses import their tool lazily so that a missing tool is reported, not fatal."""

    name: str = ""
    precision: int | None = None

    @abstractmethod
    def available(self) -> bool: ...

    @abstractmethod
    def version(self) -> str:
        """The tool's version; raises ReferenceUnavailable when the tool is absent."""

    def supports(self, measure: Measure) -> str | None:
        """None when the tool computes ``measure`` as we define it, else a one-line reason."""
        return self._reason(measure, measure.rel if measure.rel is not None else 1)

    def refusal(self, measure: Measure, rel: int, qrels: Qrels) -> str | None:
        """Why this tool cannot give ``measure`` at default threshold ``rel`` on these judgments; None when it can.

        The one rule behind both the cross-check's "not compared" and a policy
        emulating this tool refusing the measure (``scorer.score``): an
        emulation never prints a number the tool does not print.  Subclasses
        add what depends on the judgments (nDCG gain maps).
        """
        named = named_variant(measure)
        if named is not None:
            return f"{named} is a named variant of {measure.family} (docs/explain.md) that no reference tool computes"
        return self._reason(measure, effective_rel(measure, rel))

    def refusal_under(self, policy, measure: Measure, rel: int, qrels: Qrels) -> str | None:
        """``refusal`` for a policy emulating this tool (a tool may compute a measure under one of its option sets
        only: trec_eval -c and num_rel)."""
        return self.refusal(measure, rel, qrels)

    @abstractmethod
    def _reason(self, measure: Measure, rel: int) -> str | None:
        """``supports`` at the effective relevance level ``rel``."""

    @abstractmethod
    def evaluate(self, qrels: Qrels, run: Run, measures: list[Measure], *, rel: int = 1,
                 options: Options = Options()) -> ReferenceResult: ...

    # True when ``start`` hands the work to another process, so the caller can use this one meanwhile.
    background: bool = False

    def start(self, qrels: Qrels, run: Run, measures: list[Measure], *, rel: int = 1,
              options: Options = Options()) -> "Pending":
        """Begin ``evaluate``; ``.result()`` of the handle returns its result or raises its error.

        In-process tools simply evaluate here.  An error is kept in the handle,
        not raised, so a caller running several tools reports them in its own order.
        """
        try:
            return Done(self.evaluate(qrels, run, measures, rel=rel, options=options))
        except Exception as exc:  # noqa: BLE001 - re-raised by result(), in the caller's order
            return Done(error=exc)

    def _split(self, measures: list[Measure], rel: int, result: ReferenceResult,
               qrels: Qrels) -> list[tuple[Measure, int]]:
        """The measures this tool will compute with their effective rel; the others go to ``unsupported``."""
        keep = []
        for m in measures:
            reason = self.refusal(m, rel, qrels)
            if reason is None:
                keep.append((m, effective_rel(m, rel)))
            else:
                result.unsupported[str(m)] = reason
        return keep


class PythonReference(Reference):
    """A reference that is a Python package: imported lazily, so its absence is reported, not fatal.

    An adapter whose tool could crash or exhaust memory in our process (C code
    such as pytrec_eval) implements ``_prepare``: every input is built and
    checked here, and the returned task (the tool call only) runs in a forked
    child (``isolate.Isolated``) when the cross-check ``start``s it.
    """

    module_name: str = ""
    pip_name: str = ""
    background = True  # start() forks: the tool runs while the caller walks the axes
    # True: the child stays for this tool's later tasks (isolate.Resident), so an expensive start-up (ranx's numba)
    # is paid once a process; ``_prepare`` then returns a picklable task (a module function, functools.partial)
    resident = False

    def _prepare(self, qrels: Qrels, run: Run, measures: list[Measure], rel: int,
                 options: Options) -> Callable[[], ReferenceResult]:
        """Inputs built and checked in this process; returns the tool call, which must not use polars."""
        raise NotImplementedError

    def evaluate(self, qrels: Qrels, run: Run, measures: list[Measure], *, rel: int = 1,
                 options: Options = Options()) -> ReferenceResult:
        """In this process (a library call that wants no child); the cross-check uses ``start``."""
        return self._prepare(qrels, run, measures, rel, options)()

    def start(self, qrels: Qrels, run: Run, measures: list[Measure], *, rel: int = 1,
              options: Options = Options()) -> "Pending":
        from .isolate import Isolated, Resident, memory_limit

        if type(self).evaluate is not PythonReference.evaluate or not hasattr(os, "fork"):
            return super().start(qrels, run, measures, rel=rel, options=options)  # its own evaluate, or no fork: as is
        try:
            task = self._prepare(qrels, run, measures, rel, options)
            rows = qrels.frame.height + run.frame.height
            budget = options.memory_limit or memory_limit(rows * BYTES_PER_ROW)
            child = Resident if self.resident else Isolated
            return child(task, self.name, timeout=options.timeout, budget=budget)
        except Exception as exc:  # noqa: BLE001 - re-raised by result(), in the caller's order
            return Done(error=exc)

    def _module(self):
        import importlib

        try:
            return importlib.import_module(self.module_name)
        except ImportError as exc:
            raise unavailable(f"{self.module_name} is not installed ({exc}); pip install {self.pip_name}") from None

    def available(self) -> bool:
        try:
            self._module()
            return True
        except Exception:  # noqa: BLE001  (a broken install is "not available", never a crash)
            return False

    def version(self) -> str:
        return str(getattr(self._module(), "__version__", "unknown"))


def unavailable(message: str) -> ReferenceUnavailable:
    return ReferenceUnavailable("E_REFERENCE_UNAVAILABLE", message)


def effective_rel(measure: Measure, rel: int) -> int:
    """A measure's own ``rel=`` overrides the call's default threshold."""
    return measure.rel if measure.rel is not None else rel


# ---------------------------------------------------------------- inputs

def scored_frame(run: Run) -> tuple[pl.DataFrame, list[str]]:
    """The run's rows with the scores the model holds; a query whose scores are null gets synthetic ones
    (``ordering.synthetic_scores``: n - position + 1).

    Returns the frame (query_id, doc_id, rank, score) and the queries that got
    synthetic scores (reported as a note: those queries carry no tie or
    precision behaviour of their own).
    """
    frame = run.frame.select("query_id", "doc_id", "rank", "score")
    if frame.get_column("score").null_count() == 0:
        return frame, []  # the usual case, without grouping 7M rows to find none
    import polars as pl

    nulls = frame.group_by("query_id", maintain_order=True).agg(pl.col("score").null_count().alias("n_null"))
    synthetic = nulls.filter(pl.col("n_null") > 0).get_column("query_id").to_list()
    if synthetic:
        frame = frame.with_columns(pl.when(pl.col("query_id").is_in(synthetic)).then(synthetic_score_expr())
                                   .otherwise(pl.col("score")).alias("score"))
    return frame, synthetic


def check_unique(qrels: Qrels, frame: pl.DataFrame | None, tool: str) -> None:
    """Duplicates cannot reach a dict-based tool unchanged (the last would silently win): refuse them.

    ``frame`` None: the run's reader already refused duplicates (``Run.unique_checked``).  A diversity qrels
    judges a document once per subtopic: its key is (query, subtopic, document).
    """
    import polars as pl

    for what, df in (("qrels", qrels.frame), ("run", frame)):
        if df is None:
            continue
        key = ("query_id", "iteration", "doc_id") if what == "qrels" and qrels.subtopics else ("query_id", "doc_id")
        dup = df.filter(pl.struct(*key).is_duplicated())
        if dup.height:
            row = dup.row(0, named=True)
            raise unavailable(f"{tool} takes a dict, which cannot hold the {what}'s duplicate "
                              f"(query {quote(row['query_id'])}, document {quote(row['doc_id'])})")


def crashing_queries(qrels: Qrels, evaluated) -> list[str]:
    """Evaluated queries whose judgments are all negative: trec_eval 9's C code has undefined behaviour on them.

    ``te_form_res_rels`` (form_res_rels.c) sizes its per-grade counts
    ``max_rel + 1`` and keeps them in static state: for such a query it fails
    (exit 4, "Can't calculate measure") when nothing was allocated before,
    segfaults on the memset when the top grade is -2 or below, and otherwise
    leaves ``num_rel_levels`` stale, so nDCG's ideal reads stale or
    uninitialised counts (observed: pytrec_eval looping for minutes, depending
    on the heap).  In pytrec_eval that state lives as long as the process, so
    the adapters refuse such queries instead of running the tool.
    """
    import polars as pl

    top = qrels.frame.group_by("query_id").agg(pl.col("grade").max())
    negative = set(top.filter(pl.col("grade") < 0).get_column("query_id").to_list())
    return [q for q in evaluated if q in negative]


BYTES_PER_ROW = 40  # a TREC line's bytes, to size a Python tool's memory budget like trec_eval's (isolate.memory_limit)

# trec_eval's C code (form_res_rels.c, also inside pytrec_eval) allocates (max_rel + 1) longs per query and
# walks them, and nDCG's gain table (gain_init.c) has one entry per grade level up to the largest grade.
C_LONG_MAX = 2 ** 63 - 1
TREC_EVAL_MAX_GRADE = 2 ** 20  # <= ~64 MiB of per-grade arrays and a 1M-step loop per query


def grade_limit_reason(grades, tool: str) -> str | None:
    """Why trec_eval's C code cannot be given these grades (as the tool will see them), or None.

    ``max_rel + 1`` overflows a C long at 2^63-1: an out-of-bounds write (pytrec_eval died by SIGSEGV) or,
    when nothing was allocated before, a silent UNDEF (pytrec_eval returned zeros).  Beyond a C long,
    pytrec_eval raises SystemError.  A large grade makes it allocate ~8 bytes per grade level (2^31: 16 GiB,
    the trec_eval child grew to 12.5 GB until the kernel killed it); a failed allocation makes pytrec_eval
    return zeros and leaves its static state broken for the rest of the process.  Our own scorer accepts
    grades up to ``grades.GRADE_MAX``; the limit here only guards inputs that reach an adapter otherwise
    (a Qrels built in code, ir_measures' gains= rewriting grades).
    """
    pl = sys.modules.get("polars")  # a Series exists only once polars is loaded: a list of grades never loads it
    if pl is not None and isinstance(grades, pl.Series):
        top = grades.max()
        top = None if top is None else int(top)
    else:
        top = max((int(g) for g in grades), default=None)
    if top is None or top <= TREC_EVAL_MAX_GRADE:
        return None
    if top > C_LONG_MAX:
        what = "this grade does not fit a C long (pytrec_eval raises SystemError)"
    elif top == C_LONG_MAX:
        what = "its size max_rel + 1 overflows a C long (an out-of-bounds write: SIGSEGV, or silent zeros)"
    else:
        what = f"that is {8 * (top + 1) / 2 ** 30:.3g} GiB for one array (or silent zeros when the allocation fails)"
    return (f"{tool} cannot be given grade {top if top < 10 ** 30 else str(top)[:20] + '...'}: trec_eval's C code "
            f"sizes per-query arrays by the largest grade (form_res_rels.c), and {what}; "
            f"refused above {TREC_EVAL_MAX_GRADE} (trec-bridge itself accepts grades up to {GRADE_MAX})")


def refuse_unholdable(qrels: Qrels, tool: str) -> None:
    """Raise ReferenceUnavailable when the qrels hold a grade trec_eval's C code cannot hold (grade_limit_reason)."""
    reason = grade_limit_reason(qrels.frame.get_column("grade"), tool)
    if reason:
        raise unavailable(reason)


def qrels_dict(qrels: Qrels) -> dict[str, dict[str, int]]:
    """{query: {doc: grade}} with Python ints (pytrec_eval rejects numpy integers)."""
    if qrels.frame.get_column("grade").null_count():
        raise unavailable("qrels with a missing grade cannot be handed to a reference tool")
    out: dict[str, dict[str, int]] = {}
    for q, d, g in zip(*(qrels.frame.get_column(c).to_list() for c in ("query_id", "doc_id", "grade"))):
        out.setdefault(q, {})[d] = int(g)
    return out


def run_dict(run: Run, frame: pl.DataFrame, include_empty: bool = True) -> dict[str, dict[str, float]]:
    """{query: {doc: score}} with Python floats; explicit empty rankings become ``{}`` when asked.

    Built one block of equal query IDs at a time (the run's rows are grouped
    by query), so a 7M-row run costs one ``dict(zip(...))`` per query rather
    than a Python step per row.  A later row of the same (query, doc) wins,
    as it would in a dict; a query split over several blocks is merged.
    """
    out: dict[str, dict[str, float]] = {q: {} for q in run.queries} if include_empty else {}
    if frame.height == 0:
        return out
    q = frame.get_column("query_id")
    starts = q.ne_missing(q.shift(1)).arg_true().to_list()
    ends = starts[1:] + [frame.height]
    block_q = q.gather(starts).to_list()
    docs = frame.get_column("doc_id").to_list()
    import polars as pl

    scores = frame.get_column("score").cast(pl.Float64).to_list()
    for qid, a, b in zip(block_q, starts, ends):
        docs_of = out.get(qid)
        if docs_of:
            docs_of.update(zip(docs[a:b], scores[a:b]))
        else:
            out[qid] = dict(zip(docs[a:b], scores[a:b]))
    return out


def takes_threshold(measure: Measure) -> bool:
    """Whether the measure's family reads the relevance threshold (nDCG and Judged do not: no ``rel=``)."""
    return "rel" in FAMILIES[measure.family].params


# ---------------------------------------------------------------- nDCG gains

def gain_map(measure: Measure, qrels: Qrels) -> dict[int, float] | None:
    """The grade -> gain map a tool must be given for ``measure``; None means linear (the tools' default).

    ``gain=None`` is linear here: the caller names the gain it wants compared.
    Exponential gains are built from the grades present, 2^g - 1 for g >= 1
    (grade 0 and below have gain 0 in both conventions).
    """
    if measure.gains is not None:  # gain=/gains= are nDCG's parameters: other families have neither
        return dict(measure.gains)
    if measure.gain == "exp":
        grades = qrels.frame.get_column("grade").unique().drop_nulls().to_list()
        return {int(g): float(2 ** int(g) - 1) for g in sorted(grades) if g >= 1}
    return None


def negative_gain_reason(gains: dict[int, float]) -> str | None:
    """The tools treat a negative grade as unjudged (gain 0); a map that gives one a gain cannot be reproduced."""
    bad = [g for g, v in gains.items() if g < 0 and v != 0]
    if bad:
        return f"a gain for negative grade {bad[0]}: the tools treat negative grades as unjudged (gain 0)"
    return None


# ---------------------------------------------------------------- trec_eval names

def trec_eval_name(measure: Measure) -> tuple[str, str | None, str] | str:
    """(-m base, parameter, printed name) of a measure in trec_eval, which pytrec_eval embeds; else a reason.

    The family declares its names (``Family.tool_names["trec_eval"]``, read
    through ``measures.trec_names.trec_eval_form``).  A family whose only
    name takes no cutoff (RR: ``recip_rank``) is computed without it, since
    trec_eval silently ignores ``recip_rank.k``; the caller decides how to
    label or emulate that (``ignores_cutoff``).
    """
    forms = trec_eval_form(FAMILIES[measure.family])
    if isinstance(forms, str):
        return forms
    for form in forms:
        spelled = form.spell(measure)
        if spelled is not None:
            param, printed = spelled
            return form.name, param, printed
    return f"no trec_eval measure for {measure}"


def own_parameter(measure: Measure) -> str | None:
    """The measure's trec_eval parameter when it is not a cutoff (set_F's β, utility's coefficients, a gain map).

    trec_eval 9.0.4 takes one such parameter per ``-m`` name and call (a
    second ``-m set_F.2`` is ignored), and pytrec_eval reports the value
    under the bare name (``set_F.0.5`` comes back as ``set_F``); a cutoff
    (``P.5`` -> ``P_5``) has neither limit.
    """
    named = trec_eval_name(measure)
    if isinstance(named, str) or named[1] is None or named[1] == str(measure.cutoff):
        return None
    return named[1]


def ignores_cutoff(measure: Measure) -> bool:
    """trec_eval computes ``measure`` without its cutoff (it has no such parameter)."""
    named = trec_eval_name(measure)
    return measure.cutoff is not None and not isinstance(named, str) and named[1] is None


def trec_eval_reason(measure: Measure, rel: int) -> str | None:
    """Reasons shared by trec_eval and pytrec_eval (same measure code)."""
    named = trec_eval_name(measure)
    if isinstance(named, str):
        return named
    if measure.cutoff is not None and (measure.gain == "exp" or measure.gains is not None):
        return "trec_eval's ndcg_cut takes its gains from the qrels grades only (linear)"
    return None


# Families that pytrec_eval's C code cannot be trusted with on an explicit empty ranking: with 0 results
# form_res_rels.c may allocate nothing and fail (the measure keeps 0) or reuse the previous query's buffers
# (num_rel = R, gm_map = log(1e-5), iprec_at_recall = 0/0), depending on the dict order, and bpref next to
# another measure crashed it (SIGSEGV) on a run whose judgments were all grade 0.
EMPTY_RANKING_UNSTABLE = frozenset({"NumRel", "GMAP", "GMBpref", "IPrec", "AvgIPrec", "Bpref"})


def empty_ranking_failures(measures, run: Run, tool: str) -> dict[str, str]:
    """The measures a trec_eval-in-process tool cannot be trusted with on this run's explicit empty rankings."""
    empty = run.empty_queries()
    if not empty:
        return {}
    return {str(m): f"not run: {tool} evaluates the explicit empty ranking of query {quote(empty[0])} with state left "
                    f"by the query before it (trec_eval's form_res_rels.c), so its {m.family} there is 0, the "
                    "previous query's count, NaN or a crash depending on the order" for m in measures
            if m.family in EMPTY_RANKING_UNSTABLE}


def undefined_values(result: ReferenceResult, key: str, per_query: dict[str, float], tool: str) -> bool:
    """Move ``key`` to ``result.failed`` when the tool returned NaN for a query (True then); its number is undefined.

    trec_eval's C code divides 0 by 0 on an explicitly empty ranking in
    iprec_at_recall and 11pt_avg (m_iprec_at_recall.c: num_rel_ret / num_ret,
    kept at a level whose document count is 0); pytrec_eval returns that NaN.
    A NaN is no number to compare, so the measure is listed as failed with the
    query, never compared or averaged.
    """
    bad = [q for q, v in per_query.items() if v != v]
    if not bad:
        return False
    result.failed[key] = (f"{tool} returned NaN for query {quote(bad[0])}" + (f" and {len(bad) - 1} more" if len(bad) > 1
                          else "") + " (trec_eval's C code divides 0 by 0 there, e.g. iprec_at_recall on an empty ranking)")
    return True


def fmt_number(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))

"""pytrec_eval: trec_eval's C code behind a dict API, called in a forked child (references/isolate.py).

Its crash (SIGSEGV on a grade of 2^63-1, a loop on an all-negative query)
would otherwise be ours: the inputs are built and checked here (``_prepare``)
and only the ``RelevanceEvaluator`` calls run in the child.

It is the reference most Python projects use, and its dict input is the only
one among the anchors that can say "this query returned nothing"
(``{"q": {}}``), so explicit empty rankings are handed over as such.  It has no
mean of its own; the aggregate is ``pytrec_eval.compute_aggregated_measure``
over the returned dict (its documented helper: arithmetic mean), i.e. over
run ∩ qrels queries, like trec_eval without ``-c``.
"""
from __future__ import annotations

import warnings
from typing import Callable

from ..measures.base import Measure
from ..policy import PYTREC_EVAL
from ..messages import quote
from ..model import Qrels, Run
from .base import (Options, PythonReference, ReferenceResult, check_unique, crashing_queries, ignores_cutoff,
                   own_parameter, qrels_dict, refuse_unholdable, run_dict, scored_frame, takes_threshold,
                   trec_eval_name, trec_eval_reason, unavailable, undefined_values, empty_ranking_failures)
from .registry import Tool, register


class PytrecEval(PythonReference):
    name = "pytrec_eval"
    module_name, pip_name = "pytrec_eval", "pytrec-eval-terrier"
    precision = None  # full doubles

    def _reason(self, measure: Measure, rel: int) -> str | None:
        reason = trec_eval_reason(measure, rel)
        if reason:
            return reason
        if measure.gain == "exp" or measure.gains is not None:  # nDCG's gain parameters
            return "pytrec_eval accepts only numeric measure parameters: no custom gains (ndcg.1=..., G.1=...)"
        if rel < 1 and takes_threshold(measure):
            return f"pytrec_eval rejects relevance_level {rel} (must be >= 1)"
        return parameter_list_reason(measure)

    def _prepare(self, qrels: Qrels, run: Run, measures: list[Measure], rel: int,
                 options: Options) -> Callable[[], ReferenceResult]:
        pte = self._module()
        result = ReferenceResult(self.name, self.version(), precision=self.precision)
        selected = self._split(measures, rel, result, qrels)
        result.failed.update(empty_ranking_failures([m for m, _ in selected], run, self.name))
        selected = [(m, level) for m, level in selected if str(m) not in result.failed]
        if not selected:
            return lambda: result
        frame, synthetic = scored_frame(run)
        if synthetic:
            result.notes.append(f"synthetic scores n-position+1 for queries without scores: {synthetic}")
        check_unique(qrels, None if run.unique_checked else frame, self.name)  # the reader refused them
        refuse_unholdable(qrels, self.name)
        qd, rd = qrels_dict(qrels), run_dict(run, frame, include_empty=True)
        crash = crashing_queries(qrels, rd)
        if crash:
            raise unavailable(f"pytrec_eval cannot evaluate query {quote(crash[0])}: all its judgments are negative, on which "
                              "trec_eval's C code (form_res_rels.c) exits, crashes or loops")
        by_level: dict[tuple[int, str | None], list[tuple[Measure, str, str, str]]] = {}
        for m, level in selected:
            base, param, out_name = trec_eval_name(m)
            if not takes_threshold(m):
                level = rel if rel >= 1 else 1  # relevance_level does not affect ndcg; avoid an extra evaluator
            arg = base + (f".{param}" if param is not None else "")
            served = f"{out_name} (cutoff ignored)" if ignores_cutoff(m) else out_name
            slot = None
            if own_parameter(m) is not None:  # reported under its bare name, first one only: one per evaluator
                slot, out_name = arg, base
            by_level.setdefault((level, slot), []).append((m, arg, out_name, served))
        for (level, _), items in by_level.items():
            args = sorted({arg for _, arg, _, _ in items})
            result.command.append(f"pytrec_eval.RelevanceEvaluator(qrels, {args}, relevance_level={level}).evaluate(run)")
        return lambda: _evaluate(pte, qd, rd, by_level, result)



register(Tool("pytrec_eval", PytrecEval, PYTREC_EVAL))  # its float32 ordering: trec_eval's reason


def parameter_list_reason(measure: Measure) -> str | None:
    """pytrec_eval splits a measure string at its commas, so a parameter list with one cannot reach its C code."""
    param = own_parameter(measure)
    if param is None or "," not in param:
        return None
    base = trec_eval_name(measure)[0]
    return (f"pytrec_eval splits measure strings at commas: {base}.{param} reaches trec_eval's code as "
            f"{base}.{param.split(',')[0]} (a wrong parameter list, 0 or an abort)")

def _evaluate(pte, qd: dict, rd: dict, by_level: dict, result: ReferenceResult) -> ReferenceResult:
    """The tool calls only (no polars: this may run in a forked child, references/isolate.py)."""
    for (level, _), items in by_level.items():
        args = sorted({arg for _, arg, _, _ in items})
        try:
            evaluated = pte.RelevanceEvaluator(qd, args, relevance_level=level).evaluate(rd)
        except (TypeError, ValueError, RuntimeError, SystemError, OverflowError) as exc:
            raise unavailable(f"pytrec_eval raised {type(exc).__name__}: {exc}") from None
        for m, _, out_name, served in items:
            key = str(m)
            per_query = {q: float(vals[out_name]) for q, vals in evaluated.items() if out_name in vals}
            if undefined_values(result, key, per_query, "pytrec_eval"):
                continue
            result.per_query[key] = per_query
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # mean of no query is nan, as the helper gives
                result.aggregate[key] = float(pte.compute_aggregated_measure(out_name, list(per_query.values())))
            result.served_by[key] = served
            result.native[key] = out_name
    return result

"""ir_measures with its default provider pipeline, on dict inputs built from our model.

ir_measures silently routes each measure to a "provider" (pytrec_eval for
``RR``, msmarco for ``RR@10``, ...) and providers differ in tie order and
float precision, so we resolve the route ourselves exactly as
``DefaultPipeline`` does (first available provider, in pipeline order, whose
``supports`` accepts the measure) and report it in ``served_by``.  Each
provider's measures are then computed with that provider's evaluator
(``evaluator(...).calc(run)`` = ``iter_calc`` per query + ``calc_aggregate``
in one pass).  The ranx provider is never used: it fails under pandas >= 3.
"""
from __future__ import annotations

import contextlib
import io
import re
from typing import Callable

from ..measures.base import FAMILIES, Measure
from ..messages import quote
from ..policy import IR_MEASURES
from ..model import Qrels, Run
from .base import (Options, PythonReference, ReferenceResult, check_unique, crashing_queries, effective_rel, gain_map,
                   grade_limit_reason,
                   negative_gain_reason, qrels_dict, run_dict, scored_frame, takes_threshold, undefined_values,
                   empty_ranking_failures)
from .registry import Tool, register

BROKEN_PROVIDERS = {"ranx": "would be served by ir_measures' ranx provider, which fails under pandas >= 3 "
                            "(AmenRa/ranx#79)"}


class IrMeasures(PythonReference):
    name = "ir_measures"
    module_name, pip_name = "ir_measures", "ir-measures"
    precision = None  # doubles (gdeval would print 5 decimals, but no measure of ours routes there)

    def to_ir_measure(self, measure: Measure, rel: int, gains: dict[int, float] | None = None):
        """The ir_measures measure object for ``measure`` at threshold ``rel``, or a reason string."""
        irm = self._module()
        name = FAMILIES[measure.family].native(self.name)  # the family's ir_measures measure name
        if name is None:
            return f"no ir_measures measure for {measure.family}"
        kwargs: dict = {}
        if not takes_threshold(measure):  # nDCG: the gain is the grade (or the map) whatever the threshold
            if gains is not None:
                reason = negative_gain_reason(gains)
                if reason:
                    return reason
                if any(not float(v).is_integer() for v in gains.values()):
                    return "nDCG(gains=...) rewrites grades for pytrec_eval, which needs integer grades"
                kwargs["gains"] = {int(g): int(v) for g, v in gains.items() if g >= 0}
        elif rel != 1:
            kwargs["rel"] = rel
        base = getattr(irm, name)
        for key, value in measure.extra:  # the family's own parameters, spelled as ir_measures spells them
            if key not in getattr(base, "SUPPORTED_PARAMS", {}):
                return f"ir_measures' {name} has no parameter {key}"
            kwargs[key] = value
        obj = self._measure_object(base, kwargs, measure.cutoff)
        if takes_threshold(measure) and "rel" not in kwargs and self.provider_for(obj) is None:
            obj = self._measure_object(base, {**kwargs, "rel": rel}, measure.cutoff)  # cwl_eval's RBP needs rel given
        return obj

    @staticmethod
    def _measure_object(base, kwargs: dict, cutoff: int | None):
        obj = base(**kwargs) if kwargs else base
        return obj @ cutoff if cutoff is not None else obj

    def provider_for(self, ir_measure):
        """The provider ``DefaultPipeline`` would use: first available one, in order, that supports the measure."""
        for provider in self._module().DefaultPipeline.providers:
            if provider.supports(ir_measure) and provider.is_available():
                return provider
        return None

    def _reason(self, measure: Measure, rel: int, gains: dict[int, float] | None = None) -> str | None:
        if gains is None and (measure.gain == "exp" or measure.gains is not None):
            gains = dict(measure.gains) if measure.gains is not None else {1: 1.0}  # routing only
        obj = self.to_ir_measure(measure, rel, gains)
        if isinstance(obj, str):
            return obj
        provider = self.provider_for(obj)
        if provider is None:
            return f"no available ir_measures provider supports {obj}"
        if provider.NAME in BROKEN_PROVIDERS:
            return BROKEN_PROVIDERS[provider.NAME]
        if provider.NAME == "pytrec_eval" and rel < 1 and takes_threshold(measure):
            return f"served by pytrec_eval, which rejects relevance_level {rel} (must be >= 1)"
        if provider.NAME == "cwl_eval" and rel < 1 and takes_threshold(measure):
            return f"served by cwl_eval, which would make negative (unjudged) grades relevant at rel={rel}"
        if rel < 0 and takes_threshold(measure):
            return f"rel={rel} would make negative (unjudged) grades relevant in the {provider.NAME} provider"
        return None

    def refusal(self, measure: Measure, rel: int, qrels: Qrels) -> str | None:
        reason = self._reason(measure, effective_rel(measure, rel), gain_map(measure, qrels))
        provider = self._provider_name(measure, rel, qrels) if reason is None else None
        if provider == "gdeval":
            reason = gdeval_reason(qrels.query_ids(), qrels.frame.get_column("grade").max())
        if provider == "pyndeval":
            reason = pyndeval_reason(measure)
        return reason

    def _provider_name(self, measure: Measure, rel: int, qrels: Qrels) -> str | None:
        provider = self.provider_for(self.to_ir_measure(measure, effective_rel(measure, rel), gain_map(measure, qrels)))
        return provider.NAME if provider is not None else None

    def _prepare(self, qrels: Qrels, run: Run, measures: list[Measure], rel: int,
                 options: Options) -> Callable[[], ReferenceResult]:
        self._module()
        result = ReferenceResult(self.name, self.version(), precision=self.precision)
        groups: dict[str, tuple[object, list[tuple[Measure, object]]]] = {}
        for m in measures:
            reason = self.refusal(m, rel, qrels)
            if reason:
                result.unsupported[str(m)] = reason
                continue
            obj = self.to_ir_measure(m, effective_rel(m, rel), gain_map(m, qrels))
            provider = self.provider_for(obj)
            groups.setdefault(provider.NAME, (provider, []))[1].append((m, obj))
        if not groups:
            return lambda: result
        frame, synthetic = scored_frame(run)
        if synthetic:
            result.notes.append(f"synthetic scores n-position+1 for queries without scores: {synthetic}")
        check_unique(qrels, None if run.unique_checked else frame, self.name)  # the reader refused them
        rd = run_dict(run, frame, include_empty=True)
        qd = qrels_dict(qrels) if set(groups) - {"pyndeval"} else {}  # pyndeval reads the subtopics (subtopic_list)
        empty = run.empty_queries()
        calls = []
        for pname, (provider, items) in groups.items():
            if pname == "gdeval":  # the perl script stops on a query ID that is not a number
                reason = gdeval_reason(list(rd), None)
                if reason:
                    result.failed.update({str(m): f"not run: {reason}" for m, _ in items})
                    continue
            if pname == "pytrec_eval":  # the C code would take the whole process down, or answer zeros
                refused = self._refusals(items, qrels, rd)
                refused.update(empty_ranking_failures([m for m, _ in items], run, "the pytrec_eval provider"))
                result.failed.update(refused)
                items = [(m, obj) for m, obj in items if str(m) not in refused]
                if not items:
                    continue
            if pname == "pyndeval":  # one call per pyndeval invocation, each on the qrels with their subtopics
                calls += _pyndeval_calls(provider, items, subtopic_list(qrels), result)
                continue
            objs = list(dict.fromkeys(obj for _, obj in items))
            result.command.append(f"ir_measures.{pname}.evaluator([{', '.join(native_name(o) for o in objs)}], qrels)"
                                  ".calc(run)")
            calls.append((pname, provider, items, objs, qd))
        context = f" (the run has explicit empty rankings: {empty})" if empty else ""
        return lambda: _calculate(calls, rd, context, result)

    @staticmethod
    def _refusals(items: list, qrels: Qrels, rd: dict) -> dict[str, str]:
        """Measures the pytrec_eval provider is not given, with the reason (references/base.py)."""
        crash = crashing_queries(qrels, rd)
        if crash:
            return {str(m): f"not run: query {quote(crash[0])} has only negative judgments, on which the pytrec_eval "
                            "provider (trec_eval's C code) exits, crashes or loops" for m, _ in items}
        grades = qrels.frame.get_column("grade").unique().drop_nulls().to_list()
        out = {}
        for m, obj in items:  # the grades the provider hands over: gains= rewrites them
            gains = getattr(obj, "params", {}).get("gains") or {}
            reason = grade_limit_reason([gains.get(g, g) for g in grades], "the pytrec_eval provider")
            if reason:
                out[str(m)] = f"not run: {reason}"
        return out


def _calculate(calls: list, rd: dict, context: str, result: ReferenceResult) -> ReferenceResult:
    """The providers' calls only (no polars: this may run in a forked child, references/isolate.py)."""
    import logging

    logging.getLogger("ir_measures.cwl_eval").disabled = True  # its grade-range notes would flood stderr
    for pname, provider, items, objs, qd in calls:
        try:
            with contextlib.redirect_stderr(io.StringIO()) as said:  # pyndeval's one-subtopic warning, kept as a note
                calc = provider.evaluator(objs, qd).calc(rd)
            if said.getvalue().strip():
                result.notes.append(f"ir_measures ({pname} provider) warned: {said.getvalue().strip()}")
        except Exception as exc:  # noqa: BLE001 - a provider bug must not hide the other providers' numbers
            for m, _ in items:
                result.failed[str(m)] = f"{pname} provider raised {type(exc).__name__}: {exc}{context}"
            continue
        per: dict = {}
        for metric in calc.per_query:
            per.setdefault(metric.measure, {})[metric.query_id] = float(metric.value)
        for m, obj in items:
            key = str(m)
            if undefined_values(result, key, per.get(obj, {}), f"ir_measures ({pname} provider)"):
                continue
            result.per_query[key] = per.get(obj, {})
            result.aggregate[key] = float(calc.aggregated[obj])
            result.served_by[key] = pname
            result.native[key] = native_name(obj)
    return result


PYNDEVAL_DEPTH = 20  # ndeval's DEPTH: pyndeval asserts every cutoff is at most 20


def pyndeval_reason(measure: Measure) -> str | None:
    """Why ir_measures' pyndeval provider (the diversity measures) cannot compute ``measure``, or None."""
    if measure.param("judged_only", False):
        return ("served by pyndeval, whose ir_measures provider fails on judged_only=True (ir_measures 0.4.3 indexes "
                "the run's generator as a dict: TypeError)")
    if measure.cutoff is not None and measure.cutoff > PYNDEVAL_DEPTH:
        return f"served by pyndeval, which computes to depth {PYNDEVAL_DEPTH} only (it asserts cutoff <= 20)"
    return None


def subtopic_list(qrels: Qrels) -> list:
    """The qrels as ir_measures' Qrel items with their iteration, which its pyndeval provider reads as the
    subtopic (a {query: {doc: grade}} dict would give every judgment subtopic '0')."""
    import ir_measures

    return [ir_measures.Qrel(q, d, int(g), it) for q, it, d, g in
            qrels.frame.select("query_id", "iteration", "doc_id", "grade").iter_rows()]


def _pyndeval_calls(provider, items: list, qrels: list, result: ReferenceResult) -> list:
    """The pyndeval provider's measures, one evaluator per invocation ir_measures would make for them.

    ir_measures' provider runs one pyndeval RelevanceEvaluator per (rel, alpha, beta, judged_only) and hands
    each the same run generator, so every evaluator after the first sees an empty run and scores each query
    its default 0 (ir_measures 0.4.3); called one invocation at a time, each measure gets pyndeval's numbers.
    """
    by_call: dict[tuple, list] = {}
    for m, obj in items:
        by_call.setdefault(pyndeval_call(obj), []).append((m, obj))
    calls = []
    for group in by_call.values():
        objs = list(dict.fromkeys(obj for _, obj in group))
        result.command.append(f"ir_measures.pyndeval.evaluator([{', '.join(native_name(o) for o in objs)}], "
                              "qrels with iteration as subtopic).calc(run)")
        calls.append(("pyndeval", provider, group, objs, qrels))
    return calls


def pyndeval_call(obj) -> tuple:
    """The (rel, alpha, beta, judged_only) of the pyndeval invocation ir_measures' provider makes for ``obj``
    (PyNdEvalProvider._build_invokers)."""
    alpha = obj["alpha"] if obj.NAME in ("alpha_DCG", "alpha_nDCG", "NRBP", "nNRBP") else 0.5
    beta = obj["beta"] if obj.NAME in ("NRBP", "nNRBP") else 0.5
    judged_only = obj["judged_only"] if obj.NAME not in ("NRBP", "nNRBP", "StRecall") else False
    return obj["rel"], alpha, beta, judged_only


GDEVAL_TOP_GRADE = 4  # gdeval.pl's MAX_JUDGMENT
GDEVAL_ID = re.compile(r"[1-9][0-9]{0,14}|0")


def gdeval_reason(query_ids: list[str], top_grade: int | None) -> str | None:
    """Why gdeval (ir_measures' ERR provider) cannot read these judgments or this run, or None.

    gdeval.pl dies on a query ID that is not a number and on a grade above
    4, and compares IDs as perl numbers (``07`` is ``7``; beyond 15 digits
    two IDs can meet), so only plain decimal IDs pass.
    """
    bad = next((q for q in query_ids if not GDEVAL_ID.fullmatch(q)), None)
    if bad is not None:
        return (f"served by gdeval, which reads only plain decimal query IDs (no leading zero, at most 15 digits); "
                f"query {quote(bad)} is not one")
    if top_grade is not None and top_grade > GDEVAL_TOP_GRADE:
        return f"served by gdeval, which stops on a grade above {GDEVAL_TOP_GRADE} (grade {top_grade} is judged)"
    return None


def native_name(obj) -> str:
    """ir_measures' name of a measure object, with the full gains map.

    ``str(nDCG(gains={1: 1, 2: 3}))`` prints ``nDCG(gains={2:3})`` (entries
    that map a grade to itself are hidden), which misleads in a report.
    """
    params = getattr(obj, "params", {})
    if "gains" not in params:
        return str(obj)
    inner = ",".join(f"{g}:{v}" for g, v in sorted(params["gains"].items()))
    cutoff = params.get("cutoff")
    return f"{obj.NAME}(gains={{{inner}}})" + (f"@{cutoff}" if cutoff is not None else "")


register(Tool("ir_measures", IrMeasures, IR_MEASURES, reasons={
    ("measure_orderings", IR_MEASURES.measure_orderings):
        "RR@k goes to the msmarco provider, Judged to the judged provider and Compat to the compat provider, which "
        "sort double scores with ties by docno ascending; ERR@k goes to gdeval (double scores, ties by docno "
        "descending), RBP, SDCG, NERR*, INST, INSQ to cwl_eval (a stable sort of double scores), and the diversity "
        "measures (alpha_nDCG, ERR_IA, NRBP, P_IA, StRecall) to pyndeval (double scores, ties by docno ascending)",
    ("printed_digits", IR_MEASURES.printed_digits):
        "ERR@k goes to the gdeval provider, a perl script whose per-query values ir_measures reads back from its "
        "5-decimal printout"}))

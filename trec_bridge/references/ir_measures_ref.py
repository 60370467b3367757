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

from ..measures.base import Measure
from ..model import Qrels, Run
from .base import (Options, PythonReference, ReferenceResult, check_unique, crashing_queries, gain_map, negative_gain_reason,
                   qrels_dict, run_dict, scored_frame)

BROKEN_PROVIDERS = {"ranx": "would be served by ir_measures' ranx provider, which fails under pandas >= 3 "
                            "(AmenRa/ranx#79)"}
FAMILY_NAMES = {"R": "R", "P": "P", "Success": "Success", "RR": "RR", "AP": "AP", "nDCG": "nDCG", "Judged": "Judged"}


class IrMeasures(PythonReference):
    name = "ir_measures"
    module_name, pip_name = "ir_measures", "ir-measures"
    precision = None  # doubles (gdeval would print 5 decimals, but no measure of ours routes there)

    def to_ir_measure(self, measure: Measure, rel: int, gains: dict[int, float] | None = None):
        """The ir_measures measure object for ``measure`` at threshold ``rel``, or a reason string."""
        irm = self._module()
        if measure.family not in FAMILY_NAMES:
            return f"no ir_measures measure for {measure.family}"
        kwargs: dict = {}
        if measure.family == "nDCG":  # no rel parameter: the gain is the grade (or the map) whatever the threshold
            if gains is not None:
                reason = negative_gain_reason(gains)
                if reason:
                    return reason
                if any(not float(v).is_integer() for v in gains.values()):
                    return "nDCG(gains=...) rewrites grades for pytrec_eval, which needs integer grades"
                kwargs["gains"] = {int(g): int(v) for g, v in gains.items() if g >= 0}
        elif measure.family != "Judged" and rel != 1:
            kwargs["rel"] = rel
        base = getattr(irm, FAMILY_NAMES[measure.family])
        obj = base(**kwargs) if kwargs else base
        return obj @ measure.cutoff if measure.cutoff is not None else obj

    def provider_for(self, ir_measure):
        """The provider ``DefaultPipeline`` would use: first available one, in order, that supports the measure."""
        for provider in self._module().DefaultPipeline.providers:
            if provider.supports(ir_measure) and provider.is_available():
                return provider
        return None

    def _reason(self, measure: Measure, rel: int, gains: dict[int, float] | None = None) -> str | None:
        if measure.family == "nDCG" and gains is None and (measure.gain == "exp" or measure.gains is not None):
            gains = dict(measure.gains) if measure.gains is not None else {1: 1.0}  # routing only
        obj = self.to_ir_measure(measure, rel, gains)
        if isinstance(obj, str):
            return obj
        provider = self.provider_for(obj)
        if provider is None:
            return f"no available ir_measures provider supports {obj}"
        if provider.NAME in BROKEN_PROVIDERS:
            return BROKEN_PROVIDERS[provider.NAME]
        if provider.NAME == "pytrec_eval" and rel < 1 and measure.family != "nDCG":
            return f"served by pytrec_eval, which rejects relevance_level {rel} (must be >= 1)"
        if rel < 0 and measure.family not in ("nDCG", "Judged"):
            return f"rel={rel} would make negative (unjudged) grades relevant in the {provider.NAME} provider"
        return None

    def evaluate(self, qrels: Qrels, run: Run, measures: list[Measure], *, rel: int = 1,
                 options: Options = Options()) -> ReferenceResult:
        self._module()
        result = ReferenceResult(self.name, self.version(), precision=self.precision)
        groups: dict[str, tuple[object, list[tuple[Measure, object]]]] = {}
        for m in measures:
            level = m.rel if m.rel is not None else rel
            gains = gain_map(m, qrels)
            reason = self._reason(m, level, gains)
            if reason:
                result.unsupported[str(m)] = reason
                continue
            obj = self.to_ir_measure(m, level, gains)
            provider = self.provider_for(obj)
            groups.setdefault(provider.NAME, (provider, []))[1].append((m, obj))
        if not groups:
            return result
        frame, synthetic = scored_frame(run)
        if synthetic:
            result.notes.append(f"synthetic scores n-position+1 for queries without scores: {synthetic}")
        check_unique(qrels, None if run.unique_checked else frame, self.name)  # the reader refused them
        qd, rd = qrels_dict(qrels), run_dict(run, frame, include_empty=True)
        empty = run.empty_queries()
        for pname, (provider, items) in groups.items():
            objs = list(dict.fromkeys(obj for _, obj in items))
            crash = crashing_queries(qrels, rd) if pname == "pytrec_eval" else []
            if crash:  # the C code would take the whole process down (references/base.py crashing_queries)
                for m, _ in items:
                    result.failed[str(m)] = (f"not run: query {crash[0]!r} has only negative judgments, on which the "
                                             "pytrec_eval provider (trec_eval's C code) exits, crashes or loops")
                continue
            result.command.append(f"ir_measures.{pname}.evaluator([{', '.join(native_name(o) for o in objs)}], qrels)"
                                  ".calc(run)")
            try:
                calc = provider.evaluator(objs, qd).calc(rd)
            except Exception as exc:  # noqa: BLE001 - a provider bug must not hide the other providers' numbers
                context = f" (the run has explicit empty rankings: {empty})" if empty else ""
                for m, _ in items:
                    result.failed[str(m)] = f"{pname} provider raised {type(exc).__name__}: {exc}{context}"
                continue
            per: dict = {}
            for metric in calc.per_query:
                per.setdefault(metric.measure, {})[metric.query_id] = float(metric.value)
            for m, obj in items:
                key = str(m)
                result.per_query[key] = per.get(obj, {})
                result.aggregate[key] = float(calc.aggregated[obj])
                result.served_by[key] = pname
                result.native[key] = native_name(obj)
        return result


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

"""The acceptance verdict for ``trec-bridge score --gate``: tiers, sample size, repeats, breakdown, triage.

Input: the strict scorer's results for one or more runs of one system (the
first is the main run, the others its repeats), the thresholds and the first
relevant ranks.  Output: an ``Acceptance`` that renders as text, as the
``rag`` section of the JSON report and as an HTML page, and decides the exit
code.

Exit code priority: invalid input (1) is raised before anything is scored;
an incomplete run (2, in any repeat) is never accepted and beats a failed
gate; a failed gate is 4: a gated measure below its pass level, a gated
measure with no value, or fewer eligible queries than the minimum.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from ..errors import EXIT_GATE_FAILED, EXIT_INCOMPLETE, EXIT_OK
from ..measures.base import Measure
from ..scorer import ScoreResult
from .breakdown import TagRow, breakdown_json, by_tag
from .repeats import Combined, combine, repeat_warning, repeats_json
from .sample import SampleCheck, check_sample
from .tiers import LEVEL_NAMES, Levels, Thresholds, fraction_decimal, tier_of
from .triage import TriageLists, triage, triage_json


@dataclass
class TierRow:
    measure: str
    value: float | None
    exact: Fraction | None
    tier: str
    levels: Levels  # effective (after the domain discount)
    nominal: Levels


@dataclass
class Acceptance:
    thresholds: Thresholds
    gate: bool
    combined: Combined
    tiers: list[TierRow]
    sample: SampleCheck
    breakdown: list[TagRow]
    triage: TriageLists
    added_measures: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def failing(self) -> list[str]:
        """Why the gate does not pass (empty: it passes, if the run is complete)."""
        reasons = [f"{t.measure} is below pass ({_num(t.value)} < {fraction_decimal(t.levels.pass_)})"
                   if t.value is not None else f"{t.measure} has no value (no eligible query)"
                   for t in self.tiers if t.tier == "fail"]
        if not self.sample.meaningful:
            reasons.append(f"only {self.sample.eligible} eligible queries, fewer than the minimum "
                           f"{self.sample.min_queries}: not statistically meaningful")
        return reasons

    @property
    def verdict(self) -> str:
        if not self.combined.complete:
            return "incomplete"
        return "fail" if self.failing else "pass"

    def exit_code(self) -> int:
        if not self.combined.complete:
            return EXIT_INCOMPLETE
        if self.gate and self.failing:
            return EXIT_GATE_FAILED
        return EXIT_OK

    # ------------------------------------------------------------ output

    def to_json(self) -> dict:
        from ..report import fraction_text

        th = self.thresholds
        return {
            "thresholds": {
                "source": th.source,
                "domain_discount": fraction_decimal(th.domain_discount),
                "domain_discount_applied": bool(th.domain_discount),
                "note": th.discount_note(),
                "min_queries": th.min_queries,
                "expected_repeats": th.expected_repeats,
            },
            "added_measures": self.added_measures,
            "warnings": self.warnings,
            "tiers": [
                {"measure": t.measure, "value": t.value, "exact": fraction_text(t.exact), "tier": t.tier,
                 "levels": _levels_json(t.levels), "nominal_levels": _levels_json(t.nominal)}
                for t in self.tiers
            ],
            "sample": self.sample.to_json(),
            "repeats": repeats_json(self.combined, th.expected_repeats),
            "breakdown": breakdown_json(self.breakdown),
            "triage": triage_json(self.triage),
            "gate": {"applied": self.gate, "verdict": self.verdict, "reasons": self.failing,
                     "exit_code": self.exit_code()},
        }

    def render_text(self) -> str:
        th = self.thresholds
        lines = ["", f"acceptance tiers (thresholds: {th.source})"]
        if self.combined.n_runs > 1:
            lines.append(f"the table above is the main run alone; the tiers, breakdown and triage use the average "
                         f"of the {self.combined.n_runs} runs")
        if th.discount_note():
            lines.append(th.discount_note())
        if self.added_measures:
            lines.append("measures added for the acceptance method: " + " ".join(self.added_measures))
        width = max([len(t.measure) for t in self.tiers] + [7])
        lines.append(f"{'measure':<{width}}  {'mean':>8}  {'tier':<9}  {'excellent':>9} {'good':>7} {'pass':>7}")
        for t in self.tiers:
            lv = [fraction_decimal(x) for x in t.levels.as_tuple()]
            lines.append(f"{t.measure:<{width}}  {_num(t.value):>8}  {t.tier:<9}  {lv[0]:>9} {lv[1]:>7} {lv[2]:>7}")
        lines.append(self.sample.message())
        c = self.combined
        warning = repeat_warning(c.n_runs, th.expected_repeats)
        if c.n_runs > 1:
            lines.append(f"repeats: {c.n_runs} runs scored separately and averaged ({', '.join(c.labels)})")
            for name in c.measures:
                vals = [m.value for m in c.run_means[name]]
                lines.append(f"  {name}: " + " ".join(_num(v) for v in vals) + f"  -> mean {_num(c.means[name].value)}")
            if c.changed:
                lines.append(f"  queries whose value changes between repeats ({len(c.changed)}): "
                             + ", ".join(f"{q} ({', '.join(ms)})" for q, ms in list(c.changed.items())[:20])
                             + (" ..." if len(c.changed) > 20 else ""))
            else:
                lines.append("  no query changes value between repeats")
        for w in ([warning] if warning else []) + self.warnings:
            lines.append("warning: " + w)
        if self.breakdown and not (len(self.breakdown) == 1 and self.breakdown[0].tag == "(untagged)"):
            lines.append("")
            lines.append("by tag (means over the tag's eligible queries)")
            names = c.measures
            lines.append("\t".join(["tag", "queries", "eligible"] + names))
            for r in self.breakdown:
                lines.append("\t".join([r.tag, str(r.queries), str(r.eligible)]
                                       + [_num(r.means[n].value) for n in names]))
        for title, lst, name, limit in (
                ("recall", self.triage.recall, self.triage.recall_measure, self.triage.config.recall_below),
                ("nDCG", self.triage.ndcg, self.triage.ndcg_measure, self.triage.config.ndcg_below)):
            lines.append("")
            lines.append(f"triage: {len(lst)} quer{'y' if len(lst) == 1 else 'ies'} with {name} < "
                         f"{fraction_decimal(limit)}")
            for e in lst[:25]:
                rank = "none retrieved" if e.first_relevant_rank is None else str(e.first_relevant_rank)
                lines.append(f"  {e.query_id}\t{_num(e.value)}\t{e.status}\tfirst relevant rank: {rank}")
            if len(lst) > 25:
                lines.append(f"  ... (+{len(lst) - 25}; all in the JSON and HTML reports)")
        lines.append("")
        lines.append(self.verdict_line())
        return "\n".join(lines) + "\n"

    def verdict_line(self) -> str:
        prefix = "gate" if self.gate else "acceptance (not gated)"
        if self.verdict == "incomplete":
            return f"{prefix}: NOT ACCEPTED - the run is incomplete (missing or failed queries); exit 2"
        if self.verdict == "fail":
            return f"{prefix}: FAIL - " + "; ".join(self.failing)
        return f"{prefix}: PASS - every gated measure at or above pass, sample size sufficient"


def _levels_json(levels: Levels) -> dict:
    return {name: fraction_decimal(v) for name, v in zip(LEVEL_NAMES, levels.as_tuple())}


def _num(v: float | None) -> str:
    return "null" if v is None else f"{v:.4f}"


def plan_measures(user: list[Measure], thresholds: Thresholds) -> tuple[list[Measure], list[str]]:
    """The user's measures plus every gated and triage measure they lack (added, and said so)."""
    out = list(user)
    added = []
    for m in thresholds.measures() + thresholds.triage.measures():
        if m not in out:
            out.append(m)
            added.append(str(m))
    return out, added


def gain_warnings(user: list[Measure], thresholds: Thresholds) -> list[str]:
    """Where a linear nDCG stands beside the method's exponential one (policy §8), say which is which.

    A plain ``nDCG@5`` is linear gain, as in trec_eval and ir_measures; the
    method's is ``nDCG(gain=exp)@5``.  Given the first, the gate adds the
    second (``plan_measures``) and says so here; a thresholds file that gates
    a linear nDCG is the user's choice, and also said.
    """
    method = [m for m in thresholds.measures() + thresholds.triage.measures() if m.family == "nDCG"]
    out = []
    for m in user:
        twin = next((t for t in method if t.cutoff == m.cutoff and t.gain == "exp"), None)
        if m.family == "nDCG" and m not in method and twin is not None:
            out.append(f"{m} in MEASURES has linear gain (the grade, as in trec_eval and ir_measures) and is not "
                       f"what the acceptance method uses: its {twin} (gain 2^grade - 1) is added and used for "
                       "the tiers and triage")
    for m in thresholds.measures():
        if m.family == "nDCG" and m.gain != "exp" and m.gains is None:
            out.append(f"{thresholds.source} gates {m}, with linear gain; policy §8's method defines nDCG with "
                       f"exponential gain: {Measure('nDCG', m.cutoff, gain='exp')}")
    return out


def assess(results: list[ScoreResult], labels: list[str], thresholds: Thresholds, *, gate: bool,
           first_ranks: list[dict[str, int]], added_measures: list[str] | None = None) -> Acceptance:
    combined = combine(results, labels)
    rows = []
    for name in thresholds.levels:
        mean = combined.means[name]
        levels = thresholds.effective(name)
        rows.append(TierRow(name, mean.value, mean.exact, tier_of(levels, mean.value, mean.exact),
                            levels, thresholds.levels[name]))
    return Acceptance(
        thresholds=thresholds, gate=gate, combined=combined, tiers=rows,
        sample=check_sample(combined.eligible, thresholds.min_queries),
        breakdown=by_tag(combined), triage=triage(combined, thresholds.triage, first_ranks),
        added_measures=list(added_measures or []),
    )

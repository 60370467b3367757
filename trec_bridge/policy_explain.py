"""Strict walked to a policy no tool can be run for (a leaderboard script's: msmarco, beir), in the cross-check.

For a tool, the cross-check compares its numbers with our emulation of it
and splits strict - reference over the axes.  A leaderboard script has no
installable reference (golden/L1 works its rules by hand), so its
explanation is the split alone: strict, the script's policy and the parts by
axis, per measure and per query, evaluated on the run the tools' walks read
(``crosscheck --explain-policy``).  A measure the script does not compute is
listed, never scored.  A script that reads a TREC run by its rank column
(MS MARCO's) is walked on the run read so when the caller hands that reading
over (``rank_run``); the change the reading itself makes comes first, as the
part ``run_order``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .errors import UsageError
from .measures.base import Measure
from .messages import quote
from .model import Run
from .policy import POLICIES, STRICT, Policy
from .reconcile import Part, Rescorer, Walk, cell, mean_parts, per_query_parts, table, value, walk_axes
from .scorer import Prepared, ScoreResult, prepare

RUN_ORDER_REASON = ("the script orders each ranking by the run's rank column, never by its scores (the strict "
                    "reading of a TREC run sorts by score)")


@dataclass
class PolicyExplanation:
    """Strict versus one tool-less policy: the walk, the means and per-query differences with their parts."""

    policy: Policy
    walk: Walk | None = None  # strict (as the script reads the run) ... the policy; None: no measure to walk
    aggregates: dict[str, dict] = field(default_factory=dict)  # measure -> strict, policy, difference, parts
    rows: list[dict] = field(default_factory=list)  # (query, measure) where strict and the policy differ
    not_computed: dict[str, str] = field(default_factory=dict)  # measure -> why the script has no value
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"policy": self.policy.name, "description": self.policy.description, "aggregates": self.aggregates,
                "per_query": self.rows, "not_computed": self.not_computed, "notes": self.notes}


def explainable_policies() -> list[str]:
    """The named policies that emulate no tool (the leaderboard scripts): what ``--explain-policy`` takes."""
    from . import references  # noqa: F401  (the tools register their policies)

    return [name for name, p in POLICIES.items() if p.emulates is None and name != STRICT.name]


def policies_asked(names: str | list[str] | None) -> list[Policy]:
    """``--explain-policy a,b`` as policies; a tool's policy or an unknown name is E_USAGE naming the choices."""
    if names is None:
        return []
    asked = [n.strip() for n in (names.split(",") if isinstance(names, str) else names) if n.strip()]
    choices = explainable_policies()
    for name in asked:
        if name not in choices:
            tool = name in POLICIES and POLICIES[name].emulates is not None
            hint = f"; {name} is a tool's policy: run the tool with --against {POLICIES[name].emulates}" if tool else ""
            raise UsageError("E_USAGE", f"--explain-policy takes {', '.join(choices)} (the policies no tool can be "
                             f"run for); got {quote(name)}{hint}")
    if not asked:
        raise UsageError("E_USAGE", f"--explain-policy names no policy; it takes {', '.join(choices)}")
    return [POLICIES[n] for n in dict.fromkeys(asked)]


def explain(prepared: Prepared, measures: list[Measure], policy: Policy, rank_run: Run | None = None
            ) -> PolicyExplanation:
    """Strict walked to ``policy`` on the cross-check's prepared run (``rank_run``: the same run read by its rank
    column, for a script that reads it so)."""
    out = PolicyExplanation(policy)
    kept = [m for m in measures if policy.families is None or m.family in policy.families]
    for m in measures:
        if m not in kept:
            out.not_computed[str(m)] = f"{policy.name} reproduces a script that computes only " \
                                       f"{', '.join(policy.families)}"
    if not kept:
        return out
    steps = Rescorer(prepared, kept)
    reread = _rank_reading(prepared, policy, rank_run, out.notes)
    out.walk = walk_axes(Rescorer(reread, kept) if reread is not None else steps, policy)
    strict, first = steps.strict, reread is not None
    for m in kept:
        name = str(m)
        before, after = strict.means[name], out.walk.strict.means[name]
        parts = _reading_part((before.value, before.exact), (after.value, after.exact)) if first else []
        final = out.walk.final.means[name].value
        out.aggregates[name] = {"strict": before.value, "policy": final,
                                "difference": None if before.value is None or final is None else before.value - final,
                                "parts": parts + [p.to_json() for p in mean_parts(out.walk, name)]}
    out.rows = _rows(strict, out.walk, kept, first)
    return out


def needs_rank_reading(run: Run, explain: list[Policy]) -> bool:
    """Whether a policy to explain reads the run by its rank column and this run, read by score, has a query
    whose rank column orders it otherwise (then the caller hands the rank-column reading over: ``explain``)."""
    return any(p.run_order == "rank" for p in explain) and bool(_rank_disagrees(run))


def _rank_disagrees(run: Run | None) -> list[str]:
    if run is None or run.order_source != "score" or run.order is None:
        return []
    return [o.query_id for o in run.order if o.rank_disagrees]


def _rank_reading(prepared: Prepared, policy: Policy, rank_run: Run | None, notes: list[str]) -> Prepared | None:
    """The run prepared as read by its rank column, when the script reads it so and the cross-check's reading by
    score orders some query otherwise."""
    disagree = _rank_disagrees(prepared.run) if policy.run_order == "rank" else []
    if not disagree:
        return None
    if rank_run is None:
        notes.append(f"{policy.name} orders rankings by the rank column, which disagrees with the scores on "
                     f"{len(disagree)} queries ({', '.join(disagree[:5])}{', ...' if len(disagree) > 5 else ''}); "
                     "the walk uses the run as read by score (given the run's file, the cross-check reads it by "
                     "rank for the script)")
        return None
    return prepare(prepared.dataset, rank_run, duplicates=policy.duplicates, chunk_map=prepared.chunk_map)


def _reading_part(before: tuple, after: tuple) -> list[dict]:
    """The rank-column reading's own change, (value, exact) by score minus by rank, when it changed anything."""
    if before == after:
        return []
    if isinstance(before[0], float) and isinstance(after[0], float):
        exact = before[1] - after[1] if before[1] is not None and after[1] is not None else None
        return [Part("run_order", RUN_ORDER_REASON, before[0] - after[0], exact).to_json()]
    return [Part("run_order", RUN_ORDER_REASON, None, None, before[0], after[0]).to_json()]


def _rows(strict: ScoreResult, walk: Walk, measures: list[Measure], first: bool) -> list[dict]:
    """Every (query, measure) whose strict value differs from the policy's, with its parts."""
    by_rows: dict[int, dict] = {}
    for _, result in walk.steps:
        by_rows.setdefault(id(result.queries), table(result))
    tables = [by_rows[id(result.queries)] for _, result in walk.steps]
    strict_t = table(strict)
    rows = []
    for m in measures:
        name = str(m)
        for qid in dict.fromkeys([*strict_t, *tables[-1]]):
            before, after = value(strict_t, qid, name), value(tables[-1], qid, name)
            if before == after:
                continue
            parts = _reading_part(cell(strict_t, qid, name), cell(tables[0], qid, name)) if first else []
            parts += [p.to_json() for p in per_query_parts(walk, qid, name, tables)]
            rows.append({"query_id": qid, "measure": name, "strict": before, "policy": after, "parts": parts})
    return rows

"""The cross-check: strict numbers, each reference's numbers, our emulation of each, and why they differ.

For every reference tool: run the tool on the same (split-selected,
chunk-collapsed) inputs, score the run under the tool's named policy, and
require the two to agree within the tool's precision.  What remains between
strict and reference is decomposed over the policy axes (reconcile.py).
A disagreement between emulation and tool is an *unexplained difference*.

trec_eval runs in its own process, so it is started first and the in-process
tools and the axis walks use this process meanwhile; every error is still
raised in the order the tools were asked for, as if they ran one by one.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from .errors import ReferenceUnavailable
from .measures.base import Measure
from .model import ChunkMap, Dataset, Run
from .policy import Policy
from .policy_explain import explain as explain_policy
from .reconcile import Rescorer, Walk, mean_parts, per_query_parts, table, value, walk_axes
from .scorer import ScoreResult, prepare

DOUBLE_TOLERANCE = 1e-9


def reference_policy(tool: str, complete: bool = False) -> Policy:
    """The policy that emulates ``tool`` (its registration says which: references/registry.py)."""
    from .references import policy_for

    return policy_for(tool, complete)


def tolerance(precision: int | None) -> float:
    """Printed decimals round to half a unit of the last place; doubles agree to 1e-9."""
    return DOUBLE_TOLERANCE if precision is None else 0.5 * 10 ** -precision + 1e-12


@dataclass
class Unexplained:
    tool: str
    measure: str
    query_id: str | None  # None: the aggregate
    reference: float | None
    emulation: float | None
    why: str

    def to_json(self) -> dict:
        return dict(vars(self))


@dataclass
class ToolCheck:
    tool: str
    policy: Policy
    available: bool
    version: str | None = None
    unavailable_reason: str | None = None
    reference: object = None  # ReferenceResult
    walk: Walk | None = None
    rows: list[dict] = field(default_factory=list)  # per query and measure
    aggregates: dict[str, dict] = field(default_factory=dict)
    unexplained: list[Unexplained] = field(default_factory=list)


@dataclass
class CrosscheckResult:
    strict: ScoreResult
    tools: list[ToolCheck]
    dataset: Dataset
    run: Run
    explanations: list = field(default_factory=list)  # policy_explain.PolicyExplanation per --explain-policy

    @property
    def unexplained(self) -> list[Unexplained]:
        return [u for t in self.tools for u in t.unexplained]


def tools_asked(against: str | Iterable[str] | None) -> list[str]:
    """The reference tools a cross-check runs: ``against`` as "a,b" or a list; None: the tools run by default
    (every registered tool but those asked for by name only, such as ranx: ``references.default_names``).

    ``none``: no tool (a cross-check that only explains policies, ``--explain-policy``).  An unknown name (or
    none at all) is E_USAGE, naming the registered ones.
    """
    from .errors import UsageError
    from .messages import quote
    from .references import default_names, names

    registered = list(names())
    if against is None:
        return default_names()
    asked = [t.strip() for t in (against.split(",") if isinstance(against, str) else against) if t.strip()]
    if asked == ["none"]:
        return []
    if not asked or any(t not in registered for t in asked):
        given = against if isinstance(against, str) else ",".join(against)
        raise UsageError("E_USAGE", f"--against takes {', '.join(registered)} (or none); got {quote(given)}")
    return asked


def crosscheck(dataset: Dataset, run: Run, measures: list[Measure], against: list[str], *,
               split: str | None = None, chunk_map: ChunkMap | None = None, complete: bool = False,
               require: bool = True, step: Callable[[str], None] | None = None,
               explain: Iterable[Policy] = (), rank_run: Run | None = None) -> CrosscheckResult:
    """Strict numbers, each tool in ``against`` on the same inputs, our emulation of it, and every difference
    decomposed over the policy axes; ``measures``' parse notes (a measure listed twice...) go into the report.
    ``step(text)``: told of each long step as it starts (the CLI's progress line); nothing else.
    ``explain``: policies no tool can be run for (the leaderboard scripts: ``policy_explain.policies_asked``),
    each walked from strict on the same inputs; ``rank_run``: the run read by its rank column, for those that
    read it so (MS MARCO's)."""
    from . import references

    say = step or (lambda text: None)
    say("scoring strict")
    # every tool sees the selected split and documents rather than chunks: the run as the scorer read it
    prepared = prepare(dataset, run, split=split, chunk_map=chunk_map)
    dataset, run = prepared.dataset, prepared.run
    steps = Rescorer(prepared, measures)  # scores strict: raises on invalid input before any tool runs
    strict = steps.strict
    options = references.Options(complete=complete)
    jobs: list[_Job] = []
    try:
        for name in against:
            jobs.append(_Job.setup(name, complete, require))
            if jobs[-1].error is not None:
                break  # this error is raised; the tools after it would never have run
        live = [j for j in jobs if j.error is None and j.check.available]
        for job in sorted(live, key=lambda j: not j.ref.background):  # background tools first
            job.pending = job.ref.start(dataset.qrels, run, measures, rel=dataset.threshold, options=options)
        for job in live:
            say(f"{job.check.tool}: walking the policy axes")
            try:
                job.check.walk = walk_axes(steps, job.check.policy)  # one Rescorer: the walks share their reading
            except Exception as exc:  # noqa: BLE001 - raised by settle(), after the tool's own error
                job.walk_error = exc
            if not job.ref.background:
                job.settle(measures)  # its result is already here: compare while trec_eval still runs
        for job in jobs:  # in the order asked: the first error is the one a one-by-one run would raise
            if job.check is not None and job.check.available and not job.settled:
                say(f"{job.check.tool}: running and comparing")
            job.settle(measures)
            if job.error is not None:
                raise job.error
    finally:
        for job in jobs:
            if job.pending is not None:
                job.pending.cancel()
    explanations = []
    for policy in explain:
        say(f"{policy.name}: walking the policy axes")
        explanations.append(explain_policy(prepared, measures, policy, rank_run))
    if getattr(measures, "notes", None):
        strict.extra["measures"] = list(measures.notes)
    return CrosscheckResult(strict, [j.check for j in jobs], dataset, run, explanations)


@dataclass
class _Job:
    """One requested tool while the cross-check runs.

    ``error`` is the first error a one-by-one run would meet for this tool
    (lookup, the tool itself, the walk, the comparison); it is kept, not
    raised, so that crosscheck() raises errors in the order the tools were asked.
    """

    check: ToolCheck | None = None
    ref: object = None  # references.Reference
    pending: object = None  # references.base.Pending
    error: Exception | None = None
    walk_error: Exception | None = None
    settled: bool = False

    @staticmethod
    def setup(name: str, complete: bool, require: bool) -> "_Job":
        from . import references

        job = _Job()
        try:
            job.ref = references.get(name)
            job.check = ToolCheck(name, reference_policy(name, complete), job.ref.available())
            if not job.check.available:
                job.check.unavailable_reason = f"{name} is not installed (see `trec-bridge tools which`)"
                if require:
                    raise ReferenceUnavailable("E_REFERENCE_UNAVAILABLE", job.check.unavailable_reason)
            else:
                job.check.version = job.ref.version()
        except Exception as exc:  # noqa: BLE001 - raised in order by crosscheck()
            job.error = exc
        return job

    def settle(self, measures: list[Measure]) -> None:
        """Wait for the tool's result and compare it with the walk (once); a failure lands in ``error``."""
        if self.settled or self.error is not None or not self.check.available:
            return
        self.settled = True
        try:
            self.check.reference = self.pending.result()
            if self.walk_error is not None:
                raise self.walk_error
            _compare(self.check, measures)
        except Exception as exc:  # noqa: BLE001 - raised in order by crosscheck()
            self.error = exc


def _compare(check: ToolCheck, measures: list[Measure]) -> None:
    ref = check.reference
    walk = check.walk
    by_rows: dict[int, dict] = {}  # steps that reuse a result share its rows: one table each
    for _, result in walk.steps:
        if id(result.queries) not in by_rows:
            by_rows[id(result.queries)] = table(result)
    tables = [by_rows[id(result.queries)] for _, result in walk.steps]
    strict_t, emu_t = tables[0], tables[-1]
    tol = tolerance(ref.precision)
    for m in measures:
        name = str(m)
        if name in ref.unsupported or name in ref.failed:
            continue
        for qid, ref_value in ref.per_query.get(name, {}).items():
            emu = value(emu_t, qid, name)
            strict = value(strict_t, qid, name)
            agrees = isinstance(emu, float) and abs(emu - ref_value) <= tol
            row = {"query_id": qid, "measure": name, "strict": strict, "reference": ref_value,
                   "emulation": emu, "agrees": agrees}
            if not (isinstance(strict, float) and abs(strict - ref_value) <= tol):
                row["parts"] = [p.to_json() for p in per_query_parts(walk, qid, name, tables)]
            check.rows.append(row)
            if not agrees:
                why = "the query is not in our emulation's query set" if emu == "absent" else "values differ"
                check.unexplained.append(Unexplained(check.tool, name, qid, ref_value,
                                                     emu if isinstance(emu, float) else None, why))
        ref_mean = ref.aggregate.get(name)
        emu_mean = walk.final.means[name].value
        strict_mean = walk.strict.means[name]
        agrees = (ref_mean is None and emu_mean is None) or (
            ref_mean is not None and emu_mean is not None and abs(emu_mean - ref_mean) <= tol)
        check.aggregates[name] = {
            "strict": strict_mean.value, "reference": ref_mean, "emulation": emu_mean, "agrees": agrees,
            "difference": None if strict_mean.value is None or ref_mean is None else strict_mean.value - ref_mean,
            "parts": [p.to_json() for p in mean_parts(walk, name)],
        }
        if not agrees:
            check.unexplained.append(Unexplained(check.tool, name, None, ref_mean, emu_mean, "means differ"))


REPRO_FILES = ["qrels.txt", "run.txt"]


def write_reproducer(result: CrosscheckResult, repro_dir: str | os.PathLike) -> Path | None:
    """Write the minimal reproducer of the first unexplained difference into ``repro_dir``/<tool>/ (atomically);
    the folder, or None when every difference is explained."""
    from .outputs import atomic_write, make_dirs

    if not result.unexplained:
        return None
    first = result.unexplained[0]
    folder = Path(repro_dir) / first.tool
    make_dirs(folder)
    qrels_text, run_text = minimal_reproducer(result, first)
    for name, text in zip(REPRO_FILES, (qrels_text, run_text)):
        atomic_write(folder / name, text)
    return folder


def minimal_reproducer(result: CrosscheckResult, unexplained: Unexplained) -> tuple[str, str]:
    """The TREC qrels and run lines of the smallest query with an unexplained difference."""
    candidates = [u.query_id for u in result.unexplained if u.query_id is not None and u.tool == unexplained.tool]
    qrels = result.dataset.qrels.frame
    runf = result.run.frame
    if candidates:
        sizes = {q: qrels.filter(pl.col("query_id") == q).height + runf.filter(pl.col("query_id") == q).height
                 for q in set(candidates)}
        keep = [min(sizes, key=lambda q: (sizes[q], q))]
    else:
        keep = result.dataset.qrels.query_ids()
    q_lines = [f"{q} {it} {d} {g}" for q, it, d, g in
               qrels.filter(pl.col("query_id").is_in(keep)).select("query_id", "iteration", "doc_id", "grade").iter_rows()]
    from .references.base import scored_frame

    scored, _ = scored_frame(result.run)
    r_lines = [f"{q} Q0 {d} {r} {s!r} repro" for q, d, r, s in
               scored.filter(pl.col("query_id").is_in(keep)).select("query_id", "doc_id", "rank", "score").iter_rows()]
    return "\n".join(q_lines) + "\n", "\n".join(r_lines) + "\n"

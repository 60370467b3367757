"""The cross-check: strict numbers, each reference's numbers, our emulation of each, and why they differ.

For every reference tool: run the tool on the same (split-selected,
chunk-collapsed) inputs, score the run under the tool's named policy, and
require the two to agree within the tool's precision.  What remains between
strict and reference is decomposed over the policy axes (reconcile.py).
A disagreement between emulation and tool is an *unexplained difference*.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from .chunks import check_chunk_map, collapse
from .dataset_checks import check_dataset
from .errors import ReferenceUnavailable
from .measures.base import Measure
from .model import ChunkMap, Dataset, Run
from .policy import IR_MEASURES, PYTREC_EVAL, TREC_EVAL, TREC_EVAL_C, Policy
from .reconcile import Walk, mean_parts, per_query_parts, table, walk_axes
from .scorer import ScoreResult, score

DOUBLE_TOLERANCE = 1e-9


def reference_policy(tool: str, complete: bool = False) -> Policy:
    if tool == "trec_eval":
        return TREC_EVAL_C if complete else TREC_EVAL
    return {"pytrec_eval": PYTREC_EVAL, "ir_measures": IR_MEASURES}[tool]


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

    @property
    def unexplained(self) -> list[Unexplained]:
        return [u for t in self.tools for u in t.unexplained]


def prepare(dataset: Dataset, run: Run, split: str | None, chunk_map: ChunkMap | None) -> tuple[Dataset, Run]:
    """The inputs every tool sees: the selected split, and documents rather than chunks."""
    check_dataset(dataset)
    dataset = dataset.select_split(split)
    chunk_map = chunk_map or dataset.chunk_map
    if chunk_map is not None:
        check_chunk_map(chunk_map, dataset.corpus)
        run = collapse(run, chunk_map).run
    return dataset, run


def crosscheck(dataset: Dataset, run: Run, measures: list[Measure], against: list[str], *,
               split: str | None = None, chunk_map: ChunkMap | None = None, complete: bool = False,
               require: bool = True) -> CrosscheckResult:
    from . import references

    dataset, run = prepare(dataset, run, split, chunk_map)
    strict = score(dataset, run, measures)  # raises on invalid input before any tool runs
    checks = []
    for name in against:
        ref = references.get(name)
        check = ToolCheck(name, reference_policy(name, complete), ref.available())
        checks.append(check)
        if not check.available:
            check.unavailable_reason = f"{name} is not installed (see `trec-bridge tools which`)"
            if require:
                raise ReferenceUnavailable("E_REFERENCE_UNAVAILABLE", check.unavailable_reason)
            continue
        check.version = ref.version()
        options = references.Options(complete=complete)
        check.reference = ref.evaluate(dataset.qrels, run, measures, rel=dataset.threshold, options=options)
        check.walk = walk_axes(dataset, run, measures, check.policy, strict_result=strict)
        _compare(check, measures)
    return CrosscheckResult(strict, checks, dataset, run)


def _compare(check: ToolCheck, measures: list[Measure]) -> None:
    ref = check.reference
    walk = check.walk
    tables = [table(result) for _, result in walk.steps]
    strict_t, emu_t = tables[0], tables[-1]
    tol = tolerance(ref.precision)
    for m in measures:
        name = str(m)
        if name in ref.unsupported or name in ref.failed:
            continue
        for qid, ref_value in ref.per_query.get(name, {}).items():
            emu = emu_t.get(qid, {}).get(name, ("absent", None))[0]
            strict = strict_t.get(qid, {}).get(name, ("absent", None))[0]
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

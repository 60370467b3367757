"""Glue between ``trec-bridge score``'s acceptance options and the acceptance workflow.

Kept out of cli/score.py so that the score command only gains a few lines:
``prepare_acceptance`` reads the thresholds and the options (an
``AcceptanceOptions``) before anything is scored (a bad thresholds file is
invalid input, exit 1, nothing written); ``Plan.assess`` scores the repeats
with exactly the main run's settings and builds the ``Acceptance``;
``Plan.write_outputs`` writes the HTML page and the PNG charts.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from pathlib import Path

from ..errors import UsageError
from ..measures import parse_measures
from ..measures.base import Measure
from .acceptance import Acceptance, assess, gain_warnings, plan_measures
from .options import AcceptanceOptions, names_rag_set
from .tiers import Thresholds, Triage, default_thresholds, load_thresholds
from ..messages import quote


@dataclass
class Plan:
    options: AcceptanceOptions
    thresholds: Thresholds
    gate: bool
    measures: list[Measure]
    added: list[str]
    warnings: list[str] = field(default_factory=list)
    measure_notes: list[str] = field(default_factory=list)  # what parsing MEASURES did (a dropped repeat)

    def assess(self, result, prepared, loaded, fingerprints: dict, system: dict | None = None,
               vary: tuple = ()) -> Acceptance:
        """``prepared``: the main run as ``result`` was scored from (scorer.prepare_for); ``loaded``: the
        command's inputs (cli.inputs.Inputs), whose ``load_run`` reads the repeats with the main run's settings.
        ``system``: the main run's test conditions, which every repeat must share but for the ``vary`` keys;
        a repeat without a system object of its own shares the one --system/--system-file gave."""
        from ..files import sha256_file
        from ..scorer import evaluate, prepare_for
        from ..conditions import check_repeats
        from .triage import first_relevant_ranks

        results, labels = [result], [loaded.run_path]
        ranks = [first_relevant_ranks(prepared)]
        main_sha = fingerprints["run"]["sha256"]
        for n, path in enumerate(self.options.repeat, 2):
            sha = sha256_file(path) if Path(path).is_file() else None
            rep = loaded.load_run(path)
            own = rep.metadata.get("system")
            described = loaded.run.metadata.get("system") is None  # --system described the main run: its repeats too
            check_repeats([system, own if own is not None else (system if described else None)],
                          [loaded.run_path, path], vary)
            again = prepare_for(prepared.dataset, rep, self.measures, result.policy, chunk_map=prepared.chunk_map)
            results.append(evaluate(again, self.measures, result.policy))
            ranks.append(first_relevant_ranks(again))
            labels.append(path)
            fingerprints[f"repeat_{n}"] = {"path": path, "sha256": sha}
            if sha == main_sha:
                self.warnings.append(f"repeat {path} is byte-identical to the main run {loaded.run_path}: "
                                     "the same file given twice measures no variation")
        acc = assess(results, labels, self.thresholds, gate=self.gate, first_ranks=ranks, added_measures=self.added)
        acc.warnings = self.warnings
        return acc

    def write_outputs(self, acceptance: Acceptance, inputs: dict, system: dict | None = None) -> None:
        if not (self.options.html or self.options.png_dir):
            return
        from ..outputs import atomic_write
        from . import html, plots

        charts = {"tiers.png": plots.tier_chart(acceptance.tiers)}
        if self.options.png_dir:
            write_pngs(self.options.png_dir, charts)
        if self.options.html:
            atomic_write(self.options.html, html.acceptance_page(acceptance, inputs, charts, system))


def write_pngs(folder: str, charts: dict[str, bytes]) -> None:
    """The charts as PNG files in ``folder`` (created if missing), written with the command's other outputs."""
    from ..outputs import make_dirs, write_files

    make_dirs(folder)
    write_files((Path(folder) / name, png) for name, png in charts.items())


def prepare_acceptance(options: AcceptanceOptions) -> Plan:
    if options.policy != "strict":
        raise UsageError("E_USAGE", f"the acceptance options need the strict policy (got --policy {options.policy}): "
                         "another policy can drop missing queries from the means and pass a run that is incomplete")
    gate_file = options.gate if isinstance(options.gate, str) else None
    if gate_file and options.thresholds and gate_file != options.thresholds:
        raise UsageError("E_USAGE", f"--gate {gate_file} and --thresholds {options.thresholds} name two thresholds files")
    path = gate_file or options.thresholds
    thresholds = load_thresholds(path) if path else default_thresholds()
    if options.min_queries is not None:
        if options.min_queries < 1:
            raise UsageError("E_USAGE", f"--min-queries must be a positive integer, got {options.min_queries}")
        thresholds.min_queries = options.min_queries
    triage = thresholds.triage
    k = triage.k
    if options.triage_k is not None:
        if options.triage_k < 1:
            raise UsageError("E_CUTOFF", f"--triage-k must be a positive integer, got {options.triage_k}")
        k = options.triage_k
    recall_below = _limit(options.triage_recall_below, "--triage-recall-below", triage.recall_below)
    ndcg_below = _limit(options.triage_ndcg_below, "--triage-ndcg-below", triage.ndcg_below)
    thresholds.triage = Triage(k, recall_below, ndcg_below)
    # "rag" names the gated measures themselves; only triage measures outside them count as added
    user = thresholds.measures() if names_rag_set(options.measures) else parse_measures(options.measures)
    measures, added = plan_measures(user, thresholds)
    return Plan(options, thresholds, options.gate is not None, measures, added, gain_warnings(user, thresholds),
                list(user.notes))


def _limit(text: str | None, option: str, default: Fraction) -> Fraction:
    if text is None:
        return default
    try:
        value = Fraction(Decimal(text))
    except (InvalidOperation, ValueError, OverflowError):
        raise UsageError("E_USAGE", f"{option} must be a decimal number, got {quote(text)}") from None
    if not 0 < value <= 1:
        raise UsageError("E_USAGE", f"{option} must be in (0, 1], got {text}")
    return value

"""``trec-bridge compare``: paired statistics between two or more systems, corrected for multiple testing."""
from __future__ import annotations

import argparse
import sys

from ..errors import EXIT_OK, UsageError
from ..integers import INT64_MIN, int_option
from .report_options import add_report_options

MAX_RESAMPLES = 1_000_000  # scipy holds a resample x queries array: 100x the default is ample, more exhausts memory
CORRECTIONS = ("holm", "bonferroni", "bh", "none")

HELP = """Compare two or more systems scored on the same protocol, query by query.

INPUT... are JSON reports written by `trec-bridge score --json` (two or
more), or, with --dataset, two or more runs that compare scores itself on
that dataset with the --measure list. The reports must share their protocol
(query set, judgments, threshold, gain and policy); otherwise the comparison
is refused (exit 1, E_COMPARE_PROTOCOL) and the message names the parts that
differ. Reports whose measures differ are compared on the measures they share
(a note says so).

For every pair of systems (A listed before B) and every measure: paired deltas
B - A, wins / losses / ties, paired t-test, Wilcoxon signed-rank test,
randomization (sign-flip permutation) test and a bootstrap confidence interval
of the mean delta, all computed by scipy; the randomization test and the
bootstrap use --seed. Each test's p-values over all pairs x measures are
adjusted together (--correction: holm by default, bonferroni, bh for
Benjamini-Hochberg, none); the winner table marks each mean with the systems
it beats significantly (--test, adjusted p < --alpha), as TREC papers do.

A report is checked before it is used (docs/formats.md, "Score report"): the
strict JSON rules, its schema (E_JSON_SCHEMA), exact values that parse and
agree with their values (E_REPORT_EXACT) and parts that agree with each other
(E_REPORT_INCONSISTENT).

Test conditions (docs/rag.md): every system key (the reports' "system"
objects, by dotted path) in which a system differs from the first is listed,
added, removed or changed with both values. More than one differing key: the
comparison is not a controlled one-variable comparison (a warning;
--single-variable refuses it, exit 6, E_COMPARE_UNCONTROLLED, as it refuses
systems whose conditions are unknown).

Exit codes: 0 compared; 1 invalid input or different protocols; 6 not a
one-variable comparison under --single-variable."""


def add_parser(sub) -> None:
    p = sub.add_parser("compare", help="paired comparison of two or more systems (t-test, Wilcoxon, randomization, "
                       "bootstrap) with a multiple-testing correction", description=HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="score reports (score --json), or runs with --dataset")
    runs = p.add_argument_group("scoring runs directly")
    runs.add_argument("--dataset", metavar="FILE", help="score the INPUT runs on this dataset or TREC qrels")
    runs.add_argument("--queries", metavar="FILE", help="with TREC qrels: the query set, one query ID per line")
    runs.add_argument("--rel", type=int_option("--rel", INT64_MIN), metavar="N", help="relevance threshold (trec_eval -l)")
    runs.add_argument("--split", help="only the dataset's queries of this split")
    runs.add_argument("--order", choices=["score", "rank"], default="score", help="TREC runs: order by score or rank")
    runs.add_argument("--policy", default="strict", help="the scoring policy (default strict)")
    p.add_argument("--measure", action="append", default=[], metavar="M",
                   help="compare only these measures (repeatable; needed with --dataset; default: every measure "
                        "the reports share)")
    p.add_argument("--label", action="append", default=[], metavar="NAME",
                   help="a short name per system, in INPUT order (default: the run file's name)")
    p.add_argument("--correction", choices=CORRECTIONS, default="holm",
                   help="multiple-testing correction over all pairs x measures (default holm)")
    p.add_argument("--test", choices=("t", "wilcoxon", "randomization"), default="t",
                   help="the test whose adjusted p-values mark the winner table (default t)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level of the marks (default 0.05)")
    p.add_argument("--seed", type=int_option("--seed", 0), default=0, help="seed of the randomization test and the bootstrap (default 0)")
    p.add_argument("--resamples", type=int_option("--resamples", 1, MAX_RESAMPLES), default=10000, metavar="N",
                   help="resamples of the randomization test and the bootstrap (default 10000, at most 1,000,000)")
    p.add_argument("--confidence", type=float, default=0.95, metavar="C",
                   help="confidence level of the bootstrap interval (default 0.95)")
    p.add_argument("--single-variable", action="store_true",
                   help="refuse (exit 6, E_COMPARE_UNCONTROLLED) unless every system differs from the first in one "
                        "system key at most, and all test conditions are known (docs/rag.md)")
    add_report_options(p, per_query=False)
    p.add_argument("--latex", metavar="OUT", help="write the winner table as a LaTeX table (booktabs)")
    p.add_argument("--markdown", metavar="OUT", help="write the winner table as Markdown")
    p.add_argument("--html", metavar="OUT", help="write a self-contained HTML report with per-query charts")
    p.add_argument("--png-dir", metavar="DIR", help="also write the charts as PNG here")
    p.set_defaults(handler=run, io=io, chunk_map=None)


def io(args):
    """Every file compare reads and writes (the PNG names depend on the measures: checked when written)."""
    from ..outputs import Declared

    return Declared(inputs=[*args.inputs, args.dataset, args.queries],
                    outputs=[args.json, args.html, args.latex, args.markdown], folders=[(args.png_dir, [])])


def _check(args) -> None:
    if not 0 < args.confidence < 1:
        raise UsageError("E_USAGE", f"--confidence must be between 0 and 1, got {args.confidence}")
    if not 0 < args.alpha < 1:
        raise UsageError("E_USAGE", f"--alpha must be between 0 and 1, got {args.alpha}")
    if len(args.inputs) < 2:
        raise UsageError("E_USAGE", "compare needs two or more systems: give two or more reports, or --dataset and "
                         "two or more runs")
    if args.label and len(args.label) != len(args.inputs):
        raise UsageError("E_USAGE", f"--label given {len(args.label)} times for {len(args.inputs)} systems")
    if args.dataset and not args.measure:
        raise UsageError("E_USAGE", "with --dataset, name the measures to score: --measure \"nDCG@10 AP\"")


def run(args) -> int:
    from ..compare_systems import compare_systems
    from ..compare_text import summary, winner_table
    from ..measures import parse_measures
    from ..outputs import atomic_write
    from ..progress import progress
    from . import say_notes
    from .report_options import json_report_text

    _check(args)
    parsed = parse_measures(" ".join(args.measure)) if args.measure else None
    measures = [str(m) for m in parsed] if parsed else None
    reports = _score_runs(args, parsed) if args.dataset else _read_reports(args.inputs)
    with progress("comparing") as shown:
        cmp = compare_systems(reports, list(args.inputs), labels=args.label or None, measures=measures,
                              seed=args.seed, resamples=args.resamples, confidence=args.confidence,
                              correction=args.correction, test=args.test, alpha=args.alpha,
                              step=lambda text: setattr(shown, "detail", text),
                              single_variable=args.single_variable)
    say_notes(parsed.notes if parsed else [])
    if args.json:
        atomic_write(args.json, json_report_text(cmp, args))
    for path, fmt in ((args.latex, "latex"), (args.markdown, "markdown")):
        if path:
            atomic_write(path, winner_table(cmp, fmt))
    if args.html or args.png_dir:
        _pages(cmp, args)
    sys.stdout.write(summary(cmp, args.format))
    return EXIT_OK


def _read_reports(paths: list[str]) -> list[dict]:
    from ..progress import progress
    from ..rag.compare import load_report

    reports = []
    for path in paths:
        with progress(f"reading {path}"):
            reports.append(load_report(path))
    return reports


def _score_runs(args, measures) -> list[dict]:
    """Each run scored on the dataset (read once) with the same measures and policy: one protocol by construction."""
    from ..policy import get_policy
    from ..progress import progress
    from ..report import build_report
    from ..scorer import evaluate, prepare_for
    from .inputs import load_inputs

    policy = get_policy(args.policy)
    with progress(f"reading {args.dataset}"):
        loaded = load_inputs(args, read_run=False)
    reports = []
    for path in args.inputs:
        with progress(f"scoring {path}"):
            run = loaded.load_run(path)
            prepared = prepare_for(loaded.dataset, run, measures, policy, split=loaded.split)
            result = evaluate(prepared, measures, policy)
        roles = {"dataset": args.dataset, "run": path, "queries": args.queries}
        reports.append(build_report(result, {r: {"path": p, "sha256": None} for r, p in roles.items() if p},
                                    run.metadata.get("system")))
    return reports


def _pages(cmp: dict, args) -> None:
    """The per-query delta charts against the first system (the baseline) and the HTML page."""
    from ..html_report import compare_page
    from ..outputs import atomic_write
    from ..rag.cli_support import write_pngs

    charts, names = delta_charts(cmp)
    if args.png_dir:
        write_pngs(args.png_dir, charts)
    if args.html:
        atomic_write(args.html, compare_page(cmp, charts, names))


def delta_charts(cmp: dict) -> tuple[dict[str, bytes], dict[tuple[str, str, str], str]]:
    """One chart per measure and pair with the first system (A, the baseline), titled by the systems' labels.

    Returns the PNGs by file name and the file name of each (A, B, measure).
    """
    from ..compare_systems import png_label
    from ..rag import plots

    charts, names = {}, {}
    baseline, two = cmp["systems"][0]["label"], len(cmp["systems"]) == 2
    for pair in cmp["pairs"]:
        if pair["a"] != baseline:
            continue
        for m in pair["measures"]:
            if m["n"]:
                name = f"delta_{png_label(m['measure'])}" + ("" if two else f"_{png_label(pair['b'])}") + ".png"
                names[(pair["a"], pair["b"], m["measure"])] = name
                charts[name] = plots.delta_chart(m["measure"], [r["query_id"] for r in m["per_query"]],
                                                 [r["delta"] for r in m["per_query"]], pair["a"], pair["b"])
    return charts, names

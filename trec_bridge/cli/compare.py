"""``trec-bridge compare``: paired statistics between two systems' reports."""
from __future__ import annotations

import argparse
import sys

from ..errors import EXIT_OK, UsageError
from ..integers import int_option

MAX_RESAMPLES = 1_000_000  # scipy holds a resample x queries array: 100x the default is ample, more exhausts memory

HELP = """Compare two systems scored on the same protocol, query by query.

REPORT_A and REPORT_B are JSON reports written by `trec-bridge score --json`.
Their protocol fingerprints must be equal (same query set, judgments,
measures, threshold, gain and policy); otherwise the comparison is refused
(exit 1, E_COMPARE_PROTOCOL). Per measure: paired deltas B - A, wins / losses
/ ties, paired t-test, Wilcoxon signed-rank test, randomization (sign-flip
permutation) test and a bootstrap confidence interval of the mean delta, all
computed by scipy; the randomization test and the bootstrap use --seed.

A report is checked before it is used (docs/formats.md, "Score report"): the
strict JSON rules, its schema (E_JSON_SCHEMA), exact values that parse and
agree with their values (E_REPORT_EXACT) and parts that agree with each other
(E_REPORT_INCONSISTENT).

Exit codes: 0 compared; 1 invalid input or different protocols."""


def add_parser(sub) -> None:
    p = sub.add_parser("compare", help="paired comparison of two score reports (t-test, Wilcoxon, randomization, bootstrap)",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("report_a", metavar="REPORT_A", help="JSON report of system A (score --json)")
    p.add_argument("report_b", metavar="REPORT_B", help="JSON report of system B (score --json)")
    p.add_argument("--measure", action="append", default=[], metavar="M",
                   help="compare only this measure (repeatable; default: every measure of the reports)")
    p.add_argument("--seed", type=int_option("--seed", 0), default=0, help="seed of the randomization test and the bootstrap (default 0)")
    p.add_argument("--resamples", type=int_option("--resamples", 1, MAX_RESAMPLES), default=10000, metavar="N",
                   help="resamples of the randomization test and the bootstrap (default 10000, at most 1,000,000)")
    p.add_argument("--confidence", type=float, default=0.95, metavar="C",
                   help="confidence level of the bootstrap interval (default 0.95)")
    p.add_argument("--json", metavar="OUT", help="write the comparison as JSON")
    p.add_argument("--html", metavar="OUT", help="write a self-contained HTML report with per-query delta charts")
    p.add_argument("--png-dir", metavar="DIR", help="also write the charts as PNG here")
    p.set_defaults(handler=run, io=io)


def io(args):
    """Every file compare reads and writes (the PNG names depend on the measures: checked when written)."""
    from ..outputs import Declared

    return Declared(inputs=[args.report_a, args.report_b], outputs=[args.json, args.html], folders=[(args.png_dir, [])])


def run(args) -> int:
    from ..outputs import atomic_write
    from ..measures import parse_measures
    from ..rag.compare import compare_reports, load_report, render_text
    from ..report import report_json
    from . import say_notes

    if not 0 < args.confidence < 1:
        raise UsageError("E_USAGE", f"--confidence must be between 0 and 1, got {args.confidence}")
    parsed = parse_measures(args.measure) if args.measure else None
    measures = [str(m) for m in parsed] if parsed else None
    a, b = load_report(args.report_a), load_report(args.report_b)
    cmp = compare_reports(a, b, measures=measures, seed=args.seed, resamples=args.resamples,
                          confidence=args.confidence, path_a=args.report_a, path_b=args.report_b)
    say_notes(parsed.notes if parsed else [])
    if args.json:
        atomic_write(args.json, report_json(cmp))
    if args.html or args.png_dir:
        from ..rag import html, plots
        from ..rag.cli_support import write_pngs

        charts = {}
        for m in cmp["measures"]:
            if m["n"]:
                charts[m["png"]] = plots.delta_chart(m["measure"], [r["query_id"] for r in m["per_query"]],
                                                     [r["delta"] for r in m["per_query"]],
                                                     cmp["a"]["run"] or args.report_a, cmp["b"]["run"] or args.report_b)
        if args.png_dir:
            write_pngs(args.png_dir, charts)
        if args.html:
            atomic_write(args.html, html.compare_page(cmp, charts))
    sys.stdout.write(render_text(cmp))
    return EXIT_OK

"""`trec-bridge score DATASET RUN "MEASURES"`: the strict scorer from the command line."""
from __future__ import annotations

import argparse
import sys

from ..errors import EXIT_INCOMPLETE, EXIT_OK, UsageError
from ..integers import int_option
from .inputs import add_input_arguments, load_inputs
from .system_options import add_system_arguments, given_system, system_for
from .report_options import (add_report_options, check_report_options, json_report_text,
                             write_pages)

HELP = """Score a run on a dataset under a policy (strict by default).

DATASET is a trec-bridge JSON dataset, or TREC qrels (then the query set is the
qrels' queries, or the IDs in --queries). RUN is a JSON run or a TREC run.
MEASURES is a list in ir_measures syntax, separated by spaces or commas, e.g.
"nDCG@10 RR@10 R@100 AP" or "ndcg@10,mrr@10"; names in any letter case.
nDCG@k is linear gain (trec_eval's ndcg_cut.k); exponential gain by name:
"nDCG(dcg=exp-log2)@10". A measure listed twice is scored once (a note says so).

Exit codes: 0 complete; 1 invalid input (nothing scored); 2 incomplete run
(missing or failed queries, scored 0 and kept in the mean; the report is
still written); 4 acceptance gate failed (--gate); 7 the Dask cluster of
--dask could not be reached or lost a task past Dask's retries (nothing written).

RAG acceptance (docs/rag.md): --gate [FILE] prints each gated measure's tier
(excellent / good / pass / fail, thresholds from FILE or policy §8's table) and
exits 4 when one is below pass or fewer than --min-queries (200) queries are
eligible; exit 1 and 2 take priority. Gated and triage measures missing from
MEASURES are added (and the output says so); MEASURES may be the word "rag"
for exactly the acceptance measures. --repeat, --rag and
the triage options turn the same analysis on without gating; with any of
them --html writes the acceptance report, without them the ordinary
evaluation report (docs/reports.md)."""


def add_parser(sub) -> None:
    p = sub.add_parser("score", help="score a run (strict policy by default)", description=HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_input_arguments(p)
    p.add_argument("measures", help='measures in ir_measures syntax, e.g. "nDCG@10 RR@10 R@100"')
    p.add_argument("--policy", default="strict",
                   help="strict (default), trec_eval, trec_eval_c, pytrec_eval, ir_measures, ranx, or a leaderboard "
                        "script's rules: msmarco, beir (docs/policy.md)")
    add_report_options(p)
    add_system_arguments(p)
    p.add_argument("--dask", metavar="ADDRESS", help="score on a Dask cluster (scheduler address, e.g. "
                   "tcp://host:8786): the run's parts are read and scored on its workers, which must read the "
                   "run's path; the numbers and reports are the same (needs trec-bridge[dask])")
    p.add_argument("--html", metavar="OUT", help="write a self-contained HTML report (docs/reports.md); with the RAG "
                   "options below, the acceptance report (docs/rag.md)")
    p.add_argument("--png-dir", metavar="DIR", help="also write the report's charts as PNG files here")
    rag = p.add_argument_group("RAG acceptance (docs/rag.md; strict policy only)")
    rag.add_argument("--gate", nargs="?", const=True, default=None, metavar="FILE",
                     help="gate on the acceptance tiers (thresholds FILE, TOML; default: policy §8's table); exit 4 on failure")
    rag.add_argument("--thresholds", metavar="FILE", help="thresholds file for the tier table without gating")
    rag.add_argument("--rag", action="store_true", help="print tiers, tag breakdown and triage lists without gating")
    rag.add_argument("--min-queries", type=int_option("--min-queries", 1), metavar="N",
                     help="eligible queries needed for a meaningful result (default: the thresholds file's, or 200)")
    rag.add_argument("--repeat", action="append", default=[], metavar="RUN",
                     help="another run of the same system; repeatable (the method expects 3 runs in all); a run "
                          "whose system object differs from the main run's is refused (E_REPEAT_SYSTEM)")
    rag.add_argument("--vary", action="append", default=[], metavar="KEY",
                     help="a system key the repeats may differ in (repeatable, dotted, e.g. --vary seed)")
    rag.add_argument("--triage-k", type=int_option("--triage-k", 1, code="E_CUTOFF"), metavar="K", help="cutoff of the triage measures R@K and nDCG@K (default 10)")
    rag.add_argument("--triage-recall-below", metavar="X", help="list queries with R@K below X (default 0.3)")
    rag.add_argument("--triage-ndcg-below", metavar="X", help="list queries with nDCG@K below X (default 0.5)")
    p.set_defaults(handler=run, io=io)


def io(args):
    """Every file score reads and writes (checked before anything is read: trec_bridge.outputs)."""
    from ..outputs import Declared

    from ..rag.options import AcceptanceOptions

    gate = args.gate if isinstance(args.gate, str) else None
    charts = ["tiers.png"] if AcceptanceOptions.from_args(args).requested() else ["distributions.png", "latency.png"]
    return Declared(inputs=[args.dataset, args.run, args.queries, args.chunk_map, gate, args.thresholds, *args.repeat,
                            args.system_file],
                    outputs=[args.json, args.html, args.per_query], folders=[(args.png_dir, charts)])


def run(args) -> int:
    from ..evaluation import score_file_in_parts, score_whole
    from ..measures import parse_measures
    from ..policy import get_policy
    from ..rag.options import AcceptanceOptions

    check_report_options(args)
    if args.dask and AcceptanceOptions.from_args(args).requested():
        raise UsageError("E_USAGE", "--dask scores the run on the cluster, and the RAG acceptance options read the "
                         "whole run here: give one or the other")
    given = given_system(args)  # a bad --system is refused before anything is read
    options = AcceptanceOptions.from_args(args)
    plan = None
    if options.requested():
        from ..rag.cli_support import prepare_acceptance

        plan = prepare_acceptance(options)
    measures = plan.measures if plan else parse_measures(args.measures)
    from .. import references  # noqa: F401  (a reference tool's module registers its policy: --policy ranx)

    policy = get_policy(args.policy)
    in_parts = plan is None and not args.chunk_map  # nothing needs the whole run in memory: read it in parts
    loaded = load_inputs(args, read_run=not in_parts and not args.dask)
    metadata: dict = {}
    result = score_file_in_parts(loaded.dataset, args.run, measures, policy, order=loaded.order, split=args.split,
                                 fingerprint=bool(args.json), seen=metadata) if in_parts and not args.dask else None
    if args.dask:
        result, metadata = _on_cluster(args, loaded, measures, policy)
    prepared = None
    if result is None:
        if loaded.run is None:
            loaded.run = loaded.load_run(args.run)
        prepared, result = score_whole(loaded.dataset, loaded.run, measures, policy, split=loaded.split,
                                       chunk_map=loaded.chunk_map)
        metadata = loaded.run.metadata
    system = system_for(given, metadata)
    return _report(args, plan, loaded, prepared, result, plan.measure_notes if plan else measures.notes, system,
                   metadata.get("timing"))


def _on_cluster(args, loaded, measures, policy):
    """The run scored on the Dask cluster at ``--dask``: (result, the run's metadata)."""
    from ..cluster import score_file
    from ..part_scores import job_for

    job = job_for(loaded.dataset, measures, policy, split=args.split, order=loaded.order, chunk_map=loaded.chunk_map)
    return score_file(args.dask, job, args.run)


def _report(args, plan, loaded, prepared, result, notes: list[str], system: dict | None, timing: dict | None) -> int:
    """Write the JSON report and the acceptance outputs, print the table; the exit code."""
    from ..evaluation import input_fingerprints, label
    from ..outputs import atomic_write
    from ..report import build_report, render_table
    from ..tables import score_summary, write_per_query
    from . import say_notes

    # fingerprints go into the JSON report, the HTML and the RAG outputs only: no hashing of a 7M-line run otherwise
    inputs = input_fingerprints(loaded.roles(), hashed=bool(args.json or plan or args.html))
    label(result, loaded.dataset, notes)
    acceptance = plan.assess(result, prepared, loaded, inputs, system, tuple(args.vary)) if plan else None
    report = None
    if args.json or args.per_query or args.format != "table" or args.html or args.png_dir:
        report = build_report(result, inputs, system, timing)
        if acceptance is not None:
            report["rag"] = acceptance.to_json()
    if args.json:
        atomic_write(args.json, json_report_text(report, args))
    if args.per_query:
        write_per_query(args.per_query, report)
    if acceptance is None and (args.html or args.png_dir):
        write_pages(report, args.html, args.png_dir, "score")
    if args.format == "table":
        sys.stdout.write(render_table(result, system, timing))
    elif args.format == "json":
        sys.stdout.write(json_report_text(report, args))
    else:
        sys.stdout.write(score_summary(report, args.format))
    say_notes(notes)  # after scoring: a rejected input still gets one error line
    if acceptance is not None:
        plan.write_outputs(acceptance, inputs, system)
        sys.stdout.write(acceptance.render_text())
        return acceptance.exit_code()
    return EXIT_OK if result.complete else EXIT_INCOMPLETE

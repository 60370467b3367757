"""`trec-bridge score DATASET RUN "MEASURES"`: the strict scorer from the command line."""
from __future__ import annotations

import argparse
import sys

from ..errors import EXIT_INCOMPLETE, EXIT_OK

HELP = """Score a run on a dataset under a policy (strict by default).

DATASET is a trec-bridge JSON dataset, or TREC qrels (then the query set is the
qrels' queries, or the IDs in --queries). RUN is a JSON run or a TREC run.
MEASURES is a list in ir_measures syntax, e.g. "nDCG@10 RR@10 R@100 AP".

Exit codes: 0 complete; 1 invalid input (nothing scored); 2 incomplete run
(missing or failed queries, scored 0 and kept in the mean; the report is
still written)."""


def add_parser(sub) -> None:
    p = sub.add_parser("score", help="score a run (strict policy by default)", description=HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dataset", help="JSON dataset or TREC qrels file (plain or .gz)")
    p.add_argument("run", help="JSON run or TREC run file (plain or .gz)")
    p.add_argument("measures", help='measures in ir_measures syntax, e.g. "nDCG@10 RR@10 R@100"')
    p.add_argument("--split", help="score only the dataset's queries of this split")
    p.add_argument("--queries", metavar="FILE", help="with TREC qrels: the query set, one query ID per line")
    p.add_argument("--policy", default="strict",
                   help="strict (default), trec_eval, trec_eval_c, pytrec_eval or ir_measures")
    p.add_argument("--rel", type=int, metavar="N", help="relevance threshold (default: the dataset's, or 1 for TREC qrels)")
    p.add_argument("--order", choices=["score", "rank"], default="score",
                   help="TREC runs: order by score (trec_eval's rule, default) or by the rank column")
    p.add_argument("--chunk-map", metavar="FILE", help="collapse a chunk ranking to documents with this map")
    p.add_argument("--json", metavar="OUT", help="write the JSON report here (atomically)")
    p.add_argument("--per-query", action="store_true", help="print a per-query table")
    p.set_defaults(handler=run)


def run(args) -> int:
    from converters.detect import load_dataset_any, load_run_any

    from ..files import atomic_write, sha256_file
    from ..measures import parse_measures
    from ..policy import get_policy
    from ..report import build_report, render_table, report_json
    from ..scorer import score

    measures = parse_measures(args.measures)
    policy = get_policy(args.policy)
    dataset = load_dataset_any(args.dataset, args.queries, args.rel)
    run_ = load_run_any(args.run, order=args.order, chunks=bool(args.chunk_map))
    chunk_map = None
    inputs = {"dataset": {"path": args.dataset, "sha256": sha256_file(args.dataset)},
              "run": {"path": args.run, "sha256": sha256_file(args.run)}}
    if args.queries:
        inputs["queries"] = {"path": args.queries, "sha256": sha256_file(args.queries)}
    if args.chunk_map:
        from converters.chunk_map import load_chunk_map

        chunk_map = load_chunk_map(args.chunk_map)
        inputs["chunk_map"] = {"path": args.chunk_map, "sha256": sha256_file(args.chunk_map)}
    result = score(dataset, run_, measures, policy, split=args.split, chunk_map=chunk_map)
    result.extra.update(dataset.metadata if dataset.query_source == "query_file" else {})
    if args.json:
        atomic_write(args.json, report_json(build_report(result, inputs)))
    sys.stdout.write(render_table(result, per_query=args.per_query))
    return EXIT_OK if result.complete else EXIT_INCOMPLETE

"""``trec-bridge export run|dataset IN --to TARGET -o OUT``: files for trec_eval, ir_measures and ranx."""
from __future__ import annotations

import argparse

from converters.targets import DATASET_TARGETS, RUN_TARGETS  # a leaf module: the parser stays light

from ..errors import UsageError
from ..messages import note
from ..messages import quote

# How to read an ir-measures-tsv file in Python so that ir_measures takes it: IDs stay text ("007" is not 7,
# "NA" is not missing), scores are floats and grades integers (ir_measures refuses text there).  Printed in
# the help as is; tests/test_export.py runs these lines from the help text and scores what they read.
RUN_TSV_RECIPE = 'run = pandas.read_csv(OUT, sep="\\t", dtype={"query_id": str, "doc_id": str, "score": float}, keep_default_na=False)'
QRELS_TSV_RECIPE = ('qrels = pandas.read_csv(OUT, sep="\\t", dtype={"query_id": str, "doc_id": str, "relevance": int, '
                    '"iteration": str}, keep_default_na=False)')

RUN_HELP = """Write a run (trec-bridge JSON, TREC run, or ranx JSON) for another tool.

targets:
  trec             'qid Q0 doc rank score tag' for trec_eval, pytrec_eval, ir_measures and ranx
                   (kind="trec"), with the sidecar OUT.manifest.json (empty/failed queries, IDs,
                   original scores) unless --no-sidecar
  ranx-json        ranx's {"query": {"doc": score}} (ranx.Run.from_file(OUT, kind="json"))
  ir-measures-tsv  tab-separated with header query_id, doc_id, score: ir_measures' column names;
                   in Python (import pandas), read it for ir_measures.calc_aggregate(measures, qrels, run)
                   with
                     {run_recipe}

Every target gets the scores the TREC writer chooses: the run's own when they
are strictly decreasing even as 32-bit floats, else n, n-1, ..., 1 for that
query, so that every tool reads the run's own order. What the target cannot
hold (failed queries, run IDs, ...) is listed on stderr.

examples:
  trec-bridge export run bm25.json --to trec -o bm25.run
  trec-bridge export run bm25.json --to ranx-json -o bm25.ranx.json
  trec-bridge export run input.bm25base_p.gz --to ir-measures-tsv -o bm25.tsv"""

DATASET_HELP = """Write a dataset's judgments (trec-bridge JSON dataset, TREC qrels, or ranx JSON qrels) for another tool.

targets:
  trec-qrels       'qid iteration doc grade' for trec_eval, pytrec_eval, ir_measures, ranx
  ranx-json        ranx's {"query": {"doc": grade}}
  ir-measures-tsv  tab-separated with header query_id, doc_id, relevance, iteration; in Python
                   (import pandas), read it for ir_measures.calc_aggregate(measures, qrels, run) with
                     {qrels_recipe}

Queries without judgments, the grade scale and the relevance threshold have
no place in these files: stderr says what to pass instead (e.g. trec_eval -l2).

examples:
  trec-bridge export dataset dl19.json --to trec-qrels -o dl19.qrels
  trec-bridge export dataset dl19.json --to ranx-json -o dl19.qrels.json"""



def add_parser(sub) -> None:
    parser = sub.add_parser("export", help="write runs and judgments for trec_eval, ir_measures and ranx",
                            description="Write runs and judgments in the formats other evaluation tools read.",
                            epilog="See 'trec-bridge export run -h' and 'trec-bridge export dataset -h'.")
    kinds = parser.add_subparsers(dest="export_kind", metavar="KIND")
    kinds.required = True

    r = kinds.add_parser("run", help="export a run", description=RUN_HELP.replace("{run_recipe}", RUN_TSV_RECIPE),
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("input", metavar="RUN", help="JSON run, TREC run or ranx JSON run (plain or .gz)")
    r.add_argument("--to", required=True, choices=RUN_TARGETS, help="target format")
    r.add_argument("-o", "--output", required=True, metavar="OUT", help="file to write (atomically)")
    r.add_argument("--order", choices=["score", "rank"], default=None,
                   help="reading a TREC run: trec_eval's score order (default) or the rank column")
    r.add_argument("--no-sidecar", action="store_true", help="--to trec: do not write OUT.manifest.json")
    r.set_defaults(handler=_run, io=_run_io)

    d = kinds.add_parser("dataset", help="export a dataset's judgments",
                         description=DATASET_HELP.replace("{qrels_recipe}", QRELS_TSV_RECIPE),
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    d.add_argument("input", metavar="DATASET", help="JSON dataset, TREC qrels or ranx JSON qrels (plain or .gz)")
    d.add_argument("--to", required=True, choices=DATASET_TARGETS, help="target format")
    d.add_argument("-o", "--output", required=True, metavar="OUT", help="file to write (atomically)")
    d.set_defaults(handler=_dataset, io=_dataset_io)


def _run_io(args):
    """RUN (and its sidecar) in, OUT (and OUT.manifest.json for --to trec) out."""
    from ..outputs import SIDECAR_SUFFIX, Declared

    outputs = [args.output]
    if args.to == "trec" and not args.no_sidecar:
        outputs.append(args.output + SIDECAR_SUFFIX)
    return Declared(inputs=[args.input], outputs=outputs)


def _dataset_io(args):
    from ..outputs import Declared

    return Declared(inputs=[args.input], outputs=[args.output])




def _run(args) -> int:
    from converters.detect import is_json, load_run_any
    from converters.export import export_run

    if args.no_sidecar and args.to != "trec":
        raise UsageError("E_USAGE", "--no-sidecar applies to --to trec")
    if is_json(args.input) and args.order is not None:
        raise UsageError("E_USAGE", "--order applies when reading a TREC run; a JSON run has its own order, and a "
                         "ranx run is ordered by score")
    run = load_run_any(args.input, order=args.order or "score")
    info = export_run(run, args.output, args.to, sidecar=not args.no_sidecar)
    note(f"wrote {info.path}: {info.rows} lines" + (f" and {info.sidecar}" if info.sidecar else ""))
    if info.synthetic_queries:
        n = len(info.synthetic_queries)
        note(f"{n} quer{'y' if n == 1 else 'ies'} written with scores n..1 (tied, missing or float32-equal scores), "
              f"e.g. {quote(info.synthetic_queries[0])}" + ("; original scores kept in the sidecar" if info.sidecar else ""))
    for text in info.notes:
        note(text)
    return 0


def _dataset(args) -> int:
    from converters.detect import load_dataset_any
    from converters.export import export_dataset

    dataset = load_dataset_any(args.input)
    info = export_dataset(dataset, args.output, args.to)
    note(f"wrote {info.path}: {info.rows} judgments")
    for text in info.notes:
        note(text)
    return 0
